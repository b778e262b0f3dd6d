"""A TREC export is qrels that TREC tools read as they are (newcomer s8): no `#` lines unless asked for
(`--header`); the provenance (version, content hash) is on the command's own line, and a file exported with
the header (by `--header`, or by an older rankgate) still imports and merges."""

from __future__ import annotations

import json

import pytest

from .conftest import write

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"


def _store(cli, tmp_path):
    db = tmp_path / "work.json"
    assert cli("labels", "import", "--db", db, write(tmp_path / "in.trec", QRELS))[0] == 0
    return db


def test_trec_export_to_a_file_is_plain_qrels_that_pytrec_eval_reads(cli, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (the dev extra) reads the export")
    db = _store(cli, tmp_path)
    out_file = tmp_path / "reviewed.qrels"
    code, out, err = cli("labels", "export", "--db", db, "--format", "trec", "-o", out_file)  # the README's command
    assert code == 0, err
    text = out_file.read_text()
    assert "#" not in text and text.splitlines() == QRELS.splitlines()
    with open(out_file) as f:
        assert pytrec_eval.parse_qrel(f) == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    assert "version unfrozen" in out and "sha256:" in out  # the provenance, on the command's line


def test_trec_to_standard_output_is_plain_too_and_header_asks_for_it(cli, tmp_path):
    db = _store(cli, tmp_path)
    code, out, _ = cli("labels", "export", "--db", db)
    assert code == 0 and out == QRELS
    code, out, _ = cli("labels", "export", "--db", db, "--header")
    lines = out.splitlines()
    assert [ln.split(":")[0] for ln in lines[:3]] == ["# version", "# content_hash", "# exported_at"]
    assert lines[-3:] == QRELS.splitlines()
    code, _, err = cli("labels", "export", "--db", db, "--header", "--plain")
    assert code == 2 and "--header" in err and "--plain" in err and err.count("\n") == 1


def test_json_and_jsonl_keep_their_meta_by_default(cli, tmp_path):
    db = _store(cli, tmp_path)
    code, out, _ = cli("labels", "export", "--db", db, "--format", "json-graded")
    assert code == 0 and json.loads(out)["meta"]["version"] == "unfrozen"
    code, out, _ = cli("labels", "export", "--db", db, "--format", "jsonl")
    assert json.loads(out.splitlines()[0])["meta"]["content_hash"].startswith("sha256:")


def test_a_file_with_the_header_still_imports_and_checks_its_hash(cli, tmp_path):
    """An export with the header (--header now; every TREC export of older versions) reads back: its
    labels, its reviewer, and a warning when its labels no longer match its content hash."""
    db = _store(cli, tmp_path)
    old = tmp_path / "old.qrels"
    assert cli("labels", "export", "--db", db, "--header", "-o", old)[0] == 0
    assert old.read_text().startswith("# version: unfrozen\n")
    code, out, err = cli("labels", "import", "--db", tmp_path / "other.json", old)
    assert code == 0, err
    code, out, _ = cli("labels", "export", "--db", tmp_path / "other.json")
    assert out == QRELS
    old.write_text(old.read_text().replace("q2 0 d3 1", "q2 0 d3 2"))
    code, out, err = cli("labels", "import", "--db", tmp_path / "third.json", old)
    assert code == 0 and "content_hash" in out + err


def test_a_reviewers_trec_export_says_how_merge_finds_the_reviewer(cli, tmp_path):
    """--judged-by in TREC without the header: the file does not name the reviewer, and the command says
    how `labels merge` learns it; with --header the file names them, as before."""
    db = _store(cli, tmp_path)
    assert cli("labels", "set", "--db", db, "--reviewer", "bo", "q1", "d2", "1", "--reason", "partly")[0] == 0
    code, out, err = cli("labels", "export", "--db", db, "--judged-by", "bo")
    assert code == 0 and out == "q1 0 d2 1\n"
    assert "bo=FILE" in err and "--header" in err
    code, out, _ = cli("labels", "export", "--db", db, "--judged-by", "bo", "--header")
    assert "# reviewer: bo\n" in out
    mine = write(tmp_path / "bo.trec", out)
    code, _, err = cli("labels", "merge", "--db", tmp_path / "m.json", mine)
    assert code == 0, err


def test_the_disagreement_note_names_the_workspace_it_is_about(cli, tmp_path):
    """The note works as printed (the app shows it for its workspace of a qrels file, a name never typed)."""
    db = _store(cli, tmp_path)
    assert cli("labels", "set", "--db", db, "--reviewer", "bo", "q1", "d1", "0", "--reason", "off topic")[0] == 0
    code, _, err = cli("labels", "export", "--db", db, "-o", tmp_path / "x.qrels")
    assert code == 0 and f"`rankgate labels disagreements --db {db}` lists them" in err


@pytest.mark.parametrize("qrels, line", [
    ("q1 Q0 d1 2\nq1 Q0 d2 0\nq2 Q0 d3 1\n", "q1 Q0 d1 2"),  # the DL19 qrels' own column
    ("q1\t0\td1\t2\nq1\t0\td2\t0\nq2\t0\td3\t1\n", "q1\t0\td1\t2"),  # tabs stay tabs
    (QRELS, "q1 0 d1 2"),  # trec_eval's own qrels: `0`
])
def test_a_store_made_by_import_exports_the_inputs_own_iteration_column(cli, tmp_path, qrels, line):
    """`labels import --db` of qrels with `Q0` then `labels export` wrote `0` in every line (newcomer s10)."""
    db = tmp_path / "work.json"
    assert cli("labels", "import", "--db", db, write(tmp_path / "in.txt", qrels))[0] == 0
    assert cli("labels", "set", "q2", "d4", "2", "--reason", "new", "--db", db)[0] == 0
    code, out, _ = cli("labels", "export", "--db", db)
    assert code == 0 and out.splitlines()[0] == line
    assert out.splitlines()[-1] == line.replace("q1", "q2").replace("d1", "d4")  # a new label too
    assert cli("labels", "export", "--db", db, "-o", tmp_path / "out.qrels")[0] == 0
    assert (tmp_path / "out.qrels").read_text() == out
    code, out, _ = cli("labels", "export", "--db", db, "--header")  # rankgate reads it back, header and all
    assert code == 0 and out.splitlines()[-1].startswith("q2")


def test_a_store_of_jsonl_labels_exports_trec_evals_zero(cli, tmp_path):
    db = tmp_path / "work.json"
    rows = "".join(json.dumps({"query": q, "doc": d, "grade": 1}) + "\n" for q, d in [("q1", "d1"), ("q2", "d2")])
    assert cli("labels", "import", "--db", db, write(tmp_path / "in.jsonl", rows))[0] == 0
    assert cli("labels", "export", "--db", db)[1] == "q1 0 d1 1\nq2 0 d2 1\n"
