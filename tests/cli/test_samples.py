"""rankgate samples: the bundled samples reach a pip user; rankgate review with no argument says how."""

import pytest

import json

from rankgate.cli import main
from tests.conftest import SAMPLES


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_copy_makes_a_folder_of_every_sample_that_gates(capsys, tmp_path):
    target = tmp_path / "samples"
    code, out, _ = run(capsys, "samples", "copy", target)
    names = sorted(p.name for p in SAMPLES.iterdir() if (p / "benchmark.toml").is_file())
    assert code == 0 and sorted(p.name for p in target.iterdir()) == names
    assert f"rankgate review {target / 'ops-handbook'}" in out
    assert (target / "ops-handbook" / "runs" / "bm25-prf.jsonl").read_bytes() == \
        (SAMPLES / "ops-handbook" / "runs" / "bm25-prf.jsonl").read_bytes()
    code, out, err = run(capsys, "gate", target / "seed-lab")
    assert code == 3 and json.loads(out)["candidate"] == "candidate_bad"


def test_copy_refuses_an_existing_folder_and_unknown_names(capsys, tmp_path):
    (tmp_path / "taken").mkdir()
    code, _, err = run(capsys, "samples", "copy", tmp_path / "taken")
    assert code == 2 and "exists already" in err and list((tmp_path / "taken").iterdir()) == []
    code, _, err = run(capsys, "samples", "copy", tmp_path / "new", "--only", "nope")
    assert code == 2 and "no sample named 'nope'" in err and not (tmp_path / "new").exists()
    code, _, _ = run(capsys, "samples", "copy", tmp_path / "one", "--only", "seed-lab")
    assert code == 0 and [p.name for p in (tmp_path / "one").iterdir()] == ["seed-lab"]


def test_list_names_each_sample(capsys):
    code, out, _ = run(capsys, "samples", "list")
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == \
        sorted(p.name for p in SAMPLES.iterdir() if (p / "benchmark.toml").is_file())


def test_review_with_no_argument_prints_usage(capsys):
    code, out, err = run(capsys, "review")
    assert code == 2 and out == ""
    assert err.startswith("usage: rankgate review") and "rankgate samples copy" in err


@pytest.mark.slow
def test_the_wheel_carries_every_sample_file_and_the_readme_walkthrough_runs_from_it(tmp_path, built_wheel):
    """A pip user's first steps (README): copy the samples, gate ops-handbook and its permissions (exit 3), funnel."""
    in_repo = sorted(str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    shipped = sorted(n.removeprefix("rankgate/samples/") for n in built_wheel.names
                     if n.startswith("rankgate/samples/"))
    assert "ops-handbook/runs/pipeline/bm25-plain-rerank.jsonl" in in_repo and shipped == in_repo
    assert built_wheel.run("samples", "copy", "my-samples", cwd=tmp_path).returncode == 0
    copied = sorted(str(p.relative_to(tmp_path / "my-samples")) for p in (tmp_path / "my-samples").rglob("*")
                    if p.is_file())
    assert copied == in_repo
    gate = built_wheel.run("gate", "my-samples/ops-handbook", "-o", "result.json", cwd=tmp_path)
    assert gate.returncode == 3, gate.stderr
    assert json.loads((tmp_path / "result.json").read_text())["candidate"] == "bm25-prf"
    acl = built_wheel.run("gate", "my-samples/ops-handbook/permissions", cwd=tmp_path)
    assert acl.returncode == 3 and "no_permission_leaks failed" in acl.stderr, acl.stderr
    funnel = built_wheel.run("funnel", "my-samples/ops-handbook", "--format", "table", cwd=tmp_path)
    assert funnel.returncode == 0 and "lost at rerank" in funnel.stdout, funnel.stderr
