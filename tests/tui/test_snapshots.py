"""SVG snapshots of the review screen on the small fixed benchmark of factory.py: at 160x48, and the opening
screen at 80x24, 100x30 (narrow: one bottom pane at a time) and 160x45.

Update after a deliberate change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the pictures in snapshot_report.html before committing them.
"""

from __future__ import annotations

import pytest

from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.factory import MARKUP_DOC


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 45)], ids=["80x24", "100x30", "160x45"])
def test_opening_screen_at_each_size(snap_compare, tiny, size):
    """The decision and its reason, and both runs' top k, on the opening screen at every size."""
    async def run_before(pilot):
        await ready(pilot)

    assert snap_compare(make_app(tiny), terminal_size=size, run_before=run_before)


@pytest.mark.slow
def test_narrow_screen_document_pane(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)
        await pilot.press("p")
        await pilot.pause()

    assert snap_compare(make_app(tiny), terminal_size=(80, 24), run_before=run_before)


@pytest.mark.slow
def test_main_screen(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_after_grading_the_gate_accepts(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)
        await pilot.press("2", *"states the RPO", "enter")
        await pilot.pause()

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_markup_query_shown_literally(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)
        screen = pilot.app.screen
        from rankgate.tui.widgets.query_list import QueryPane

        screen.query_one(QueryPane).select(screen.model.qindex["q-markup"])
        await pilot.pause()
        screen.set_doc(MARKUP_DOC)
        await pilot.pause()

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)
