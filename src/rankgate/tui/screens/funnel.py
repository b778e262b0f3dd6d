"""The stage funnel (key F): where the baseline's and the candidate's pipelines lose relevant documents.

Overall, side by side: recall at each stage and how many relevant documents each stage lost; then, for the
highlighted query, each relevant document's rank at every stage and the stage that dropped it. The funnels
come from the benchmark's [[pipeline]] tables and staged runs (core/funnel.py) on the labels as they are now;
the compare screen (key C) shows each run's funnel beside the baseline's (`funnel_table`); with an ACL,
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


def run_funnels(model, manifest, names: list[str], qrels=None) -> tuple[dict, str]:
    """run name -> Funnel (None when the run has no pipeline: no [[pipeline]] of its name, not a staged run), on
    the labels `qrels` (the labels now when not given) and with the review's ACL (model.access); and a note
    (pipelines that cannot be read, said in one line)."""
    from rankgate.core.errors import InputError
    from rankgate.core.funnel import all_pipelines, funnel, relevant_of

    try:
        pipes = {p.name: p for p in all_pipelines(manifest, {n: ri.run for n, ri in model.runs.items()})}
    except (InputError, OSError) as e:
        return {}, f"the pipelines cannot be read: {e}"
    qrels = qrels if qrels is not None else model.labels.to_qrels()
    queries = [q for q in qrels.query_ids if q not in model.no_answer]
    rel = relevant_of(qrels, model.level, queries)
    access = getattr(model, "access", None)
    return {n: funnel(pipes[n], rel, access) if n in pipes else None for n in dict.fromkeys(names)}, ""


def has_funnel(model, manifest) -> bool:
    """Whether any loaded run has a pipeline: a [[pipeline]] table, or a staged JSONL run."""
    from rankgate.core.funnel import has_pipelines

    return has_pipelines(manifest, {n: ri.run for n, ri in model.runs.items()})


def review_funnels(model, manifest) -> tuple[dict, str]:
    """role -> Funnel (None when the run has no pipeline) for the review's baseline and candidate, on the labels
    as they are now, with the review's ACL; and a note (pipelines that cannot be read, said in one line)."""
    found, note = run_funnels(model, manifest, [model.baseline, model.candidate])
    if note:
        return {}, note
    return {"baseline": found[model.baseline], "candidate": found[model.candidate]}, ""


def show_funnel(screen) -> None:
    """The review screen's action (key F): the funnel of its two runs, at the highlighted query."""
    if screen.qi is None:
        return
    if screen.blind:  # the pipelines are the runs
        screen.notify("blind review hides the runs and their stages: B turns it off", severity="warning")
        return
    manifest = screen.loaded.manifest if screen.loaded else None
    if not has_funnel(screen.model, manifest):
        screen.notify("no [[pipeline]] in benchmark.toml and no staged run: declare a system's stages to see its "
                      "funnel (docs/formats.md)", severity="warning", markup=False)
        return
    funnels, note = review_funnels(screen.model, manifest)
    qid = screen.qid

    def done(doc: str | None) -> None:
        if doc:
            screen.go_to(qid, doc)

    screen.app.push_screen(FunnelScreen(qid, funnel_rows(funnels, qid, screen.model.k), note), done)


def funnel_table(baseline, candidate, names: tuple[str, str], lost: list[dict] | None = None) -> list:
    """Two funnels side by side, as `rankgate compare` prints them: per stage, recall and relevant documents lost
    there, baseline and run; then the relevant documents the run loses at a stage where the baseline kept them.
    `names`: the two runs' names (a run without a pipeline says so)."""
    from rich.table import Table

    b, c = baseline, candidate
    head = Text("funnel ", style="bold")
    for i, (f, name) in enumerate(zip((b, c), names)):
        if i:
            head.append(" → ")
        head.append_text(literal(name, style="bold cyan" if i else "bold"))
        if f is None:
            head.append(" (no pipeline)", style="dim")
    head.append("  recall at each stage; relevant documents lost there", style="dim")
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name, justify in (("stage", "left"), ("baseline", "right"), ("run", "right"), ("Δ", "right"),
                          ("lost b", "right"), ("lost run", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    stages = list(dict.fromkeys((b.stages if b else []) + (c.stages if c else [])))
    rb, rc = (b.recall() if b else {}), (c.recall() if c else {})
    lb, lc = (b.lost() if b else {}), (c.lost() if c else {})
    for s in stages:
        delta = rc[s] - rb[s] if s in rb and s in rc else None
        table.add_row(literal(s), Text(f"{rb[s]:.3f}" if s in rb else "-"), Text(f"{rc[s]:.3f}" if s in rc else "-"),
                      Text("-" if delta is None else f"{delta:+.3f}",
                           style="dim" if delta is None or abs(delta) < 1e-9 else "green" if delta > 0 else "red"),
                      Text(str(lb.get(s, "-"))), Text(str(lc.get(s, "-")),
                                                      style="red" if s in lb and lc.get(s, 0) > lb[s] else ""))
    out: list = [head, table]
    if lost:
        t = Text(f"  lost where the baseline kept them: {len(lost)}, e.g. ", style="bold red")
        t.append_text(literal("; ".join(f"{x['doc']} for {x['query']} at {x['stage']}" for x in lost[:3])))
        out.append(t)
    return out
