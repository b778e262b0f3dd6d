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
