"""Receipts as in-toto statements: every field verify checks, the digest over the body, signatures.

Each tamper case edits one field of a receipt and then repairs the body's digest, as a forger would:
the recomputation alone must still catch it. The same edit without the repair is caught by the digest.
"""

import base64
import json
import os

import pytest

from rankgate.core.receipt import body_digest
from tests.cli.receipts import gate_receipt, ops_copy, run
from tests.conftest import SAMPLES

ARGS = ["--as-of", "2026-06-01", "--resamples", "300"]


@pytest.fixture
def bench(tmp_path):
    return ops_copy(tmp_path)


def gated(capsys, bench, *extra):
    return gate_receipt(capsys, bench, ARGS, *extra)


def _waiver(p):
    p["waivers_used"] = [{"query": "q-leaked-key", "owner": "mallory", "reason": "trust me", "expires": "2099-01-01",
                          "used": True, "expired": False}]


def _set(*path_and_value):
    path, value = path_and_value[:-1], path_and_value[-1]

    def edit(p):
        node = p
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


TAMPERS = {
    "waivers_used": _waiver,
    "binding": _set("binding", "status", "unbound"),
    "runs": _set("runs", "bm25-prf", "metadata", "corpus_snapshot", "other-2027"),
    "significance": _set("significance", "correction", "holm"),
    "k": _set("k", 10),
    "measure_definitions": _set("measure_definitions", "nDCG@5", "anything"),
    "qrels_metadata": _set("qrels_metadata", "collection_version", "forged"),
    "rankgate_version": _set("rankgate_version", "9.9.9"),
    "inputs": lambda p: p["inputs"][0].update(bytes=p["inputs"][0]["bytes"] + 1),
    "result.accepted": _set("result", "accepted", 0),
    "exit_code": _set("exit_code", 0),
    "labels": _set("labels", "content_hash", "0" * 64),
    "rel_level": _set("rel_level", 2),
    "extra field": _set("note", "added"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_each_field_is_checked_even_with_a_repaired_digest(capsys, bench, name):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    body = statement["predicate"]
    if name == "significance" and not isinstance(body.get("significance"), dict):
        body["significance"] = {"forged": True}
    else:
        TAMPERS[name](body)
    body["digest"] = {"sha256": body_digest(body)}
    receipt.write_text(json.dumps(statement))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3, (name, out)
    v = json.loads(out)
    assert v["status"] == "mismatch"
    field = name.split(" ")[0].split(".")[0]
    assert any(field in d or (field == "inputs" and "bytes" in d) or (field == "extra" and "note" in d)
               for d in v["differences"]), v["differences"]
    assert not any(d.startswith("digest") for d in v["differences"])


def test_an_edit_without_repairing_the_digest_is_named_by_it(capsys, bench):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    statement["predicate"]["created_at"] = "2020-01-01T00:00:00+00:00"  # not recomputed: only the digest sees it
    receipt.write_text(json.dumps(statement))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and json.loads(out)["differences"] == [
        "digest: the receipt's body was edited after it was written (its sha256 differs)"]


@pytest.mark.parametrize("edit, expect", [
    (lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"), "not a rankgate receipt"),
    (lambda s: s.update(predicateType="https://example.com/other"), "not a rankgate receipt"),
    (lambda s: s["predicate"].update(receipt_version=99), "receipt_version 99"),
    (lambda s: s["predicate"].update(receipt_version="3"), "receipt_version \"3\""),
])
def test_an_unknown_statement_or_version_exits_2(capsys, bench, edit, expect):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    edit(statement)
    receipt.write_text(json.dumps(statement))
    code, _, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and expect in err and len(err.strip().splitlines()) == 1


def test_a_changed_subject_is_named(capsys, bench):
    receipt = gated(capsys, bench)
    statement = json.loads(receipt.read_text())
    statement["subject"][0]["digest"]["sha256"] = "0" * 64
    receipt.write_text(json.dumps(statement))
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and any(d.startswith("subject[0].digest.sha256") for d in json.loads(out)["differences"])


def test_a_version_2_receipt_still_verifies_and_is_checked_field_by_field(capsys, bench):
    receipt = gated(capsys, bench)
    body = json.loads(receipt.read_text())["predicate"]
    del body["digest"]
    body["receipt_version"] = 2
    receipt.write_text(json.dumps(body))
    code, out, err = run(capsys, "receipt", "verify", receipt)
    assert code == 0, out
    body["waivers_used"] = [{"query": "q-leaked-key"}]
    receipt.write_text(json.dumps(body))
    code, out, _ = run(capsys, "receipt", "verify", receipt)
    assert code == 3 and any(d.startswith("waivers_used") for d in json.loads(out)["differences"])


# ---- signatures ---------------------------------------------------------------------------------

@pytest.fixture
def key(capsys, tmp_path):
    path = tmp_path / "gate.key"
    code, _, err = run(capsys, "receipt", "keygen", path)
    assert code == 0 and "wrote a signing key" in err
    assert oct(os.stat(path).st_mode & 0o777) == "0o600" and len(path.read_text().strip()) == 64
    return path


def test_a_signed_receipt_verifies_with_its_key_only(capsys, bench, key, tmp_path):
    receipt = gated(capsys, bench, "--sign-key", key)
    envelope = json.loads(receipt.read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert json.loads(base64.b64decode(envelope["payload"]))["_type"] == "https://in-toto.io/Statement/v1"
    code, out, err = run(capsys, "receipt", "verify", receipt, "--key", key)
    assert code == 0 and json.loads(out)["signature"] == "valid", err
    code, out, err = run(capsys, "receipt", "verify", receipt)  # no key: content checked, signature not
    assert code == 0 and "signature not checked" in err
    other = tmp_path / "other.key"
    run(capsys, "receipt", "keygen", other)
    code, out, err = run(capsys, "receipt", "verify", receipt, "--key", other)
    assert code == 3 and "no signature by this key" in err


def test_a_signed_receipt_detects_an_edited_payload_or_signature(capsys, bench, key):
    receipt = gated(capsys, bench, "--sign-key", key)
    envelope = json.loads(receipt.read_text())
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["created_at"] = "2020-01-01T00:00:00+00:00"
    statement["predicate"]["digest"] = {"sha256": body_digest(statement["predicate"])}  # digest repaired
    forged = dict(envelope, payload=base64.b64encode(json.dumps(statement).encode()).decode())
    receipt.write_text(json.dumps(forged))
    code, out, err = run(capsys, "receipt", "verify", receipt, "--key", key)
    assert code == 3 and "signature does not match" in err
    sig = envelope["signatures"][0]["sig"]
    flipped = ("A" if sig[0] != "A" else "B") + sig[1:]
    receipt.write_text(json.dumps(dict(envelope, signatures=[dict(envelope["signatures"][0], sig=flipped)])))
    code, _, err = run(capsys, "receipt", "verify", receipt, "--key", key)
    assert code == 3 and "signature does not match" in err


def test_an_unsigned_receipt_with_a_key_is_a_mismatch(capsys, bench, key):
    receipt = gated(capsys, bench)
    code, _, err = run(capsys, "receipt", "verify", receipt, "--key", key)
    assert code == 3 and "not signed" in err


def test_keys_are_never_overwritten_and_short_keys_refused(capsys, bench, key, tmp_path):
    code, _, err = run(capsys, "receipt", "keygen", key)
    assert code == 2 and "never overwritten" in err
    short = tmp_path / "short.key"
    short.write_text("abc\n")
    code, _, err = run(capsys, "gate", bench, "--receipt", tmp_path / "r.json", "--sign-key", short, *ARGS)
    assert code == 2 and "at least 16 bytes" in err and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("where, value", [
    ("args.benchmark", 5), ("args.k", "x"), ("args.rel_level", []), ("args.measure", 5), ("args.must_pass", [1]),
    ("args.resamples", 1e308), ("args.seed", True), ("args.qrels_format", ["a"]), ("args.unknown", "x"),
    ("cwd", 5), ("inputs", [{"path": 5}]), ("runs", ["a"]), ("runs", {"a": 5}), ("result", "x"),
])
def test_a_malformed_receipt_exits_2_in_one_line(capsys, tmp_path, where, value):
    lab = SAMPLES / "seed-lab"
    receipt = tmp_path / "r.json"
    assert run(capsys, "gate", lab, "--receipt", receipt, "--quiet")[0] == 3
    statement = json.loads(receipt.read_text())
    body = statement["predicate"]
    if where.startswith("args."):
        body["invocation"]["args"][where[5:]] = value
    elif where == "cwd":
        body["invocation"]["cwd"] = value
    else:
        body[where] = value
    receipt.write_text(json.dumps(statement))
    code, _, err = run(capsys, "receipt", "verify", receipt)
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1, err
