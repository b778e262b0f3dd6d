"""The gate pane: macro measures of both runs with deltas, each check and why, failed queries, decision."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from rankgate.tui.model import GateView, ReviewModel
from rankgate.tui.safe import excerpt, literal
from rankgate.tui.widgets.marks import MUST, delta_text
from rankgate.tui.widgets.text_static import TextStatic

MAX_FAILED = 12
STALE = "significance tests updating…"  # shown while they are from before the last edit
MACRO_LABELS = {"hit_rate_at_k": "Hit@{k}", "precision_at_k": "P@{k}", "recall_at_k": "R@{k}", "mrr_at_k": "MRR@{k}"}


def decision_text(view: GateView) -> Text:
    if view.accepted:
        return Text(" ACCEPT ", style="bold black on green", end="")
    return Text(" REJECT ", style="bold white on red", end="")


class GatePanel(VerticalScroll):
    ALLOW_MAXIMIZE = True

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ReviewModel | None = None
        self.view: GateView | None = None
        self.problems: list[str] = []

    def compose(self) -> ComposeResult:
        yield TextStatic(id="gate-body", keep_height=True)  # redrawn on every edit: no layout for a line less

    def on_mount(self) -> None:
        self.border_title = "Gate"

    def bind(self, model: ReviewModel, problems: list[str] = ()) -> None:
        self.model = model
        self.problems = list(problems)

    def show(self, view: GateView) -> None:
        self.view = view
        m = self.model
        # On the border, not in the text: a line that comes and goes would change the pane's height, and
        # each height change costs the whole screen a new layout (twice per edit, 20-50 ms each).
        subtitle = STALE if view.stale else None
        if self.border_subtitle != subtitle:  # setting it repaints the whole pane, even to the same text
            self.border_subtitle = subtitle
        head = Text(end="")
        head.append_text(decision_text(view))
        head.append("  ")
        head.append_text(literal(excerpt(view.candidate, 22), style="bold cyan"))
        head.append(" vs ", style="dim")
        head.append_text(literal(excerpt(view.baseline, 22), style="bold"))
        head.append(f" · k={view.k} · {view.evaluated} judged", style="dim")
        for problem in self.problems:  # a file left out at load: the decision is on what remains
            head.append("\n! ", style="bold red")
            head.append_text(literal(problem, style="red"))
        if self.problems:
            head.append("\n  fix the file and press ctrl+r to read it again", style="dim")

        table = Text(end="")
        table.append(f"{'measure':<12}{'baseline':>10}{'candidate':>11}{'Δ':>10}", style="bold dim")
        for key, bv in view.baseline_macro.items():
            cv = view.candidate_macro[key]
            name = MACRO_LABELS[key].format(k=view.k) if key in MACRO_LABELS else key
            table.append("\n")
            table.append_text(literal(excerpt(name, 11).ljust(12)))
            table.append(f"{bv:>10.4f}{cv:>11.4f}  ")
            table.append_text(delta_text(cv - bv, "{:>+8.4f}"))

        checks = Text(end="")
        for i, d in enumerate(view.check_details):
            if i:
                checks.append("\n")
            checks.append("✔ " if d["passed"] else "✗ ", style="bold green" if d["passed"] else "bold red")
            checks.append_text(literal(d["name"], style="bold"))
            checks.append("  ")
            checks.append_text(literal(d["why"], style="dim" if d["passed"] else ""))
        for q in view.unknown_must_pass:
            checks.append("\n! ", style="bold yellow")
            checks.append_text(literal(f"must-pass query {q} is in no file of this benchmark", style="yellow"))

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
        body = Text("\n\n", end="").join([head, table, checks, failed])
        self.query_one("#gate-body", TextStatic).show(body)
