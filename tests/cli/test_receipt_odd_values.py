"""Values a receipt or the command line can hold that rankgate never writes (red team s8): NaN and Infinity
in a receipt, a recorded resamples or seed out of range, a --seed the generator would wrap. Each is one line
naming where it is, exit 2; a receipt with a seed of 2**63 or more (taken before --seed had a limit) verifies."""

import json

import pytest

from rankgate.core.receipt import body_digest
from tests.cli.receipts import gate_receipt, ops_copy, run

ARGS = ["--as-of", "2026-06-01", "--resamples", "300"]


@pytest.fixture
def bench(tmp_path):
    return ops_copy(tmp_path)


def edited(receipt, edit, repair=True):
    statement = json.loads(receipt.read_text())
    edit(statement["predicate"])
    if repair:  # as a forger would: the digest holds, the recomputation must still catch the edit
        statement["predicate"]["digest"] = {"sha256": body_digest(statement["predicate"])}
    receipt.write_text(json.dumps(statement))  # (json writes NaN and Infinity as bare words)
    return receipt


def seeds(value):
    """Every seed the body records (the policy, the significance settings, each check's) set to `value`."""
    def edit(node):
        if isinstance(node, dict):
            node.update({k: value for k in node if k == "seed"})
        for child in node.values() if isinstance(node, dict) else node if isinstance(node, list) else ():
            edit(child)
    return edit


def test_nan_or_infinity_in_a_receipt_is_one_line_naming_the_field(capsys, bench):
    receipt = gate_receipt(capsys, bench, ARGS)
    kept = receipt.read_text()
    edited(receipt, lambda body: body["significance"].update(seed=float("nan")), repair=False)
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: {receipt}: not a rankgate receipt: predicate.significance.seed is "
                                        "NaN (JSON has no NaN or Infinity)"]
    receipt.write_text(kept)
    edited(receipt, lambda body: body["inputs"][1].update(bytes=float("-inf")), repair=False)
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and "predicate.inputs[1].bytes is -Infinity" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("key, value, why", [("resamples", 10**12, "between 100 and 10000000"),
                                             ("seed", -7, "0 or more")])
def test_a_recorded_flag_out_of_range_names_the_receipt_and_the_field(capsys, bench, key, value, why):
    receipt = edited(gate_receipt(capsys, bench, ARGS), lambda body: body["invocation"]["args"].update({key: value}))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"error: {receipt}: not a rankgate receipt: invocation.args.{key} is "
                                        f"{value}, not what rankgate gate writes there ({key} must be {why})"]
    edited(receipt, lambda body: body.update(k=99), repair=False)  # and with the digest broken too: a mismatch
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and f"recomputing failed: {receipt}: not a rankgate receipt: invocation.args.{key}" in out
    assert f"--{key}" not in out + err


def test_seed_flag_refused_from_2_to_the_63_as_in_a_policy_file(capsys, bench, tmp_path):
    out_file = tmp_path / "result.json"
    code, out, err = run(capsys, "gate", bench, "--policy", bench / "policy.toml", *ARGS, "--seed", 2**64,
                         "-o", out_file)
    assert (code, out, err) == (2, "", "error: --seed: seed must be below 2**63\n") and not out_file.exists()
    (tmp_path / "policy.toml").write_text(bench.joinpath("policy.toml").read_text().replace("seed = 2026",
                                                                                            f"seed = {2**63}"))
    code, _, policy_err = run(capsys, "gate", bench, "--policy", tmp_path / "policy.toml", *ARGS)
    assert code == 2 and policy_err.endswith("significance.seed must be below 2**63\n")  # the same limit
    code, _, err = run(capsys, "compare", bench, "--seed", 2**63, "--resamples", 300)
    assert (code, err) == (2, "error: --seed: seed must be below 2**63\n")
    assert gate_receipt(capsys, bench, ARGS, "--seed", 2**63 - 1).exists()


def test_a_receipt_with_a_seed_of_2_to_the_64_still_verifies(capsys, bench):
    """Written before --seed had a limit: the generator takes the seed modulo 2**64, as when it was written."""
    receipt = gate_receipt(capsys, bench, ARGS, "--seed", 0)
    edited(receipt, lambda body: (seeds(2**64)(body), body["invocation"]["args"].update(seed=2**64)))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 0 and json.loads(out)["differences"] == [], err
