"""Two runs on the same queries: per-query deltas, wins and losses, slices, rank movement.

`pair()` scores a baseline and a candidate once (the engine, all queries at
once) into a `Paired`: per-query arrays of every measure for both runs, with
the queries' weights and tags, and what coverage and budgets need. The gate
decides from a `Paired` (`core.decision.decide`); `compare()` reports one or
more candidates against one baseline from it.

The app's compare screen calls `compare(...)` (or `compare_bundle`) and reads
`Comparison.candidates[i]`: `.summary` (macro per measure with significance),
`.rows` (per query, most changed first), `.movement(qid)` (rank movement of
each relevant document), `.slices`, `.newly_failed`, `.newly_fixed`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.engine import UNJUDGED, MIN_GEO_MEAN, Prepared, evaluate
from rankgate.core.measures import Measure
from rankgate.core.model import Qrels, Query, Run
from rankgate.core.stats import PairedTest, generator_name, paired_tests, percentile

TIE = 1e-9  # per-query deltas closer to zero than this are ties
ROLES = ("baseline", "candidate")


def default_measures(k: int) -> list[Measure]:
    """The measures compare reports unless told otherwise: hit, P, R, RR and nDCG at k."""
    return [Measure("Success", k), Measure("P", k), Measure("R", k), Measure("RR", k), Measure("nDCG", k)]


def aggregate(m: Measure, values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """A measure's summary over some queries, as trec_eval summarises it (mean, sum, geometric mean),
    weighted by the queries' weights when given."""
    v = np.asarray(values, dtype=np.float64)
    if not len(v):
        return 0.0
    w = np.ones(len(v)) if weights is None else np.asarray(weights, dtype=np.float64)
    if m.summed:
        return float((w * v).sum())
    total = w.sum()
    if total <= 0:
        return 0.0
    if m.geometric:
        return float(math.exp((w * np.log(np.maximum(v, MIN_GEO_MEAN))).sum() / total))
    return float((w * v).sum() / total)


@dataclass
class Paired:
    """A baseline and a candidate scored on the same (answerable) queries, sorted by ID."""

    baseline_name: str
    candidate_name: str
    k: int
    rel_level: int
    qids: list[str]
    measures: list[Measure]
    baseline: dict[Measure, np.ndarray]
    candidate: dict[Measure, np.ndarray]
    weights: np.ndarray  # per query (1.0 unless the queries file says otherwise)
    tags: list[tuple[str, ...]]  # per query: its slices
    judged: dict[str, np.ndarray] = field(default_factory=dict)  # role -> judged documents in the top k, per query
    ranked: dict[str, np.ndarray] = field(default_factory=dict)  # role -> documents in the top k, per query
    budgets: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)  # role -> field -> values (run's queries)
    prepared: dict[str, Prepared] = field(default_factory=dict)  # role -> the engine's join (for movement)
    permissions: object = None  # core.acl.Permissions, when an ACL is declared
    funnels: dict = field(default_factory=dict)  # role -> core.funnel.Funnel, for runs with a pipeline
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.qids)

    @property
    def hit(self) -> Measure:
        return Measure("Success", self.k)

    def values(self, role: str) -> dict[Measure, np.ndarray]:
        return self.baseline if role == "baseline" else self.candidate

    def slice_names(self) -> list[str]:
        return sorted({t for ts in self.tags for t in ts})

    def position(self) -> dict[str, int]:
        """Query ID -> its index in `qids` (kept)."""
        got = self._cache.get("position")
        if got is None:
            got = self._cache["position"] = {q: i for i, q in enumerate(self.qids)}
        return got

    def mask(self, slice_name: str | None = None) -> np.ndarray:
        if slice_name is None:
            return np.ones(self.n, bool)
        key = ("mask", slice_name)
        if key not in self._cache:
            self._cache[key] = np.array([slice_name in ts for ts in self.tags], dtype=bool)
        return self._cache[key]

    def macro(self, role: str, m: Measure, mask: np.ndarray | None = None, weighted: bool = False) -> float:
        v = self.values(role)[m]
        w = self.weights if weighted else None
        if mask is not None:
            v = v[mask]
            w = None if w is None else w[mask]
        return aggregate(m, v, w)

    def significance(self, m: Measure, *, mask: np.ndarray | None = None, weighted: bool = False,
                     resamples: int = 10000, seed: int = 0, confidence: float = 0.95) -> PairedTest:
        """The paired test of one measure's delta (cached; see `significance_many`)."""
        return self.significance_many([m], mask=mask, weighted=weighted, resamples=resamples, seed=seed,
                                      confidence=confidence)[0]

    def significance_many(self, measures: list[Measure], *, mask: np.ndarray | None = None, weighted: bool = False,
                          resamples: int = 10000, seed: int = 0, confidence: float = 0.95) -> list[PairedTest]:
        """Paired tests of several measures' deltas in one pass over the same resamples (cached)."""
        base = (None if mask is None else mask.tobytes(), weighted, resamples, seed, confidence)
        todo = [m for m in dict.fromkeys(measures) if ("sig", m) + base not in self._cache]
        if todo:
            D = np.column_stack([self.candidate[m] - self.baseline[m] for m in todo])
            w = self.weights if weighted else None
            if mask is not None:
                D, w = D[mask], None if w is None else w[mask]
            for m, t in zip(todo, paired_tests(D, w, resamples=resamples, seed=seed, confidence=confidence)):
                self._cache[("sig", m) + base] = t
        return [self._cache[("sig", m) + base] for m in measures]

    def hits(self, role: str) -> np.ndarray:
        return self.values(role)[self.hit] > 0

    def newly_failed(self) -> np.ndarray:
        """Per query: hit at k by the baseline, missed by the candidate."""
        return self.hits("baseline") & ~self.hits("candidate")

    def newly_fixed(self) -> np.ndarray:
        return ~self.hits("baseline") & self.hits("candidate")

    def judged_share(self, role: str, mask: np.ndarray | None = None) -> tuple[int, int, float]:
        """(judged, ranked, share) over the top k of the evaluated queries; share 1.0 when nothing is ranked."""
        j, r = self.judged.get(role), self.ranked.get(role)
        if j is None or r is None:
            return 0, 0, 1.0
        if mask is not None:
            j, r = j[mask], r[mask]
        jt, rt = int(j.sum()), int(r.sum())
        return jt, rt, (jt / rt if rt else 1.0)


def _weights_tags(qids: list[str], queries: dict[str, Query] | None) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    queries = queries or {}
    w = np.array([float(queries[q].weight) if q in queries else 1.0 for q in qids], dtype=np.float64)
    tags = [tuple(queries[q].tags) if q in queries else () for q in qids]
    return w, tags


def _top_k_counts(p: Prepared, k: int) -> tuple[np.ndarray, np.ndarray]:
    top = p.rank < k
    return p.count(top & (p.grade != UNJUDGED)), np.minimum(p.num_ret, k)  # a lean Prepared has judged rows only


def budget_values(run: Run) -> dict[str, np.ndarray]:
    """A run's per-query latency_ms and context_tokens as arrays (the fields it carries)."""
    out = {}
    for fld in ("latency_ms", "context_tokens"):
        values = getattr(run, fld, None) or {}
        if values:
            out[fld] = np.array(list(values.values()), dtype=np.float64)
    return out



def answerable(qrels: Qrels, no_answer) -> list[str]:
    return [q for q in qrels.query_ids if q not in no_answer]


def pair(qrels: Qrels, baseline: Run, candidate: Run, *, k: int, measures: list[Measure], rel_level: int = 1,
         no_answer=frozenset(), queries: dict[str, Query] | None = None, scored: dict | None = None) -> Paired:
    """Score both runs on the qrels' answerable queries (a query missing from a run scores 0). `scored`: a
    dict that keeps each run's scores for the next call with the same settings (compare's candidates share
    their baseline's)."""
    ms = list(dict.fromkeys([Measure("Success", k)] + list(measures)))
    wanted = answerable(qrels, no_answer)

    def score(run):
        key = (id(run), tuple(ms), rel_level, tuple(wanted))
        got = None if scored is None else scored.get(key)
        if got is None or got[0] is not run:
            got = (run, evaluate(qrels, run, ms, rel_level=rel_level, missing="zero", queries=wanted))
            if scored is not None:
                scored[key] = got
        return got[1]

    b, c = score(baseline), score(candidate)
    w, tags = _weights_tags(b.qids, queries)
    out = Paired(baseline.name, candidate.name, k, rel_level, b.qids, ms, b.values, c.values, w, tags,
                 prepared={"baseline": b.prepared, "candidate": c.prepared})
    for role, s in (("baseline", b), ("candidate", c)):
        out.judged[role], out.ranked[role] = _top_k_counts(s.prepared, k)
    out.budgets = {"baseline": budget_values(baseline), "candidate": budget_values(candidate)}
    return out


# ---- reports ------------------------------------------------------------------------------------

def _num(x: float | None) -> float | None:
    """JSON has no NaN or infinity: those become null."""
    return None if x is None or not math.isfinite(x) else float(x)


def measure_summary(p: Paired, m: Measure, *, resamples: int = 10000, seed: int = 0, confidence: float = 0.95,
                    mask: np.ndarray | None = None, significance: bool = True) -> dict:
    """Macro of both runs, delta, the weighted macros, wins/losses/ties and the paired test, for one measure."""
    b, c = p.baseline[m], p.candidate[m]
    if mask is not None:
        b, c = b[mask], c[mask]
    d = c - b
    out = {
        "baseline": p.macro("baseline", m, mask), "candidate": p.macro("candidate", m, mask),
        "weighted_baseline": p.macro("baseline", m, mask, True),
        "weighted_candidate": p.macro("candidate", m, mask, True),
        "wins": int(np.count_nonzero(d > TIE)), "losses": int(np.count_nonzero(d < -TIE)),
        "ties": int(np.count_nonzero(np.abs(d) <= TIE)),
    }
    out["delta"] = out["candidate"] - out["baseline"]
    out["weighted_delta"] = out["weighted_candidate"] - out["weighted_baseline"]
    if significance:
        t = p.significance(m, mask=mask, resamples=resamples, seed=seed, confidence=confidence)
        out.update(p_value=t.p_value, ci=[t.ci_low, t.ci_high], effect_size=_num(t.effect_size))
    return out


def slice_summary(p: Paired, measures: list[Measure], names: dict[Measure, str] | None = None) -> dict:
    """Per slice (query tag): its queries, each measure's macro for both runs and the delta, and
    the queries the candidate newly fails or fixes there."""
    names = names or {}
    nf, fx = p.newly_failed(), p.newly_fixed()
    out = {}
    for s in p.slice_names():
        mask = p.mask(s)
        row = {"queries": int(mask.sum()), "weight": float(p.weights[mask].sum()), "measures": {}}
        for m in measures:
            bv, cv = p.macro("baseline", m, mask), p.macro("candidate", m, mask)
            row["measures"][names.get(m, m.name)] = {"baseline": bv, "candidate": cv, "delta": cv - bv}
        row["newly_failed"] = [q for q, x in zip(p.qids, (nf & mask).tolist()) if x]
        row["newly_fixed"] = [q for q, x in zip(p.qids, (fx & mask).tolist()) if x]
        out[s] = row
    return out


def coverage_summary(p: Paired) -> dict:
    """Judged@k (mean share of the top k that is judged, trec_eval's judged_k) and the pooled share, per run."""
    out: dict = {"k": p.k}
    for role in ROLES:
        j, r, share = p.judged_share(role)
        jk = float((p.judged[role] / p.k).mean()) if p.n and role in p.judged else 0.0
        out[role] = {"judged_at_k": jk, "judged": j, "ranked": r, "judged_share": share, "unjudged": r - j}
    return out


def budget_summary(p: Paired) -> dict:
    """p50 and p95 (and the mean and max) of latency_ms and context_tokens, per run that carries them."""
    out: dict = {}
    for role in ROLES:
        for fld, values in p.budgets.get(role, {}).items():
            out.setdefault(role, {})[fld] = budget_stats(values)
    return out


def budget_stats(values: np.ndarray) -> dict:
    v = np.asarray(values, dtype=np.float64)
    return {"queries": int(len(v)), "p50": percentile(v, 50), "p95": percentile(v, 95),
            "mean": _num(float(v.mean())) if len(v) else None, "max": _num(float(v.max())) if len(v) else None}


def budget_stat(values: np.ndarray, stat: str) -> float | None:
    v = np.asarray(values, dtype=np.float64)
    if not len(v):
        return None
    if stat == "mean":
        return float(v.mean())
    if stat == "max":
        return float(v.max())
    return percentile(v, float(stat[1:]))


# ---- rank movement -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DocMove:
    """Where one relevant document sits in each run (1-based ranks; None when not retrieved)."""

    doc: str
    grade: int
    baseline_rank: int | None
    candidate_rank: int | None

    @property
    def move(self) -> int | None:
        """Positions gained by the candidate (positive = moved up); None unless both runs rank it."""
        if self.baseline_rank is None or self.candidate_rank is None:
            return None
        return self.baseline_rank - self.candidate_rank

    def as_dict(self) -> dict:
        return {"doc": self.doc, "grade": self.grade, "baseline_rank": self.baseline_rank,
                "candidate_rank": self.candidate_rank, "move": self.move}


class Movements(Mapping):
    """Query ID -> its relevant documents' `DocMove`s, in `movements`' order. Held as arrays and made into
    DocMoves only when a query's are asked for: 10,000 queries with 100 judged each hold about 300,000, and the
    JSON needs only their text (`texts`), not an object each."""

    def __init__(self, qids: list[str], starts: list[int], doc: list[str], grade: np.ndarray, base: np.ndarray,
                 cand: np.ndarray):
        self.qids, self.starts, self.doc, self.grade = qids, starts, doc, grade
        self.base, self.cand = base, cand  # 1-based ranks, 0 where the run did not retrieve the document
        self._pos: dict[str, int] | None = None

    def _where(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {q: i for i, q in enumerate(self.qids)}
        return self._pos

    def _span(self, qid: str) -> tuple[int, int]:
        i = self._where()[qid]  # KeyError for a query not compared
        return self.starts[i], self.starts[i + 1]

    def _rows(self, qid: str):
        lo, hi = self._span(qid)
        ranks = ([r or None for r in x[lo:hi].tolist()] for x in (self.base, self.cand))
        return zip(self.doc[lo:hi], self.grade[lo:hi].tolist(), *ranks)

    def __contains__(self, qid) -> bool:
        return qid in self._where()

    def __getitem__(self, qid: str) -> list[DocMove]:
        return [DocMove(*row) for row in self._rows(qid)]

    def as_dicts(self, qid: str) -> list[dict]:
        """[m.as_dict() for m in self[qid]], without the DocMoves."""
        return [{"doc": d, "grade": g, "baseline_rank": b, "candidate_rank": c,  # (DocMove.as_dict's keys)
                 "move": None if b is None or c is None else b - c} for d, g, b, c in self._rows(qid)]

    def __iter__(self):
        return iter(self.qids)

    def __len__(self) -> int:
        return len(self.qids)

    def texts(self, depth: int, indent: int) -> list[str]:
        """Per query (in `qids`' order): json.dumps(self.as_dicts(qid), indent=indent)'s text, as a value at
        `depth` (`text_of`'s, for every query)."""
        text = self.text_of(depth, indent)
        return [text(i) for i in range(len(self.qids))]

    def text_of(self, depth: int, indent: int):
        """A function of a query's position in `qids` that gives json.dumps(self.as_dicts(qid), indent=indent)'s
        text, as a value at `depth`, made when asked for (compare's JSON writes each and lets it go: 10,000 queries'
        texts together are 45 MB). A movement's text is its document's JSON string and then the text of its
        (grade, ranks), made once for each such triple (a few thousand): no dict per movement (10,000 queries x
        30: a second in dicts and their encoding)."""
        from json.encoder import encode_basestring_ascii as js

        outer, inner, key = (("\n" + " " * (indent * (depth + i))) for i in (0, 1, 2))
        n = len(self.doc)
        triples = (self.grade, self.base, self.cand)
        o = np.lexsort(triples[::-1])
        new = np.ones(n, bool)
        new[1:] = np.any([x[o][1:] != x[o][:-1] for x in triples], axis=0) if n else new[1:]
        group = np.empty(n, np.intp)
        group[o] = np.cumsum(new) - 1
        g, b, c = (x[o[new]].tolist() for x in triples)
        tails = [f",{key}\"grade\": {_json_int(gr)},{key}\"baseline_rank\": {_json_int(br or None)},{key}"
                 f"\"candidate_rank\": {_json_int(cr or None)},{key}\"move\": {_json_int(br - cr if br and cr else None)}"
                 f"{inner}}}" for gr, br, cr in zip(g, b, c)]
        group = group.tolist()
        head = "{" + key + '"doc": '  # (DocMove.as_dict's keys)
        sep, s, doc, tail = "," + inner + head, self.starts, self.doc, tails.__getitem__

        def text(i: int) -> str:
            lo, hi = s[i], s[i + 1]
            if hi <= lo:
                return "[]"
            docs = [js(d) if d.__class__ is str else _json(d) for d in doc[lo:hi]]
            return "[" + inner + head + sep.join(map(str.__add__, docs, map(tail, group[lo:hi]))) + outer + "]"

        return text


def _json(x) -> str:
    import json

    return json.dumps(x)


def _json_int(x) -> str:
    """An int's JSON text as json's C encoder writes it (int.__repr__), None null."""
    return int.__repr__(x) if x.__class__ is int else _json(x)


def _float_texts(values: list) -> list[str]:
    """[_float_text(x) for x in values]: finite floats (the usual case) by one map of float.__repr__."""
    try:
        out = list(map(float.__repr__, values))  # (TypeError for a value that is no float)
    except TypeError:
        return list(map(_float_text, values))
    if "nan" in out or "inf" in out or "-inf" in out:
        return list(map(_float_text, values))
    return out


def _float_text(x) -> str:
    """A value's JSON text as json's C encoder writes it: a finite float by float.__repr__ (the rest: json.dumps,
    which writes NaN and Infinity as json does)."""
    if x.__class__ is float and x - x == 0.0:
        return float.__repr__(x)
    return _json(x)


def _ranks_of(pr: Prepared, level: int, keys: np.ndarray, span: int) -> np.ndarray:
    """Per key (query position * span + document): its 1-based rank in the prepared run among the relevant rows,
    0 when not there (a document ranked twice: its last row, as a dict filled in row order keeps)."""
    rows = np.flatnonzero(pr.rel(level))
    have = pr.qp[rows].astype(np.int64) * span + pr.doc[rows]
    order = np.argsort(have, kind="stable")
    have = have[order]
    at = np.searchsorted(have, keys, side="right") - 1
    found = (at >= 0) & (have[np.maximum(at, 0)] == keys) if len(have) else np.zeros(len(keys), bool)
    out = np.zeros(len(keys), np.int64)
    out[found] = pr.rank[rows[order[at[found]]]] + 1
    return out


def movements(p: Paired, qrels: Qrels) -> Movements | dict:
    """For every query: each relevant document (grade >= the level) with its rank in both runs,
    ordered by the candidate's rank (unretrieved last), then the baseline's, then the document ID."""
    pb, pc = p.prepared.get("baseline"), p.prepared.get("candidate")
    if pb is None or pc is None:
        return {}
    level = p.rel_level
    ok = np.flatnonzero((pb.qrels_qp >= 0) & (pb.qrels_grade >= level))
    qp, grade = pb.qrels_qp[ok].astype(np.int64), pb.qrels_grade[ok]
    ids = _judged_ids(qrels, pb, pc)
    if ids is not None:  # each row's judgment is known: ranked by judgment, named by the reader's IDs (no codes)
        base, cand = (_ranks_by_entry(pr, level, len(qrels.q))[ok] for pr in (pb, pc))
        names, at = _IdsAt(ids), ok
    else:
        doc = qrels.doc[ok].astype(np.int64)
        span = 1 + max([int(a.max()) for a in (doc, pb.doc, pc.doc) if len(a)] or [0])
        keys = qp * span + doc
        base, cand = _ranks_of(pb, level, keys, span), _ranks_of(pc, level, keys, span)
        names, at = _Names(qrels.catalog.docs), doc
    big = np.int64(1) << 60
    c_key, b_key = np.where(cand > 0, cand, big), np.where(base > 0, base, big)
    o = np.lexsort((b_key, c_key, qp))
    same = (qp[o][1:] == qp[o][:-1]) & (c_key[o][1:] == c_key[o][:-1]) & (b_key[o][1:] == b_key[o][:-1])
    if same.any():  # the ID decides between documents of a query at the same ranks (mostly: ranked by neither)
        tied = o[np.flatnonzero(np.r_[same, False] | np.r_[False, same])]
        tied_names = names.of(at[tied])
        by_name = np.zeros(len(qp), np.int64)
        by_name[tied[sorted(range(len(tied)), key=tied_names.__getitem__)]] = np.arange(len(tied))
        o = np.lexsort((by_name, b_key, c_key, qp))
    starts = np.searchsorted(qp[o], np.arange(len(p.qids) + 1)).tolist()
    return Movements(list(p.qids), starts, names.of(at[o]), grade[o], base[o], cand[o])


def _judged_ids(qrels: Qrels, *preps: Prepared):
    """The qrels' document IDs, one a judgment (Arrow strings), when each row of these runs carries its judgment
    (the engine's "entries": read by pair) and the qrels' document codes are not made (a million judged: 0.1 s
    saved); else None."""
    from rankgate.core.model import is_later

    if not all((got := pr._cache.get("entries")) is not None and got[0] is qrels for pr in preps) \
            or not is_later(qrels, "doc"):
        return None
    from rankgate.core.formats.trec_fast import judged_ids

    return judged_ids(qrels)


def _ranks_by_entry(pr: Prepared, level: int, n: int) -> np.ndarray:
    """Per judgment of the qrels (n of them): its document's 1-based rank in the prepared run among the relevant
    rows, 0 when not there (a document ranked twice: its last row, as _ranks_of takes)."""
    _, entry, rows = pr._cache["entries"]
    rel = np.flatnonzero(pr.rel(level))
    out = np.zeros(n, np.int64)
    np.maximum.at(out, entry[rows[rel]], pr.rank[rel] + 1)  # (a query's rows come in rank order: the last, the most)
    return out


def _arrow_take(arrow, at: np.ndarray) -> list[str]:
    """arrow.take(at).to_pylist() for numpy indices (model._arrow_ints: no pandas import)."""
    from rankgate.core.model import _arrow_ints

    return arrow.take(_arrow_ints(at)).to_pylist()


class _Names:
    """The catalog's document names of some codes. A catalog a fast reader filled holds them as Arrow strings
    until every name is asked for (core.model.Interner.adopt): those of the relevant documents are taken from
    there, not from a Python string made for each of the catalog's (a million judged: 0.1 s)."""

    def __init__(self, docs):
        self.docs = docs

    def of(self, codes: np.ndarray) -> list[str]:
        if not len(codes):
            return []
        arrow = self.docs.arrow  # names 0 .. len(arrow)-1, as `names` has them
        if arrow is None or int(codes.max()) >= len(arrow):
            names = self.docs.names
            return [names[c] for c in codes.tolist()]
        return _arrow_take(arrow, codes)


class _IdsAt:
    """The document IDs of some judgments (their rows in the qrels), from the reader's Arrow strings."""

    def __init__(self, ids):
        self.ids = ids

    def of(self, rows: np.ndarray) -> list[str]:
        return _arrow_take(self.ids, rows) if len(rows) else []


# ---- compare ------------------------------------------------------------------------------------

@dataclass
class QueryChange:
    """One query of a comparison: per measure baseline, candidate and delta; its hit status."""

    query: str
    tags: tuple[str, ...]
    weight: float
    baseline: dict[str, float]
    candidate: dict[str, float]
    status: str  # newly_failed, newly_fixed, still_missed, hit
    change: float  # the sum of |delta| over the measures (the sort key: most changed first)

    @property
    def delta(self) -> dict[str, float]:
        return {m: self.candidate[m] - self.baseline[m] for m in self.baseline}

    def as_dict(self) -> dict:
        return {"query": self.query, "tags": list(self.tags), "weight": self.weight, "status": self.status,
                "change": self.change,
                "measures": {m: {"baseline": self.baseline[m], "candidate": self.candidate[m],
                                 "delta": self.candidate[m] - self.baseline[m]} for m in self.baseline}}


@dataclass
class CandidateReport:
    candidate: str
    paired: Paired
    summary: dict[str, dict]  # measure name -> measure_summary
    rows: list[QueryChange]  # most changed first
    slices: dict[str, dict]
    coverage: dict
    budgets: dict
    moves: Mapping[str, list[DocMove]]  # Movements

    @property
    def newly_failed(self) -> list[str]:
        return [r.query for r in self.rows if r.status == "newly_failed"]

    @property
    def newly_fixed(self) -> list[str]:
        return [r.query for r in self.rows if r.status == "newly_fixed"]

    def movement(self, qid: str) -> list[DocMove]:
        return self.moves.get(qid, [])

    def _movement_dicts(self, qid: str) -> list[dict]:
        if isinstance(self.moves, Movements):
            return self.moves.as_dicts(qid) if qid in self.moves else []
        return [m.as_dict() for m in self.movement(qid)]

    def as_dict(self, top: int | None = None, laid: bool = False) -> dict:
        """laid: "queries" is a jsontext.Laid that writes their text (jsontext.dumps gives the same text as with
        the list of dicts, without making them)."""
        rows = self.rows if top is None else self.rows[:top]
        if laid:
            from rankgate.core.jsontext import Laid

            queries = Laid(lambda depth, indent: self.queries_parts(rows, depth, indent))
        else:
            queries = [dict(r.as_dict(), movement=self._movement_dicts(r.query)) for r in rows]
        return {
            "candidate": self.candidate, "summary": self.summary,
            "newly_failed": sorted(self.newly_failed), "newly_fixed": sorted(self.newly_fixed),
            "slices": self.slices, "coverage": self.coverage, "budgets": self.budgets,
            "queries": queries,
        }

    def queries_parts(self, rows: list[QueryChange], depth: int, indent: int = 2):
        """json.dumps([dict(r.as_dict(), movement=...) for r in rows], indent=indent)'s text, as a value at `depth`,
        in pieces (a list, or an iterator that makes each query's when asked): one format per query from its
        fields, its movements' text made from arrays (Movements.text_of)."""
        from json.encoder import encode_basestring_ascii as js

        from rankgate.core.jsontext import dumps_at

        if not rows:
            return ["[]"]
        n0, n1, n2, n3, n4 = (("\n" + " " * (indent * (depth + i))) for i in range(5))
        names = list(rows[0].baseline)
        measures = ("{" + n3 + ("," + n3).join(
            js(n).replace("%", "%%") + ": {" + n4 + '"baseline": %s,' + n4 + '"candidate": %s,' + n4 + '"delta": %s'
            + n3 + "}" for n in names) + n2 + "}") if names else "{}"
        one = ("{" + n2 + '"query": %s,' + n2 + '"tags": %s,' + n2 + '"weight": %s,' + n2 + '"status": %s,' + n2
               + '"change": %s,' + n2 + '"measures": ' + measures + "," + n2 + '"movement": %s' + n1 + "}")
        if isinstance(self.moves, Movements):
            text, where = self.moves.text_of(depth + 2, indent), self.moves._where()

            def moved(q):
                i = where.get(q)
                return "[]" if i is None else text(i)
        else:
            def moved(q):
                return dumps_at(self._movement_dicts(q), depth + 2, indent)
        keys = rows[0].baseline.keys()
        if not all(r.baseline.keys() == keys and r.candidate.keys() == keys and r.query.__class__ is str
                   and r.status.__class__ is str for r in rows):  # (rows made otherwise than report_candidate's)
            return [dumps_at([dict(r.as_dict(), movement=self._movement_dicts(r.query)) for r in rows], depth, indent)]
        flat: list = []  # per row: weight, change, then each measure's baseline, candidate and delta
        for r in rows:
            b, c = r.baseline, r.candidate
            flat += (r.weight, r.change)
            for n in names:
                x, y = b[n], c[n]
                flat += (x, y, y - x)
        f, width = _float_texts(flat), 2 + 3 * len(names)
        status = {t: js(t) for t in {r.status for r in rows}}
        return self._query_texts(rows, one, f, width, status, moved, depth, indent)

    @staticmethod
    def _query_texts(rows, one: str, f: list[str], width: int, status: dict, moved, depth: int, indent: int):
        """queries_parts' pieces, each query's made when the writer asks for it (the text of 10,000 queries is 64
        MB: written as it is made, it is never held whole)."""
        from json.encoder import encode_basestring_ascii as js

        from rankgate.core.jsontext import dumps_at

        n0, n1 = (("\n" + " " * (indent * (depth + i))) for i in range(2))
        first = "[" + n1 + one
        one = "," + n1 + one  # every query after the first
        for k, r in zip(range(0, len(f), width), rows):
            yield (first if k == 0 else one) % (
                js(r.query), dumps_at(list(r.tags), depth + 2, indent) if r.tags else "[]", f[k],
                status[r.status], f[k + 1], *f[k + 2:k + width], moved(r.query))
        yield n0 + "]"


@dataclass
class Comparison:
    baseline: str
    k: int
    rel_level: int
    measures: list[Measure]
    candidates: list[CandidateReport]
    resamples: int
    seed: int
    confidence: float
    binding: dict = field(default_factory=dict)
    no_answer: list[str] = field(default_factory=list)

    def as_dict(self, top: int | None = None, laid: bool = False) -> dict:
        """laid: each candidate's "queries" written by jsontext.dumps from the rows (CandidateReport.as_dict)."""
        return {
            "baseline": self.baseline, "k": self.k, "rel_level": self.rel_level,
            "measures": [m.name for m in self.measures],
            "queries": self.candidates[0].paired.n if self.candidates else 0,
            "no_answer_queries": self.no_answer,
            "significance": significance_settings(self.resamples, self.seed, self.confidence),
            "binding": self.binding,
            "candidates": [c.as_dict(top, laid) for c in self.candidates],
        }


def significance_settings(resamples: int, seed: int, confidence: float) -> dict:
    out = {"test": "paired randomization (sign flip), two-sided", "interval": "percentile bootstrap",
           "effect_size": "Cohen's d_z (mean delta / sd of deltas)", "resamples": resamples, "seed": seed,
           "confidence": confidence}
    if generator_name() != "PCG64":  # the resamples' generator; results without one (older receipts) used PCG64
        out["generator"] = generator_name()
    return out


def _status(b_hit: bool, c_hit: bool) -> str:
    if b_hit and not c_hit:
        return "newly_failed"
    if c_hit and not b_hit:
        return "newly_fixed"
    return "hit" if c_hit else "still_missed"


def report_candidate(p: Paired, qrels: Qrels, measures: list[Measure], *, resamples: int = 10000, seed: int = 0,
                     confidence: float = 0.95) -> CandidateReport:
    p.significance_many(measures, resamples=resamples, seed=seed, confidence=confidence)
    summary = {m.name: measure_summary(p, m, resamples=resamples, seed=seed, confidence=confidence)
               for m in measures}
    bh, ch = p.hits("baseline"), p.hits("candidate")
    change = np.zeros(p.n)
    for m in measures:
        change += np.abs(p.candidate[m] - p.baseline[m])
    names = [m.name for m in measures]
    bv = [np.asarray(p.baseline[m], dtype=np.float64).tolist() for m in measures]  # floats, as float(x) gives
    cv = [np.asarray(p.candidate[m], dtype=np.float64).tolist() for m in measures]
    weights, changes, bh, ch = p.weights.astype(np.float64).tolist(), change.tolist(), bh.tolist(), ch.tolist()
    rows = []
    for i in np.lexsort((np.arange(p.n), -change)).tolist():
        rows.append(QueryChange(p.qids[i], p.tags[i], weights[i], {n: v[i] for n, v in zip(names, bv)},
                                {n: v[i] for n, v in zip(names, cv)}, _status(bool(bh[i]), bool(ch[i])),
                                changes[i]))
    return CandidateReport(p.candidate_name, p, summary, rows, slice_summary(p, measures), coverage_summary(p),
                           budget_summary(p), movements(p, qrels))


def compare(qrels: Qrels, baseline: Run, candidates: list[Run], *, k: int, measures: list[Measure] | None = None,
            rel_level: int = 1, no_answer=frozenset(), queries: dict[str, Query] | None = None,
            resamples: int = 10000, seed: int = 0, confidence: float = 0.95, binding: dict | None = None
            ) -> Comparison:
    """Every candidate against one baseline, on the qrels' answerable queries."""
    ms = list(dict.fromkeys(measures or default_measures(k)))
    reports, scored = [], {}  # the baseline scored once for every candidate
    for cand in candidates:
        p = pair(qrels, baseline, cand, k=k, measures=ms, rel_level=rel_level, no_answer=no_answer,
                 queries=queries, scored=scored)
        reports.append(report_candidate(p, qrels, ms, resamples=resamples, seed=seed, confidence=confidence))
    return Comparison(baseline.name, k, rel_level, ms, reports, resamples, seed, confidence, binding or {},
                      sorted(no_answer))


def compare_bundle(bundle, policy, baseline: str, candidates: list[str], measures: list[Measure] | None = None
                   ) -> Comparison:
    """`compare` on a loaded bundle with a resolved policy (k, level, significance settings, binding)."""
    from rankgate.core.binding import check_binding

    base = bundle.run(baseline)
    cands = [bundle.run(c) for c in candidates]
    binding = check_binding(bundle.qrels, [base, *cands], allow=policy.allow_snapshot_mismatch,
                            manifest_version=bundle.manifest.collection_version if bundle.manifest else "")
    return compare(bundle.qrels, base, cands, k=policy.k, measures=measures, rel_level=policy.checks.rel_level,
                   no_answer=bundle.no_answer, queries=bundle.queries, resamples=policy.resamples,
                   seed=policy.seed, confidence=policy.confidence, binding=binding)
