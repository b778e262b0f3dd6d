"""`rankgate validate` lists every file's problem: a run file that cannot be read does not hide the others'."""

from __future__ import annotations

import json

from rankgate.cli import main
from tests.conftest import write


def run_lines(name: str, qids=("q1", "q2"), docs=("d1", "d2", "d3")) -> list[str]:
    return [f"{q} Q0 {d} {r} {10 - r} {name}\n" for q in qids for r, d in enumerate(docs, 1)]


def files(tmp_path):
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0 d2 1\n")
    bad = run_lines("two")
    bad[2] = bad[2].replace(" 7 two", " NaNx two")  # line 3: a score that is no number
    two = write(tmp_path / "two.trec", "".join(bad + [bad[4]]))  # and a repeated line at its end
    dup = write(tmp_path / "dup.trec", "".join(run_lines("dup") + [run_lines("dup")[1]]))  # line 7 repeats line 2
    return qrels, two, dup


def test_a_run_that_cannot_be_read_does_not_hide_the_next_runs_problem(tmp_path, capsys):
    qrels, two, dup = files(tmp_path)
    code = main(["validate", "--qrels", str(qrels), "--runs", str(two), "--runs", str(dup), "--k", "3",
                 "--format", "text"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err[0].startswith(f"error: {two}:3: score 'NaNx' is not a number")
    assert err[1] == f"error: {dup}:7: run 'dup' ranks document 'd2' twice for query 'q1'"
    assert len(err) == 2


def test_json_lists_them_too_and_every_unreadable_file_has_its_line(tmp_path, capsys):
    qrels, two, dup = files(tmp_path)
    three = write(tmp_path / "three.trec", "q1 Q0 d1 1\n")  # 4 columns
    code = main(["validate", "--qrels", str(qrels), "--runs", str(two), "--runs", str(three), "--runs", str(dup),
                 "--k", "3"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and out["status"] == "invalid"
    assert [(p["where"], p["rule"]) for p in out["problems"]] == [
        (f"{two}:3", "unreadable"), (f"{three}:1", "unreadable"), (f"{dup}:7", "duplicate-ranked")]


def test_a_bad_qrels_file_does_not_hide_what_the_runs_show_without_it(tmp_path, capsys):
    """The qrels' problem first, then each run's that needs no qrels (a line that does not read, a document
    ranked twice). (It stopped at the qrels' line until the eighth session.)"""
    _, two, dup = files(tmp_path)
    qrels = write(tmp_path / "bad-qrels.txt", "q1 0 d1 x\n")
    code = main(["validate", "--qrels", str(qrels), "--runs", str(two), "--runs", str(dup), "--k", "3",
                 "--format", "text"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 3, err
    assert err[0].startswith(f"error: {qrels}:1: grade 'x'")
    assert err[1].startswith(f"error: {two}:3: score 'NaNx' is not a number")
    assert err[2] == f"error: {dup}:7: run 'dup' ranks document 'd2' twice for query 'q1'"
    code = main(["validate", "--qrels", str(qrels), "--runs", str(dup), "--k", "3"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and [(p["where"], p["rule"]) for p in out["problems"]] == [
        (f"{qrels}:1", "unreadable"), (f"{dup}:7", "duplicate-ranked")]


def test_a_benchmark_folders_bad_qrels_lists_its_runs_problems_too(tmp_path, capsys):
    _, two, dup = files(tmp_path)
    write(tmp_path / "qrels.txt", "q1 0 d1 1\nq2 0\n")
    write(tmp_path / "benchmark.toml", 'name = "b"\nk = 3\nqrels = "qrels.txt"\nruns = ["two.trec", "dup.trec"]\n')
    code = main(["validate", str(tmp_path), "--format", "text"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 3, err
    assert err[0].startswith(f"error: {tmp_path / 'qrels.txt'}:2:") and f"{two}:3" in err[1] and f"{dup}:7" in err[2]


def test_a_bad_benchmark_toml_still_stops_at_once(tmp_path, capsys):
    files(tmp_path)
    write(tmp_path / "benchmark.toml", 'name = "b"\nk = 3\nqrels = "qrels.txt"\nruns = "two.trec"\n')
    code = main(["validate", str(tmp_path), "--format", "text"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1 and "benchmark.toml" in err[0], err
