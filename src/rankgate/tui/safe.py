"""Untrusted text made safe to show: never markup, never a terminal escape.

Document texts, query texts, IDs and reasons come from files. They may hold
Rich markup (`[bold]`, `[link=...]`) or control characters (an ESC starting a
terminal sequence, a bidi override). Every view builds `rich.text.Text` from
them through `literal()`, which never parses markup and shows each control
character as a visible escape (`\\x1b`).
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 and C1 controls (but not tab/newline, handled apart), DEL, and the bidi
# overrides and isolates that can make text read differently from what it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def clean(value: object, *, one_line: bool = True) -> str:
    """The text with every control character written out; newlines and tabs become spaces on one line."""
    text = _CONTROL.sub(_escape, str(value))
    if one_line:
        text = text.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    else:
        text = text.replace("\r\n", "\n").replace("\t", "    ")
    return text


def literal(value: object, style: str = "", *, one_line: bool = True) -> Text:
    """A Text showing the value exactly as written (no markup, no escapes interpreted)."""
    return Text(clean(value, one_line=one_line), style=style, end="")


def excerpt(value: object, width: int) -> str:
    """A one-line excerpt of at most `width` cells (an ellipsis marks a cut)."""
    text = clean(value)
    if width <= 0:
        return ""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 0)] + "…"
