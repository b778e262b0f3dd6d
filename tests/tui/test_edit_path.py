"""Pilot tests of what keeps a grade key fast: the gate's "updating" mark, significance decided afresh
without a timer, the label list drawn again from the first changed row, the gate body's height, and the
corpus out of the garbage collector's view. (No timing is asserted: bench/bench_app.py measures.)"""

from __future__ import annotations

import pytest

import gc

from rich.text import Text

from rankgate.tui.loader import load_corpus
from rankgate.tui.messages import GateDecided
from rankgate.tui.model import ReviewModel
from rankgate.tui.widgets.gate_panel import STALE, GatePanel
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.text_static import TextStatic
from tests.tui.conftest import SIZE, make_app, ready


def with_policy(tiny):
    from tests.tui.test_model import POLICY

    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('[gate]\n', '[gate]\npolicy = "policy.toml"\n'))
    (tiny / "policy.toml").write_text(POLICY)
    return tiny


def line_text(lst, y: int) -> str:
    return "".join(seg.text for seg in lst.render_line(y))


@pytest.mark.slow
async def test_the_gate_says_updating_on_its_border_until_significance_is_decided_afresh(tiny, monkeypatch):
    monkeypatch.setattr(ReviewModel, "FRESH_INLINE_S", 0.0)  # as on a large benchmark: tests in a worker
    app = make_app(with_policy(tiny))
    decided = []
    async with app.run_test(size=SIZE, message_hook=lambda m: decided.append(m.view)
                            if isinstance(m, GateDecided) else None) as pilot:
        await ready(pilot)
        screen = app.screen
        panel = screen.query_one(GatePanel)
        body = screen.query_one("#gate-body", TextStatic)
        seen = []  # (view, the border's subtitle, the body's text) at each show
        original = panel.show

        def show(view):
            original(view)
            seen.append((view, panel.border_subtitle, body._shown.plain))

        panel.show = show
        await pilot.press("2", "escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        first_view, first_subtitle, first_body = seen[0]
        assert first_view.stale and STALE in str(first_subtitle)  # at once, on the border ...
        assert "updating" not in first_body  # ... not as a line of the body (its height stays)
        last_view, last_subtitle, _ = seen[-1]
        assert decided and last_view is decided[-1] and not last_view.stale
        assert not last_subtitle and last_view.version == screen.model.version
        assert not screen._fresh_busy


@pytest.mark.slow
async def test_edits_while_the_gate_is_decided_afresh_are_taken_up_by_the_next_decision(tiny, monkeypatch):
    monkeypatch.setattr(ReviewModel, "FRESH_INLINE_S", 0.0)
    app = make_app(with_policy(tiny))
    decided = []
    async with app.run_test(size=SIZE, message_hook=lambda m: decided.append(m.view)
                            if isinstance(m, GateDecided) else None) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.ask_reason = False
        m = screen.model
        qid = screen.qid
        docs = m.runs[m.candidate].names(screen.qi)[: m.k]
        for grade, doc in zip((1, 0, 2, 3, 0), docs * 2):  # no pause between the edits
            screen.set_doc(doc)
            assert screen.edit(qid, doc, grade)
        for _ in range(20):  # each decision afresh may find newer edits and start one more
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not screen._fresh_busy:
                break
        assert not screen._fresh_busy
        view = screen.query_one(GatePanel).view
        assert not view.stale and view.version == m.version
        assert len(decided) <= 5  # one at a time, never one per edit piled up
        versions = [v.version for v in decided]
        assert versions == sorted(versions)
        fresh = m.gate(fresh=True)
        assert (fresh.checks, fresh.accepted) == (view.checks, view.accepted)


@pytest.mark.slow
async def test_cheap_significance_tests_are_decided_on_the_key(tiny, monkeypatch):
    """On a small benchmark (tests that took at most FRESH_INLINE_S last time) the key's own frame shows
    the gate decided afresh: never 'updating', no worker."""
    monkeypatch.setattr(ReviewModel, "FRESH_INLINE_S", 60.0)
    app = make_app(with_policy(tiny))
    decided = []
    async with app.run_test(size=SIZE, message_hook=lambda m: decided.append(m)
                            if isinstance(m, GateDecided) else None) as pilot:
        await ready(pilot)
        screen = app.screen
        panel = screen.query_one(GatePanel)
        m = screen.model
        assert m.fresh_is_cheap()
        await pilot.press("2", "escape")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert not decided and not screen._fresh_busy
        view = panel.view
        assert not view.stale and view.version == m.version and not panel.border_subtitle
        fresh = m.gate(fresh=True)
        assert (fresh.checks, fresh.check_details) == (view.checks, view.check_details)


@pytest.mark.slow
async def test_the_label_list_after_a_label_is_added_and_removed(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.ask_reason = False
        editor = screen.query_one(LabelEditor)
        lst = editor.list
        assert screen.qid == "q-restore" and screen.doc == "d-rpo"  # unjudged
        before = [lab.doc for lab in lst.rows]
        await pilot.press("3")
        await pilot.pause()
        docs = [lab.doc for lab in lst.rows]
        assert sorted(docs) == sorted(before + ["d-rpo"]) and lst.count == len(docs)
        at = docs.index("d-rpo")
        assert at < len(docs) - 1  # grade 3 sorts near the top: the rows after it moved down
        assert lst.cursor == at
        for i, doc in enumerate(docs):  # row i is line i + 1 (the header is line 0)
            assert doc in line_text(lst, i + 1)
        assert "▸" in line_text(lst, at + 1)  # the current document's mark
        await pilot.press("x")
        await pilot.pause()
        assert [lab.doc for lab in lst.rows] == before and lst.count == len(before)
        assert 0 <= lst.cursor < max(lst.count, 1)
        for i, doc in enumerate(before):
            assert doc in line_text(lst, i + 1)
        assert line_text(lst, len(before) + 1).strip() == ""  # the removed row's line is empty again


@pytest.mark.slow
async def test_the_gate_body_keeps_its_height_when_its_text_shrinks_a_grown_text_still_asks_for_a_layout(tiny):
    """Two kinds of text widget in one app session (a start costs ~0.7 CPU s): the gate body keeps its height;
    an auto-height text that grows asks for a layout, and a fixed bar shows every change."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        body = app.screen.query_one("#gate-body", TextStatic)
        assert body.keep_height
        body.show(Text("one\ntwo\nthree\nfour", end=""))
        await pilot.pause()
        lines = body._lines
        body.show(Text("one\ntwo", end=""))
        assert body._lines == lines  # padded: no new layout for a line less
        assert body._shown.plain == "one\ntwo"  # what it shows, as compared next time
        assert str(body.content).startswith("one\ntwo")
        other = app.screen.query_one("#label-detail", TextStatic)
        assert not other.keep_height
        head = app.screen.query_one("#query-head", TextStatic)  # height: auto
        head.show(Text("one", end=""))
        await pilot.pause()
        long = "word " * 80  # wraps at any width of the pane
        head.show(Text(f"one\n{long}", end=""))
        assert head._lines > 2 and head._layout_required
        bar = app.screen.query_one("#status-bar", TextStatic)  # height 1: no count, the text is shown
        bar.show(Text("judged 1", end=""))
        bar.show(Text("judged 2", end=""))
        assert str(bar.content) == "judged 2"


def test_the_corpus_is_read_out_of_the_collectors_view(tiny):
    enabled = gc.isenabled()
    frozen = gc.get_freeze_count()
    docs = load_corpus(tiny / "corpus.jsonl")
    assert docs and gc.isenabled() == enabled
    assert gc.get_freeze_count() >= frozen + len(docs)  # each document is an object the collector no longer scans


def test_a_texts_line_count_is_what_wrapping_it_gives():
    """TextStatic counts lines without wrapping the text when every line fits; the count is Text.wrap's."""
    import random

    from rich.console import Console

    from rankgate.tui.widgets.text_static import line_count

    console = Console(width=200)
    rng = random.Random(3)
    words = ["a", "bb", "ccc", "dddddddddd", "漢字", "é", "e\u0301", "  ", "x" * 25, "\t", ""]
    for _ in range(1500):
        plain = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randrange(0, 12)))
                          for _ in range(rng.randrange(1, 5)))
        text = Text(plain, end="")
        if rng.random() < 0.5:
            text.stylize("bold", 0, len(plain) // 2)
        width = rng.randrange(4, 40)
        assert line_count(text, width, console) == len(text.wrap(console, width)), (plain, width)


@pytest.mark.slow
async def test_the_gates_sparkline_follows_every_edit_without_sorting_again_when_nothing_moved(tiny):
    """The RR-delta sparkline is kept while no delta changes; after each edit it is what a fresh draw gives."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.ask_reason = False
        screen.ask_whose = False
        m = screen.model
        panel = screen.query_one(GatePanel)
        seen = set()
        for qi in range(min(m.nq, 4)):
            screen.show_query(qi)
            for grade, doc in zip((3, 0, 2), m.runs[m.candidate].names(qi)[: m.k]):
                assert screen.edit(m.qids[qi], doc, grade)
                await pilot.pause()
                kept = panel.deltas_line().plain
                panel._spark = None
                assert kept == panel.deltas_line().plain  # the same as drawn afresh
                assert kept in str(screen.query_one("#gate-body").render())
                seen.add(kept)
        assert len(seen) > 1  # the edits did move the deltas, and the line followed


@pytest.mark.slow
async def test_young_collections_are_rarer_while_reviewing_and_as_before_after(tiny):
    from rankgate.tui.screens.editing import YOUNG_GC

    before = gc.get_threshold()
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert gc.get_threshold()[0] >= YOUNG_GC and gc.get_threshold()[1:] == before[1:]
        app.reload()  # a second bind keeps the first thresholds to put back
        await ready(pilot)
    assert gc.get_threshold() == before


@pytest.mark.slow
async def test_the_store_folds_its_journal_while_the_reviewer_pauses_not_on_a_key(tiny, tmp_path, monkeypatch):
    from rankgate.store.storage import read_journal
    from rankgate.store.workspace import Workspace
    from rankgate.tui.screens import editing

    db = tmp_path / "w.json"
    unfolded = lambda: len(read_journal(db.with_name("w.json.journal")).records)  # noqa: E731
    monkeypatch.setattr(editing, "IDLE_FOLD_S", 1.0)  # a margin for a loaded machine: keys come much faster
    app = make_app(tiny, db=str(db))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.screen.ask_reason = False
        start = unfolded()
        monkeypatch.setattr(editing, "IDLE_FOLD_EDITS", start + 4)
        await pilot.press("2", "1")
        await pilot.pause(1.5)
        assert unfolded() == start + 2  # a pause, but fewer edits than IDLE_FOLD_EDITS: nothing folded
        await pilot.press("3", "0")
        assert unfolded() == start + 4  # keys follow each other: no fold between them, nor on the key
        for _ in range(150):  # the pause folds the journal into the snapshot (waited for, not timed)
            await pilot.pause(0.1)
            if unfolded() == 0:
                break
        assert unfolded() == 0
        await pilot.press("1")
        await pilot.pause()
    ws = Workspace.open(db, readonly=True)
    try:
        grades = {(j.query, j.doc): j.grade for j in ws.judgments()}
    finally:
        ws.close()
    assert grades[("q-restore", "d-rpo")] == 1  # the edit after the fold is kept too
