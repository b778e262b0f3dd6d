"""trec_eval 10's measures query by query (core/trec_eval_kernel.py): the doubles trec_eval computes.

Hand-checked cases here; tests/cli/test_trec_eval.py compares whole outputs with trec_eval's own, and
test_random_inputs_match_the_c_trec_eval compares with a C trec_eval when one is installed.
"""

import math
import os
import random
import shutil
import subprocess
import sys

import pytest

from rankgate.core import trec_eval as te
from rankgate.core import trec_eval_kernel as kernel
from tests.conftest import CONFORMANCE, ROOT, write

DL19 = CONFORMANCE / "trec-dl-2019-passage"


def run_cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "rankgate", "trec_eval", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120)


def summary_value(tmp_path, qrels: str, run: str, measure: str) -> str:
    r = run_cli("-m", measure, write(tmp_path / "qrels", qrels), write(tmp_path / "run", run))
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.splitlines()
    return line.split("\t")[2]


def test_rndcg_of_a_ranking_one_longer_than_the_ideal(tmp_path):
    """Three relevant documents; the ranking holds three unjudged ones, then one relevant. trec_eval takes
    nDCG where the ideal's gain changes (after rank 3: DCG 0) and adds a point at the ranking's end only
    when it is longer than that by more than one: Rndcg 0 (rankgate printed 0.1011 before)."""
    qrels = "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq1 0 n 0\n"
    run = "q1 Q0 x 1 4 r\nq1 Q0 y 2 3 r\nq1 Q0 z 3 2 r\nq1 Q0 a 4 1 r\n"
    assert summary_value(tmp_path, qrels, run, "Rndcg") == "0.0000"
    assert run_cli("--trec-eval-version", "9", "-m", "Rndcg", tmp_path / "qrels", tmp_path / "run").stdout.split(
        "\t")[2].strip() == "0.0000"  # the engine (rankgate score, trec_eval 9) agrees


def test_rndcg_of_a_short_ranking(tmp_path):
    """Three relevant documents, one ranked: the points go on past the ranking, with its final DCG (1):
    1 / (1 + 1/log2 3 + 1/log2 4)."""
    qrels = "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\n"
    expected = 1 / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert summary_value(tmp_path, qrels, "q1 Q0 a 1 4 r\n", "Rndcg") == f"{expected:6.4f}" == "0.4693"


def test_a_mean_half_way_between_two_printed_digits_prints_as_trec_eval_does(tmp_path):
    """40 queries whose P_20 sum to 311/20: the mean is 0.38875 exactly, half-way between 0.3887 and 0.3888.
    trec_eval adds the doubles query by query, then divides: 0.38874999999999998, printed 0.3887. A
    pairwise sum (numpy's mean, rankgate before) lands on 0.38875000000000004 and prints 0.3888."""
    hits = [3, 12, 16, 5, 7, 12, 12, 15, 1, 7, 3, 5, 17, 6, 0, 7, 3, 5, 11, 10, 0, 16, 6, 5, 7, 16, 4, 6, 0, 11, 10,
            13, 4, 0, 4, 9, 8, 13, 13, 9]
    qrels, run = [], []
    for q, k in enumerate(hits):
        qrels += [f"q{q:02d} 0 d{i} 1\n" for i in range(20)]
        run += [f"q{q:02d} Q0 {'d' if i < k else 'x'}{i} {i + 1} {100 - i} r\n" for i in range(20)]
    assert sum(hits) / 800 == 0.38875 and f"{sum(h / 20 for h in hits) / 40:6.4f}" == "0.3887"
    assert summary_value(tmp_path, "".join(qrels), "".join(run), "P.20") == "0.3887"


def test_sums_are_sequential_as_in_c():
    """A running sum is a left fold: Python 3.12's sum() of floats is compensated, trec_eval's is not."""
    values = [1e16, 1.0, -1e16]
    assert kernel._total(values) == 0.0  # ((1e16 + 1) - 1e16) in doubles
    assert kernel._running([0.1, 0.2, 0.3]) == [0.1, 0.1 + 0.2, 0.1 + 0.2 + 0.3]


def test_gains_are_ordered_by_trec_eval_comparator_and_glibc_merge_sort():
    """ndcg.2=1,3=0.4: trec_eval compares gains by their difference cast to int, so 1.0 and 0.4 tie while
    1.0 > 0.0; glibc's merge sort of [2:1.0, 3:0.4, 0:0.0, 1:1.0] gives levels 0, 2, 3, 1."""
    gains = kernel.setup_gains([("2", 1.0), ("3", 0.4)], [4, 3, 2, 1])
    assert [g[0] for g in gains] == [0, 2, 3, 1]
    assert kernel._ideal(gains) == [1.0] * 3 + [0.4] * 1 + [1.0] * 2  # levels 1, 3, 2, from the top down


def test_lround_and_c_division():
    assert [kernel._lround(x) for x in (0.5, 1.5, 2.4999, -0.5)] == [1, 2, 2, -1]
    assert kernel._div(1.0, 0.0) == math.inf and math.copysign(1.0, kernel._div(0.0, 0.0)) == -1.0
    assert te.value_text(te.FLOAT, kernel._div(0.0, 0.0)) == "  -nan"  # C's printf of x86's 0/0


@pytest.mark.slow
@pytest.mark.skipif(not DL19.is_dir(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
@pytest.mark.parametrize("level", [1, 2])
def test_the_kernel_and_the_engine_agree_on_every_dl19_value(level):
    """Two implementations of each measure: the engine (vectorised over queries, `rankgate score`) and
    this kernel (trec_eval's arithmetic): the same values to 1e-9 for every query of every DL19 run."""
    from rankgate.core.engine import evaluate
    from rankgate.core.model import Catalog

    request = te.parse_request(["all_trec"])
    notes: list[str] = []
    qrels_path = DL19 / "qrels.dl19-passage.txt"
    judged, _ = te.judged_by_query(str(qrels_path), notes)
    checked = 0
    for run_path in sorted((DL19 / "runs").glob("*.trec")):
        ranked, _, _ = te.ranked_by_query(str(run_path), notes, judged)
        qids, plan, rows = te.evaluate_by_query(judged, ranked, request, level=level, complete=True)
        catalog = Catalog()
        qrels = te.read_qrels(str(qrels_path), catalog, notes)
        run, _ = te.read_run(str(run_path), catalog, notes)
        at = {name: i for i, (name, _) in enumerate(plan)}
        items = [(root, it) for root, it in request.measures() if root.name in at and root.name != "relstring"]
        scores = evaluate(qrels, run, [m for _, it in items for _, m in it], rel_level=level, missing="zero")
        order = [scores.qids.index(q) for q in qids]
        for root, it in items:
            for j, (name, m) in enumerate(it):
                ours = [row[at[root.name]][j] for row in rows]
                if root.name in ("gm_map", "gm_bpref"):  # the kernel keeps trec_eval's per-query log
                    ours = [math.exp(v) for v in ours]
                theirs = scores.values[m][order].tolist()
                if root.name in ("gm_map", "gm_bpref"):
                    theirs = [max(v, kernel.MIN_GEO_MEAN) for v in theirs]
                assert ours == pytest.approx(theirs, abs=1e-9), (run_path.name, name)
                checked += len(ours)
    assert checked > 20_000  # 6 runs x 43 queries x 97 values


C_TREC_EVAL = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")


@pytest.mark.slow
@pytest.mark.skipif(not C_TREC_EVAL, reason="no C trec_eval: put one on PATH or name it in TREC_EVAL")
def test_random_inputs_match_the_c_trec_eval(tmp_path):
    """Random qrels and runs (grades -1..3, tied scores, short and missing rankings) under trec_eval's
    options and gain parameters: every line digit for digit."""
    rng = random.Random(36)
    docs = [f"D{i}" for i in range(40)]
    for case in range(25):
        qrels, run = [], []
        for t in range(rng.randint(1, 8)):
            judged = rng.sample(docs, rng.randint(1, 25))
            qrels += [f"{t} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3]) if k else rng.choice([0, 1, 2])}\n"
                      for k, d in enumerate(judged)]
            if rng.random() < 0.85:
                run += [f"{t} Q0 {d} {k} {rng.choice([1, 2, 2.5, 3, 4])} r\n"
                        for k, d in enumerate(rng.sample(docs, rng.randint(1, 30)))]
        if not run:
            continue
        q, r = write(tmp_path / f"q{case}", "".join(qrels)), write(tmp_path / f"r{case}", "".join(run))
        options = ["-q", "-c", "-m", "all_trec", *rng.choice([[], ["-l2"], ["-J"], ["-M5"], ["-l3", "-J"]]),
                   *rng.choice([[], ["-m", "ndcg.1=0.5,2=3"], ["-m", "Rndcg.2=1,3=0.4"], ["-m", "rbp.p=0.7,2=5"]])]
        expected = subprocess.run([C_TREC_EVAL, *options, q, r], capture_output=True, text=True).stdout
        assert run_cli(*options, q, r).stdout == expected, options


@pytest.mark.skipif(not DL19.is_dir(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
def test_a_large_run_read_by_the_compiled_reader_ranks_as_the_python_reader(monkeypatch):
    """Runs from te.LARGE bytes go through trec_fast (pyarrow, judged rows only): each query's grades in
    ranking order are the same lists the plain Python reader makes (REP_LLAMA: top 1000, many ties)."""
    pytest.importorskip("pyarrow")
    notes: list[str] = []
    judged, _ = te.judged_by_query(str(DL19 / "qrels.dl19-passage.txt"), notes)
    run = str(DL19 / "runs" / "REP_LLAMA.dl19.trec")
    plain = te.ranked_by_query(run, notes, judged)
    monkeypatch.setattr(te, "LARGE", 1)
    compiled = te.ranked_by_query(run, notes, judged)
    assert te._ranked_large(run, judged) is not None
    assert compiled == plain and len(plain[0]) == 43 and sum(map(len, plain[0].values())) == 43_000
