"""A run's document ID with a control character, never judged, could not be graded in the app (s7 red team,
s8 "noticed, not fixed"): the store refused it as a typing slip ("label not saved: ... has surrounding spaces or
control characters") though it came from a run file. IDs the app read from its files are stored as they are
(shown escaped); one typed into the add form and found in no file is still refused as a paste slip."""

from __future__ import annotations

import pytest

from rankgate.cli import main
from rankgate.tui.screens.label_form import LabelForm
from tests.tui.conftest import ready
from tests.tui.test_raw_files import app_for, raw_files

ESC_ID = "p\x1bx"


def with_escape_in_a_run(tmp_path):
    d = raw_files(tmp_path)
    (d / "a.trec").write_text(f"101 Q0 {ESC_ID} 1 9 a\n101 Q0 p2 2 8 a\n101 Q0 p1 3 7 a\n"
                              "102 Q0 p3 1 9 a\n102 Q0 p4 2 8 a\n102 Q0 p6 3 7 a\n", encoding="utf-8")
    return d


@pytest.mark.slow
async def test_a_grade_key_on_a_run_id_with_a_control_character_is_saved(tmp_path, capsys):
    d = with_escape_in_a_run(tmp_path)
    app = app_for(d)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.go_to("101", ESC_ID)
        await pilot.pause()
        assert (screen.qid, screen.doc) == ("101", ESC_ID)
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("escape")  # no reason
        await pilot.pause()
        assert screen.model.labels.labels("101")[ESC_ID].grade == 2
        assert not any("not saved" in str(n.message) for n in app._notifications)
    assert main(["labels", "list", "--db", str(d / "labels.db"), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"doc": "p\\u001bx", "grade": 2' in out  # the real ID, not its escaped form 'p\\x1bx'
    assert "\x1b" not in out


@pytest.mark.slow
async def test_the_add_form_refuses_a_typed_id_with_a_control_character_in_no_run(tmp_path):
    d = with_escape_in_a_run(tmp_path)
    app = app_for(d)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.go_to("101", "p1")
        await pilot.pause()
        for doc, saved in (("q\x01z", False), (ESC_ID, True)):  # pasted: in no run / the run's own ID
            await pilot.press("a")
            await pilot.pause()
            form = app.screen
            assert isinstance(form, LabelForm)
            form.query_one("#form-doc").value = doc
            await pilot.press("enter", "1", "enter", "enter", *"why", "enter")
            await pilot.pause()
            if not saved:
                assert isinstance(app.screen, LabelForm)
                assert "control character" in str(form.query_one("#form-help").content)
                await pilot.press("escape")
                await pilot.pause()
        labels = screen.model.labels.labels("101")
        assert "q\x01z" not in labels and labels[ESC_ID].grade == 1
