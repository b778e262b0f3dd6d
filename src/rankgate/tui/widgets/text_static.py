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
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: Text | None = None
        self._lines = -1

    def show(self, text: Text) -> None:
        if self._shown is not None and text == self._shown:
            return
        width = self.size.width - self.styles.gutter.width
        lines = len(text.wrap(self.app.console, width)) if width > 0 else -1
        height = self.styles.height
        fixed = height is not None and height.unit == Unit.CELLS
        relayout = lines < 0 or (lines != self._lines and not fixed)
        self._shown, self._lines = text, lines
        self.update(text, layout=relayout)
