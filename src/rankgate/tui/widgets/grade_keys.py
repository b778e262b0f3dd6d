"""The judging screen's keys: each grade of the scale with its name, then undo, reason, whole ID, back."""

from __future__ import annotations

from rich.text import Text

from rankgate.tui.commands import grade_key
from rankgate.tui.safe import excerpt
from rankgate.tui.widgets.text_static import TextStatic

MORE = (("u", "undo"), ("r", "reason"), ("i", "whole IDs"), ("s", "skip"), ("esc", "all panes"), ("?", "help"), ("q", "quit"))


def keys_text(grades: dict[int, str], needs_reason: frozenset[int] = frozenset()) -> Text:
    """`0 not relevant  1 partly relevant  2 relevant  3 the answer` (a * after a grade that needs a reason),
    then the other keys; wrapped by the widget."""
    t = Text(end="")
    for g in sorted(grades):
        key = grade_key(g)
        if key is None:
            continue
        t.append(f" {key} ", style="bold reverse")
        t.append(f" {excerpt(grades[g], 18)}{'*' if g in needs_reason else ''}  ")
    for key, what in MORE:
        t.append(f" {key} ", style="bold reverse" if key != "esc" else "reverse")
        t.append(f" {what}  ", style="dim")
    if needs_reason:
        t.append("* asks a reason", style="dim italic")
    return t


class GradeKeys(TextStatic):
    def show_keys(self, grades: dict[int, str], needs_reason: frozenset[int]) -> None:
        self.show(keys_text(grades, needs_reason))
