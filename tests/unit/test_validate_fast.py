"""core.validate's duplicate and short-ranking checks against the per-row / per-query forms they replaced."""

import numpy as np
import pytest

from rankgate.core.model import Catalog, Run
from rankgate.core.validate import _duplicates, short_rankings


def _run(rng, queries: int, depth: int, docs: int, repeats: int = 0, empty: int = 0) -> Run:
    catalog = Catalog()
    for i in range(queries + empty):
        catalog.queries.code(f"q{i}")
    for i in range(docs):
        catalog.docs.code(f"d{i}")
    q, d = [], []
    for i in rng.permutation(queries).tolist():  # queries in a scattered order, a random depth each
        n = int(rng.integers(0, depth + 1))
        q += [i] * n
        d += rng.choice(docs, n, replace=False).tolist()
    for _ in range(repeats):  # a document ranked twice for a query, somewhere in the file
        row = int(rng.integers(0, len(q)))
        at = int(rng.integers(0, len(q) + 1))
        q.insert(at, q[row])
        d.insert(at, d[row])
    n = len(q)
    codes = list(dict.fromkeys(q)) + list(range(queries, queries + empty))  # declared queries with no rows too
    return Run("r", "r.trec", catalog, np.array(q, np.int32), np.array(d, np.int32), rng.random(n),
               np.arange(1, n + 1, dtype=np.int64), query_codes=codes)


def _duplicates_by_argsort(run: Run) -> list[int]:
    """The rows the former check named: a stable argsort of (query, document) keys, every repeat."""
    keys = run.q.astype(np.int64) * max(len(run.catalog.docs), 1) + run.doc
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    return np.sort(order[np.flatnonzero(sk[1:] == sk[:-1]) + 1]).tolist()


def _short_by_query(run: Run, k: int) -> list[tuple[str, int]]:
    counts = np.bincount(run.q, minlength=len(run.catalog.queries))
    qn = run.catalog.queries.names
    return [(qn[c], int(counts[c])) for c in run.query_codes if counts[c] < k]


@pytest.mark.parametrize("seed", range(6))
def test_duplicates_found_as_by_argsort(seed):
    rng = np.random.default_rng(seed)
    clean = _run(rng, 200, 30, 500)
    assert _duplicates_by_argsort(clean) == [] and _duplicates(clean) == []
    dirty = _run(rng, 200, 30, 500, repeats=1 + seed)
    rows = _duplicates_by_argsort(dirty)
    got = _duplicates(dirty)
    assert rows and got and all(p.rule == "duplicate-ranked" for p in got)
    first = rows[0]  # the first repeat in file order is the one named first
    qid, doc = dirty.catalog.queries.names[dirty.q[first]], dirty.catalog.docs.names[dirty.doc[first]]
    assert f"document '{doc}' twice for query '{qid}'" in got[0].what


@pytest.mark.parametrize("k", [1, 10, 25, 31])
def test_short_rankings_as_per_query(k):
    rng = np.random.default_rng(k)
    run = _run(rng, 300, 30, 400, empty=3)
    got = short_rankings(run, k)
    assert got == _short_by_query(run, k)
    assert all(type(n) is int for _, n in got)
    if k > 1:
        assert got  # some queries are short (and the 3 empty ones always are)
