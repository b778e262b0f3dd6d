"""`labels queue` names the gate's decision beside its list; where `rankgate gate` would refuse the same
labels (exit 2), it says so with the gate's reason instead of a decision the gate would not make."""

from __future__ import annotations

import json
import shutil

from tests.conftest import SAMPLES


def test_the_queue_says_no_decision_where_the_gate_refuses(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    bench = tmp_path / "ops-handbook"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    code, out, _ = cli("labels", "queue", bench, "--limit", "1")
    assert code == 0 and "gate bm25-plain -> bm25-prf: reject)" in out
    judgments = bench / "judgments.jsonl"
    lines = judgments.read_text().splitlines()
    first = json.loads(lines[0])
    first["collection_version"] = "handbook-2026.12"  # an expert's own version, as `V` in the app sets it
    judgments.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    gate_code, _, gate_err = cli("gate", bench)
    assert gate_code == 2
    code, out, _ = cli("labels", "queue", bench, "--limit", "1")
    assert code == 0 and "reject" not in out.splitlines()[0]
    assert "gate bm25-plain -> bm25-prf: no decision, `rankgate gate` refuses these labels: " in out
    assert gate_err.removeprefix("error: ").strip() in out  # the gate's own line
    code, out, _ = cli("labels", "queue", bench, "--limit", "1", "--json")
    got = json.loads(out)
    assert code == 0 and got["decision"] is None and "handbook-2026.12" in got["gate_refuses"]


def test_the_queue_says_no_decision_for_a_must_pass_query_nobody_judged(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("RANKGATE_HOME", str(tmp_path / "home"))
    bench = tmp_path / "ops-handbook"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    gate_code, _, gate_err = cli("gate", bench, "--must-pass", "q-nobody-judged")
    assert gate_code == 2 and "q-nobody-judged" in gate_err
    code, out, _ = cli("labels", "queue", bench, "--limit", "1", "--must-pass", "q-nobody-judged")
    assert code == 0 and "no decision, `rankgate gate` refuses these labels: " in out
    assert gate_err.removeprefix("error: ").strip() in out
