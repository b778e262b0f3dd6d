"""The vectorised engine: every measure for every query at once, as trec_eval defines it.

A run's rows are put in trec_eval's order (per query: score descending, ties by
document id descending, byte-wise), joined to the qrels' grades, and each
measure is a handful of numpy reductions over all rows (`np.bincount` by query),
never a Python loop per query.
"""

from __future__ import annotations

import math
from dataclasses import field
from itertools import repeat
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.measures import ByMeasure, Measure
from rankgate.core.model import Catalog, LeanRun, Later, Qrels, Run, field_token, is_later, later, sort_run, unique

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
class Prepared(Later):
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

    def stretches(self) -> tuple[np.ndarray, np.ndarray]:
        """(first row, rows) of each stretch of rows of one query (made once: every kernel that counts
        within queries asks)."""
        if "stretches" not in self._cache:
            n = len(self.qp)
            starts = np.flatnonzero(np.r_[True, self.qp[1:] != self.qp[:-1]]) if n else np.zeros(0, np.int64)
            self._cache["stretches"] = starts, np.diff(np.r_[starts, n])
        return self._cache["stretches"]

    def count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.qp[mask], minlength=self.nq).astype(np.float64)

    def total(self, mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.qp[mask], weights=weights, minlength=self.nq)


def prepare(qrels: Qrels, run: Run, *, rel_level: int = 1, missing: str = "error",
            queries: list[str] | None = None, depth: int | None = None, judged_only: bool = False,
            compat: str = "10") -> Prepared:
    """Join a run to the qrels. `missing="zero"` evaluates every qrels query (trec_eval -c); `depth`
    keeps each ranking's top N (trec_eval -M); `judged_only` drops the documents nobody judged and ranks
    the rest again (trec_eval -J); `compat="9"` reads scores as trec_eval 9.0.7 did, in single precision."""
    run = _remap(run, qrels.catalog)
    cat = qrels.catalog
    judged_codes = unique(qrels.q)
    if queries is not None:
        wanted = np.array(sorted({c for c in (cat.queries.get(q) for q in queries) if c is not None}), np.int64)
        codes = np.intersect1d(judged_codes, wanted, assume_unique=True)  # both sorted and distinct
    elif missing == "zero":
        codes = judged_codes
    else:
        codes = np.intersect1d(judged_codes, unique(run.q), assume_unique=True)
    names = cat.queries.names
    codes = sorted(codes.tolist(), key=lambda c: names[c].encode("utf-8"))
    nq = len(codes)
    pos = np.full(len(cat.queries), -1, dtype=np.int64)
    pos[np.array(codes, dtype=np.int64)] = np.arange(nq)

    keep = pos[run.q] >= 0 if len(run.q) else np.zeros(0, bool)
    qp_rows = pos[run.q[keep]]
    score = run.score[keep]
    if compat == "9":  # 9.0.7 kept each score as a C float: 36.000012 and 36.000011 tie there
        score = score.astype(np.float32).astype(np.float64)
    sub = Run(run.name, run.path, cat, run.q[keep], run.doc[keep], score, run.where[keep])
    qp, doc, _ = sort_run(sub, qp_rows)
    rank = _ranks(qp)

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
        grade = np.full(len(qp), UNJUDGED, dtype=np.int64)
    qp, rank, grade, doc = _cut(qp, rank, grade, doc, depth, judged_only)
    num_ret = np.bincount(qp, minlength=nq).astype(np.float64)
    return Prepared([names[c] for c in codes], nq, qp, rank, grade, doc, num_ret, qqp, qrels.grade, rel_level,
                    compat)


def _order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """np.lexsort((minor, major)) of two integer arrays (stable: rows alike keep their order), by one
    sort of (major, minor, row) packed in 63 bits where they fit (1M rows: 5x faster), else lexsort."""
    n = len(major)
    if not n:
        return np.zeros(0, np.int64)
    lo_major, lo_minor = int(major.min()), int(minor.min())
    span_major, span_minor = int(major.max()) - lo_major, int(minor.max()) - lo_minor
    rb, mb = (n - 1).bit_length(), span_minor.bit_length()
    if rb + mb + span_major.bit_length() > 63:
        return np.lexsort((minor, major))
    key = major.astype(np.int64)
    key -= lo_major
    key <<= mb + rb
    low = minor.astype(np.int64)
    low -= lo_minor
    low <<= rb
    key |= low
    key |= np.arange(n, dtype=np.int64)
    key.sort()
    key &= (1 << rb) - 1
    return key


def _stretches_order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """_order(major, minor), in linear time where the rows come as stretches of one `major` each, no two of
    one `major`, `minor` rising within each (a lean run's judged rows: a query's rows together, in rank
    order): the stretches put in order of their `major`, each kept whole (1M rows: 0.07 -> 0.01 s)."""
    n = len(major)
    if n < 2:
        return _order(major, minor)
    change = major[1:] != major[:-1]
    if not (change | (minor[1:] > minor[:-1])).all():
        return _order(major, minor)
    starts = np.flatnonzero(change)
    starts += 1
    starts = np.r_[0, starts]
    keys = major[starts]
    o = np.argsort(keys, kind="stable")
    if len(keys) > 1 and not (keys[o][1:] > keys[o][:-1]).all():
        return _order(major, minor)  # a major in two stretches
    lengths = np.diff(np.r_[starts, n])[o]
    shift = starts[o]
    shift[1:] -= np.cumsum(lengths)[:-1]
    out = np.repeat(shift, lengths)
    out += np.arange(n)
    return out


def _ranks(qp: np.ndarray) -> np.ndarray:
    """0-based rank of each row within its query (rows grouped by query, in rank order)."""
    n = len(qp)
    if not n:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, qp[1:] != qp[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def _cut(qp, rank, grade, doc, depth, judged_only):
    """trec_eval's -M (each ranking's top `depth` rows) and -J (only judged rows, ranked again)."""
    if depth is not None:
        keep = rank < depth
        qp, rank, grade, doc = qp[keep], rank[keep], grade[keep], doc[keep]
    if judged_only:
        keep = (grade != UNJUDGED) & (grade >= 0)
        qp, grade, doc = qp[keep], grade[keep], doc[keep]
        rank = _ranks(qp)
    return qp, rank, grade, doc


BY_DOC_AT_MOST = 16  # judgments of one document, at most, for _grades to look a row's up among its document's


def _by_doc(doc: np.ndarray) -> np.ndarray:
    """The qrels' rows in document order (file order within each), made once for the runs looked up in them."""
    if _BY_DOC and _BY_DOC[0] is doc:
        return _BY_DOC[1]
    order = np.argsort(doc, kind="stable")
    _BY_DOC[:] = [doc, order]
    return order


_BY_DOC: list = []


def _grades(qrels: Qrels, qqp: np.ndarray, qp: np.ndarray, rows: np.ndarray, run: LeanRun):
    """(rows, their grades): the lean run's rows `rows` (positions `qp`) looked up among the qrels' pairs
    (positions `qqp`): each among its document's judgments (few), the first of them for its query, as a
    sorted search of every pair finds it (_grades_sorted); a row judged for another query only is dropped (it
    is unjudged here), unless it is among the top rows kept or watched."""
    D = max(len(qrels.catalog.docs), 1)
    counts = np.bincount(qrels.doc, minlength=D) if len(qrels.doc) else np.zeros(D, np.int64)
    if not len(rows) or not len(qrels.doc) or int(counts.max()) > BY_DOC_AT_MOST:
        return _grades_sorted(qrels, qqp, qp, rows, run)
    order = _by_doc(qrels.doc)
    start = np.zeros(D + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    d = run.jdoc[rows]
    first, left = start[d], counts[d]
    want = qp[rows]
    grade = np.full(len(rows), UNJUDGED, np.int64)
    found = np.zeros(len(rows), bool)
    todo = np.flatnonzero(left > 0)
    k = 0
    while len(todo):  # the k-th judgment of each row's document
        e = order[first[todo] + k]
        hit = qqp[e] == want[todo]
        grade[todo[hit]] = qrels.grade[e[hit]]
        found[todo[hit]] = True
        k += 1
        todo = todo[~hit]
        todo = todo[left[todo] > k]
    keep = found | (run.jrank[rows] < run.keep_top) | run.watched  # judged for another query: unjudged here
    return rows[keep], grade[keep]


def _grades_sorted(qrels: Qrels, qqp: np.ndarray, qp: np.ndarray, rows: np.ndarray, run: LeanRun):
    """_grades by a sorted search of every (query, document) pair: the first pair in file order that is the row's."""
    D = max(len(qrels.catalog.docs), 1)
    jkeys = qqp * D + qrels.doc
    order = np.argsort(jkeys, kind="stable")
    jkeys, jgrades = jkeys[order], qrels.grade[order]
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
    return rows, grade


def prepare_lean(qrels: Qrels, run: LeanRun, *, rel_level: int, missing: str,
                 queries: list[str] | None = None, depth: int | None = None, judged_only: bool = False,
                 compat: str = "10") -> Prepared:
    """The same Prepared as `prepare` builds, from a lean run: only rows judged for their query
    matter to any measure (num_ret counts the rest), so those are all it holds."""
    cat = qrels.catalog
    names = cat.queries.names
    judged_codes = np.flatnonzero(np.bincount(qrels.q)) if len(qrels.q) else np.zeros(0, np.int64)  # (no sort)
    codes = judged_codes.tolist()
    jnames = list(map(names.__getitem__, codes))
    # the queries in byte order, each with its code (no name -> code lookup: 100k queries, 0.04 s); ASCII
    # names sort in that order as they are (no bytes made of each)
    order = sorted(range(len(jnames)), key=jnames.__getitem__ if "".join(jnames).isascii()
                   else lambda i: jnames[i].encode())
    if queries is not None or missing != "zero":
        wanted = set(queries) if queries is not None else set(run.qnames)
        order = [i for i in order if jnames[i] in wanted]
    qids = [jnames[i] for i in order]
    qpos = dict(zip(qids, range(len(qids))))
    nq = len(qids)
    run_pos = np.fromiter(map(qpos.get, run.qnames, repeat(-1)), np.int64, len(run.qnames))
    num_ret = np.zeros(nq, np.float64)
    hit = run_pos >= 0
    num_ret[run_pos[hit]] = run.num_ret[hit]
    pos = np.full(len(cat.queries), -1, np.int64)
    if nq:
        pos[np.array([codes[i] for i in order], np.int64)] = np.arange(nq)
    qqp = pos[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
    qp = run_pos[run.jq] if len(run.jq) else np.zeros(0, np.int64)
    every = not len(qp) or bool(qp.min() >= 0)  # (every query the run ranks is scored: the usual case)
    rows = None if every else np.flatnonzero(qp >= 0)
    if not run.keep_top:  # grouped by query, in rank order, now: the lookups below stay near each other
        rows = _stretches_order(qp, run.jrank) if every else rows[_stretches_order(qp[rows], run.jrank[rows])]
    elif every:
        rows = np.arange(len(qp))
    entries = run.entries_of
    if entries is not None and entries[0] is qrels and entries[1] is qrels.q and entries[2] is field_token(qrels, "doc") \
            and not run.watched and len(run.jentry) == len(run.jq):
        # read by pair (trec_fast): each row holds its pair's row of these qrels, judged once; no search
        grade = qrels.grade[run.jentry[rows]].astype(np.int64, copy=False)
        by_entry = not run.keep_top and depth is None and not judged_only  # (else rows are added or cut below)
    else:
        rows, grade = _grades(qrels, qqp, qp, rows, run)
        by_entry = False
    qp, rank = qp[rows], run.jrank[rows]
    # the rows' document codes: made when a measure first asks, if the run's are still to be made (trec_fast
    # leaves the qrels' document codes to be made when asked for, and `score`'s measures never ask)
    doc = None if is_later(run, "jdoc") and not run.keep_top and depth is None and not judged_only \
        else run.jdoc[rows]
    if run.keep_top and len(run.top_q):  # the top rows nobody judged (the review queue's candidates)
        tp = run_pos[run.top_q]
        sel = np.flatnonzero(tp >= 0)
        codes = cat.docs.extend_looked_up([run.top_docs[i] for i in sel.tolist()]).astype(np.int64)
        qp, rank, doc = np.r_[qp, tp[sel]], np.r_[rank, run.top_rank[sel]], np.r_[doc, codes]
        grade = np.r_[grade, np.full(len(sel), UNJUDGED, np.int64)]
    if run.keep_top:  # (else they are already)
        o = _stretches_order(qp, rank)  # grouped by query, in rank order (no unjudged top row: often already)
        qp, rank, grade, doc = qp[o], rank[o], grade[o], doc[o]
    if depth is not None:
        num_ret = np.minimum(num_ret, depth)
    if depth is not None or judged_only:
        qp, rank, grade, doc = _cut(qp, rank, grade, doc, depth, judged_only)
        if judged_only:
            num_ret = np.bincount(qp, minlength=nq).astype(np.float64)
    p = Prepared(qids, nq, qp, rank, grade, doc, num_ret, qqp, qrels.grade, rel_level, compat)
    if doc is None:
        later(p, "doc", lambda: run.jdoc[rows])
    if by_entry:  # each row's judgment is these qrels' row run.jentry[rows] (entries_of)
        p._cache["entries"] = (qrels, run.jentry, rows)
    return p


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
    starts, lengths = p.stretches()
    base = np.r_[0, c][starts]
    return c - np.repeat(base, lengths)


def _cum_rel_at(p: Prepared, rel: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """_cum_rel(p, rel)[rows], worked out at those rows only (rows: ascending)."""
    c = np.cumsum(rel, dtype=np.int64)
    if not len(rows):
        return c[:0]
    starts, _ = p.stretches()
    before = np.r_[0, c][starts]  # per stretch: the rows of `rel` above it
    return c[rows] - before[np.searchsorted(starts, rows, "right") - 1]


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
    rel = p.rel(level) if m.cutoff is None else p.rel(level) & (p.rank < m.cutoff)
    rows = np.flatnonzero(rel)  # (the precision at each relevant row, worked out there only)
    prec = _cum_rel_at(p, rel, rows) / (p.rank[rows] + 1.0)
    return _safe_div(np.bincount(p.qp[rows], weights=prec, minlength=p.nq), p.num_rel(level))


def _ideal_dcg(p: Prepared, k) -> np.ndarray:
    """Per query: DCG of the best possible ranking of the judged grades (positive gains only)."""
    ok = (p.qrels_qp >= 0) & (p.qrels_grade > 0)
    qq, grade = p.qrels_qp[ok], p.qrels_grade[ok]
    order = _order(qq, -grade)  # highest grade first
    qq, gg = qq[order], grade[order].astype(np.float64)
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
    elif m.params:  # trec_eval's gains per grade: ndcg.1=3,2=9
        gain = np.maximum(_row_gain(p, m), 0.0)
        ideal = _ideal_from(p, _ideal_seq(p, m), m.cutoff)
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
    cum = _cum_rel_at(p, rel, rows).astype(np.float64)
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


# ---- trec_eval's further measures (all_trec) ----------------------------------------------------

INFAP_EPSILON = 0.00001


def _pool_unjudged(p: Prepared) -> np.ndarray:
    """Rows whose document the qrels list with a grade below 0 (pooled, left unjudged)."""
    return (p.grade != UNJUDGED) & (p.grade < 0)


def _judged_nonrel(p: Prepared, level: int) -> np.ndarray:
    return (p.grade != UNJUDGED) & (p.grade >= 0) & (p.grade < level)


def _gains(m: Measure) -> dict[int, float]:
    """trec_eval's `level=gain` parameters (ndcg.1=3,2=9): the gain of each grade named."""
    out = {}
    for part in filter(None, m.params.split(",")):
        level, _, gain = part.partition("=")
        try:
            out[int(level)] = float(gain)
        except ValueError:
            continue  # trec_eval skips a pair whose level is not a whole number
    return out


def _gain_of(grades: np.ndarray, m: Measure) -> np.ndarray:
    """The gain of each grade: the grade itself, or the one the parameters give; 0 below grade 0."""
    g = np.where(grades >= 0, grades, 0).astype(np.float64)
    for level, gain in _gains(m).items():
        g[grades == level] = gain
    g[(grades < 0) & ~np.isin(grades, list(_gains(m)))] = 0.0
    return g


def _row_gain(p: Prepared, m: Measure) -> np.ndarray:
    g = _gain_of(np.where(p.grade == UNJUDGED, -1, p.grade), m)
    g[p.grade == UNJUDGED] = 0.0
    return g


def _ideal_seq(p: Prepared, m: Measure):
    """The ideal ranking's positive gains, per query, highest first: (query, gain, position) per entry."""
    ok = (p.qrels_qp >= 0) & (p.qrels_grade >= 0)
    qq, gg = p.qrels_qp[ok], _gain_of(p.qrels_grade[ok], m)
    pos_ = gg > 0
    qq, gg = qq[pos_], gg[pos_]
    order = np.lexsort((-gg, qq))
    qq, gg = qq[order], gg[order]
    return qq, gg, _ranks(qq)


def _ideal_from(p: Prepared, seq, k) -> np.ndarray:
    qq, gg, pos = seq
    keep = np.ones(len(qq), bool) if k is None else pos < k
    return np.bincount(qq[keep], weights=gg[keep] / np.log2(pos[keep] + 2.0), minlength=p.nq)


def _ideal_prefix(p: Prepared, seq, values: np.ndarray):
    """Per query, the running sum of `values` over its ideal positions, and how to look it up:
    returns (cumulative, first entry per query, entries per query)."""
    qq = seq[0]
    cum = np.cumsum(values)
    counts = np.bincount(qq, minlength=p.nq)
    first = np.r_[0, np.cumsum(counts)[:-1]] if p.nq else np.zeros(0, np.int64)
    base = np.r_[0.0, cum][first] if p.nq else np.zeros(0)
    return cum, first, counts, base


def _prefix_at(cum, first, counts, base, q: np.ndarray, upto: np.ndarray) -> np.ndarray:
    """Sum of the first `upto` ideal entries of query q (upto capped at the query's entries)."""
    n = np.minimum(upto, counts[q])
    out = np.zeros(len(q))
    has = n > 0
    out[has] = cum[first[q[has]] + n[has] - 1] - base[q[has]]
    return out


@kernel("infAP")
def _infap(p: Prepared, m: Measure, level: int) -> np.ndarray:
    nonrel = _judged_nonrel(p, level)
    rel = (p.grade != UNJUDGED) & (p.grade >= 0) & ~nonrel
    pool = _pool_unjudged(p)
    r = _cum_rel(p, rel)[rel].astype(np.float64)
    n = (_cum_rel(p, nonrel) - nonrel)[rel].astype(np.float64)
    u = (_cum_rel(p, pool) - pool)[rel].astype(np.float64)
    j = p.rank[rel].astype(np.float64)
    safe_j = np.where(j > 0, j, 1.0)
    later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r - 1 + n + u) / safe_j)
             * ((r - 1 + INFAP_EPSILON) / (r - 1 + n + 2 * INFAP_EPSILON)))
    contrib = np.where(j == 0, 1.0, later)
    return _safe_div(np.bincount(p.qp[rel], weights=contrib, minlength=p.nq), p.num_rel(level))


@kernel("gmBpref")
def _gm_bpref(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _bpref(p, m, level)


@kernel("RprecMult")
def _rprec_mult(p: Prepared, m: Measure, level: int) -> np.ndarray:
    cut = np.floor(float(m.cutoff) * p.num_rel(level) + 0.9)  # trec_eval: (long)(x * R + 0.9)
    got = p.count(p.rel(level) & (p.rank < cut[p.qp]))
    return _safe_div(got, cut)


def _utility_params(m: Measure) -> tuple[float, float, float, float]:
    vals = [1.0, -1.0, 0.0, 0.0]
    for i, part in enumerate(m.params.split(",")[:4] if m.params else []):
        vals[i] = float(part)
    return tuple(vals)


@kernel("Utility")
def _utility(p: Prepared, m: Measure, level: int) -> np.ndarray:
    a, b, c, d = _utility_params(m)
    relret = p.count(p.rel(level))
    nonrelret = p.num_ret - relret
    return a * relret + b * nonrelret + c * (p.num_rel(level) - relret)


@kernel("IPrecAvg")
def _iprec_avg(p: Prepared, m: Measure, level: int) -> np.ndarray:
    levels = [float(x) for x in m.params.split(",")] if m.params else TREC_LEVELS
    return np.mean([_iprec(p, Measure("IPrec", round(x, 4)), level) for x in levels], axis=0)


TREC_LEVELS = tuple(i / 10 for i in range(11))


@kernel("binG")
def _bin_g(p: Prepared, m: Measure, level: int) -> np.ndarray:
    rel = p.rel(level)
    so_far = _cum_rel(p, rel)[rel]
    contrib = 1.0 / np.log2(3.0 + p.rank[rel] - so_far)
    return _safe_div(np.bincount(p.qp[rel], weights=contrib, minlength=p.nq), p.num_rel(level))


@kernel("G")
def _g(p: Prepared, m: Measure, level: int) -> np.ndarray:
    """Each retrieved gain over log2(2 + ideal cost so far - gain so far); the cost of an ideal
    position is its gain, at least 1; divided by the ideal gains' sum."""
    seq = _ideal_seq(p, m)
    cost = _ideal_prefix(p, seq, np.maximum(seq[1], 1.0))
    ideal_sum = np.bincount(seq[0], weights=seq[1], minlength=p.nq)
    gain = _row_gain(p, m)
    so_far = _cum_rows(p, gain)
    i = p.rank.astype(np.int64)
    npos = cost[2][p.qp]
    sum_cost = _prefix_at(*cost, p.qp, i + 1) + np.maximum(i + 1 - npos, 0)
    hit = gain != 0
    contrib = gain[hit] / np.log2(2.0 + sum_cost[hit] - so_far[hit])
    return _safe_div(np.bincount(p.qp[hit], weights=contrib, minlength=p.nq), ideal_sum)


def _cum_rows(p: Prepared, values: np.ndarray) -> np.ndarray:
    """Per row: the running sum of values within its query, this row included."""
    c = np.cumsum(values)
    if not len(c):
        return c
    starts = np.flatnonzero(np.r_[True, p.qp[1:] != p.qp[:-1]])
    base = np.r_[0.0, c][starts]
    return c - np.repeat(base, np.diff(np.r_[starts, len(c)]))


def _dcg_rows(p: Prepared, m: Measure):
    gain = _row_gain(p, m)
    return gain, _cum_rows(p, gain / np.log2(p.rank + 2.0))


@kernel("nDCGRel")
def _ndcg_rel(p: Prepared, m: Measure, level: int) -> np.ndarray:
    seq = _ideal_seq(p, m)
    ideal = _ideal_prefix(p, seq, seq[1] / np.log2(seq[2] + 2.0))
    npos = ideal[2].astype(np.float64)
    gain, dcg = _dcg_rows(p, m)
    hit = gain > 0
    idcg_at = _prefix_at(*ideal, p.qp[hit], p.rank[hit] + 1)
    total = np.bincount(p.qp[hit], weights=_safe_div(dcg[hit], idcg_at), minlength=p.nq).astype(np.float64)
    final = _final_per_query(p, dcg)
    idcg_full = _prefix_at(*ideal, np.arange(p.nq), ideal[2])
    total += (npos - np.bincount(p.qp[hit], minlength=p.nq)) * _safe_div(final, idcg_full)
    return np.where(total > 0, _safe_div(total, npos), 0.0)


def _final_per_query(p: Prepared, per_row: np.ndarray) -> np.ndarray:
    """Per query: the value at its last row (0 when it has none)."""
    out = np.zeros(p.nq)
    if len(per_row):
        last = np.flatnonzero(np.r_[p.qp[1:] != p.qp[:-1], True])
        out[p.qp[last]] = per_row[last]
    return out


@kernel("Rndcg")
def _rndcg(p: Prepared, m: Measure, level: int) -> np.ndarray:
    """nDCG averaged at each point where the ideal ranking's gain changes (and at the ranking's end
    when it is longer than the ideal's positive part by more than one, as trec_eval)."""
    seq = _ideal_seq(p, m)
    qq, gg, pos = seq
    ideal = _ideal_prefix(p, seq, gg / np.log2(pos + 2.0))
    npos = ideal[2]
    # boundaries: after ideal position i when the next position's gain differs or the query ends
    last = np.r_[qq[1:] != qq[:-1], True] if len(qq) else np.zeros(0, bool)
    change = last | np.r_[gg[1:] != gg[:-1], True] if len(qq) else last
    bq, b = qq[change], pos[change] + 1
    num_ret = p.num_ret.astype(np.int64)
    extra = np.flatnonzero(num_ret > npos + 1)  # trec_eval adds that point only past the rank after the ideal's
    bq = np.r_[bq, extra].astype(np.int64)
    b = np.r_[b, num_ret[extra]].astype(np.int64)
    gain, dcg = _dcg_rows(p, m)
    got = _at_rank(p, dcg, bq, np.minimum(b, num_ret[bq]))
    idcg = _prefix_at(*ideal, bq, b)
    ok = idcg > 0
    total = np.bincount(bq[ok], weights=got[ok] / idcg[ok], minlength=p.nq)
    count = np.bincount(bq[ok], minlength=p.nq)
    out = _safe_div(total, count)
    out[p.num_rel(level) == 0] = 0.0
    return out


def _at_rank(p: Prepared, cum: np.ndarray, q: np.ndarray, k: np.ndarray) -> np.ndarray:
    """A running per-row sum `cum` read at query q's cutoff k: its value at the last row ranked above k
    (0 when none). Rows need not cover every rank (a lean run holds the judged ones)."""
    out = np.zeros(len(q))
    if not len(cum) or not len(q):
        return out
    blk = np.cumsum(np.r_[0, p.qp[1:] != p.qp[:-1]])  # block number per row: increasing in row order
    blk_of = np.full(p.nq, -1, np.int64)
    blk_of[p.qp] = blk
    big = int(p.rank.max()) + 2 if len(p.rank) else 2
    key = blk * big + p.rank
    b = blk_of[q]
    at = np.searchsorted(key, b * big + np.minimum(k, big - 1), side="left") - 1
    ok = (b >= 0) & (at >= 0)
    ok[ok] &= blk[at[ok]] == b[ok]
    out[ok] = cum[at[ok]]
    return out


@kernel("RelP")
def _relative_p(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _safe_div(p.count(p.rel(level) & (p.rank < m.cutoff)), np.minimum(p.num_rel(level), m.cutoff))


@kernel("SetP")
def _set_p(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _safe_div(p.count(p.rel(level)), p.num_ret)


@kernel("SetRelP")
def _set_rel_p(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _safe_div(p.count(p.rel(level)), np.minimum(p.num_ret, p.num_rel(level)))


@kernel("SetR")
def _set_recall(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return _safe_div(p.count(p.rel(level)), p.num_rel(level))


@kernel("SetAP")
def _set_map(p: Prepared, m: Measure, level: int) -> np.ndarray:
    relret = p.count(p.rel(level))  # as trec_eval: one division, so 14*14/(100*32) prints 0.0612
    return _safe_div(relret * relret, p.num_ret * p.num_rel(level))


@kernel("SetF")
def _set_f(p: Prepared, m: Measure, level: int) -> np.ndarray:
    beta = float(m.params) if m.params else 1.0
    prec, rec = _set_p(p, m, level), _set_recall(p, m, level)
    return _safe_div((1 + beta * beta) * prec * rec, beta * beta * prec + rec)


@kernel("NumNonrelJudgedRet")
def _num_nonrel_judged_ret(p: Prepared, m: Measure, level: int) -> np.ndarray:
    return p.count(_judged_nonrel(p, level))


def _rbp_p(m: Measure) -> float:
    for part in filter(None, m.params.split(",")):
        key, _, value = part.partition("=")
        if key == "p":
            return float(value)
    return 0.9


@kernel("RBP")
def _rbp(p: Prepared, m: Measure, level: int) -> np.ndarray:
    persist = _rbp_p(m)
    gain = _row_gain(p, m)
    ok = (p.qrels_qp >= 0) & (p.qrels_grade >= 0)
    top = np.zeros(p.nq)
    if ok.any():
        np.maximum.at(top, p.qrels_qp[ok], _gain_of(p.qrels_grade[ok], m))
    scale = np.where(top > 1, top, 1.0)  # gains above 1 are scaled to 0..1 by the query's highest
    w = gain / scale[p.qp] * persist ** p.rank.astype(np.float64)
    return (1.0 - persist) * np.bincount(p.qp, weights=w, minlength=p.nq)


@kernel("RBPResid")
def _rbp_resid(p: Prepared, m: Measure, level: int) -> np.ndarray:
    """p^num_ret + (1 - p) x the sum of p^rank over the unjudged retrieved documents (when there is one).
    Counted from the judged rows (a lean run holds no others): every rank's weight less theirs."""
    persist = 0.9
    judged = (p.grade != UNJUDGED) & (p.grade >= 0)
    seen = np.bincount(p.qp[judged], weights=persist ** p.rank[judged].astype(np.float64), minlength=p.nq)
    every = (1.0 - persist ** p.num_ret) / (1.0 - persist)
    out = persist ** p.num_ret + (1.0 - persist) * (every - seen)
    return np.where(p.num_ret - p.count(judged) > 0, out, 0.0)


@kernel("Unjudged")
def _unjudged(p: Prepared, m: Measure, level: int) -> np.ndarray:
    judged = (p.grade != UNJUDGED) & (p.grade >= 0) & (p.rank < m.cutoff)
    return (np.minimum(p.num_ret, m.cutoff) - p.count(judged)) / float(m.cutoff)


def per_query(p: Prepared, m: Measure) -> np.ndarray:
    """One measure's value for every evaluated query."""
    compute = KERNELS.get(m.family)
    if compute is None:
        raise ValueError(f"unknown measure family {m.family}")
    if m.judged_only:  # ir_measures' judged_only=True: this measure alone sees trec_eval -J's rows
        p = _judged_view(p)
    return compute(p, m, p.rel_level if m.rel is None else m.rel)


def _judged_view(p: Prepared) -> Prepared:
    """The same evaluation with unjudged documents dropped and the rest ranked again (made once)."""
    if "judged_view" not in p._cache:
        qp, rank, grade, doc = _cut(p.qp, p.rank, p.grade, p.doc, None, True)
        num_ret = np.bincount(qp, minlength=p.nq).astype(np.float64)
        p._cache["judged_view"] = Prepared(p.qids, p.nq, qp, rank, grade, doc, num_ret, p.qrels_qp,
                                           p.qrels_grade, p.rel_level, p.compat)
    return p._cache["judged_view"]


def summarise(m: Measure, values: np.ndarray) -> float:
    """trec_eval's summary: the mean, the sum or the geometric mean, as the measure's family says."""
    if not len(values):
        return 0.0
    if m.summed:
        return float(values.sum())
    if m.geometric:
        return float(math.exp(np.log(np.maximum(values, MIN_GEO_MEAN)).mean()))
    return float(values.mean())


@dataclass(repr=False)
class Scores:
    """Per-query values and summaries of some measures for one run. `values`, `summary()` and `of(qid)` are
    keyed by Measure and looked up by name too (`summary()["nDCG@10"]`: core.measures.ByMeasure; `values` too
    when `evaluate` made them)."""

    run: str
    qids: list[str]
    values: dict[Measure, np.ndarray]
    prepared: Prepared | None = None

    def summary(self) -> dict[Measure, float]:
        return ByMeasure((m, summarise(m, v)) for m, v in self.values.items())

    def of(self, qid: str) -> dict[Measure, float]:
        try:
            i = self.qids.index(qid)
        except ValueError:
            raise KeyError(f"{qid!r}: not among the {len(self.qids)} queries scored") from None
        return ByMeasure((m, float(v[i])) for m, v in self.values.items())

    def __repr__(self) -> str:
        n = len(self.qids)
        shown = ", ".join(f"{m.name}={v:.4f}" for m, v in list(self.summary().items())[:12])
        more = f", ... {len(self.values) - 12} more" if len(self.values) > 12 else ""
        return f"Scores(run={self.run!r}, {n} quer{'y' if n == 1 else 'ies'}: {shown}{more})"


def evaluate(qrels: Qrels, run: Run | LeanRun, measures: list[Measure], *, rel_level: int = 1,
             missing: str = "error", queries: list[str] | None = None, compat: str = "10",
             depth: int | None = None, judged_only: bool = False) -> Scores:
    """Score one run. `missing="zero"` scores queries absent from the run as 0 (trec_eval -c).

    `compat="9"` follows trec_eval 9.0.7: its interpolated precision (iprec_at_recall, 11pt_avg) and its
    single-precision scores (a full run's ties; a lean run was ranked when read). `depth` is trec_eval's
    -M, `judged_only` its -J.
    """
    opts = dict(rel_level=rel_level, missing=missing, queries=queries, depth=depth, judged_only=judged_only,
                compat=compat)
    p = prepare_lean(qrels, run, **opts) if isinstance(run, LeanRun) else prepare(qrels, run, **opts)
    return Scores(run.name, p.qids, ByMeasure((m, per_query(p, m)) for m in measures), p)
