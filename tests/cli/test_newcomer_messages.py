"""What a newcomer met on the CLI (notes/s7/newcomer.md): one run gated against itself, the real cause of a
bad file first, a hint for a misspelt option or measure, a file given in the wrong role."""

import json
import shutil

from rankgate.cli import main
from tests.conftest import SAMPLES, write


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---- F14: a gate on one run compares nothing --------------------------------------------------------

def test_gate_on_a_folder_with_one_run_refuses_to_compare_it_with_itself(capsys):
    for name, run in (("docs-assistant", "assistant"), ("three-questions", "golden")):
        code, out, err = cli(capsys, "gate", SAMPLES / name)
        assert code == 2 and out == "" and "ACCEPT" not in err
        assert err.strip().splitlines() == [
            f"error: gate: only one run ({run}): a gate compares two (recall_not_lower, mrr_not_lower would compare "
            f"{run} with itself); name them with --baseline/--candidate, or use `rankgate score`"]


def test_gate_naming_one_run_twice_among_several_is_refused_too(tmp_path, capsys):
    q = write(tmp_path / "q.json", '{"q1": ["d1"]}')
    r = write(tmp_path / "r.json", '{"a": {"q1": ["d1", "d2"]}, "b": {"q1": ["d2", "d1"]}}')
    code, _, err = cli(capsys, "gate", "--qrels", q, "--runs", r, "--k", "2", "--baseline", "a", "--candidate", "a")
    assert code == 2 and "the baseline and the candidate are both 'a': a gate compares two runs" in err


def test_gate_on_one_run_with_absolute_rules_only_gates_it_on_those(tmp_path, capsys):
    folder = tmp_path / "da"
    shutil.copytree(SAMPLES / "docs-assistant", folder)
    toml = folder / "benchmark.toml"
    rule = '\n[[gate.rules]]\ncheck = "floor"\nmeasure = "R@3"\nmin = {}\n'
    toml.write_text(toml.read_text() + rule.format(0.8))  # mean Recall@3 is 0.833
    code, out, err = cli(capsys, "gate", folder)
    data = json.loads(out)
    assert code == 0 and data["no_baseline"] is True
    assert data["checks"] == {"R@3_floor": True, "must_pass_queries_hit": True}
    assert err.strip() == "ACCEPT assistant (no baseline: absolute rules only): 2 of 2 checks pass"
    toml.write_text(toml.read_text().replace("min = 0.8", "min = 0.9"))
    code, out, err = cli(capsys, "gate", folder)
    assert code == 3 and err.startswith("REJECT assistant (no baseline: absolute rules only): ")
