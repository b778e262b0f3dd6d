"""A query's label history: every change, newest first, with whose judgment it is and who made the change.

A row names whose judgment changed (the reviewer; for an import, the reviewer
the file names, or the file when it names none) and, apart, who made the change
when that is someone else ("imported by ana", "by lena"). One row per edit: a reason
typed right after its grade is one edit with it (the store records it as amending the
grade's event and folds the two, as `rankgate labels history` does); a reason changed
later (`r`) is a row of its own. An undo or a redo says so.
The columns cut long values; the highlighted row is shown whole, wrapped, under the list.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.tui.labels import Change
from rankgate.tui.safe import id_cell, literal, text_cell
from rankgate.tui.widgets.line_list import LineList
from rankgate.tui.widgets.text_static import TextStatic

IMPORTS = ("import", "merge", "migrate")


def action_of(c: Change) -> str:
    cause = c.extra.get("cause") or ""
    if not cause and "rankgate review: " in (c.extra.get("why") or ""):
        cause = c.extra["why"].split("rankgate review: ", 1)[1].split(" ", 1)[0]
    return cause if cause in ("undo", "redo") else c.action


def by_text(c: Change) -> str:
    """Who made the change, when it is not whose judgment it is."""
    by = c.by
    if not by or by == c.reviewer:
        return ""
    return f"imported by {by}" if c.action in IMPORTS else f"by {by}"


class ChangeList(LineList):
    def __init__(self, changes: list[Change], **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.changes = changes

    def render_header(self, width: int) -> Text:
        return Text(f"{'time':<24} {'action':<8} {'document':<22} {'grade':<6} {'judged by':<14} {'changed by':<18} "
                    "reason / note", end="")

    def render_row(self, index: int, width: int) -> Text:
        c = self.changes[index]
        t = Text(end="")
        t.append_text(literal(text_cell(c.time or "", 24), style="dim"))
        t.append(" ")
        action = action_of(c)
        style = "red" if c.action == "remove" else "yellow" if action in ("undo", "redo", "unsure") else "green"
        t.append_text(literal(text_cell(action, 8), style=style))
        t.append(" ")
        t.append_text(literal(id_cell(c.doc or "(query)", 22)))
        t.append(" ")
        grade = "" if c.action == "notes" else f"{'-' if c.before is None else c.before}→" \
            f"{'-' if c.grade is None else c.grade}" if c.before != c.grade else str(c.grade)
        t.append(text_cell(grade, 6), style="bold")
        t.append(" ")
        t.append_text(literal(text_cell(c.reviewer, 14), style="cyan"))
        t.append(" ")
        t.append_text(literal(text_cell(by_text(c), 18), style="magenta"))
        t.append(" ")
        t.append_text(literal(c.reason, style="dim"))
        return t

    def empty_text(self) -> Text:
        return Text("no changes recorded for this query yet", style="dim italic", end="")


def detail(c: Change) -> Text:
    """One change in full: every field on its own, nothing cut (the list's columns cut them)."""
    t = Text(end="")
    t.append_text(literal(action_of(c), style="bold"))
    t.append(" · ")
    t.append_text(literal(c.doc or "(query)", style="bold cyan"))
    if c.action != "notes":
        grade = f"{'-' if c.before is None else c.before}→{'-' if c.grade is None else c.grade}" \
            if c.before != c.grade else str(c.grade)
        t.append(f" · grade {grade}", style="bold")
    t.append(" · ", style="dim")
    t.append_text(literal(c.time or "", style="dim"))
    t.append("\njudged by ", style="dim")
    t.append_text(literal(c.reviewer or "", style="cyan"))
    if by_text(c):
        t.append(" · changed: ", style="dim")
        t.append_text(literal(by_text(c), style="magenta"))
    t.append("\n")
    t.append_text(literal(c.reason or "(no reason)", style="" if c.reason else "dim"))
    return t


class HistoryScreen(ModalScreen[None]):
    BINDINGS = [("escape,h,q", "dismiss(None)", "Close")]

    def __init__(self, qid: str, changes: list[Change]) -> None:
        super().__init__()
        self.qid = qid
        self.changes = changes  # one per edit: the store folds a reason into its grade's event

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            title = Text("History of ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            title.append(f"  ({len(self.changes)} changes)", style="dim")
            yield Static(title)
            yield ChangeList(list(reversed(self.changes)), id="history-list")
            yield TextStatic(id="history-detail")
            yield Static(Text("judged by: whose judgment (an import: the reviewer the file names, else the file) · "
                              "changed by: who made the change when someone else did · Escape closes", style="dim"))

    def on_mount(self) -> None:
        lst = self.query_one(ChangeList)
        lst.set_count(len(lst.changes), 0, notify=False)
        lst.focus()
        self._detail(0)

    @on(LineList.Highlighted, "#history-list")
    def _highlighted(self, event: LineList.Highlighted) -> None:
        self._detail(event.index)

    def _detail(self, index: int) -> None:
        lst = self.query_one(ChangeList)
        if 0 <= index < len(lst.changes):
            self.query_one("#history-detail", TextStatic).show(detail(lst.changes[index]))
