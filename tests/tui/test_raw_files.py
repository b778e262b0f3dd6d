"""`rankgate review QRELS --runs ... --queries ... --corpus ... --k ... --rel-level ...`: raw files, no manifest.

The document pane names what is missing in the words of the mode (a flag without a manifest, the
manifest's key with one), and a corpus that cannot be read stays said on every document."""

from __future__ import annotations

import pytest

import json

from rankgate.tui.app import ReviewApp
from rankgate.tui.loader import Inputs
from rankgate.tui.widgets.doc_view import DocView
from tests.tui.conftest import SIZE, ready
from tests.tui.factory import write_benchmark

NEL = "\x85"


def raw_files(tmp_path):
    (tmp_path / "qrels.txt").write_text("101 0 p1 3\n101 0 p2 0\n102 0 p3 2\n102 0 p4 1\n", encoding="utf-8")
    (tmp_path / "a.trec").write_text("101 Q0 p2 1 9 a\n101 Q0 p1 2 8 a\n101 Q0 p5 3 7 a\n"
                                     "102 Q0 p3 1 9 a\n102 Q0 p4 2 8 a\n102 Q0 p6 3 7 a\n", encoding="utf-8")
    (tmp_path / "b.trec").write_text("101 Q0 p1 1 9 b\n101 Q0 p5 2 8 b\n101 Q0 p2 3 7 b\n"
                                     "102 Q0 p6 1 9 b\n102 Q0 p3 2 8 b\n102 Q0 p4 3 7 b\n", encoding="utf-8")
    (tmp_path / "topics.tsv").write_text("101\twhat is a goldfish\n102\twifi vs bluetooth\n103\tunjudged\n",
                                         encoding="utf-8")
    with open(tmp_path / "passages.jsonl", "w", encoding="utf-8") as f:
        for i in range(1, 7):
            f.write(json.dumps({"docid": f"p{i}", "text": f"passage {i} text{NEL}goes on"}) + "\n")
    return tmp_path


def app_for(tmp_path, **flags) -> ReviewApp:
    runs = [str(tmp_path / "a.trec"), str(tmp_path / "b.trec")]
    inputs = Inputs(str(tmp_path / "qrels.txt"), runs, str(tmp_path / "labels.db"), None)
    for key, value in flags.items():
        setattr(inputs, key, value)
    return ReviewApp(inputs, cursor_blink=False)


def doc_text(app) -> str:
    shown = app.screen.query_one(DocView).query_one("#doc-body")._shown
    return shown.plain if shown is not None else ""


async def test_raw_files_show_query_and_passage_texts(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d, queries=str(d / "topics.tsv"), corpus=str(d / "passages.jsonl"), k=2, rel_level=2,
                  measures=["nDCG@10"])
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert app.error is None
        m = screen.model
        assert m.policy.k == 2 and m.policy.checks.rel_level == 2
        assert [x.name for x in m.policy.measures] == ["nDCG@10"]
        assert m.queries["101"].text == "what is a goldfish"
        doc = screen.doc
        assert doc is not None
        # the whole passage, its U+0085 shown as an escape (core.text.visible), not a line break
        assert f"passage {doc[1:]} text\\x85goes on" in doc_text(app)
        assert m.queries[screen.qid].text.replace(" ", "&#160;") in app.export_screenshot()  # the query pane


@pytest.mark.slow
async def test_no_corpus_flag_is_named_in_the_flags_words(tmp_path):
    d = raw_files(tmp_path)
    app = app_for(d, queries=str(d / "topics.tsv"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        text = doc_text(app)
        assert "no corpus given: --corpus FILE" in text and "benchmark.toml" not in text


@pytest.mark.slow
async def test_a_benchmark_without_corpus_is_named_in_the_manifests_words(tmp_path):
    folder = write_benchmark(tmp_path / "b")
    manifest = folder / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('corpus = "corpus.jsonl"\n', ""))
    app = ReviewApp(Inputs(str(folder), db=str(tmp_path / "l.db")), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert 'this benchmark has no corpus: add corpus = "FILE" to benchmark.toml or pass --corpus FILE' \
            in doc_text(app)
    # --corpus gives one to a folder that has none
    app = ReviewApp(Inputs(str(folder), db=str(tmp_path / "l.db"), corpus=str(folder / "corpus.jsonl")),
                    cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "no corpus" not in doc_text(app) and "reading the corpus" not in doc_text(app)


async def test_an_unreadable_corpus_stays_said(tmp_path):
    d = raw_files(tmp_path)
    (d / "passages.jsonl").write_text('{"docid": "p1", "text": "fine"}\n{"docid": "p2", "text": "cut\n',
                                      encoding="utf-8")
    app = app_for(d, corpus=str(d / "passages.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        first = doc_text(app)
        assert "could not read the corpus" in first and "passages.jsonl:2" in first
        await pilot.press("j")  # another document: still said
        await pilot.pause()
        assert "could not read the corpus" in doc_text(app)


@pytest.mark.slow
async def test_review_opens_a_folder_rankgate_init_made(tmp_path, capsys):
    from rankgate.cli import main

    d = raw_files(tmp_path)
    folder = tmp_path / "bench"
    assert main(["init", str(folder), "--qrels", str(d / "qrels.txt"), "--runs", str(d / "a.trec"), "--runs",
                 str(d / "b.trec"), "--queries", str(d / "topics.tsv"), "--corpus", str(d / "passages.jsonl"),
                 "--k", "2"]) == 0
    app = ReviewApp(Inputs(str(folder), db=str(tmp_path / "l.db")), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.error is None
        m = app.screen.model
        assert m.policy.k == 2 and m.queries["101"].text == "what is a goldfish"
        assert m.baseline == "a" and m.candidate == "b"
        assert "text\\x85goes on" in doc_text(app)


@pytest.mark.slow
async def test_label_from_scratch_walks_the_pool(tmp_path, monkeypatch):
    """Queries, a corpus and runs, no labels yet: the workspace is made (named after the queries file)
    and the review queue (u) walks the union of the runs' top k; a grade is stored."""
    from rankgate.store.workspace import Workspace

    d = raw_files(tmp_path)
    inputs = Inputs(None, [str(d / "a.trec"), str(d / "b.trec")], queries=str(d / "topics.tsv"),
                    corpus=str(d / "passages.jsonl"), k=2)
    app = ReviewApp(inputs, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.error is None
        screen = app.screen
        m = screen.model
        pool = {(q, doc) for q, docs in {"101": ["p2", "p1", "p1", "p5"], "102": ["p3", "p4", "p6", "p3"]}.items()
                for doc in docs}
        queue = m.review_queue()
        assert {(i.query, i.doc) for i in queue.items} == pool
        await pilot.press("u")
        await pilot.pause()
        first = (screen.qid, screen.doc)
        assert first in pool
        assert "goes on" in doc_text(app)
        await pilot.press("2")
        await pilot.pause()
        await pilot.press(*"says so", "enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
    db = inputs.db
    assert db and "topics" in db
    ws = Workspace.open(db, readonly=True)
    try:
        assert [(j.query, j.doc, j.grade) for j in ws.judgments(first[0])] == [(first[0], first[1], 2)]
    finally:
        ws.close()


def test_review_without_labels_or_queries_names_both_ways(tmp_path):
    import pytest

    from rankgate.core.errors import InputError
    from rankgate.tui.loader import check_inputs

    with pytest.raises(InputError, match="--runs FILE --queries FILE"):
        check_inputs(Inputs(None, [str(tmp_path / "a.trec")]))


async def test_the_corpus_read_reports_its_progress(tmp_path):
    from rankgate.tui.messages import CorpusProgress

    d = raw_files(tmp_path)
    seen: list[int] = []
    app = app_for(d, corpus=str(d / "passages.jsonl"))
    hook = lambda m: seen.append(m.percent) if isinstance(m, CorpusProgress) else None  # noqa: E731
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await ready(pilot)
        assert seen and seen[-1] == 100 and seen == sorted(seen)
        view = app.screen.query_one(DocView)
        view.corpus = None  # as while it reads: the pane says how far
        view.reading(42)
        assert "reading the corpus… 42%" in doc_text(app)


@pytest.mark.slow
async def test_labels_only_review_hides_the_run_panes_and_grades(tmp_path):
    """A qrels file with its queries and corpus and no runs: the labels and their texts, graded as usual."""
    from rankgate.tui.widgets.gate_panel import GatePanel
    from rankgate.tui.widgets.label_editor import LabelList
    from rankgate.tui.widgets.ranking import RankingPane

    d = raw_files(tmp_path)
    inputs = Inputs(str(d / "qrels.txt"), [], str(d / "labels.db"), None)
    inputs.queries, inputs.corpus = str(d / "topics.tsv"), str(d / "passages.jsonl")
    app = ReviewApp(inputs, cursor_blink=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("escape")  # from the judging screen (a labels-only review opens on it) to the panes
        await pilot.pause()
        screen = app.screen
        assert app.error is None and screen.labels_only
        assert not screen.query_one(GatePanel).display or not screen.query_one(GatePanel).region.area
        assert not screen.query_one(RankingPane).region.area  # hidden at 80 columns too
        assert screen.query_one(DocView).region.area and screen.query_one(LabelList).region.area
        shot = app.export_screenshot()
        assert "labels&#160;only" in shot and "ACCEPT" not in shot and "REJECT" not in shot
        assert screen.qid == "101" and screen.doc in ("p1", "p2")
        assert f"passage {screen.doc[1:]} text" in doc_text(app)
        screen.query_one(LabelList).focus()
        await pilot.pause()
        screen.ask_reason = False
        screen.ask_whose = False  # the file's label: a judgment of my own is added (no question asked)
        doc = screen.doc
        await pilot.press("1")
        await pilot.pause()
        assert screen.model.labels.mine("101", doc).grade == 1
        await pilot.press("b")  # the run picker has nothing to pick: the key is off
        await pilot.pause()
        assert app.screen is screen


async def test_no_runs_and_no_texts_is_still_refused(tmp_path):
    d = raw_files(tmp_path)
    app = ReviewApp(Inputs(str(d / "qrels.txt"), [], str(d / "labels.db"), None), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "no runs given" in str(app.error) and "--queries/--corpus" in str(app.error)


def test_raw_files_open_at_k_10_as_init_writes_a_folder_keeps_its_own(tmp_path):
    from rankgate.cli import build_parser
    from rankgate.cli.review import RAW_K, raw_defaults

    d = raw_files(tmp_path)
    folder = write_benchmark(tmp_path / "b")

    def k_of(*argv):
        args = build_parser().parse_args(["review", *argv])
        raw_defaults(args)
        return args.k

    assert RAW_K == 10 and k_of(str(d / "qrels.txt"), "--runs", str(d / "a.trec")) == 10
    assert k_of(str(d / "qrels.txt"), "--runs", str(d / "a.trec"), "--k", "4") == 4
    assert k_of(str(folder)) is None  # the manifest's k
    (tmp_path / "p.toml").write_text("k = 5\n")
    assert k_of(str(d / "qrels.txt"), "--runs", str(d / "a.trec"), "--policy", str(tmp_path / "p.toml")) is None


async def test_labels_only_opens_on_the_first_listed_label_with_a_text_and_gives_the_text_its_width(tmp_path):
    """No runs: the first document shown is the label list's first (highest grade) that the corpus has a text
    for, not the first by ID; the query list has no measure columns, so the query text gets their width."""
    from rankgate.tui.widgets.label_editor import LabelList
    from rankgate.tui.widgets.query_list import QueryList

    d = raw_files(tmp_path)
    # a0 sorts first by ID and z9 has the highest grade, but neither has a text; p3 and p4 have
    (d / "qrels.txt").write_text("101 0 a0 1\n101 0 z9 3\n101 0 p4 1\n101 0 p3 2\n", encoding="utf-8")
    long_text = "which passage explains how a goldfish remembers the shape of its bowl after a week away"
    (d / "topics.tsv").write_text(f"101\t{long_text}\n", encoding="utf-8")
    inputs = Inputs(str(d / "qrels.txt"), [], str(d / "labels.db"), None)
    inputs.queries, inputs.corpus = str(d / "topics.tsv"), str(d / "passages.jsonl")
    app = ReviewApp(inputs, cursor_blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        await pilot.press("escape")  # from the judging screen to the panes
        await pilot.pause()
        screen = app.screen
        assert screen.labels_only and screen.qid == "101"
        assert [lab.doc for lab in screen.query_one(LabelList).rows] == ["z9", "p3", "a0", "p4"]
        assert screen.doc == "p3"  # the first listed with a text
        assert "passage 3 text" in doc_text(app)
        lst = screen.query_one(QueryList)
        width = lst.size.width
        header, row = lst.render_header(width).plain, lst.render_row(0, width).plain
        assert "measures hidden" not in header and "labels only" not in header and "RR" not in header
        _, _, textw = lst._layout(width)
        lst.labels_only = False
        assert textw > lst._layout(width)[2] + 30  # the measure columns' width went to the text
        lst.labels_only = True
        assert long_text[:textw - 1] in row
        # a document the reviewer moves to stays, even without a text, when the corpus is read again
        screen.set_doc("z9")
        screen.corpus_loaded()
        assert screen.doc == "z9"


def shown_grade(app, qid, doc):
    return app.review.model.labels.grades(qid).get(doc)


@pytest.mark.slow
async def test_a_changed_qrels_file_is_offered_on_open_as_a_benchmarks_is(tmp_path):
    """F2 (s8): a workspace opened on raw files noticed no change of the file; now, as on a benchmark folder,
    the app says so first and offers b (bring the changes in) or k (keep the workspace's labels); ctrl+r too."""
    from tests.tui.test_sync import loaded, plain
    from rankgate.tui.screens.review import ReviewScreen
    from rankgate.tui.screens.sync import SyncScreen

    d = raw_files(tmp_path)
    qrels = d / "qrels.txt"
    app = ReviewApp(Inputs(str(qrels), [str(d / "a.trec"), str(d / "b.trec")]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)  # the first open imports the file: nothing to offer
        assert shown_grade(app, "101", "p1") == 3
        qrels.write_text(qrels.read_text().replace("101 0 p1 3", "101 0 p1 0"))  # changed while open
        await pilot.press("ctrl+r")  # read the files again: the change is offered
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        text = plain(app.screen.query_one("#sync-summary"))
        assert str(qrels) in text and "in the qrels file since then: 0 added, 1 changed, 0 removed" in text
        await pilot.press("escape")  # later: asked again on the next open
        await pilot.pause()
        assert shown_grade(app, "101", "p1") == 3
    app = ReviewApp(Inputs(str(qrels), [str(d / "a.trec"), str(d / "b.trec")]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        await pilot.press("b")  # bring it in: the app shows the file's grade
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)
        assert shown_grade(app, "101", "p1") == 0
        assert app.unexported == 0
    app = ReviewApp(Inputs(str(qrels), [str(d / "a.trec"), str(d / "b.trec")]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)  # in sync now: nothing to ask
        qrels.write_text(qrels.read_text().replace("102 0 p3 2", "102 0 p3 1"))
    app = ReviewApp(Inputs(str(qrels), [str(d / "a.trec"), str(d / "b.trec")]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, SyncScreen)
        await pilot.press("k")  # keep the workspace's label: not asked again
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and shown_grade(app, "102", "p3") == 2
        assert app.review.default_export_path() == str(d / "qrels.reviewed.txt")  # beside it, not the file
        before = qrels.read_bytes()
        assert app.review.export_to(str(qrels)) is None  # the input itself: refused, never replaced
        assert qrels.read_bytes() == before
        assert app.review.export_to(app.review.default_export_path()) is not None  # its own format
        assert "102 0 p3 2\n" in (d / "qrels.reviewed.txt").read_text()
    app = ReviewApp(Inputs(str(qrels), [str(d / "a.trec"), str(d / "b.trec")]), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert isinstance(app.screen, ReviewScreen)


@pytest.mark.slow
async def test_the_add_form_on_raw_files_needs_no_collection_version(tmp_path):
    """s8 newcomer F17: raw files name no collection version, so `a` refused an empty version field while a
    grade key needs none; now the field may stay empty (a benchmark that names one still needs it: test_expert)."""
    from rankgate.tui.screens.label_form import LabelForm

    d = raw_files(tmp_path)
    app = app_for(d)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        m = app.screen.model
        qid = app.screen.qid
        await pilot.press("a")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LabelForm) and form.query_one("#form-version").value == ""
        await pilot.press(*"p6", "enter", "2", "enter", "enter", *"on topic", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, LabelForm), form.query_one("#form-help").content
        lab = m.labels.labels(qid)["p6"]
        assert (lab.grade, lab.reason, lab.collection_version or "") == (2, "on topic", "")
