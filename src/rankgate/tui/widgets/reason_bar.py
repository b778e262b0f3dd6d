"""The optional reason after a grade: a one-line prompt at the foot of the screen."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual._time import get_time  # the clock of `Message.time` (monotonic)
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from rankgate.tui.safe import id_excerpt, literal
from rankgate.tui.typeahead import type_key


class ReasonBar(Horizontal):
    """Shown after a grade key: Enter keeps the typed reason, Escape leaves the reason as it was."""

    # Enter and Escape act at once, in key order, and give the focus back before the next key is read:
    # an expert typing `1 Esc Down 0 Esc` grades the two documents the keys meant.
    BINDINGS = [Binding("escape", "cancel", "Skip reason", show=True),
                Binding("enter", "save", "Save reason", show=False, priority=True)]

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
        self.return_to = None  # the widget that had the focus before the bar opened
        self.opened_at = 0.0  # a key read before this, reaching the review screen, was typed for the bar

    def compose(self) -> ComposeResult:
        yield Static(id="reason-label")
        yield Input(placeholder="why this grade? Enter saves, Esc skips", id="reason-input")  # whole at 80x24

    def ask(self, qid: str, doc: str, grade: int, reason: str, return_to=None) -> None:
        self.target = (qid, doc, grade)
        self.return_to = return_to
        self.original = reason
        label = Text(end="")
        label.append(f"reason for grade {grade} of ", style="bold")  # which query and document: said every time
        label.append_text(literal(id_excerpt(qid, 28), style="bold"))  # (the label wraps onto three rows)
        label.append(" · ")
        label.append_text(literal(id_excerpt(doc, 32), style="bold cyan"))
        label.append(": ")
        self.query_one("#reason-label", Static).update(label)
        inp = self.query_one(Input)
        inp.value = reason
        self.display = True
        self.opened_at = get_time()
        self.screen.set_focus(inp)  # now: the keys typed next are the reason's

    def take_key(self, event: events.Key) -> bool:
        """A key typed in the same burst as the grade (read before the bar opened, so sent to the list focused
        then; screens/editing.py hands it here), as if typed now: text, Backspace, Enter saves, Escape skips.
        False for another key: it runs as a key typed now (the Input's own bindings, then the screen's)."""
        inp = self.query_one(Input)
        return type_key(event, insert=inp.insert_text_at_cursor, delete_left=inp.action_delete_left,
                        enter=self.action_save, escape=self.action_cancel)

    @property
    def field(self) -> Input:
        return self.query_one(Input)

    @property
    def is_open(self) -> bool:
        return bool(self.display)

    def close(self) -> None:
        self.display = False
        self.target = None
        target, self.return_to = self.return_to, None
        if target is not None and target.is_attached:
            self.screen.set_focus(target)  # now, not after a message: the next key goes where it belongs
        self.post_message(self.Closed())

    def action_save(self) -> None:
        value = self.query_one(Input).value
        if self.target is not None and value != self.original:
            qid, doc, grade = self.target
            self.post_message(self.Submitted(qid, doc, grade, value))
        self.close()

    def action_cancel(self) -> None:
        self.close()
