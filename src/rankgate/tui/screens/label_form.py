"""Add a label for any document ID (one that no run retrieved, too): grade, collection version, reason.

The grade must be on the benchmark's scale (a number or a grade's name); the
collection version must not be empty when the benchmark names one (it is filled in; raw files and a
benchmark without `collection_version` have none, so the field may stay empty, as a grade key leaves
it); a document ID that is in no run and not
in the corpus is added only after a second Enter (the form asks first).

Below 34 rows (VERTICAL_BREAKPOINTS, app.tcss `LabelForm.-short`) the form is compact: one line a field,
each with its name on the left, so that every field and the Enter/Escape line fit at 80x24; the form also
scrolls, the focused field kept in view, should a long message still push it down.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rankgate.core.benchmark import DEFAULT_GRADES
from rankgate.store.records import typing_slip
from rankgate.tui.safe import excerpt, literal
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.prompts import EarlyKeys


def scale_text(scale: dict[int, str]) -> str:
    """`0 not relevant, 1 partly relevant, ...` for messages."""
    return ", ".join(f"{g} {scale[g]}" for g in sorted(scale))


def parse_grade(value: str, scale: dict[int, str]) -> tuple[int | None, str]:
    """(grade, "") or (None, why it is refused): a number on the scale, or a grade's name."""
    value = value.strip()
    if not value:
        return None, f"a grade is needed ({scale_text(scale)})"
    try:
        g = int(value)
    except ValueError:
        by_name = {name.lower(): g for g, name in scale.items()}
        if value.lower() in by_name:
            return by_name[value.lower()], ""
        return None, f"grade {excerpt(value, 20)!r} is not on this benchmark's scale ({scale_text(scale)})"
    if g not in scale:
        return None, f"grade {g} is not on this benchmark's scale ({scale_text(scale)})"
    return g, ""


class LabelForm(EarlyKeys, ModalScreen[tuple[str, int, str, str] | None]):
    """Returns (document, grade, reason, collection version)."""

    BINDINGS = [("escape", "dismiss(None)", "Cancel")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (34, "-tall")]

    def __init__(self, qid: str, doc: str = "", grade: int | None = None, reason: str = "", *,
                 scale: dict[int, str] | None = None, version: str = "",
                 known: Callable[[str], bool] | None = None) -> None:
        super().__init__()
        self.qid, self.doc, self.grade, self.reason = qid, doc, grade, reason
        self.scale = scale or DEFAULT_GRADES
        self.version = version
        self.known = known
        self.confirmed: str | None = None  # an unknown document ID the user confirmed (Enter twice)
        self._wait_for_keys()  # the keys typed in one burst with `a` (prompts.EarlyKeys)

    def compose(self) -> ComposeResult:
        lo, hi = min(self.scale), max(self.scale)
        with Vertical(classes="dialog", id="form"):
            title = Text("Add a label to ", style="bold", end="")
            title.append_text(literal(self.qid, style="bold cyan"))
            yield Static(title, id="form-title")
            with Horizontal(classes="form-row"):
                yield Static("document", classes="form-name")
                yield Input(self.doc, placeholder="document ID", id="form-doc")
            with Horizontal(classes="form-row"):
                yield Static("grade", classes="form-name")
                yield Input("" if self.grade is None else str(self.grade),
                            placeholder=f"grade ({lo}..{hi} or a name)", max_length=40, id="form-grade")
            yield Static(literal(f"scale: {scale_text(self.scale)}", style="dim"), id="form-scale")
            with Horizontal(classes="form-row"):
                yield Static("version", classes="form-name")
                yield Input(self.version, placeholder="collection version you inspected" if self.version else
                            "collection version (optional: none named)", id="form-version")
            with Horizontal(classes="form-row"):
                yield Static("reason", classes="form-name")
                yield Input(self.reason, placeholder="reason (optional)", id="form-reason")
            yield Static(Text("Enter moves on and saves from the last field · Escape cancels", style="dim"),
                         id="form-help")

    def on_mount(self) -> None:
        apply_cursor_blink(self)
        self.set_focus(self.query_one(Input))
        self._keys_ready()

    def _error(self, what: str, field: str) -> None:
        self.query_one("#form-help", Static).update(literal(what, style="bold red"))
        self.query_one(f"#{field}", Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.early_enter(event.input)

    def early_enter(self, inp: Input) -> None:
        if inp.id != "form-reason":
            self.focus_next()
            return
        self.save()

    def save(self) -> None:
        doc = self.query_one("#form-doc", Input).value.strip()
        if not doc:
            self._error("a document ID is needed", "form-doc")
            return
        if typing_slip(doc) and (self.known is None or not self.known(doc)):  # typed, in no file: a paste slip
            self._error(f"{excerpt(doc, 40)} has a control character and is in no run: correct the ID", "form-doc")
            return
        g, why = parse_grade(self.query_one("#form-grade", Input).value, self.scale)
        if g is None:
            self._error(f"{why}: nothing saved", "form-grade")
            return
        version = self.query_one("#form-version", Input).value.strip()
        if not version and self.version:  # the benchmark names one: the version inspected is said
            self._error("the collection version cannot be empty (the version you inspected)", "form-version")
            return
        if self.known is not None and not self.known(doc) and self.confirmed != doc:
            self.confirmed = doc
            self.query_one("#form-help", Static).update(literal(
                f"{excerpt(doc, 40)} is in no run and not in the corpus: Enter again to add it anyway, "
                "or correct the ID", style="bold yellow"))
            return
        self.dismiss((doc, g, self.query_one("#form-reason", Input).value, version))
