"""A Static that shows a `rich.text.Text` and asks for a new layout only when its height changes.

`Static.update()` re-lays-out the whole screen by default, which repaints every
pane; after a label edit most texts keep their height, so a repaint of the
widget alone is enough. Identical texts are not sent at all.
"""

from __future__ import annotations

from rich.text import Text
from textual.css.scalar import Unit
from textual.widgets import Static


class TextStatic(Static):
    def __init__(self, *args, keep_height: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: Text | None = None
        self._lines = -1
        self._width = -1
        # keep_height: a shorter text is padded with empty lines to the height already shown, so that it
        # asks for no new layout (for a pane redrawn on every edit whose text grows and shrinks by a line)
        self.keep_height = keep_height

    def show(self, text: Text) -> None:
        if self._shown is not None and text == self._shown:
            return
        shown = text
        width = self.size.width - self.styles.gutter.width
        lines = len(text.wrap(self.app.console, width)) if width > 0 else -1
        if self.keep_height and width == self._width and 0 <= lines < self._lines:
            text = text + Text("\n" * (self._lines - lines), end="")
            lines = self._lines
        height = self.styles.height
        fixed = height is not None and height.unit == Unit.CELLS
        relayout = lines < 0 or (lines != self._lines and not fixed)
        self._shown, self._lines, self._width = shown, lines, width
        self.update(text, layout=relayout)
