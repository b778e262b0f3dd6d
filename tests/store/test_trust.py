"""The store trusts no path (issue 18): special files, its own files as export targets, symlinked locks and
stores, a damaged or swapped journal, failed commands, a killed purge, and the current directory.

Special files are made here (a FIFO, and as root a character device node in the test's own folder): the
system's /dev/null is never named.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from rankgate.store.storage import DamagedFile, Locked, encode_record, read_journal
from rankgate.store.workspace import Workspace

from .conftest import labels_of, write

SECRET = "the-secret-reason-to-erase"


def side(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _three_edits(db: Path) -> None:
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(3):
            ws.set_judgment("q1", f"d{i}", i, reason=f"edit {i}", create_query=True)


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"special-{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:  # a node for the null device, in our own folder (as root only)
        try:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except (PermissionError, OSError):
            pytest.skip("making a device node needs root")
    return path


# --------------------------------------------------------------------------- special files


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("command", [["set", "q", "d", "1", "--reason", "r", "--add-query"], ["list"], ["status"],
                                     ["import", "QRELS"]])
def test_a_special_file_as_db_is_refused_up_front_and_left_as_it_is(tmp_path, cli, kind, command):
    path = _special(tmp_path, kind)
    qrels = write(tmp_path / "q.trec", "q 0 d 1\n")
    before = _files(tmp_path)
    code, out, err = cli("labels", *[str(qrels) if c == "QRELS" else c for c in command], "--db", path)
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "expected a label store file" in err and ("named pipe" in err or "device" in err)
    mode = os.lstat(path).st_mode
    assert (stat.S_ISFIFO(mode) if kind == "fifo" else stat.S_ISCHR(mode))  # never replaced by a regular file
    assert _files(tmp_path) == before  # no journal, lock or history beside it


def test_a_folder_as_db_is_refused(tmp_path, cli):
    code, _, err = cli("labels", "set", "--db", tmp_path, "q", "d", "1", "--reason", "r", "--add-query")
    assert code == 2 and "is a folder" in err
    assert _files(tmp_path) == []


# --------------------------------------------------------------------------- export targets


@pytest.mark.parametrize("suffix", ["", ".journal", ".lock", ".bak", ".journal.prev", ".history", ".history.bak",
                                    ".sync"])
def test_an_export_never_replaces_the_store_or_its_own_files(tmp_path, cli, suffix):
    db = tmp_path / "w.json"
    _three_edits(db)
    with Workspace.open(db) as ws:
        ws.checkpoint()  # .bak and .journal.prev exist
        ws.set_judgment("q1", "d9", 2, reason="in the journal only")
    target = side(db, suffix)
    kept = target.read_bytes() if target.exists() else None
    code, _, err = cli("labels", "export", "--db", db, "-o", target)
    assert code == 2 and err.count("\n") == 1
    assert "an export never replaces it" in err
    assert (target.read_bytes() if target.exists() else None) == kept
    with Workspace.open(db, readonly=True) as ws:
        assert len(labels_of(ws)) == 4  # every acknowledged edit is there


def test_an_export_through_a_link_to_the_store_is_refused_and_other_outputs_still_work(tmp_path, cli):
    db = tmp_path / "w.json"
    _three_edits(db)
    link = tmp_path / "out.trec"
    link.symlink_to(side(db, ".journal"))
    code, _, err = cli("labels", "export", "--db", db, "-o", link)
    assert code == 2 and "one of its own files" in err
    other = tmp_path / "store2.json"
    _three_edits(other)
    code, _, err = cli("labels", "export", "--db", db, "-o", other)  # another label store
    assert code == 2 and "holds a rankgate label store" in err
    code, out, _ = cli("labels", "export", "--db", db, "-o", tmp_path / "w.json.trec")
    assert code == 0 and "wrote 3 judgments" in out


# --------------------------------------------------------------------------- symlinks


def test_a_symlinked_lock_is_refused_and_its_target_untouched(tmp_path, cli):
    db = tmp_path / "w.json"
    _three_edits(db)
    precious = write(tmp_path / "precious.txt", "do not truncate me\n")
    side(db, ".lock").unlink()
    side(db, ".lock").symlink_to(precious)
    code, _, err = cli("labels", "set", "--db", db, "q1", "d0", "3", "--reason", "again")
    assert code == 2 and "symbolic link" in err and err.count("\n") == 1
    assert precious.read_text() == "do not truncate me\n"
    with Workspace.open(db, readonly=True) as ws:
        assert ws.judgment("q1", "d0").grade == 0


def test_a_symlinked_db_uses_the_real_files_and_excludes_a_writer_on_the_real_path(tmp_path):
    real = tmp_path / "store" / "w.json"
    _three_edits(real)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with Workspace.open(link) as ws:
        assert ws.path == real
        with pytest.raises(Locked):
            Workspace.open(real)
        ws.set_judgment("q1", "d5", 1, reason="through the link")
    with Workspace.open(real) as ws:
        with pytest.raises(Locked):
            Workspace.open(link)
        assert ws.judgment("q1", "d5").reason == "through the link"
    assert _files(tmp_path) == ["link.json", "store"]  # no journal or lock beside the link


# --------------------------------------------------------------------------- the journal


def _flip_last_line(journal: Path) -> None:
    data = bytearray(journal.read_bytes())
    i = data.rindex(b'"grade":') + len(b'"grade":')
    data[i] = ord("9") if data[i] != ord("9") else ord("8")  # a complete line, one byte changed
    journal.write_bytes(bytes(data))


def test_a_damaged_last_journal_line_is_reported_and_its_event_id_never_reused(tmp_path, cli):
    db = tmp_path / "w.json"
    _three_edits(db)
    with Workspace.open(db, readonly=True) as ws:
        last_id = ws.history()[-1].id
    _flip_last_line(side(db, ".journal"))
    assert read_journal(side(db, ".journal")).damage  # not taken for a torn record
    for readonly in (True, False):
        with pytest.raises(DamagedFile, match=r"damaged \(checksum mismatch\).*labels recover"):
            Workspace.open(db, readonly=readonly)
    code, _, err = cli("labels", "set", "--db", db, "q1", "d7", "1", "--reason", "r")
    assert code == 2 and err.count("\n") == 1 and "checksum mismatch" in err
    report = Workspace.recover(db)
    assert report["lost"]  # said, not silent
    with Workspace.open(db) as ws:
        assert labels_of(ws) == {("q1", "d0"): 0, ("q1", "d1"): 1}  # the edits before it are kept
        event = ws.set_judgment("q1", "d7", 1, reason="after the recovery")
        assert event.id > last_id  # the damaged edit's id is not given again


def test_a_deleted_journal_is_reported(tmp_path):
    db = tmp_path / "w.json"
    _three_edits(db)
    side(db, ".journal").unlink()
    for readonly in (True, False):
        with pytest.raises(DamagedFile, match="the journal is missing"):
            Workspace.open(db, readonly=readonly)


def test_a_journal_swapped_for_the_previous_one_is_reported(tmp_path):
    db = tmp_path / "w.json"
    with Workspace.open(db, fold_every=1000) as ws:
        ws.set_judgment("q1", "d0", 1, reason="folded", create_query=True)
        ws.checkpoint()
        ws.set_judgment("q1", "d1", 2, reason="folded too")
        ws.checkpoint()
        ws.set_judgment("q1", "d2", 3, reason="journal only, acknowledged")
    os.replace(side(db, ".journal.prev"), side(db, ".journal"))
    with pytest.raises(DamagedFile, match="not the one the snapshot expects"):
        Workspace.open(db)
    with pytest.raises(DamagedFile, match="not the one the snapshot expects"):
        Workspace.open(db, readonly=True)


def _strip_generations(db: Path) -> None:
    """Make the store look as one written before journal generations (store format 2, journal version 1)."""
    tables = json.loads(db.read_bytes())
    meta = tables["meta"]["1"]
    meta.pop("journal_gen", None)
    meta.pop("checksum", None)
    meta["format_version"] = 4
    db.write_text(json.dumps(tables, separators=(",", ":")))
    _to_journal_v1(side(db, ".journal"), drop_gen=True)


def _to_journal_v1(journal: Path, drop_gen: bool = False) -> None:
    """Rewrite a journal as rankgate wrote it before records carried their length: "crc32 json" lines."""
    jc = read_journal(journal)
    header = {"journal": "rankgate-journal", "version": 1, "base": jc.base, "workspace": jc.workspace_id}
    if jc.gen and not drop_gen:
        header["gen"] = jc.gen
    journal.write_bytes(b"".join(encode_record(r, version=1) for r in [header] + jc.records))


def test_a_store_written_before_generations_still_opens_and_gains_one_on_write(tmp_path):
    db = tmp_path / "w.json"
    _three_edits(db)
    _strip_generations(db)
    assert read_journal(side(db, ".journal")).gen is None
    with Workspace.open(db, readonly=True) as ws:
        assert len(labels_of(ws)) == 3
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d3", 1, reason="new")
        ws.checkpoint()
    assert json.loads(db.read_bytes())["meta"]["1"]["journal_gen"] == read_journal(side(db, ".journal")).gen


# --------------------------------------------------------------------------- failed commands


@pytest.mark.parametrize("command", [
    ["set", "q-unknown", "d", "1", "--reason", "r"],
    ["set", "q", "d", "1"],  # a new label needs --reason
    ["import", "BAD"],
    ["status"],
    ["list"],
])
def test_a_failed_command_creates_no_workspace_files(tmp_path, cli, command):
    bad = write(tmp_path / "bad.trec", "q 0 d notagrade\n")
    db = tmp_path / "new" / "deeper" / "w.json"
    code, _, err = cli("labels", *[str(bad) if c == "BAD" else c for c in command], "--db", db)
    assert code == 2 and err.count("\n") == 1
    assert not (tmp_path / "new").exists()


def test_a_failed_import_into_the_default_workspace_creates_no_workspace_files(tmp_path, cli, private_home):
    bad = write(tmp_path / "bad.trec", "q 0 d notagrade\n")
    code, _, _ = cli("labels", "import", bad)
    assert code == 2
    assert not list(private_home.rglob("*.json*"))


@pytest.mark.slow
def test_labels_commands_write_nothing_to_the_current_directory(tmp_path, monkeypatch, private_home):
    """Without --db, workspace files live under the data folder (RANKGATE_HOME), never in the cwd."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\nq1 0 d2 0\n")
    monkeypatch.chdir(cwd)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for argv in (["import", qrels], ["set", "q1", "d3", "2", "--reason", "r"], ["set", "qx", "d", "1", "--reason", "r"],
                 ["list"], ["status"], ["freeze", "v1"], ["history"], ["export"]):
        subprocess.run([sys.executable, "-m", "rankgate", "labels", *map(str, argv)], cwd=cwd, env=env,
                       capture_output=True, timeout=60)
    assert _files(cwd) == []
    assert (private_home / "workspaces" / "default.json.journal").exists()


# --------------------------------------------------------------------------- a killed purge

PURGER = """
import sys
from rankgate.store.workspace import Workspace
ws = Workspace.open(sys.argv[1], fold_every=1000)
ws.purge("q-secret", why="asked to")
print("done", flush=True)
"""


@pytest.mark.parametrize("point", ["purge-backups", "purge-journaled", "fold-history", "fold-journal",
                                   "fold-snapshot"])
def test_a_kill_during_purge_leaves_the_purged_text_in_no_backup(tmp_path, point):
    db = tmp_path / "w.json"
    with Workspace.open(db, fold_every=1000) as ws:
        ws.set_judgment("q-secret", "d1", 2, reason=SECRET, create_query=True)
        ws.set_judgment("q-keep", "d1", 1, reason="kept", create_query=True)
        ws.checkpoint()  # the secret is in the snapshot, history and journal backups now
        ws.set_judgment("q-keep", "d2", 1, reason="kept too")
        ws.checkpoint()
    assert SECRET.encode() in side(db, ".bak").read_bytes() + side(db, ".journal.prev").read_bytes()
    env = dict(os.environ, RANKGATE_CRASHPOINT=point, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-c", PURGER, str(db)], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    for suffix in (".bak", ".history.bak"):
        assert not side(db, suffix).exists() or SECRET.encode() not in side(db, suffix).read_bytes()
    with Workspace.open(db) as ws:  # the next writer finishes the erasure (or the purge never happened)
        purged = ws.query("q-secret") is None
        assert ws.judgment("q-keep", "d2").reason == "kept too"
    if purged:
        for p in tmp_path.iterdir():
            assert SECRET.encode() not in p.read_bytes(), p.name
    with Workspace.open(db, readonly=True) as ws:
        ids = [e.id for e in ws.history()]
        assert ids == sorted(set(ids))


# --------------------------------------------------------------------------- format 3: columns, built on demand


def test_columns_round_trip_every_field_and_are_built_per_query(tmp_path):
    from rankgate.store.columns import LazyLabels
    from rankgate.store.durable import FORMAT_VERSION

    db = tmp_path / "w.json"
    with Workspace.open(db) as ws:
        for i in range(6):
            ws.set_judgment(f"q{i % 3}", f"d{i}", i - 1, reason=f"reason {i}", create_query=True,
                            reviewer="ana" if i % 2 else "bo")
        ws.mark_unsure("q1", "d1", "not sure")  # a field outside the columns
        ws.remove_judgment("q2", "d2", reviewer="bo")
        ws.set_judgment("q0", "d0", 3, reason="second reviewer", reviewer="cy")
        ws.adjudicate("q0", "d0", 2, "final")
        want = [(j.query, j.doc, j.grade, j.reason, j.reviewer, j.unsure, j.removed)
                for j in ws.reviews(include_removed=True)]
        labels = [j.as_dict() for j in ws.judgments()]
        ws.checkpoint()
    snap = json.loads(db.read_bytes())
    assert snap["meta"]["1"]["format_version"] == FORMAT_VERSION and len(snap["judgments"]) == 3  # a document a query
    with Workspace.open(db, readonly=True) as ws:
        assert isinstance(ws._labels, LazyLabels)
        assert set(ws._labels.raw) == {"q1", "q2"}  # nothing built on open (but q0, for its adjudication)
        assert ws.judgment("q1", "d1").unsure == "not sure"
        assert set(ws._labels.raw) == {"q2"}  # reading one query built that query only
        assert [(j.query, j.doc, j.grade, j.reason, j.reviewer, j.unsure, j.removed)
                for j in ws.reviews(include_removed=True)] == want
        assert [j.as_dict() for j in ws.judgments()] == labels
        assert len(ws) == 5


def test_a_fold_writes_untouched_queries_back_as_they_were(tmp_path):
    db = tmp_path / "w.json"
    with Workspace.open(db) as ws:
        for i in range(4):
            ws.set_judgment(f"q{i}", "d", 1, reason=f"r{i}", create_query=True)
        ws.checkpoint()
    before = json.loads(db.read_bytes())["judgments"]
    with Workspace.open(db) as ws:
        ws.set_judgment("q3", "d", 2, reason="changed")
        ws.checkpoint()
        assert set(ws._labels.raw) == {"q0", "q1", "q2"}  # the fold built none of them
    after = json.loads(db.read_bytes())["judgments"]
    assert [d for d in after.values() if d["query"] != "q3"] == [d for d in before.values() if d["query"] != "q3"]
    with Workspace.open(db, readonly=True) as ws:
        assert {j.query: j.grade for j in ws.judgments()} == {"q0": 1, "q1": 1, "q2": 1, "q3": 2}


def test_a_purge_of_a_query_never_read_erases_it(tmp_path):
    db = tmp_path / "w.json"
    with Workspace.open(db) as ws:
        ws.set_judgment("q-secret", "d", 1, reason=SECRET, create_query=True)
        ws.set_judgment("q-keep", "d", 1, reason="kept", create_query=True)
    with Workspace.open(db) as ws:
        ws.purge("q-secret")
        assert len(ws) == 1
    with Workspace.open(db, readonly=True) as ws:
        assert [j.query for j in ws.judgments()] == ["q-keep"]
    for p in tmp_path.iterdir():
        assert SECRET.encode() not in p.read_bytes(), p.name
