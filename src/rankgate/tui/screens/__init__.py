"""The review screen, the loading screen, and the modals."""

from __future__ import annotations


def apply_cursor_blink(screen) -> None:
    """Every Input of a screen follows the app's `cursor_blink` (tests and snapshots turn it off)."""
    from textual.widgets import Input

    if not getattr(screen.app, "cursor_blink", True):
        for inp in screen.query(Input):
            inp.cursor_blink = False
