"""Suggested grades in the app: shown beside the document, accepted with one key (A), overridden by a grade key."""

from __future__ import annotations

from rankgate.store.suggestions import SuggestionBook, Suggestion
from rankgate.tui.widgets.doc_view import DocView
from tests.tui.conftest import SIZE, make_app, ready


def doc_text(screen) -> str:
    return screen.query_one(DocView).query_one("#doc-body").content.plain


async def test_a_suggestion_is_shown_and_accepted_with_one_key(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        labels = screen.model.labels
        book = SuggestionBook.beside(labels.backend.ws.path)
        book.add([Suggestion("q-restore", "d-rpo", 2, "states the [b]RPO[/b]", 0.8, "stub-judge", "m", "abc"),
                  Suggestion("q-restore", "d-other", 0, "off topic", None, "stub-judge")])
        screen.set_doc("d-rpo")
        screen._show_doc()
        await pilot.pause()
        text = doc_text(screen)
        assert "suggested 2 (relevant) by stub-judge, confidence 0.80: states the [b]RPO[/b]" in text  # literal
        assert "d-rpo" not in labels.labels("q-restore")
        await pilot.press("A")
        await pilot.pause()
        lab = labels.labels("q-restore")["d-rpo"]
        assert lab.grade == 2 and lab.reason == "accepted stub-judge's suggestion: states the [b]RPO[/b]"
        again = SuggestionBook.beside(labels.backend.ws.path)
        assert again.accepted()[("q-restore", "d-rpo")]["reviewer"] == "tester"
        assert [r["kind"] for r in again.history("q-restore", "d-rpo")] == ["suggestion", "accepted"]
        # any grade key overrides it; the suggestion stays beside the document
        await pilot.press("0", "escape")
        await pilot.pause()
        assert labels.labels("q-restore")["d-rpo"].grade == 0
        assert "suggested 2" in doc_text(screen)


async def test_no_suggestion_says_how_to_get_one(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.set_doc("d-rpo")
        await pilot.pause()
        await pilot.press("A")
        await pilot.pause()
        assert "d-rpo" not in screen.model.labels.labels("q-restore")
        assert any("labels suggest" in str(n.message) for n in app._notifications)
