"""A judge that earns its vote (core/judge_vote.py): suggestions count in the gate only while the judge's kappa
against the experts on a blind, seeded overlap meets the policy's [judge] bar. A stub judge that copies the
experts' grades is counted; one that grades at random is not."""

import json
import random
import sys

import numpy as np
import pytest

from rankgate.core.judge_vote import binary_kappa, draw_overlap, kappa_interval
from rankgate.store import Workspace
from rankgate.store.suggestions import SuggestionBook
from tests.conftest import write

JUDGE = r'''
import json, random, sys
truth, mode = json.load(open(sys.argv[1])), sys.argv[2]
for line in sys.stdin:
    req = json.loads(line)
    key = req["query"] + " " + req["doc"]
    grade = truth[key] if mode == "copy" else random.Random(key).randint(0, 3)
    print(json.dumps({"id": req.get("id"), "grade": grade, "reason": mode}), flush=True)
'''


def truth_grade(q: int, d: int) -> int:
    if d == 0:  # each query's first document is relevant (the gate refuses a query with none)
        return 2
    return random.Random(f"{q}-{d}").choice([0, 0, 0, 1, 2, 3])


@pytest.fixture
def bench(tmp_path):
    """30 queries, two runs of 10 documents each; the experts judged each query's first 3 documents."""
    folder = tmp_path / "b"
    qs = [f"q{i:02d}" for i in range(30)]
    write(folder / "queries.jsonl", "".join(json.dumps({"id": q, "text": f"question {q}"}) + "\n" for q in qs))
    for name, shift in (("base", 0), ("cand", 1)):
        rows = [f"{q} Q0 d{i}-{(j + shift) % 12} {j + 1} {10 - j} {name}" for i, q in enumerate(qs) for j in range(10)]
        write(folder / "runs" / f"{name}.trec", "\n".join(rows) + "\n")
    qrels = [f"{q} 0 d{i}-{j} {truth_grade(i, j)}" for i, q in enumerate(qs) for j in range(3)]
    write(folder / "qrels.txt", "\n".join(qrels) + "\n")
    write(folder / "benchmark.toml", 'name = "judged"\nk = 10\nqrels = "qrels.txt"\nqueries = "queries.jsonl"\n'
          'runs = ["runs/base.trec", "runs/cand.trec"]\n[gate]\nbaseline = "base"\ncandidate = "cand"\n'
          'short_rankings = "allow"\n')
    truth = {f"{q} d{i}-{j}": truth_grade(i, j) for i, q in enumerate(qs) for j in range(12)}
    write(tmp_path / "truth.json", json.dumps(truth))
    return folder


def _judge_flow(cli, tmp_path, bench, mode: str):
    script = write(tmp_path / "judge.py", JUDGE)
    cmd = f"{sys.executable} {script} {tmp_path / 'truth.json'} {mode}"
    code, _, err = cli("labels", "suggest", bench, "--queue", "300", "--max-calls", "300", "--judge-command", cmd,
                       "--judge-name", f"stub-{mode}")
    assert code == 0, err
    code, out, err = cli("labels", "overlap", bench, "--size", "60", "--seed", "7")
    assert code == 0 and "drew 60 of" in out, err
    code, out, _ = cli("labels", "queue", bench, "--json")
    queued = json.loads(out)
    blind = [tuple(p) for p in queued["judge_overlap"]]
    assert len(blind) == 60
    first = [(x["query"], x["doc"]) for x in queued["items"][:60]]  # the overlap comes first, blind
    assert set(first) == set(blind) and all(x["blind"] for x in queued["items"][:60])
    # blind: neither the app nor `--order suggested` shows their suggestion
    from rankgate.tui.suggested import Suggested

    code, out, _ = cli("labels", "status", "-b", bench, "--json")
    shown = Suggested(json.loads(out)["path"])
    assert shown.get(*blind[0]) is None and SuggestionBook.beside(json.loads(out)["path"]).get(*blind[0])
    code, out, _ = cli("labels", "queue", bench, "--order", "suggested", "--json")
    hints = {(x["query"], x["doc"]): x["suggested"] for x in json.loads(out)["items"]}
    assert all(hints[p] is None for p in blind if p in hints)
    # the experts judge the overlap (from the truth, as careful assessors would), then export for the gate
    truth = json.loads((tmp_path / "truth.json").read_text())
    code, out, _ = cli("labels", "status", "-b", bench, "--json")
    with Workspace.open(json.loads(out)["path"], reviewer="expert") as ws:
        for q, d in blind:
            ws.set_judgment(q, d, truth[f"{q} {d}"], reason="checked")
    assert cli("labels", "export", bench, "--overwrite")[0] == 0
    code, out, _ = cli("labels", "queue", bench, "--json")
    assert json.loads(out)["judge_overlap"] == []
    return cli("gate", bench, "--with-suggestions", "--receipt", tmp_path / "receipt.json",
               "--markdown", tmp_path / "r.md", "-o", tmp_path / "out.json")


@pytest.mark.slow
def test_a_judge_that_copies_the_experts_is_counted(cli, tmp_path, bench):
    code, _, err = _judge_flow(cli, tmp_path, bench, "copy")
    first = err.splitlines()[0]
    assert first.startswith("suggested labels counted: ") and "judge kappa 1.00 on 60 expert-checked pairs" in first
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["judge"]["counted"] and out["judge"]["suggestions"] > 100
    assert out["suggestions"]["counted"] == out["judge"]["suggestions"]
    receipt = json.loads((tmp_path / "receipt.json").read_text())["predicate"]
    trust = receipt["label_trust"]["judge"]
    assert trust["judges"][0]["judge"] == "stub-copy" and len(trust["judges"][0]["prompt_hash"]) >= 16
    assert len(trust["overlap"]) == 60 and trust["overlap_seed"] == 7
    assert "suggested labels counted" in (tmp_path / "r.md").read_text()
    assert cli("receipt", "verify", tmp_path / "receipt.json")[0] == 0


@pytest.mark.slow
def test_a_judge_that_grades_at_random_is_not(cli, tmp_path, bench):
    code, _, err = _judge_flow(cli, tmp_path, bench, "random")
    first = err.splitlines()[0]
    assert first.startswith("suggested labels not counted: kappa ") and "below 0.6" in first
    out = json.loads((tmp_path / "out.json").read_text())
    assert not out["judge"]["counted"] and out["suggestions"]["counted"] == 0
    assert out["judge"]["kappa"] < 0.3
    code, out, _ = cli("receipt", "verify", tmp_path / "receipt.json")
    assert code == 0, out  # recomputed without the suggestions, as the gate decided


def test_no_overlap_yet_is_not_counted(cli, tmp_path, bench):
    code, out, _ = cli("labels", "status", "-b", bench, "--json")
    book = SuggestionBook.beside(json.loads(out)["path"])
    from rankgate.store.suggestions import Suggestion

    book.add([Suggestion("q00", "d0-5", 2, judge="j")])
    code, _, err = cli("gate", bench, "--with-suggestions", "-o", tmp_path / "o.json")
    assert err.splitlines()[0].startswith("suggested labels not counted: no expert-checked overlap")
    assert json.loads((tmp_path / "o.json").read_text())["suggestions"]["counted"] == 0


def test_draw_is_seeded_and_kappa_interval_covers():
    pairs = [(f"q{i}", f"d{j}") for i in range(10) for j in range(10)]
    assert draw_overlap(pairs, 20, 3) == draw_overlap(list(reversed(pairs)), 20, 3) != draw_overlap(pairs, 20, 4)
    rng = np.random.default_rng(0)
    expert = rng.integers(0, 4, 200)
    judge = np.where(rng.random(200) < 0.8, expert, rng.integers(0, 4, 200))
    k, lo, hi = kappa_interval(judge, expert, 1, seed=1)
    assert lo < k < hi and hi - lo < 0.35
    assert k == pytest.approx(float(binary_kappa(judge >= 1, expert >= 1)))
    assert kappa_interval([1, 1], [1, 1], 1) == (None, None, None)  # no variation: undefined


def test_judge_table_is_checked(cli, tmp_path, bench):
    write(bench / "p.toml", "[judge]\nmin_kappa = 2\n")
    code, _, err = cli("gate", bench, "--policy", bench / "p.toml")
    assert code == 2 and "[judge] min_kappa must be between -1 and 1" in err
    write(bench / "p.toml", "[judge]\nmin_overlp = 20\n")
    code, _, err = cli("gate", bench, "--policy", bench / "p.toml")
    assert code == 2 and "unknown key 'min_overlp'" in err
