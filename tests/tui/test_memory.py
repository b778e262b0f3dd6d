"""What a long session keeps: memory that grows with each edit or each reload and never comes back.
(Figures live in bench/: these count objects, they time nothing.)"""

from __future__ import annotations

import pytest

import gc
import weakref

from textual.widgets._footer import FooterKey

from rankgate.tui.loader import Inputs, load
from rankgate.tui.widgets.footer import FittingFooter
from tests.tui.conftest import SIZE, make_app, ready


def live_footer_keys() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, FooterKey))


@pytest.mark.slow
async def test_the_footer_keys_of_past_edits_are_let_go(tiny):
    """Each grade composes the footer again (twice: the reason prompt opens and closes); Textual's Footer
    kept every key it had shown (Textual issue #6666): about 1 MB an edit, for good."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        footer = app.screen.query_one(FittingFooter)
        for i in range(3):
            await pilot.press(str(i % 3), "escape")
            await pilot.pause()
        before = live_footer_keys()
        for i in range(12):
            await pilot.press(str(i % 3), "escape")
            if i % 5 == 4:
                await pilot.press("down")
            await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown = len(footer.query(FooterKey))
        assert shown > 3  # the footer still shows its keys
        after = live_footer_keys()
        assert after <= max(before, shown) + shown, (before, after, shown)  # not 12 edits' worth (~500)
        watchers = getattr(footer, "__watchers", {}).get("compact", [])
        assert len(watchers) <= shown * 2


def dropped_with_a_cycle(inputs) -> weakref.ref:
    """A load dropped by its caller, whose objects refer to each other (as its closures do)."""
    loaded = load(inputs)
    loaded.later.append(lambda: loaded)
    return weakref.ref(loaded)


@pytest.mark.slow
def test_a_reload_lets_go_of_the_last_load(tiny):
    """Each load freezes what it made out of the collector's view; the next load (ctrl+r, blind review)
    puts it back first, so the last load's cycles are freed rather than kept for good."""
    inputs = Inputs(str(tiny), [], memory=True)
    gone = dropped_with_a_cycle(inputs)
    gc.collect()
    assert gone() is not None  # frozen: the collector does not see it
    second = load(inputs)
    gc.collect()
    assert gone() is None
    frozen = gc.get_freeze_count()
    del second
    for _ in range(3):
        load(inputs)
    gc.collect()
    assert gc.get_freeze_count() <= frozen + 50  # no more frozen with each reload
