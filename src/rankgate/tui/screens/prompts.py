"""Small modals of the review screen: a one-line value, a choice, a grade from the scale, a query's notes.

Every text from data reaches them as `rich.text.Text` built through `tui.safe`.
"""

from __future__ import annotations

import inspect
from typing import Callable

from rich.text import Text
from textual import events, on
from textual._time import get_time  # the clock of `Message.time` (monotonic)
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.input import Selection
from textual.widgets.option_list import Option

from rankgate.tui.safe import literal
from rankgate.tui.typeahead import type_key, typed_into
from rankgate.tui.screens import apply_cursor_blink


def run_key_binding(widget, key: str) -> bool:
    """Run the widget's own binding of `key` now (an Input's ctrl+u, left, home ...), when it is a plain
    action without arguments; False when it has none."""
    for binding in getattr(widget, "BINDINGS", ()):
        if not isinstance(binding, Binding) or key not in binding.key.split(","):
            continue
        action = getattr(widget, f"action_{binding.action}", None)
        if action is not None and "(" not in binding.action and not inspect.iscoroutinefunction(action):
            action()
            return True
    return False


class EarlyKeys:
    """A prompt opened by a key takes the keys typed in the same burst (a paste ending in Enter, a fast
    typist). A terminal's keys are read before the app acts on the first: the ones after the key that opens
    the prompt were sent to the widget focused then, and reach the review screen, which hands them here
    (`take_key`, screens/editing.py). They are kept until the prompt is mounted, then typed into it in order,
    as if typed after it opened (`early_key`). Keys left after the prompt closed on one of them are dropped."""

    opened_at: float = 0.0
    _early: list | None = None  # None once the prompt takes keys at once

    def _wait_for_keys(self) -> None:
        self.opened_at = get_time()  # a key read before this was meant for the prompt
        self._early = []

    def take_key(self, event: events.Key) -> bool:
        """Keep the key until the prompt is mounted; then type it in. False: a key it does not take runs as
        a key typed now (the focused widget's bindings)."""
        if self._early is not None:
            self._early.append(event)
            return True
        return self.early_key(event) if self.is_active else True

    def _keys_ready(self) -> None:
        early, self._early = self._early or [], None
        for event in early:
            if not self.is_active:
                break
            self.early_key(event)

    def early_key(self, event: events.Key) -> bool:
        """One early key, as typed now: text into the focused Input, Enter submits it, Escape cancels."""
        focused = self.focused
        if event.key == "escape":
            self.dismiss(None)
            return True
        if not isinstance(focused, Input):
            return False
        return type_key(event, insert=typed_into(focused), delete_left=focused.action_delete_left,
                        enter=lambda: self.early_enter(focused)) or run_key_binding(focused, event.key)

    def typing_now(self) -> bool:
        """Keys go into the focused field as they are read (ReviewApp.on_event): the prompt is mounted, open,
        and a text field has the focus. Through the field's own queue a burst lost text: ctrl+u's binding ran
        after the characters typed behind it and deleted them."""
        return self._early is None and self.is_active and not self.closing and isinstance(self.focused, Input)

    closing: bool = False  # submitted: the keys after it are not the field's

    def early_enter(self, inp: Input) -> None:
        inp.post_message(Input.Submitted(inp, inp.value))


class TextPrompt(EarlyKeys, ModalScreen[str | None]):
    """One line of text. `check(value)` returns why a value is refused ("" or None: accepted); a refused value
    keeps the prompt open with the reason in red."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: Text, value: str = "", *, placeholder: str = "", help: str = "",
                 check: Callable[[str], str | None] | None = None, id_: str = "prompt-input",
                 warn: Callable[[str], str] | None = None) -> None:
        """`warn(value)`: a warning shown under the field while the value typed has it ("" for none)."""
        super().__init__()
        self.title_text, self.value, self.placeholder, self.help = title, value, placeholder, help
        self.check, self.warn = check, warn
        self.input_id = id_
        self._wait_for_keys()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text)
            # The filled-in value is selected here, not on focus: the focus comes after the keys typed ahead,
            # which would then be selected (and replaced by the next key) instead of the value they replace.
            yield Input(self.value, placeholder=self.placeholder, id=self.input_id, select_on_focus=False)
            yield Static(self._help(self.value), id="prompt-help")

    def _help(self, value: str) -> Text:
        help = Text(self.help or "Enter saves · Escape cancels", style="dim")
        warning = self.warn(value) if self.warn else ""
        if warning:
            help = Text("! ", style="bold yellow").append_text(literal(warning, style="yellow"))
            help.append("\n" + (self.help or "Enter saves · Escape cancels"), style="dim")
        return help

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        if self.warn:
            self.query_one("#prompt-help", Static).update(self._help(event.value))

    def on_mount(self) -> None:
        apply_cursor_blink(self)
        inp = self.query_one(Input)
        inp.selection = Selection(0, len(inp.value))  # typing replaces the filled-in value
        self.set_focus(inp)  # now: the early keys go in
        self._keys_ready()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit(event.value)

    def early_enter(self, inp: Input) -> None:
        self.submit(inp.value)

    def submit(self, value: str) -> None:
        why = self.check(value) if self.check else None
        if why:
            self.query_one("#prompt-help", Static).update(literal(why, style="bold red"))
            return
        self.closing = True
        self.dismiss(value)


class Choice(EarlyKeys, ModalScreen[str | None]):
    """A question with a few answers (an OptionList; Enter picks, Escape is "cancel"). Keys typed in one burst
    with the key that asked it: arrows and Enter answer it, Escape cancels, and text (a reason typed ahead)
    is kept in `kept` for what opens after the answer (`keep_text`), never run as the screen's keys."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: Text, body: Text, options: list[tuple[str, str]], *, keep_text: bool = False) -> None:
        super().__init__()
        self.title_text, self.body, self.options = title, body, options
        self.keep_text = keep_text
        self.kept: list[events.Key] = []
        self._wait_for_keys()

    def early_key(self, event: events.Key) -> bool:
        ol = self.query_one(OptionList)
        if event.key == "escape":
            self.dismiss(None)
        elif event.key == "enter" and self.kept:  # typed after a reason: the reason's Enter, not an answer
            self.kept.append(event)
        elif event.key == "enter" and ol.highlighted is not None:
            key = self.options[ol.highlighted][0]
            self.dismiss(None if key == "cancel" else key)
        elif event.key in ("up", "down"):
            getattr(ol, f"action_cursor_{event.key}")()
        elif self.keep_text and (event.is_printable or event.key == "backspace"):
            self.kept.append(event)
        return True  # any other key typed ahead is the question's: it does not act on the screen below

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
        self._keys_ready()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(None if event.option.id == "cancel" else event.option.id)


class GradePicker(EarlyKeys, ModalScreen[int | None]):
    """The benchmark's scale by name: for grades without a key (above 9, below -9) and for naming them."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, scale: dict[int, str], current: int | None, doc: str) -> None:
        super().__init__()
        self.grades = sorted(scale)
        self.scale, self.current, self.doc = scale, current, doc
        self._wait_for_keys()

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
        self.set_focus(ol)
        self._keys_ready()

    def early_key(self, event: events.Key) -> bool:
        if event.key == "escape":
            self.dismiss(None)
        elif event.key == "enter":
            ol = self.query_one(OptionList)
            if ol.highlighted is not None:
                self.dismiss(self.grades[ol.highlighted])
        else:
            self.on_key(event)
            return event._stop_propagation
        return True

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


class NotesEditor(EarlyKeys, ModalScreen[str | None]):
    """A query's notes, several lines: ctrl+s saves, Escape cancels."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, qid: str, notes: str) -> None:
        super().__init__()
        self.qid, self.notes = qid, notes
        self._wait_for_keys()

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
        self.set_focus(area)
        self._keys_ready()

    def early_key(self, event: events.Key) -> bool:
        area = self.query_one(TextArea)
        if event.key == "ctrl+s":
            self.action_save()
            return True
        return type_key(event, insert=area.insert, delete_left=area.action_delete_left,
                        enter=lambda: area.insert("\n"), escape=lambda: self.dismiss(None))

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)
