"""The numbers each bundled sample must give, as its README states them."""

import json

import pytest

from rankgate.cli import main


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr().out
    return code, out


def test_seed_lab_baseline(capsys, samples):
    code, out = run_cli(capsys, "score", samples / "seed-lab", "--run", "baseline")
    assert code == 0
    m = json.loads(out)["macro"]
    assert m["recall_at_k"] == pytest.approx(1.0)
    assert m["mrr_at_k"] == pytest.approx(0.7)
    assert m["precision_at_k"] == pytest.approx(0.5333, abs=1e-4)


def test_seed_lab_bad_candidate_rejected_naming_q_recovery(capsys, samples):
    lab = samples / "seed-lab"
    code, out = run_cli(capsys, "gate", "--qrels", lab / "qrels.json", "--runs", lab / "runs.json",
                        "--baseline", "baseline", "--candidate", "candidate_bad", "--must-pass", "q-recovery",
                        "--k", "3")
    assert code == 3
    r = json.loads(out)
    assert r["accepted"] is False
    assert r["candidate_macro"]["mrr_at_k"] == pytest.approx(0.8)
    assert r["candidate_macro"]["recall_at_k"] == pytest.approx(0.8)
    assert [q["query"] for q in r["failed_queries"]] == ["q-recovery"]
    assert r["checks"] == {"recall_not_lower": False, "mrr_not_lower": True, "must_pass_queries_hit": False}


def test_seed_lab_good_candidate_accepted(capsys, samples):
    code, out = run_cli(capsys, "gate", samples / "seed-lab", "--candidate", "candidate_good")
    assert code == 0
    r = json.loads(out)
    assert r["accepted"] is True
    assert r["candidate_macro"]["recall_at_k"] == pytest.approx(1.0)
    assert r["candidate_macro"]["mrr_at_k"] == pytest.approx(1.0)


def test_seed_lab_validate_only_matches_seed(capsys, samples):
    code, out = run_cli(capsys, "validate", samples / "seed-lab")
    assert code == 0
    assert json.loads(out) == {"status": "valid", "queries": 5,
                               "runs": ["baseline", "candidate_bad", "candidate_good"], "k": 3}


def test_docs_assistant(capsys, samples):
    code, out = run_cli(capsys, "score", samples / "docs-assistant")
    assert code == 0
    r = json.loads(out)
    assert round(r["macro"]["recall_at_k"], 3) == 0.833
    assert round(r["macro"]["mrr_at_k"], 3) == 0.667
    sharing = next(q for q in r["queries"] if q["query"] == "q_sharing")
    assert sharing["found"] == ["share_roles"] and sharing["missing"] == ["share_limits"]


def test_three_questions(capsys, samples):
    code, out = run_cli(capsys, "score", samples / "three-questions", "-m", "R@1", "-m", "R@3", "-m", "RR")
    assert code == 0
    m = json.loads(out)["macro"]
    assert m["R@1"] == pytest.approx(0.0)
    assert m["R@3"] == pytest.approx(0.5)
    assert round(m["RR"], 3) == 0.278


def test_ops_handbook_candidate_raises_mrr_but_loses_a_must_pass_query(capsys, samples):
    code, out = run_cli(capsys, "gate", samples / "ops-handbook")
    assert code == 3
    r = json.loads(out)
    assert r["baseline"] == "bm25-plain" and r["candidate"] == "bm25-prf"
    assert r["baseline_macro"]["mrr_at_k"] == pytest.approx(0.890351, abs=1e-6)
    assert r["candidate_macro"]["mrr_at_k"] == pytest.approx(0.916667, abs=1e-6)
    assert r["baseline_macro"]["recall_at_k"] == pytest.approx(0.616792, abs=1e-6)
    assert r["candidate_macro"]["recall_at_k"] == pytest.approx(0.731704, abs=1e-6)
    assert r["checks"]["must_pass_queries_hit"] is False
    failed = next(c for c in r["check_details"] if c["name"] == "must_pass_queries_hit")["failed"]
    assert failed == ["q-leaked-key"]
    # no-answer queries are reported apart, never averaged
    assert r["no_answer_queries"] == ["q-etcd-backup", "q-office-wifi"]
