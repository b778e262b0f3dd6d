"""compare: per-query deltas, wins/losses, newly failed/fixed, slices, rank movement; the review queue."""

import dataclasses
import datetime as dt
import math

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


# ---- movements and the gate's per-query rows, from arrays: the same as the loops they replace ----------------

def _random_pair(seed: int, lean: bool, tmp_path):
    """Qrels and two runs sharing one catalog, doc IDs interned in a shuffled order (so code order is not name
    order), relevant documents that neither run ranks (their ID breaks the tie), some ranked by one run only.
    `lean`: the runs read as the CLI reads large ones (core/formats/trec_fast.py), else as whole runs."""
    from rankgate.core.formats import read_qrels, read_runs

    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in rng.permutation(200)]
    qrels_lines, runs = [], {"base": [], "cand": []}
    for q in range(25):
        judged = rng.choice(docs, size=int(rng.integers(0, 30)), replace=False)
        qrels_lines += [f"q{q} 0 {d} {int(rng.choice([0, 1, 2, 3]))}" for d in judged]
        for name in runs:
            ranked = rng.choice(docs, size=int(rng.integers(0, 40)), replace=False)
            runs[name] += [f"q{q} Q0 {d} {r + 1} {100 - r} {name}" for r, d in enumerate(ranked)]
    qp = write(tmp_path / "qrels.txt", "\n".join(qrels_lines) + "\n")
    paths = {n: write(tmp_path / f"{n}.txt", "\n".join(lines) + "\n") for n, lines in runs.items()}
    qrels = read_qrels(str(qp))
    if lean:
        from rankgate.core.formats import trec_fast

        if not trec_fast.available():
            pytest.skip("the lean reader needs pyarrow")
        return qrels, [trec_fast.read_lean_run(str(paths[n]), n, qrels) for n in runs]
    return qrels, [read_runs(f"{n}={paths[n]}", catalog=qrels.catalog)[0] for n in runs]


def _movements_by_loop(p, qrels):
    """What compare.movements gave before it worked on arrays: a dict per run, a sort per query."""
    from rankgate.core.compare import DocMove

    level = p.rel_level
    ranks = {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        rows = np.flatnonzero(pr.rel(level))
        ranks[role] = {(q, d): r + 1 for q, d, r in zip(pr.qp[rows].tolist(), pr.doc[rows].tolist(),
                                                        pr.rank[rows].tolist())}
    pb = p.prepared["baseline"]
    ok = (pb.qrels_qp >= 0) & (pb.qrels_grade >= level)
    out = {q: [] for q in p.qids}
    for q, d, g in zip(pb.qrels_qp[ok].tolist(), qrels.doc[ok].tolist(), pb.qrels_grade[ok].tolist()):
        out[p.qids[q]].append(DocMove(qrels.catalog.docs.names[d], int(g), ranks["baseline"].get((q, d)),
                                      ranks["candidate"].get((q, d))))
    for moves in out.values():
        moves.sort(key=lambda x: (x.candidate_rank or 1 << 60, x.baseline_rank or 1 << 60, x.doc))
    return out


@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_movements_from_arrays_are_the_loops(seed, lean, tmp_path):
    from rankgate.core.compare import movements, pair

    qrels, (base, cand) = _random_pair(seed, lean, tmp_path)
    for level in (1, 2):
        p = pair(qrels, base, cand, k=5, measures=[Measure("RR", 5)], rel_level=level)
        got, want = movements(p, qrels), _movements_by_loop(p, qrels)
        assert list(got) == list(want) and dict(got) == want
        assert any(m.baseline_rank is None and m.candidate_rank is None for ms in want.values() for m in ms[1:])
        for q in want:  # the same dicts, keys in the same order (the JSON's text)
            assert [list(d.items()) for d in got.as_dicts(q)] == [list(m.as_dict().items()) for m in want[q]]
        assert "no such query" not in got and got.get("no such query", []) == []


def _query_rows_by_loop(scores, qrels, k, level, extra):
    """What gate.query_rows gave before it worked on arrays: a list and a set per query."""
    from rankgate.core.decision import gate_measures

    p, dn = scores.prepared, qrels.catalog.docs.names
    found = [[] for _ in range(p.nq)]
    rows = np.flatnonzero(p.rel(level) & (p.rank < k))
    for q, d in zip(p.qp[rows].tolist(), p.doc[rows].tolist()):
        found[q].append(dn[d])
    relevant = [set() for _ in range(p.nq)]
    ok = (p.qrels_qp >= 0) & (p.qrels_grade >= level)
    for q, d in zip(p.qrels_qp[ok].tolist(), qrels.doc[ok].tolist()):
        relevant[q].add(dn[d])
    v = scores.values
    hit, prec, rec, rr = (v[m] for m in gate_measures(k))
    out = []
    for i, qid in enumerate(scores.qids):
        row = {"query": qid, "hit_at_k": bool(hit[i]), "precision_at_k": float(prec[i]),
               "recall_at_k": float(rec[i]), "reciprocal_rank": float(rr[i]), "found": found[i],
               "missing": sorted(relevant[i] - set(found[i]))}
        if extra:
            row["measures"] = {m.name: float(v[m][i]) for m in extra}
        out.append(row)
    return out


@pytest.mark.parametrize("lean", [False, True])
def test_gate_query_rows_from_arrays_are_the_loops(lean, tmp_path):
    from rankgate.core.gate import query_rows, score_run
    from rankgate.core.validate import Checks

    qrels, (run, _) = _random_pair(7, lean, tmp_path)
    for level, extra in ((1, []), (2, [Measure("AP"), Measure("nDCG", 10)])):
        s = score_run(qrels, run, 5, Checks(rel_level=level), extra, qrels.query_ids)
        got = query_rows(s, qrels, 5, level, extra)
        assert got == _query_rows_by_loop(s, qrels, 5, level, extra)
        assert any(r["found"] for r in got) and any(len(r["missing"]) > 1 for r in got)
        for which in ([], [0], [3, 1, 7], list(range(len(got)))[::-1], [i for i, r in enumerate(got) if r["missing"]]):
            assert query_rows(s, qrels, 5, level, extra, which=which) == [got[i] for i in which]


def test_the_gates_failed_queries_and_its_rows_when_asked(ops):
    """The JSON's failed_queries are made alone (the queries missed at k); `rows` (for --junit) when asked for."""
    from rankgate.core.decision import extra_measures
    from rankgate.core.engine import Scores
    from rankgate.core.gate import query_rows

    pol = resolve(dict(baseline="bm25-plain", candidate="bm25-prf", resamples=200), ops)
    res = gate_bundle(ops, pol, as_of=AS_OF)
    assert res._rows is None
    p = res.paired
    every = query_rows(Scores("bm25-prf", p.qids, p.candidate, p.prepared["candidate"]), ops.qrels, pol.k,
                       pol.checks.rel_level, extra_measures(pol))
    assert extra_measures(pol) and res.rows == every and res._rows is res.rows
    assert res.data["failed_queries"] == [r for r in every if not r["hit_at_k"]] and res.data["failed_queries"]


# ---- compare's JSON written from its rows (Laid): the text json.dumps gives of the dicts -------------------

def _json_both_ways(cmp, top=None):
    import json

    from rankgate.core import jsontext

    for indent in (2, 4):
        want = json.dumps(cmp.as_dict(top), indent=indent)
        assert jsontext.dumps(cmp.as_dict(top, laid=True), indent) == want
        assert "".join(jsontext.pieces(cmp.as_dict(top, laid=True), indent)) == want


def test_laid_json_is_the_dicts_json_on_a_sample(ops):
    """Tags, slices, no-answer queries, two candidates, --top."""
    pol = resolve(dict(resamples=200), ops)
    cmp = compare_bundle(ops, pol, "bm25-plain", ["bm25-stemmed", "bm25-prf"])
    assert any(r.tags for r in cmp.candidates[0].rows)
    for top in (None, 0, 1, 3):
        _json_both_ways(cmp, top)


@pytest.mark.parametrize("lean", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_laid_json_is_the_dicts_json_on_random_runs(seed, lean, tmp_path):
    """Queries without relevant documents (no movements), documents one run or neither ranks (null ranks)."""
    qrels, (base, cand) = _random_pair(seed, lean, tmp_path)
    empty = []
    for level in (1, 2, 3):
        cmp = compare(qrels, base, [cand], k=5, rel_level=level, resamples=100)
        empty += [r.query for r in cmp.candidates[0].rows if not cmp.candidates[0].movement(r.query)]
        _json_both_ways(cmp)
    assert empty


def test_laid_json_with_odd_values(ops):
    """Values json writes its own way (NaN, infinity, -0.0, ints), IDs to escape (quotes, %, non-ASCII, controls),
    a measure name with a %, rows of another shape, and movements held as DocMove lists (not Movements)."""
    from rankgate.core.compare import DocMove, QueryChange

    cmp = compare(ops.qrels, ops.run("bm25-plain"), [ops.run("bm25-prf")], k=5, resamples=100)
    c = cmp.candidates[0]
    odd = ['q "1" %s', "é\u2028\x00", "%%d"]
    rows = [QueryChange(odd[0], ("t%s", "ü"), 2.0, {"P%@5": math.nan, "x": -0.0}, {"P%@5": math.inf, "x": 3},
                        "hit", 1e300),
            QueryChange(odd[1], (), 1, {"P%@5": 0.1, "x": 2}, {"P%@5": -math.inf, "x": 0.30000000000000004},
                        "newly_failed", 0.0),
            QueryChange(odd[2], (), 0.5, {"P%@5": 1.0, "x": 1.0}, {"P%@5": 1.0, "x": 1.0}, "still_missed", 0.0)]
    moves = {odd[0]: [DocMove('d "%s"', 3, None, 7), DocMove("ü\x1b", 1, 2, None)], odd[2]: []}
    for m in (moves, c.moves):
        for r in (rows, rows[1:], c.rows[:4] + rows):  # (the last: rows of two shapes, written as dicts)
            _json_both_ways(dataclasses.replace(cmp, candidates=[dataclasses.replace(c, rows=r, moves=m)]))


def test_movements_names_from_the_catalogs_arrow_strings(tmp_path, monkeypatch):
    """A catalog a fast reader filled keeps its names as Arrow strings: movements takes its documents' from there
    (not every name made a Python string), the same names; and from the Python list when it is made."""
    from rankgate.core.compare import movements, pair
    from rankgate.core.formats import trec_fast

    if not trec_fast.available():
        pytest.skip("the fast reader needs pyarrow")
    monkeypatch.setattr(trec_fast, "MIN_BYTES", 0)  # these small qrels through the fast reader too
    qrels, (base, cand) = _random_pair(5, True, tmp_path)
    docs = qrels.catalog.docs
    assert docs.arrow is not None and docs._lazy is not None
    p = pair(qrels, base, cand, k=5, measures=[Measure("RR", 5)])
    got = movements(p, qrels)
    assert docs._lazy is not None  # no name made for every document
    assert dict(got) == dict(movements(p, qrels)) == _movements_by_loop(p, qrels)  # (the loop asks for every name)
    assert docs._lazy is None and dict(movements(p, qrels)) == dict(got)


@pytest.mark.parametrize("seed", range(3))
def test_movements_of_runs_read_by_pair_need_no_document_codes(tmp_path, monkeypatch, seed):
    """Runs read by pair (score's and compare's lean read) carry each row's judgment: movements ranks the relevant
    documents by judgment and names them from the qrels reader's IDs, without making the qrels' document codes;
    the same movements as the loop's (a document ranked twice: its last row), at each level."""
    from rankgate.core.compare import movements, pair
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats import trec_fast
    from rankgate.core.model import is_later

    if not trec_fast.available():
        pytest.skip("the fast reader needs pyarrow")
    monkeypatch.setattr(trec_fast, "MIN_BYTES", 0)  # these small qrels through the fast reader too
    _random_pair(seed, False, tmp_path)  # (its files)
    relevant = {tuple(x.split()[::2]) for x in (tmp_path / "qrels.txt").read_text().splitlines()
                if int(x.split()[3]) >= 2}  # (query, document)
    for name in ("base", "cand"):  # a relevant document ranked twice, lower the second time
        lines = (tmp_path / f"{name}.txt").read_text().splitlines()
        first = next(x for x in lines if tuple(x.split()[:3:2]) in relevant)
        lines.append(" ".join(first.split()[:3] + ["99", "-5", name]))
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n")
    for level in (1, 2):
        trec_fast._LOOKUP.clear()
        qrels = read_qrels(str(tmp_path / "qrels.txt"))
        base, cand = (trec_fast.read_lean_run(str(tmp_path / f"{n}.txt"), n, qrels, by_pair=True)
                      for n in ("base", "cand"))
        p = pair(qrels, base, cand, k=5, measures=[Measure("RR", 5)], rel_level=level)
        assert is_later(qrels, "doc")
        got = movements(p, qrels)
        assert is_later(qrels, "doc")  # no document code made
        assert list(got) == p.qids and dict(got) == _movements_by_loop(p, qrels)
        assert any(m.baseline_rank is None and m.candidate_rank is None for ms in got.values() for m in ms[1:])
    trec_fast._LOOKUP.clear()
