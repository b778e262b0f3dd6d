"""A Static that shows a `rich.text.Text` and asks for a new layout only when its height changes.

`Static.update()` re-lays-out the whole screen by default, which repaints every
pane; after a label edit most texts keep their height, so a repaint of the
widget alone is enough. Identical texts are not sent at all.
"""

from __future__ import annotations

from rich.cells import cell_len
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
        height = self.styles.height
        fixed = height is not None and height.unit == Unit.CELLS
        if fixed and not self.keep_height:  # a fixed height (a bar, a detail box): no lines to count
            self._shown = text
            self.update(text, layout=False)
            return
        shown = text
        width = self.size.width - self.styles.gutter.width
        lines = line_count(text, width, self.app.console) if width > 0 else -1
        if self.keep_height and width == self._width and 0 <= lines < self._lines:
            text = text + Text("\n" * (self._lines - lines), end="")
            lines = self._lines
        relayout = lines < 0 or (lines != self._lines and not fixed)
        self._shown, self._lines, self._width = shown, lines, width
        self.update(text, layout=relayout)


def line_count(text: Text, width: int, console) -> int:
    """How many lines `text` takes at `width`, as `Text.wrap` counts them. Each line that fits counts one
    (cheap); a longer one is wrapped alone, once per line and width (`_wrapped`). Wrapping the whole text
    on every edit, for each pane, was a tenth of a key's time."""
    n = 0
    for line in text.plain.split("\n"):
        if text.no_wrap or (len(line) <= width and cell_len(line) <= width and "\t" not in line):
            n += 1
        else:
            n += _wrapped(line, width, console)
    return n


_WRAPPED: dict[tuple[str, int], int] = {}


def _wrapped(line: str, width: int, console) -> int:
    got = _WRAPPED.get((line, width))
    if got is None:
        if len(_WRAPPED) > 512:
            _WRAPPED.clear()
        got = _WRAPPED[(line, width)] = len(Text(line, end="").wrap(console, width))
    return got
