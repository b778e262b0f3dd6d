"""The workspace API: edits, history, versions, purge, to_qrels, reviewers, paths."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from rankgate.core.errors import InputError
from rankgate.core.model import Catalog, Query
from rankgate.store import paths
from rankgate.store import Workspace, content_hash, resolve_reviewer

from .conftest import labels_of, qrels_files, seed_json


def test_set_regrade_reason_and_no_op_are_told_apart(ws):
    ws.set_query(Query("q1", "how do I restore"))
    e1 = ws.set_judgment("q1", "d1", 1, reason="mentions restore")
    e2 = ws.set_judgment("q1", "d1", 2, reason="gives the steps")
    e3 = ws.set_judgment("q1", "d1", 2, reason="gives every step")
    e4 = ws.set_judgment("q1", "d1", 2)  # same grade, reason kept: nothing to record
    assert (e1.kind, e2.kind, e3.kind, e4) == ("set", "regrade", "reason", None)
    assert e2.before == {"grade": 1, "reason": "mentions restore", "collection_version": "", "reviewer": "tester"}
    assert e2.after["grade"] == 2
    j = ws.judgment("q1", "d1")
    assert (j.grade, j.reason, j.reviewer) == (2, "gives every step", "tester")
    assert j.created == e1.when and j.updated == e3.when
    assert [e.kind for e in ws.history("q1", "d1")] == ["set", "regrade", "reason"]


def test_unknown_query_is_refused_with_a_suggestion(ws):
    ws.set_query(Query("q-backup"))
    with pytest.raises(InputError, match=r"unknown query 'q-bakup' \(did you mean q-backup\?\)"):
        ws.set_judgment("q-bakup", "d1", 1)
    assert ws.set_judgment("q-new", "d1", 1, create_query=True).kind == "set"
    assert [q.id for q in ws.queries()] == ["q-backup", "q-new"]


@pytest.mark.parametrize("grade", [1.5, "1.5", "x", True, None, 2**64])
def test_grades_must_be_integers(ws, grade):
    with pytest.raises(InputError, match="grade"):
        ws.set_judgment("q1", "d1", grade, create_query=True)
    assert len(ws) == 0 and ws.history() == []


@pytest.mark.parametrize("qid,doc", [("", "d"), ("q", ""), (" q", "d"), ("q", "d\n"), ("q\t1", "d")])
def test_ids_must_be_clean(ws, qid, doc):
    with pytest.raises(InputError, match="ID"):
        ws.set_judgment(qid, doc, 1, create_query=True)


def test_negative_and_string_grades(ws):
    ws.set_judgment("q1", "d1", -2, create_query=True)
    ws.set_judgment("q1", "d2", "3")
    assert ws.grades("q1") == {"d1": -2, "d2": 3}


def test_remove_records_and_keeps_a_tombstone(ws):
    ws.set_judgment("q1", "d1", 1, reason="r", create_query=True)
    e = ws.remove_judgment("q1", "d1", why="duplicate chunk")
    assert (e.kind, e.before["grade"], e.after, e.why) == ("remove", 1, None, "duplicate chunk")
    assert ws.judgment("q1", "d1") is None and len(ws) == 0
    [gone] = ws.judgments(include_removed=True)
    assert gone.removed is not None and gone.grade == 1
    with pytest.raises(InputError, match="was removed already"):
        ws.remove_judgment("q1", "d1")
    with pytest.raises(InputError, match="does not exist"):
        ws.remove_judgment("q1", "d9")
    again = ws.set_judgment("q1", "d1", 2, reason="back")
    assert again.kind == "set" and again.before is None
    assert [e.kind for e in ws.history("q1")] == ["query", "set", "remove", "set"]


def test_edits_survive_reopen_with_and_without_a_fold(db):
    with Workspace.open(db, fold_every=3) as ws:
        for i in range(7):  # two folds, one edit left in the journal
            ws.set_judgment("q1", f"d{i}", i % 3, reason=f"r{i}", create_query=True)
        ws.remove_judgment("q1", "d0")
        expected = labels_of(ws)
        events = [e.as_dict() for e in ws.history()]
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected
        assert [e.as_dict() for e in ws.history()] == events
        assert [e.id for e in ws.history()] == list(range(1, len(events) + 1))


def test_history_filters_limits_and_names_who_and_why(ws):
    ws.set_judgment("q1", "d1", 1, reason="a", create_query=True, reviewer="ana", why="first pass")
    ws.set_judgment("q2", "d1", 1, reason="b", create_query=True)
    ws.set_judgment("q1", "d2", 0, reason="c")
    assert [(e.query, e.doc) for e in ws.history("q1")] == [("q1", None), ("q1", "d1"), ("q1", "d2")]
    assert [e.doc for e in ws.history("q1", "d1")] == ["d1"]
    assert [e.id for e in ws.history(limit=2)] == [4, 5]
    first = ws.history("q1", "d1")[0]
    assert (first.who, first.why) == ("ana", "first pass")
    assert "ana set q1 d1: - -> 1" in first.describe()


def test_readonly_refuses_edits_and_sees_the_writers_acknowledged_edits(db):
    writer = Workspace.open(db)
    writer.set_judgment("q1", "d1", 1, create_query=True)
    reader = Workspace.open(db, readonly=True)  # no lock needed, journal replayed
    assert labels_of(reader) == {("q1", "d1"): 1}
    with pytest.raises(InputError, match="read-only"):
        reader.set_judgment("q1", "d1", 2)
    with pytest.raises(InputError, match="read-only"):
        reader.freeze("v1")
    reader.close()
    writer.close()
    with pytest.raises(InputError, match="closed"):
        writer.set_judgment("q1", "d1", 2)


def test_readonly_open_of_a_missing_store_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no label store here"):
        Workspace.open(tmp_path / "nothing.json", readonly=True)
    assert not (tmp_path / "nothing.json").exists()


def test_freeze_versions_and_diff(ws):
    ws.set_judgment("q1", "d1", 1, create_query=True)
    ws.set_judgment("q1", "d2", 2)
    ws.set_judgment("q1", "d3", 0)
    v1 = ws.freeze("v1", note="first review")
    assert (v1.labels, v1.queries, v1.note) == (3, 1, "first review")
    assert v1.content_hash == content_hash([("q1", "d1", 1), ("q1", "d2", 2), ("q1", "d3", 0)])
    ws.set_judgment("q1", "d2", 1)  # regraded
    ws.remove_judgment("q1", "d3")  # removed
    ws.set_judgment("q1", "d4", 1)  # added
    ws.set_judgment("q1", "d1", 1, reason="reason only: not a regrade")
    ws.freeze("v2")
    d = ws.diff("v1", "v2")
    assert d.added == [{"query": "q1", "doc": "d4", "grade": 1}]
    assert d.removed == [{"query": "q1", "doc": "d3", "grade": 0}]
    assert d.regraded == [{"query": "q1", "doc": "d2", "before": 2, "after": 1}]
    assert not ws.diff("v2")  # v2 against the current labels: nothing
    assert [v.name for v in ws.versions()] == ["v1", "v2"]
    assert ws.content_hash("v1") == v1.content_hash
    assert ws.to_qrels(version="v1").as_dict() == {"q1": {"d1": 1, "d2": 2, "d3": 0}}
    with pytest.raises(InputError, match="exists already"):
        ws.freeze("v1")
    with pytest.raises(InputError, match="no version 'v9'"):
        ws.diff("v9")
    with pytest.raises(InputError, match="reserved"):
        ws.freeze("unfrozen")
    assert [e.kind for e in ws.history() if e.query is None] == ["freeze", "freeze"]


def test_versions_survive_a_reopen(db):
    with Workspace.open(db, fold_every=2) as ws:
        ws.set_judgment("q1", "d1", 1, create_query=True)
        ws.freeze("v1")
        ws.set_judgment("q1", "d1", 3)
    with Workspace.open(db, readonly=True) as ws:
        assert ws.diff("v1").regraded == [{"query": "q1", "doc": "d1", "before": 1, "after": 3}]
        assert ws.export("json-graded", version="v1").version == "v1"


def test_to_qrels_is_columnar_shares_a_catalog_and_declares_every_query(ws, tmp_path):
    ws.import_files([seed_json(tmp_path)])
    ws.set_judgment("q-dns", "doc-spam", -1, reason="spam", collection_version="lab-2")
    cat = Catalog()
    cat.docs.code("doc-spam")  # the runs interned it first
    qrels = ws.to_qrels(cat)
    assert qrels.catalog is cat
    assert qrels.q.dtype == np.int32 and qrels.doc.dtype == np.int32 and qrels.grade.dtype == np.int64
    assert qrels.query_ids == ["q-backup", "q-dns", "q-empty"]
    assert qrels.as_dict() == {"q-backup": {"doc-backup-policy": 1, "doc-restore-test": 1},
                               "q-dns": {"doc-dns-negative-cache": 1, "doc-spam": -1}, "q-empty": {}}
    detail = qrels.details[("q-dns", "doc-spam")]
    assert (detail.reason, detail.collection_version, detail.reviewer) == ("spam", "lab-2", "tester")
    assert cat.docs.get("doc-spam") == 0


def test_set_query_changes_are_history(ws):
    assert ws.set_query(Query("q1", "restore a table")).kind == "query"
    assert ws.set_query(Query("q1", "restore a table")) is None
    e = ws.set_query(Query("q1", "restore a table", tags=("backups",), must_pass=True, weight=2.0))
    assert e.before["must_pass"] is False and e.after["must_pass"] is True
    assert ws.query("q1") == Query("q1", "restore a table", "", ("backups",), True, False, 2.0, False)


def test_purge_erases_from_store_history_and_backups(db):
    secret = "doc-secret-customer-name"
    with Workspace.open(db, fold_every=2) as ws:
        ws.set_judgment("q1", "d1", 1, create_query=True)
        ws.set_judgment("q1", secret, 1, reason="leaked")
        ws.set_judgment("q1", secret, 2)
        ws.freeze("v1")
        ws.set_judgment("q1", "d2", 1)
        e = ws.purge("q1", secret, why="personal data")
        assert e.before == {"judgments": 1, "events": 2}
        assert ws.history("q1", secret) == []
        assert ws.judgments("q1", include_removed=True)[-1].doc == "d2"
        assert ws.content_hash("v1") != ws.versions()[0].content_hash  # said so in the docs
        with pytest.raises(InputError, match="nothing to purge"):
            ws.purge("q1", secret)
    for f in db.parent.iterdir():
        assert secret.encode() not in f.read_bytes(), f.name
    with Workspace.open(db, readonly=True) as ws:
        assert set(ws.grades("q1")) == {"d1", "d2"}
        assert ws.history()[-1].kind == "purge"


def test_purge_a_whole_query(ws):
    ws.set_judgment("q1", "d1", 1, create_query=True)
    ws.set_judgment("q2", "d1", 1, create_query=True)
    e = ws.purge("q1")
    assert [q.id for q in ws.queries()] == ["q2"] and len(ws) == 1
    assert ws.history("q1") == []
    assert ws.history()[-1] == e and (e.query, e.doc) == (None, None)  # the IDs themselves may be what had to go
    assert e.after == {"target": "sha256:" + hashlib.sha256(b'["q1",null]').hexdigest()}


# --------------------------------------------------------------------------- reviewers and paths


def test_reviewer_order(monkeypatch, tmp_path):
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Git Person\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)  # outside any repository's own config
    assert resolve_reviewer("Flag Person") == "Flag Person"
    assert resolve_reviewer(None) == "tester"  # RANKGATE_REVIEWER
    monkeypatch.delenv("RANKGATE_REVIEWER")
    try:
        has_git = subprocess.run(["git", "--version"], capture_output=True).returncode == 0
    except OSError:
        has_git = False
    if has_git:
        assert resolve_reviewer(None) == "Git Person"
    gitconfig.write_text("")
    import getpass

    assert resolve_reviewer(None) == getpass.getuser()


def test_default_location_is_the_platform_data_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RANKGATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    import platformdirs

    assert paths.data_dir(create=False) == platformdirs.user_data_path("rankgate")
    assert str(paths.data_dir(create=False)).startswith(str(tmp_path))


@pytest.mark.parametrize("xdg", [None, "", "   ", "{tmp}/xdg", "{tmp}/xdg/", "/{tmp}/x", "relative/xdg"])
@pytest.mark.parametrize("home", [None, "", "{tmp}/home", "{tmp}/home/", "/", "relative-home"])
def test_the_data_folder_found_without_platformdirs_is_platformdirs_own(monkeypatch, tmp_path, xdg, home):
    """paths.data_dir finds an absolute XDG_DATA_HOME or HOME itself (platformdirs not imported at a command's
    start); whatever the environment, the folder is the one platformdirs names (it decides the other cases)."""
    import platformdirs

    monkeypatch.delenv("RANKGATE_HOME")
    monkeypatch.delenv("ANDROID_DATA", raising=False)
    given = {}
    for name, value in (("XDG_DATA_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            given[name] = value.format(tmp=tmp_path)
            monkeypatch.setenv(name, given[name])
    own = sys.platform == "linux" and (given["XDG_DATA_HOME"].startswith("/") if given.get("XDG_DATA_HOME")
                                       else given.get("HOME", "").startswith("/"))
    assert (paths._xdg_data_dir() is not None) == own
    try:
        expected = platformdirs.user_data_path("rankgate")
    except RuntimeError:  # no home platformdirs can name (a relative HOME, no XDG): its error, from data_dir too
        assert not own
        with pytest.raises(RuntimeError):
            paths.data_dir(create=False)
        return
    assert paths.data_dir(create=False) == expected
    assert paths._xdg_data_dir() in (None, expected)


def test_the_gate_finds_the_store_without_platformdirs_or_openssl(tmp_path):
    """`rankgate gate` looks for the benchmark's workspace in the data folder (no RANKGATE_HOME): on Linux with
    an absolute HOME it imports neither platformdirs nor its tempfile, shutil and random (a tenth of its
    start-up); where a workspace of the benchmark's name is there, its folder's key is hashed without hashlib."""
    from tests.conftest import ROOT

    workspaces = tmp_path / ".local" / "share" / "rankgate" / "workspaces"
    workspaces.mkdir(parents=True)
    (workspaces / "seed-lab-00000000.json.sync").write_text("{}\n")  # another folder's: its key is looked up
    env = {k: v for k, v in os.environ.items() if k not in ("RANKGATE_HOME", "XDG_DATA_HOME")} | {"HOME": str(tmp_path)}
    script = ("import contextlib, io, sys\nfrom rankgate.cli import main\n"
              "from rankgate.store import paths\nkeys = []\nkey = paths.folder_key\n"
              "paths.folder_key = lambda folder: keys.append(key(folder)) or keys[-1]\n"
              "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
              "    assert main(['gate', 'sample_benchmarks/seed-lab']) == 3\n"
              "print(keys)\nprint(' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    keys, mods = out.stdout.splitlines()[-2], set(out.stdout.splitlines()[-1].split())
    resolved = os.path.realpath(ROOT / "sample_benchmarks" / "seed-lab")
    assert keys == repr([hashlib.sha256(resolved.encode()).hexdigest()[:8]])
    if sys.platform == "linux":
        assert not {"platformdirs", "tempfile", "shutil", "random", "hashlib"} & mods


def test_sha256_hex_is_hashlib_sha256():
    for data in (b"", b"seed-lab", "/tmp/bench \udcff".encode("utf-8", "surrogateescape"), bytes(range(256)) * 9):
        assert paths.sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_env_moves_the_default_workspace_and_files_are_private(private_home):
    with Workspace.open() as ws:
        ws.set_judgment("q1", "d1", 1, create_query=True)
        ws.checkpoint()
        ws.set_judgment("q1", "d1", 2)
        path = ws.path
    assert path == private_home / "workspaces" / "default.json"
    for folder in (private_home, private_home / "workspaces"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    files = list(path.parent.iterdir())
    assert len(files) >= 6
    for f in files:
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f.name


def test_workspace_names_become_distinct_safe_file_names():
    assert paths.workspace_file_name("seed-lab") == "seed-lab.json"
    a, b = paths.workspace_file_name("my lab/1"), paths.workspace_file_name("my lab:1")
    assert a != b and "/" not in a and " " not in a
    assert paths.workspace_file_name("..") .startswith("workspace-")


def test_a_store_file_that_is_a_folder(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        Workspace.open(tmp_path)


def test_import_hygiene_store_without_textual_core_without_tinydb():
    import sys

    code = ("import sys, rankgate.cli; rankgate.cli.build_parser(); "
            "assert 'tinydb' not in sys.modules, 'the CLI loads TinyDB only for a labels command'; "
            "import rankgate.store.workspace, rankgate.cli.labels, rankgate.store.storage; "
            "assert 'textual' not in sys.modules, 'store imported textual'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    code = ("import sys, rankgate.core.formats, rankgate.core.model, rankgate.core.benchmark; "
            "assert 'tinydb' not in sys.modules, 'core imported tinydb'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_qrels_fixtures_cover_every_reader_format(tmp_path):
    from rankgate.core.formats import read_qrels

    files = qrels_files(tmp_path)
    kinds = {read_qrels(p).format for p in files.values()}
    assert {"trec", "beir", "json-graded", "jsonl"} <= kinds
