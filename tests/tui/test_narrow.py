"""At 80 columns: the footer drops whole keys (never a key without its label); the compare screen's macro
table keeps every figure whole (each run's name heads its own table, short headers)."""

from __future__ import annotations

import re

from textual.widgets._footer import FooterKey

from rankgate.tui.widgets.footer import FittingFooter
from tests.tui.conftest import make_app, ready


async def test_the_footer_shows_whole_keys_at_every_width(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        for width in (80, 100, 160):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            await pilot.pause()
            footer = app.screen.query_one(FittingFooter)
            keys = [k for k in footer.query(FooterKey) if not k.has_class("-command-palette")]
            palette = footer.query_one(".-command-palette", FooterKey)
            shown = [k for k in keys if k.display]
            assert shown and all(k.region.right <= palette.region.x for k in shown)  # none under the palette key
            assert shown == keys[:len(shown)]  # the first keys, in order: the rest are dropped whole
            if width == 80:
                assert len(shown) < len(keys)
            nxt = next(k for k in keys if k.action == "next_review")
            assert nxt.display == (width >= 100)  # `n next`: whole from 100 columns, dropped at 80 (was "n")


async def test_compare_macros_fit_at_80_columns(tiny):
    from rich.console import Console

    from rankgate.tui.screens.compare import CompareScreen

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.comparison is not None
        console = Console(width=74, record=True, file=open("/dev/null", "w"))
        console.print(screen.macro_table())
        text = console.export_text()
        assert "…" not in text and "w/l/t" in text
        runs = [r.candidate for r in screen.comparison.candidates]
        lines = text.splitlines()
        assert [line.strip() for line in lines if line.strip() in runs] == runs  # each run heads its rows
        cis = re.findall(r"\[[-+]\d\.\d{3}, [-+]\d\.\d{3}\]", text)
        assert len(cis) == len(runs) * len(screen.comparison.measures)  # every CI whole, on its row
        wide = Console(width=200, record=True, file=open("/dev/null", "w"))
        wide.print(screen.macro_table(width=160))
        assert "wins/losses/ties" in wide.export_text()
