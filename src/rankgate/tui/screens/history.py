"""A query's label history: every grade set and every label removed, newest first."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.tui.labels import Change
from rankgate.tui.safe import excerpt, literal
from rankgate.tui.widgets.line_list import LineList


class ChangeList(LineList):
    def __init__(self, changes: list[Change], **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.changes = changes

    def render_header(self, width: int) -> Text:
        return Text(f"{'time':<24} {'action':<7} {'document':<24} g  {'reviewer':<10} reason", end="")

    def render_row(self, index: int, width: int) -> Text:
        c = self.changes[index]
        t = Text(end="")
        t.append_text(literal(excerpt(c.time or "", 24).ljust(24), style="dim"))
        t.append(" ")
        t.append_text(literal(excerpt(c.action, 7).ljust(7), style="red" if c.action == "remove" else "green"))
        t.append(" ")
        t.append_text(literal(excerpt(c.doc, 24).ljust(24)))
        t.append(" ")
        t.append("-" if c.grade is None else str(c.grade))
        t.append("  ")
        t.append_text(literal(excerpt(c.reviewer, 10).ljust(10), style="cyan"))
        t.append(" ")
        t.append_text(literal(c.reason, style="dim"))
        return t

    def empty_text(self) -> Text:
        return Text("no changes recorded for this query yet", style="dim italic", end="")


class HistoryScreen(ModalScreen[None]):
    BINDINGS = [("escape,h,q", "dismiss(None)", "Close")]

    def __init__(self, qid: str, changes: list[Change]) -> None:
        super().__init__()
        self.qid = qid
        self.changes = changes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            title = Text("History of ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            title.append(f"  ({len(self.changes)} changes)", style="dim")
            yield Static(title)
            yield ChangeList(list(reversed(self.changes)), id="history-list")
            yield Static(Text("Escape closes", style="dim"))

    def on_mount(self) -> None:
        lst = self.query_one(ChangeList)
        lst.set_count(len(lst.changes), 0, notify=False)
        lst.focus()
