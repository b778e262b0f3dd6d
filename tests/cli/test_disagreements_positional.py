"""`rankgate labels disagreements QRELS` took the qrels file for a query ID and printed nothing (s8, "noticed,
not fixed"). It takes the workspace the way `labels status` does: a benchmark folder or a qrels file the app
reviewed before the query ID; a query the workspace does not know is one line, exit 2."""

from __future__ import annotations

import json
import shutil

from rankgate.cli import main
from rankgate.store import paths
from tests.conftest import SAMPLES

OPS = SAMPLES / "ops-handbook"
ANA = SAMPLES / "ops-handbook" / "reviews" / "ana.jsonl"  # ana's export, shipped with the sample


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def qrels_reviewed_in_the_app(tmp_path, capsys):
    """A copy of the sample's qrels and the app's workspace for it (as `rankgate review QRELS --runs ...` names
    it), holding a second reviewer's judgments: 7 open disagreements."""
    qrels = tmp_path / "judgments.jsonl"
    shutil.copy(OPS / "judgments.jsonl", qrels)
    db = paths.qrels_workspace_path(qrels)
    for argv in (("import", "--db", db, qrels), ("merge", "--db", db, ANA)):
        code, _, err = cli(capsys, "labels", *argv)
        assert code == 0, err
    return qrels, db


def test_a_qrels_file_lists_the_disagreements_of_the_apps_workspace(tmp_path, capsys, monkeypatch):
    qrels, db = qrels_reviewed_in_the_app(tmp_path, capsys)
    _, by_db, _ = cli(capsys, "labels", "disagreements", "--db", db)
    assert by_db.count("\n") == 7 and "q-leaked-key ir-declare-01:" in by_db
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "labels", "disagreements", "judgments.jsonl")  # as the user types it
    assert (code, out) == (0, by_db), err
    code, out, err = cli(capsys, "labels", "disagreements", "judgments.jsonl", "q-leaked-key")
    assert code == 0 and out and all(line.startswith("q-leaked-key ") for line in out.splitlines())
    code, out, _ = cli(capsys, "labels", "agreement", "judgments.jsonl", "--json")
    assert code == 0 and len(json.loads(out)["disagreements"]) == 7


def test_a_query_id_after_db_or_alone_is_still_the_query(tmp_path, capsys):
    qrels, db = qrels_reviewed_in_the_app(tmp_path, capsys)
    code, out, err = cli(capsys, "labels", "disagreements", "--db", db, "q-leaked-key")
    assert code == 0 and out and all(line.startswith("q-leaked-key ") for line in out.splitlines()), err
    code, out, err = cli(capsys, "labels", "disagreements", "--db", db, "q-no-such")
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown query 'q-no-such'" in err


def test_a_benchmark_folder_then_a_query(tmp_path, capsys):
    folder = tmp_path / "ops"
    shutil.copytree(OPS, folder)
    code, out, err = cli(capsys, "labels", "disagreements", folder)  # the first open imports its qrels
    assert (code, out) == (0, ""), err
    code, out, err = cli(capsys, "labels", "disagreements", folder, "q-leaked-key")
    assert (code, out) == (0, ""), err
    code, out, err = cli(capsys, "labels", "disagreements", folder, "q-no-such")
    assert code == 2 and "unknown query 'q-no-such'" in err


def test_a_qrels_file_the_app_never_opened_says_what_to_pass(tmp_path, capsys, monkeypatch):
    shutil.copy(OPS / "judgments.jsonl", tmp_path / "judgments.jsonl")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "labels", "disagreements", "judgments.jsonl")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "rankgate review judgments.jsonl" in err and "--db" in err
    assert not paths.qrels_workspace_path(tmp_path / "judgments.jsonl", create=False).exists()
