"""Correcting another reviewer's label (issue 33, item 6): `set_judgment(corrects=True)` / `labels set
--correct` replace the other reviewers' judgments of the pair (history keeps them, the grade is credited to
the one who corrected, no disagreement is counted); without it the new judgment goes beside theirs, a
disagreement until adjudicated. An undo of the correction puts theirs back."""

from __future__ import annotations

import json

from rankgate.store.workspace import Workspace
from tests.conftest import write

QRELS = "q1 0 d1 0\nq1 0 d2 1\n"


def imported(tmp_path) -> Workspace:
    qrels = write(tmp_path / "qrels.txt", QRELS)
    ws = Workspace.open(tmp_path / "w.json", reviewer="ana")
    ws.import_files([qrels])
    return ws


def test_a_correction_replaces_theirs_and_counts_no_disagreement(tmp_path):
    ws = imported(tmp_path)
    try:
        event = ws.set_judgment("q1", "d1", 2, reason="answers it", corrects=True)
        assert [j.reviewer for j in ws.reviews("q1", "d1")] == ["ana"]
        assert ws.judgment("q1", "d1").grade == 2 and ws.judgment("q1", "d1").reviewer == "ana"
        assert ws.disagreements() == [] and ws.stats()["disagreements"] == 0
        kinds = [(e.kind, e.reviewer, e.why) for e in ws.history("q1", "d1")]
        assert kinds[-2:] == [("remove", "file:qrels.txt", "corrected by ana"),
                              ("set", "ana", "corrects file qrels.txt")]
        assert ws.history("q1", "d1")[-2].before["grade"] == 0  # theirs, kept in history
        ws.set_judgment("q1", "d2", 3, reason="better than they said")  # beside theirs: a disagreement
        assert [d.doc for d in ws.disagreements()] == ["d2"]
        back = ws.restore_corrected("q1", "d1", event.id)  # (the app's undo of the correction)
        assert [e.reviewer for e in back] == ["file:qrels.txt"]
        assert {j.reviewer: j.grade for j in ws.reviews("q1", "d1")} == {"file:qrels.txt": 0, "ana": 2}
    finally:
        ws.close()


def test_labels_set_correct_and_labels_status(cli, tmp_path):
    imported(tmp_path).close()
    db = tmp_path / "w.json"
    code, out, err = cli("labels", "set", "--db", db, "--reviewer", "ana", "q1", "d2", "3", "--reason", "more")
    assert code == 0 and "goes beside file qrels.txt's" in err and "--correct" in err  # says how to correct
    code, out, err = cli("labels", "set", "--db", db, "--reviewer", "ana", "q1", "d1", "2", "--reason", "answers",
                         "--correct")
    assert code == 0 and err == "", err
    stats = json.loads(cli("labels", "status", "--db", db, "--json")[1])
    assert stats["disagreements"] == 1  # d2 only: d1 was corrected
    code, out, _ = cli("labels", "disagreements", "--db", db)
    assert "d2" in out and "d1" not in out
    code, out, _ = cli("labels", "history", "--db", db, "q1", "d1")
    assert "corrected by ana" in out and "corrects file qrels.txt" in out
    code, out, _ = cli("labels", "set", "--db", db, "--reviewer", "bo", "q1", "d1", "1", "--correct")
    assert code == 2 and "replaces theirs (--correct)" in out + _  # a new judgment still needs its reason
