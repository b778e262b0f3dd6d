"""The one escaping function: what it writes out and what it leaves alone."""

from __future__ import annotations

import pytest

from rankgate.core.text import visible, visible_json


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred", "\\x1b[31mred"),                 # a terminal sequence starts with ESC
    ("\x9b31m", "\\x9b31m"),                          # the 8-bit CSI
    ("abc\u202eevil", "abc\\u202eevil"),              # bidi override
    ("a\u200bb\ufeff", "a\\u200bb\\ufeff"),           # zero-width space, BOM
    ("tag\U000e0041\U000e007f", "tag\\U000e0041\\U000e007f"),  # invisible tag characters
    ("line\u2028sep", "line\\u2028sep"),
    ("a\tb\nc\rd", "a\\x09b\\x0ac\\x0dd"),
    ("\x7f", "\\x7f"),
    ("soft\u00adhyphen\u3164\U000e0101", "soft\\xadhyphen\\u3164\\U000e0101"),  # invisible letters
])
def test_escapes_what_a_terminal_would_interpret_or_hide(raw, shown):
    assert visible(raw) == shown


@pytest.mark.parametrize("text", ["doc-1", "naïve café", "日本語 テキスト", "emoji 🙂 ❤\ufe0f", "[bold]x[/bold]", "a\\x1b"])
def test_leaves_ordinary_text_alone(text):
    assert visible(text) == text


def test_lines_space_keep():
    assert visible("a\nb\tc\r\nd", lines="space") == "a b c d"
    assert visible("a\r\nb\tc\x1b", lines="keep") == "a\nb\tc\\x1b"
    assert visible(12) == "12"
    with pytest.raises(ValueError):
        visible("x", lines="wrap")


def test_json_stays_the_same_json():
    import json

    value = {"id": "doc\x1b[2J\x9b\u202e\U000e0041", "reason": "naïve\nline", "n": [1, 2]}
    text = visible_json(json.dumps(value, ensure_ascii=False, indent=2))
    assert json.loads(text) == value
    assert not any(c in text for c in "\x1b\x9b\u202e\U000e0041")
    assert "naïve" in text


def test_a_lazy_pattern_is_the_compiled_pattern_once_used():
    import re

    from rankgate.core.text import LazyPattern

    lazy, compiled = LazyPattern(r"(a+)(b)?", re.I), re.compile(r"(a+)(b)?", re.I)
    assert "match" not in vars(lazy)  # nothing compiled yet
    assert lazy.sub("x", "AAb c aa") == compiled.sub("x", "AAb c aa") == "x c x"
    assert vars(lazy)["match"].__self__ is re.compile(r"(a+)(b)?", re.I)  # the pattern's own methods from now on
    for method in ("match", "fullmatch", "search"):
        assert getattr(lazy, method)("aab").span() == getattr(compiled, method)("aab").span() == (0, 3)
    assert (lazy.split("caab"), lazy.findall("caab")) == (compiled.split("caab"), compiled.findall("caab"))
    assert [m.span() for m in lazy.finditer("a ab")] == [(0, 1), (2, 4)]
    assert (lazy.pattern, lazy.flags, lazy.groups) == (compiled.pattern, compiled.flags, compiled.groups)
    try:
        lazy.nonsense
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute is an AttributeError")
