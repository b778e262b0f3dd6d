"""A plain TOML file read without tomllib: what `tomllib.loads` gives, or None when the file is not plain.

tomllib compiles three large regular expressions and loads `string` when it is imported: about 12 million
instructions, 2% of `rankgate gate` on a small benchmark, for a benchmark.toml of ten lines. Most
benchmark.toml and policy files are plain: ASCII, comments, `[table]` and `[[array of tables]]` headers,
`key = value` with a bare or a "quoted" key, and values that are "strings" without escapes, decimal integers
and fractions, true, false, or arrays of those (on one line or several). For such a file `plain_toml` gives
the dict tomllib gives (the same keys in the same order, the same values); for anything else (an escape, a
'literal' or multi-line string, an exponent, a date, an inline table, a nested array, a dotted key, a key or
table given twice, any mistake) it gives None and the caller reads the text with tomllib, which says what is
wrong as before. tests/unit/test_tomlplain.py compares it with tomllib on every TOML file of the repository
and on thousands of altered ones.
"""

from __future__ import annotations

_CONTROL = frozenset(chr(c) for c in [*range(32), 127]) - {"\t", "\n"}  # (TOML refuses them outside strings too)
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")  # (a dotted key: tomllib)


class _NotPlain(Exception):
    pass


def plain_toml(text: str) -> dict | None:
    """tomllib.loads(text) for a plain file; None when the file is not plain (then tomllib reads it)."""
    if not text.isascii() or not _CONTROL.isdisjoint(text):
        return None
    try:
        return _document(_tokens(text))
    except _NotPlain:
        return None


def _tokens(text: str) -> list[tuple[str, str | None]]:
    """("nl", None), ("[", None), ("]", None), ("[[", None), ("]]", None), ("=", None), (",", None), ("str", text),
    ("bare", word)."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == " " or c == "\t":
            i += 1
        elif c == "\n":
            out.append(("nl", None))
            i += 1
        elif c == "#":  # a comment, to the end of its line
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == '"':
            if text.startswith('"""', i):
                raise _NotPlain
            j = text.find('"', i + 1)
            end = text.find("\n", i + 1)
            if j < 0 or 0 <= end < j or "\\" in text[i + 1:j]:  # (an escape: tomllib)
                raise _NotPlain
            out.append(("str", text[i + 1:j]))
            i = j + 1
        elif c in "[]" and text.startswith(c + c, i):  # [[array of tables]] (nested arrays: tomllib)
            out.append((c + c, None))
            i += 2
        elif c in "[]=,":
            out.append((c, None))
            i += 1
        elif c in _BARE:
            j = i + 1
            while j < n and text[j] in _BARE:
                j += 1
            out.append(("bare", text[i:j]))
            i = j
        else:  # { } . + ... : tomllib
            raise _NotPlain
    return out


def _document(tokens: list[tuple[str, str | None]]) -> dict:
    root: dict = {}
    table = root
    listed: set[str] = set()  # the [[names]]
    i, n = 0, len(tokens)

    def end_of_line(at: int) -> int:
        if at < n and tokens[at][0] != "nl":
            raise _NotPlain
        return at + 1

    while i < n:
        kind, word = tokens[i]
        if kind == "nl":
            i += 1
        elif kind in ("[", "[["):  # [table] or [[array of tables]]
            close = "]" if kind == "[" else "]]"
            if i + 2 >= n or tokens[i + 1][0] != "bare" or tokens[i + 2][0] != close or "." in tokens[i + 1][1]:
                raise _NotPlain
            name = tokens[i + 1][1]
            if kind == "[":
                if name in root:
                    raise _NotPlain
                table = root[name] = {}
            else:
                if name in root and name not in listed:
                    raise _NotPlain
                listed.add(name)
                table = {}
                root.setdefault(name, []).append(table)
            i = end_of_line(i + 3)
        elif kind in ("bare", "str"):  # key = value
            if i + 2 >= n or tokens[i + 1][0] != "=" or word in table or kind == "bare" and "." in word:
                raise _NotPlain
            value, i = _value(tokens, i + 2)
            table[word] = value
            i = end_of_line(i)
        else:
            raise _NotPlain
    return root


def _value(tokens: list[tuple[str, str | None]], i: int):
    """The value at tokens[i] and the position after it."""
    kind, word = tokens[i]
    if kind == "str":
        return word, i + 1
    if kind == "bare":
        return _scalar(word), i + 1
    if kind != "[":
        raise _NotPlain
    items: list = []
    i += 1
    n = len(tokens)
    while True:  # [ (value ,)* value? ] with newlines anywhere between
        while i < n and tokens[i][0] == "nl":
            i += 1
        if i >= n:
            raise _NotPlain
        if tokens[i][0] == "]":
            return items, i + 1
        kind, word = tokens[i]
        if kind == "str":
            items.append(word)
        elif kind == "bare":
            items.append(_scalar(word))
        else:  # a nested array, an inline table, a stray comma: tomllib
            raise _NotPlain
        i += 1
        while i < n and tokens[i][0] == "nl":
            i += 1
        if i >= n:
            raise _NotPlain
        if tokens[i][0] == ",":
            i += 1
        elif tokens[i][0] != "]":
            raise _NotPlain


def _scalar(word: str):
    """A bare value: true, false, a decimal integer or a decimal fraction (`0.75`, `-2.5`), without underscores,
    leading zeros, a plus sign or an exponent."""
    if word == "true":
        return True
    if word == "false":
        return False
    number = word[1:] if word.startswith("-") else word
    whole, dot, fraction = number.partition(".")
    if not whole.isdigit() or len(whole) > 18 or (whole != "0" and whole[0] == "0"):
        raise _NotPlain
    if not dot:
        return int(word)
    if not fraction.isdigit():
        raise _NotPlain
    return float(word)  # (tomllib: float() of the same text)
