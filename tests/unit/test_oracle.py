"""Random qrels and runs (ties, negative grades, missing queries) against pytrec-eval-terrier."""

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from rankgate.core.engine import evaluate
from rankgate.core.measures import parse_measures
from tests.conftest import write

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {  # trec_eval name (as pytrec_eval prints it) -> ours
    "map": "AP", "ndcg": "nDCG", "ndcg_cut_5": "nDCG@5", "recip_rank": "RR", "P_5": "P@5", "recall_5": "R@5",
    "Rprec": "Rprec", "bpref": "bpref", "map_cut_5": "AP@5", "success_1": "Success@1", "num_rel_ret": "NumRelRet",
    "iprec_at_recall_0.50": "IPrec@0.5", "num_ret": "NumRet",
}
PYTREC = {"map", "ndcg", "ndcg_cut.5", "recip_rank", "P.5", "recall.5", "Rprec", "bpref", "map_cut.5", "success.1",
          "num_rel_ret", "iprec_at_recall", "num_ret"}

docs = st.sampled_from([f"d{i}" for i in range(12)])
queries = st.sampled_from(["q1", "q2", "q3", "10", "9"])
qrels_st = st.dictionaries(queries, st.dictionaries(docs, st.integers(-1, 3), min_size=1, max_size=8),
                           min_size=1, max_size=4)
run_st = st.dictionaries(queries, st.dictionaries(docs, st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.25]), min_size=1,
                                                  max_size=10), min_size=1, max_size=5)


def to_files(tmp, qrels, run):
    q = write(tmp / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    r = write(tmp / "r.trec", "".join(f"{qid} Q0 {d} 0 {s} t\n" for qid, ds in run.items() for d, s in ds.items()))
    return q, r


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=qrels_st, run=run_st, level=st.sampled_from([1, 2]))
def test_matches_pytrec_eval(tmp_path, qrels, run, level):
    from rankgate.core.formats import read_qrels, read_runs
    from rankgate.core.model import Catalog

    qf, rf = to_files(tmp_path, qrels, run)
    cat = Catalog()
    ours = evaluate(read_qrels(qf, catalog=cat), read_runs(rf, catalog=cat)[0],
                    [m for name in MEASURES.values() for m in parse_measures(name)], rel_level=level)
    # pytrec-eval-terrier crashes on a judged query with nothing relevant at the level;
    # those queries are covered by test_query_without_relevant_scores_zero instead.
    assume(all(any(g >= level for g in qrels[q].values()) for q in qrels if q in run))
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC, relevance_level=level).evaluate(run)
    assert sorted(theirs) == sorted(ours.qids)
    for i, qid in enumerate(ours.qids):
        for trec_name, name in MEASURES.items():
            (m,) = parse_measures(name)
            assert ours.values[m][i] == pytest.approx(theirs[qid][trec_name], abs=1e-9), (qid, trec_name)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=qrels_st, run=run_st)
def test_missing_queries_score_zero(tmp_path, qrels, run):
    """With missing='zero' every judged query is scored; those absent from the run score 0."""
    from rankgate.core.formats import read_qrels, read_runs
    from rankgate.core.model import Catalog

    qf, rf = to_files(tmp_path, qrels, run)
    cat = Catalog()
    (m,) = parse_measures("AP")
    s = evaluate(read_qrels(qf, catalog=cat), read_runs(rf, catalog=cat)[0], [m], missing="zero")
    assert sorted(s.qids) == sorted(qrels)
    for i, qid in enumerate(s.qids):
        if qid not in run:
            assert s.values[m][i] == 0.0


def test_query_without_relevant_scores_zero(tmp_path):
    from rankgate.core.formats import read_qrels, read_runs
    from rankgate.core.model import Catalog

    qf, rf = to_files(tmp_path, {"q1": {"d1": 1}, "q2": {"d2": 0, "d3": -1}},
                      {"q1": {"d1": 2.0}, "q2": {"d2": 2.0, "d3": 1.0}})
    cat = Catalog()
    s = evaluate(read_qrels(qf, catalog=cat), read_runs(rf, catalog=cat)[0], parse_measures("AP,nDCG,RR,P@5,R@5,bpref"))
    i = s.qids.index("q2")
    assert all(v[i] == 0.0 for v in s.values.values())
    assert all(v[s.qids.index("q1")] > 0 for v in s.values.values())
