"""Pilot tests of the review workflows: grade and watch the gate flip, filter, switch runs, export."""

from __future__ import annotations

import pytest

import json

from rankgate.core.formats import read_qrels
from rankgate.tui.commands import COMMANDS, ReviewCommands
from rankgate.tui.messages import LabelsEdited
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.widgets.gate_panel import GatePanel
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.query_list import QueryList, QueryPane
from rankgate.tui.widgets.ranking import RankingPane
from rankgate.tui.widgets.reason_bar import ReasonBar
from tests.tui.factory import write_benchmark
from tests.tui.conftest import SIZE, make_app, ready


def plain(widget) -> str:
    """What a Static shows, as text."""
    content = widget.content
    return content.plain if hasattr(content, "plain") else str(content)


def screen_text(app) -> str:
    return app.export_screenshot()


async def test_opens_on_the_regressed_must_pass_query(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert screen.qid == "q-restore"  # sorted by change, worst (lost must-pass) first
        assert screen.doc == "d-rpo"  # its first unjudged document in the candidate's top k
        view = screen.query_one(GatePanel).view
        assert view.decision == "reject"
        assert not view.checks["must_pass_queries_hit"]
        rankings = screen.query_one(RankingPane).lists()
        assert [r.doc for r in rankings["candidate"].rows[:3]] == ["d-snap", "d-rpo", "d-price"]
        assert rankings["candidate"].cursor == 1


@pytest.mark.slow
async def test_grade_a_document_and_the_gate_flips(tiny):
    app = make_app(tiny)
    edits: list[LabelsEdited] = []
    async with app.run_test(size=SIZE, message_hook=lambda m: edits.append(m) if isinstance(m, LabelsEdited)
                            else None) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("2")
        await pilot.pause()
        bar = screen.query_one(ReasonBar)
        assert bar.is_open
        await pilot.press(*"states the RPO")
        await pilot.press("enter")
        await pilot.pause()
        assert not bar.is_open
        m = screen.model
        lab = m.labels.labels("q-restore")["d-rpo"]
        assert (lab.grade, lab.reason, lab.reviewer) == (2, "states the RPO", "tester")
        # Every pane shows it.
        assert screen.query_one(GatePanel).view.decision == "accept"
        assert "ACCEPT" in plain(screen.query_one("#top-bar"))
        cand = screen.query_one(RankingPane).lists()["candidate"]
        assert cand.rows[1].state == "found"
        assert plain(screen.query_one("#column-candidate .ranking-missing")) == "1 relevant not in the top 3: d-restore"
        labels = screen.query_one(LabelEditor).list
        assert "d-rpo" in [lab.doc for lab in labels.rows]
        qlist = screen.query_one(QueryList)
        assert m.values["prf"][m.hit_m][m.qindex["q-restore"]] == 1.0
        assert m.qids[int(qlist.order[qlist.cursor])] == "q-restore"
        assert edits and edits[-1].qid == "q-restore"
    # The edit is in the store: a second open sees it.
    app2 = make_app(tiny)
    async with app2.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app2.screen.model.labels.labels("q-restore")["d-rpo"].grade == 2
        assert app2.screen.query_one(GatePanel).view.decision == "accept"


@pytest.mark.slow
async def test_next_review_walks_unjudged_documents(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        seen = []
        for _ in range(30):
            if screen.doc in m.labels.grades(screen.qid):
                break
            seen.append((screen.qid, screen.doc))
            await pilot.press("0", "escape")  # grade it, skip the reason
            await pilot.press("n")
            await pilot.pause()
        assert ("q-restore", "d-rpo") in seen
        assert int(m.unjudged.sum()) == 0
        assert len(seen) == len(set(seen))


@pytest.mark.slow
async def test_remove_add_and_history(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        notes = collect_notes(app)
        m = screen.model
        # Another reviewer's label: remove refuses, with the reason, and nothing changes.
        screen.set_doc("d-snap")
        await pilot.press("x")
        await pilot.pause()
        assert "d-snap" in m.labels.labels("q-restore")
        assert "judged by seed" in notes[-1] and "your own judgment" in notes[-1]
        # My own label: removed, and the notice says what it removed.
        screen.set_doc("d-rpo")
        await pilot.press("2", "escape")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert "d-rpo" not in m.labels.labels("q-restore")
        assert notes[-1] == "removed q-restore d-rpo: 2 (ctrl+z to undo)"
        await pilot.press("a")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#form-version").value == "tiny-1"  # the benchmark's current version
        await pilot.press(*"d-elsewhere", "enter", "3", "enter", "enter", *"found by hand", "enter")
        await pilot.pause()
        assert "in no run and not in the corpus" in plain(form.query_one("#form-help"))
        assert "d-elsewhere" not in m.labels.labels("q-restore")
        await pilot.press("enter")  # confirmed
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-elsewhere"]
        assert (lab.grade, lab.reason, lab.collection_version) == (3, "found by hand", "tiny-1")
        assert screen.doc == "d-elsewhere"
        assert "d-elsewhere" in screen.model.missing(screen.qi, "prf")
        await pilot.press("h")
        await pilot.pause()
        history = app.screen.query_one("#history-list").changes
        kinds = [(c.doc, c.action) for c in history]
        assert ("d-rpo", "remove") in kinds and ("d-elsewhere", "set") in kinds
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)


@pytest.mark.slow
async def test_filter_by_text_slice_and_flags(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qlist = screen.query_one(QueryList)
        await pilot.press("slash", *"#dns")
        await pilot.pause()
        assert [screen.model.qids[i] for i in qlist.order] == ["q-dns"]
        assert screen.qid == "q-dns"  # the panes follow the list
        await pilot.press("enter")  # back to the list
        assert screen.focused is qlist
        await pilot.press("escape")
        await pilot.pause()
        assert qlist.count == screen.model.nq
        await pilot.press("m")
        await pilot.pause()
        assert [screen.model.qids[i] for i in qlist.order] == ["q-restore"]
        await pilot.press("escape", "s")
        await pilot.pause()
        assert screen.query_one(QueryPane).sort == "benchmark"
        assert [screen.model.qids[i] for i in qlist.order] == screen.model.qids
        await pilot.press("slash", *"no such query")
        await pilot.pause()
        assert qlist.count == 0 and screen.qi is None


@pytest.mark.slow
async def test_switch_runs(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("down", "enter")  # prf -> stemmed
        await pilot.pause()
        assert screen.model.candidate == "stemmed"
        view = screen.query_one(GatePanel).view
        assert view.candidate == "stemmed" and view.decision == "accept"
        assert [r.doc for r in screen.query_one(RankingPane).lists()["candidate"].rows][:2] == ["d-restore", "d-rpo"]
        await pilot.press("w")
        await pilot.pause()
        assert (screen.model.baseline, screen.model.candidate) == ("stemmed", "plain")
        # From the command palette, by name.
        screen.action_set_run("candidate", "prf")
        await pilot.pause()
        assert screen.model.candidate == "prf"


@pytest.mark.slow
async def test_export_from_the_app(tiny, tmp_path):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("2", "escape")
        await pilot.press("e")
        await pilot.pause()
        target = tmp_path / "out" / "reviewed.jsonl"
        target.parent.mkdir()
        field = app.screen.query_one("#export-path")
        assert field.value == str(tiny / "judgments.jsonl")  # the folder's own qrels by default; or elsewhere:
        field.value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.exported_to == target.resolve()
        notes = [n.message for n in app._notifications]
        assert any(str(target.resolve()) in n for n in notes)
    qrels = read_qrels(target)
    assert qrels.grades_for("q-restore")["d-rpo"] == 2
    first = json.loads(target.read_text().splitlines()[0])
    assert "content_hash" in first["meta"]


@pytest.mark.slow
async def test_every_command_has_a_key_and_a_palette_entry_zoom_and_help(tiny):
    """The commands, then zoom and help, in one app session (each app start costs ~0.7 CPU s)."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is not None
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        keys = {b.action for b in screen.BINDINGS}
        for c in COMMANDS:
            assert c.action in keys
            name = c.action.split("(")[0]
            assert hasattr(screen, f"action_{name}"), name
        provider = ReviewCommands(screen)
        entries = {action for _, action, _ in provider._entries()}
        assert {c.action for c in COMMANDS} - {"quit"} <= entries  # Quit: Textual's entry (test_palette_quit.py)
        assert "set_run('candidate', 'stemmed')" in entries and "filter('#dns')" in entries
        hits = [h async for h in provider.search("export")]
        assert any(h.text == "Export reviewed qrels" for h in hits)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"sort")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.query_one(QueryPane).sort == "benchmark"


async def test_bad_input_is_shown_in_place_and_quitting_exits_2(tmp_path):
    app = make_app(tmp_path / "missing-folder")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.is_running and "no such file" in str(app.error)
        assert "no such file" in str(app.screen.query_one("#loading-step").render())
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 2


@pytest.mark.slow
async def test_a_bad_run_file_is_left_out_and_named_the_rest_is_reviewed(tiny):
    (tiny / "runs" / "stemmed.jsonl").write_text('{"meta": {"name": "stemmed"}}\n{"query": "q-tls", "ranking": 7}\n')
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen) and app.error is None
        assert sorted(screen.model.runs) == ["plain", "prf"]  # the gate's two runs, still compared
        gate = str(screen.query_one("#gate-body").render())
        assert "run left out:" in gate and "stemmed.jsonl:2" in gate
        assert any("stemmed.jsonl:2" in n.message for n in app._notifications)
        # fixed on disk, read again in place: the third run comes back, the note goes
        write_benchmark(tiny)
        await pilot.press("ctrl+r")
        await ready(pilot)
        assert sorted(app.screen.model.runs) == ["plain", "prf", "stemmed"]
        assert "left out" not in str(app.screen.query_one("#gate-body").render())


@pytest.mark.slow
async def test_a_broken_labels_file_is_shown_in_place_then_fixed_and_reopened(tiny):
    good = (tiny / "judgments.jsonl").read_text()
    (tiny / "judgments.jsonl").write_text(good + '{"query": "q-tls", "doc": "d1", "grade": "high"}\n')
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.is_running and app.screen.model is None
        shown = str(app.screen.query_one("#loading-step").render())
        assert "judgments.jsonl:" in shown and "ctrl+r" in shown
        await pilot.press("n", "2")  # nothing to act on: ignored, not a crash
        (tiny / "judgments.jsonl").write_text(good)
        await pilot.press("ctrl+r")
        await ready(pilot)
        assert app.error is None and app.screen.model is not None and app.screen.model.labels.saved is not None
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


@pytest.mark.slow
async def test_qrels_file_and_runs_without_a_folder(tiny):
    app = make_app(tiny / "judgments.jsonl", runs=[f"a={tiny / 'runs' / 'plain.jsonl'}",
                                                    f"b={tiny / 'runs' / 'prf.jsonl'}"])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert (screen.model.baseline, screen.model.candidate, screen.model.k) == ("a", "b", 10)  # raw files: k=10
        assert screen.model.labels.saved


def test_run_review_refuses_missing_inputs_before_opening_the_screen(tmp_path, capsys):
    from types import SimpleNamespace

    from rankgate.tui.app import run_review

    args = SimpleNamespace(path=str(tmp_path / "nope"), runs=[], db=None, reviewer=None)
    assert run_review(args) == 2
    assert "no such file or folder" in capsys.readouterr().err
    args = SimpleNamespace(path=None, runs=[], db=None, reviewer=None)
    assert run_review(args) == 2


@pytest.mark.slow
async def test_quit_while_loading(tiny, monkeypatch):
    import time

    import rankgate.tui.app as appmod
    from rankgate.tui.loader import Cancelled

    def slow(inputs, progress, **_):
        for i in range(1000):  # 20 s: long enough that a loaded machine cannot finish it first
            progress(f"step {i}", i, 1000)  # raises Cancelled once the app leaves
            time.sleep(0.02)
        raise AssertionError("the load was not stopped")

    monkeypatch.setattr(appmod, "load", slow)
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        assert isinstance(app.screen, ReviewScreen) and app.screen.model is None
        await pilot.press("n", "2")  # nothing to act on yet: ignored
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.error is None and Cancelled


@pytest.mark.slow
async def test_an_edit_does_not_pull_the_query_out_from_under_the_cursor(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("v")  # queries needing review
        await pilot.pause()
        assert screen.qid == "q-restore" and screen.doc == "d-rpo"
        await pilot.press("2", "escape")  # its last unjudged top-k document
        await pilot.pause()
        assert screen.model.unjudged[screen.qi] == 0
        assert screen.qid == "q-restore"  # still here, still listed
        await pilot.press("n")  # on to the next query needing review
        await pilot.pause()
        assert screen.qid != "q-restore" and screen.model.unjudged[screen.qi] > 0


@pytest.mark.slow
async def test_a_significance_rule_is_brought_up_to_date_after_an_edit(tiny, monkeypatch):
    from rankgate.tui.messages import GateDecided
    from rankgate.tui.model import ReviewModel
    from tests.tui.test_model import POLICY

    monkeypatch.setattr(ReviewModel, "FRESH_INLINE_S", 0.0)  # as on a large benchmark: tests in a worker

    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('[gate]\n', '[gate]\npolicy = "policy.toml"\n'))
    (tiny / "policy.toml").write_text(POLICY)
    app = make_app(tiny)
    decided = []
    async with app.run_test(size=SIZE, message_hook=lambda m: decided.append(m.view)
                            if isinstance(m, GateDecided) else None) as pilot:
        await ready(pilot)
        screen = app.screen
        panel = screen.query_one(GatePanel)
        shown = []
        original = panel.show
        panel.show = lambda view: (shown.append(view), original(view))
        await pilot.press("2", "escape")
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert shown[0].stale  # at once: everything current but the significance test
        assert decided and not decided[-1].stale and decided[-1].version == screen.model.version
        assert shown[-1] is decided[-1] and not panel.view.stale
        assert "updating" not in plain(screen.query_one("#gate-body"))


@pytest.mark.slow
async def test_a_large_benchmark_builds_the_review_queue_aside(tiny, monkeypatch):
    """Above QUEUE_INLINE queries the queue is built by a worker: the key says so at once, the screen
    stays usable, and the key's work is done when the queue is ready."""
    monkeypatch.setattr(ReviewScreen, "QUEUE_INLINE", 0)
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen, notes = app.screen, collect_notes(app)
        screen.show_query(screen.model.qindex["q-gpu"])
        await pilot.pause()
        assert not screen.model.queue_fresh()
        await pilot.press("u")
        assert "building the review queue" in notes[0]
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.model.queue_fresh() and (screen.qid, screen.doc) == ("q-restore", "d-rpo")
        assert "could flip" in notes[-1]


def collect_notes(app) -> list[str]:
    """The messages of the app's and its screen's notifications, from now on."""
    notes: list[str] = []
    app.notify = lambda message, **kw: notes.append(str(message))
    app.screen.notify = app.notify
    return notes


@pytest.mark.slow
async def test_review_queue_key_goes_to_the_most_decisive_unjudged_document(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen, notes = app.screen, collect_notes(app)
        await pilot.press("v")  # a filter; the key must still reach the queue's query
        await pilot.press("escape")
        screen.show_query(screen.model.qindex["q-gpu"])  # start elsewhere
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        queue = screen.model.review_queue()
        first = queue[0]
        assert (first.query, first.doc) == ("q-restore", "d-rpo")  # could flip the gate's decision
        assert (screen.qid, screen.doc) == ("q-restore", "d-rpo")
        assert screen.query_one(RankingPane).lists()["candidate"].cursor == 1
        assert notes and first.why() in notes[-1] and "could flip" in notes[-1]
        # Pressing again skips to the next item; grading it, then pressing, goes on from the top.
        await pilot.press("u")
        await pilot.pause()
        second = (screen.qid, screen.doc)
        assert second == (queue[1].query, queue[1].doc)
        await pilot.press("u")
        await pilot.pause()
        third = (screen.qid, screen.doc)
        assert third != second
        await pilot.press("2")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.model.labels.grades(third[0])[third[1]] == 2
        await pilot.press("u")
        await pilot.pause()
        assert (screen.qid, screen.doc) == ("q-restore", "d-rpo")  # the most decisive one, still unjudged
        # Walk the queue, grading each: it empties, and says so.
        for _ in range(len(queue)):
            await pilot.press("u")
            await pilot.pause()
            if "empty" in notes[-1]:
                break
            await pilot.press("0")
            await pilot.press("escape")
            await pilot.pause()
        assert "empty" in notes[-1]
        assert all(screen.model.unjudged == 0)


@pytest.mark.slow
async def test_compare_screen_and_back_to_a_query(tiny):
    from rankgate.core.compare import compare
    from rankgate.tui.screens.compare import CompareScreen, QueryChangeList

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        m = review.model
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        c = screen.comparison
        assert c is not None and c.baseline == "plain"
        assert [r.candidate for r in c.candidates] == ["prf", "stemmed"]
        # The core's own figures, on the same labels.
        core = compare(m.labels.to_qrels(), m.runs["plain"].run, [m.runs["prf"].run], k=m.k,
                       measures=list(m.measures), rel_level=m.level, queries=dict(m.queries),
                       resamples=m.policy.resamples, seed=m.policy.seed, confidence=m.policy.confidence)
        assert c.candidates[0].summary == core.candidates[0].summary
        prf = c.candidates[0]
        assert prf.newly_failed == ["q-restore"]
        from rich.console import Console

        console = Console(width=200, record=True, file=open("/dev/null", "w"))
        console.print(screen.macro_table())
        for part in screen.changed():  # under the table, not in a column of it
            console.print(part)
        text = console.export_text()
        assert "newly failed (1): q-restore" in text and "95% CI" in text and "wins/losses/ties" in text
        for part in screen.details():
            console.print(part)
        text = console.export_text()
        assert "judged in the top 3:" in text and "Δ R@3" in text  # coverage, then each slice's deltas
        assert prf.slices
        for tag, row in prf.slices.items():
            assert tag in text and f"{row['measures']['R@3']['delta']:+.3f}" in text
        lst = screen.query_one(QueryChangeList)
        # The highlighted query's relevant documents, with their ranks in both runs.
        lst.cursor = next(i for i, r in enumerate(prf.rows) if r.query == "q-restore")
        await pilot.pause()
        moves = str(screen.query_one("#compare-moves").render())
        assert prf.movement("q-restore") and "q-restore" in moves
        assert all(mv.doc in moves for mv in prf.movement("q-restore"))
        assert lst.report is prf
        changes = [r.change for r in prf.rows]
        assert changes == sorted(changes, reverse=True)  # most changed first
        await pilot.press("c")
        await pilot.pause()
        assert lst.report.candidate == "stemmed"
        await pilot.press("c")
        await pilot.pause()
        assert lst.report.candidate == "prf"
        # Enter on the second row: back to the review, on that query.
        target = prf.rows[1].query
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.screen is review
        assert review.qid == target
        # Escape closes without moving.
        await pilot.press("C")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is review and review.qid == target


@pytest.mark.slow
async def test_adjudication_screen_records_the_final_grade(tiny):
    from rankgate.tui.screens.adjudicate import AdjudicateScreen
    from tests.tui.factory import MARKUP_DOC, MARKUP_REASON

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        m = review.model
        # No second reviewer yet: nothing to adjudicate, and the screen says so.
        await pilot.press("J")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AdjudicateScreen) and screen.items == []
        assert "No open disagreements" in plain(screen.query_one("#adj-pair"))
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is review
        # A second reviewer disagrees on two pairs (one full of markup).
        ws = m.labels.backend.ws
        ws.set_judgment("q-dns", "d-ttl", 0, reason="[b]TTLs[/b] are generic", reviewer="ana")
        ws.set_judgment("q-markup", MARKUP_DOC, 3, reason="the answer", reviewer="ana")
        for q in ("q-dns", "q-markup"):
            m.labels._cache.pop(q, None)
            m.apply_edit(q)
        await pilot.press("J")
        await pilot.pause()
        screen = app.screen
        assert [(d.query, d.doc) for d in screen.items] == [("q-dns", "d-ttl"), ("q-markup", MARKUP_DOC)]
        from rich.console import Console

        def shown() -> str:
            console = Console(width=150, record=True, file=open("/dev/null", "w"))
            console.print(screen.pair_view(screen.current))
            return console.export_text()

        text = shown()
        assert "new record still returns nxdomain" in text and "[b]TTLs[/b] are generic" in text
        assert "TTLs in general." in text and "seed" in text and "ana" in text
        await pilot.press("n")
        await pilot.pause()
        text = shown()
        assert MARKUP_DOC in text and "[bold red]boom[/]" in text and "\\x1b" in text  # literal
        assert "[bold]not bold[/bold]" in text and "[blink]doc text[/blink]" in text  # reason, corpus text
        await pilot.press("p")
        await pilot.pause()
        # A grade, no reason: refused; then a reason: recorded.
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert "needs a reason" in plain(screen.query_one("#adj-help"))
        await pilot.press(*"negative ttl matters")
        await pilot.press("enter")
        await pilot.pause()
        assert [(d.query, d.doc) for d in ws.disagreements()] == [("q-markup", MARKUP_DOC)]
        assert [(d.query, d.doc) for d in screen.items] == [("q-markup", MARKUP_DOC)]
        lab = m.labels.labels("q-dns")["d-ttl"]
        assert (lab.grade, lab.how, lab.reason) == (2, "adjudicated by tester", "negative ttl matters")
        # Escape cancels a grade being given, then closes; the review's panes show the adjudication.
        await pilot.press("0")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.grade is None and ws.disagreements()
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is review
        review.go_to("q-dns", "d-ttl")
        await pilot.pause()
        assert "adjudicated by tester" in plain(review.query_one("#label-detail"))
        assert m.num_rel[m.qindex["q-dns"]] == 2  # d-negcache 2 and d-ttl now 2


@pytest.mark.slow
async def test_blind_review_toggle_shows_your_own_grades_and_no_ranks(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        review = app.screen
        review.go_to("q-dns", "d-ttl")
        await pilot.pause()
        assert set(review.model.labels.labels("q-dns")) == {"d-negcache", "d-ttl", "d-dnssec"}  # seed's
        await pilot.press("B")
        await ready(pilot)
        assert app.screen is review and app.inputs.blind
        m = review.model
        assert m.labels.labels("q-dns") == {}  # the seed reviewer's labels are hidden; tester has none
        assert (review.qid, review.doc) == ("q-dns", "d-ttl")  # the same query and document after re-opening
        assert "BLIND" in plain(review.query_one("#top-bar"))
        cand = review.query_one(RankingPane).lists()["candidate"]
        assert cand.blind and [r.doc for r in cand.rows] == sorted(["d-negcache", "d-ttl", "d-dnssec"])
        assert "#" not in cand.render_header(60).plain and "move" not in cand.render_header(60).plain
        assert "d-ttl" in cand.render_row(cand.rows.index(next(r for r in cand.rows if r.doc == "d-ttl")), 60).plain
        # A grade in blind review is the reviewer's own judgment.
        await pilot.press("3")
        await pilot.press("escape")
        await pilot.pause()
        assert m.labels.grades("q-dns") == {"d-ttl": 3}
        # Out of blind review: everyone's labels again (the pair now has two reviewers' grades), ranks shown.
        await pilot.press("B")
        await ready(pilot)
        assert not app.inputs.blind
        m = review.model
        assert set(m.labels.labels("q-dns")) == {"d-negcache", "d-ttl", "d-dnssec"}
        assert m.labels.labels("q-dns")["d-ttl"].grade == 3  # the latest judgment (tester's)
        assert not review.query_one(RankingPane).lists()["candidate"].blind
        assert "BLIND" not in plain(review.query_one("#top-bar"))
        ws = m.labels.backend.ws
        assert {(d.query, d.doc) for d in ws.disagreements()} == {("q-dns", "d-ttl")}


def test_blind_flag_reaches_the_loader():
    from rankgate.cli import build_parser
    from rankgate.tui.loader import Inputs

    args = build_parser().parse_args(["review", "some/folder", "--blind", "--reviewer", "ana"])
    inputs = Inputs.from_args(args)
    assert inputs.blind is True and inputs.reviewer == "ana"
    assert Inputs.from_args(build_parser().parse_args(["review", "x"])).blind is False


@pytest.mark.slow
async def test_labels_another_process_is_writing_open_read_only(tiny):
    """A second review of the same labels shows them, refuses edits with the reason, and says so."""
    from rankgate.store.workspace import Workspace

    first = make_app(tiny)
    async with first.run_test(size=SIZE) as pilot:
        await ready(pilot)  # the first review holds the store (its import is done)
        db = first.screen.model.labels.backend.ws.path
    with Workspace.open(db, reviewer="other"):  # another writer, for the whole second review
        app = make_app(tiny)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            screen = app.screen
            assert app.error is None and screen.model is not None
            gate = str(screen.query_one("#gate-body").render())
            assert "labels read-only" in gate and "other" in gate
            notes = collect_notes(app)
            qid = screen.qid
            before = dict(screen.model.labels.grades(qid))
            await pilot.press("2")
            await pilot.pause()
            assert any("label not saved" in n and "read-only" in n for n in notes)
            assert screen.model.labels.grades(qid) == before


@pytest.mark.slow
async def test_a_bad_policy_is_named_and_the_gate_uses_the_defaults(tiny):
    toml = tiny / "benchmark.toml"
    toml.write_text(toml.read_text().replace('[gate]\n', '[gate]\nmeasures = ["no-such-measure@3"]\n'))
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert app.error is None and screen.model is not None
        gate = str(screen.query_one("#gate-body").render())
        assert "policy not applied, the gate uses the defaults" in gate and "benchmark.toml" in gate
        assert [d["name"] for d in screen.model.gate().check_details][:2] == ["recall_not_lower", "mrr_not_lower"]
