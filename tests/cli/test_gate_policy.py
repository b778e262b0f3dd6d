"""The gate on the CLI with a policy: the ops-handbook decision, waivers, binding, budgets, significance."""

import json

import numpy as np
import pytest

from rankgate.cli import main
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"
POLICY = OPS / "policy.toml"


def gate(capsys, *argv):
    code = main(["gate", *(str(a) for a in argv)])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def failing(res):
    return [c["name"] for c in res["check_details"] if not c["passed"]]


def test_ops_handbook_policy_rejects_for_the_must_pass_query_only(capsys):
    code, res, _ = gate(capsys, OPS, "--policy", POLICY, "--as-of", "2026-06-01")
    assert code == 3 and res["decision"] == "reject"
    assert failing(res) == ["must_pass_queries_hit"]
    names = list(res["checks"])
    assert "critical_ndcg_floor[critical]" in names and "RR@5_no_significant_regression" in names
    assert "latency_ms_p95_budget" in names and "slice_hit_floor[how-to]" in names
    sig = next(c for c in res["check_details"] if c["name"] == "RR@5_no_significant_regression")
    assert sig["p_value"] > 0.5 and sig["resamples"] == 10000 and sig["seed"] == 2026
    assert res["deltas"]["recall_at_k"]["p_value"] < 0.05  # the recall gain is real
    assert res["binding"]["status"] == "bound"
    assert res["budgets"]["candidate"]["latency_ms"]["p95"] == pytest.approx(np.percentile(latencies("bm25-prf"), 95))
    # the seed's fields keep their meaning
    assert res["candidate_macro"]["mrr_at_k"] == pytest.approx(0.916667, abs=1e-6)
    assert [q["query"] for q in res["failed_queries"]] == ["q-leaked-key"]


def test_the_better_candidate_is_accepted(capsys):
    code, res, _ = gate(capsys, OPS, "--policy", POLICY, "--candidate", "bm25-stemmed")
    assert code == 0 and res["decision"] == "accept" and not failing(res)


def waiver(tmp_path, expires="2026-06-30"):
    return write(tmp_path / "waiver.toml", f"""
[[waivers]]
query = "q-leaked-key"
owner = "tomas"
reason = "PRF drift on key-leak wording, fix in OPS-142 | <b>"
expires = {expires}
""")


def test_waiver_passes_until_it_expires_then_fails(tmp_path, capsys):
    w = waiver(tmp_path)
    code, res, _ = gate(capsys, OPS, "--policy", w, "--as-of", "2026-06-30")
    assert code == 0 and res["checks"]["must_pass_queries_hit"] and res["checks"]["waivers_not_expired"]
    assert [x["query"] for x in res["waivers"] if x["used"]] == ["q-leaked-key"]
    code, res, _ = gate(capsys, OPS, "--policy", w, "--as-of", "2026-07-01")
    assert code == 3 and failing(res) == ["must_pass_queries_hit", "waivers_not_expired"]
    assert "expired 2026-06-30" in res["check_details"][-1]["why"]


def test_waiver_for_an_unknown_query_is_refused(tmp_path, capsys):
    w = write(tmp_path / "w.toml", '[[waivers]]\nquery = "q-nope"\nowner = "a"\nreason = "r"\nexpires = 2030-01-01\n')
    code, _, err = gate(capsys, OPS, "--policy", w)
    assert code == 2 and "waiver for query 'q-nope'" in err and str(w) in err


def test_significant_regression_rejects_and_noise_does_not(tmp_path, capsys):
    pol = write(tmp_path / "sig.toml", '[[rules]]\nmeasure = "R@5"\ncheck = "no_significant_regression"\n'
                                      '[[rules]]\nmeasure = "RR@5"\ncheck = "no_significant_regression"\n')
    # prf -> plain loses R@5 significantly; RR@5 drops too, but within the noise
    code, res, _ = gate(capsys, OPS, "--policy", pol, "--baseline", "bm25-prf", "--candidate", "bm25-plain",
                        "--must-pass", "q-leaked-key", "--resamples", "2000")
    assert code == 3 and failing(res) == ["R@5_no_significant_regression"]
    detail = res["check_details"][0]
    assert detail["p_value"] < 0.05 and detail["ci"][1] < 0 and detail["resamples"] == 2000


def latencies(run: str) -> np.ndarray:
    rows = [json.loads(line) for line in (OPS / "runs" / f"{run}.jsonl").read_text().splitlines()[1:]]
    return np.array([r["latency_ms"] for r in rows])


def test_latency_budget_both_ways(tmp_path, capsys):
    # thresholds from the files, which make_runs.py rewrites with fresh timings
    p95 = float(np.percentile(latencies("bm25-prf"), 95))
    ratio = float(np.percentile(latencies("bm25-prf"), 50) / np.percentile(latencies("bm25-plain"), 50))
    for limit, ok in ((p95 * 0.9, False), (p95 * 1.1, True)):
        pol = write(tmp_path / "t.toml", f'[[rules]]\ncheck = "budget"\nfield = "latency_ms"\nmax = {limit}\n')
        code, res, _ = gate(capsys, OPS, "--policy", pol, "--must-pass", "q-sev1-first-steps")
        assert (code, res["check_details"][0]["candidate"]) == (0 if ok else 3, pytest.approx(p95))
    for limit, ok in ((ratio * 0.9, False), (ratio * 1.1, True)):
        pol = write(tmp_path / "r.toml", f'[[rules]]\ncheck = "budget"\nfield = "latency_ms"\nstat = "p50"\n'
                                         f'max_ratio = {limit}\n')
        code, res, _ = gate(capsys, OPS, "--policy", pol, "--must-pass", "q-sev1-first-steps")
        assert code == (0 if ok else 3), res["check_details"][0]["why"]


def test_budget_on_a_run_without_latency_fails(tmp_path, capsys):
    pol = write(tmp_path / "b.toml", '[[rules]]\ncheck = "budget"\nfield = "latency_ms"\nmax = 10\n')
    code, res, _ = gate(capsys, "--qrels", OPS / "judgments.jsonl", "--runs", f"trec={OPS / 'runs/bm25-plain.trec'}",
                        "--runs", OPS / "runs/bm25-plain.jsonl", "--baseline", "bm25-plain", "--candidate", "trec",
                        "--short-rankings", "allow", "--policy", pol, "--queries", OPS / "queries.jsonl",
                        "--must-pass", "q-sev1-first-steps")
    assert code == 3 and failing(res) == ["latency_ms_p95_budget"]
    assert "the candidate trec carries no latency_ms" in res["check_details"][0]["why"]


# ---- binding ----------------------------------------------------------------------------------------

def bench(tmp_path, label_version="v1", snaps=("v1", "v1")):
    j = "".join(json.dumps({"query": q, "doc": d, "grade": 1, "collection_version": label_version}) + "\n"
                for q, d in (("q1", "d1"), ("q2", "d2")))
    write(tmp_path / "judgments.jsonl", j)
    for name, snap in zip(("a", "b"), snaps):
        meta = {"name": name} | ({"corpus_snapshot": snap} if snap else {})
        rows = [{"query": "q1", "ranking": ["d1", "x", "y"]}, {"query": "q2", "ranking": ["d2", "x", "y"]}]
        write(tmp_path / f"{name}.jsonl", "\n".join(json.dumps(r) for r in [{"meta": meta}, *rows]) + "\n")
    return ["--qrels", tmp_path / "judgments.jsonl", "--runs", tmp_path / "a.jsonl", "--runs", tmp_path / "b.jsonl",
            "--baseline", "a", "--candidate", "b", "--k", "3"]


def test_runs_on_another_snapshot_than_the_labels_are_refused(tmp_path, capsys):
    code, _, err = gate(capsys, *bench(tmp_path, "v1", ("v2", "v2")))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "corpus_snapshot 'v2' but the judgments' collection_version is 'v1'" in err
    assert "--allow-snapshot-mismatch" in err
    code, res, _ = gate(capsys, *bench(tmp_path, "v1", ("v2", "v2")), "--allow-snapshot-mismatch")
    assert code == 0 and res["binding"]["status"] == "mismatch_allowed" and res["binding"]["problems"]


def test_runs_on_different_snapshots_are_refused_and_the_policy_can_allow(tmp_path, capsys):
    code, _, err = gate(capsys, *bench(tmp_path, "v1", ("v1", "v2")))
    assert code == 2 and "different corpus snapshots (a 'v1', b 'v2')" in err
    pol = write(tmp_path / "allow.toml", "allow_snapshot_mismatch = true\n")
    code, res, _ = gate(capsys, *bench(tmp_path, "v1", ("v1", "v2")), "--policy", pol)
    assert code == 0 and res["binding"]["status"] == "mismatch_allowed"


def test_binding_unchecked_without_snapshots(tmp_path, capsys):
    code, res, _ = gate(capsys, *bench(tmp_path, "v1", (None, None)))
    assert code == 0 and res["binding"]["status"] == "unchecked"
    assert "no run carries meta.corpus_snapshot" in res["binding"]["why"]
    code, res, _ = gate(capsys, *bench(tmp_path, "v1", ("v1", None)))
    assert code == 0 and res["binding"]["status"] == "partial"


def test_the_documented_example_accepts_until_its_waiver_expires(tmp_path, capsys):
    from tests.unit.test_gate_policy import documented_example

    pol = write(tmp_path / "doc.toml", documented_example())
    code, res, _ = gate(capsys, OPS, "--policy", pol, "--as-of", "2026-12-31", "--resamples", "1000")
    assert code == 0, failing(res)
    assert res["checks"]["no_newly_failed_queries[critical]"] and res["waivers"][0]["used"]
    code, res, _ = gate(capsys, OPS, "--policy", pol, "--as-of", "2027-01-01", "--resamples", "1000")
    assert code == 3
    assert failing(res) == ["no_newly_failed_queries[critical]", "must_pass_queries_hit", "waivers_not_expired"]
