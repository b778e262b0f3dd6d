"""The GitHub Action: action.yml's gate step run locally with GITHUB_* set, and its escaping."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rankgate.ci import annotations, could_not_run, escape_data, escape_property, run
from tests.conftest import SAMPLES

ROOT = Path(__file__).resolve().parents[2]


def _step(step_id: str) -> dict:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    return next(s for s in action["runs"]["steps"] if s.get("id") == step_id)


def _github(tmp_path, bench, **inputs):
    """Run the action's gate step as GitHub would: bash, the step's env, GITHUB_* files; python3 on PATH is ours."""
    step = _step("gate")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").symlink_to(sys.executable)
    files = {name: tmp_path / name.lower() for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_ENV")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env |= {k: str(v) for k, v in files.items()}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "PYTHONPATH": str(ROOT / "src"),
            "BENCHMARK": str(bench), "BASELINE": "", "CANDIDATE": "", "POLICY": "", "RANKGATE_ARGS": "--resamples 300",
            "RECEIPT": "rankgate-receipt.json"}
    env |= inputs
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr  # the step itself never fails: the last step does
    read = {k: (p.read_text() if p.exists() else "") for k, p in files.items()}
    outputs = dict(line.split("=", 1) for line in read["GITHUB_OUTPUT"].splitlines())
    return proc, read, outputs


def test_a_reject_writes_the_summary_annotates_and_records_the_exit_code(tmp_path):
    bench = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", bench)
    proc, files, outputs = _github(tmp_path, bench)
    assert "## rankgate gate: ❌ REJECT" in files["GITHUB_STEP_SUMMARY"]
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert errors == ["::error title=rankgate%3A must-pass query lost::must-pass query q-leaked-key lost: no "
                      "relevant document in the top 5; missing ir-security-incident-01, netsec-secrets-rotation-02"]
    assert "RANKGATE_EXIT=3" in files["GITHUB_ENV"]
    assert outputs == {"exit-code": "3", "decision": "reject", "receipt": "rankgate-receipt.json"}
    statement = json.loads((tmp_path / "rankgate-receipt.json").read_text())
    assert statement["predicate"]["decision"] == "reject"
    assert "REJECT bm25-prf vs bm25-plain" in proc.stderr


def test_an_accept_and_an_invalid_input(tmp_path):
    proc, files, outputs = _github(tmp_path, SAMPLES / "seed-lab", CANDIDATE="candidate_good", RANKGATE_ARGS="")
    assert outputs["decision"] == "accept" and "RANKGATE_EXIT=0" in files["GITHUB_ENV"]
    assert "::error" not in proc.stdout and "✅ ACCEPT" in files["GITHUB_STEP_SUMMARY"]
    proc, files, outputs = _github(tmp_path, tmp_path / "nowhere", RANKGATE_ARGS="")
    assert outputs["decision"] == "invalid" and "RANKGATE_EXIT=2" in files["GITHUB_ENV"]
    assert f"::error title=rankgate::the gate could not run (exit 2): {tmp_path / 'nowhere'}: no such file" \
        in proc.stdout.splitlines()


def test_the_annotation_of_an_invalid_input_names_the_error_escaped(tmp_path, capsys):
    """The gate's own `error:` line goes into the annotation: escaped for the terminal, then for GitHub."""
    bad = tmp_path / "50%\nq\x1b]0;x\x07.trec"
    bad.write_text("q1 0 d1 1\n", encoding="utf-8")
    code = run(["--qrels", str(bad), "--runs", str(bad)], env={})
    out, err = capsys.readouterr()
    assert code == 2 and "error: " in err  # the log keeps the line too
    (line,) = [line for line in out.splitlines() if line.startswith("::error")]
    assert line == (f"::error title=rankgate::the gate could not run (exit 2): {tmp_path}/50%25\\x0aq\\x1b]0;x"
                    "\\x07.trec:1: 4 columns, expected 6: query Q0 document rank score tag; this looks like qrels (4 "
                    "columns: query iteration document grade): are the qrels and the run swapped?")


def test_could_not_run_keeps_the_first_error_and_counts_the_rest():
    assert could_not_run(2, []) == "the gate could not run (exit 2): the lines above say why"
    assert could_not_run(2, ["a.trec:3: bad", "b.trec:1: bad"]) == \
        "the gate could not run (exit 2): a.trec:3: bad (and 1 more: see the log)"


def test_the_last_step_fails_the_job_unless_accepted():
    script = next(s for s in _read_steps() if s.get("name") == "Fail on reject")["run"]
    for code, expect in (("0", 0), ("3", 3), ("2", 2)):
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", script], env={"RANKGATE_EXIT": code, "PATH":
                              os.environ["PATH"]}, capture_output=True, text=True)
        assert proc.returncode == expect


def _read_steps():
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]


def test_workflow_command_escaping():
    assert escape_data("50%\r\nx") == "50%25\\x0d\\x0ax"  # newlines are escaped before GitHub sees them
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    evil = {"k": 3, "failed_queries": [{"query": "q\n::warning::x", "missing": ["d%0A", "e\x1b[31m"]}],
            "check_details": [{"name": "must_pass_queries_hit", "kind": "must_pass", "passed": False,
                               "failed": ["q\n::warning::x"]}]}
    (line,) = annotations(evil)
    assert "\n" not in line and "\x1b" not in line and "%250A" in line
    assert line.startswith("::error title=rankgate%3A must-pass query lost::must-pass query q\\x0a::warning::x lost")


def test_many_failures_are_cut_with_how_many_more():
    d = {"k": 3, "failed_queries": [], "check_details": [{"name": "must_pass_queries_hit", "kind": "must_pass",
                                                          "passed": False, "failed": [f"q{i}" for i in range(15)]}]}
    lines = annotations(d)
    assert len(lines) == 11 and "and 5 more failures" in lines[-1]
