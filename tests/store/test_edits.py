"""An expert's edits as the store keeps them: one event per edit, provenance of imports, unsure marks,
undo/redo recorded as such, query notes with history, and removal of one's own judgment only."""

from __future__ import annotations

import pytest

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store.workspace import Workspace

from .conftest import write


@pytest.fixture
def imported(ws, tmp_path):
    """q1: d1 (2) and d2 (0) from a TREC file that names no reviewer; d3 (1) from one whose header says priya."""
    ws.import_files([write(tmp_path / "qrels.trec", "q1 0 d1 2\nq1 0 d2 0\n"),
                     write(tmp_path / "priya.trec", "# reviewer: priya\nq1 0 d3 1\n")], reviewer="ana")
    return ws


# ---------------------------------------------------------------- one history row per edit


def test_an_edit_of_grade_reason_and_version_together_is_one_event(ws):
    ws.set_query(Query("q1"))
    ws.set_judgment("q1", "d1", 1, reason="mentions it", collection_version="c1")
    n = len(ws.history())
    e = ws.set_judgment("q1", "d1", 3, reason="the whole procedure", collection_version="c2")
    assert len(ws.history()) == n + 1
    assert (e.kind, e.before["grade"], e.after["grade"], e.after["reason"], e.after["collection_version"]) == \
        ("regrade", 1, 3, "the whole procedure", "c2")
    e = ws.set_judgment("q1", "d1", 3, reason="all the steps", collection_version="c3")
    assert len(ws.history()) == n + 2 and e.kind == "reason"
    assert ws.set_judgment("q1", "d1", 3, reason="all the steps", collection_version="c3") is None
    assert len(ws.history()) == n + 2


# ---------------------------------------------------------------- provenance of imported judgments


def test_imported_judgments_are_the_files_or_its_reviewers_and_history_says_who_imported(imported):
    ws = imported
    assert {j.doc: j.reviewer for j in ws.judgments("q1")} == {"d1": "file:qrels.trec", "d2": "file:qrels.trec",
                                                               "d3": "priya"}
    assert ws.judgment("q1", "d1").source == "qrels.trec" and ws.judgment("q1", "d3").source == ""
    e = ws.history("q1", "d1")[-1]
    assert (e.kind, e.who, e.reviewer) == ("import", "ana", "file:qrels.trec")
    assert "ana import q1 d1: - -> 2 (imported by ana, judged by file qrels.trec)" in e.describe()
    e = ws.history("q1", "d3")[-1]
    assert (e.who, e.reviewer) == ("ana", "priya") and "judged by priya" in e.describe()
    assert ws.reviewers() == {"file:qrels.trec": 2, "priya": 1}


def test_imported_labels_count_for_the_gate_as_before(imported):
    ws = imported
    assert ws.to_qrels().grades_for("q1") == {"d1": 2, "d2": 0, "d3": 1}
    ws.set_judgment("q1", "d2", 1, reason="a start", reviewer="ana")  # ana's own judgment beside the file's
    assert ws.to_qrels().grades_for("q1")["d2"] == 1  # the latest judgment counts, as ana's regrade did
    assert ws.judgment("q1", "d2").how() == ("not adjudicated: file:qrels.trec, ana disagree; the latest is "
                                             "ana's")
    report = ws.import_files([write(ws.path.parent / "again" / "qrels.trec", "q1 0 d1 2\n")])
    assert report.unchanged == 1 and len(ws.history("q1", "d1")) == 1  # the same label again: no new event


def test_old_stores_with_importer_credited_judgments_read_unchanged(db, tmp_path):
    """An import before file credit named the importer: re-importing the same file changes nothing."""
    with Workspace.open(db, reviewer="ana") as ws:
        ws.set_query(Query("q1"))
        ws.set_judgment("q1", "d1", 2, reason="")
        report = ws.import_files([write(tmp_path / "qrels.trec", "q1 0 d1 2\n")])
        assert (report.unchanged, report.conflicts) == (1, [])
        assert ws.judgment("q1", "d1").reviewer == "ana"


# ---------------------------------------------------------------- remove: one's own judgment only


def test_removing_an_imported_label_is_refused_without_naming_its_source(imported):
    ws = imported
    with pytest.raises(InputError, match="judged by file:qrels.trec, not by you \\(tester\\).*adjudicate instead"):
        ws.remove_judgment("q1", "d1")
    assert ws.judgment("q1", "d1").grade == 2
    e = ws.remove_judgment("q1", "d1", of_reviewer="file:qrels.trec", why="wrong chunk")
    assert (e.who, e.before["reviewer"]) == ("tester", "file:qrels.trec")
    assert "[file qrels.trec's judgment]" in e.describe()


def test_removing_mine_leaves_the_other_reviewers_judgment(ws):
    ws.set_query(Query("q1"))
    ws.set_judgment("q1", "d1", 0, reason="off topic", reviewer="tomas")
    ws.set_judgment("q1", "d1", 1, reason="a start")
    assert ws.judgment("q1", "d1").reviewers == ("tomas", "tester")
    e = ws.remove_judgment("q1", "d1")
    assert e.before["reviewer"] == "tester"
    j = ws.judgment("q1", "d1")
    assert (j.grade, j.reviewer, j.reached) == (0, "tomas", "single")


# ---------------------------------------------------------------- undo and redo


def test_undo_and_redo_are_recorded_as_what_they_are(ws):
    ws.set_query(Query("q1"))
    first = ws.set_judgment("q1", "d1", 1, reason="a start")
    second = ws.set_judgment("q1", "d1", 3, reason="the answer")
    undo = ws.set_judgment("q1", "d1", 1, reason="a start", cause="undo", undoes=second.id)
    assert (undo.kind, undo.cause, undo.undoes) == ("regrade", "undo", second.id)
    assert undo.describe().endswith(f"(undo of event #{second.id})")
    redo = ws.set_judgment("q1", "d1", 3, reason="the answer", cause="redo", undoes=undo.id)
    assert (redo.cause, redo.undoes) == ("redo", undo.id) and f"(redo of event #{undo.id})" in redo.describe()
    gone = ws.remove_judgment("q1", "d1", cause="undo")  # undo of the first set: the label goes
    assert (gone.kind, gone.cause, gone.undoes) == ("remove", "undo", None) and gone.describe().endswith("(undo)")
    assert ws.judgment("q1", "d1") is None
    back = ws.set_judgment("q1", "d1", 3, reason="the answer", cause="redo", undoes=gone.id)
    assert back.kind == "set" and ws.judgment("q1", "d1").grade == 3
    assert [e.cause for e in ws.history("q1", "d1")] == ["", "", "undo", "redo", "undo", "redo"]
    assert first.cause == "" and first.undoes is None


def test_undo_is_durable_and_bad_causes_change_nothing(db):
    with Workspace.open(db) as ws:
        ws.set_query(Query("q1"))
        e = ws.set_judgment("q1", "d1", 1, reason="r")
        n = len(ws.history())
        for kwargs, what in (({"cause": "oops"}, "cause 'oops'"), ({"undoes": e.id}, "needs cause"),
                             ({"cause": "undo", "undoes": 999}, "no such event"),
                             ({"cause": "undo", "undoes": "1"}, "no such event")):
            with pytest.raises(InputError, match=what):
                ws.set_judgment("q1", "d1", 2, **kwargs)
            with pytest.raises(InputError, match=what):
                ws.remove_judgment("q1", "d1", **kwargs)
        assert len(ws.history()) == n and ws.judgment("q1", "d1").grade == 1
        ws.remove_judgment("q1", "d1", cause="undo", undoes=e.id)
    with Workspace.open(db, readonly=True) as ws:
        assert (ws.history()[-1].cause, ws.history()[-1].undoes) == ("undo", e.id)


# ---------------------------------------------------------------- unsure marks


def test_mark_and_clear_unsure_with_history(ws):
    ws.set_query(Query("q1"))
    ws.set_judgment("q1", "d1", 2, reason="steps for v1 only")
    e = ws.mark_unsure("q1", "d1", "  does v2 change the steps?  ")
    assert (e.kind, e.who, e.before.get("unsure"), e.after["unsure"]) == ("unsure", "tester", None,
                                                                            "does v2 change the steps?")
    assert 'unsure "does v2 change the steps?"' in e.describe()
    j = ws.judgment("q1", "d1")
    assert (j.unsure, j.grade, j.reason, j.updated) == ("does v2 change the steps?", 2, "steps for v1 only",
                                                        ws.history("q1", "d1")[0].when)
    assert ws.mark_unsure("q1", "d1", "does v2 change the steps?") is None  # the same note: nothing to do
    ws.set_judgment("q1", "d1", 1, reason="v2 moved the steps")  # a regrade keeps the mark
    assert ws.judgment("q1", "d1").unsure == "does v2 change the steps?"
    c = ws.clear_unsure("q1", "d1")
    assert c.kind == "unsure" and "unsure mark cleared" in c.describe() and ws.judgment("q1", "d1").unsure == ""
    assert [e.kind for e in ws.history("q1", "d1")] == ["set", "unsure", "regrade", "unsure"]


def test_unsure_needs_a_note_and_a_label(ws):
    ws.set_query(Query("q1"))
    ws.set_judgment("q1", "d1", 2, reason="r")
    n = len(ws.history())
    for note in ("", "   ", None):
        with pytest.raises(InputError, match="needs a note"):
            ws.mark_unsure("q1", "d1", note)
    with pytest.raises(InputError, match="not judged"):
        ws.mark_unsure("q1", "d9", "why")
    with pytest.raises(InputError, match="unknown query"):
        ws.mark_unsure("q9", "d1", "why")
    with pytest.raises(InputError, match="not marked unsure"):
        ws.clear_unsure("q1", "d1")
    assert len(ws.history()) == n


def test_unsure_on_someone_elses_label_marks_the_label_not_the_grade(imported):
    ws = imported
    e = ws.mark_unsure("q1", "d1", "is this the current runbook?", reviewer="ana")
    assert (e.who, e.reviewer, e.scope) == ("ana", "file:qrels.trec", "reviewer")
    assert "[file qrels.trec's judgment]" in e.describe()
    j = ws.judgment("q1", "d1")
    assert (j.grade, j.reviewer, j.unsure) == (2, "file:qrels.trec", "is this the current runbook?")
    assert ws.to_qrels().grades_for("q1")["d1"] == 2
    ws.set_judgment("q1", "d1", 1, reason="old runbook", reviewer="tomas")
    ws.mark_unsure("q1", "d1", "ask ops", reviewer="tomas")  # tomas's own judgment now
    assert ws.judgment("q1", "d1").unsure == "file:qrels.trec: is this the current runbook?; tomas: ask ops"
    ws.clear_unsure("q1", "d1", reviewer="tomas")
    assert ws.judgment("q1", "d1").unsure == "is this the current runbook?"


def test_unsure_survives_reopen_fold_and_versions(db):
    with Workspace.open(db, fold_every=2) as ws:
        ws.set_query(Query("q1"))
        ws.set_judgment("q1", "d1", 2, reason="r")
        ws.set_judgment("q1", "d2", 1, reason="r")
        ws.mark_unsure("q1", "d1", "check")
        v = ws.freeze("v1")
        ws.clear_unsure("q1", "d1")
        assert ws.export("jsonl", version="v1").content_hash == v.content_hash
    with Workspace.open(db, readonly=True) as ws:
        assert ws.judgment("q1", "d1").unsure == ""
        assert [e.after.get("unsure", "") for e in ws.history("q1", "d1") if e.kind == "unsure"] == ["check", ""]


# ---------------------------------------------------------------- query notes


def test_editing_only_a_querys_notes_is_one_event_old_to_new(ws):
    ws.set_query(Query("q1", "restore a file", notes="restic, --include"))
    n = len(ws.history())
    e = ws.set_notes("q1", "restic restore --include PATH; keep permissions")
    assert len(ws.history()) == n + 1 and e.kind == "query"
    assert (e.before["notes"], e.after["notes"]) == ("restic, --include", "restic restore --include PATH; keep "
                                                                          "permissions")
    assert ('q1: notes: "restic, --include" -> "restic restore --include PATH; keep permissions"'
            in e.describe())
    assert ws.query("q1").notes == "restic restore --include PATH; keep permissions"
    assert ws.query("q1").text == "restore a file"
    assert ws.set_notes("q1", "restic restore --include PATH; keep permissions") is None
    u = ws.set_notes("q1", "restic, --include", cause="undo", undoes=e.id)
    assert u.describe().endswith(f"(undo of event #{e.id})") and ws.query("q1").notes == "restic, --include"
    with pytest.raises(InputError, match="unknown query"):
        ws.set_notes("q9", "x")


def test_unsure_marks_travel_in_jsonl_exports_and_merges(db, tmp_path):
    with Workspace.open(db, reviewer="ana") as ws:
        ws.set_query(Query("q1"))
        ws.set_judgment("q1", "d1", 2, reason="r")
        ws.set_judgment("q1", "d2", 1, reason="r")
        ws.mark_unsure("q1", "d1", "v2 or v3?")
        text = ws.export("jsonl", judged_by="ana").text
        assert '"unsure": "v2 or v3?"' in text and text.count('"unsure"') == 1
        assert "unsure" not in ws.export("trec").text
    with Workspace.open(tmp_path / "other.json", reviewer="lena") as other:
        other.merge_files([write(tmp_path / "ana.jsonl", text)])
        assert {j.doc: j.unsure for j in other.judgments("q1")} == {"d1": "v2 or v3?", "d2": ""}
