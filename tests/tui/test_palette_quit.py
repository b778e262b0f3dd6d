"""The command palette's Quit is Textual's own entry, which said "Quit the application as soon as possible"
though quitting offers the export of label edits first (s8, "noticed, not fixed"): one Quit, in our words,
and choosing it goes the way `q` does."""

from __future__ import annotations

import pytest

import shutil

from textual.command import CommandPalette

from rankgate.tui.screens.sync import QuitScreen
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app
from tests.tui.test_sync import loaded


@pytest.mark.slow
async def test_the_palettes_one_quit_says_it_offers_the_export_and_does(tmp_path):
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q-recovery", "doc-rpo", 2, "states the RPO")
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"quit")
        await pilot.pause(0.5)
        shown = [str(option.prompt) for option in app.screen.query_one("CommandList").options]
        quits = [text for text in shown if text.splitlines()[0].strip() == "Quit"]
        assert len(quits) == 1 and "as soon as possible" not in " ".join(shown), shown
        assert "offered for export first" in quits[0]
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen) and app.is_running
