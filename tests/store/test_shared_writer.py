"""Several processes writing one workspace (the browser face, `rankgate review --serve`): DurableIndex.share.

Each writer holds the lock only while it makes an edit (`turn`), reading in the others' edits first; a pair
keeps one judgment per reviewer, so two grades of one pair are both kept and the later is the label.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from rankgate.core.model import Query
from rankgate.store.storage import Locked
from rankgate.store.workspace import Workspace


def two_writers(tmp_path):
    db = tmp_path / "team.json"
    first = Workspace.open(db, reviewer="ana")
    first.set_query(Query("q1", "how to rotate a leaked key"))
    first.share()
    second = Workspace.open(db, reviewer="tomas")  # would be Locked without share()
    second.share()
    return db, first, second


def test_two_writers_grade_one_pair_both_kept_later_wins(tmp_path):
    db, ana, tomas = two_writers(tmp_path)
    with ana.turn():
        ana.set_judgment("q1", "d1", 2, reason="names the rotation")
    touched, reviews = tomas.catch_up()
    assert touched == {"q1"} and [(r["reviewer"], r["grade"]) for r in reviews] == [("ana", 2)]
    assert tomas.judgment("q1", "d1").grade == 2
    with tomas.turn():
        tomas.set_judgment("q1", "d1", 1)
    ana.catch_up()
    label = ana.judgment("q1", "d1")
    assert (label.grade, label.reviewer, label.reached) == (1, "tomas", "latest")
    assert sorted(label.reviewers) == ["ana", "tomas"]
    ana.close()
    tomas.close()
    with Workspace.open(db, readonly=True) as ws:  # what is on disk: both judgments, both in the history
        sets = [(e.who, e.after["grade"]) for e in ws.history("q1", "d1") if e.kind == "set"]
        assert sets == [("ana", 2), ("tomas", 1)]
        assert ws.judgment("q1", "d1").grade == 1


def test_a_fold_by_one_writer_is_read_by_the_other(tmp_path):
    db, ana, tomas = two_writers(tmp_path)
    with ana.turn():
        ana.set_judgment("q1", "d1", 2)
        ana.checkpoint()  # a new journal generation: the other reads the whole store again
    with tomas.turn():
        tomas.set_judgment("q1", "d2", 3)
    assert tomas.judgment("q1", "d1").grade == 2
    touched, _ = ana.catch_up()
    assert touched == {"q1"} and ana.judgment("q1", "d2").grade == 3 and len(ana) == 2
    ana.close()
    tomas.close()
    with Workspace.open(db, readonly=True) as ws:
        assert len(ws) == 2 and ws.edit_seq == 3


def test_a_shared_writer_edits_only_in_its_turn_and_lets_go_after(tmp_path):
    db, ana, tomas = two_writers(tmp_path)
    with pytest.raises(Exception, match="only in a turn"):
        ana.set_judgment("q1", "d1", 2)
    assert ana.judgment("q1", "d1") is None  # nothing half-done
    with ana.turn():
        ana.set_judgment("q1", "d1", 2)
    # between turns nobody holds the lock: a plain writer in another process can take it
    probe = ("import sys; from rankgate.store.workspace import Workspace; "
             "ws = Workspace.open(sys.argv[1], reviewer='lead'); print(ws.judgment('q1', 'd1').grade); ws.close()")
    out = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "2", out.stderr
    with ana.turn():  # while ana's turn lasts, another writer waits, then gives up naming the holder
        with pytest.raises(Locked):
            with tomas.turn(wait=0.2):
                pass
    ana.close()
    tomas.close()
