"""A must-pass query that is not in the qrels is blamed on where must_pass was set: benchmark.toml's [gate]
(with the line of the ID), the policy file, the queries file, or the --must-pass flag (core/policy.py SetAt)."""

from __future__ import annotations

import re
import shutil

from rankgate.cli import main
from tests.conftest import SAMPLES


def gate(capsys, *argv) -> tuple[int, str]:
    code = main(["gate", *map(str, argv)])
    return code, capsys.readouterr().err


def _drop_gate_must_pass(toml):
    """benchmark.toml without its [gate] must_pass (one line, or an array over several)."""
    text = re.sub(r"\nmust_pass = \[[^\]]*\]\n", "\n", toml.read_text())
    toml.write_text(text)


def test_benchmark_toml_is_named_with_the_line_of_the_id(capsys, tmp_path):
    b4 = tmp_path / "b4"
    shutil.copytree(SAMPLES / "ops-handbook", b4)
    toml = b4 / "benchmark.toml"
    toml.write_text(toml.read_text().replace('  "q-breach-evidence",\n',
                                             '  "q-breach-evidence",\n  "q-no-such-query",\n'))
    line = toml.read_text().splitlines().index('  "q-no-such-query",') + 1
    code, err = gate(capsys, b4)
    assert code == 2 and err == (f"error: {toml}:{line}: [gate] must_pass: query 'q-no-such-query' is not in the "
                                 "qrels\n")
    b5 = tmp_path / "b5"  # no policy.toml: still benchmark.toml, not --must-pass
    shutil.copytree(SAMPLES / "seed-lab", b5)
    toml = b5 / "benchmark.toml"
    toml.write_text(toml.read_text().replace('"q-recovery"', '"q-recovery2"'))
    line = next(i for i, ln in enumerate(toml.read_text().splitlines(), 1) if ln.startswith("must_pass"))
    code, err = gate(capsys, b5)
    assert code == 2 and err == f"error: {toml}:{line}: [gate] must_pass: query 'q-recovery2' is not in the qrels\n"


def test_the_policy_file_is_named_when_it_set_must_pass(capsys, tmp_path):
    b6 = tmp_path / "b6"
    shutil.copytree(SAMPLES / "ops-handbook", b6)
    _drop_gate_must_pass(b6 / "benchmark.toml")
    policy = b6 / "policy.toml"
    text = policy.read_text()
    head, sep, rest = text.partition("\n[")
    policy.write_text(head + '\nmust_pass = ["q-leaked-key",\n  "q-typo"]\n' + sep + rest)
    line = policy.read_text().splitlines().index('  "q-typo"]') + 1
    code, err = gate(capsys, b6)
    assert code == 2 and err == f"error: {policy}:{line}: must_pass: query 'q-typo' is not in the qrels\n"
    # the same file given with --policy, its rules in a [gate] table: named as such
    other = tmp_path / "gate.toml"
    other.write_text('# a policy\n[gate]\nk = 3\nmust_pass = ["q-elsewhere"]\n')
    code, err = gate(capsys, SAMPLES / "seed-lab", "--policy", other)
    assert code == 2 and err == f"error: {other}:4: [gate] must_pass: query 'q-elsewhere' is not in the qrels\n"


def test_the_flag_is_named_only_when_given(capsys, tmp_path):
    code, err = gate(capsys, SAMPLES / "seed-lab", "--must-pass", "q-nope")
    assert code == 2 and err == "error: --must-pass: must-pass query 'q-nope' is not in the qrels\n"
    b5 = tmp_path / "b5"  # the flag replaces benchmark.toml's list: a bad ID there is not in force
    shutil.copytree(SAMPLES / "seed-lab", b5)
    toml = b5 / "benchmark.toml"
    toml.write_text(toml.read_text().replace('"q-recovery"', '"q-recovery2"'))
    code, err = gate(capsys, b5, "--must-pass", "q-recovery")
    assert code in (0, 3) and "must_pass" not in err


def test_the_queries_file_is_named_when_its_flags_set_must_pass(capsys, tmp_path):
    b7 = tmp_path / "b7"
    shutil.copytree(SAMPLES / "ops-handbook", b7)
    _drop_gate_must_pass(b7 / "benchmark.toml")
    queries = b7 / "queries.jsonl"
    lines = queries.read_text().splitlines()
    lines.append(lines[0].replace('"q-pitr-dropped-table"', '"q-not-judged"'))
    queries.write_text("\n".join(lines) + "\n")
    code, err = gate(capsys, b7)
    assert code == 2 and err == f"error: {queries}: must_pass: query 'q-not-judged' is not in the qrels\n", err
