"""The optional reason after a grade: a one-line prompt at the foot of the screen."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from rankgate.tui.safe import excerpt, literal


class ReasonBar(Horizontal):
    """Shown after a grade key: Enter keeps the typed reason, Escape leaves the reason as it was."""

    BINDINGS = [Binding("escape", "cancel", "Skip reason", show=True)]

    class Submitted(Message):
        def __init__(self, qid: str, doc: str, grade: int, reason: str) -> None:
            super().__init__()
            self.qid, self.doc, self.grade, self.reason = qid, doc, grade, reason

    class Closed(Message):
        """The bar closed (after a reason or without one)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.target: tuple[str, str, int] | None = None
        self.original = ""

    def compose(self) -> ComposeResult:
        yield Static(id="reason-label")
        yield Input(placeholder="why this grade? (Enter saves, Escape skips)", id="reason-input")

    def ask(self, qid: str, doc: str, grade: int, reason: str) -> None:
        self.target = (qid, doc, grade)
        self.original = reason
        label = Text(end="")
        label.append(f"reason for grade {grade} of ", style="bold")
        label.append_text(literal(excerpt(doc, 30), style="bold cyan"))
        label.append(": ")
        self.query_one("#reason-label", Static).update(label)
        inp = self.query_one(Input)
        inp.value = reason
        self.display = True
        inp.focus()

    @property
    def is_open(self) -> bool:
        return bool(self.display)

    def close(self) -> None:
        self.display = False
        self.target = None
        self.post_message(self.Closed())

    @on(Input.Submitted, "#reason-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.target is not None and event.value != self.original:
            qid, doc, grade = self.target
            self.post_message(self.Submitted(qid, doc, grade, event.value))
        self.close()

    def action_cancel(self) -> None:
        self.close()
