"""The judging screen's keys: each grade of the scale with its name, then undo, reason, whole ID, back."""

from __future__ import annotations

from rich.text import Text

from rankgate.tui.commands import grade_key
from rankgate.tui.safe import excerpt
from rankgate.tui.widgets.text_static import TextStatic

MORE = (("u", "undo"), ("r", "reason"), ("i", "whole IDs"), ("s", "skip"), ("esc", "panes"), ("?", "help"),
        ("q", "quit"))


def key_item(key: str, what: str, style: str = "") -> Text:
    t = Text(f" {key} ", style="bold reverse", end="")
    t.append(f" {what}", style=style)
    return t


def keys_text(grades: dict[int, str], needs_reason: frozenset[int] = frozenset(), width: int = 78) -> Text:
    """`0 not relevant  1 partly relevant  2 relevant  3 the answer` (a * after a grade that needs a reason),
    then the other keys; lines broken between items (a key never apart from its name)."""
    items = [key_item(grade_key(g), f"{excerpt(grades[g], 18)}{'*' if g in needs_reason else ''}")
             for g in sorted(grades) if grade_key(g) is not None]
    items += [key_item(key, what, "dim") for key, what in MORE]
    if needs_reason:
        items.append(Text("* asks a reason", style="dim italic", end=""))
    out, used = Text(end=""), 0
    for item in items:
        n = len(item.plain)
        if used and used + 2 + n > width:
            out.append("\n")
            used = 0
        elif used:
            out.append("  ")
            used += 2
        out.append_text(item)
        used += n
    return out


class GradeKeys(TextStatic):
    def show_keys(self, grades: dict[int, str], needs_reason: frozenset[int]) -> None:
        self.grades, self.needs_reason = grades, needs_reason
        width = self.size.width or self.app.size.width - self.styles.gutter.width  # (size: inside the padding)
        self.show(keys_text(grades, needs_reason, max(width, 20)))

    def on_resize(self) -> None:
        if hasattr(self, "grades"):
            self.show_keys(self.grades, self.needs_reason)
