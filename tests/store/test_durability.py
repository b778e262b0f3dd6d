"""One writer at a time, readers alongside; damaged files give a clear error and a way back."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rankgate.core.errors import InputError
from rankgate.store.storage import DamagedFile, SnapshotStorage, read_journal
from rankgate.store.workspace import Workspace

from .conftest import labels_of, write


def side(db, suffix):
    return db.with_name(db.name + suffix)


def _fill(db, folds: bool = True) -> dict:
    """A workspace with a fold behind it (so .bak and .journal.prev exist) and edits after it."""
    with Workspace.open(db, fold_every=4) as ws:
        for i in range(11):
            ws.set_judgment(f"q{i % 3}", f"d{i}", i % 4, reason=f"r{i}", create_query=True)
        ws.freeze("v1")
        ws.remove_judgment("q0", "d0")
        assert ws._journal.count  # edits in the journal, after the last fold
        return labels_of(ws)


HOLDER = """
import sys
from rankgate.store.workspace import Workspace
ws = Workspace.open(sys.argv[1], reviewer="holder")
ws.set_judgment("q1", "d1", 1, create_query=True)
print("ready", flush=True)
sys.stdin.read()
ws.close()
"""


@pytest.mark.slow
def test_a_second_writer_is_refused_naming_the_holder_and_readers_work(db):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        with pytest.raises(InputError, match=rf"is open for writing by \S+ \(pid {proc.pid} on .+, since .+\)"):
            Workspace.open(db)
        with Workspace.open(db, readonly=True) as reader:  # the holder's acknowledged edit is visible
            assert labels_of(reader) == {("q1", "d1"): 1}
    finally:
        proc.kill()  # even SIGKILL leaves no stale lock: the kernel drops it
        proc.wait()
    with Workspace.open(db) as ws:
        assert labels_of(ws) == {("q1", "d1"): 1}


def test_one_writer_per_workspace_within_a_process_too(db):
    with Workspace.open(db):
        with pytest.raises(InputError, match="open for writing"):
            Workspace.open(db)
    Workspace.open(db).close()  # released on close


def test_a_cut_snapshot_names_the_file_and_the_way_back(db):
    expected = _fill(db)
    good_bak = side(db, ".bak").read_bytes()
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    for readonly in (False, True):
        with pytest.raises(DamagedFile) as e:
            Workspace.open(db, readonly=readonly)
        msg = str(e.value)
        assert msg.startswith(f"{db}: cut short after {len(data) // 2} bytes")
        assert f"{db}.bak" in msg and "rankgate labels recover --db" in msg
    assert side(db, ".bak").read_bytes() == good_bak  # the good copy was not touched
    report = Workspace.recover(db)
    assert report["snapshot"] == "restored from labels.json.bak" and not report["lost"]
    assert any(".damaged-" in p for p in report["moved_aside"])
    with Workspace.open(db, readonly=True) as ws:  # .bak + journal.prev + journal: nothing lost
        assert labels_of(ws) == expected
        assert [v.name for v in ws.versions()] == ["v1"]
        assert ws.history()[-1].kind == "remove"
    with Workspace.open(db) as ws:  # it takes edits, and the way back holds after a recovery too
        ws.set_judgment("q1", "d1", 3)
        expected[("q1", "d1")] = 3
    db.write_bytes(db.read_bytes()[:100])
    assert Workspace.recover(db)["snapshot"] == "restored from labels.json.bak"
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected


def test_recover_needs_something_to_recover_from(tmp_path):
    with pytest.raises(InputError, match="nothing to recover"):
        Workspace.recover(tmp_path / "none.json")


def test_garbage_in_the_snapshot(db):
    _fill(db)
    data = bytearray(db.read_bytes())
    data[40:44] = b"\x00}{]"
    db.write_bytes(bytes(data))
    with pytest.raises(DamagedFile, match="invalid JSON at line 1 column"):
        Workspace.open(db)


def test_a_file_that_is_not_a_store_is_never_overwritten(tmp_path):
    qrels = write(tmp_path / "qrels.json", json.dumps({"_default": {"1": {"q": 1}}}))
    before = qrels.read_bytes()
    with pytest.raises(DamagedFile, match="not a rankgate label store"):
        Workspace.open(qrels)
    other = write(tmp_path / "notes.txt", "my notes\n")
    with pytest.raises(DamagedFile, match="invalid JSON"):
        Workspace.open(other)
    assert qrels.read_bytes() == before and other.read_text() == "my notes\n"


def test_an_empty_or_missing_snapshot_beside_other_files_is_damage(db):
    _fill(db)
    db.write_bytes(b"")
    with pytest.raises(DamagedFile, match="the snapshot is empty but"):
        Workspace.open(db)
    db.unlink()
    with pytest.raises(DamagedFile, match="the snapshot is missing but"):
        Workspace.open(db)
    assert not db.exists()  # not replaced by a new, empty store


def test_a_journal_damaged_mid_way_keeps_every_other_edit_and_names_the_damaged_one(db, cli):
    """#35: one damaged record in the middle of the journal kept 2 of 6 acknowledged edits (everything after
    the damage was dropped). Now the records after it are found again (each carries its length) and replayed;
    the damaged one is named, with what its bytes still show."""
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(6):
            ws.set_judgment("q1", f"d{i}", 1, create_query=True)
    journal = side(db, ".journal")
    lines = journal.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"grade":1', b'"grade":7')  # the checksum no longer matches
    journal.write_bytes(b"\n".join(lines))
    with pytest.raises(DamagedFile, match=r"labels.json.journal:4: journal record at line 4 is damaged "
                       r"\(checksum mismatch\); it held edit 3 \(set q1 d2\).*keeps every intact edit"):
        Workspace.open(db, readonly=True)
    code, out, err = cli("labels", "recover", "--db", db)
    assert code == 0, err
    assert "5 edits replayed" in out and "lost: edit 3 could not be read" in out
    assert "labels.json.journal (line 4) are damaged: edit 3 (set q1 d2)" in out
    with Workspace.open(db) as ws:
        assert set(ws.grades("q1")) == {"d0", "d1", "d3", "d4", "d5"}  # only the damaged record's edit is lost
        ws.set_judgment("q1", "d9", 2)
    with Workspace.open(db, readonly=True) as ws:
        assert ws.grades("q1")["d9"] == 2


def test_a_torn_last_record_is_ignored(db):
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d1", 1, create_query=True)
    journal = side(db, ".journal")
    whole = journal.read_bytes()
    journal.write_bytes(whole + whole.split(b"\n")[-2][:30])  # a record cut short, no newline
    with Workspace.open(db) as ws:
        assert labels_of(ws) == {("q1", "d1"): 1}
    assert journal.read_bytes() == whole
    # a complete last line whose checksum fails is damage, not a torn record: tests/store/test_trust.py


def test_a_damaged_history_is_found_when_read_and_recovered_from_its_backup(db):
    expected = _fill(db)
    hist = side(db, ".history")
    hist.write_bytes(hist.read_bytes()[:-10])
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected  # labels do not need the history
        with pytest.raises(DamagedFile, match=r"labels.json.history: cut short"):
            ws.history()
    with pytest.raises(DamagedFile):  # a writer cannot fold onto it either
        with Workspace.open(db) as ws:
            ws.checkpoint()
    report = Workspace.recover(db)
    assert report["history"] == "restored from backup" and not report["lost"]
    with Workspace.open(db, readonly=True) as ws:
        assert [e.id for e in ws.history()] == list(range(1, 11 + 3 + 1 + 1 + 1))
        assert labels_of(ws) == expected


def test_a_failed_automatic_fold_does_not_fail_the_edit(db):
    expected = _fill(db)
    hist = side(db, ".history")
    hist.write_bytes(hist.read_bytes()[:-10])
    with Workspace.open(db, fold_every=2) as ws:
        for i in range(5):
            assert ws.set_judgment("q2", f"x{i}", 1).kind == "set"  # each edit is durable and acknowledged
            expected[("q2", f"x{i}")] = 1
        assert "cut short" in ws.fold_problem
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected
    Workspace.recover(db)
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected and ws.history()[-1].doc == "x4"


def test_recover_on_an_intact_workspace_changes_nothing(db):
    expected = _fill(db)
    report = Workspace.recover(db)
    assert (report["snapshot"], report["history"], report["lost"], report["moved_aside"]) == \
        ("intact", "intact", None, [])
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected and len(ws.history()) == 16


def test_snapshots_are_tinydb_files(db):
    from tinydb import Query, TinyDB

    _fill(db)
    with Workspace.open(db) as ws:
        ws.checkpoint()
    with TinyDB(db, access_mode="r") as tdb:
        assert tdb.tables() == {"meta", "queries", "judgments", "versions"}
        (q1,) = tdb.table("judgments").search(Query().query == "q1")  # one document a query, in columns
        assert len(q1["doc"]) == len(q1["grade"]) == 4
        assert tdb.table("versions").all()[0]["name"] == "v1"
    with TinyDB(side(db, ".history"), access_mode="r") as tdb:
        assert [e["kind"] for e in tdb.table("history").all()][-1] == "remove"
    assert SnapshotStorage(db).read()["meta"]["1"]["format"] == "rankgate-labels"


def test_no_temporary_files_are_left_behind(db):
    _fill(db)
    with Workspace.open(db) as ws:
        ws.checkpoint()
        ws.export("trec", db.parent / "out.trec")
    assert not [p.name for p in db.parent.iterdir() if ".tmp-" in p.name]


def test_keeping_a_backup_that_already_links_the_file_leaves_no_temporary(tmp_path):
    """A kill between keeping the .bak (a hard link) and replacing the snapshot leaves the two as
    one file; the next keep must not leave its temporary link behind (rename of a link over another
    link of the same file does nothing). Found by the crash test."""
    import os

    from rankgate.store.storage import keep_copy

    src, bak = tmp_path / "labels.json", tmp_path / "labels.json.bak"
    src.write_text("{}")
    assert keep_copy(src, bak) and os.path.samefile(src, bak)
    assert keep_copy(src, bak) and os.path.samefile(src, bak)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels.json", "labels.json.bak"]
