"""RANKGATE_CURSOR_BLINK=0: still cursors in the app's text boxes (docs/review.md, served sessions)."""

from __future__ import annotations


def test_rankgate_cursor_blink_0_keeps_the_text_boxes_cursors_still():
    from rankgate.tui.app import cursor_blink_wanted

    assert cursor_blink_wanted({}) and cursor_blink_wanted({"RANKGATE_CURSOR_BLINK": "1"})
    for off in ("0", "no", "OFF", "false", " 0 "):
        assert not cursor_blink_wanted({"RANKGATE_CURSOR_BLINK": off})
