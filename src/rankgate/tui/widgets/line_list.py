"""A keyboard list that draws only the rows on screen (for 10k queries and long rankings).

Stock DataTable measures every cell of every row when filled (about 0.8 s for
10k rows); this list asks its subclass for the visible rows only, each a
`rich.text.Text` built from data through `tui.safe`, never from markup.

After an edit only what changed is drawn again: a subclass names each row's
content with `row_key()`, drawn rows are kept by that key, and `refresh_rows()`
repaints single rows. The virtual height never drops below the view's, so a
short list that grows or shrinks does not ask the screen for a new layout.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineList(ScrollView, can_focus=True):
    """Rows `0..count-1`, a cursor, and `render_row(index, width)` supplied by a subclass."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]
    COMPONENT_CLASSES = {"line-list--cursor", "line-list--header"}
    DEFAULT_CSS = """
    LineList {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
    }
    LineList > .line-list--cursor { background: $surface-lighten-1; }
    LineList:focus > .line-list--cursor { background: $accent 40%; text-style: bold; }
    LineList > .line-list--header { color: $text-muted; text-style: bold; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, init=False)
    CURSOR_WHEN_BLURRED = True  # False: the cursor row is drawn only while the list has focus

    class Highlighted(Message):
        """The cursor moved to a row."""

        def __init__(self, line_list: "LineList", index: int) -> None:
            super().__init__()
            self.line_list = line_list
            self.index = index

        @property
        def control(self) -> "LineList":
            return self.line_list

    class Chosen(Message):
        """Enter (or a second click) on a row."""

        def __init__(self, line_list: "LineList", index: int) -> None:
            super().__init__()
            self.line_list = line_list
            self.index = index

        @property
        def control(self) -> "LineList":
            return self.line_list

    def __init__(self, *, header: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.count = 0
        self.header = header  # the first visible line is a fixed header (render_header)
        self._styles: dict[str, Style] = {}  # looked up once per style change, not once per line
        self._strips: dict = {}  # (row key, cursor drawn, width) -> Strip

    def _style(self, name: str) -> Style:
        got = self._styles.get(name)
        if got is None:
            got = self._styles[name] = self.rich_style if name == "" else self.get_component_rich_style(name)
        return got

    def notify_style_update(self) -> None:
        self._styles.clear()
        self._strips.clear()
        super().notify_style_update()

    # ---- for subclasses ------------------------------------------------------------------------------

    def render_row(self, index: int, width: int) -> Text:
        raise NotImplementedError

    def row_key(self, index: int):
        """A hashable naming everything row `index` shows (None: draw it every time)."""
        return None

    def render_header(self, width: int) -> Text:
        return Text("")

    def empty_text(self) -> Text:
        return Text("")

    # ---- data ------------------------------------------------------------------------------------------

    def set_count(self, count: int, cursor: int | None = None, *, notify: bool = True) -> None:
        """New rows: redraw; keep the cursor (clamped) unless a new one is given."""
        self.count = count
        self._set_virtual_size()
        target = self.cursor if cursor is None else cursor
        target = max(0, min(target, count - 1)) if count else 0
        self.set_reactive(LineList.cursor, target)
        self.refresh()
        self._scroll_to_cursor()
        if notify and count:
            self.post_message(self.Highlighted(self, target))

    def update_rows(self, count: int, first: int, cursor: int) -> None:
        """Rows from `first` on changed (some were added or removed there, or edited): draw only those
        again, keep the view unless the cursor leaves it. What `set_count` does, without repainting the
        whole list and without a Highlighted message (an edit, not a move)."""
        old = self.count
        self.count = count
        self._set_virtual_size()
        cursor = max(0, min(cursor, count - 1)) if count else 0
        moved = cursor != self.cursor
        if moved:
            self.refresh_rows(self.cursor)
            self.set_reactive(LineList.cursor, cursor)
        self.refresh_rows(*range(first, max(old, count)), *((cursor,) if moved else ()))
        self._scroll_to_cursor()

    def _set_virtual_size(self) -> None:
        rows = self.count + (1 if self.header else 0)
        size = Size(self.size.width, max(rows, self.scrollable_content_region.height))
        if size != self.virtual_size:
            self.virtual_size = size

    def refresh_rows(self, *indices: int) -> None:
        """Repaint some rows only (their content changed, their number did not)."""
        top = int(self.scroll_offset.y)
        height = self.scrollable_content_region.height - (1 if self.header else 0)
        for i in indices:
            if top <= i < top + height:
                self.refresh_line(i + (1 if self.header else 0))

    # ---- drawing ------------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self._style("")
        if self.header:
            if y == 0:
                text = self.render_header(width)
                text.stylize(self._style("line-list--header"))
                return self._strip(text, width, base)
            y -= 1
        index = self.scroll_offset.y + y
        if index >= self.count:
            if self.count == 0 and y == 0:
                return self._strip(self.empty_text(), width, base)
            return Strip.blank(width, base)
        on_cursor = index == self.cursor and (self.CURSOR_WHEN_BLURRED or self.has_focus)
        key = self.row_key(index)
        if key is not None:
            key = (key, on_cursor and (1 + self.has_focus), width)
            cached = self._strips.get(key)
            if cached is not None:
                return cached
        text = self.render_row(index, width)
        if on_cursor:
            cursor = self._style("line-list--cursor")
            text.stylize_before(cursor)
            style = base + cursor
        else:
            style = base
        strip = self._strip(text, width, style)
        if key is not None:
            if len(self._strips) > 256:  # a few screens' worth: each Strip holds caches a full collection scans
                self._strips.clear()
            self._strips[key] = strip
        return strip

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        text.no_wrap = True
        text.overflow = "ellipsis"
        text.end = ""
        text.truncate(width, overflow="ellipsis", pad=False)
        segments = list(text.render(self.app.console))
        return Strip(segments).adjust_cell_length(width, style).apply_style(style) if segments else \
            Strip([Segment(" " * width, style)], width)

    def _scroll_to_cursor(self) -> None:
        if not self.count:
            return
        height = self.scrollable_content_region.height - (1 if self.header else 0)
        if height <= 0:
            return
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_offset.y)
        self._scroll_to_cursor()
        if int(self.scroll_offset.y) == top:
            self.refresh_rows(old, new)
        else:
            self.refresh()
        if self.count:
            self.post_message(self.Highlighted(self, new))

    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, self.count - 1)) if self.count else 0

    def on_focus(self) -> None:
        self._styles.clear()
        self.refresh_rows(self.cursor)

    def on_blur(self) -> None:
        self._styles.clear()
        self.refresh_rows(self.cursor)

    def on_resize(self, event: events.Resize) -> None:
        self._set_virtual_size()
        self._scroll_to_cursor()

    # ---- keys and mouse ------------------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        if self.count:
            self.cursor = self.cursor + step

    def action_page(self, step: int) -> None:
        height = max(1, self.scrollable_content_region.height - (1 if self.header else 0) - 1)
        if self.count:
            self.cursor = self.cursor + step * height

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = where if where >= 0 else self.count - 1

    def action_select(self) -> None:
        if self.count:
            self.post_message(self.Chosen(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        y = event.y - (1 if self.header else 0)
        if y < 0:
            return
        index = int(self.scroll_offset.y) + y
        if 0 <= index < self.count:
            if index == self.cursor and event.chain >= 2:
                self.post_message(self.Chosen(self, index))
            self.cursor = index
