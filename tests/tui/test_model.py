"""The live model (no textual): incremental re-scoring agrees with the core's full scoring and gate."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest

from rankgate.core.engine import evaluate
from rankgate.core.gate import run_gate
from rankgate.tui.loader import Inputs, load


def _core(m):
    """The core's own answer from the labels as they are now: full scoring, full gate."""
    qrels = m.labels.to_qrels()
    result = run_gate(qrels, m.runs[m.baseline].run, m.runs[m.candidate].run, m.policy, m.no_answer,
                      queries=m.queries, review=False)
    return result.data, qrels


def assert_agrees(m):
    core, qrels = _core(m)
    view = m.gate(fresh=True)
    assert view.checks == core["checks"]
    assert view.decision == core["decision"]
    for key, value in core["baseline_macro"].items():
        assert view.baseline_macro[key] == pytest.approx(value, abs=1e-12)
        assert view.candidate_macro[key] == pytest.approx(core["candidate_macro"][key], abs=1e-12)
    assert [d["why"] for d in view.check_details] == [d["why"] for d in core["check_details"]]
    assert sorted(m.qids[i] for i in view.failed) == sorted(r["query"] for r in core["failed_queries"])
    answerable = [q for q in m.qids if q not in m.no_answer]
    for rname, ri in m.runs.items():
        s = evaluate(qrels, ri.run, m.measures, rel_level=m.level, missing="zero", queries=answerable)
        pos = [m.qindex[q] for q in s.qids]
        assert sorted(pos) == sorted(np.flatnonzero(m.evaluated).tolist())
        for meas in m.measures:
            np.testing.assert_allclose(m.values[rname][meas][pos], s.values[meas], atol=1e-12)


@pytest.mark.parametrize("memory", [False, True])
def test_tiny_flips_with_one_label(tiny, memory):
    m = load(Inputs(str(tiny), memory=memory)).model
    assert m.baseline == "plain" and m.candidate == "prf" and m.k == 3
    assert not m.gate().accepted
    assert_agrees(m)
    m.labels.set("q-restore", "d-rpo", 2, "states the RPO")
    m.apply_edit("q-restore")
    assert m.gate().accepted
    assert_agrees(m)
    m.labels.close()


@pytest.mark.slow
def test_random_edits_agree_with_core(tiny):
    m = load(Inputs(str(tiny))).model
    rng = random.Random(4)
    for _ in range(40):
        qid = rng.choice(m.qids)
        qi = m.qindex[qid]
        docs = sorted({d for ri in m.runs.values() for d in ri.names(qi)} | {"d-extra"})
        doc = rng.choice(docs)
        mine = [d for d in sorted(m.labels.labels(qid)) if m.labels.mine(qid, d) is not None]
        if rng.random() < 0.25 and mine:  # remove takes away the reviewer's own judgment only
            m.labels.remove(qid, rng.choice(mine))
        else:
            m.labels.set(qid, doc, rng.choice([-1, 0, 1, 2, 3]), "r")
        m.apply_edit(qid)
        assert_agrees(m)
        m.set_pair(*rng.sample(m.run_names, 2))
        assert_agrees(m)
    m.labels.close()


@pytest.mark.slow
def test_sample_benchmark_agrees_after_edits():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2] / "sample_benchmarks"
    for name in ("seed-lab", "ops-handbook"):
        if not (root / name / "benchmark.toml").exists():
            continue
        m = load(Inputs(str(root / name), memory=True)).model
        assert_agrees(m)
        for qid in m.qids[:6]:
            item = m.first_unjudged(m.qindex[qid])
            if item:
                m.labels.set(qid, item[2], 1)
                m.apply_edit(qid)
        assert_agrees(m)


def test_a_label_for_a_new_query_joins_the_review(tiny):
    m = load(Inputs(str(tiny))).model
    n = m.nq
    m.labels.set("q-unheard", "d-x", 1)
    m.apply_edit("q-unheard")
    assert m.nq == n + 1 and m.evaluated[m.qindex["q-unheard"]]
    assert_agrees(m)
    m.labels.close()


def test_filter_and_sort(tiny):
    m = load(Inputs(str(tiny), memory=True)).model
    ids = lambda idx: [m.qids[i] for i in idx]  # noqa: E731
    assert ids(m.order())[0] == "q-restore"  # the lost must-pass query first
    assert ids(m.order("#dns")) == ["q-dns"]
    assert ids(m.order("is:must")) == ["q-restore"]
    assert ids(m.order("is:lost")) == ["q-restore"]
    assert set(ids(m.order("is:review"))) == {q for q in m.qids if m.unjudged[m.qindex[q]]}
    assert ids(m.order("NXDOMAIN")) == ["q-dns"]
    assert ids(m.order("#netsec production")) == ["q-new"]
    assert ids(m.order(sort="benchmark")) == m.qids
    assert ids(m.order("nothing-matches-this")) == []


def test_ranking_rows_and_missing(tiny):
    m = load(Inputs(str(tiny), memory=True)).model
    qi = m.qindex["q-restore"]
    rows = m.ranking(qi, "prf")
    assert [(r.doc, r.state) for r in rows[:3]] == [("d-snap", "not-relevant"), ("d-rpo", "unjudged"),
                                                     ("d-price", "not-relevant")]
    assert rows[3].doc == "d-restore" and rows[3].state == "relevant" and not rows[3].in_top_k
    assert rows[3].move == 1 - 4  # baseline rank 1, candidate rank 4
    assert m.missing(qi, "prf") == ["d-restore"] and m.missing(qi, "plain") == []
    assert m.first_unjudged(qi) == ("prf", 1, "d-rpo")


@pytest.mark.slow
def test_model_and_loader_do_not_import_textual():
    code = ("import sys; import rankgate.tui.model, rankgate.tui.loader, rankgate.tui.labels, "
            "rankgate.tui.runcache, rankgate.tui.store_backend; assert 'textual' not in sys.modules, 'textual'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_a_cancelled_load_lets_go_of_the_store(tiny):
    from rankgate.tui.loader import Cancelled

    calls = []

    def progress(what, done, total):
        calls.append(what)
        if what.startswith("reading"):
            raise Cancelled()

    with pytest.raises(Cancelled):
        load(Inputs(str(tiny)), progress)
    assert calls[0] == "opening the label store"
    m = load(Inputs(str(tiny))).model  # the store's lock was released
    assert m.nq == 6
    m.labels.close()


@pytest.mark.slow
def test_a_long_run_file_reports_its_progress_in_percent(tiny):
    import json as _json

    with open(tiny / "runs" / "stemmed.jsonl", "w", encoding="utf-8") as f:
        f.write(_json.dumps({"meta": {"name": "stemmed"}}) + "\n")
        f.write(_json.dumps({"query": "q-tls", "ranking": ["d1"]}) + "\n")
        for i in range(12_000):  # queries nobody judged: read, counted, never scored
            f.write(_json.dumps({"query": f"extra-{i}", "ranking": ["d1", "d2"]}) + "\n")
    seen = []
    m = load(Inputs(str(tiny), memory=True), lambda what, done, total: seen.append(what)).model
    pcts = [int(w.rsplit(" ", 1)[1].rstrip("%")) for w in seen if w.startswith("reading stemmed.jsonl · ")]
    assert len(pcts) >= 2 and pcts == sorted(pcts) and pcts[-1] >= 90
    assert "stemmed" in m.runs


POLICY = """
[significance]
resamples = 200
seed = 3

[[rules]]
measure = "R@3"
check = "not_lower"

[[rules]]
measure = "RR@3"
check = "floor"
min = 0.3
slice = ["netsec", "*"]

[[rules]]
measure = "nDCG@3"
check = "no_significant_regression"
alpha = 0.1

[[rules]]
check = "no_newly_failed"

[[rules]]
check = "judged"
min = 0.8

[[rules]]
check = "budget"
field = "latency_ms"
max = 100
"""


@pytest.mark.slow
def test_every_kind_of_rule_agrees_with_the_core(tiny):
    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('[gate]\n', '[gate]\npolicy = "policy.toml"\n'))
    (tiny / "policy.toml").write_text(POLICY)
    m = load(Inputs(str(tiny))).model
    names = [d["name"] for d in m.gate().check_details]
    assert "RR@3_floor[netsec]" in names and "judged" in " ".join(names) and len(m.extra) >= 1
    assert_agrees(m)
    rng = random.Random(9)
    for _ in range(15):
        qid = rng.choice(m.qids)
        qi = m.qindex[qid]
        doc = rng.choice(m.runs[m.candidate].names(qi)[:3] or ["d-x"])
        m.labels.set(qid, doc, rng.choice([0, 1, 2, 3]), "r")
        m.apply_edit(qid)
        quick = m.gate()  # significance from the last fresh gate
        fresh = m.gate(fresh=True)
        assert not fresh.stale
        assert [d["name"] for d in quick.check_details] == [d["name"] for d in fresh.check_details]
        assert_agrees(m)
    m.labels.close()


def test_significance_is_deferred_after_an_edit_then_fresh(tiny):
    manifest = tiny / "benchmark.toml"
    manifest.write_text(manifest.read_text().replace('[gate]\n', '[gate]\npolicy = "policy.toml"\n'))
    (tiny / "policy.toml").write_text(POLICY)
    m = load(Inputs(str(tiny))).model
    assert not m.gate().stale  # the loader decided once, fresh
    m.labels.set("q-dns", "d-anycast", 3, "r")
    m.apply_edit("q-dns")
    quick = m.gate()
    assert quick.stale  # the significance test is from before the edit
    fresh = m.gate(fresh=True)
    assert not fresh.stale and not m.gate().stale
    assert_agrees(m)
    m.set_pair("stemmed", "prf")
    assert not m.gate().stale  # another pair: nothing to reuse, decided now
    m.labels.close()


def test_in_order_agrees_with_sort_run():
    """RunIndex takes a run's rows as they are when `in_order` finds them in trec_eval's order (as the parsed-run
    cache keeps them), else sorts them: the same rows as `sort_run` every time."""
    import numpy as np

    from rankgate.core.model import Catalog, Run, sort_run
    from rankgate.tui.model import in_order

    rng = np.random.default_rng(3)
    taken = recognised = 0
    for trial in range(300):
        cat = Catalog()
        nq, per = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        for i in range(8):
            cat.docs.code(f"d{rng.integers(0, 50)}é" if i % 3 == 0 else f"D{i}")
        q = np.repeat(rng.permutation(nq), per).astype(np.int32)
        if trial % 3 == 0:
            q = rng.permutation(q)  # a query in several blocks
        doc = rng.integers(0, len(cat.docs), len(q)).astype(np.int32)
        score = rng.integers(0, 3, len(q)).astype(float)  # many ties
        for _ in range(nq):
            cat.queries.code(f"q{_}")
        run = Run("r", "", cat, q, doc, score, np.arange(len(q), dtype=np.int64))
        want = sort_run(run)
        got = in_order(run)
        if got is not None:
            taken += 1
            for a, b in zip(got, want):
                assert a.tolist() == b.tolist()
        # a run put in order is recognised as such
        ordered = Run("r", "", cat, *want, np.arange(len(q), dtype=np.int64))
        dup = len(set(zip(want[0].tolist(), want[1].tolist()))) < len(q)
        recognised += in_order(ordered) is not None
        assert in_order(ordered) is not None or dup or len(q) < 2
    assert taken > 10 and recognised > 100  # both ways exercised
