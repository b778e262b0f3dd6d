"""A receipt written by an older rankgate verifies when every field this version rebuilds matches, and
says which version wrote it; a newer version's receipt, or an edited one, is still a difference."""

import json

import pytest

import rankgate
from rankgate.core import receipt as receipt_module
from rankgate.core.receipt import body_digest, older_version
from tests.cli.receipts import ops_copy, run

ARGS = ["--as-of", "2026-06-01", "--resamples", "300"]


@pytest.fixture
def bench(tmp_path):
    return ops_copy(tmp_path)


def gated_by(capsys, monkeypatch, bench, version):
    """A receipt as rankgate `version` writes it (the same code, its version string)."""
    receipt = bench.parent / "receipt.json"
    with monkeypatch.context() as m:
        m.setattr(receipt_module, "__version__", version)
        code, _, err = run(capsys, "gate", bench, "--policy", bench / "policy.toml", "--receipt", receipt, *ARGS)
    assert code == 3, err
    assert json.loads(receipt.read_text())["predicate"]["rankgate_version"] == version
    return receipt


def edited(receipt, edit):
    """Edit the body and write it back with its digest repaired (as the older version would have written it)."""
    statement = json.loads(receipt.read_text())
    body = statement["predicate"]
    edit(body)
    body["digest"] = {"sha256": body_digest(body)}
    receipt.write_text(json.dumps(statement))


def test_versions_compare_as_numbers():
    assert older_version("0.0.9", "0.1.0") and older_version("0.9", "0.10.0") and older_version("1", "1.0.1")
    assert not older_version("0.1.0", "0.1.0") and not older_version("0.10.0", "0.9.0")
    assert not older_version("0.1.0rc1", "0.2.0") and not older_version(None, "0.1.0")


def test_an_older_versions_receipt_verifies_and_says_who_wrote_it(capsys, monkeypatch, bench):
    receipt = gated_by(capsys, monkeypatch, bench, "0.0.9")
    code, out, err = run(capsys, "receipt", "verify", receipt)
    v = json.loads(out)
    assert code == 0 and v["status"] == "verified" and v["differences"] == []
    assert v["written_by"] == f"rankgate 0.0.9 (verified by {rankgate.__version__})"
    assert "written by rankgate 0.0.9; every field this version rebuilds matches" in err


def test_a_field_the_older_version_did_not_write_is_named_not_checked(capsys, monkeypatch, bench):
    receipt = gated_by(capsys, monkeypatch, bench, "0.0.9")
    edited(receipt, lambda body: body.pop("significance"))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    v = json.loads(out)
    assert code == 0 and v["not_checked"] == ["significance (rankgate 0.0.9 did not write it)"]
    assert "not checked: 1 field(s) added since" in err


def test_an_older_receipt_still_fails_on_any_edit_or_a_missing_decision(capsys, monkeypatch, bench):
    receipt = gated_by(capsys, monkeypatch, bench, "0.0.9")
    edited(receipt, lambda body: body.update(k=10))
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and any(d.startswith("k: receipt 10") for d in json.loads(out)["differences"])
    receipt = gated_by(capsys, monkeypatch, bench, "0.0.9")
    edited(receipt, lambda body: body.pop("decision"))
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and "decision: receipt null, recomputed \"reject\"" in json.loads(out)["differences"]


@pytest.mark.parametrize("version", ["9.9.9", "0.1.0-forged"])
def test_a_newer_or_unknown_versions_receipt_is_a_difference(capsys, monkeypatch, bench, version):
    receipt = gated_by(capsys, monkeypatch, bench, version)
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    v = json.loads(out)
    assert code == 3 and "written_by" not in v
    assert any(d.startswith("rankgate_version: receipt") for d in v["differences"])
