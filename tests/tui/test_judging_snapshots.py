"""SVG snapshots of the judging screen (screens/judging.py) at 80x24, 100x30, 132x40 and 160x45, and of the review
screen at 125 columns, where the Document pane kept its right border only from 132 on.

Update after a deliberate change with `pytest tests/tui/test_judging_snapshots.py --snapshot-update` and look at
the pictures in snapshot_report.html before committing them.
"""

from __future__ import annotations

import pytest

from tests.tui.conftest import make_app, ready

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (132, 40), (160, 45)],
                         ids=["80x24", "100x30", "132x40", "160x45"])
def test_judging_screen_at_each_size(snap_compare, tiny, size):
    """The query, the passage with its terms marked, the ranks in each run and the grade keys, at every size."""
    async def run_before(pilot):
        await ready(pilot)
        await pilot.press("l")
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(make_app(tiny), terminal_size=size, run_before=run_before)


def test_review_screen_at_125_columns_keeps_the_document_pane_whole(snap_compare, tiny):
    async def run_before(pilot):
        await ready(pilot)

    assert snap_compare(make_app(tiny), terminal_size=(125, 36), run_before=run_before)
