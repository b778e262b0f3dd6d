"""Editing another reviewer's label in the app (issue 33, item 6), on raw files whose labels are the qrels
file's: "correct theirs" replaces the file's judgment (history keeps it; no disagreement), "add mine beside
theirs" keeps both (a disagreement); either can hold for the session; a reason typed in one burst with the
grade, before the question was on screen, reaches the reason; undo puts theirs back."""

from __future__ import annotations

import pytest

from rankgate.tui.screens.prompts import Choice
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.widgets.reason_bar import ReasonBar
from tests.tui.conftest import SIZE, ready
from tests.tui.test_burst import burst
from tests.tui.test_expert import choose
from tests.tui.test_raw_files import app_for, raw_files


def whose(ws, qid, doc) -> dict:
    return {j.reviewer: j.grade for j in ws.reviews(qid, doc)}


@pytest.mark.slow
async def test_correct_theirs_replaces_the_files_label_and_undo_puts_it_back(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        ws = screen.model.labels.backend.ws
        screen.go_to("101", "p1")  # the file's 3
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, Choice) and "file qrels.txt" in modal.title_text.plain
        labels = dict(modal.options)
        assert "Correct theirs" in labels["correct"] and "no disagreement" in labels["correct"]
        assert "the file's labels" in labels["correct-session"] and "this session" in labels["correct-session"]
        assert "beside theirs" in labels["mine"] and "disagreement" in labels["mine"]
        await choose(pilot, "correct")
        assert screen.query_one(ReasonBar).is_open
        await pilot.press(*"a side note only", "enter")
        await pilot.pause()
        assert whose(ws, "101", "p1") == {"tester": 1}
        assert ws.judgment("101", "p1").reason == "a side note only"
        assert ws.disagreements() == []
        assert any(e.why.startswith("corrected by tester") for e in ws.history("101", "p1"))  # theirs, in history
        await pilot.press("ctrl+z")  # undo: theirs back, mine gone
        await pilot.pause()
        assert whose(ws, "101", "p1") == {"file:qrels.txt": 3}
        await pilot.press("ctrl+y")  # redo: corrected again
        await pilot.pause()
        assert whose(ws, "101", "p1") == {"tester": 1}


@pytest.mark.slow
async def test_add_mine_beside_theirs_is_a_disagreement(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        ws = screen.model.labels.backend.ws
        screen.go_to("101", "p1")
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        await choose(pilot, "mine")
        await pilot.press("escape")
        await pilot.pause()
        assert whose(ws, "101", "p1") == {"file:qrels.txt": 3, "tester": 1}
        assert [x.doc for x in ws.disagreements()] == ["p1"]


@pytest.mark.slow
async def test_the_sessions_answer_is_not_asked_again(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        ws = screen.model.labels.backend.ws
        screen.go_to("101", "p2")
        await pilot.pause()
        await pilot.press("2")
        await pilot.pause()
        await choose(pilot, "correct-session")
        await pilot.press("escape")
        await pilot.pause()
        screen.go_to("102", "p3")  # another of the file's labels: no question
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert whose(ws, "101", "p2") == {"tester": 2} and whose(ws, "102", "p3") == {"tester": 3}
        assert ws.disagreements() == []


@pytest.mark.slow
async def test_a_reason_typed_ahead_of_the_question_reaches_the_reason(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        ws = screen.model.labels.backend.ws
        screen.go_to("102", "p4")  # the file's 1
        await pilot.pause()
        await burst(pilot, "2", *"same topic", "enter")  # typed before the question was on screen
        modal = app.screen
        assert isinstance(modal, Choice)  # still asked: the Enter went with the reason, not to the question
        await choose(pilot, "correct")
        await pilot.pause()
        assert whose(ws, "102", "p4") == {"tester": 2}
        assert ws.judgment("102", "p4").reason == "same topic"  # not lost, and no letter ran as a key
        assert app.screen is screen and (screen.qid, screen.doc) == ("102", "p4")
