"""The pane title says where keys go: a text box with the focus types them (the newcomer pressed `u` there)."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.conftest import SIZE, make_app, ready


async def test_the_filter_box_says_typing_and_escape_gives_the_keys_back(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        title = lambda: str(screen.query_one("#queries").border_title)  # noqa: E731
        assert title() == "Queries ◂ keys"
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.focused, Input) and app.focused.id == "query-filter"
        assert title() == "Queries ◂ typing (esc: keys)"
        await pilot.press("u")  # text here, not the review queue's key
        await pilot.pause()
        assert app.focused.value == "u"
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is screen.query_one("#query-list")
        assert title() == "Queries ◂ keys"


async def test_the_undo_notice_at_80x24_says_undone_once(tiny):
    """Newcomer s14: the notice line read "undo: undo grade 1: QUERY DOC"."""
    from rankgate.tui.widgets.notice_line import NoticeLine

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await pilot.press("1", "escape")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        line = str(app.screen.query_one(NoticeLine).render())
        assert line.startswith(f"undone: grade 1 of {qid} {doc}"), line
        await pilot.press("ctrl+y")
        await pilot.pause()
        line = str(app.screen.query_one(NoticeLine).render())
        assert line.startswith(f"redone: grade 1 of {qid} {doc}"), line
