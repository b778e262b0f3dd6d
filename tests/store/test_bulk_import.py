"""An import of new queries as columns (store format 4): the same labels and history as one judgment at a
time, folded at once, all or nothing when killed, readable by recovery, erased by purge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rankgate.store import Workspace
from rankgate.store.durable import FORMAT_VERSION

from .conftest import write

N_QUERIES, PER_QUERY = 12, 25  # 300 judgments: past the fold threshold of an import (FOLD_ON_CLOSE)


def _qrels(folder: Path, name: str = "qrels.jsonl", grade_shift: int = 0) -> Path:
    rows = [{"query": f"q{i:02d}", "doc": f"d{i:02d}-{j:02d}", "grade": (i + j + grade_shift) % 4 - 1,
             "reason": f"reason {j % 3}" if j % 2 else "", "collection_version": "c1"}
            for i in range(N_QUERIES) for j in range(PER_QUERY)]
    rows[7]["reviewer"] = "ana"  # one judgment names its reviewer, the others are the file's
    return write(folder / name, "".join(json.dumps(r) + "\n" for r in rows))


def _expected(path: Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        out[(r["query"], r["doc"])] = (r["grade"], r["reason"], r.get("reviewer") or f"file:{path.name}")
    return out


def _labels(ws) -> dict:
    return {(j.query, j.doc): (j.grade, j.reason, j.reviewer) for j in ws.judgments()}


def _events(ws) -> list[tuple]:
    return [(e.id, e.kind, e.query, e.doc, json.dumps(e.before, sort_keys=True), json.dumps(e.after, sort_keys=True),
             e.why) for e in ws.history()]


def test_an_import_of_new_queries_keeps_an_event_per_label_and_ends_folded(tmp_path):
    qrels = _qrels(tmp_path)
    db = tmp_path / "ws" / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:
        report = ws.import_files([qrels])
        assert (report.added, report.queries_added) == (N_QUERIES * PER_QUERY, N_QUERIES)
        assert _labels(ws) == _expected(qrels)
        events = _events(ws)
        assert ws._journal.count == 0  # folded: the next open replays nothing
    assert [e[0] for e in events] == list(range(1, len(events) + 1))
    assert [e[1] for e in events].count("import") == N_QUERIES * PER_QUERY
    imported = [e for e in events if e[1] == "import"]
    assert all(e[4] == "null" for e in imported)
    assert json.loads(imported[7][5]) == {"grade": 2, "reason": "reason 1", "collection_version": "c1",
                                          "reviewer": "ana"}
    raw = json.loads(Path(str(db) + ".history").read_text())["history"]
    assert sum(1 for e in raw.values() if e.get("bulk")) == N_QUERIES  # one history document per query
    assert json.loads(db.read_text())["meta"]["1"]["format_version"] == FORMAT_VERSION
    with Workspace.open(db, readonly=True) as ws:  # read back: the same labels and the same events
        assert _labels(ws) == _expected(qrels) and _events(ws) == events
        assert len(ws) == N_QUERIES * PER_QUERY


def test_columns_give_the_labels_and_events_one_judgment_at_a_time_gives(tmp_path):
    qrels = _qrels(tmp_path)
    bulk, single = tmp_path / "bulk.json", tmp_path / "single.json"
    with Workspace.open(bulk, reviewer="tester") as ws:
        ws.import_files([qrels])
    with Workspace.open(single, reviewer="tester") as ws:  # every query has a label: one judgment at a time
        for i in range(N_QUERIES):
            ws.set_judgment(f"q{i:02d}", "zz-first", 1, reason="first", create_query=True)
        ws.import_files([qrels])
    with Workspace.open(bulk, readonly=True) as a, Workspace.open(single, readonly=True) as b:
        assert {k: v for k, v in _labels(b).items() if k[1] != "zz-first"} == _labels(a)
        per_pair = [e[1:] for e in _events(b) if e[1] == "import"]
        assert sorted(per_pair) == sorted(e[1:] for e in _events(a) if e[1] == "import")
        for qid in ("q00", "q07"):
            untimed = [{k: v for k, v in j.as_dict().items() if k not in ("created", "updated")}
                       for j in a.judgments(qid)]
            assert untimed == [{k: v for k, v in j.as_dict().items() if k not in ("created", "updated")}
                               for j in b.judgments(qid) if j.doc != "zz-first"]


def test_edits_after_an_import_and_a_second_import_into_the_same_queries(tmp_path):
    first = _qrels(tmp_path)
    second = _qrels(tmp_path, "again.jsonl", grade_shift=1)
    db = tmp_path / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:
        ws.import_files([first])
        ws.set_judgment("q03", "d03-04", 3, reason="regraded")
        ws.remove_judgment("q04", "d04-00", reviewer=f"file:{first.name}")
        report = ws.import_files([second], on_conflict="overwrite")
        assert report.changed == N_QUERIES * PER_QUERY and report.kept == 0  # the removed one comes back too
        assert len(report.conflicts) == N_QUERIES * PER_QUERY
        labels = _labels(ws)
        n_events = len(ws.history())
    with Workspace.open(db, readonly=True) as ws:
        assert _labels(ws) == labels and len(ws.history()) == n_events
        assert ws.judgment("q03", "d03-04").grade == (3 + 4 + 1) % 4 - 1
        assert ws.judgment("q04", "d04-00").grade == (4 + 0 + 1) % 4 - 1


def _kill_at(point: str, db: Path, qrels: Path) -> int:
    code = ("import sys\nfrom rankgate.store import Workspace\n"
            "with Workspace.open(sys.argv[1], reviewer='tester') as ws:\n    ws.import_files([sys.argv[2]])\n")
    env = dict(os.environ, RANKGATE_CRASHPOINT=point)
    return subprocess.run([sys.executable, "-c", code, str(db), str(qrels)], env=env, capture_output=True).returncode


@pytest.mark.slow
@pytest.mark.parametrize("point", ["journal-torn", "fold-history", "fold-journal", "fold-snapshot"])
def test_a_kill_during_an_import_leaves_all_or_nothing(tmp_path, point):
    qrels = _qrels(tmp_path)
    db = tmp_path / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:  # a store with an edit already
        ws.set_judgment("other", "d", 1, reason="before", create_query=True)
    assert _kill_at(point, db, qrels) == -signal.SIGKILL
    with Workspace.open(db, reviewer="tester") as ws:
        labels = _labels(ws)
        imported = [e for e in ws.history() if e.kind == "import"]
        if point == "journal-torn":  # never acknowledged: nothing of it
            assert set(labels) == {("other", "d")} and not imported
        else:  # journaled, then killed during the fold: all of it, once
            assert {k: v for k, v in labels.items() if k[0] != "other"} == _expected(qrels)
            assert len(imported) == N_QUERIES * PER_QUERY
        assert [e.id for e in ws.history()] == list(range(1, len(ws.history()) + 1))
        ws.set_judgment("other", "d2", 0, reason="after")  # edits go on, numbered after
        last = ws.history()[-1].id
    with Workspace.open(db, readonly=True) as ws:
        assert ws.history()[-1].id == last and ws.judgment("other", "d2").grade == 0


def test_recovery_rebuilds_an_import_from_the_backup_and_the_previous_journal(tmp_path):
    qrels = _qrels(tmp_path)
    db = tmp_path / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:
        ws.set_judgment("other", "d", 1, reason="before", create_query=True)
        ws.checkpoint()
        ws.import_files([qrels])
        n_events = len(ws.history())
    db.write_text(db.read_text()[:100])  # the snapshot is damaged
    report = Workspace.recover(db)
    assert report["snapshot"].startswith("restored") and report["lost"] is None
    with Workspace.open(db, readonly=True) as ws:
        assert {k: v for k, v in _labels(ws).items() if k[0] != "other"} == _expected(qrels)
        assert len(ws.history()) == n_events


def test_purging_an_imported_query_erases_its_events(tmp_path):
    qrels = _qrels(tmp_path)
    db = tmp_path / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:
        ws.import_files([qrels])
        ws.purge("q05", why="asked to")
        assert not [e for e in ws.history() if e.query == "q05"]
        ws.purge("q06", "d06-03", why="asked to")
        assert not [e for e in ws.history() if e.doc == "d06-03"]
        assert len([e for e in ws.history() if e.query == "q06"]) == PER_QUERY  # its query event stays
    for suffix in ("", ".history", ".journal", ".bak", ".history.bak", ".journal.prev"):
        p = Path(str(db) + suffix)
        if p.exists():
            text = p.read_text()
            assert "d05-" not in text and "d06-03" not in text, suffix


def test_a_format_3_store_opens_and_is_written_as_the_current_format(tmp_path):
    db = tmp_path / "w.json"
    with Workspace.open(db, reviewer="tester") as ws:
        for i in range(3):
            ws.set_judgment(f"q{i}", "d", i, reason="r", create_query=True)
        ws.checkpoint()
    snap = json.loads(db.read_text())
    snap["meta"]["1"]["format_version"] = 3
    db.write_text(json.dumps(snap))
    with Workspace.open(db, reviewer="tester") as ws:
        assert ws.grades("q2") == {"d": 2}
        ws.import_files([_qrels(tmp_path)])
    assert json.loads(db.read_text())["meta"]["1"]["format_version"] == FORMAT_VERSION
    with Workspace.open(db, readonly=True) as ws:
        assert len(ws) == 3 + N_QUERIES * PER_QUERY


def test_a_benchmarks_first_open_ends_folded(tmp_path, samples):
    import shutil

    folder = tmp_path / "ops-handbook"
    shutil.copytree(samples / "ops-handbook", folder)
    with Workspace.open_benchmark(folder) as ws:
        assert ws.benchmark_import.added > 100 and ws._journal.count == 0
        labels = _labels(ws)
    with Workspace.open_benchmark(folder, readonly=True) as ws:
        assert not ws._pending and _labels(ws) == labels


def test_a_files_labels_taken_whole_are_those_taken_one_by_one(tmp_path):
    """_read_files takes the first file's pairs whole (each pair once); a file read again goes one pair
    at a time, as every later file does: both give the same labels, in the same order, and a pair given
    twice with two grades is still refused with both places."""
    from rankgate.core.errors import InputError
    from rankgate.core.formats import read_qrels
    from rankgate.store.transfer.imports import ImportReport, _read_files

    qrels = read_qrels(str(_qrels(tmp_path)))
    whole, declared = _read_files([qrels], [], (), None, ImportReport(files=[]))
    again, declared_again = _read_files([qrels, qrels], [], (), None, ImportReport(files=[]))
    assert list(whole.items()) == list(again.items()) and declared == declared_again
    assert len(whole) == N_QUERIES * PER_QUERY
    assert whole[("q00", "d00-07")][0] == (-1 + 7 % 4, "reason 1", "c1", "ana")
    changed = read_qrels(str(_qrels(tmp_path, "other.jsonl", grade_shift=1)))
    with pytest.raises(InputError, match="is judged .* here but .* in "):
        _read_files([qrels, changed], [], (), None, ImportReport(files=[]))
