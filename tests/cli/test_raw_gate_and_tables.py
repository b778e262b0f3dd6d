"""Raw files on the command line (issue 33, item 8): `gate` with two runs takes them as baseline then
candidate in the order given and says so first; `score --format table` ends with a summary line per run and
fits the terminal; a repeatable flag given two values names the flag and how to repeat it."""

from __future__ import annotations

import json

from tests.conftest import write

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 1\n"


def files(tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS)
    a = write(tmp_path / "old.trec", "q1 Q0 d2 1 9 a\nq1 Q0 d1 2 8 a\nq2 Q0 d9 1 9 a\nq2 Q0 d3 2 8 a\n")
    b = write(tmp_path / "new_system_with_a_rather_long_run_name_v2.trec",
              "q1 Q0 d1 1 9 b\nq1 Q0 d2 2 8 b\nq2 Q0 d3 1 9 b\nq2 Q0 d4 2 8 b\n")
    return qrels, a, b


def test_gate_takes_two_runs_in_the_order_given_and_says_so_first(cli, tmp_path):
    qrels, a, b = files(tmp_path)
    short = ("--k", "2")
    code, out, err = cli("gate", qrels, "--runs", a, "--runs", b, *short)
    assert code in (0, 3), err
    first = err.splitlines()[0]
    assert first.startswith("gate: baseline old, candidate new_system_with_a_rather_long_run_name_v2 (the two "
                            "--runs in the order given")
    result = json.loads(out)
    assert (result["baseline"], result["candidate"]) == ("old", "new_system_with_a_rather_long_run_name_v2")
    code, out, err = cli("gate", qrels, "--runs", b, "--runs", a, *short)  # the other order: the other pair
    assert json.loads(out)["baseline"] == "new_system_with_a_rather_long_run_name_v2"
    code, out, err = cli("gate", qrels, "--runs", a, "--runs", b, "--candidate", "old", *short)  # one named: the other
    assert json.loads(out)["baseline"] == "new_system_with_a_rather_long_run_name_v2" and "the other --runs" in err
    receipt = tmp_path / "r.json"
    assert cli("gate", qrels, "--runs", a, "--runs", b, "--receipt", receipt, *short)[0] in (0, 3)
    code, out, err = cli("receipt", "verify", receipt)  # the check recomputes the same pair
    assert code == 0 and json.loads(out)["status"] == "verified", out + err


def test_score_table_ends_with_a_summary_line_per_run_and_fits(cli, tmp_path, monkeypatch):
    qrels, a, b = files(tmp_path)
    monkeypatch.setenv("COLUMNS", "60")
    code, out, err = cli("score", qrels, "--runs", a, "--runs", b, "--format", "table", "-m", "nDCG@10")
    assert code == 0, err
    lines = out.rstrip("\n").splitlines()
    assert lines[-5].startswith("summary: the mean over 2 queries")
    assert lines[-4].split() == ["run", "Success@10", "P@10", "R@10", "RR@10", "nDCG@10"]
    assert lines[-2].split()[0] == "old" and lines[-1].split()[0].startswith("new_sy")
    assert "…" in lines[-1]  # the long name cut in the middle, its end kept
    assert lines[-1].split()[0].endswith("_v2")
    means = [line for line in lines if line.startswith("(mean)")]
    assert [m.split()[1:] for m in means] == [r.split()[1:] for r in lines[-2:]]  # each run's own mean
    assert max(len(line) for line in lines) <= 60


def test_a_repeatable_flag_given_two_values_says_which_and_how(cli, tmp_path):
    qrels, a, b = files(tmp_path)
    for argv in (("score", "--qrels", qrels, "--runs", a, b), ("score", qrels, "--runs", a, b),
                 ("gate", qrels, "--runs", a, b)):
        code, out, err = cli(*argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"--runs takes one value ({a}); {b} came after it" in err and f"`--runs {a} --runs {b}`" in err
        assert "TOML" not in err
    code, out, err = cli("score", qrels, "--runs", a, "-m", "nDCG@10", "AP")
    assert code == 2 and "-m takes one value (nDCG@10); AP came after it" in err and "`-m nDCG@10 -m AP`" in err
    code, out, err = cli("score", "--runs", a, qrels)  # a qrels file after a run is the qrels, as before
    assert code == 0, err
