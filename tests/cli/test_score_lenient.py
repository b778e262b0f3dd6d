"""`rankgate score` refuses only what would make a number wrong; `gate` stays strict and says how to accept."""

import json

import pytest

from rankgate.cli import main
from tests.conftest import write

QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 0\nq3 0 d 2\n"
# Every ranking has two documents; q2 has no relevant document; q9 is not in the qrels.
RUN = ("q1 Q0 a 1 2 r\nq1 Q0 x 2 1 r\nq2 Q0 c 1 2 r\nq2 Q0 y 2 1 r\n"
       "q3 Q0 e 1 1 r\nq3 Q0 d 2 0.5 r\nq9 Q0 z 1 1 r\n")


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.trec", RUN)


def test_short_rankings_and_a_query_without_relevant_documents_are_scored_with_warnings(files, capsys):
    qrels, run = files
    code, out, err = cli(capsys, "score", qrels, "--runs", run, "-m", "nDCG@10")
    assert code == 0, err
    res = json.loads(out)
    ndcg = {row["query"]: row["measures"]["nDCG@10"] for row in res["queries"]}
    assert ndcg["q1"] == pytest.approx(1.0)
    assert ndcg["q2"] == 0.0  # no relevant document: 0, and counted in the mean, as trec_eval does
    assert ndcg["q3"] == pytest.approx(1 / 1.5849625007211563)  # the relevant document at rank 2
    assert res["macro"]["nDCG@10"] == pytest.approx((1 + 0 + 1 / 1.5849625007211563) / 3)
    assert "q9" not in ndcg
    lines = err.splitlines()
    assert len(lines) == 3 and all(l.startswith("warning: ") for l in lines)
    assert "1 query has no relevant document (grade >= 1): 'q2'" in lines[0]
    assert "absent from the qrels: 'q9'" in lines[1]
    assert "3 rankings shorter than 10: 'q1 (2)', 'q2 (2)', 'q3 (2)'" in lines[2]


def test_the_default_k_columns_never_refuse_a_short_ranking(files, capsys):
    qrels, run = files
    code, _, err = cli(capsys, "score", qrels, "--runs", run, "-m", "RR@2", "--short-rankings", "error")
    assert code == 0, err  # k is 3 by default, deeper than the rankings, yet only RR@2 was asked for
    assert "shorter" not in err


def test_short_rankings_error_refuses_against_the_measures_asked_for(files, capsys):
    qrels, run = files
    code, out, err = cli(capsys, "score", qrels, "--runs", run, "-m", "P@5", "--short-rankings", "error")
    assert code == 2 and out == ""
    assert "3 rankings shorter than 5, the deepest cutoff asked for" in err


def test_gate_still_refuses_and_says_how_to_accept(files, capsys):
    qrels, run = files
    code, _, err = cli(capsys, "gate", qrels, "--runs", f"a={run}", "--runs", f"b={run}", "--baseline", "a",
                       "--candidate", "b", "--short-rankings", "allow")
    assert code == 2
    assert "'q2' has no relevant document" in err and '"no_answer": true' in err
    assert "absent from the qrels: 'q9'" in err and "--missing-queries zero" in err


def test_depth_and_judged_only_in_score(tmp_path, capsys):
    qrels = write(tmp_path / "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    run = write(tmp_path / "run.trec", "q1 Q0 x 1 9 r\nq1 Q0 d2 2 8 r\nq1 Q0 y 3 7 r\nq1 Q0 d1 4 6 r\n")

    def rr(*extra):
        code, out, err = cli(capsys, "score", qrels, "--runs", run, "-m", "RR", "-m", "NumRet", *extra)
        assert code == 0, err
        return json.loads(out)["macro"]["RR"], json.loads(out)["macro"]["NumRet"]

    assert rr() == (pytest.approx(0.25), 4)
    assert rr("-J") == (pytest.approx(0.5), 2)  # x and y dropped, d1 now second
    assert rr("-M", "3") == (0.0, 3)
    code, _, err = cli(capsys, "score", qrels, "--runs", run, "-M", "0")
    assert code == 2 and "--depth" in err


def test_trec_eval_version_9_ties_scores_equal_as_floats_in_score(tmp_path, capsys):
    qrels = write(tmp_path / "qrels.txt", "q1 0 b 1\n")  # tied, b ranks first (document IDs descending)
    run = write(tmp_path / "run.trec", "q1 Q0 a 1 36.000012 r\nq1 Q0 b 2 36.000011 r\n")
    for version, rr in (("10", 0.5), ("9", 1.0)):
        code, out, err = cli(capsys, "score", qrels, "--runs", run, "-m", "RR", "--trec-eval-version", version)
        assert code == 0, err
        assert json.loads(out)["macro"]["RR"] == rr


def test_short_rankings_allow_asks_for_no_warning_about_them(files, capsys):
    qrels, run = files
    code, out, err = cli(capsys, "score", qrels, "--runs", run, "-m", "nDCG@10", "--short-rankings", "allow")
    assert code == 0, err
    assert "shorter than" not in err and len(err.splitlines()) == 2  # the two other warnings stay
    code, _, err = cli(capsys, "score", qrels, "--runs", run, "-m", "nDCG@10", "--short-rankings", "error")
    assert code == 2 and "shorter than 10" in err
