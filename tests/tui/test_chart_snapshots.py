"""The pictures in the app: the compare screen's per-query delta columns and Recall@k curves, as an SVG
snapshot (update with --snapshot-update after a deliberate change, and look at it first)."""

from __future__ import annotations

import pytest

from tests.tui.conftest import SIZE, make_app, ready


async def open_compare(pilot) -> None:
    from rankgate.tui.screens.compare import CompareScreen

    await ready(pilot)
    await pilot.press("C")
    for _ in range(100):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        screen = pilot.app.screen
        if isinstance(screen, CompareScreen) and screen.comparison is not None:
            break
    await pilot.pause()


@pytest.mark.slow
def test_compare_screen_charts(snap_compare, tiny):
    async def run_before(pilot):
        await open_compare(pilot)

    assert snap_compare(make_app(tiny), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
async def test_compare_screen_draws_both_charts(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await open_compare(pilot)
        text = app.screen.query_one("#compare-macros").render().plain if hasattr(
            app.screen.query_one("#compare-macros").render(), "plain") else ""
        from rich.console import Console

        console = Console(width=156, record=True, color_system=None)
        console.print(app.screen.query_one("#compare-macros").renderable
                      if hasattr(app.screen.query_one("#compare-macros"), "renderable")
                      else app.screen.query_one("#compare-macros").content)
        text = console.export_text()
        assert "delta per query" in text and "Recall@k, k = 1.." in text
        assert "most lost first" in text and "━━" in text
        assert any(ch in text for ch in "▁▂▃▄▅▆▇█") and any(0x2800 < ord(ch) <= 0x28FF for ch in text)
