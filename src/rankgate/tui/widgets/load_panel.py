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
        self._step_lines = 0  # the step line's height as last laid out (0: not yet)

    STEP_WIDTH = 56  # cells the step line keeps (at least), so that a new step needs no layout (progress)

    def compose(self) -> ComposeResult:
        title = literal(f"rankgate review · {self.what}", style="bold")
        yield Static(title, id="loading-title")
        yield ProgressBar(total=100, show_eta=False, id="loading-bar")
        step = Static(Text("starting…", style="dim"), id="loading-step")
        step.styles.width = max(title.cell_len, self.STEP_WIDTH)
        yield step

    def progress(self, what: str, done: int, total: int) -> None:
        bar = self.query_one(ProgressBar)
        if not bar.display:
            bar.display = True
        bar.update(total=max(total, 1), progress=done)
        step = literal(what, style="dim")
        step.no_wrap, step.overflow = True, "ellipsis"
        # one line of a fixed width: repainted without a layout of the whole screen (a dozen steps a load,
        # each a layout of every pane mounted meanwhile, on the main thread the loading worker shares)
        self.query_one("#loading-step", Static).update(step, layout=self._step_lines != 1)
        self._step_lines = 1

    def failed(self, error: str) -> None:
        """The benchmark could not be opened: the reason, in place, and the ways on."""
        self.query_one(ProgressBar).display = False
        text = Text(end="")
        text.append("could not open the benchmark\n", style="bold red")
        text.append_text(literal(error, style="red", one_line=False))
        text.append("\n\nonce it is fixed, press ctrl+r to open it again, or q to quit", style="dim")
        self.query_one("#loading-step", Static).update(text)
        self._step_lines = 0  # several lines: laid out again
