"""`rankgate labels ...`: the commands, their output and their exit codes."""

from __future__ import annotations

import pytest

import json
import os
import re
import subprocess
import sys

from rankgate.store import paths

from .conftest import LABELS, qrels_files, write


def test_the_reviewer_story(cli, tmp_path, samples):
    """Import the seed-lab qrels, set and change labels with reasons, history, freeze, export."""
    db = tmp_path / "lab.json"
    code, out, err = cli("labels", "import", "--db", db, samples / "seed-lab" / "qrels.json")
    assert code == 0, err
    assert "8 new judgments" in out and "5 new queries" in out
    code, out, _ = cli("labels", "set", "--db", db, "q-dns", "doc-dns-ttl", "0", "--reason", "TTL, not caching",
                       "--collection-version", "lab-1")
    assert (code, out) == (0, "q-dns doc-dns-ttl: - -> 0 (set, event #14)\n")
    code, out, _ = cli("labels", "set", "--db", db, "q-dns", "doc-dns-ttl", "-1", "--why", "spam page")
    assert out == "q-dns doc-dns-ttl: 0 -> -1 (regrade, event #15)\n"
    code, out, _ = cli("labels", "freeze", "--db", db, "v1", "--note", "first review")
    assert code == 0 and out.startswith("froze v1: 9 judgments over 5 queries, sha256:")
    code, _, err = cli("labels", "remove", "--db", db, "q-gpu", "doc-kv-cache")
    assert code == 2 and "is judged by file:qrels.json, not by you (tester)" in err  # the file's, not mine
    assert cli("labels", "remove", "--db", db, "q-gpu", "doc-kv-cache", "--of-reviewer", "file:qrels.json",
               "--why", "wrong chunk")[0] == 0
    code, out, _ = cli("labels", "history", "--db", db, "q-dns", "doc-dns-ttl")
    lines = out.splitlines()
    assert len(lines) == 2 and "tester set q-dns doc-dns-ttl: - -> 0 \"TTL, not caching\"" in lines[0]
    assert lines[1].endswith("(why: spam page)")
    code, out, _ = cli("labels", "history", "--db", db, "--json", "--limit", "1")
    event = json.loads(out)
    assert (event["kind"], event["why"], event["before"]["grade"]) == ("remove", "wrong chunk", 1)
    code, out, _ = cli("labels", "diff", "--db", db, "v1")
    assert out == "- q-gpu doc-kv-cache 1\nv1 -> current: 0 added, 1 removed, 0 regraded\n"
    code, out, _ = cli("labels", "diff", "--db", db, "v1", "--json")
    assert json.loads(out)["removed"] == [{"query": "q-gpu", "doc": "doc-kv-cache", "grade": 1}]
    code, out, err = cli("labels", "export", "--db", db, "--format", "trec", "--header")
    assert code == 0 and "# version: unfrozen\n" in out and "q-dns 0 doc-dns-ttl -1\n" in out
    assert "doc-kv-cache" not in out
    code, out, _ = cli("labels", "export", "--db", db, "--format", "trec", "--version", "v1", "--plain")
    assert not out.startswith("#") and "q-gpu 0 doc-kv-cache 1\n" in out
    code, out, _ = cli("labels", "versions", "--db", db, "--json")
    assert json.loads(out)["name"] == "v1" and json.loads(out)["labels"] == 9


def test_set_needs_a_reason_for_a_new_label_and_a_known_query(cli, tmp_path):
    db = tmp_path / "l.json"
    cli("labels", "import", "--db", db, qrels_files(tmp_path)["trec"])
    code, _, err = cli("labels", "set", "--db", db, "q-dns", "doc-new", "1")
    assert code == 2 and "a new label needs --reason" in err
    code, _, err = cli("labels", "set", "--db", db, "q-dnz", "doc-new", "1", "--reason", "x")
    assert code == 2 and err.count("\n") == 1 and "unknown query 'q-dnz' (did you mean q-dns?)" in err
    code, out, _ = cli("labels", "set", "--db", db, "q-dnz", "doc-new", "1", "--reason", "x", "--add-query")
    assert code == 0
    code, _, err = cli("labels", "set", "--db", db, "q-dns", "doc-spam", "2")  # the file's, not mine: my first
    assert code == 2 and "a new label needs --reason" in err
    code, out, _ = cli("labels", "set", "--db", db, "q-dns", "doc-spam", "2", "--reason", "not spam")
    assert code == 0 and "set" in out
    code, out, _ = cli("labels", "set", "--db", db, "q-dns", "doc-spam", "1")  # my own now: reason kept
    assert code == 0 and "regrade" in out and "not spam" in cli("labels", "list", "--db", db, "q-dns")[1]
    code, _, err = cli("labels", "set", "--db", db, "q-dns", "doc-spam", "1.5")
    assert code == 2 and "not an integer" in err
    code, out, _ = cli("labels", "list", "--db", db, "q-dns", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["doc"]: r["grade"] for r in rows} == {"doc-dns-negative-cache": 3, "doc-spam": 1}


def test_import_conflicts_are_listed_and_nothing_is_imported(cli, tmp_path):
    db = tmp_path / "l.json"
    files = qrels_files(tmp_path)
    cli("labels", "import", "--db", db, files["trec"])
    changed = write(tmp_path / "changed.trec", "q-backup 0 doc-backup-policy 0\nq-backup 0 doc-other 1\n")
    code, out, err = cli("labels", "import", "--db", db, changed)
    assert code == 2
    assert err.splitlines()[0].startswith("conflict: query q-backup document doc-backup-policy: the store has grade 2;")
    assert "1 conflict with labels in the store; nothing was imported" in err.splitlines()[-1]
    code, out, _ = cli("labels", "list", "--db", db, "q-backup")
    assert "doc-other" not in out
    code, out, _ = cli("labels", "import", "--db", db, changed, "--on-conflict", "keep", "--json")
    report = json.loads(out)
    assert (report["added"], report["kept"]) == (1, 1)
    code, out, _ = cli("labels", "import", "--db", db, changed, "--on-conflict", "overwrite")
    assert code == 0 and "1 changed" in out


def test_export_to_a_file_and_notes_on_stderr(cli, tmp_path):
    db = tmp_path / "l.json"
    cli("labels", "import", "--db", db, qrels_files(tmp_path)["jsonl"])
    target = tmp_path / "out" / "qrels.json"
    target.parent.mkdir()
    code, out, err = cli("labels", "export", "--db", db, "--format", "json", "-o", target)
    assert code == 0 and out.startswith(f"wrote 4 judgments to {target} (json, version unfrozen, sha256:")
    assert "note: binary json lists documents with grade >= 1 only: 2 judgments" in err
    assert set(json.loads(target.read_text())["qrels"]) == {"q-backup", "q-dns", "q-gpu"}
    assert os.listdir(target.parent) == ["qrels.json"]


def test_queries_status_and_the_default_workspace(cli, tmp_path, private_home):
    files = qrels_files(tmp_path)
    qfile = write(tmp_path / "q.jsonl", json.dumps({"id": "q-gpu", "text": "gpu out of memory",
                                                    "tags": ["gpu"], "must_pass": True}) + "\n")
    assert cli("labels", "import", files["trec"], qfile)[0] == 0  # no --db: the default workspace
    code, out, _ = cli("labels", "queries")
    assert 'q-gpu 1 judgment must-pass tags=gpu "gpu out of memory"' in out.splitlines()
    code, out, _ = cli("labels", "status", "--json")
    status = json.loads(out)
    assert status["path"] == str(paths.workspace_path()) and status["judgments"] == len(LABELS)
    assert str(private_home) in status["path"]


def test_purge_needs_yes(cli, tmp_path):
    db = tmp_path / "l.json"
    cli("labels", "import", "--db", db, qrels_files(tmp_path)["trec"])
    code, _, err = cli("labels", "purge", "--db", db, "q-dns", "doc-spam")
    assert code == 2 and "add --yes" in err
    code, out, _ = cli("labels", "purge", "--db", db, "q-dns", "doc-spam", "--yes", "--why", "gdpr")
    assert code == 0 and out.startswith("purged document 'doc-spam' of query 'q-dns': 1 judgment, ")


def test_errors_are_one_line_with_exit_2(cli, tmp_path):
    db = tmp_path / "l.json"
    code, _, err = cli("labels", "history", "--db", db)
    assert code == 2 and err == f"error: {db}: no label store here (import labels into it first)\n"
    code, _, err = cli("labels", "import", "--db", db, tmp_path / "missing.trec")
    assert code == 2 and err == f"error: {tmp_path / 'missing.trec'}: no such file\n"
    code, _, err = cli("labels", "diff", "--db", db)
    assert code == 2 and "the following arguments are required: V1" in err
    code, out, _ = cli("labels")
    assert code == 2 and "import" in out and "freeze" in out


def test_recover_command(cli, tmp_path):
    db = tmp_path / "l.json"
    cli("labels", "import", "--db", db, qrels_files(tmp_path)["trec"])
    code, out, _ = cli("labels", "recover", "--db", db)
    assert code == 0 and out.startswith(f"recovered {db}: snapshot intact, history intact")


def test_benchmark_flag(cli, samples):
    code, out, _ = cli("labels", "import", "-b", samples / "seed-lab")
    assert code == 0 and "8 new judgments" in out and "/seed-lab-" in out  # <name>-<folder key>.json
    code, out, _ = cli("labels", "import", "-b", samples / "seed-lab")
    assert code == 0 and "0 new judgments" in out  # later opens use the store
    lab = samples / "three-questions"
    code, out, err = cli("labels", "list", "-b", lab)  # the first open imports, even for a reader
    assert code == 0 and out.startswith("q1 d1 1 ")
    code, out, _ = cli("labels", "status", "-b", lab, "--json")
    assert json.loads(out)["collection_version"] == "golden-1"


def _rankgate(*argv, env=None):
    return subprocess.run([sys.executable, "-m", "rankgate", *map(str, argv)], capture_output=True, text=True,
                          env=env or os.environ)


@pytest.mark.slow
def test_python_dash_m_rankgate_labels(tmp_path):
    db = tmp_path / "l.json"
    files = qrels_files(tmp_path)
    out = _rankgate("labels", "import", "--db", db, files["beir"])
    assert out.returncode == 0, out.stderr
    out = _rankgate("labels", "export", "--db", db, "--format", "json-graded", "--plain")
    assert out.returncode == 0 and json.loads(out.stdout)["q-dns"] == {"doc-dns-negative-cache": 3, "doc-spam": -1}
    out = _rankgate("labels", "set", "--db", db, "q-nope", "d", "1", "--reason", "r")
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "Traceback" not in out.stderr


@pytest.mark.slow
def test_python_dash_m_second_writer_is_refused(tmp_path):
    db = tmp_path / "l.json"
    holder = subprocess.Popen([sys.executable, "-c", "import sys\nfrom rankgate.store.workspace import Workspace\n"
                               "ws = Workspace.open(sys.argv[1])\nws.checkpoint()\nprint('ready', flush=True)\nsys.stdin.read()",
                               str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        out = _rankgate("labels", "set", "--db", db, "q", "d", "1", "--reason", "r", "--add-query")
        assert out.returncode == 2
        assert re.fullmatch(rf"error: {re.escape(str(db))}: is open for writing by \S+ \(pid {holder.pid} on \S+, "
                            r"since [0-9T:.-]+Z\); close it there first, or open the workspace read-only\n",
                            out.stderr), out.stderr
        assert _rankgate("labels", "list", "--db", db).returncode == 0  # readers work meanwhile
    finally:
        holder.communicate("")


def test_listings_show_escapes_in_ids_and_reasons_escaped(cli, tmp_path):
    """An ESC in a document ID or a bidi override in a reason never reaches the terminal raw."""
    db = tmp_path / "esc.json"
    qrels = write(tmp_path / "esc.qrels", "q1 0 doc\x1b[2Jwipe 1\nq1 0 d2 0\n")
    assert cli("labels", "import", "--db", db, qrels)[0] == 0
    assert cli("labels", "set", "--db", db, "q1", "d2", "1", "--reason", "fine\u202eenif\x9b")[0] == 0
    code, out, err = cli("labels", "list", "--db", db)
    assert code == 0, err
    assert "doc\\x1b[2Jwipe 1" in out and "fine\\u202eenif\\x9b" in out
    code, out, _ = cli("labels", "list", "--db", db, "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["doc"] for r in rows} == {"doc\x1b[2Jwipe", "d2"}  # the same JSON values, escaped as \u
    code, out, _ = cli("labels", "history", "--db", db, "q1")
    for text in (out, err):
        assert not re.search("[\x1b\x9b\u202e]", text)
    code, _, err = cli("labels", "set", "--db", db, "q\x1bnope", "d", "1")
    assert code == 2 and "\x1b" not in err and "q\\x1bnope" in err


def test_an_exported_header_value_cannot_start_a_judgment_line(cli, tmp_path):
    """A collection version holding a newline is written escaped: the export holds exactly its judgments."""
    db = tmp_path / "cv.json"
    src = write(tmp_path / "cv.jsonl", json.dumps({"query": "q1", "doc": "d1", "grade": 1, "reason": "r",
                                                   "collection_version": "cv\nq1 0 FORGED 3"}) + "\n")
    assert cli("labels", "import", "--db", db, src)[0] == 0
    out_file = tmp_path / "out.trec"
    assert cli("labels", "export", "--db", db, "-o", out_file, "--header")[0] == 0
    lines = out_file.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if not line.startswith("#")] == ["q1 0 d1 1"]
    assert "# collection_version: cv\\x0aq1 0 FORGED 3" in lines


def test_a_stray_byte_on_the_command_line_is_refused_before_it_is_stored(cli, tmp_path):
    db = tmp_path / "w.json"
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    assert cli("labels", "import", "--db", db, qrels)[0] == 0
    bad = b"d\xffx".decode("utf-8", "surrogateescape")
    code, _, err = cli("labels", "set", "--db", db, "q1", bad, "1", "--reason", "ok")
    assert code == 2 and "--doc" in err and "not UTF-8 text" in err
    code, _, err = cli("labels", "set", "--db", db, "q1", "d1", "2", "--reason", "x\udcff")
    assert code == 2 and "--reason" in err
    assert cli("labels", "export", "--db", db, "--format", "jsonl", "-o", tmp_path / "out.jsonl")[0] == 0
