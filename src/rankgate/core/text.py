"""The one function that makes untrusted text safe to show.

IDs, reasons, run names, file names, query and document texts come from files
people did not write for a terminal. They may hold an ESC that starts a terminal
sequence, a bidi override that makes text read differently from what it is, or
invisible characters. `visible()` writes each of those as an escape (`\\x1b`,
`\\u202e`, `\\U000e0041`) and leaves everything else as it is. Every face uses it:
CLI tables and listings, error lines, Markdown and JUnit files, and the app.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# C0 and C1 controls, DEL; zero-width, bidi and line/paragraph separators; BOM;
# surrogates and non-characters; the invisible Unicode tag characters.
# Invisible or blank-looking letters and marks: soft hyphen, combining grapheme joiner, Hangul fillers,
# Khmer vowel inherents, Mongolian selectors, supplementary variation selectors. (U+FE00-FE0F stay: emoji
# and ideographs use them in ordinary text.)
_INVISIBLE = "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\uffa0\U000e0100-\U000e01ef"
_FORMAT = ("\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
           "\ud800-\udfff\ufffe\uffff\U000e0000-\U000e007f")
_CONTROLS = "\x00-\x1f\x7f"
_CONTROLS_KEEP_LINES = "\x00-\x08\x0b-\x1f\x7f"
_ASCII_UNSAFE = {False: re.compile(f"[{_CONTROLS}]"), True: re.compile(f"[{_CONTROLS_KEEP_LINES}]")}


@functools.cache
def _unicode_unsafe(keep_lines: bool) -> re.Pattern:
    return re.compile(f"[{_CONTROLS_KEEP_LINES if keep_lines else _CONTROLS}\x80-\x9f{_FORMAT}{_INVISIBLE}]")


def _unsafe(text: str, keep_lines: bool = False) -> re.Pattern:
    """The characters to escape in `text`. ASCII text (the usual case) needs only the controls: the whole
    pattern's Unicode ranges take milliseconds to compile, so it is compiled on the first text that needs it."""
    return _ASCII_UNSAFE[keep_lines] if text.isascii() else _unicode_unsafe(keep_lines)


def _escape(m: re.Match) -> str:
    c = ord(m.group(0))
    if c < 0x100:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def visible(value: object, *, lines: str = "escape") -> str:
    """The text with every control or invisible character written as an escape.

    lines: "escape" writes tabs and newlines as escapes too (one line, for
    listings and error lines); "space" makes each newline or tab one space (one
    line, for a pane); "keep" keeps them ("\\r\\n" becomes "\\n"), for text whose
    lines and tabs are its own (tables, trec_eval's lines, a document).
    """
    text = str(value)
    if lines == "escape":
        return _unsafe(text).sub(_escape, text)
    text = text.replace("\r\n", "\n")
    if lines == "space":
        return _unsafe(text, keep_lines=True).sub(_escape, text).replace("\n", " ").replace("\t", " ")
    if lines == "keep":
        return _unsafe(text, keep_lines=True).sub(_escape, text)
    raise ValueError(f"lines must be escape, space or keep, not {lines!r}")


class LazyPattern:
    """`re.compile(pattern, flags)`, compiled when first used: a module's patterns cost a command's start-up
    nothing until one is needed (each compile takes 0.1-0.5 ms). After the first use its methods (match,
    search, sub ...) are the compiled pattern's own, held by this object: no cost per call after that."""

    _METHODS = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer", "scanner",
                "pattern", "flags", "groups", "groupindex")

    def __init__(self, pattern, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, name: str):  # only for what the object does not hold yet: the first use
        if name.startswith("__") or name == "_source":
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for method in self._METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


_WORKFLOW_COMMAND = LazyPattern(r"^([ \t]*)(::|##\[)", re.M)


def no_workflow_commands(text: str) -> str:
    """The text with no line that a CI runner reads as a command (GitHub's `::error::`, `##[error]`): such a
    line's first character is written as an escape. rankgate's own annotations (rankgate/ci.py) never pass
    here, so an annotation can come only from them, never from a name or an ID in a file."""
    if "::" not in text and "##[" not in text:
        return text
    return _WORKFLOW_COMMAND.sub(lambda m: m.group(1) + ("\\x3a:" if m.group(2) == "::" else "\\x23#["), text)


def _json_escape(m: re.Match) -> str:
    c = ord(m.group(0))
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def visible_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with the same characters as \\u escapes: still the same JSON."""
    return _unsafe(text, keep_lines=True).sub(_json_escape, text)


def cut_list(items: list[str], width: int, sep: str = ", ") -> tuple[list[str], int]:
    """The leading items that fit in `width` cells joined by `sep`, and how many are left out.

    When some are left out, room is kept for the tail that says so (`more_tail`); at least one item is kept.
    The items are shown as given: pass them through `visible()` first.
    """
    items = list(items)
    if sum(len(x) for x in items) + len(sep) * max(len(items) - 1, 0) <= width:
        return items, 0
    shown: list[str] = []
    used = 0
    for x in items:
        add = len(x) + (len(sep) if shown else 0)
        if shown and used + add + len(more_tail(len(items) - len(shown) - 1)) > width:
            break
        shown.append(x)
        used += add
    return shown, len(items) - len(shown)


def more_tail(n: int) -> str:
    """What a cut list ends with: " ... and N more" ("" when nothing was cut)."""
    return f" ... and {n} more" if n > 0 else ""


def cells(text: str) -> int:
    """How many terminal cells `text` takes: a wide (CJK, most emoji) character two, a combining mark none."""
    return sum(_cell(c) for c in text)


def _cell(c: str) -> int:
    if c.isascii():
        return 1
    if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(c) in "WF" else 1


def fit(chars, width: int) -> int:
    """How many of `chars` fit in `width` cells (a combining mark stays with its letter)."""
    used = n = 0
    for c in chars:
        used += _cell(c)
        if used > width:
            break
        n += 1
    return n


def middle_cut(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut in the middle (`msmarco_pa…00_1234567`) when it is longer.

    IDs and run names that share a long prefix differ at their end: cut at the end, several would read
    the same. The head keeps the larger half. Cells, not characters: a wide character takes two, a
    combining mark none (and is never cut from its letter). Pass the text through `visible()` first."""
    if width <= 0:
        return ""
    if (len(text) <= width and text.isascii()) or cells(text) <= width:
        return text
    if width == 1:
        return "…"
    tail_w = (width - 1) // 2
    n = fit(reversed(text), tail_w)
    tail = text[len(text) - n:] if n else ""
    while tail and _cell(tail[0]) == 0:  # a mark whose letter did not fit
        tail = tail[1:]
    head = text[: fit(text, width - 1 - cells(tail))]
    return head + "…" + tail
