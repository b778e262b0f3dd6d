"""Untrusted text as rich Text for the app: never markup, never a terminal escape.

Every view builds `rich.text.Text` from file text through `literal()`, which
never parses markup and writes control characters through `core.text.visible`.
"""

from __future__ import annotations

from rich.text import Text

from rankgate.core.text import cells, fit, middle_cut, visible


def literal(value: object, style: str = "", *, one_line: bool = True) -> Text:
    """A Text showing the value exactly as written (no markup, no escapes interpreted)."""
    text = visible(value, lines="space") if one_line else visible(value, lines="keep").replace("\t", "    ")
    return Text(text, style=style, end="")


def excerpt(value: object, width: int) -> str:
    """A one-line excerpt of at most `width` cells (an ellipsis marks a cut)."""
    text = visible(value, lines="space")
    if width <= 0:
        return ""
    if (len(text) <= width and text.isascii()) or cells(text) <= width:
        return text
    return text[: fit(text, width - 1)] + "…"  # by cells: a wide character takes two


def text_cell(value: object, width: int) -> str:
    """A one-line excerpt padded to exactly `width` cells, for a column (`str.ljust` counts characters)."""
    text = excerpt(value, width)
    return text + " " * max(width - cells(text), 0)


def id_excerpt(value: object, width: int) -> str:
    """An ID or a run name in at most `width` cells, cut in the middle (core.text.middle_cut): the end, where
    IDs with a shared prefix differ, stays in view."""
    return middle_cut(visible(value, lines="space"), width)


def id_cell(value: object, width: int, *, right: bool = False) -> str:
    """An ID cut in the middle (`id_excerpt`) and padded to exactly `width` cells, for a column: a wide
    character takes two cells, so `str.ljust` would pad a CJK or emoji ID too far."""
    text = id_excerpt(value, width)
    pad = " " * max(width - cells(text), 0)
    return pad + text if right else text + pad
