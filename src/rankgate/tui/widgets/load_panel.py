"""What shows while the benchmark is read and scored: a progress bar and the current step.

It covers the review screen, whose panes are composed meanwhile (so that their
mounting overlaps the load), and goes away when the panes are bound to the model.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import ProgressBar, Static

from rankgate.tui.safe import literal


class LoadPanel(Vertical):
    def __init__(self, what: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.what = what

    def compose(self) -> ComposeResult:
        yield Static(literal(f"rankgate review · {self.what}", style="bold"), id="loading-title")
        yield ProgressBar(total=100, show_eta=False, id="loading-bar")
        yield Static(Text("starting…", style="dim"), id="loading-step")

    def progress(self, what: str, done: int, total: int) -> None:
        self.query_one(ProgressBar).display = True
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)
        self.query_one("#loading-step", Static).update(literal(what, style="dim"))

    def failed(self, error: str) -> None:
        """The benchmark could not be opened: the reason, in place, and the ways on."""
        self.query_one(ProgressBar).display = False
        text = Text(end="")
        text.append("could not open the benchmark\n", style="bold red")
        text.append_text(literal(error, style="red", one_line=False))
        text.append("\n\nonce it is fixed, press ctrl+r to open it again, or q to quit", style="dim")
        self.query_one("#loading-step", Static).update(text)
