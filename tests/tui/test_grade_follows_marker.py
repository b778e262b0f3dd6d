"""A grade key grades the document marked ▸, wherever the keys are.

Found by a newcomer on DL19 (2026-12-07): with the Rankings pane's baseline list focused, `u` put ▸ on the
candidate's unjudged document, and `1` graded the baseline's highlighted row instead, a NIST label, after
the "whose judgment" question. The program had pointed the candidate's list; the key followed the focused
list's cursor, which the program had not moved.
"""

from __future__ import annotations

import json

import pytest

from rankgate.tui.widgets.label_editor import LabelList
from rankgate.tui.widgets.ranking import RankingPane
from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.factory import write_benchmark


@pytest.mark.slow
@pytest.mark.parametrize("focus", ["baseline", "labels"])
async def test_a_grade_after_u_grades_the_document_u_marked(tmp_path, focus):
    bench = write_benchmark(tmp_path / "tiny-lab")
    plain = bench / "runs" / "plain.jsonl"  # the baseline without d-rpo: only the candidate's list has it
    rows = [json.loads(line) for line in plain.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r.get("query") == "q-restore":
            r["ranking"] = [d for d in r["ranking"] if d != "d-rpo"] + ["d-old"]
    plain.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    app = make_app(bench)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        screen.show_query(m.qindex["q-gpu"])  # start elsewhere, the keys in another list than u points at
        await pilot.pause()
        lists = screen.query_one(RankingPane).lists()
        target = lists["baseline"] if focus == "baseline" else screen.query_one(LabelList)
        screen.set_focus(target)
        await pilot.pause()
        assert screen.focused is target
        before = {q: dict(m.labels.grades(q)) for q in m.qindex}
        await pilot.press("u")
        await pilot.pause()
        queue = m.review_queue()
        item = (queue[0].query, queue[0].doc)
        assert item == ("q-restore", "d-rpo") and (screen.qid, screen.doc) == item  # ▸ on the queue's item
        await pilot.press("1")
        await pilot.press("escape")  # (no reason)
        await pilot.pause()
        after = {q: dict(m.labels.grades(q)) for q in m.qindex}
        changed = {(q, d) for q in after for d in set(after[q]) | set(before[q])
                   if after[q].get(d) != before[q].get(d)}
        assert changed == {item}, changed  # that document, and no other label
        assert after["q-restore"]["d-rpo"] == 1
        # The next key moves from there: Down goes to the row below the marked one in the list that has it.
        if focus == "baseline":
            assert screen.focused is lists["candidate"] and lists["candidate"].rows[lists["candidate"].cursor].doc == "d-rpo"
