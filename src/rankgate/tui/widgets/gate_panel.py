"""The gate pane: the decision and its reasons first (failing checks, one line each; passing checks counted,
listed on enter), then macro measures of both runs with deltas and the failed queries."""

from __future__ import annotations

import re

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll

from rankgate.core.charts import sparkline
from rankgate.tui.model import GateView, ReviewModel
from rankgate.tui.safe import excerpt, id_cell, id_excerpt, literal
from rankgate.tui.stability_text import stability_line
from rankgate.tui.widgets.gate_reasons import failing_lines, pass_summary
from rankgate.tui.widgets.marks import MUST, delta_text
from rankgate.tui.widgets.text_static import TextStatic

MAX_FAILED = 12
STALE = "significance tests updating…"  # shown while they are from before the last edit
# The names of docs/measures.md, as in the gate's checks (Success@k, RR@k), never a second name.
MACRO_LABELS = {"hit_rate_at_k": "Success@{k}", "precision_at_k": "P@{k}", "recall_at_k": "R@{k}",
                "mrr_at_k": "RR@{k}"}


def decision_text(view: GateView, unread: dict | None = None) -> Text:
    if unread or view.refused:  # a run of the pair could not be read, or `rankgate gate` would refuse the inputs
        return Text(" NO DECISION ", style="bold black on yellow", end="")
    if view.accepted:
        return Text(" ACCEPT ", style="bold black on green", end="")
    return Text(" REJECT ", style="bold white on red", end="")


def refusal_line(refused: list[tuple[str, str]]) -> str:
    """The first reason `rankgate gate` would refuse the inputs, short enough for the top bar: what, without
    the IDs it lists, then the flag that accepts it ("run 'bm25' ranks 42 queries absent from the qrels ·
    --missing-queries zero accepts", "+1 more"); the gate pane has them whole."""
    what = refused[0][1]
    cuts = [i for i in (what.find(": '"), what.find(" ("), what.find("; ")) if i > 0]
    line = what[:min(cuts)] if cuts else what
    flag = re.search(r"--missing-queries zero|--short-rankings allow|--allow-snapshot-mismatch", what)
    if flag:
        line += f" · {flag.group(0)} accepts"
    if len(refused) > 1:
        line += f" (+{len(refused) - 1} more)"
    return line


def unread_line(unread: dict) -> str:
    """Why there is no decision: "candidate full-dup left out (FILE:LINE)" (loader.unread_pair)."""
    return "; ".join(f"{role} {what}" for role, what in unread.items())


class GatePanel(VerticalScroll):
    ALLOW_MAXIMIZE = True
    BINDINGS = [Binding("enter", "toggle_passing", "Passing checks", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ReviewModel | None = None
        self.view: GateView | None = None
        self.problems: list[str] = []
        self.unread: dict[str, str] = {}  # a run of the pair left out at load, by role: no decision
        self.show_passing = False
        self.blind = False  # blind review: no decision, no run names, no measures
        self._spark: tuple | None = None  # (width, the deltas, their sparkline) last drawn

    def action_toggle_passing(self) -> None:
        """List the passing checks under their count, or fold them again."""
        self.show_passing = not self.show_passing
        if self.view is not None:
            self.show(self.view)

    def compose(self) -> ComposeResult:
        yield TextStatic(id="gate-body", keep_height=True)  # redrawn on every edit: no layout for a line less

    def on_mount(self) -> None:
        self.border_title = "Gate"

    def bind(self, model: ReviewModel, problems: list[str] = (), unread: dict | None = None) -> None:
        self.model = model
        self.problems = list(problems)
        self.unread = dict(unread or {})

    def deltas_line(self) -> Text:
        """A sparkline of the per-query RR@k deltas on the evaluated queries, most lost first."""
        m = self.model
        if m is None or m.baseline not in m.values or m.candidate not in m.values:
            return Text("", end="")
        d = (m.values[m.candidate][m.rr_m] - m.values[m.baseline][m.rr_m])[m.evaluated]
        lost, won = int((d < -1e-9).sum()), int((d > 1e-9).sum())
        counts = f" {lost}↓ {len(d) - lost - won}= {won}↑"
        label = excerpt(f"Δ{m.rr_m.name}", 11).ljust(12)
        width = max(8, min(48, self.size.width - self.styles.gutter.width - 2 - len(label) - len(counts)))
        last = self._spark
        if last is not None and last[0] == width and np.array_equal(last[1], d):
            line = last[2]  # most edits leave every RR delta as it was: no sort of all the queries
        else:
            line = sparkline(np.sort(d), width)
            self._spark = (width, d, line)
        t = Text(label, style="bold dim", end="")
        t.append(line, style="cyan")
        t.append(counts, style="dim")
        return t

    def show(self, view: GateView) -> None:
        self.view = view
        if self.blind:
            t = Text("BLIND REVIEW", style="bold reverse", end="")
            t.append("\n\nthe decision, the runs' names and their measures are hidden while you judge"
                     "\n(B shows them again)", style="dim")
            self.query_one("#gate-body", TextStatic).show(t)
            return
        # On the border, not in the text: a line that comes and goes would change the pane's height, and
        # each height change costs the whole screen a new layout (twice per edit, 20-50 ms each).
        subtitle = STALE if view.stale else None
        if self.border_subtitle != subtitle:  # setting it repaints the whole pane, even to the same text
            self.border_subtitle = subtitle
        head = self._head(view)
        if self.unread:  # the checks would compare what remains (a run with itself): none shown
            head.append("\n  the gate needs both runs: no checks until then (b / c picks another run)", style="dim")
            self.query_one("#gate-body", TextStatic).show(head)
            return
        if view.refused:  # `rankgate gate` on these labels would exit 2: its reasons instead of checks
            for where, what in view.refused:
                head.append("\n! ", style="bold yellow")
                head.append_text(literal(what, style="yellow"))  # the file is the run's, named in it
            head.append("\n  `rankgate gate` refuses these inputs (exit 2): no checks until they are fixed or "
                        "accepted (the flag or policy key named)", style="dim")

        checks = self._checks(view)
        table = self._measures(view)
        failed = self._failed(view)
        spark = self.deltas_line()
        if spark.plain:
            table.append("\n")
            table.append_text(spark)
        body = Text("\n\n", end="").join([head, table, failed] if view.refused else [head, checks, table, failed])
        self.query_one("#gate-body", TextStatic).show(body)

    def _head(self, view: GateView) -> Text:
        """The decision, the two runs, k, and the files left out at load."""
        head = Text(end="")
        head.append_text(decision_text(view, self.unread))
        head.append("  ")
        if self.unread:
            head.append_text(literal(unread_line(self.unread), style="bold"))
        else:
            head.append_text(literal(id_excerpt(view.candidate, 22), style="bold cyan"))
            head.append(" vs ", style="dim")
            head.append_text(literal(id_excerpt(view.baseline, 22), style="bold"))
        head.append(f" · k={view.k} · {view.evaluated} judged", style="dim")
        for problem in self.problems:  # a file left out at load: the decision is on what remains
            head.append("\n! ", style="bold red")
            head.append_text(literal(problem, style="red"))
        if self.problems:
            head.append("\n  fix the file and press ctrl+r to read it again", style="dim")
        return head

    def _checks(self, view: GateView) -> Text:
        """The failing checks' reasons, the passing ones (folded), stability and power."""
        m = self.model
        reasons = Text(end="")
        for i, line in enumerate(failing_lines(view.check_details, view.k)):
            if i:
                reasons.append("\n")
            reasons.append("✗ ", style="bold red")
            reasons.append_text(literal(line))
        for q in view.unknown_must_pass:
            reasons.append("\n! ", style="bold yellow")
            reasons.append_text(literal(f"must-pass query {q} is in no file of this benchmark", style="yellow"))
        if reasons.plain.startswith("\n"):
            reasons = reasons[1:]
        passing = Text(end="")
        passing.append("✔ ", style="bold green")
        passing.append(pass_summary(view.check_details), style="green")
        hints = ("  (enter: fold)", " (enter)") if self.show_passing else ("  (enter lists them)", " (enter: list)", " (enter)")
        room = self.size.width - self.styles.gutter.width - 2 - passing.cell_len  # a hint cut short reads as broken
        passing.append(next((h for h in hints if len(h) <= room), hints[-1]) if room > 0 else hints[0], style="dim")
        if self.show_passing:
            for d in view.check_details:
                if d["passed"]:
                    passing.append("\n  ✔ ", style="green")
                    passing.append_text(literal(d["name"], style="bold"))
                    passing.append("  ")
                    passing.append_text(literal(d["why"], style="dim"))
        stable = stability_line(m, always=self.show_passing)  # could the unjudged documents flip it?
        power = None
        if self.show_passing and view.power:  # the smallest difference these queries detect (core/power.py)
            power = Text("≈ ", style="cyan", end="")
            power.append_text(literal(view.power["line"].removeprefix("power: "), style="dim"))
        checks = Text("\n", end="").join([t for t in (reasons, passing, stable, power)
                                          if t is not None and t.plain])
        return checks

    def _measures(self, view: GateView) -> Text:
        """The macro measures of both runs and their difference; in a pane narrower than the table's 43 columns
        (80x24), shorter heads and columns, so that no row wraps."""
        room = self.scrollable_content_region.width - 1  # a column spare: a scroll bar that comes and goes
        if room <= 0 or room >= 43:
            name_w, heads, cells, delta = 11, ("baseline", 10, "candidate", 11, 10), "{:>10.4f}{:>11.4f}  ", "{:>+8.4f}"
        else:
            name_w, heads, cells, delta = max(6, min(11, room - 24)), ("base", 7, "cand", 8, 8), "{:>7.4f}{:>8.4f} ", \
                "{:>+7.4f}"
        table = Text(end="")
        b, bw, c, cw, dw = heads
        table.append(f"{'measure':<{name_w + 1}}{b:>{bw}}{c:>{cw}}{'Δ':>{dw}}", style="bold dim")
        for key, bv in view.baseline_macro.items():
            cv = view.candidate_macro[key]
            name = MACRO_LABELS[key].format(k=view.k) if key in MACRO_LABELS else key
            table.append("\n")
            table.append_text(literal(id_cell(name, name_w) + " "))
            table.append(cells.format(bv, cv))
            table.append_text(delta_text(cv - bv, delta))
        return table

    def _failed(self, view: GateView) -> Text:
        """The queries the candidate misses, must-pass ones first."""
        m = self.model
        failed = Text(end="")
        n = len(view.failed)
        failed.append(f"candidate misses at {view.k}: {n} of {view.evaluated} queries", style="bold")
        f = view.failed  # must-pass first, then in the benchmark's order (no sort of thousands per edit)
        shown = np.concatenate([f[m.must[f]], f[~m.must[f]]])[:MAX_FAILED].tolist() if n else []
        for qi in shown:
            failed.append("\n")
            failed.append(f"{MUST[0]} " if m.must[qi] else "  ", style=MUST[1])
            failed.append_text(literal(m.qids[qi]))
            if m.values[m.baseline][m.hit_m][qi]:
                failed.append("  lost (baseline hits)", style="red")
        if n > MAX_FAILED:
            failed.append(f"\n  … and {n - MAX_FAILED} more (filter is:miss)", style="dim")
        return failed
