"""The review's score cache (tui/scorecache.py): a re-open takes the scores of the last open, scores again
only the queries whose labels changed since, and agrees with the core's full scoring every time."""

from __future__ import annotations

import os

import pytest

from rankgate.tui import scorecache
from rankgate.tui.loader import Inputs, load
from tests.tui.test_model import assert_agrees


@pytest.fixture
def cached(monkeypatch):
    monkeypatch.setattr(scorecache, "MIN_ROWS", 0)  # the tiny benchmark is cached as a large one is


def _open(path):
    m = load(Inputs(str(path))).model
    return m


def test_reopen_takes_the_scores_and_agrees(tiny, cached):
    m = _open(tiny)
    assert not m.scored_from_cache
    first = {r: {k: v.copy() for k, v in per.items()} for r, per in m.values.items()}
    m.labels.close()
    m = _open(tiny)
    assert m.scored_from_cache
    for r, per in first.items():
        for k, v in per.items():
            assert (m.values[r][k] == v).all()
    assert_agrees(m)
    m.labels.close()


@pytest.mark.slow  # drives a burst of keys or several screens: over a second
def test_unchanged_labels_are_known_by_their_digest_and_changed_ones_are_not(tiny, cached, monkeypatch):
    """A re-open with the labels of the entry compares a digest of the label arrays and names, not one
    line of text a label; labels changed since give another digest, and their queries are scored again."""
    m = _open(tiny)
    m.labels.set("q-restore", "d-rpo", 2, "states the RPO")
    m.labels.close()
    m = _open(tiny)  # the entry is rewritten with the changed query (as the app does after its first frame)
    m.labels.close()
    texts = []
    real = scorecache._label_text
    monkeypatch.setattr(scorecache, "_label_text", lambda q: texts.append(1) or real(q))
    m = _open(tiny)
    assert m.scored_from_cache and not texts  # no text made while loading: the digest matched
    assert_agrees(m)
    m.labels.set("q-restore", "d-rpo", 0, "not the RPO after all")
    m.labels.close()
    texts.clear()
    monkeypatch.setattr(scorecache, "save", lambda *a, **k: None)  # (the entry stays as it was)
    m = _open(tiny)
    assert texts and m.scored_from_cache  # another digest: the texts compared, the one query scored again
    assert m.metric(m.candidate, m.rr_m, m.qindex["q-restore"]) == 0
    assert_agrees(m)
    m.labels.close()


def test_labels_changed_since_are_scored_again(tiny, cached):
    m = _open(tiny)
    before = m.metric(m.candidate, m.rr_m, m.qindex["q-restore"])
    m.labels.set("q-restore", "d-rpo", 2, "states the RPO")  # the candidate's rank 2
    m.labels.set("q-new", "d-vpn", 1, "a first label for an unlabelled query")
    for qid in ("q-markup",):
        for doc in list(m.labels.grades(qid)):
            if m.labels.mine(qid, doc) is not None:
                m.labels.remove(qid, doc)
    m.labels.close()
    m = _open(tiny)
    assert m.scored_from_cache
    assert m.metric(m.candidate, m.rr_m, m.qindex["q-restore"]) == 0.5 != before
    assert m.evaluated[m.qindex["q-new"]]
    assert_agrees(m)
    m.labels.close()


@pytest.mark.slow
def test_a_changed_run_file_is_scored_again(tiny, cached):
    m = _open(tiny)
    m.labels.close()
    run = next((tiny / "runs").iterdir())
    run.write_text(run.read_text().replace("d-snap", "d-other"))
    os.utime(run, ns=(1, 1))
    m = _open(tiny)
    assert not m.scored_from_cache
    assert_agrees(m)
    m.labels.close()
    m = _open(tiny)
    assert m.scored_from_cache
    m.labels.close()


@pytest.mark.slow
def test_many_changed_queries_score_everything_again(tiny, cached, monkeypatch):
    m = _open(tiny)
    m.labels.set("q-restore", "d-rpo", 2, "r")
    m.labels.set("q-dns", "d-mail", 1, "r")
    m.labels.close()
    monkeypatch.setattr(scorecache, "RESCORE_AT_MOST", 1)
    m = _open(tiny)
    assert not m.scored_from_cache
    assert_agrees(m)
    m.labels.close()


@pytest.mark.slow
def test_a_torn_entry_is_ignored(tiny, cached, private_home):
    _open(tiny).labels.close()
    (entry,) = (private_home / "cache" / "scores").glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:100])
    m = _open(tiny)
    assert not m.scored_from_cache
    assert_agrees(m)
    m.labels.close()


@pytest.mark.slow
def test_scores_under_an_acl_are_not_cached(tmp_path, cached, private_home):
    """With an ACL the measures are what each query's user may see: scored at every open, never cached."""
    from tests.tui.test_permissions_app import _assert_same, _core_gate, _permissions_sample

    bench = _permissions_sample(tmp_path)
    for _ in range(2):
        m = _open(bench)
        assert m.access is not None and not m.scored_from_cache
        _assert_same(m.gate(fresh=True), _core_gate(m))
        m.labels.close()
    assert not list((private_home / "cache" / "scores").glob("*.npz"))


def test_scores_of_a_run_file_modified_a_moment_ago_are_not_kept(tiny, cached, monkeypatch):
    """As the parsed-run cache (tui/runcache.py racy): an edit in place within the clock's tick would keep the run
    file's key, so scores made from a file modified less than RACY_S ago are not kept, and are once it settles."""
    monkeypatch.setenv("RANKGATE_RACY_S", "3600")
    m = _open(tiny)
    m.labels.close()
    m = _open(tiny)
    assert not m.scored_from_cache  # (every file of the benchmark was written a moment ago)
    m.labels.close()
    monkeypatch.setenv("RANKGATE_RACY_S", "0")
    m = _open(tiny)
    m.labels.close()
    m = _open(tiny)
    assert m.scored_from_cache
    assert_agrees(m)
    m.labels.close()


def _fresh_counts(m) -> dict:
    """The counts the model takes from an entry, made afresh from its labels and runs."""
    qrels = m.labels.qrels
    ok = m._cmap[qrels.q]
    unjudged, judged, ranked = m._top_k_all(qrels, ok, ok >= 0)
    pair = m._unjudged_of((m.baseline, m.candidate), *m._judged_pairs(qrels))
    return {"unjudged": unjudged, "unjudged_pair": pair, "topk_judged": judged, "topk_ranked": ranked}


def _assert_counts_fresh(m) -> None:
    fresh = _fresh_counts(m)
    for name in ("unjudged", "unjudged_pair"):
        got = getattr(m, name)
        assert got.dtype == fresh[name].dtype and (got == fresh[name]).all(), name
    for name in ("topk_judged", "topk_ranked"):
        got = getattr(m, name)
        assert list(got) == list(fresh[name]) == list(m.runs), name
        for r in m.runs:
            assert got[r].dtype == fresh[name][r].dtype and (got[r] == fresh[name][r]).all(), (name, r)


def test_a_reopen_takes_the_counts_of_the_entry_equal_to_counting_afresh(tiny, cached):
    """The score cache keeps the review's counts too (scorecache.derived_of): a re-open with the same labels takes
    them, every array equal to counting afresh; a label made since, or another pair, counts afresh."""
    m = _open(tiny)
    assert not m.derived_from_cache
    _assert_counts_fresh(m)
    m.labels.close()
    m = _open(tiny)
    assert m.scored_from_cache and m.derived_from_cache
    _assert_counts_fresh(m)
    q, doc = "q-restore", "d-rpo"
    m.labels.set(q, doc, 2, "states the RPO")  # made after the entry: the next open sees it
    m.labels.close()
    m = _open(tiny)
    assert m.labels.grades(q)[doc] == 2 and not m.derived_from_cache  # (and the entry is written again)
    _assert_counts_fresh(m)
    m.labels.close()
    m = _open(tiny)
    assert m.derived_from_cache and m.labels.grades(q)[doc] == 2
    _assert_counts_fresh(m)
    m.labels.close()


def test_a_torn_or_foreign_counts_entry_is_counted_afresh(tiny, cached):
    m = _open(tiny)
    m.labels.close()
    (entry,) = scorecache.cache_dir().glob("*.npz")
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])  # cut short: not read, scored and counted afresh, written again
    m = _open(tiny)
    assert not m.scored_from_cache and not m.derived_from_cache
    _assert_counts_fresh(m)
    m.labels.close()
    m = _open(tiny)
    assert m.derived_from_cache
    _assert_counts_fresh(m)
    m.labels.close()
