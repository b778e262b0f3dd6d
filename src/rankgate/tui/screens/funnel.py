"""The stage funnel (key F): where the baseline's and the candidate's pipelines lose relevant documents.

Overall, side by side: recall at each stage and how many relevant documents each stage lost; then, for the
highlighted query, each relevant document's rank at every stage and the stage that dropped it. The funnels
come from the benchmark's [[pipeline]] tables (core/funnel.py) on the labels as they are now; with an ACL,
what the query's user may not see is left out and said so. Enter goes to the document; Escape closes.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.core.text import visible
from rankgate.tui.safe import literal
from rankgate.tui.widgets.line_list import LineList

Row = tuple[str, object]  # ("head" | "text" | "dim", Text or str) or ("doc", (document ID, Text))


def funnel_rows(funnels: dict, qid: str, k: int) -> list[Row]:
    """The screen's lines: per role (baseline, candidate) its pipeline's stages, then the query's paths."""
    rows: list[Row] = []
    for role, f in funnels.items():
        if f is None:
            rows.append(("head", f"{role}: no pipeline declared for this run"))
            continue
        head = Text(f"{role} ", style="bold", end="")
        head.append_text(literal(f.pipeline, style="bold cyan"))
        rows.append(("head", head))
        recall, lost, present = f.recall(), f.lost(), f.present()
        wide = max(len(s) for s in f.stages)
        for s, depth in zip(f.stages, f.depths):
            line = Text("  ", end="")
            line.append_text(literal(s))
            line.append(" " * (wide - len(s)) + f"  top {str(depth or 'all'):>3}  recall {recall[s]:.3f}  "
                        f"relevant {present[s]:>4}  lost here {lost[s]:>4}")
            if f.leaks.get(s):
                line.append(f"  leaks {f.leaks[s]}", style="bold red")
            rows.append(("text", line))
        paths = f.paths.get(qid)
        if paths is None:
            rows.append(("dim", "  this query is not scored (no relevant document, or no answer)"))
            continue
        title = Text("  this query: recall ", style="bold", end="")
        title.append(" · ".join(f"{visible(s)} {r:.2f}" for s, r in zip(f.stages, f.query_recall(qid))))
        rows.append(("text", title))
        rows.append(("dim", "  rank at " + " → ".join(visible(s) for s in f.stages)))
        for p in paths:
            t = Text("    ", end="")
            t.append_text(literal(p.doc))
            t.append(f" g{p.grade}  ", style="dim")
            t.append(" → ".join(str(r) if r else "–" for r in p.ranks))
            if p.reached:
                t.append(f"  reached {visible(f.stages[-1])}", style="green")
            else:
                t.append(f"  lost at {visible(p.dropped_at)}", style="bold red")
            rows.append(("doc", (p.doc, t)))
        for d in f.restricted.get(qid, []):
            t = Text("    ", end="")
            t.append_text(literal(d))
            t.append("  restricted: the asking user may not see it (not counted)", style="yellow")
            rows.append(("doc", (d, t)))
        if not paths:
            rows.append(("dim", "    no relevant document"))
    return rows


class FunnelList(LineList):
    def __init__(self, rows: list[Row], **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows = rows

    def render_row(self, index: int, width: int) -> Text:
        kind, value = self.rows[index]
        if kind == "doc":
            return value[1]
        if isinstance(value, Text):
            return value
        return Text(value, style={"head": "bold", "dim": "dim italic"}.get(kind, ""), end="")

    def empty_text(self) -> Text:
        return Text("no pipeline", style="dim italic", end="")


class FunnelScreen(ModalScreen[str | None]):
    """Dismissed with the chosen document's ID (None: Escape)."""

    BINDINGS = [("escape,F,q", "dismiss(None)", "Close")]

    def __init__(self, qid: str, rows: list[Row], note: str = "") -> None:
        super().__init__()
        self.qid, self.rows, self.note = qid, rows, note

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            title = Text("Stage funnel · ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            yield Static(title)
            if self.note:
                yield Static(Text(self.note, style="yellow"))
            yield FunnelList(self.rows, id="funnel-list")
            yield Static(Text("Enter: go to the document · Escape closes", style="dim"))

    def on_mount(self) -> None:
        lst = self.query_one(FunnelList)
        lst.set_count(len(self.rows), 0, notify=False)
        lst.focus()

    @on(LineList.Chosen, "#funnel-list")
    def _chosen(self, event: LineList.Chosen) -> None:
        if 0 <= event.index < len(self.rows) and self.rows[event.index][0] == "doc":
            self.dismiss(self.rows[event.index][1][0])


def review_funnels(model, manifest) -> tuple[dict, str]:
    """role -> Funnel (None when the run has no pipeline) for the review's baseline and candidate, on the labels
    as they are now; and a note (an ACL or pipeline that cannot be read, said in one line)."""
    from rankgate.core.acl import load_access
    from rankgate.core.errors import InputError
    from rankgate.core.funnel import funnel, manifest_pipelines, relevant_of

    note = ""
    try:
        pipes = {p.name: p for p in manifest_pipelines(manifest)}
    except (InputError, OSError) as e:
        return {}, f"the pipelines cannot be read: {e}"
    access = None
    try:
        corpus = str(manifest.corpus) if manifest is not None and manifest.corpus else None
        access = load_access(manifest, None, str(manifest.queries) if manifest and manifest.queries else None, corpus)
    except (InputError, OSError) as e:
        note = f"the ACL cannot be read, permissions are not applied: {e}"
    queries = [q for q in model.labels.qrels.query_ids if q not in model.no_answer]
    rel = relevant_of(model.labels.qrels, model.level, queries)
    out = {}
    for role, name in (("baseline", model.baseline), ("candidate", model.candidate)):
        out[role] = funnel(pipes[name], rel, access) if name in pipes else None
    return out, note


def show_funnel(screen) -> None:
    """The review screen's action (key F): the funnel of its two runs, at the highlighted query."""
    if screen.qi is None:
        return
    if screen.blind:  # the pipelines are the runs
        screen.notify("blind review hides the runs and their stages: B turns it off", severity="warning")
        return
    manifest = screen.loaded.manifest if screen.loaded else None
    if manifest is None or not manifest.pipelines:
        screen.notify("no [[pipeline]] in benchmark.toml: declare a system's stages to see its funnel "
                      "(docs/formats.md)", severity="warning", markup=False)
        return
    funnels, note = review_funnels(screen.model, manifest)
    qid = screen.qid

    def done(doc: str | None) -> None:
        if doc:
            screen.go_to(qid, doc)

    screen.app.push_screen(FunnelScreen(qid, funnel_rows(funnels, qid, screen.model.k), note), done)
