"""`labels queue --budget N` (core/budget.py): the judgments that most reduce the uncertainty of the gate's
decision, with the decision in the worst and the best case once they are judged."""

import json

import pytest

from rankgate.core.bounds import stability
from rankgate.core.budget import budget_for
from rankgate.core.bundle import load_bundle
from rankgate.core.compare import pair
from rankgate.core.decision import decide, extra_measures, gate_measures
from rankgate.core.policy import resolve
from tests.conftest import CONFORMANCE, SAMPLES

DL19 = CONFORMANCE / "trec-dl-2019-passage"


def _judged_not_relevant(qrels, pairs):
    """The qrels with `pairs` judged 0 (what the budget assumes of them)."""
    import numpy as np

    from rankgate.core.model import Qrels

    cat = qrels.catalog
    aq = np.array([cat.queries.get(q) for q, _ in pairs], qrels.q.dtype)
    ad = np.array([cat.docs.code(d) for _, d in pairs], qrels.doc.dtype)
    return Qrels(qrels.path, cat, np.r_[qrels.q, aq], np.r_[qrels.doc, ad], np.r_[qrels.grade, np.zeros(len(pairs),
                 qrels.grade.dtype)], qrels.query_codes, qrels.format, {}, [], dict(qrels.meta))


def _certain(qrels, runs, policy) -> bool:
    ms = list(dict.fromkeys(gate_measures(policy.k) + extra_measures(policy)))
    p = pair(qrels, runs[policy.baseline], runs[policy.candidate], k=policy.k, measures=ms,
             rel_level=policy.checks.rel_level)
    return stability(p, policy, decide(policy, p), qrels.catalog.docs.names).stable


@pytest.mark.skipif(not DL19.exists(), reason=f"no DL 2019 data at {DL19} (RANKGATE_CONFORMANCE names another place)")
def test_judging_the_budget_makes_the_decision_certain():
    runs = [f"{DL19}/runs/OPEN_AI_ADA2.dl19.trec", f"{DL19}/runs/D_BERT_KD_TASB.dl19.trec"]
    bundle = load_bundle(str(DL19 / "qrels.dl19-passage.txt"), runs)
    policy = resolve({"baseline": "OPEN_AI_ADA2.dl19", "candidate": "D_BERT_KD_TASB.dl19", "k": 10}, bundle)
    b = budget_for(bundle.qrels, bundle.runs, policy, 1000)
    assert b.worst_now != b.best_now and b.certain_after and b.certain_after < b.unjudged
    assert b.worst == b.best == b.decision  # the whole budget judged (not relevant): certain
    few = budget_for(bundle.qrels, bundle.runs, policy, b.certain_after - 1)
    assert few.worst != few.best  # one fewer does not settle it ...
    enough = budget_for(bundle.qrels, bundle.runs, policy, b.certain_after)
    assert enough.worst == enough.best  # ... the number the progress line gives does
    assert _certain(_judged_not_relevant(bundle.qrels, enough.items), bundle.runs, policy)
    assert not _certain(_judged_not_relevant(bundle.qrels, few.items), bundle.runs, policy)


def test_budget_cli_lines_and_json(cli):
    bench = SAMPLES / "ops-handbook"
    code, out, _ = cli("labels", "queue", "--qrels", bench / "judgments.jsonl", "--runs",
                       bench / "runs" / "bm25-plain.jsonl", "--runs", bench / "runs" / "bm25-prf.jsonl",
                       "--queries", bench / "queries.jsonl", "--k", "5", "--baseline", "bm25-plain",
                       "--candidate", "bm25-prf", "--budget", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["items"]) <= 3 and data["budget"] == 3
    assert set(data["now"]) == {"worst", "best"} and data["progress"]
    code, _, err = cli("labels", "queue", "--qrels", bench / "judgments.jsonl", "--runs",
                       bench / "runs" / "bm25-plain.jsonl", "--budget", "3")
    assert code == 2 and "--baseline and --candidate" in err
    code, _, err = cli("labels", "queue", "--qrels", bench / "judgments.jsonl", "--runs",
                       bench / "runs" / "bm25-plain.jsonl", "--budget", "0")
    assert code == 2 and "at least 1" in err
