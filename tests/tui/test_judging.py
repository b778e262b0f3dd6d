"""The judging screen (screens/judging.py): one key per judgment, undo, a reason the scale asks for; IDs cut in
the middle; notices on their own line; the size the app needs."""

from __future__ import annotations

import pytest

from rankgate.core.text import middle_cut
from rankgate.tui.safe import id_excerpt
from tests.tui.conftest import make_app, ready


def labels_only_app(tmp_path):
    """A qrels file with its topics and passages and no runs (tests/tui/test_raw_files.py): labels-only review."""
    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs
    from tests.tui.test_raw_files import raw_files

    d = raw_files(tmp_path)
    inputs = Inputs(str(d / "qrels.txt"), [], str(d / "labels.db"), None)
    inputs.queries, inputs.corpus = str(d / "topics.tsv"), str(d / "passages.jsonl")
    return ReviewApp(inputs, cursor_blink=False)


async def open_judging(pilot):
    from rankgate.tui.screens.judging import JudgingScreen

    await ready(pilot)
    await pilot.press("l")
    await pilot.pause()
    assert isinstance(pilot.app.screen, JudgingScreen)
    return pilot.app.screen


@pytest.mark.slow
async def test_one_grade_key_stores_the_grade_and_shows_the_next_document(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        book = screen.model.labels
        first = screen.cursor.at
        assert first is not None and first.doc not in book.grades(first.qid)  # it needs a judgment
        await pilot.press("2")
        await pilot.pause()
        assert book.mine(first.qid, first.doc).grade == 2  # stored, in the store's history
        assert any(c.doc == first.doc and c.grade == 2 for c in book.history(first.qid))
        second = screen.cursor.at
        assert second != first and second.doc not in book.grades(second.qid)
        await pilot.press("1")
        await pilot.pause()
        assert book.mine(second.qid, second.doc).grade == 1
        assert screen.cursor.at not in (first, second)
        assert screen.judged == 2 and not screen.query_one("ReasonBar").is_open  # no reason asked: one key each


@pytest.mark.slow
async def test_undo_goes_back_to_the_previous_document_and_its_state(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        book = screen.model.labels
        first = screen.cursor.at
        await pilot.press("3")
        await pilot.pause()
        assert screen.cursor.at != first
        await pilot.press("u")
        await pilot.pause()
        assert screen.cursor.at == first and book.mine(first.qid, first.doc) is None  # unjudged again
        await pilot.press("0")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert screen.cursor.at == first and first.doc not in book.grades(first.qid)


@pytest.mark.slow
async def test_a_grade_the_scale_asks_a_reason_for_opens_the_box_and_is_stored_with_it(tiny):
    toml = tiny / "benchmark.toml"
    toml.write_text("reason_required = [0]\n" + toml.read_text())
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        book = screen.model.labels
        first = screen.cursor.at
        await pilot.press("0")
        await pilot.pause()
        assert screen.query_one("ReasonBar").is_open and screen.cursor.at == first
        assert book.mine(first.qid, first.doc) is None  # nothing stored before the reason
        await pilot.press("escape")  # no reason: nothing stored, the same document
        await pilot.pause()
        assert book.mine(first.qid, first.doc) is None and screen.cursor.at == first
        await pilot.press("0", *"off topic", "enter")
        await pilot.pause()
        lab = book.mine(first.qid, first.doc)
        assert (lab.grade, lab.reason) == (0, "off topic") and screen.cursor.at != first
        await pilot.press("2")  # a grade with no reason asked: one key
        await pilot.pause()
        assert not screen.query_one("ReasonBar").is_open


def test_reason_required_must_name_grades_of_the_scale(tiny):
    from rankgate.core.benchmark import load_manifest
    from rankgate.core.errors import InputError

    toml = tiny / "benchmark.toml"
    text = toml.read_text()
    toml.write_text("reason_required = [7]\n" + text)
    with pytest.raises(InputError, match="reason_required: grade 7 is not on the grade scale"):
        load_manifest(tiny)
    toml.write_text("reason_required = [0, 1]\n" + text)
    assert load_manifest(tiny).reason_required == {0, 1}


def test_ids_are_cut_in_the_middle():
    assert middle_cut("msmarco_passage_00_1234567", 21) == "msmarco_pa…00_1234567"
    assert middle_cut("short", 21) == "short" and middle_cut("abc", 1) == "…"
    many = [f"msmarco_passage_00_12345{i:02d}" for i in range(10)]
    cut = [id_excerpt(x, 18) for x in many]
    assert len(set(cut)) == len(many) and all(len(c) == 18 for c in cut)  # each still reads differently
    assert id_excerpt("d\x1b[2Jx" * 10, 12).count("\x1b") == 0  # escaped first


@pytest.mark.slow
async def test_the_query_list_and_rankings_cut_long_ids_in_the_middle(tmp_path):
    from tests.tui.factory import write_benchmark
    import json

    folder = write_benchmark(tmp_path / "long")
    long_doc = "msmarco_passage_00_1234567"
    for run in ("plain", "prf", "stemmed"):
        path = folder / "runs" / f"{run}.jsonl"
        lines = path.read_text().splitlines()
        rows = [json.loads(x) for x in lines]
        for r in rows:
            if r.get("query") == "q-new":
                r["ranking"] = [long_doc] + r["ranking"]
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    app = make_app(folder)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.go_to("q-new", long_doc)
        await pilot.pause()
        from rankgate.tui.widgets.ranking import RankingList

        rows = [lst.render_row(0, 32).plain for lst in screen.query(RankingList)]  # a narrow column
        assert rows and all("…" in r and r.rstrip(" =").endswith("1234567") or "…0_1234567" in r for r in rows), rows


@pytest.mark.slow
async def test_notices_sit_on_their_own_line_not_over_the_panes(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:  # (toasts are off in tests by default)
        await ready(pilot)
        app.screen.notify("saved the thing", title="note")
        await pilot.pause()
        screen_before_dialog = app.screen
        line = app.screen.query_one("#notice")
        assert line.display and "saved the thing" in line.message
        await pilot.pause()
        shot = app.export_screenshot()
        assert app._notifications and shot.count("saved&#160;the&#160;thing") == 1  # on the line, no toast too
        from textual.widgets._toast import Toast

        await pilot.press("question_mark")  # a dialog: the notice is not shown again over it as a toast
        await pilot.pause()
        await pilot.pause()
        assert app.screen is not screen_before_dialog and not app.screen.query(Toast)
        app.notify("said over the dialog")  # on the line beneath it, not over the dialog's text
        await pilot.pause()
        assert not app.screen.query(Toast) and "said over the dialog" in line.message
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("i")  # the whole IDs, on the same line
        await pilot.pause()
        assert f"query {app.screen.qid}" in line.message


@pytest.mark.slow
async def test_the_labels_only_review_moves_on_after_a_grade(tmp_path):
    from rankgate.tui.widgets.label_editor import LabelList

    app = labels_only_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        from rankgate.tui.screens.judging import JudgingScreen

        assert isinstance(app.screen, JudgingScreen)  # labels are what this session is for
        await pilot.press("escape")
        await pilot.pause()
        screen = app.screen
        screen.query_one(LabelList).focus()
        screen.ask_reason = False
        screen.ask_whose = False
        await pilot.pause()
        first = screen.doc
        await pilot.press("3")
        await pilot.pause()
        assert screen.doc != first  # the next label, not the same passage again
        await pilot.press("3")
        await pilot.pause()
        graded = [d for d in ("p1", "p2") if (lab := screen.model.labels.mine("101", d)) is not None]
        assert len(graded) == 2
        from textual.widgets import Input  # the filter offers what works without runs (no is:miss)

        help_text = screen.query_one("#query-filter", Input).placeholder
        assert "is:review" in help_text and "is:miss" not in help_text and "is:lost" not in help_text


@pytest.mark.slow
async def test_below_the_smallest_size_the_app_says_which_size_it_needs(tiny):
    from rankgate.tui.screens.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmallScreen

    app = make_app(tiny)
    async with app.run_test(size=(60, 15)) as pilot:
        await ready(pilot)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        assert f"at least {MIN_WIDTH}x{MIN_HEIGHT}" in str(app.screen.query_one("#too-small").render())
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)


@pytest.mark.slow
async def test_escape_shows_the_panes_with_the_judgments_counted(tiny):
    """Grading d-rpo relevant on the judging screen makes the gate accept (factory.py); Escape shows it."""
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        assert screen.cursor.at.doc == "d-rpo" and screen.cursor.at.qid == "q-restore"
        assert app.review._gate.decision == "reject"
        await pilot.press("2", "escape")  # in one burst: the edit's measures are counted before the panes show
        await pilot.pause()
        review = app.screen
        assert review is app.review and review.model.labels.grades("q-restore")["d-rpo"] == 2
        assert review._gate.decision == "accept"
        assert (review.qid, review.doc) == (screen.cursor.at.qid, screen.cursor.at.doc)  # the document shown there


@pytest.mark.slow
async def test_judging_a_qrels_files_labels_asks_once_whether_to_correct_them(tmp_path):
    """#33 item 6 on the judging screen: a labels-only review walks the file's labels (another reviewer's); the
    first grade asks once for the session, "correct theirs" replaces theirs (no disagreement), and the next
    grades are one key each. Before, each grade went beside theirs silently: a disagreement per label."""
    from rankgate.tui.screens.judging import JudgingScreen
    from rankgate.tui.screens.prompts import Choice

    app = labels_only_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = app.screen
        assert isinstance(screen, JudgingScreen)
        book = screen.model.labels
        first = screen.cursor.at
        assert book.others(first.qid, first.doc) is not None  # the file's label, not mine
        await pilot.press("3")
        await pilot.pause()
        assert isinstance(app.screen, Choice)  # asked, nothing stored yet
        assert book.mine(first.qid, first.doc) is None
        app.screen.dismiss("correct-session")
        await pilot.pause()
        assert app.screen is screen and book.mine(first.qid, first.doc).grade == 3
        assert book.others(first.qid, first.doc) is None and not book.labels(first.qid)[first.doc].disputed
        second = screen.cursor.at
        assert second != first and book.others(second.qid, second.doc) is not None
        await pilot.press("1")  # not asked again: one key
        await pilot.pause()
        assert app.screen is screen and book.mine(second.qid, second.doc).grade == 1
        assert not book.labels(second.qid)[second.doc].disputed


def test_the_rank_strip_heading_agrees_with_a_rank_past_k():
    """Was: "rank in top 5: ... bm25-prf 19" (ops-handbook, k=5): a rank past k under a heading saying top k."""
    from rankgate.tui.widgets.rank_strip import strip_text

    t = strip_text([("bm25-plain", 4, True), ("bm25-stemmed", None, False), ("bm25-prf", 19, False)], 78, k=5,
                   blind=False)
    assert t.plain == "rank (top 5 in bold): bm25-plain 4 · bm25-stemmed – · bm25-prf 19"
    styles = {t.plain[s.start:s.end]: str(s.style) for s in t.spans}
    assert styles["4"] == "bold cyan" and styles["19"] == "dim" and styles["–"] == "dim"


@pytest.mark.slow
async def test_help_lists_escape_first_and_the_judging_screens_lists_only_its_keys_and_its_legend(tiny):
    """The review screen's help starts with esc; then, in the same app session (a start costs ~0.7 CPU s), the
    judging screen's. Was: help listed `tab` "Next pane" (the judging screen has no panes) and the panes' legend."""
    from rich.console import Console

    from rankgate.tui.screens.review import ReviewScreen

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=120, record=True, file=open("/dev/null", "w"))
        console.print(app.screen.query_one("#help-keys").content)
        first = console.export_text().splitlines()[0]
        assert first.split()[0] == "esc" and "Close this help" in first
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        await open_judging(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        console = Console(width=120, record=True, color_system=None, file=open("/dev/null", "w"))
        console.print(app.screen.query_one("#help-keys").content)
        keys = [line.split()[0] for line in console.export_text().splitlines() if line.strip()]
        console.print(app.screen.query_one("#help-legend").content)
        legend = console.export_text()
    assert "tab" not in keys and {"esc", "u", "r", "s", "i", "?", "q", "ctrl+p"} <= set(keys)
    assert "in a run's top k (bold)" in legend and "past it" in legend and "rank movement" not in legend


@pytest.mark.slow
async def test_a_grade_after_undo_clears_the_undo_notice(tiny):
    """`u` says "undone: ... of DOC" on the notice line; the grade that follows shows the next passage, so the
    notice about the one before goes at once (newcomer: it stayed under the next passage)."""
    from rankgate.tui.widgets.notice_line import NoticeLine

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        await pilot.press("3")
        await pilot.pause()
        await pilot.press("u")
        await pilot.pause()
        notice = screen.query_one(NoticeLine)
        assert notice.message.startswith("undone: grade 3 of") and notice.display
        await pilot.press("1")
        await pilot.pause()
        assert notice.message == "" and not notice.display
        await pilot.press("u")  # and a notice after the grade is shown as before
        await pilot.pause()
        assert notice.message.startswith("undone: grade 1 of")
