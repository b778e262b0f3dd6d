"""Suggested grades in the app: shown beside the document, accepted with one key (A), overridden by a grade key."""

from __future__ import annotations

import pytest

from rankgate.store.suggestions import SuggestionBook, Suggestion
from rankgate.tui.widgets.doc_view import DocView
from tests.tui.conftest import SIZE, make_app, ready


def doc_text(screen) -> str:
    return screen.query_one(DocView).query_one("#doc-body").content.plain


@pytest.mark.slow
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


@pytest.mark.slow
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


JUDGE = """
import json, sys, time
for line in sys.stdin:
    req = json.loads(line)
    time.sleep(float(sys.argv[1]))
    print(json.dumps({"id": req["id"], "grade": 1, "reason": "stub on " + req["query"]}), flush=True)
"""


def with_judge(tiny, delay: float):
    import sys

    (tiny / "judge.py").write_text(JUDGE)
    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text() + f'\n[judge]\nname = "stub"\ncommand = ["{sys.executable}", '
                        f'"judge.py", "{delay}"]\ntimeout = 20\n')
    trust_judge(tiny)
    return tiny


def trust_judge(folder):
    """What `labels suggest --trust-judge` records: the user agreed to run this folder's judge."""
    from rankgate.core.benchmark import load_manifest
    from rankgate.core.judge import judge_config
    from rankgate.store.trust import trust

    m = load_manifest(folder)
    trust(m.folder, judge_config(m.judge, str(m.path), str(m.folder)).trust_token())


@pytest.mark.slow
async def test_s_runs_no_judge_of_a_folder_the_user_has_not_trusted(tiny):
    """Before: S ran the [judge] command of any folder opened, with no question asked."""
    import sys

    (tiny / "judge.py").write_text(JUDGE)
    manifest = tiny / "benchmark.toml"
    marker = tiny / "ran"
    manifest.write_text(manifest.read_text() + f'\n[judge]\ncommand = ["{sys.executable}", "-c", '
                        f'"open(\'{marker}\', \'w\')"]\n')
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("S")
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        assert not marker.exists()
        assert any("--trust-judge" in str(n.message) for n in app._notifications)


@pytest.mark.slow
async def test_s_asks_the_judge_in_a_worker_and_the_answers_show(tiny):
    app = make_app(with_judge(tiny, 0))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        qid = m.qids[screen.qi]
        unjudged = {d for r in m.runs.values() for d in r.names(screen.qi)[: m.k]} - set(m.labels.labels(qid))
        await pilot.press("S")
        for _ in range(100):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not any(w.group == "judge" and w.is_running for w in app.workers):
                break
        book = SuggestionBook.beside(m.labels.backend.ws.path)
        assert set(book.latest()) == {(qid, d) for d in unjudged} and unjudged
        assert {s.reason for s in book.latest().values()} == {f"stub on {qid}"}
        screen.set_doc(sorted(unjudged)[0])
        screen._show_doc()
        await pilot.pause()
        assert "suggested 1 (partly relevant) by stub" in doc_text(screen)
        assert any("suggestions stored" in str(n.message) for n in app._notifications)


@pytest.mark.slow
async def test_s_again_cancels_and_keeps_what_was_stored(tiny):
    app = make_app(with_judge(tiny, 1.0))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model

        def unjudged(qi):
            return {d for r in m.runs.values() for d in r.names(qi)[: m.k]} - set(m.labels.labels(m.qids[qi]))

        qi = max(range(m.nq), key=lambda i: len(unjudged(i)))
        assert len(unjudged(qi)) >= 2
        screen.show_query(qi)
        await pilot.pause()
        await pilot.press("S")
        await pilot.pause(1.5)
        await pilot.press("S")
        for _ in range(100):
            await pilot.pause(0.1)
            if not any(w.group == "judge" and w.is_running for w in app.workers):
                break
        book = SuggestionBook.beside(screen.model.labels.backend.ws.path)
        notes = [str(n.message) for n in app._notifications]
        assert any("cancelled" in n for n in notes), notes
        assert 0 < len(book) < len(unjudged(qi))
