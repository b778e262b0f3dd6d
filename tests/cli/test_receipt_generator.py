"""Receipts name the resamples' generator; a receipt that names none was computed with numpy's PCG64 (before
rankgate drew its own) and still verifies: `receipt verify` recomputes it with PCG64."""

import json

import pytest

from rankgate.core.receipt import body_digest
from rankgate.core.stats import generator
from tests.cli.receipts import ops_copy, run

ARGS = ["--as-of", "2026-06-01", "--resamples", "300"]  # 38 queries: the p-values are drawn, not enumerated


@pytest.fixture
def bench(tmp_path):
    return ops_copy(tmp_path)


def gate(capsys, bench, name="receipt.json"):
    receipt = bench.parent / name
    code, _, err = run(capsys, "gate", bench, "--policy", bench / "policy.toml", "--receipt", receipt, *ARGS)
    assert code == 3, err
    return receipt


def rewrite(receipt, edit):
    statement = json.loads(receipt.read_text())
    body = statement["predicate"]
    edit(body)
    body["digest"] = {"sha256": body_digest(body)}
    receipt.write_text(json.dumps(statement))


def p_values(receipt) -> list:
    body = json.loads(receipt.read_text())["predicate"]
    return [d["p_value"] for d in body["result"]["deltas"].values()]


def forget_generator(body):
    """What a receipt written before rankgate had its own generator holds: no `generator` anywhere."""
    for sig in (body["significance"], body["result"]["significance"]):
        sig.pop("generator", None)


def test_a_new_receipt_names_its_generator_and_verifies(capsys, bench):
    receipt = gate(capsys, bench)
    body = json.loads(receipt.read_text())["predicate"]
    assert body["result"]["significance"]["generator"] == "SplitMix64" == body["significance"]["generator"]
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 0 and json.loads(out)["differences"] == []


def test_a_receipt_computed_with_pcg64_before_still_verifies(capsys, bench):
    with generator("PCG64"):  # rankgate before its own generator: the same code path, numpy's PCG64
        receipt = gate(capsys, bench)
    assert "generator" not in json.loads(receipt.read_text())["predicate"]["result"]["significance"]
    assert p_values(receipt) != p_values(gate(capsys, bench, "new.json"))  # the generators do differ here
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 0 and json.loads(out)["differences"] == [], err


def test_the_generator_a_receipt_names_is_the_one_recomputed(capsys, bench):
    """Naming another generator than the one the numbers came from is a mismatch, not silently accepted."""
    with generator("PCG64"):
        receipt = gate(capsys, bench)

    def claim_splitmix(body):
        body["significance"]["generator"] = body["result"]["significance"]["generator"] = "SplitMix64"

    rewrite(receipt, claim_splitmix)
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    v = json.loads(out)
    assert code == 3 and any("p_value" in d or ".ci[" in d for d in v["differences"]), v["differences"]

    receipt = gate(capsys, bench, "new.json")
    rewrite(receipt, forget_generator)  # a new receipt passed off as an old one: recomputed with PCG64
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and any("p_value" in d or ".ci[" in d for d in json.loads(out)["differences"])
