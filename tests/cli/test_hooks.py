"""pre-commit hooks: each entry of .pre-commit-hooks.yaml run as pre-commit runs it (entry + file names)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]


def hooks() -> dict:
    yaml = pytest.importorskip("yaml")
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def run_hook(hook_id: str, files: list, cwd: Path):
    hook = hooks()[hook_id]
    entry = hook["entry"].split()
    assert entry[0] == "python"
    names = [str(f) for f in files if re.search(hook["files"], str(f))]  # pre-commit's filter
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, *entry[1:], *names], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    return proc, names


def test_a_valid_benchmark_passes_and_a_broken_one_is_named(tmp_path):
    bench = tmp_path / "lab"
    shutil.copytree(SAMPLES / "seed-lab", bench)
    proc, names = run_hook("rankgate-validate-benchmark", ["lab/qrels.json", "lab/README.md"], tmp_path)
    assert names == ["lab/qrels.json"] and proc.returncode == 0, proc.stderr
    (bench / "runs.json").write_text('{"baseline": {"q1": {"d1": "high"}}}')
    proc, _ = run_hook("rankgate-validate-benchmark", ["lab/runs.json"], tmp_path)
    assert proc.returncode != 0 and "runs.json" in proc.stderr


def test_qrels_exports_are_checked_line_by_line(tmp_path):
    good = tmp_path / "reviewed.qrels"
    good.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    bad = tmp_path / "qrels-v2.txt"
    bad.write_text("q1 0 d1 2\nq1 0 d2 high\n")
    proc, names = run_hook("rankgate-validate-qrels", ["reviewed.qrels", "notes.txt"], tmp_path)
    assert names == ["reviewed.qrels"] and proc.returncode == 0, proc.stderr
    proc, _ = run_hook("rankgate-validate-qrels", ["reviewed.qrels", "qrels-v2.txt"], tmp_path)
    assert proc.returncode == 1 and "qrels-v2.txt:2:" in proc.stderr and "reviewed" not in proc.stderr
