"""`q` pressed while the app opens the benchmark again (ctrl+r, or the reload after bringing the qrels file's
changes in) left at once, without the export offer the normal quit makes (s8, "noticed, not fixed"): the
store was closed for the reload, so nothing counted the unexported edits. It now waits for the benchmark to
be open, then quits as `q` does; a second `q` leaves at once."""

from __future__ import annotations

import shutil
import threading

import pytest

import rankgate.tui.app as app_module
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.screens.sync import QuitScreen, RawQuitScreen
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app
from tests.tui.test_raw_files import raw_files
from tests.tui.test_raw_quit import raw_app
from tests.tui.test_sync import loaded


@pytest.fixture
def held_reload(monkeypatch):
    """The second open (the reload) waits until the test lets it go, as a large benchmark's would."""
    real, opens, go = app_module.load, [], threading.Event()

    def load(*args, **kwargs):
        opens.append(1)
        if len(opens) > 1:
            assert go.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(app_module, "load", load)
    return go


async def reload_then_q(pilot) -> None:
    app = pilot.app
    await pilot.press("ctrl+r")
    await pilot.pause()
    assert app.loaded is None  # still opening again
    await pilot.press("q")
    await pilot.pause()
    assert app.is_running  # not gone without the offer


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["folder", "raw"])
async def test_q_during_a_reload_offers_the_export(tmp_path, held_reload, kind):
    if kind == "folder":
        folder = tmp_path / "mybench"
        shutil.copytree(SAMPLES / "seed-lab", folder)
        app, qid, doc, dialog = make_app(folder), "q-recovery", "doc-rpo", QuitScreen
    else:
        app, qid, doc, dialog = raw_app(raw_files(tmp_path)), "101", "p5", RawQuitScreen
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit(qid, doc, 2, "states it")
        await pilot.pause()
        await reload_then_q(pilot)
        held_reload.set()
        await loaded(pilot)
        assert isinstance(app.screen, dialog) and app.is_running
        assert "1 label edit not exported" in " ".join(str(s.render()) for s in app.screen.query("Static"))
        await pilot.press("escape")  # stay: the review goes on
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.is_running


@pytest.mark.slow
async def test_a_second_q_during_a_reload_leaves_at_once(tmp_path, held_reload):
    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q-recovery", "doc-rpo", 2, "states it")
        await reload_then_q(pilot)
        await pilot.press("q")
        await pilot.pause()
        held_reload.set()
    assert app.return_code == 0
