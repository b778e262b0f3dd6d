"""A journal or snapshot whose checksums hold over bytes rankgate never wrote (a hostile or careless author):
read as damage, named, never a traceback, never a store that recovery writes and then cannot open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankgate.store.storage import JOURNAL_VERSION, DamagedFile, encode_record, read_journal
from rankgate.store.workspace import Workspace

from .conftest import labels_of


def _store(db: Path, n: int = 6) -> dict:
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(1, n + 1):
            ws.set_judgment("q1", f"d{i}", 2, reason="r", create_query=True)
        return labels_of(ws)


def _rewrite(db: Path, change) -> None:
    """Re-frame every journal record (valid checksums and lengths) after `change(records)`."""
    journal = db.with_name(db.name + ".journal")
    lines = journal.read_bytes().splitlines()
    records = [json.loads(line[18:]) for line in lines]
    change(records)
    journal.write_bytes(b"".join(encode_record(r) for r in records))


def _grade_text(rs):
    rs[3]["ops"][-1][1]["grade"] = "two"


def _ops_not_pairs(rs):
    rs[3]["ops"] = "xyz"


def _events_not_objects(rs):
    rs[3]["events"] = "zz"


def _event_of_no_op(rs):
    rs[3]["events"][0]["columns_op"] = 99


def _columns_of_unequal_length(rs):
    rs[3]["ops"].append(["columns", {"query": "q1", "n": 5}])


def _seq_is_true(rs):
    rs[3]["seq"] = True


@pytest.mark.parametrize("change", [_grade_text, _ops_not_pairs, _events_not_objects, _seq_is_true,
                                    _event_of_no_op, _columns_of_unequal_length])
def test_a_checksummed_record_that_is_no_edit_is_damage_named_by_recovery(db, change):
    expected = _store(db)
    _rewrite(db, change)
    with pytest.raises(DamagedFile, match="labels recover"):
        Workspace.open(db, readonly=True)
    report = Workspace.recover(db)
    assert report["lost_edits"] == [3] and report["replayed"] == 5
    del expected[("q1", "d3")]
    with Workspace.open(db, readonly=True) as ws:  # the recovered store opens, and holds every other edit
        assert labels_of(ws) == expected


def test_a_forged_edit_number_of_a_quadrillion_is_named_not_counted_one_by_one(db):
    _store(db)
    _rewrite(db, lambda rs: rs[3].update(seq=10**15))
    report = Workspace.recover(db)  # (a list of 10**15 lost edit numbers ran out of memory)
    assert "edits 3, 7-999999999999999 could not be read" in report["lost"]
    assert report["replayed"] == 6 and len(report["lost_edits"]) <= 100_000
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d9", 1, reason="after")
        assert ("q1", "d9") in labels_of(ws)


def _reseal(db: Path, **meta) -> None:
    from rankgate.store.storage import UNSEALED, dumps, seal

    tables = json.loads(db.read_bytes())
    tables["meta"]["1"].update(meta, checksum=UNSEALED.decode())
    db.write_bytes(seal(dumps(tables).encode("ascii")))


def test_a_store_from_a_newer_rankgate_is_refused_not_rolled_back_to_its_bak(db):
    """A sealed snapshot of format 6 is not damage: recover used to move it aside as damaged and restore the
    older .bak, saying `lost: nothing`."""
    _store(db, 3)
    Workspace.recover(db)  # a fold: the .bak exists now
    _reseal(db, format_version=6)
    before = db.read_bytes()
    with pytest.raises(DamagedFile, match=r"newer rankgate \(store format 6\)") as e:
        Workspace.open(db, readonly=True)
    assert "labels recover" not in str(e.value)
    with pytest.raises(DamagedFile, match="newer rankgate"):
        Workspace.recover(db)
    assert db.read_bytes() == before and not list(db.parent.glob("*.damaged-*"))


def test_a_journal_from_a_newer_rankgate_is_refused_not_moved_aside(db):
    _store(db, 3)
    journal = db.with_name(db.name + ".journal")

    def newer(rs):
        rs[0]["version"] = JOURNAL_VERSION + 1
    _rewrite(db, newer)
    before = journal.read_bytes()
    with pytest.raises(DamagedFile, match=rf"newer rankgate \(journal version {JOURNAL_VERSION + 1}\)"):
        Workspace.open(db, readonly=True)
    with pytest.raises(DamagedFile, match="newer rankgate"):
        Workspace.recover(db)
    assert journal.read_bytes() == before and not list(db.parent.glob("*.damaged-*"))


@pytest.mark.parametrize("point", ["recover-moved", "recover-snapshot"])
def test_recover_killed_midway_then_run_again_keeps_every_good_edit(db, point):
    """kill -9 inside `labels recover` (a damaged journal record in the middle): the journal used to be moved
    aside before the rebuilt snapshot was written, so a kill between lost every edit after the snapshot."""
    import os
    import subprocess
    import sys

    expected = _store(db)
    _rewrite(db, lambda rs: rs[3].update(ops="xyz"))
    env = dict(os.environ, RANKGATE_CRASHPOINT=point)
    code = "import sys; from rankgate.store.workspace import Workspace; Workspace.recover(sys.argv[1])"
    p = subprocess.run([sys.executable, "-c", code, str(db)], env=env, capture_output=True, timeout=60)
    assert p.returncode == -9, p.stderr
    report = Workspace.recover(db)  # what the killed run lost is said by this one (it never printed it)
    assert "edit 3 could not be read" in report["lost"]
    del expected[("q1", "d3")]
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected


def test_a_journal_put_in_place_from_elsewhere_is_said_to_lose_what_the_real_one_held(db, tmp_path):
    """Another workspace's journal, or this one's older generation, copied over the journal: its checksums hold,
    but the real journal's edits are gone. recover said `lost: nothing`."""
    import shutil

    _store(db, 3)
    other = tmp_path / "other" / "w.json"
    other.parent.mkdir()
    _store(other, 2)
    shutil.copy(other.with_name("w.json.journal"), db.with_name(db.name + ".journal"))
    report = Workspace.recover(db)
    assert "any edit after edit 0 is lost" in report["lost"] and report["lost_after"] == 0

    _store(db, 3)  # the three edits again, then a fold; two more; the folded journal copied back
    Workspace.recover(db)
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d8", 1, reason="r")
    shutil.copy(db.with_name(db.name + ".journal.prev"), db.with_name(db.name + ".journal"))
    report = Workspace.recover(db)
    assert "not the one the snapshot expects" in report["lost"] and report["lost_after"] == 3


@pytest.mark.slow
def test_a_journal_of_many_damaged_stretches_is_read_in_linear_time():
    """Each damaged stretch's line number used to be counted from the start of the file: 80,000 stretches
    took five minutes to open. Now each is counted from the last."""
    import time

    from rankgate.store.storage import scan_journal

    n = 40_000
    bad = b"deadbeef 00000010 garbage-garbage\n"
    data = b"".join(encode_record({"seq": i + 1, "ops": [], "events": []}) + bad for i in range(n))
    start = time.monotonic()
    good, damage, torn = scan_journal(data, 0, 2)
    assert len(good) == n and len(damage) == n and torn == 0
    assert [d.line for d in damage[:3]] == [2, 4, 6] and damage[-1].line == 2 * n
    assert time.monotonic() - start < 10  # (quadratic: minutes)


@pytest.mark.parametrize("sidecar", [".sync", ".sync-exported"])
def test_a_sync_record_that_is_a_fifo_or_dev_zero_is_no_record_not_a_hang(db, sidecar):
    """`labels export` read `<db>.sync-exported` through a link to /dev/zero until memory ran out, and blocked
    for ever on a FIFO; the sync summary the same."""
    import os
    import subprocess
    import sys

    _store(db, 1)
    side = db.with_name(db.name + sidecar)
    code = ("import sys; from rankgate.store import sync; db = sys.argv[1]; "
            "print(sync.read_summary(db), sync.read_record(db), sync.read_exported(db))")
    for make in (lambda: os.mkfifo(side), lambda: side.symlink_to("/dev/zero")):
        side.unlink(missing_ok=True)
        make()
        p = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=20)
        assert p.returncode == 0 and p.stdout.split() == ["None", "None", "None"], p.stderr[-500:]


@pytest.mark.parametrize("sidecar", [".journal", ".journal.prev", ".history"])
def test_a_store_file_replaced_by_a_link_to_a_device_is_moved_aside_and_its_loss_said(db, sidecar):
    """recover refused a link to /dev/zero in a store file's place ("is a device"), so nothing could be
    recovered; now it is moved aside like a damaged file, and the current journal's edits are said lost."""
    _store(db, 3)
    Workspace.recover(db)  # a fold: .bak, .journal.prev and .history.bak exist
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d4", 1, reason="r")
    side = db.with_name(db.name + sidecar)
    side.unlink()
    side.symlink_to("/dev/zero")
    report = Workspace.recover(db)
    assert not side.is_symlink() and report["moved_aside"]
    with Workspace.open(db, readonly=True) as ws:
        have = labels_of(ws)
    if sidecar == ".journal":
        assert "journal is missing" in report["lost"] and report["lost_after"] == 3 and len(have) == 3
    else:
        assert report["lost"] is None and len(have) == 4


def test_recover_prints_twenty_damaged_stretches_and_counts_the_rest(db, capsys):
    from rankgate.cli import main

    _store(db, 2)
    journal = db.with_name(db.name + ".journal")
    bad = b"deadbeef 00000010 garbage-garbage\n"
    journal.write_bytes(journal.read_bytes() + b"".join(
        bad + encode_record({"seq": 3 + i, "ops": [], "events": [], "ws": read_journal(journal).workspace_id})
        for i in range(30)))
    assert main(["labels", "recover", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.count("damaged: bytes") == 20 and "damaged: 10 more stretches (--json lists them all)" in out


def _journal_lines(db: Path) -> list[bytes]:
    return db.with_name(db.name + ".journal").read_bytes().splitlines(keepends=True)


def _theirs(tmp_path: Path) -> list[bytes]:
    """The journal lines of another workspace with four edits."""
    other = tmp_path / "other" / "w.json"
    other.parent.mkdir()
    with Workspace.open(other, fold_every=1000) as ws:
        for i in range(1, 5):
            ws.set_judgment("q1", f"theirs{i}", 0, reason="not ours", create_query=True)
    return _journal_lines(other)


@pytest.mark.parametrize("where", ["appended", "in place of ours"])
def test_a_record_copied_from_another_workspaces_journal_is_never_replayed(db, tmp_path, where):
    """Another workspace's record with the edit number ours would have (or had) checks out byte for byte: it
    was replayed as if it were ours, its label stored here. It is refused on open and skipped by recover."""
    expected = _store(db, 3)
    theirs = _theirs(tmp_path)
    ours = _journal_lines(db)
    if where == "appended":  # their edit 4 after our edit 3
        ours.append(theirs[4])
    else:  # their edit 2 over ours
        ours[2] = theirs[2]
        del expected[("q1", "d2")]
    db.with_name(db.name + ".journal").write_bytes(b"".join(ours))
    with pytest.raises(DamagedFile, match=r"line \d+ .*another workspace.*labels recover"):
        Workspace.open(db, readonly=True)
    report = Workspace.recover(db)
    assert len(report["foreign"]) == 1 and "another workspace's journal" in report["foreign"][0], report
    assert "skipped, not replayed" in report["foreign"][0]
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected  # none of theirs
    if where == "in place of ours":
        assert report["lost_edits"] == [2] and "edit 2 could not be read" in report["lost"]
    else:  # it may stand where an edit of ours was: what cannot be known is said
        assert "any edit of this workspace after edit 3 that they took the place of is lost" in report["lost"]
        assert report["lost_after"] == 3


def test_recover_prints_the_foreign_record_it_skipped(db, tmp_path, capsys):
    from rankgate.cli import main

    _store(db, 3)
    with open(db.with_name(db.name + ".journal"), "ab") as f:
        f.write(_theirs(tmp_path)[4])
    assert main(["labels", "list", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 5 holds edit 4 of another workspace's journal" in err
    assert main(["labels", "recover", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "foreign: line 5 of labels.json.journal holds edit 4 of another workspace's journal (workspace " in out
    assert "3 edits replayed" in out
