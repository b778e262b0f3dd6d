"""compare: per-query deltas, wins/losses, newly failed/fixed, slices, rank movement; the review queue."""

import dataclasses
import datetime as dt

import numpy as np
import pytest

from rankgate.core.bundle import load_bundle
from rankgate.core.compare import compare, compare_bundle
from rankgate.core.gate import gate_bundle, run_gate
from rankgate.core.measures import Measure
from rankgate.core.model import Qrels
from rankgate.core.policy import resolve
from tests.conftest import SAMPLES, write

OPS = SAMPLES / "ops-handbook"
AS_OF = dt.date(2026, 6, 1)


@pytest.fixture(scope="module")
def ops():
    return load_bundle(benchmark=str(OPS))


def test_prf_against_plain(ops):
    cmp = compare(ops.qrels, ops.run("bm25-plain"), [ops.run("bm25-prf")], k=5, queries=ops.queries,
                  no_answer=ops.no_answer, resamples=1000)
    c = cmp.candidates[0]
    assert c.newly_failed == ["q-leaked-key"]
    assert sorted(c.newly_fixed) == ["q-breach-evidence", "q-emergency-dns"]
    rr = c.summary["RR@5"]
    assert (rr["wins"], rr["losses"], rr["ties"]) == (5, 3, 30)
    assert rr["baseline"] == pytest.approx(0.890351, abs=1e-6) and rr["candidate"] == pytest.approx(0.916667, abs=1e-6)
    assert 0 < rr["p_value"] <= 1 and rr["ci"][0] < rr["delta"] < rr["ci"][1]
    changes = [r.change for r in c.rows]
    assert changes == sorted(changes, reverse=True) and c.rows[0].query == "q-leaked-key"
    assert c.rows[0].status == "newly_failed" and c.rows[0].delta["RR@5"] == -1.0
    moves = {m.doc: m for m in c.movement("q-leaked-key")}
    key = moves["netsec-secrets-rotation-02"]
    assert (key.baseline_rank, key.candidate_rank, key.move, key.grade) == (1, 6, -5, 3)
    # no-answer queries are never averaged
    assert len(c.rows) == 38 and "q-etcd-backup" not in {r.query for r in c.rows}


def test_several_candidates_one_baseline_and_slices(ops):
    pol = resolve(dict(resamples=500), ops)
    cmp = compare_bundle(ops, pol, "bm25-plain", ["bm25-stemmed", "bm25-prf"],
                         [Measure("Success", 5), Measure("RR", 5)])
    data = cmp.as_dict(top=3)
    assert [c["candidate"] for c in data["candidates"]] == ["bm25-stemmed", "bm25-prf"]
    assert data["binding"]["status"] == "bound" and data["queries"] == 38
    stemmed, prf = data["candidates"]
    assert stemmed["newly_failed"] == [] and len(stemmed["queries"]) == 3
    crit = prf["slices"]["critical"]
    assert crit["queries"] == 9 and crit["newly_failed"] == ["q-leaked-key"]
    assert crit["measures"]["Success@5"]["baseline"] == pytest.approx(8 / 9)
    assert set(prf["slices"]) == {"backups", "critical", "dns", "gpu", "how-to", "incident", "multi-evidence", "netsec"}
    assert prf["budgets"]["candidate"]["latency_ms"]["queries"] == 40
    assert prf["coverage"]["candidate"]["judged"] == 154


def test_compare_is_deterministic(ops):
    a = compare(ops.qrels, ops.run("bm25-plain"), [ops.run("bm25-prf")], k=5, resamples=800, seed=4).as_dict()
    b = compare(ops.qrels, ops.run("bm25-plain"), [ops.run("bm25-prf")], k=5, resamples=800, seed=4).as_dict()
    assert a == b


# ---- the review queue -----------------------------------------------------------------------------

def with_judgment(qrels: Qrels, qid: str, doc: str, grade: int) -> Qrels:
    cat = qrels.catalog
    return dataclasses.replace(qrels, q=np.r_[qrels.q, cat.queries.code(qid)].astype(np.int32),
                               doc=np.r_[qrels.doc, cat.docs.code(doc)].astype(np.int32),
                               grade=np.r_[qrels.grade, grade].astype(np.int64))


TIGHT = """
k = 5
[[rules]]
measure = "R@5"
check = "floor"
min = 0.735
[[rules]]
measure = "Success@5"
check = "not_lower"
[[rules]]
check = "judged"
min = 0.812
[[rules]]
check = "no_newly_failed"
max = 1
[[rules]]
measure = "RR@5"
check = "floor"
min = 0.76
slice = "critical"
[[rules]]
measure = "P@5"
check = "no_significant_regression"
weighted = true
"""


SWAPPED = """
k = 5
baseline = "bm25-prf"
candidate = "bm25-plain"
[[rules]]
measure = "R@5"
check = "no_significant_regression"
alpha = 0.025
[[rules]]
measure = "P@5"
check = "no_significant_regression"
test = "bootstrap"
alpha = 0.03
"""


@pytest.mark.slow
@pytest.mark.parametrize("which", ["sample", "tight", "swapped"])
def test_review_queue_agrees_with_scoring_each_label_for_real(ops, tmp_path, which):
    path = OPS / "policy.toml" if which == "sample" else write(tmp_path / "p.toml", TIGHT if which == "tight"
                                                                 else SWAPPED)
    pol = resolve(dict(policy=str(path), resamples=400), ops)
    res = gate_bundle(ops, pol, as_of=AS_OF)
    queue = res.queue
    assert len(queue) == res.data["coverage"]["review_queue_total"] == 82
    before = res.data
    b, c = ops.run(pol.baseline), ops.run(pol.candidate)
    for item in queue:
        q2 = with_judgment(ops.qrels, item.query, item.doc, item.grade)
        after = run_gate(q2, b, c, pol, ops.no_answer, queries=ops.queries, as_of=AS_OF, review=False).data
        flips = tuple(n for n in before["checks"] if before["checks"][n] != after["checks"][n])
        assert item.flips == flips, item
        assert item.changes_decision == (after["decision"] != before["decision"])
        for name, eff in item.effects.items():
            key = {"Success@5": "hit_rate_at_k", "P@5": "precision_at_k", "R@5": "recall_at_k",
                   "RR@5": "mrr_at_k"}.get(name, name)
            real = (after["candidate_macro"][key] - after["baseline_macro"][key]) - \
                   (before["candidate_macro"][key] - before["baseline_macro"][key])
            assert eff == pytest.approx(real, abs=1e-9), (item, name)
    impacts = [(not x.changes_decision, not x.flips, -round(x.impact, 12)) for x in queue]
    assert impacts == sorted(impacts)
    if which != "sample":
        assert sum(bool(x.flips) for x in queue) > 10
    if which == "swapped":
        assert any("R@5_no_significant_regression" in x.flips for x in queue)


def test_a_label_that_would_flip_the_decision_comes_first(tmp_path):
    q = write(tmp_path / "qrels.trec", "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    base = write(tmp_path / "base.trec", "q1 Q0 d1 1 3 b\nq1 Q0 x 2 2 b\nq2 Q0 d2 1 3 b\nq2 Q0 y 2 2 b\n"
                                         "q3 Q0 d3 1 3 b\n")
    cand = write(tmp_path / "cand.trec", "q1 Q0 u 1 3 c\nq1 Q0 x 2 2 c\nq2 Q0 d2 1 3 c\nq2 Q0 z 2 2 c\n"
                                         "q3 Q0 d3 1 3 c\n")
    bundle = load_bundle(str(q), [f"base={base}", f"cand={cand}"])
    pol = resolve(dict(k=2, must_pass=["q1"], baseline="base", candidate="cand"), bundle)
    res = gate_bundle(bundle, pol, as_of=AS_OF)
    assert res.data["decision"] == "reject"
    first = res.queue[0]
    assert (first.query, first.doc, first.candidate_rank, first.baseline_rank) == ("q1", "u", 1, None)
    assert first.changes_decision and "must_pass_queries_hit" in first.flips and first.must_pass
    assert {(x.query, x.doc) for x in res.queue} == {("q1", "u"), ("q1", "x"), ("q2", "y"), ("q2", "z")}
    assert [x.doc for x in res.queue.for_query("q2")] == [i.doc for i in res.queue if i.query == "q2"]
    assert res.data["coverage"]["review_queue"][0]["doc"] == "u"
