"""An edit keeps the query list's order (the edited query stays under the cursor); `s` sorts again."""

from __future__ import annotations

import pytest

from rankgate.tui.widgets.query_list import QueryPane
from rankgate.tui.widgets.text_static import TextStatic
from tests.tui.conftest import SIZE, make_app, ready


@pytest.mark.slow
async def test_an_edit_that_would_move_the_query_keeps_the_order_until_s(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.ask_reason = False
        pane = screen.query_one(QueryPane)
        m = screen.model
        before = pane.list.order.copy()
        assert screen.qid == "q-restore" and pane.list.cursor == 0
        screen.edit("q-restore", "d-snap", 3)  # the candidate's first two documents are answers:
        await pilot.press("3")  # d-rpo (highlighted) too; q-restore is no longer the worst change
        await pilot.pause()
        assert list(m.order("", "change")) != list(before)  # sorted afresh, q-restore would move
        assert list(pane.list.order) == list(before) and pane.list.cursor == 0  # it stays where it was
        assert screen.qid == "q-restore"
        status = pane.query_one("#query-status", TextStatic)._shown.plain
        assert "order before your edits: s re-sorts" in status
        await pilot.press("s")  # sorts again, in the same sort
        await pilot.pause()
        assert pane.sort == "change" and not pane.stale
        assert list(pane.list.order) == list(m.order("", "change"))
        assert screen.qid == "q-restore"  # the cursor follows the query
        assert "s re-sorts" not in pane.query_one("#query-status", TextStatic)._shown.plain
        await pilot.press("s")  # and then cycles, as before
        await pilot.pause()
        assert pane.sort == "benchmark"
