"""`r` (reason) on a document nobody has judged yet asks for its grade first, as `!` does, then takes the
reason (newcomer s8: it refused with a notice and the reason typed next ran as commands, `e` opening the
export dialog with the sentence in its path). At 80 columns the reason field is wide enough to read what
is typed."""

from __future__ import annotations

import pytest

from rankgate.tui.screens.prompts import GradePicker
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.widgets.reason_bar import ReasonBar
from tests.tui.conftest import make_app, ready

NARROW = (80, 24)


@pytest.mark.slow
async def test_r_on_an_unjudged_document_asks_the_grade_then_the_reason(tiny):
    app = make_app(tiny, memory=True)
    async with app.run_test(size=NARROW) as pilot:
        await ready(pilot)
        screen, book = app.screen, app.screen.model.labels
        qid, doc = screen.qid, screen.doc
        assert doc not in book.labels(qid)  # the tiny lab opens on an unjudged document
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, GradePicker)
        await pilot.press(*"the runbook", "escape")  # letters do not run as commands; Escape: nothing changes
        await pilot.pause()
        assert app.screen is screen and doc not in book.labels(qid)
        assert not screen.query_one(ReasonBar).is_open
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("2")  # the grade, then the reason
        await pilot.pause()
        bar = screen.query_one(ReasonBar)
        assert app.screen is screen and bar.is_open and book.labels(qid)[doc].grade == 2
        await pilot.press(*"names the rotation step", "enter")
        await pilot.pause()
        assert book.labels(qid)[doc].reason == "names the rotation step"
        assert not bar.is_open and all(isinstance(s, (ReviewScreen,)) or s is app.screen_stack[0]
                                       for s in app.screen_stack)


@pytest.mark.slow
async def test_the_reason_field_is_usable_at_80_columns(tiny):
    app = make_app(tiny, memory=True)
    async with app.run_test(size=NARROW) as pilot:
        await ready(pilot)
        bar = app.screen.query_one(ReasonBar)
        qid, doc = "q-leaked-key-rotation", "ir-severity-02-runbook"  # IDs as long as a real benchmark's
        bar.ask(qid, doc, 1, "")
        await pilot.pause()
        field = bar.query_one("#reason-input")
        assert field.content_region.width >= 36, field.content_region  # was 16 at 80 columns
        label = " ".join(str(bar.query_one("#reason-label").render()).split())
        assert f"{qid} · {doc}" in label  # which pair, still said in full


async def test_r_a_grade_and_the_reason_in_one_burst(tiny):
    """As tmux send-keys "r2the runbook names it" Enter: the grade goes to the picker, the rest to the reason
    (a digit right after r graded before the fix too; this keeps the burst path working through the picker)."""
    from tests.tui.test_burst import burst

    app = make_app(tiny)
    async with app.run_test(size=NARROW) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await burst(pilot, "r", "2", *"the runbook names it", "enter")
        lab = screen.model.labels.labels(qid)[doc]
        assert (lab.grade, lab.reason) == (2, "the runbook names it")
        assert app.screen is screen and not screen.query_one(ReasonBar).is_open
        assert (screen.qid, screen.doc) == (qid, doc)  # no letter acted as a key
