"""Fixtures for the app's tests: a private data folder, a fixed reviewer and clock, no cursor blink."""

from __future__ import annotations

import asyncio
import inspect
import itertools

import pytest
from textual import _wait

from tests.tui.factory import write_benchmark

SIZE = (160, 48)

# Textual's pilot waits, twice after every key and once every pause(), until the app has used under 5% of
# a CPU over one window (textual/_wait.py): 20 ms by default, so each key cost at least 40 ms of sleep and
# the app tests about 4,000 such waits. A 5 ms window keeps the same test of idleness (5% of the window),
# with the deterministic wait for every queued message (Pilot._wait_for_screen) still after each key.
_wait.SLEEP_GRANULARITY = 0.005
_wait.SLEEP_IDLE = _wait.SLEEP_GRANULARITY / 20


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests in a fresh event loop (no asyncio plugin is a dependency)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        asyncio.run(pyfuncitem.obj(**args))
        return True
    return None


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """Never touch the real data folder; a fixed reviewer; store timestamps that do not move."""
    home = tmp_path / "home"
    monkeypatch.setenv("RANKGATE_HOME", str(home))
    monkeypatch.setenv("RANKGATE_REVIEWER", "tester")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    ticks = itertools.count()

    def fixed_now() -> str:
        return f"2026-01-01T00:00:{min(next(ticks), 59):02d}.000Z"

    import rankgate.store.workspace as workspace

    monkeypatch.setattr(workspace, "now_iso", fixed_now)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def tiny(tmp_path):
    return write_benchmark(tmp_path / "tiny-lab")


def make_app(path, **kwargs):
    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs

    inputs = Inputs(str(path), list(kwargs.pop("runs", [])), kwargs.pop("db", None), kwargs.pop("reviewer", None),
                    kwargs.pop("memory", False))
    return ReviewApp(inputs, cursor_blink=False, **kwargs)


async def ready(pilot) -> None:
    """Wait until the benchmark is loaded and the review screen (and the corpus) are up."""
    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        from rankgate.tui.screens.review import ReviewScreen

        from rankgate.tui.screens.judging import JudgingScreen

        if (isinstance(app.screen, (ReviewScreen, JudgingScreen)) and app.review.model is not None) \
                or app.error is not None:
            break
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
