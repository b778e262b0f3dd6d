"""The first screen is drawn before the benchmark is loaded: the review screen with its progress line (the
step being read, and a bar), while the loading worker is still at work; the panes follow when it is done."""

from __future__ import annotations

import pytest

import asyncio
import threading

import rankgate.tui.loader as loader_module
from rankgate.tui.screens.review import ReviewScreen
from tests.tui.conftest import SIZE, make_app, ready


def on_screen(app) -> str:
    """The text of the screen as drawn."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.slow
async def test_the_progress_line_is_on_screen_while_the_worker_reads_a_run(tiny, monkeypatch):
    real, reading, go = loader_module.read_runs_cached, threading.Event(), threading.Event()

    def held(*args, **kwargs):  # the first run file takes as long as the test wants
        reading.set()
        assert go.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader_module, "read_runs_cached", held)
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        assert await asyncio.to_thread(reading.wait, 10)  # the worker is in the first run file
        for _ in range(50):  # the step's message reaches the screen and a frame is drawn
            await pilot.pause(0.02)
            if "reading" in on_screen(app):
                break
        shown = on_screen(app)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and screen.model is None  # still loading ...
        assert any(w.name == "load" and not w.is_finished for w in app.workers)  # ... in its worker
        assert "rankgate review" in shown and "reading" in shown  # the screen, its progress line
        assert str(screen.query_one("#loading-step").render()).startswith("reading ")
        assert screen.first_frame_at is None  # the panes are not shown yet
        assert screen.first_screen_at is not None  # ... the screen is, with its progress line (bench_app.py)
        go.set()
        await ready(pilot)
        assert screen.model is not None and screen.first_frame_at is not None
        assert not screen.query_one("#loading").display and screen.query_one("#panes").display


async def test_run_files_are_parsed_ahead_from_the_start_of_the_app(tiny, monkeypatch):
    """A first open parses its run files in a thread from the moment the app is made (while it starts and
    the label store opens), not when the loading worker reaches them; the review is the core's all the same."""
    import rankgate.tui.runcache as runcache
    from tests.tui.test_model import assert_agrees

    monkeypatch.setattr(runcache, "MIN_BYTES", 0)  # the tiny benchmark's runs parsed as large ones are
    parsed = []
    real = runcache._read_columns

    def noted(*args):
        parsed.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(runcache, "_read_columns", noted)
    app = make_app(tiny)
    ahead = app.inputs.ahead
    assert ahead is not None and ahead._early  # started before the app runs
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert parsed and all(name.startswith("rankgate-read-ahead") for name in parsed)
        assert app.inputs.ahead is None and not ahead._early  # taken by the load, every file
        assert app.review.first_frame_at is not None
        assert_agrees(app.review.model)
