"""Add a label for any document ID (one that no run retrieved, too)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rankgate.tui.safe import literal
from rankgate.tui.screens import apply_cursor_blink


class LabelForm(ModalScreen[tuple[str, int, str] | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, qid: str, doc: str = "", grade: int | None = None, reason: str = "") -> None:
        super().__init__()
        self.qid, self.doc, self.grade, self.reason = qid, doc, grade, reason

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            title = Text("Add a label to ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            yield Static(title)
            yield Input(self.doc, placeholder="document ID", id="form-doc")
            yield Input("" if self.grade is None else str(self.grade), placeholder="grade (0-3)",
                        restrict=r"-?[0-9]*", max_length=3, id="form-grade")
            yield Input(self.reason, placeholder="reason (optional)", id="form-reason")
            yield Static(Text("Enter moves on and saves from the last field · Escape cancels", style="dim"),
                         id="form-help")

    def on_mount(self) -> None:
        apply_cursor_blink(self)

    def _error(self, what: str) -> None:
        self.query_one("#form-help", Static).update(Text(what, style="bold red"))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id != "form-reason":
            self.focus_next()
            return
        self.save()

    def save(self) -> None:
        doc = self.query_one("#form-doc", Input).value.strip()
        grade = self.query_one("#form-grade", Input).value.strip()
        if not doc:
            self._error("a document ID is needed")
            self.query_one("#form-doc", Input).focus()
            return
        try:
            g = int(grade)
        except ValueError:
            self._error("the grade must be a whole number, such as 0, 1, 2 or 3")
            self.query_one("#form-grade", Input).focus()
            return
        self.dismiss((doc, g, self.query_one("#form-reason", Input).value))
