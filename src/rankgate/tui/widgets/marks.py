"""The glyphs and colours every pane uses for the same facts (one legend, one place)."""

from __future__ import annotations

from rich.text import Text

# A ranked document's grade state.
STATE = {
    "found": ("✔", "bold green"),  # relevant and in the top k
    "relevant": ("✔", "yellow"),  # relevant but past k
    "not-relevant": ("✗", "red"),  # judged, below the relevance level
    "unjudged": ("?", "bold magenta"),  # nobody has judged it
}
STATE_WORDS = {
    "found": "relevant, found in the top k",
    "relevant": "relevant, ranked past k",
    "not-relevant": "judged not relevant",
    "unjudged": "unjudged",
}
HIT, MISS, NONE = ("●", "green"), ("○", "red"), ("·", "dim")
MUST = ("★", "bold yellow")


def grade_cell(state: str, grade: int | None) -> Text:
    glyph, style = STATE[state]
    return Text(f"{glyph}{'·' if grade is None else grade}", style=style, end="")


def move_cell(move: int | None, absent: str) -> Text:
    if move is None:
        return Text(absent, style="cyan" if absent == "new" else "dim", end="")
    if move > 0:
        return Text(f"▲{move}", style="green", end="")
    if move < 0:
        return Text(f"▼{-move}", style="red", end="")
    return Text("=", style="dim", end="")


def hit_cell(evaluated: bool, hit: float) -> Text:
    glyph, style = (NONE if not evaluated else HIT if hit else MISS)
    return Text(glyph, style=style, end="")


def delta_text(delta: float, fmt: str = "{:+.2f}") -> Text:
    if abs(delta) < 1e-12:
        return Text(" " * len(fmt.format(0.0)), end="")
    return Text(fmt.format(delta), style="green" if delta > 0 else "bold red", end="")
