"""A benchmark folder's qrels file and its workspace (store/sync.py): which workspace, `labels status BENCH`,
`labels export BENCH` back to the folder, and the gate's warning about unexported edits."""

from __future__ import annotations

import pytest

import json
import os
import shutil
import subprocess
import sys

from rankgate.store import paths, sync, unexported
from rankgate.store.workspace import Workspace


def _copy(samples, tmp_path, name="seed-lab", to=None):
    folder = tmp_path / (to or name)
    shutil.copytree(samples / name, folder)
    return folder


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _workspace_files():
    d = paths.workspace_dir(create=False)
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


# ---------------------------------------------------------------- 1. which workspace


def test_copies_of_a_benchmark_never_share_a_workspace(cli, samples, tmp_path):
    a = _copy(samples, tmp_path, to="a")
    b = _copy(samples, tmp_path, to="b")
    assert cli("labels", "set", "-b", a, "q-dns", "doc-x", "2", "--reason", "r", "--add-query")[0] == 0
    code, out, err = cli("labels", "status", b)
    assert code == 0, err  # b has its own workspace: in sync with its own file
    assert f"path: {paths.benchmark_workspace_path('seed-lab', b)}" in out
    assert "a new workspace for this folder" in err and f"at {a.resolve()} keeps its own" in err
    code, out, _ = cli("labels", "status", a)
    assert code == 1 and f"path: {paths.benchmark_workspace_path('seed-lab', a)}" in out
    assert paths.benchmark_workspace_path("seed-lab", a) != paths.benchmark_workspace_path("seed-lab", b)


def test_a_moved_folder_finds_its_workspace_by_name(cli, samples, tmp_path):
    old = _copy(samples, tmp_path, to="old")
    with Workspace.open_benchmark(old) as ws:
        ws.set_judgment("q-dns", "doc-dns-negative-cache", 2, reason="explains the negative TTL")
    new = tmp_path / "new"
    old.rename(new)
    code, out, err = cli("labels", "list", "-b", new, "q-dns", "doc-dns-negative-cache")
    assert code == 0 and " 2 " in out
    assert f"was at {old.resolve()}, which no longer exists" in err and "is adopted by this folder" in err
    names = _workspace_files()
    assert paths.benchmark_workspace_path("seed-lab", new).name in names
    assert paths.benchmark_workspace_path("seed-lab", old).name not in names  # moved, not copied
    code, out, err = cli("labels", "status", new)
    assert code == 1 and err == ""  # adopted once; said once
    assert "(not exported): 0 added, 1 changed, 0 removed" in out
    copy = _copy(samples, tmp_path, to="copy")  # a copy made now does not take the moved folder's workspace
    code, _, err = cli("labels", "status", copy)
    assert code == 0 and f"at {new.resolve()} keeps its own" in err


def test_the_old_name_only_workspace_is_adopted(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path)
    legacy = paths.workspace_path("seed-lab")
    with Workspace.open_benchmark(folder, path=legacy) as ws:  # what rankgate wrote before workspaces were keyed
        ws.set_judgment("q-gpu", "doc-gpu-memory", 2, reason="budget")
    code, out, err = cli("labels", "status", folder)
    assert "workspace seed-lab.json (this benchmark's, by name) now lives at " in err
    keyed = paths.benchmark_workspace_path("seed-lab", folder)
    assert f"path: {keyed}" in out and not legacy.exists()
    # its last import is rebuilt from its history: the edit is the workspace's, not yet exported
    assert code == 1 and "(not exported): 0 added, 1 changed, 0 removed" in out


def test_a_workspace_held_by_a_writer_is_not_moved(samples, tmp_path):
    from rankgate.store.storage import Locked

    old = _copy(samples, tmp_path, to="old")
    holder = Workspace.open_benchmark(old)
    try:
        new = tmp_path / "new"
        old.rename(new)
        try:
            Workspace.open_benchmark(new)
        except Locked as e:
            assert "is open for writing by" in str(e)
        else:
            raise AssertionError("adopted a workspace another writer holds")
        assert holder.path.exists()
    finally:
        holder.close()


# ---------------------------------------------------------------- 2. labels status BENCH


def _write_json(path, obj):
    path.write_text(json.dumps(obj, indent=2))


def test_status_counts_both_ways(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path)
    assert cli("labels", "status", folder)[0] == 0
    assert cli("labels", "set", "-b", folder, "q-dns", "doc-dns-negative-cache", "2", "--reason", "r")[0] == 0
    assert cli("labels", "set", "-b", folder, "q-gpu", "doc-new", "1", "--reason", "r")[0] == 0
    qrels = json.loads((folder / "qrels.json").read_text())
    qrels["q-backup"].remove("doc-restore-test")  # removed in the file
    qrels["q-recovery"].append("doc-from-file")  # added in the file
    qrels["q-gpu"].append("doc-new")  # added on both sides, with the same grade: no difference
    _write_json(folder / "qrels.json", qrels)
    code, out, _ = cli("labels", "status", folder)
    assert code == 1
    assert "in the qrels file since then: 1 added, 0 changed, 1 removed" in out
    assert "in the workspace since then (not exported): 0 added, 1 changed, 0 removed" in out
    code, out, _ = cli("labels", "status", folder, "--json")
    s = json.loads(out)["sync"]
    assert (s["in_sync"], s["file"], s["workspace"], s["conflicts"]) == (
        False, {"added": 1, "changed": 0, "removed": 1}, {"added": 0, "changed": 1, "removed": 0}, 0)
    assert s["last_sync"]["how"] == "import"
    assert "doc-from-file" not in (paths.benchmark_workspace_path("seed-lab", folder).with_suffix(".json.sync")
                                   .read_text())  # the record holds hashes of the pairs, not their IDs


def test_a_label_changed_on_both_sides_is_a_conflict(samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    with Workspace.open_benchmark(folder) as ws:
        ws.set_judgment("q1", "d1", 2, reason="fully")
    text = (folder / "qrels.trec").read_text().replace("q1 0 d1 1", "q1 0 d1 0")
    (folder / "qrels.trec").write_text(text)
    with Workspace.open_benchmark(folder, readonly=True) as ws:
        c = sync.compare(ws, ws.manifest)
    assert [(d.query, d.doc, d.base, d.file, d.workspace, d.side) for d in c.differences] == [
        ("q1", "d1", 1, 0, 2, "both")]
    assert not c.in_sync and c.file_changed and c.unexported == 1


def test_status_of_a_qrels_file_that_no_longer_parses(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "status", folder)[0] == 0
    db = paths.benchmark_workspace_path("three-questions", folder)
    before = {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith(".lock")}
    with open(folder / "qrels.trec", "a") as f:
        f.write("q4 0 d9 high\n")
    code, _, err = cli("labels", "status", folder)
    assert code == 2 and f"{folder / 'qrels.trec'}:6" in err
    assert {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith(".lock")} == before


# ---------------------------------------------------------------- 3. the gate's warning


def _gate(*argv, env):
    return subprocess.run([sys.executable, "-m", "rankgate", *map(str, argv)], capture_output=True, text=True,
                          env=env)


@pytest.mark.slow
def test_gate_warns_of_unexported_edits_and_decides_the_same(cli, samples, tmp_path, private_home):
    folder = _copy(samples, tmp_path)
    env = dict(os.environ, RANKGATE_HOME=str(private_home))
    plain = _gate("gate", folder, "--quiet", env=env)
    assert plain.stderr == "" and _workspace_files() == []  # no workspace: nothing read, nothing created
    assert cli("labels", "status", folder)[0] == 0
    assert _gate("gate", folder, "--quiet", env=env).stderr == ""  # a workspace in sync: silent
    assert cli("labels", "set", "-b", folder, "q-recovery", "doc-new", "2", "--reason", "r")[0] == 0
    assert cli("labels", "set", "-b", folder, "q-dns", "doc-dns-negative-cache", "2", "--reason", "r")[0] == 0
    warned = _gate("gate", folder, "--quiet", env=env)
    assert (warned.returncode, warned.stdout) == (plain.returncode, plain.stdout)  # same decision, same JSON
    lines = warned.stderr.splitlines()
    assert len(lines) == 1 and "holds 2 unexported label edits" in lines[0]
    assert f"rankgate labels status {folder}" in lines[0]
    for cmd in ("score", "compare"):
        assert "2 unexported label edits" in _gate(cmd, folder, env=env).stderr
    # with --qrels the gate does not read the folder's labels: nothing to warn about
    assert _gate("gate", folder, "--quiet", "--qrels", folder / "qrels.json", env=env).stderr == ""


def test_the_warning_sees_edits_of_a_writer_that_is_still_open(samples, tmp_path):
    folder = _copy(samples, tmp_path)
    Workspace.open_benchmark(folder).close()
    from rankgate.core.benchmark import load_manifest

    manifest = load_manifest(folder)
    with Workspace.open_benchmark(folder) as ws:  # the app, say, has it open: the count on file is stale
        ws.set_judgment("q-dns", "doc-new", 1, reason="r")
        assert unexported.unexported_count(manifest)[0] == 1
    assert unexported.unexported_count(manifest)[0] == 1


@pytest.mark.slow
def test_the_gate_path_never_imports_tinydb(samples, tmp_path, private_home):
    folder = _copy(samples, tmp_path)
    with Workspace.open_benchmark(folder) as ws:
        ws.set_judgment("q-dns", "doc-new", 1, reason="r")
    code = ("import sys; from rankgate.cli import main; rc = main(['gate', %r]); "
            "print('tinydb' in sys.modules)" % str(folder))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, RANKGATE_HOME=str(private_home)))
    assert out.stdout.strip().endswith("False") and "1 unexported label edit " in out.stderr


# ---------------------------------------------------------------- 4. export back to the folder


@pytest.mark.slow
def test_export_writes_back_to_the_folders_qrels_in_its_own_format(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "also answers it")[0] == 0
    code, out, err = cli("labels", "export", folder)
    assert code == 0, err
    assert f"wrote 5 judgments to {folder / 'qrels.trec'} (trec" in out
    text = (folder / "qrels.trec").read_text()
    own = "# The golden-set example: three questions, one relevant set each.\n"  # the file's own first line stays
    assert text.startswith(own + "# version: unfrozen\n# content_hash: sha256:") and "q1 0 d2 1\n" in text
    assert cli("labels", "status", folder)[0] == 0  # in sync
    env = dict(os.environ)
    gate = _gate("score", folder, env=env)
    assert gate.returncode == 0 and gate.stderr == ""  # nothing unexported: no warning
    # export elsewhere stays possible, and is not a sync with the folder
    assert cli("labels", "set", "-b", folder, "q3", "d9", "1", "--reason", "r")[0] == 0
    code, _, _ = cli("labels", "export", folder, "-o", tmp_path / "elsewhere.trec")
    assert code == 0 and "q3 0 d9 1" in (tmp_path / "elsewhere.trec").read_text()
    assert cli("labels", "status", folder)[0] == 1
    code, out, _ = cli("labels", "export", folder, "-o", "-")
    assert code == 0 and "q3 0 d9 1" in out


def test_binary_json_stays_json_and_keeps_grades(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path)
    assert cli("labels", "export", folder)[0] == 0
    obj = json.loads((folder / "qrels.json").read_text())
    assert obj["meta"]["content_hash"].startswith("sha256:") and obj["qrels"]["q-gpu"] == [
        "doc-gpu-memory", "doc-kv-cache"]
    assert cli("labels", "set", "-b", folder, "q-gpu", "doc-gpu-memory", "2", "--reason", "best")[0] == 0
    code, _, err = cli("labels", "export", folder)
    assert code == 0 and "written as graded JSON to keep 1 grade" in err
    assert json.loads((folder / "qrels.json").read_text())["qrels"]["q-gpu"]["doc-gpu-memory"] == 2
    assert cli("labels", "status", folder)[0] == 0
    code, _, err = cli("labels", "export", folder, "--format", "trec")
    assert code == 2 and "keeps its own format" in err


def test_export_to_a_read_only_folder_changes_nothing(cli, samples, tmp_path, monkeypatch):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    db = paths.benchmark_workspace_path("three-questions", folder)
    before_folder = _snapshot(folder)
    before_store = {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith(".lock")}
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(folder) else real(p, mode, **kw))
    code, out, err = cli("labels", "export", folder)
    assert code == 2 and "cannot write here (read-only); nothing was changed" in err and out == ""
    assert _snapshot(folder) == before_folder
    assert {p.name: p.read_bytes() for p in db.parent.iterdir() if not p.name.endswith(".lock")} == before_store


def test_the_receipt_names_the_version_the_labels_were_exported_from(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "freeze", "-b", folder, "v1")[0] == 0
    assert cli("labels", "export", folder)[0] == 0
    receipt = tmp_path / "receipt.json"
    policy = tmp_path / "floor.toml"  # one run: a gate of absolute rules only (a comparing rule is refused)
    policy.write_text('[[rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = 0.1\n')
    code, _, _ = cli("gate", folder, "--receipt", receipt, "--policy", policy)
    r = json.loads(receipt.read_text())["predicate"]  # an in-toto statement
    qrels = next(i for i in r["inputs"] if i["role"] == "qrels")
    assert qrels["sha256"] == sync.file_sha256(folder / "qrels.trec").removeprefix("sha256:")
    assert r["labels"] == {"path": qrels["path"], "sha256": qrels["sha256"], "exported_from": "v1",
                           "content_hash": r["qrels_metadata"]["content_hash"]}


# ---------------------------------------------------------------- bring the file's changes in, or keep


def test_bring_in_keeps_each_labels_reviewer_and_reports_conflicts(samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    with Workspace.open_benchmark(folder, reviewer="ana") as ws:
        ws.set_judgment("q1", "d1", 2, reason="fully")  # will conflict
        ws.set_judgment("q3", "d4", 1, reason="ana's own")  # unexported, stays
    text = (folder / "qrels.trec").read_text().replace("q1 0 d1 1", "q1 0 d1 0")
    (folder / "qrels.trec").write_text("# reviewer: bo\n" + text + "q2 0 d8 2\n")
    with Workspace.open_benchmark(folder, reviewer="ana") as ws:
        merged = sync.bring_in(ws, ws.manifest)
        assert merged.brought_in == 1 and [(c.query, c.doc) for c in merged.conflicts] == [("q1", "d1")]
        j = ws.judgment("q2", "d8")
        assert (j.grade, j.reviewer) == (2, "bo")
        assert ws.judgment("q1", "d1").grade == 2  # a conflict keeps the workspace's label
        c = sync.compare(ws, ws.manifest)
    assert not c.file_changed and c.counts("workspace") == {"added": 1, "changed": 1, "removed": 0}


def test_keep_the_workspace_makes_every_difference_the_workspaces(samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    Workspace.open_benchmark(folder).close()
    (folder / "qrels.trec").write_text((folder / "qrels.trec").read_text() + "q2 0 d8 2\n")
    with Workspace.open_benchmark(folder) as ws:
        assert sync.compare(ws, ws.manifest).counts("file")["added"] == 1
        sync.keep_workspace(ws, ws.manifest)
        c = sync.compare(ws, ws.manifest)
        assert not c.file_changed and c.counts("workspace") == {"added": 0, "changed": 0, "removed": 1}
        assert ws.judgment("q2", "d8") is None


def test_export_back_never_overwrites_changes_it_has_not_seen(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    (folder / "qrels.trec").write_text((folder / "qrels.trec").read_text() + "q2 0 d8 2\n")  # a pull, say
    edited = (folder / "qrels.trec").read_bytes()
    code, out, err = cli("labels", "export", folder)
    assert code == 2 and "changed since the last import or export (1 label the workspace has not seen" in err
    assert (folder / "qrels.trec").read_bytes() == edited
    (folder / "qrels.trec").write_text("q1 0 d1 one\n")  # and one that no longer parses: named, kept
    code, _, err = cli("labels", "export", folder)
    assert code == 2 and "qrels.trec:1" in err and (folder / "qrels.trec").read_text() == "q1 0 d1 one\n"
    code, out, _ = cli("labels", "export", folder, "--overwrite")
    assert code == 0 and "q1 0 d2 1\n" in (folder / "qrels.trec").read_text()
    assert cli("labels", "status", folder)[0] == 0


def test_the_count_on_close_follows_every_kind_of_edit(samples, tmp_path):
    """The count a writer leaves for the gate (from the pairs it touched) equals a count from every label."""
    import random

    from rankgate.core.benchmark import load_manifest
    from rankgate.store.unexported import read_summary

    folder = _copy(samples, tmp_path, "three-questions")
    manifest = load_manifest(folder)
    Workspace.open_benchmark(folder).close()
    rng = random.Random(7)
    pairs = [(q, d) for q in ("q1", "q2", "q3") for d in ("d1", "d2", "d5", "d7")]
    for session in range(12):
        with Workspace.open_benchmark(folder, reviewer=rng.choice(["ana", "bo"])) as ws:
            for _ in range(rng.randrange(0, 6)):
                q, d = rng.choice(pairs)
                if rng.random() < 0.3:
                    if ws.judgment(q, d, for_reviewer=ws.reviewer, blind=True) is not None:  # one's own only
                        ws.remove_judgment(q, d)
                else:
                    ws.set_judgment(q, d, rng.choice([0, 1, 2]), reason="r")
            if session == 6:
                sync.export_back(ws, manifest)  # a sync mid-session: the count starts again from there
            db = ws.path
        record = sync.read_record(db)
        with Workspace.open(db, readonly=True) as ws:
            full = sync.count_unexported(record[1], sync.workspace_grades(ws))
        assert read_summary(db)["unexported"] == full
        assert (unexported.unexported_count(manifest) or (0,))[0] == full


# ---------------------------------------------------------------- where an export goes


def test_export_writes_through_a_symlink_keeps_the_mode_and_refuses_a_pipe(cli, samples, tmp_path):
    import stat

    folder = _copy(samples, tmp_path, "three-questions")
    real = tmp_path / "shared" / "qrels.trec"
    real.parent.mkdir()
    shutil.move(folder / "qrels.trec", real)
    (folder / "qrels.trec").symlink_to(real)
    real.chmod(0o644)
    assert cli("labels", "set", "-b", folder, "q1", "d2", "1", "--reason", "r")[0] == 0
    code, out, err = cli("labels", "export", folder)  # the link's target is outside the folder: asked first
    assert code == 2 and "outside the benchmark folder" in err and "q1 0 d2 1\n" not in real.read_text(), err
    code, out, err = cli("labels", "export", folder, "--outside-folder")
    assert code == 0, err
    assert (folder / "qrels.trec").is_symlink() and "q1 0 d2 1\n" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    assert cli("labels", "status", folder)[0] == 0
    # -o: a named pipe is never replaced, nor written into (a reader that stops reading would hang the command):
    # refused, even while a reader holds it open; a character device (/dev/null) is written into
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        for argv in (["labels", "export", folder, "-o", fifo],
                     *(["gate", samples / "seed-lab", flag, fifo, "--quiet"] for flag in ("--receipt", "--junit",
                                                                                           "--markdown"))):
            code, out, err = cli(*argv)
            assert code == 2 and "is a named pipe (FIFO)" in err and err.count("\n") == 1, (argv, err)
            assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
        with pytest.raises(BlockingIOError):  # nothing was written into it
            os.read(holder, 1 << 16)
    finally:
        os.close(holder)
    assert cli("labels", "export", folder, "-o", os.devnull)[0] == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pipe")]  # no temp file left
    # a socket still is refused
    import socket

    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(sock_path))
        except OSError:  # a path too long for a socket on this system
            return
        code, out, err = cli("labels", "export", folder, "-o", sock_path)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "socket" in err, err


def test_with_no_usable_sync_record_export_back_refuses_unless_overwrite(cli, samples, tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    assert cli("labels", "status", folder)[0] == 0 and _workspace_files() == []  # a read makes nothing
    assert cli("labels", "import", "-b", folder)[0] == 0  # the first writer makes the workspace
    db = paths.benchmark_workspace_path("three-questions", folder)
    record = paths.sidecar(db, paths.SYNC)
    good = record.read_bytes()
    with open(folder / "qrels.trec", "a") as f:
        f.write("q3 0 dNEW 2\n")  # a label the workspace has not seen
    edited = (folder / "qrels.trec").read_bytes()
    for damage in (None, b"", b"garbage\n", good.partition(b"\n")[0] + b"\n", good[:-5]):
        if damage is None:
            record.unlink()
        else:
            record.write_bytes(damage)
        code, out, err = cli("labels", "status", folder)
        assert code == 1 and "the last sync is unknown" in out and "1 label differs" in out, (damage, out)
        assert "in the workspace since then" not in out
        code, out, err = cli("labels", "status", folder, "--json")
        assert json.loads(out)["sync"]["last_sync_unknown"] is True
        code, out, err = cli("labels", "export", folder)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "last sync" in err and "--overwrite" in err, err
        assert "Traceback" not in err and (folder / "qrels.trec").read_bytes() == edited  # dNEW kept
    code, out, err = cli("labels", "export", folder, "--overwrite")
    assert code == 0, err
    assert "dNEW" not in (folder / "qrels.trec").read_text()  # asked for: the workspace over the file
    assert cli("labels", "status", folder)[0] == 0  # and the sync is known again


def test_bring_in_with_no_usable_sync_record_takes_the_files_new_labels_and_keeps_the_workspaces(samples,
                                                                                                  tmp_path):
    folder = _copy(samples, tmp_path, "three-questions")
    with Workspace.open_benchmark(folder) as ws:
        ws.set_judgment("q3", "d4", 1, reason="the workspace's own")
        ws.set_judgment("q1", "d1", 2, reason="differs")
    text = (folder / "qrels.trec").read_text().replace("q1 0 d1 1", "q1 0 d1 0")
    (folder / "qrels.trec").write_text(text + "q3 0 dNEW 2\n")
    with Workspace.open_benchmark(folder) as ws:
        paths.sidecar(ws.path, paths.SYNC).unlink()
        merged = sync.bring_in(ws, ws.manifest)
        assert merged.brought_in == 1 and [(c.query, c.doc) for c in merged.conflicts] == [("q1", "d1")]
        assert ws.judgment("q3", "dNEW").grade == 2 and ws.judgment("q3", "d4").grade == 1
        assert ws.judgment("q1", "d1").grade == 2
        c = sync.compare(ws, ws.manifest)
    assert not c.last_sync_unknown and not c.file_changed


# ---------------------------------------------------------------- a qrels file opened on its own (the app)


def test_a_qrels_files_own_workspace_from_before_sync_records_rebuilds_its_last_sync(tmp_path):
    """A raw file's workspace made before it had a sync record: its first import is the last sync, so the
    expert's later edit is the workspace's (not exported) and the file's own change is the file's."""
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n", encoding="utf-8")
    db = paths.workspace_path(str(qrels))
    with Workspace.open(db, reviewer="ana") as ws:  # as the app wrote it before
        ws.import_files([str(qrels)], why=f"{sync.FIRST_REVIEW}q.txt")
        ws.set_judgment("1", "b", 3, reason="answers it")
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 0\n", encoding="utf-8")
    with Workspace.open(db, reviewer="ana") as ws:
        sync.follow_file(ws, qrels, own=True)
        c = sync.compare(ws, ws.manifest)
        assert not c.last_sync_unknown
        assert {(d.query, d.doc, d.side) for d in c.differences} == {("1", "b", "workspace"), ("2", "c", "file")}


def test_a_workspace_given_with_db_is_compared_only_with_the_file_it_read(tmp_path):
    qrels, other = tmp_path / "q.txt", tmp_path / "other.txt"
    qrels.write_text("1 0 a 1\n", encoding="utf-8")
    other.write_text("9 0 z 1\n", encoding="utf-8")
    db = tmp_path / "work.json"
    with Workspace.open(db, reviewer="ana") as ws:
        ws.import_files([str(other)])
        sync.follow_file(ws, qrels, own=False)
        assert ws.manifest is None  # other labels: never offered as the file's changes
    with Workspace.open(tmp_path / "w2.json", reviewer="ana") as ws:
        report = ws.import_files([str(qrels)])
        sync.follow_file(ws, qrels, imported=report, own=False)
    with Workspace.open(tmp_path / "w2.json", reviewer="ana") as ws:
        sync.follow_file(ws, qrels, own=False)  # its record names this file
        assert ws.manifest is not None and sync.compare(ws, ws.manifest).in_sync


# ---------------------------------------------------------------- the app's first open: the record after its frame


def _record_without_time(ws_path):
    summary, base = sync.read_record(ws_path)
    return {k: v for k, v in summary.items() if k not in ("at", "stamp")}, base


def test_a_first_import_left_for_later_writes_the_same_record_before_anyone_reads_it(samples, tmp_path):
    """`open_benchmark(fold_import=False)` (the app) leaves the sync record's hashing for after the first frame:
    any read of the record, a write over it, the fold and the close write it first, as the CLI's open writes it."""
    now_folder, later_folder = _copy(samples, tmp_path, to="now"), _copy(samples, tmp_path, to="later")
    with Workspace.open_benchmark(now_folder) as ws:
        now_path = ws.path
    expected = _record_without_time(now_path)
    expected[0]["folder"] = expected[0]["qrels"] = None

    def same(path):
        got = _record_without_time(path)
        got[0]["folder"] = got[0]["qrels"] = None
        return got == expected

    ws = Workspace.open_benchmark(later_folder, fold_import=False)
    sidecar = paths.sidecar(ws.path, paths.SYNC)
    assert not sidecar.exists()  # left for later: nothing hashed nor written yet
    assert sync.pending_summary(ws.path)["how"] == "import"
    assert sync.read_summary(ws.path)["labels_hash"].startswith("sha256:")  # a reader writes it first
    assert sidecar.exists() and sync.pending_summary(ws.path) is None and same(ws.path)
    ws.close()

    for how in ("fold", "close", "edit"):
        shutil.rmtree(paths.workspace_dir(create=False))
        ws = Workspace.open_benchmark(later_folder, fold_import=False)
        if how == "fold":
            ws.fold_import()
            assert sidecar.exists() and same(ws.path)
        elif how == "edit":  # an edit before the record is written: counted as unexported on close
            q, d, g = next((q, d, rec["grade"]) for q, per in ws._labels.items() for d, revs in per.items()
                           for rec in revs.values())
            ws.set_judgment(q, d, g + 1, reason="changed")
        ws.close()
        assert same(ws.path) if how != "edit" else sync.read_summary(ws.path)["unexported"] == 1


def test_the_apps_first_import_is_written_after_its_first_frame_and_before_any_edit(samples, tmp_path):
    """The app's first open (`fold_import=False`, 279 labels) applies the import and writes no file: the store's
    files and the import's journal record come with the fold after the first frame, the close, or the first
    edit, which is journaled after it (an acknowledged label is never lost). A process that dies before that
    leaves no store, and the next open imports the folder's labels again."""
    folder = _copy(samples, tmp_path, name="ops-handbook")
    code = ("import os, sys; from rankgate.store.workspace import Workspace; "
            "ws = Workspace.open_benchmark(sys.argv[1], fold_import=False); "
            "assert ws._unwritten is not None and len(ws) == 279; os._exit(0)")  # killed before anything is written
    subprocess.run([sys.executable, "-c", code, str(folder)], check=True, env=dict(os.environ))
    ws = Workspace.open_benchmark(folder, fold_import=False)
    assert ws.benchmark_import is not None and len(ws) == 279 and not ws.path.exists()  # imported again
    q, d, g = next((q, d, rec["grade"]) for q, per in ws._labels.items() for d, revs in per.items()
                   for rec in revs.values())
    ws.set_judgment(q, d, (g + 1) % 4, reason="changed")  # the import's record first, then this edit
    assert ws._journal.count == 2 and ws._unwritten is None
    reader = Workspace.open_benchmark(folder, readonly=True)  # what a crash now would leave
    assert len(reader) == 279 and reader.judgment(q, d).grade == (g + 1) % 4
    reader.close()
    ws.close()


@pytest.mark.parametrize("how", ["killed", "full disk"])
def test_a_first_import_whose_record_is_not_written_leaves_a_store_that_imports_again(samples, tmp_path, how):
    """The app's first import, written after its first frame: the store's files come first, then the import's
    journal record. Killed while that record is written (torn), or refused by a full disk, the store left must
    say that nothing was imported, so that the next open imports the folder's labels again, not a workspace of
    the benchmark holding none of them (red16b: its snapshot named the benchmark as imported)."""
    folder = _copy(samples, tmp_path, name="ops-handbook")
    if how == "killed":
        code = ("import sys; from rankgate.store.workspace import Workspace; "
                "ws = Workspace.open_benchmark(sys.argv[1], fold_import=False); ws.fold_import()")
        env = dict(os.environ, RANKGATE_CRASHPOINT="journal-torn")
        assert subprocess.run([sys.executable, "-c", code, str(folder)], env=env).returncode == -9
    else:
        from rankgate.store import storage

        real = storage._write_all

        def full(fd, data):
            if len(data) > 10_000:  # the import's record, not the store's small files
                raise OSError(28, "No space left on device")
            real(fd, data)

        ws = Workspace.open_benchmark(folder, fold_import=False)
        assert sync.read_summary(ws.path) is None  # no sync record before the import it records is written
        storage._write_all = full
        try:
            ws.fold_import()
            assert sync.read_summary(ws.path) is None
            ws.close()
        finally:
            storage._write_all = real
        assert ws.path.exists() and ws.fold_problem
        # nor after: `labels status` would count the 279 labels as removed in the workspace, and the export it
        # advises would write none of them to the folder's file
        assert not paths.sidecar(ws.path, paths.SYNC).exists()
    ws = Workspace.open_benchmark(folder)
    assert ws.benchmark_import is not None and len(ws) == 279  # imported again
    ws.close()


def test_status_of_a_folder_whose_qrels_file_is_outside_names_the_export_that_works(cli, samples, tmp_path):
    """`init` without --copy points at a qrels file outside the folder, which `labels export FOLDER` never
    replaces unasked: status names the copy into the folder instead, and that command works as given."""
    import shlex

    folder = _copy(samples, tmp_path)
    shutil.move(folder / "qrels.json", tmp_path / "qrels.json")
    manifest = folder / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('qrels = "qrels.json"', 'qrels = "../qrels.json"'))
    assert cli("labels", "set", "-b", folder, "q-dns", "doc-dns-negative-cache", "2", "--reason", "r")[0] == 0
    code, out, _ = cli("labels", "status", folder)
    assert code == 1 and "the file is outside the benchmark folder" in out
    hint = out[out.index("`rankgate labels export"):].split("`")[1]
    assert hint.endswith(f"-o {folder / 'qrels.json'}")
    assert cli(*shlex.split(hint)[1:])[0] == 0 and (folder / "qrels.json").exists()


def test_a_workspace_whose_first_import_never_finished_is_not_compared_or_exported_as_empty(cli, samples, tmp_path):
    """Killed between the new store's files and its first import's record (red16b: a ~100 ms window), the store
    names no benchmark and holds no label. `labels status` showed all 279 labels as differing (and advised an
    export), `labels export --overwrite` wrote none of them over the file; now status reads it as a folder with no
    workspace yet, and export finishes the import first."""
    folder = _copy(samples, tmp_path, name="ops-handbook")
    code = ("import sys; from rankgate.store.workspace import Workspace; "
            "ws = Workspace.open_benchmark(sys.argv[1], fold_import=False); ws.fold_import()")
    env = dict(os.environ, RANKGATE_CRASHPOINT="journal-torn")
    assert subprocess.run([sys.executable, "-c", code, str(folder)], env=env).returncode == -9
    code, out, err = cli("labels", "status", folder)
    assert code == 0 and "first import never finished" in err and "in sync" in out and "differ" not in out
    code, out, err = cli("labels", "export", folder, "--overwrite")
    assert code == 0 and "wrote 279 judgments" in out, (out, err)
    with Workspace.open_benchmark(folder, readonly=True) as ws:
        assert len(ws) == 279 and ws._meta.get("benchmark")
