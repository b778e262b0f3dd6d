"""Below the smallest size the panes can use, a screen that says which size the app needs."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

MIN_WIDTH, MIN_HEIGHT = 70, 20  # the judging screen and the review screen's panes need this much


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


def size_text(width: int, height: int) -> Text:
    t = Text(f"rankgate review needs at least {MIN_WIDTH}x{MIN_HEIGHT}", style="bold", end="")
    t.append(f"\nthis terminal is {width}x{height}: make it larger (q quits)", style="")
    return t


class TooSmallScreen(Screen[None]):
    """Shown over everything while the terminal is too small; it goes away once the terminal is large enough."""

    BINDINGS = [("q", "app.quit", "Quit")]
    DEFAULT_CSS = "TooSmallScreen { align: center middle; } TooSmallScreen Static { width: auto; }"

    def compose(self) -> ComposeResult:
        yield Static(size_text(self.app.size.width, self.app.size.height), id="too-small")

    def on_resize(self, event) -> None:
        self.query_one("#too-small", Static).update(size_text(event.size.width, event.size.height))
