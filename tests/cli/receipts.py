"""What the receipt tests share: a copy of ops-handbook without its large files, a command run in-process,
and a gate that writes a receipt (tests/cli/test_receipt_*.py)."""

import shutil

from rankgate.cli import main
from tests.conftest import SAMPLES


def ops_copy(tmp_path):
    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder, ignore=shutil.ignore_patterns("corpus.jsonl", "*.trec",
                                                                                     "dense-*", "make_runs.py"))
    return folder


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def gate_receipt(capsys, bench, args, *extra):
    """Gate `bench` with its policy and `args`, writing receipt.json beside it; the receipt's path."""
    receipt = bench.parent / "receipt.json"
    code, _, err = run(capsys, "gate", bench, "--policy", bench / "policy.toml", "--receipt", receipt, *args, *extra)
    assert code in (0, 3), err
    return receipt
