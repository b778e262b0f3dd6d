"""Small modals of the review screen: a one-line value, a choice, a grade from the scale, a query's notes.

Every text from data reaches them as `rich.text.Text` built through `tui.safe`.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from rankgate.tui.safe import literal
from rankgate.tui.screens import apply_cursor_blink


class TextPrompt(ModalScreen[str | None]):
    """One line of text. `check(value)` returns why a value is refused ("" or None: accepted); a refused value
    keeps the prompt open with the reason in red."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: Text, value: str = "", *, placeholder: str = "", help: str = "",
                 check: Callable[[str], str | None] | None = None, id_: str = "prompt-input") -> None:
        super().__init__()
        self.title_text, self.value, self.placeholder, self.help = title, value, placeholder, help
        self.check = check
        self.input_id = id_

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text)
            yield Input(self.value, placeholder=self.placeholder, id=self.input_id)
            yield Static(Text(self.help or "Enter saves · Escape cancels", style="dim"), id="prompt-help")

    def on_mount(self) -> None:
        apply_cursor_blink(self)
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        why = self.check(event.value) if self.check else None
        if why:
            self.query_one("#prompt-help", Static).update(literal(why, style="bold red"))
            return
        self.dismiss(event.value)


class Choice(ModalScreen[str | None]):
    """A question with a few answers (an OptionList; Enter picks, Escape is "cancel")."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: Text, body: Text, options: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text, self.body, self.options = title, body, options

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text)
            yield Static(self.body, id="choice-body")
            yield OptionList(*(Option(Text(label), id=key) for key, label in self.options), id="choice-options")
            yield Static(Text("Enter chooses · Escape cancels", style="dim"))

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.highlighted = 0
        ol.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(None if event.option.id == "cancel" else event.option.id)


class GradePicker(ModalScreen[int | None]):
    """The benchmark's scale by name: for grades without a key (above 9, below -9) and for naming them."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, scale: dict[int, str], current: int | None, doc: str) -> None:
        super().__init__()
        self.grades = sorted(scale)
        self.scale, self.current, self.doc = scale, current, doc

    def compose(self) -> ComposeResult:
        from rankgate.tui.commands import grade_key

        with Vertical(classes="dialog"):
            title = Text("Grade ", style="bold", end="")
            title.append_text(literal(self.doc, style="bold cyan"))
            yield Static(title)
            options = []
            for g in self.grades:
                t = Text(f"{g:>3}  ", style="bold", end="")
                t.append_text(literal(self.scale[g]))
                key = grade_key(g)
                if key:
                    t.append(f"   key {key}", style="dim")
                if g == self.current:
                    t.append("  (now)", style="dim")
                options.append(Option(t, id=str(g)))
            yield OptionList(*options, id="grade-options")
            yield Static(Text("a grade's key, or Enter, grades · Escape cancels", style="dim"))

    def on_mount(self) -> None:
        ol = self.query_one(OptionList)
        ol.highlighted = self.grades.index(self.current) if self.current in self.grades else 0
        ol.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id))

    def on_key(self, event: events.Key) -> None:
        """A grade's own key (as on the review screen) grades at once."""
        from rankgate.tui.commands import grade_key

        chosen = next((g for g in self.grades if event.character and grade_key(g) == event.character), None)
        if chosen is not None:
            event.stop()
            self.dismiss(chosen)


class NotesEditor(ModalScreen[str | None]):
    """A query's notes, several lines: ctrl+s saves, Escape cancels."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, qid: str, notes: str) -> None:
        super().__init__()
        self.qid, self.notes = qid, notes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            title = Text("Notes of ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            yield Static(title)
            yield TextArea(self.notes, id="notes-text", soft_wrap=True, show_line_numbers=False)
            yield Static(Text("ctrl+s saves (kept in the query's history) · Escape cancels", style="dim"))

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        if not getattr(self.app, "cursor_blink", True):
            area.cursor_blink = False
        area.move_cursor(area.document.end)  # go on writing after what is there
        area.focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)
