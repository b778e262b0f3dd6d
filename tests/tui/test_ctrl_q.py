"""ctrl+q (Textual's own quit key) leaves the app the way `q` does (red team s8 R7): with label edits not
exported it offers to export them first; ctrl+q in that dialog is its `q` (quit, the edits stay in the
workspace); without such edits it quits at once."""

from __future__ import annotations

import pytest

import shutil

from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.screens.sync import QuitScreen, RawQuitScreen
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.test_raw_quit import raw_app
from tests.tui.test_raw_files import raw_files
from tests.tui.test_sync import loaded


@pytest.mark.slow
async def test_ctrl_q_with_unexported_edits_offers_the_export_as_q_does(tmp_path):
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    before = (folder / "qrels.json").read_bytes()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q-recovery", "doc-rpo", 2, "states the RPO")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen) and app.is_running
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.is_running
        await pilot.press("ctrl+q", "ctrl+q")  # the dialog, then its quit without exporting
        await pilot.pause()
    assert app.return_code == 0 and (folder / "qrels.json").read_bytes() == before
    assert app.unexported == 1  # kept in the workspace


@pytest.mark.slow
async def test_ctrl_q_on_raw_files_offers_the_export_and_without_edits_quits_at_once(tmp_path):
    d = raw_files(tmp_path)
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit("101", "p5", 3, "direct answer")
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, RawQuitScreen) and app.is_running
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+z")  # undone: nothing left to export
        await pilot.pause()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_code == 0
