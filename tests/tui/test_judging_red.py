"""Red-team checks of the judging screen (issue 33): key bursts, undo past the start, a grade typed while the
reason box opens; every acknowledged grade is in the store."""

from __future__ import annotations

import pytest

from tests.tui.conftest import make_app
from tests.tui.test_judging import open_judging


@pytest.mark.slow  # drives a burst of keys or several screens: over a second
async def test_a_burst_of_grade_and_undo_keys_leaves_the_store_and_the_cursor_agreeing(tiny):
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        book = screen.model.labels
        first = screen.cursor.at
        await pilot.press(*"2u2u2u")
        await pilot.pause()
        assert screen.cursor.at == first and book.mine(first.qid, first.doc) is None
        await pilot.press(*"uuuu")  # past the first judgment: nothing to undo, nothing breaks
        await pilot.pause()
        assert screen.cursor.at == first and screen.judged == 0
        await pilot.press(*"2" * 30)  # held down past the last document that needs a judgment
        await pilot.pause()
        graded = list(screen.cursor.trail)
        assert screen.judged == len(graded) == len(set(graded))  # each document once
        assert all(book.mine(p.qid, p.doc).grade == 2 for p in graded)
        assert screen.cursor.at is None  # nothing left: the screen says so
        last = graded[-1]
        before = len(book.history(last.qid))
        await pilot.press("0")  # a stray key at the end regrades nothing
        await pilot.pause()
        assert book.mine(last.qid, last.doc).grade == 2 and len(book.history(last.qid)) == before
        await pilot.press("u")  # undo still walks back to the last one
        await pilot.pause()
        assert screen.cursor.at == last and book.mine(last.qid, last.doc) is None


async def test_a_grade_key_pressed_while_the_reason_box_is_open_is_reason_text(tiny):
    toml = tiny / "benchmark.toml"
    toml.write_text("reason_required = [0]\n" + toml.read_text())
    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        book = screen.model.labels
        first = screen.cursor.at
        await pilot.press("0", "2", "u", "enter")
        await pilot.pause()
        lab = book.mine(first.qid, first.doc)
        assert lab is not None and (lab.grade, lab.reason) == (0, "2u")
        await pilot.press("0", "space", "enter")  # a blank reason: nothing stored, the box stays
        await pilot.pause()
        second = screen.cursor.at
        assert book.mine(second.qid, second.doc) is None


def test_wide_and_combining_ids_are_cut_to_the_cells_they_take():
    from rich.cells import cell_len

    from rankgate.core.text import middle_cut
    from rankgate.tui.safe import id_cell

    wide = "文書" * 20 + "_0001"  # each ideograph takes two cells
    cut = middle_cut(wide, 15)
    assert cell_len(cut) <= 15 and cut.endswith("_0001") and "…" in cut
    assert cell_len(middle_cut("🙂" * 30, 9)) <= 9
    marks = "e\u0301" * 30  # a letter and its combining accent take one cell
    assert middle_cut(marks, 40) == marks  # 30 cells fit whole
    assert not middle_cut(marks, 9).split("…")[1].startswith("\u0301")  # no accent cut from its letter
    for value in (wide, "short", "🙂" * 30, marks, "d\x1b[2J" * 9):
        assert cell_len(id_cell(value, 12)) == 12  # a column stays a column


async def test_the_rankings_keep_their_columns_with_wide_ids(tiny):
    import dataclasses

    from rich.cells import cell_len

    from tests.tui.conftest import make_app, ready
    from rankgate.tui.widgets.ranking import RankingList

    app = make_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        lst = next(iter(app.screen.query(RankingList)))
        row = lst.rows[0]
        lst.rows[1] = dataclasses.replace(row, doc="文書" * 30)
        assert cell_len(lst.render_row(0, 40).plain) == cell_len(lst.render_row(1, 40).plain)


async def test_a_very_long_document_id_takes_one_line_of_the_document_pane(tiny):
    from rankgate.tui.widgets.doc_view import DocView

    app = make_app(tiny)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_judging(pilot)
        doc = screen.query_one(DocView)
        long_q, long_d = "q_" + "7" * 4000 + "_end", "msmarco_passage_00_" + "9" * 4000 + "2"
        doc.show(long_d, "what is dns", qid=long_q)
        await pilot.pause()
        body = doc.query_one("#doc-body")._shown.plain
        query = doc.query_one("#doc-query")._shown.plain
        first = body.split("\n")[0]
        assert "…" in first and first.endswith("92") and len(first) <= 78  # its end in view, one line
        assert "…" in query and "_end" in query and "what is dns" in query  # the query's text still shows


def test_wide_query_texts_are_cut_and_padded_by_cells():
    from rich.cells import cell_len

    from rankgate.tui.safe import excerpt, text_cell

    ja = "東京で一番高いビルはどこですか" * 3  # a MIRACL-like query
    assert cell_len(excerpt(ja, 21)) <= 21 and excerpt(ja, 21).endswith("…")
    assert excerpt("short", 21) == "short"
    assert all(cell_len(text_cell(x, 20)) == 20 for x in (ja, "short", "e\u0301" * 30, "🙂" * 15))


async def test_the_query_list_keeps_its_columns_with_wide_query_texts(tiny):
    import dataclasses

    from rich.cells import cell_len

    from rankgate.tui.widgets.query_list import QueryList
    from tests.tui.conftest import ready

    app = make_app(tiny)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        ql = app.screen.query_one(QueryList)
        m = ql.model
        qi = int(ql.order[1])
        m.queries[m.qids[qi]] = dataclasses.replace(m.query(qi), text="東京で一番高いビルはどこですか" * 3)
        assert "東京" in ql.render_row(1, 120).plain  # the text column is there
        widths = {cell_len(ql.render_row(i, 120).plain) for i in range(2)}
        assert len(widths) == 1, widths
