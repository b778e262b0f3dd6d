"""SVG snapshots of the review screen at 160x48 on the small fixed benchmark of factory.py.

Update after a deliberate change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the pictures in snapshot_report.html before committing them.
"""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.factory import MARKUP_DOC


def test_main_screen(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)


def test_after_grading_the_gate_accepts(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)
        await pilot.press("2", *"states the RPO", "enter")
        await pilot.pause()

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)


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
