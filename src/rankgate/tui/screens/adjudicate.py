"""The adjudication screen: the open disagreements between reviewers, one at a time.

For each pair whose reviewers gave different grades (`Workspace.disagreements()`):
the query's text, the document's text (from the corpus when it is loaded),
each reviewer's grade and reason, and the label exported now. A grade key
0-3, then a reason (required) and Enter, records the final grade
(`Workspace.adjudicate`, by the app's reviewer); the review screen's panes
follow at once, and the next open disagreement shows. `n` / `p` skip
forward and back; Escape cancels a grade being given, else closes.
"""

from __future__ import annotations

from typing import Callable

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static

from rankgate.core.text import visible
from rankgate.core.benchmark import DEFAULT_GRADES
from rankgate.tui.labels import LabelBook
from rankgate.tui.safe import literal
from rankgate.tui.screens import apply_cursor_blink


class AdjudicateScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "Close"),
        *(Binding(str(g), f"grade({g})", f"Grade {g}", show=False) for g in range(10)),
        Binding("n,right", "step(1)", "Next", show=False),
        Binding("p,left", "step(-1)", "Previous", show=False),
    ]

    def __init__(self, book: LabelBook, queries: dict, corpus: dict | None, has_corpus: bool,
                 on_recorded: Callable[[str, str], None] | None = None, grades: dict[int, str] | None = None) -> None:
        super().__init__()
        self.grades = grades or DEFAULT_GRADES  # the digit keys give the grades of this scale
        self.book = book
        self.queries = queries
        self.corpus = corpus
        self.has_corpus = has_corpus
        self.on_recorded = on_recorded
        self.items: list = []
        self.at = 0
        self.grade: int | None = None  # the grade being given (its reason is being typed)
        self.recorded = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="adjudicate"):
            yield Static(id="adj-title")
            with VerticalScroll(id="adj-body"):
                yield Static(id="adj-pair")
            yield Input(placeholder="reason for the final grade (required)", id="adj-reason")
            yield Static(id="adj-help")

    def on_mount(self) -> None:
        apply_cursor_blink(self)
        self.query_one("#adj-reason", Input).display = False
        self.reload()

    # ---- showing ---------------------------------------------------------------------------------------------

    def reload(self) -> None:
        try:
            self.items = list(self.book.disagreements())
        except Exception as e:  # e.g. a blind workspace refuses to show others' grades
            self.items = []
            self.notify(f"cannot list disagreements: {e}", severity="error", markup=False, timeout=8)
        self.at = min(self.at, max(len(self.items) - 1, 0))
        self.show()

    @property
    def current(self):
        return self.items[self.at] if self.items else None

    def show(self) -> None:
        title = Text("Adjudication", style="bold", end="")
        d = self.current
        if d is None:
            title.append(f" · {self.recorded} recorded" if self.recorded else "", style="dim")
            self.query_one("#adj-title", Static).update(title)
            self.query_one("#adj-pair", Static).update(
                Text("No open disagreements: every pair judged by several reviewers agrees or is adjudicated.",
                     style="italic"))
            self.query_one("#adj-help", Static).update(Text("Escape closes", style="dim"))
            return
        title.append(f" · disagreement {self.at + 1} of {len(self.items)}", style="dim")
        self.query_one("#adj-title", Static).update(title)
        self.query_one("#adj-pair", Static).update(self.pair_view(d))
        self.query_one("#adj-help", Static).update(self.help_text())

    def pair_view(self, d) -> Table:
        out = Table.grid(padding=(0, 1))
        out.add_column(style="bold", no_wrap=True)
        out.add_column(ratio=1)
        q = self.queries.get(d.query)
        qt = literal(d.query, style="bold cyan")
        if q is not None and q.text:
            qt.append("  ")
            qt.append_text(literal(q.text, one_line=False))
        out.add_row(Text("query"), qt)
        out.add_row(Text("document"), self.doc_text(d.doc))
        grades = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        for name in ("reviewer", "grade", "reason", "when"):
            grades.add_column(name)
        for j in d.judgments:
            grades.add_row(literal(j.reviewer, style="cyan"), Text(str(j.grade), style="bold"),
                           literal(j.reason or "(no reason)", one_line=False),
                           literal(j.updated or j.created or "", style="dim"))
        out.add_row(Text("reviewers"), grades)
        lab = d.label
        now = Text(f"grade {lab.grade}", style="bold", end="")
        now.append("  ")
        now.append_text(literal(lab.how(), style="dim"))
        out.add_row(Text("label now"), now)
        return out

    def doc_text(self, doc: str) -> Text:
        t = literal(doc, style="bold")
        if not self.has_corpus:
            t.append("\n(no corpus in this benchmark)", style="dim italic")
        elif self.corpus is None:
            t.append("\n(reading the corpus…)", style="dim italic")
        elif (d := self.corpus.get(doc)) is None:
            t.append("\n(not in the corpus)", style="dim italic")
        else:
            if d.title:
                t.append("\n")
                t.append_text(literal(d.title, style="bold", one_line=False))
            t.append("\n")
            t.append_text(literal(d.text, one_line=False))
        return t

    def help_text(self) -> Text:
        if self.grade is not None:
            return Text(f"final grade {self.grade}: type the reason, Enter records it · Escape cancels",
                        style="bold")
        keys = "/".join(str(g) for g in sorted(self.grades) if 0 <= g <= 9)
        return Text(f"{keys}: the final grade (then a reason) · n/p: next/previous · Escape closes", style="dim")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "grade" and parameters:
            return int(parameters[0]) in self.grades
        return True

    # ---- keys --------------------------------------------------------------------------------------------------

    def action_grade(self, grade: int) -> None:
        if self.current is None:
            return
        self.grade = grade
        inp = self.query_one("#adj-reason", Input)
        inp.display = True
        inp.value = ""
        inp.focus()
        self.query_one("#adj-help", Static).update(self.help_text())

    def action_step(self, step: int) -> None:
        if self.items and self.grade is None:
            self.at = (self.at + step) % len(self.items)
            self.show()

    def action_back(self) -> None:
        if self.grade is not None:
            self._close_reason()
            self.query_one("#adj-help", Static).update(self.help_text())
        else:
            self.dismiss(None)

    def _close_reason(self) -> None:
        self.grade = None
        inp = self.query_one("#adj-reason", Input)
        inp.display = False
        self.set_focus(None)

    @on(Input.Submitted, "#adj-reason")
    def _reason(self, event: Input.Submitted) -> None:
        event.stop()
        reason = event.value.strip()
        if not reason:
            self.query_one("#adj-help", Static).update(Text("an adjudication needs a reason", style="bold red"))
            return
        self.record(self.grade, reason)

    def record(self, grade: int, reason: str) -> bool:
        d = self.current
        if d is None or grade is None:
            return False
        try:
            lab = self.book.adjudicate(d.query, d.doc, grade, reason)
        except Exception as e:  # the store refused: nothing changed
            self.notify(f"adjudication not saved: {e}", severity="error", markup=False, timeout=8)
            return False
        self.recorded += 1
        self._close_reason()
        if self.on_recorded is not None:
            self.on_recorded(d.query, d.doc)
        where = visible(f"{d.query} · {d.doc}", lines="space")
        self.notify(f"{where}: grade {lab.grade}, {lab.how or 'recorded'}",
                    title="adjudicated", markup=False)
        self.reload()
        return True
