"""Text from files (query texts, IDs, reasons, document texts) is shown literally: no markup, no escapes."""

from __future__ import annotations

import pytest

import html
import re

from rich.text import Text

from rankgate.tui.commands import safe_prompt
from rankgate.core.text import visible
from rankgate.tui.safe import literal
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.query_list import QueryPane
from rankgate.tui.widgets.ranking import RankingPane
from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.factory import MARKUP_CORPUS, MARKUP_DOC, MARKUP_REASON, MARKUP_TEXT


def _styles(text: Text) -> str:
    return " ".join(str(span.style) for span in text.spans)


def _unstyled(text: Text, part: str) -> bool:
    """The part appears in the text, and no style touches it."""
    start = text.plain.index(part)
    end = start + len(part)
    return not any(s.start < end and s.end > start for s in text.spans)


def test_literal_helper():
    t = literal("[bold]x[/bold] \x1b[31mred \u202e")
    assert t.plain == "[bold]x[/bold] \\x1b[31mred \\u202e"
    assert not t.spans
    assert visible("a\nb\tc", lines="space") == "a b c"
    assert visible("a\nb", lines="keep") == "a\nb"
    assert safe_prompt(None, "[b]run[/b]").plain == "[b]run[/b]"


@pytest.mark.slow
async def test_markup_and_escapes_in_texts_are_shown_literally(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        assert screen.query_one(QueryPane).select(m.qindex["q-markup"])
        await pilot.pause()
        assert screen.qid == "q-markup"
        screen.set_doc(MARKUP_DOC)
        await pilot.pause()

        head = screen.query_one("#query-head").content
        assert visible(MARKUP_TEXT, lines="space") in head.plain
        assert "[i]notes[/i] stay literal" in head.plain
        assert "link" not in _styles(head) and "red" not in _styles(head)

        detail = screen.query_one("#label-detail").content
        assert visible(MARKUP_REASON, lines="keep") in detail.plain

        body = screen.query_one(DocView).query_one("#doc-body").content
        assert visible(MARKUP_CORPUS, lines="keep") in body.plain
        assert "[u]Title with markup[/u]" in body.plain
        assert "link" not in _styles(body) and "blink" not in _styles(body)

        ranking = screen.query_one(RankingPane).lists()["baseline"]
        row = ranking.render_row(0, 40)
        assert _unstyled(row, MARKUP_DOC)
        labels = screen.query_one(LabelEditor).list
        assert any(MARKUP_DOC in labels.render_row(i, 60).plain for i in range(labels.count))

        svg = app.export_screenshot()
        assert "\x1b" not in svg and "<a " not in svg
        shown = html.unescape("\n".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")
        for literal_text in ("[bold red]boom[/]", "[link=https://evil.example]click[/link", "\\x1b[31mred",
                             "d-[red]x[/red]", "[blink]doc text[/blink]", "[u]Title with markup[/u]"):
            assert literal_text in shown, literal_text


@pytest.mark.slow
async def test_a_bad_file_named_with_markup_is_reported_literally(tiny):
    """The reason a file was left out (its name and the offending text) is shown as written."""
    import json

    bad = tiny / "runs" / "[red]evil[b]\x1b[2J.jsonl"
    bad.write_text(json.dumps({"meta": {"name": "evil"}}) + '\n{"query": "[bold]q", "ranking": 5}\n')
    (tiny / "benchmark.toml").write_text((tiny / "benchmark.toml").read_text().replace(
        '"runs/stemmed.jsonl"]', f'"runs/stemmed.jsonl", {json.dumps("runs/" + bad.name)}]'))
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        body = app.screen.query_one("#gate-body").render()
        name = "[red]evil[b]\\x1b[2J.jsonl:2"
        assert name in body.plain  # as written, the escape shown, not sent
        at = body.plain.index(name)
        touching = [sp for sp in body.spans if sp.start < at + len(name) and sp.end > at]
        assert touching and not any("bold" in str(sp.style) for sp in touching)  # its [b] made nothing bold
