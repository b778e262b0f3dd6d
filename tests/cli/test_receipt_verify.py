"""rankgate receipt verify: agrees with an untouched gate; names what differs after any tampering."""

import hashlib
import json

import pytest

from tests.cli.receipts import gate_receipt, ops_copy, run

ARGS = ["--as-of", "2026-06-01", "--resamples", "500"]


@pytest.fixture
def bench(tmp_path):
    return ops_copy(tmp_path)


def gated(capsys, bench, *extra):
    return gate_receipt(capsys, bench, ARGS, *extra)


def test_an_untouched_receipt_verifies(capsys, bench):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://rankgate.dev/attestation/gate/v1"
    cand = bench / "runs" / "bm25-prf.jsonl"
    assert statement["subject"] == [{"name": str(cand),
                                     "digest": {"sha256": hashlib.sha256(cand.read_bytes()).hexdigest()}}]
    rec = statement["predicate"]
    assert rec["receipt_version"] == 3 and len(rec["digest"]["sha256"]) == 64
    assert rec["decision"] == "reject" and rec["as_of"] == "2026-06-01"
    assert {i["role"] for i in rec["inputs"]} == {"manifest", "qrels", "run", "queries", "policy"}
    assert rec["runs"]["bm25-prf"]["metadata"]["corpus_snapshot"] == "ops-handbook-2026.11"
    assert rec["policy"]["significance"] == {"resamples": 500, "seed": 2026, "confidence": 0.95, "correction": "none"}
    assert rec["binding"]["status"] == "bound" and rec["waivers_used"] == []
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 0, err
    v = json.loads(out)
    assert v["status"] == "verified" and v["differences"] == [] and v["recomputed_decision"] == "reject"


@pytest.mark.parametrize("target", ["benchmark.toml", "judgments.jsonl", "runs/bm25-prf.jsonl",
                                    "runs/bm25-stemmed.jsonl", "queries.jsonl", "policy.toml"])
def test_tampering_any_input_fails_verification(capsys, bench, target):
    receipt = gated(capsys, bench)
    path = bench / target
    path.write_bytes(path.read_bytes() + b"\n")  # even one harmless byte
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3
    assert f"{target}: sha256 differs" in err and len(err.strip().splitlines()) == 1
    assert json.loads(out)["status"] == "mismatch"


def test_a_changed_label_changes_the_recomputed_result(capsys, bench):
    receipt = gated(capsys, bench)
    j = bench / "judgments.jsonl"
    rows = [json.loads(line) for line in j.read_text().splitlines()]
    # regrade the document the candidate ranks first for q-leaked-key as relevant: the must-pass now holds
    row = next(r for r in rows if (r["query"], r["doc"]) == ("q-leaked-key", "netsec-ssh-bastion-01"))
    row["grade"] = 2
    j.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    v = json.loads(out)
    assert code == 3 and v["recomputed_decision"] == "accept"
    assert any(d.startswith('decision: receipt "reject", recomputed "accept"') for d in v["differences"])


def test_tampering_the_receipt_fails_verification(capsys, bench):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    rec = statement["predicate"]
    rec["decision"] = "accept"
    rec["result"]["checks"]["must_pass_queries_hit"] = True
    receipt.write_text(json.dumps(statement))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and 'decision: receipt "accept", recomputed "reject"' in err
    assert "result.checks.must_pass_queries_hit: receipt true, recomputed false" in json.loads(out)["differences"]
    statement = json.loads((gated(capsys, bench)).read_text())
    statement["predicate"]["policy"]["rules"][0]["alpha"] = 0.5
    receipt.write_text(json.dumps(statement))
    code, _, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and "policy.rules[0].alpha" in err


def test_waiver_expiry_is_judged_on_the_recorded_date(capsys, bench):
    (bench / "policy.toml").write_text((bench / "policy.toml").read_text() + '''
[[waivers]]
query = "q-leaked-key"
owner = "tomas"
reason = "known"
expires = 2026-06-30
''')
    receipt = gated(capsys, bench)
    rec = json.loads(receipt.read_text())["predicate"]
    assert rec["decision"] == "accept" and [w["query"] for w in rec["waivers_used"]] == ["q-leaked-key"]
    code, _, err = run(capsys, "receipt", "verify", receipt)  # today is after 2026-06-30: still verifies
    assert code == 0, err


def test_unreadable_inputs_and_receipts_exit_2(capsys, bench, tmp_path):
    receipt = gated(capsys, bench)
    (bench / "runs" / "bm25-prf.jsonl").unlink()
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and "bm25-prf.jsonl" in err and json.loads(out)["status"] == "unreadable"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "receipt", "verify", bad)
    assert code == 2 and "invalid JSON" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "receipt", "verify", tmp_path / "missing.json")
    assert code == 2 and "no such file" in err
    bad.write_text('{"inputs": [], "result": {}, "receipt_version": 2}')
    code, _, err = run(capsys, "receipt", "verify", bad)
    assert code == 2 and "records no invocation" in err


def test_relative_paths_verify_from_elsewhere(capsys, bench, tmp_path, monkeypatch):
    monkeypatch.chdir(bench.parent)
    code, _, _ = run(capsys, "gate", "ops", "--policy", "ops/policy.toml", "--receipt", "r.json", *ARGS)
    assert code == 3
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, "receipt", "verify", bench.parent / "r.json")  # falls back to the gate's folder
    assert code == 0, err
    code, _, err = run(capsys, "receipt", "verify", bench.parent / "r.json", "--root", bench.parent)
    assert code == 0, err
    code, out, err = run(capsys, "receipt", "verify", bench.parent / "r.json", "--root", elsewhere)
    assert code == 2
