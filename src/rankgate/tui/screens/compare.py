"""The compare screen: the baseline against every other loaded run, with the core's `compare`.

For each run: the macro measures of both runs, delta, p-value, confidence
interval and effect size (the paired randomization test and bootstrap of
`core.compare`, with the policy's resamples, seed and confidence); wins,
losses and ties; the queries newly failed and newly fixed at k; judged
coverage of the top k, latency and context budgets, and each slice's deltas;
then every query, most changed first, and under the list where the
highlighted query's relevant documents moved. Enter on a query returns to the
review screen on it; `c` shows the next run; Escape closes.

The comparison runs in a worker thread (significance tests take about a
second each at 10,000 queries) on the labels as they are when the screen opens.
"""

from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from rankgate.core.compare import CandidateReport, Comparison, compare
from rankgate.core.text import cut_list, more_tail, visible
from rankgate.tui.safe import id_cell, id_excerpt, literal
from rankgate.tui.widgets.line_list import LineList

STATUS = {  # QueryChange.status -> (shown, style)
    "newly_failed": ("newly failed", "bold red"),
    "newly_fixed": ("newly fixed", "bold green"),
    "still_missed": ("missed", "yellow"),
    "hit": ("hit", "dim"),
}


def _f(x, digits: int = 3, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


IDS_WIDTH = 160  # a newly failed / fixed list longer than this is cut with "... and N more"


def _delta_style(d: float) -> str:
    return "green" if d > 1e-9 else "red" if d < -1e-9 else "dim"


class QueryChangeList(LineList):
    """One candidate's queries, most changed first: status, summed change, each measure's delta."""

    def __init__(self, **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.report: CandidateReport | None = None
        self.names: list[str] = []
        self.qw = 5  # the query column: its longest ID (at most 28)
        self.mw: list[int] = []  # each measure's column: its name or "0.00→0.00 +0.00", whichever is wider

    def show(self, report: CandidateReport, names: list[str]) -> None:
        self.report, self.names = report, names
        self.qw = min(max([5] + [len(visible(r.query, lines="space")) for r in report.rows[:5000]]), 28)
        self.mw = [min(max(len(visible(n, lines="space")), 16), 24) for n in names]
        self.set_count(len(report.rows), 0, notify=False)
        self.refresh()

    def row_key(self, index: int):
        return (id(self.report), index)

    def render_header(self, width: int) -> Text:
        t = Text(f"{'query':<{self.qw}} {'status':<13} {'change':>7}", end="")
        for name, w in zip(self.names, self.mw):
            t.append(" ")
            t.append_text(literal(id_cell(name, w, right=True)))
        return t

    def render_row(self, index: int, width: int) -> Text:
        r = self.report.rows[index]
        t = Text(end="")
        t.append_text(literal(id_cell(r.query, self.qw)))
        shown, style = STATUS.get(r.status, (r.status, ""))
        t.append(" ")
        t.append(shown.ljust(13), style=style)
        t.append(f" {r.change:7.3f}")
        for name, w in zip(self.names, self.mw):
            b, c = r.baseline[name], r.candidate[name]
            t.append(" ")
            t.append(f"{b:.2f}→{c:.2f} {c - b:+.2f}".rjust(w), style=_delta_style(c - b))
        return t

    def empty_text(self) -> Text:
        return Text("no evaluated queries", style="dim italic", end="")


class CompareScreen(Screen[str | None]):
    """Dismissed with the chosen query's ID (None: Escape)."""

    BINDINGS = [("escape,q", "dismiss(None)", "Close"), ("c", "next_run", "next run")]

    class Computed(Message):
        def __init__(self, comparison: Comparison | None, error: str = "", funnels: dict | None = None) -> None:
            super().__init__()
            self.comparison = comparison
            self.error = error
            self.funnels = funnels or {}  # run name -> core.funnel.Funnel (None: no pipeline), when any run has one

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model
        self.comparison: Comparison | None = None
        self.funnels: dict = {}  # run name -> its pipeline's funnel (tui/screens/funnel.py), when runs have pipelines
        self.shown = 0  # index of the candidate whose queries are listed

    def compose(self) -> ComposeResult:
        with Vertical(id="compare"):
            yield Static(id="compare-title")
            with VerticalScroll(id="compare-summary"):
                yield Static(Text("comparing…", style="dim italic"), id="compare-macros")
            yield Static(id="compare-run")
            yield QueryChangeList(id="compare-rows")
            yield Static(id="compare-moves")
            yield Static(Text("Enter: review this query · c: next run · Escape: close", style="dim"))

    def on_mount(self) -> None:
        m = self.model
        title = Text("Compare against baseline ", style="bold", end="")
        title.append_text(literal(m.baseline, style="bold cyan"))
        title.append(f" · k={m.k} · {len(m.run_names) - 1} other runs · resamples {m.policy.resamples}",
                     style="dim")
        self.query_one("#compare-title", Static).update(title)
        # The gate's candidate first, then the other runs in the benchmark's order.
        others = [m.candidate] if m.candidate != m.baseline else []
        others += [n for n in m.run_names if n not in (m.baseline, m.candidate)]
        qrels = m.labels.to_qrels()  # the labels now, read on this thread (the store is not shared)
        self.manifest = getattr(getattr(self.app, "loaded", None), "manifest", None)  # its [[pipeline]] tables
        self.run_compare(qrels, others)
        self.query_one(QueryChangeList).focus()

    @work(thread=True, exclusive=True, group="compare")
    def run_compare(self, qrels, others: list[str]) -> None:
        m = self.model
        p = m.policy
        try:
            labels = qrels
            runs, no_answer = [m.runs[m.baseline].run] + [m.runs[o].run for o in others], m.no_answer
            if m.access is not None:  # what each query's user may see, as `rankgate compare` (core/acl.py)
                from rankgate.core.acl import as_seen

                qrels, runs, no_answer = as_seen(m.access, qrels, runs, m.level, no_answer)
            result = compare(qrels, runs[0], runs[1:], k=m.k,
                             measures=list(m.measures), rel_level=m.level, no_answer=no_answer,
                             queries=dict(m.queries), resamples=p.resamples, seed=p.seed, confidence=p.confidence)
            funnels = self._funnels(labels, [m.baseline, *others])
        except Exception as e:  # shown, not raised: the review goes on
            self.post_message(self.Computed(None, str(e)))
            return
        self.post_message(self.Computed(result, funnels=funnels))

    def _funnels(self, qrels, names: list[str]) -> dict:
        """Each run's funnel, when the benchmark gives any run a pipeline ({} otherwise)."""
        from rankgate.tui.screens.funnel import has_funnel, run_funnels

        manifest = self.manifest
        if not has_funnel(self.model, manifest):
            return {}
        found, note = run_funnels(self.model, manifest, names, qrels)
        if note:
            raise ValueError(note)
        return found

    @on(Computed)
    def _computed(self, event: Computed) -> None:
        if event.comparison is None:
            self.query_one("#compare-macros", Static).update(
                literal(f"could not compare: {event.error}", style="bold red", one_line=False))
            return
        self.comparison = event.comparison
        self.funnels = event.funnels
        self._show_macros()
        self.show_run(0)

    NARROW = 110  # below this width the macro table names each run on a row of its own, with short headers

    def macro_table(self, width: int | None = None) -> Table | Group:
        """Baseline against each run, per measure. Columns are sized to their content and never wrap; on a
        narrow screen each run's name heads a table of its own (no run column) and the headers shorten."""
        c = self.comparison
        narrow = (width if width is not None else self.size.width) < self.NARROW
        if narrow:
            parts = []
            for rep in c.candidates:
                name = literal(id_excerpt(rep.candidate, 60), style="bold cyan")
                name.end = "\n"
                parts += [name, self._table([rep], narrow=True)]
            return Group(*parts)
        return self._table(c.candidates, narrow=False)

    def _table(self, reports, narrow: bool) -> Table:
        c = self.comparison
        conf = int(round(c.confidence * 100))
        table = Table(box=None, padding=(0, 1), collapse_padding=narrow, show_edge=False, header_style="bold")
        heads = (("measure", "left"), ("base" if narrow else "baseline", "right"),
                 ("value" if narrow else "run value", "right"), ("Δ", "right"), ("p", "right"),
                 (f"{conf}% CI", "right"), ("d", "right"), ("w/l/t" if narrow else "wins/losses/ties", "right"))
        if not narrow:
            table.add_column("run", justify="left", no_wrap=True, overflow="ellipsis")
        for name, justify in heads:
            table.add_column(name, justify=justify, no_wrap=True)
        for rep in reports:
            name = literal(id_excerpt(rep.candidate, 20), style="bold cyan")
            for i, m in enumerate(c.measures):
                s = rep.summary[m.name]
                ci = s.get("ci") or [None, None]
                cells = [literal(m.name), Text(_f(s["baseline"])), Text(_f(s["candidate"])),
                         Text(_f(s["delta"], sign=True), style=_delta_style(s["delta"])),
                         Text(_f(s.get("p_value"))), Text(f"[{_f(ci[0], sign=True)}, {_f(ci[1], sign=True)}]"),
                         Text(_f(s.get("effect_size"), 2, True)), Text(f"{s['wins']}/{s['losses']}/{s['ties']}")]
                if narrow:
                    table.add_row(*cells)
                else:
                    table.add_row(name if i == 0 else Text(""), *cells)
        return table

    def _show_macros(self) -> None:
        from rankgate.tui.widgets.charts import comparison_charts

        charts = comparison_charts(self.comparison, self.model.policy.must_pass, self.size.width - 4)
        funnels = [part for rep in self.comparison.candidates for part in self.funnel_part(rep.candidate)]
        funnels += self.leaks_part()
        self.query_one("#compare-macros", Static).update(Group(self.macro_table(), *self.changed(), *funnels,
                                                               *charts, *self.details()))

    def on_resize(self) -> None:
        if self.comparison is not None:
            self._show_macros()

    def changed(self) -> list[Text]:
        """Per run, the queries newly failed and newly fixed: under the table, not in a column of it (a
        list of IDs would size the column), cut with "... and N more"."""
        out = []
        for rep in self.comparison.candidates:
            t = literal(id_excerpt(rep.candidate, 30), style="bold cyan")
            t.append("\n  ")
            t.append_text(self._ids("newly failed", rep.newly_failed, "bold red"))
            t.append("\n  ")
            t.append_text(self._ids("newly fixed", rep.newly_fixed, "bold green"))
            t.end = "\n"  # the next run's name on a line of its own
            out.append(t)
        return out

    def details(self) -> list:
        """Per run: judged coverage, budgets, then a table of its slices."""
        c = self.comparison
        out: list = []
        for rep in c.candidates:
            head = Text("\n")
            head.append_text(literal(id_excerpt(rep.candidate, 30), style="bold cyan"))
            cov = rep.coverage
            head.append(f"  judged in the top {cov['k']}: ", style="bold")
            head.append(" → ".join(f"{cov[r]['judged_share']:.1%} ({cov[r]['unjudged']} unjudged)"
                                   for r in ("baseline", "candidate")))
            for fld, digits in (("latency_ms", 2), ("context_tokens", 0)):
                b, cand = (rep.budgets.get(r, {}).get(fld) for r in ("baseline", "candidate"))
                if b or cand:
                    head.append(f"\n  {fld} p50/p95: ", style="bold")
                    head.append(" → ".join("n/a" if x is None else f"{_f(x['p50'], digits)}/{_f(x['p95'], digits)}"
                                           for x in (b, cand)))
            out.append(head)
            if rep.slices:
                table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
                table.add_column("slice")
                table.add_column("queries", justify="right")
                for m in c.measures:
                    table.add_column(f"Δ {m.name}", justify="right")
                table.add_column("newly failed")
                for name, row in rep.slices.items():
                    cells = [literal(id_excerpt(name, 24)), Text(str(row["queries"]))]
                    for m in c.measures:
                        d = row["measures"][m.name]["delta"]
                        cells.append(Text(_f(d, sign=True), style=_delta_style(d)))
                    shown, left = cut_list([visible(q, lines="space") for q in row["newly_failed"]], 48)
                    cells.append(Text(", ".join(shown) + more_tail(left) or "·",
                                      style="red" if shown else "dim", end=""))
                    table.add_row(*cells)
                out.append(table)
        return out

    def funnel_part(self, run: str) -> list:
        """The run's funnel beside the baseline's (when either has a pipeline), as `rankgate compare` shows it."""
        from rankgate.core.funnel import stage_losses
        from rankgate.tui.screens.funnel import funnel_table

        out: list = []
        b, c = self.funnels.get(self.comparison.baseline), self.funnels.get(run)
        if c is None and b is not None:  # one line, not a table of dashes
            t = Text("\nfunnel ", style="bold")
            t.append_text(literal(run, style="bold cyan"))
            t.append(": no pipeline (no [[pipeline]] of this name, not a staged run)", style="dim")
            out.append(t)
        elif c is not None:
            lost = stage_losses(b, c, list(c.paths)) if b is not None else None
            out += [Text("")] + funnel_table(b, c, (self.comparison.baseline, run), lost)
        return out

    def leaks_part(self) -> list:
        """With an ACL: each run's permission leaks, as `rankgate compare` counts them."""
        perm = self.model.permissions
        if perm is None:
            return []
        t = Text("permission leaks (documents returned to users who may not see them): ", style="bold")
        names = [self.comparison.baseline] + [rep.candidate for rep in self.comparison.candidates]
        for i, name in enumerate(names):
            n = len(perm.leaks.get(name, []))
            t.append(" · " if i else "")
            t.append_text(literal(f"{name} {n}", style="bold red" if n else ""))
        return [t]

    @staticmethod
    def _ids(label: str, ids: list[str], style: str) -> Text:
        t = Text(f"{label} ({len(ids)}): ", style=style, end="")
        shown, more = cut_list([visible(i, lines="space") for i in sorted(ids)[:IDS_WIDTH]], IDS_WIDTH)
        more = len(ids) - len(shown)
        t.append_text(literal(", ".join(shown) or "none"))
        if more:
            t.append(more_tail(more), style="dim")
        return t

    def show_run(self, index: int) -> None:
        c = self.comparison
        if c is None or not c.candidates:
            return
        self.shown = index % len(c.candidates)
        rep = c.candidates[self.shown]
        t = Text("Queries of ", style="bold", end="")
        t.append_text(literal(rep.candidate, style="bold cyan"))
        t.append(" vs ", style="bold")
        t.append_text(literal(c.baseline, style="bold"))
        t.append(f" · most changed first · {len(rep.rows)} queries", style="dim")
        if len(c.candidates) > 1:
            t.append(f" · run {self.shown + 1} of {len(c.candidates)} (c: next)", style="dim")
        self.query_one("#compare-run", Static).update(t)
        lst = self.query_one(QueryChangeList)
        lst.show(rep, [m.name for m in c.measures])
        self.show_moves(lst.cursor if lst.cursor is not None else 0)  # from the start, not on the first move

    def action_next_run(self) -> None:
        self.show_run(self.shown + 1)

    @on(LineList.Highlighted, "#compare-rows")
    def _highlighted(self, event: LineList.Highlighted) -> None:
        """Under the list: where the highlighted query's relevant documents sit in both runs."""
        self.show_moves(event.index)

    def show_moves(self, index: int) -> None:
        lst = self.query_one(QueryChangeList)
        if lst.report is None or not 0 <= index < len(lst.report.rows):
            self.query_one("#compare-moves", Static).update("")
            return
        qid = lst.report.rows[index].query
        moves = lst.report.movement(qid)
        t = Text("relevant documents of ", style="dim", end="")
        t.append_text(literal(id_excerpt(qid, 30), style="bold"))
        t.append(" (baseline → run): ", style="dim")
        if not moves:
            t.append("none judged relevant", style="dim italic")
        for i, mv in enumerate(moves[:8]):
            if i:
                t.append(" · ")
            t.append_text(literal(id_excerpt(mv.doc, 24)))
            b = "—" if mv.baseline_rank is None else str(mv.baseline_rank)
            c = "—" if mv.candidate_rank is None else str(mv.candidate_rank)
            t.append(f" {b}→{c}", style="dim")
            if mv.move:
                t.append(f" {'▲' if mv.move > 0 else '▼'}{abs(mv.move)}", style="green" if mv.move > 0 else "red")
            elif mv.candidate_rank is None and mv.baseline_rank is not None:
                t.append(" lost", style="bold red")
        if len(moves) > 8:
            t.append(f" · … {len(moves) - 8} more", style="dim")
        self.query_one("#compare-moves", Static).update(t)

    @on(LineList.Chosen, "#compare-rows")
    def _chosen(self, event: LineList.Chosen) -> None:
        lst = self.query_one(QueryChangeList)
        if lst.report is not None and 0 <= event.index < len(lst.report.rows):
            self.dismiss(lst.report.rows[event.index].query)
