"""What the app's status line calls "judged today": the pairs the reviewer set by hand today (the app's keys,
`labels set`), never labels imported today under the reviewer's own name; read from the journal and the
history file, and the history file's part kept in the app's cache keyed by that file."""

from __future__ import annotations

import json
import time
from pathlib import Path

from rankgate.store import Workspace
from rankgate.tui.store_backend import StoreBackend

from .conftest import write

TODAY = time.strftime("%Y-%m-%d", time.gmtime())


def _qrels(folder: Path, n: int = 150) -> Path:
    """`n` judgments (past an import's fold threshold) named as the reviewer's own."""
    rows = [{"query": f"q{i % 10}", "doc": f"d{i}", "grade": i % 3, "reviewer": "tester"} for i in range(n)]
    return write(folder / "qrels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def test_imported_labels_of_the_reviewer_are_not_judged_today(tmp_path, db):
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(_qrels(tmp_path))])
    assert len(ws.judgments(for_reviewer="tester", blind=True)) == 150  # the reviewer's own, imported today
    assert StoreBackend(ws).judged_today() == set()  # (the count was 150 before)
    ws.set_judgment("q1", "d1", 2, reason="by hand")  # a regrade
    ws.set_judgment("q1", "d-new", 1, create_query=True)  # a new judgment
    ws.set_judgment("q2", "d2", 2, reason="a reason")  # a reason (grade unchanged)
    ws.set_judgment("q3", "d3", 1, reviewer="ana")  # another reviewer's
    assert StoreBackend(ws).judged_today() == {("q1", "d1"), ("q1", "d-new"), ("q2", "d2")}
    ws.remove_judgment("q1", "d-new")  # no longer stands
    assert ws.judged_by_hand(TODAY) == {("q1", "d1"), ("q2", "d2")}
    assert ws.judged_by_hand(TODAY, "ana") == {("q3", "d3")}
    assert ws.judged_by_hand("1999-01-01") == set()
    ws.close()


def test_edits_folded_into_the_history_file_still_count(tmp_path, db):
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(_qrels(tmp_path))])
    ws.set_judgment("q1", "d1", 2)
    ws.checkpoint()  # folded: the edit is in the history file, no longer in the journal
    ws.close()
    ws = Workspace.open(db, reviewer="tester")
    assert ws.judged_by_hand(TODAY) == {("q1", "d1")}
    ws.history()  # with the history loaded, the same answer from it
    assert ws.judged_by_hand(TODAY) == {("q1", "d1")}
    ws.close()


def test_the_cached_history_edits_follow_the_history_file(tmp_path, db):
    from rankgate.tui.store_backend import hand_edits_cached

    folder = tmp_path / "cache"
    folder.mkdir()
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(_qrels(tmp_path))])
    ws.set_judgment("q1", "d1", 2)
    ws.checkpoint()
    first = hand_edits_cached(ws, folder)
    assert [e[1:] for e in first] == [["q1", "d1", "tester"]]
    assert len(list(folder.glob("hand-*.json"))) == 1
    calls = []
    read = ws.hand_edits_in_history_file
    ws.hand_edits_in_history_file = lambda: calls.append(1) or read()
    assert hand_edits_cached(ws, folder) == first and not calls  # unchanged file: from the cache
    ws.set_judgment("q2", "d2", 1)  # in the journal only: the history file (the key) is unchanged
    assert hand_edits_cached(ws, folder) == first and not calls
    assert ws.judged_by_hand(TODAY, in_history_file=first) == {("q1", "d1"), ("q2", "d2")}
    ws.checkpoint()  # the history file changes: read again
    again = hand_edits_cached(ws, folder)
    assert calls and [e[1:] for e in again] == [["q1", "d1", "tester"], ["q2", "d2", "tester"]]
    ws.close()


def test_old_hand_edit_entries_are_pruned(tmp_path, db, monkeypatch):
    from rankgate.tui import runcache
    from rankgate.tui.store_backend import hand_edits_cached

    monkeypatch.setattr(runcache, "KEEP_LABELS", 2)
    folder = tmp_path / "cache"
    folder.mkdir()
    ws = Workspace.open(db, reviewer="tester")
    ws.import_files([str(_qrels(tmp_path))])
    for i in range(4):  # each fold changes the history file: a new entry
        ws.set_judgment("q1", f"d-new-{i}", 1, create_query=True)
        ws.checkpoint()
        assert len(hand_edits_cached(ws, folder)) == i + 1
    assert len(list(folder.glob("hand-*.json"))) == 2
    ws.close()
