"""The vectorised engine: every measure for every query at once, as trec_eval defines it.

A run's rows are put in trec_eval's order (per query: score descending, ties by
document id descending, byte-wise), joined to the qrels' grades, and each
measure is a handful of numpy reductions over all rows (`np.bincount` by query),
never a Python loop per query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rankgate.core.measures import Measure
from rankgate.core.model import Catalog, LeanRun, Qrels, Run, sort_run, unique

UNJUDGED = np.iinfo(np.int64).min  # the grade of a retrieved document nobody judged
MIN_GEO_MEAN = 1e-5  # trec_eval's floor for gm_map


def _remap(run: Run, catalog: Catalog) -> Run:
    """The run re-coded into another catalog (when qrels and run were read apart)."""
    if run.catalog is catalog:
        return run
    qmap = np.array([catalog.queries.code(n) for n in run.catalog.queries.names], dtype=np.int32)
    dmap = np.array([catalog.docs.code(n) for n in run.catalog.docs.names], dtype=np.int32)
    return Run(run.name, run.path, catalog, qmap[run.q] if len(run.q) else run.q,
               dmap[run.doc] if len(run.doc) else run.doc, run.score, run.where, run.format, run.meta,
               run.latency_ms, run.context_tokens, [int(qmap[c]) for c in run.query_codes])


@dataclass
class Prepared:
    """A run joined to the qrels: what every measure is computed from."""

    qids: list[str]  # evaluated queries, sorted by id
    nq: int
    qp: np.ndarray  # per row: position of its query in qids (rows grouped, in rank order)
    rank: np.ndarray  # per row: 0-based rank within its query
    grade: np.ndarray  # per row: grade, or UNJUDGED
    doc: np.ndarray  # per row: document code
    num_ret: np.ndarray  # per query
    qrels_qp: np.ndarray  # per judgment: query position (-1 when not evaluated)
    qrels_grade: np.ndarray
    rel_level: int
    compat: str = "10"  # trec_eval version whose iprec_at_recall rule to follow
    _cache: dict = field(default_factory=dict)

    def rel(self, level: int) -> np.ndarray:
        key = ("rel", level)
        if key not in self._cache:
            self._cache[key] = (self.grade != UNJUDGED) & (self.grade >= level)
        return self._cache[key]

    def num_rel(self, level: int) -> np.ndarray:
        key = ("num_rel", level)
        if key not in self._cache:
            ok = (self.qrels_qp >= 0) & (self.qrels_grade >= level)
            self._cache[key] = np.bincount(self.qrels_qp[ok], minlength=self.nq).astype(np.float64)
        return self._cache[key]

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.qp[mask], minlength=self.nq).astype(np.float64)

    def total(self, mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.qp[mask], weights=weights, minlength=self.nq)


def prepare(qrels: Qrels, run: Run, *, rel_level: int = 1, missing: str = "error",
            queries: list[str] | None = None) -> Prepared:
    """Join a run to the qrels. `missing="zero"` evaluates every qrels query (trec_eval -c)."""
    run = _remap(run, qrels.catalog)
    cat = qrels.catalog
    judged_codes = unique(qrels.q)
    if queries is not None:
        wanted = np.array(sorted({c for c in (cat.queries.get(q) for q in queries) if c is not None}), np.int64)
        codes = np.intersect1d(judged_codes, wanted)
    elif missing == "zero":
        codes = judged_codes
    else:
        codes = np.intersect1d(judged_codes, unique(run.q))
    names = cat.queries.names
    codes = sorted(codes.tolist(), key=lambda c: names[c].encode("utf-8"))
    nq = len(codes)
    pos = np.full(len(cat.queries), -1, dtype=np.int64)
    pos[np.array(codes, dtype=np.int64)] = np.arange(nq)

    keep = pos[run.q] >= 0 if len(run.q) else np.zeros(0, bool)
    qp_rows = pos[run.q[keep]]
    sub = Run(run.name, run.path, cat, run.q[keep], run.doc[keep], run.score[keep], run.where[keep])
    qp, doc, _ = sort_run(sub, qp_rows)

    n = len(qp)
    if n:
        starts = np.flatnonzero(np.r_[True, qp[1:] != qp[:-1]])
        lengths = np.diff(np.r_[starts, n])
        rank = np.arange(n) - np.repeat(starts, lengths)
    else:
        rank = np.zeros(0, np.int64)
    num_ret = np.bincount(qp, minlength=nq).astype(np.float64)

    # Join rows to grades on (query position, document).
    D = max(len(cat.docs), 1)
    qqp = pos[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
    jkeys = qqp * D + qrels.doc
    order = np.argsort(jkeys, kind="stable")
    jkeys, jgrades = jkeys[order], qrels.grade[order]
    rkeys = qp * D + doc
    idx = np.searchsorted(jkeys, rkeys)
    idx_c = np.minimum(idx, max(len(jkeys) - 1, 0))
    if len(jkeys):
        found = jkeys[idx_c] == rkeys
        grade = np.where(found, jgrades[idx_c], UNJUDGED)
    else:
        grade = np.full(n, UNJUDGED, dtype=np.int64)
    return Prepared([names[c] for c in codes], nq, qp, rank, grade, doc, num_ret, qqp, qrels.grade, rel_level)


def prepare_lean(qrels: Qrels, run: LeanRun, *, rel_level: int, missing: str,
                 queries: list[str] | None = None) -> Prepared:
    """The same Prepared as `prepare` builds, from a lean run: only rows judged for their query
    matter to any measure (num_ret counts the rest), so those are all it holds."""
    cat = qrels.catalog
    names = cat.queries.names
    judged = sorted({names[c] for c in unique(qrels.q).tolist()}, key=str.encode)
    if queries is not None:
        wanted = set(queries)
        qids = [q for q in judged if q in wanted]
    elif missing == "zero":
        qids = judged
    else:
        present = set(run.qnames)
        qids = [q for q in judged if q in present]
    qpos = {q: i for i, q in enumerate(qids)}
    nq = len(qids)
    run_pos = np.array([qpos.get(n, -1) for n in run.qnames], np.int64)
    num_ret = np.zeros(nq, np.float64)
    hit = run_pos >= 0
    num_ret[run_pos[hit]] = run.num_ret[hit]
    pos = np.full(len(cat.queries), -1, np.int64)
    if nq:
        pos[np.fromiter(map(cat.queries.codes.__getitem__, qids), np.int64, count=nq)] = np.arange(nq)
    qqp = pos[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
    D = max(len(cat.docs), 1)
    jkeys = qqp * D + qrels.doc
    order = np.argsort(jkeys, kind="stable")
    jkeys, jgrades = jkeys[order], qrels.grade[order]
    qp = run_pos[run.jq] if len(run.jq) else np.zeros(0, np.int64)
    rows = np.flatnonzero(qp >= 0)
    grade = np.full(len(rows), UNJUDGED, np.int64)
    if len(rows) and len(jkeys):
        rk = qp[rows] * D + run.jdoc[rows]
        at = np.minimum(np.searchsorted(jkeys, rk), len(jkeys) - 1)
        found = jkeys[at] == rk
        grade[found] = jgrades[at[found]]
        keep = found | (run.jrank[rows] < run.keep_top) | run.watched  # judged for another query: unjudged here
        rows, grade = rows[keep], grade[keep]
    elif not run.keep_top:
        rows, grade = rows[:0], grade[:0]
    qp, rank, doc = qp[rows], run.jrank[rows], run.jdoc[rows]
    if run.keep_top and len(run.top_q):  # the top rows nobody judged (the review queue's candidates)
        tp = run_pos[run.top_q]
        sel = np.flatnonzero(tp >= 0)
        codes = cat.docs.extend([run.top_docs[i] for i in sel.tolist()]).astype(np.int64)
        qp, rank, doc = np.r_[qp, tp[sel]], np.r_[rank, run.top_rank[sel]], np.r_[doc, codes]
        grade = np.r_[grade, np.full(len(sel), UNJUDGED, np.int64)]
    o = np.lexsort((rank, qp))  # grouped by query, in rank order
    return Prepared(qids, nq, qp[o], rank[o], grade[o], doc[o], num_ret, qqp, qrels.grade, rel_level)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a, dtype=np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


def _first_rank(p: Prepared, mask: np.ndarray) -> np.ndarray:
    """Per query: 1-based rank of the first row in mask, or 0 when none."""
    out = np.zeros(p.nq, dtype=np.float64)
    rows = np.flatnonzero(mask)
    if len(rows):
        qs, first = np.unique(p.qp[rows], return_index=True)
        out[qs] = p.rank[rows[first]] + 1
    return out


def _within(p: Prepared, k) -> np.ndarray:
    return np.ones(len(p.rank), bool) if k is None else p.rank < k


def _cum_rel(p: Prepared, rel: np.ndarray) -> np.ndarray:
    """Per row: relevant rows at or above it within its query."""
    c = np.cumsum(rel, dtype=np.int64)
    if not len(c):
        return c
    starts = np.flatnonzero(np.r_[True, p.qp[1:] != p.qp[:-1]])
    base = np.r_[0, c][starts]
    lengths = np.diff(np.r_[starts, len(c)])
    return c - np.repeat(base, lengths)


# ---- kernels: one per measure family (core/measures.py), each over all queries at once ----------

KERNELS = {}  # family name -> kernel(prepared, measure, relevance level) -> per-query values


def kernel(*families: str):
    """Register a function as the kernel of these measure families."""
    def register(fn):
        for f in families:
            KERNELS[f] = fn
        return fn
    return register


@kernel("P")
def _precision(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.count(p.rel(level) & (p.rank < m.cutoff)) / float(m.cutoff)


@kernel("R")
def _recall(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _safe_div(p.count(p.rel(level) & _within(p, m.cutoff)), p.num_rel(level))


@kernel("RR")
def _reciprocal_rank(p: Prepared, m: Measure, level: int) -> np.ndarray:
    first = _first_rank(p, p.rel(level) & _within(p, m.cutoff))
    return _safe_div(np.ones(p.nq), first)


@kernel("AP", "gmAP")
def _ap(p: Prepared, m: Measure, level: int) -> np.ndarray:
    rel = p.rel(level) & _within(p, m.cutoff)
    prec = _cum_rel(p, rel) / (p.rank + 1.0)
    return _safe_div(p.total(rel, prec[rel]), p.num_rel(level))


def _ideal_dcg(p: Prepared, k) -> np.ndarray:
    """Per query: DCG of the best possible ranking of the judged grades (positive gains only)."""
    ok = (p.qrels_qp >= 0) & (p.qrels_grade > 0)
    qq, gg = p.qrels_qp[ok], p.qrels_grade[ok].astype(np.float64)
    order = np.lexsort((-gg, qq))
    qq, gg = qq[order], gg[order]
    if not len(qq):
        return np.zeros(p.nq)
    starts = np.flatnonzero(np.r_[True, qq[1:] != qq[:-1]])
    pos = np.arange(len(qq)) - np.repeat(starts, np.diff(np.r_[starts, len(qq)]))
    keep = np.ones(len(qq), bool) if k is None else pos < k
    return np.bincount(qq[keep], weights=gg[keep] / np.log2(pos[keep] + 2.0), minlength=p.nq)


@kernel("nDCG")
def _ndcg(p: Prepared, m: Measure, level: int) -> np.ndarray:
    gain = np.where(p.grade > 0, p.grade, 0).astype(np.float64)
    if m.rel is not None:  # a level makes nDCG binary at that level
        gain = p.rel(m.rel).astype(np.float64)
        ideal = _binary_ideal(p, m.rel, m.cutoff)
    else:
        ideal = _ideal_dcg(p, m.cutoff)
    w = _within(p, m.cutoff)
    dcg = p.total(w, gain[w] / np.log2(p.rank[w] + 2.0))
    return _safe_div(dcg, ideal)


def _binary_ideal(p: Prepared, level: int, k) -> np.ndarray:
    n = p.num_rel(level)
    if k is not None:
        n = np.minimum(n, k)
    top = int(n.max()) if len(n) else 0
    disc = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(top) + 2.0))]
    return disc[n.astype(np.int64)]


@kernel("Success")
def _success(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return (p.count(p.rel(level) & (p.rank < m.cutoff)) > 0).astype(np.float64)


@kernel("Rprec")
def _rprec(p: Prepared, m: Measure, level: int) -> np.ndarray:
    nr = p.num_rel(level)
    rel = p.rel(level) & (p.rank < nr[p.qp])
    return _safe_div(p.count(rel), nr)


@kernel("bpref")
def _bpref(p: Prepared, m: Measure, level: int) -> np.ndarray:
    """trec_eval's bpref: each relevant retrieved document loses the share of judged
    non-relevant documents ranked above it, out of min(R, N)."""
    nr = p.num_rel(level)
    okq = p.qrels_qp >= 0
    judged_nonrel = (p.qrels_grade >= 0) & (p.qrels_grade < level) & okq
    nn = np.bincount(p.qrels_qp[judged_nonrel], minlength=p.nq).astype(np.float64)
    rel = p.rel(level)
    nonrel = (p.grade != UNJUDGED) & (p.grade >= 0) & (p.grade < level)
    nonrel_above = _cum_rel(p, nonrel) - nonrel  # judged non-relevant strictly above
    denom = np.minimum(nr, nn)[p.qp]
    capped = np.minimum(nonrel_above, nr[p.qp])
    frac = np.where(denom > 0, capped / np.where(denom > 0, denom, 1), 0.0)
    contrib = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
    return _safe_div(p.total(rel, contrib[rel]), nr)


@kernel("Judged")
def _judged(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.count((p.grade != UNJUDGED) & (p.rank < m.cutoff)) / float(m.cutoff)


@kernel("IPrec")
def _iprec(p: Prepared, m: Measure, level: int) -> np.ndarray:
    at = float(m.cutoff)
    rel = p.rel(level)
    rows = np.flatnonzero(rel)
    out = np.zeros(p.nq)
    if not len(rows):
        return out
    nr = p.num_rel(level)
    cum = _cum_rel(p, rel)[rows].astype(np.float64)
    qp = p.qp[rows]
    prec = cum / (p.rank[rows] + 1.0)
    # Interpolated precision: the best precision at this or any later relevant row of
    # the same query. A running max over the reversed rows, offset per query block so
    # that it restarts at each block (precision <= 1 < the offset step).
    blk = np.cumsum(np.r_[0, qp[1:] != qp[:-1]])
    off = 2.0 * (blk[-1] - blk)
    acc = np.maximum.accumulate((prec + off)[::-1])[::-1] - off
    # trec_eval 10 asks for round(level * R) relevant documents (9.0.7: recall >= level).
    # The number of relevant documents a recall level asks for: trec_eval 10 rounds
    # (lround), 9.0.7 added 0.9 and truncated.
    need = np.floor(at * nr[qp] + (0.9 if p.compat == "9" else 0.5))
    hit = cum >= need
    sel = np.flatnonzero(hit)
    if len(sel):
        qs, first = np.unique(qp[sel], return_index=True)
        out[qs] = acc[sel[first]]
    return out


@kernel("NumRet")
def _num_ret(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.num_ret.copy() if m.cutoff is None else np.minimum(p.num_ret, m.cutoff)


@kernel("NumRel")
def _num_rel(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.num_rel(level).copy()


@kernel("NumRelRet")
def _num_rel_ret(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.count(p.rel(level) & _within(p, m.cutoff))


def per_query(p: Prepared, m: Measure) -> np.ndarray:
    """One measure's value for every evaluated query."""
    compute = KERNELS.get(m.family)
    if compute is None:
        raise ValueError(f"unknown measure family {m.family}")
    return compute(p, m, p.rel_level if m.rel is None else m.rel)


def summarise(m: Measure, values: np.ndarray) -> float:
    """trec_eval's summary: the mean, the sum or the geometric mean, as the measure's family says."""
    if not len(values):
        return 0.0
    if m.summed:
        return float(values.sum())
    if m.geometric:
        return float(math.exp(np.log(np.maximum(values, MIN_GEO_MEAN)).mean()))
    return float(values.mean())


@dataclass
class Scores:
    """Per-query values and summaries of some measures for one run."""

    run: str
    qids: list[str]
    values: dict[Measure, np.ndarray]
    prepared: Prepared | None = None

    def summary(self) -> dict[Measure, float]:
        return {m: summarise(m, v) for m, v in self.values.items()}

    def of(self, qid: str) -> dict[Measure, float]:
        i = self.qids.index(qid)
        return {m: float(v[i]) for m, v in self.values.items()}


def evaluate(qrels: Qrels, run: Run | LeanRun, measures: list[Measure], *, rel_level: int = 1,
             missing: str = "error", queries: list[str] | None = None, compat: str = "10") -> Scores:
    """Score one run. `missing="zero"` scores queries absent from the run as 0 (trec_eval -c).

    `compat="9"` follows trec_eval 9.0.7's interpolated precision (the only measure that differs).
    """
    if isinstance(run, LeanRun):
        p = prepare_lean(qrels, run, rel_level=rel_level, missing=missing, queries=queries)
    else:
        p = prepare(qrels, run, rel_level=rel_level, missing=missing, queries=queries)
    p.compat = compat
    return Scores(run.name, p.qids, {m: per_query(p, m) for m in measures}, p)
