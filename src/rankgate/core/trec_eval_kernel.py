"""trec_eval 10's measures, one query at a time, computed as its C code computes them.

`rankgate trec_eval` prints what trec_eval prints, digit for digit. A printed value is C's "%6.4f" of a
double, and a double that falls exactly half-way between two printed digits (0.04375) prints one way or
the other depending on its last bit; so each value here is the same double trec_eval computes: the same
operations in the same order (a running sum is a sequential sum: numpy's cumsum, never its pairwise
sum), the same libm (log2 and log through Python's math module), and the summary summed query by query
in trec_eval's order (queries sorted by ID as bytes) before one division. The engine (core/engine.py),
vectorised over all queries for `rankgate score`, agrees with this kernel to ~1e-12;
tests/unit/test_trec_eval_kernel.py checks the two against each other.

A query is its ranked list of relevance values (trec_eval's `results_rel_list`: the grade of each
ranked document, -1 for one outside the qrels, -2 for a judged grade below 0) and the count of its
judged documents per grade (`rel_levels`). Nothing here imports the engine or pyarrow.
"""

from __future__ import annotations

import math
from functools import cmp_to_key

import numpy as np

NONPOOL, UNJUDGED = -1, -2  # trec_eval's RELVALUE_NONPOOL and RELVALUE_UNJUDGED
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001
DEFAULT_PARAMS = {
    "P": "5,10,15,20,30,100,200,500,1000", "recall": "5,10,15,20,30,100,200,500,1000",
    "ndcg_cut": "5,10,15,20,30,100,200,500,1000", "map_cut": "5,10,15,20,30,100,200,500,1000",
    "relative_P": "5,10,15,20,30,100,200,500,1000", "success": "1,5,10", "unj": "5,10,20",
    "iprec_at_recall": "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0",
    "Rprec_mult": "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0",
    "11pt_avg": "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0", "utility": "1.0,-1.0,0.0,0.0",
    "set_F": "1.0", "relstring": "10",
}
_LOG2: list[float] = [0.0]


def log2_table(n: int) -> np.ndarray:
    """log2(k) for k = 0..n, from libm one by one (as trec_eval calls it), grown when needed."""
    if len(_LOG2) <= n:
        _LOG2.extend(math.log2(k) for k in range(len(_LOG2), n + 1))
    return np.array(_LOG2[:n + 1])


def _div(a: float, b: float) -> float:
    """C's double division: x/0 is inf (nan for 0/0) instead of an exception."""
    try:
        return a / b
    except ZeroDivisionError:  # 0/0 is x86's default nan, which has its sign bit set
        return -math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)


def _lround(x: float) -> int:
    """C's lround: half-way cases away from zero."""
    t = math.trunc(x)
    return t + (1 if x - t >= 0.5 else -1 if x - t <= -0.5 else 0)


# ---- parameters, parsed as trec_eval's meas_init.c parses them ------------------------------------

def parse_params(root: str, given: str):
    """The parameter values of one measure (given = the text after NAME., or "" for the default)."""
    from rankgate.core.trec_eval import atof, atol

    text = given or DEFAULT_PARAMS.get(root, "")
    parts = text.split(",")
    if root in ("P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "unj"):
        return sorted({atol(x) for x in parts})
    if root in ("iprec_at_recall", "Rprec_mult"):
        return sorted({atof(x) for x in parts})
    if root in ("11pt_avg", "utility", "set_F"):
        return [atof(x) for x in parts]
    if root == "relstring":
        return int(atof(text))
    if root in ("G", "ndcg", "ndcg_rel", "Rndcg", "rbp", "rbp_resid"):
        pairs = []
        for part in filter(None, given.split(",")):
            name, _, value = part.partition("=")
            pairs.append((name, atof(value)))
        return pairs
    return None


def _valid_int(text: str) -> bool:
    t = text[1:] if text[:1] in "+-" else text
    return t.isdigit() and t.isascii()


def setup_gains(pairs, rel_levels: list[int]) -> list[list]:
    """trec_eval's setup_gains: [level, gain, count] per level, sorted by gain with its comparator
    (the difference cast to int, so gains less than 1 apart compare equal; glibc's sort is stable)."""
    from rankgate.core.trec_eval import atol

    gains = [[atol(name), value, 0] for name, value in pairs if _valid_int(name)]
    for level, count in enumerate(rel_levels):
        for g in gains:
            if g[0] == level:
                g[2] = count
                break
        else:
            gains.append([level, float(level), count])
    return sorted(gains, key=cmp_to_key(lambda a, b: int(a[1] - b[1])))


def _ideal(gains: list[list]) -> list[float]:
    """The ideal ranking's gains while positive: the levels from the highest gain down, each as often
    as it is judged (the walk of trec_eval's cur_level / num_at_level loops)."""
    out: list[float] = []
    for _, gain, count in reversed(gains):
        if count == 0:
            continue
        if gain <= 0.0:
            break
        out.extend([gain] * count)
    return out


# ---- one query ------------------------------------------------------------------------------------

class Query:
    """The shared pieces of one query's evaluation; each measure below reads what it needs."""

    def __init__(self, rl: np.ndarray, rel_levels: list[int], level: int):
        self.rl, self.rel_levels, self.level = rl, rel_levels, level
        self.n = n = len(rl)
        self.num_rel = sum(rel_levels[max(level, 0):])
        self.isrel = rl >= level
        self.relpos = np.flatnonzero(self.isrel)
        self.cumrel = np.cumsum(self.isrel)
        judged_rel = rl >= max(level, 0)
        self.num_rel_ret = int(np.count_nonzero(judged_rel))
        self.l2 = log2_table(max(n, len(self._ideal_raw())) + 3)
        self._ap = None

    def _ideal_raw(self) -> list[int]:
        if not hasattr(self, "_raw"):
            self._raw = [lvl for lvl in range(len(self.rel_levels) - 1, 0, -1) for _ in range(self.rel_levels[lvl])]
        return self._raw

    def rel_before(self, k: int) -> int:
        """Relevant documents ranked above k (trec_eval's rel_so_far at its cutoff k)."""
        k = min(k, self.n)
        return int(self.cumrel[k - 1]) if k > 0 else 0

    def ap_terms(self) -> np.ndarray:
        """Running sum of precision at each relevant document (trec_eval's `sum` in map)."""
        if self._ap is None:
            self._ap = np.cumsum(np.arange(1, len(self.relpos) + 1) / (self.relpos + 1.0))
        return self._ap

    def suffix_max_precision(self) -> np.ndarray:
        """At each rank i (1-based, index i-1): the highest precision at rank i or below."""
        prec = self.cumrel / np.arange(1.0, self.n + 1)
        return np.maximum.accumulate(prec[::-1])[::-1]


def _map(q: Query, _p) -> list[float]:
    return [q.ap_terms()[-1] / q.num_rel] if len(q.relpos) else [0.0]


def _gm_map(q: Query, _p) -> list[float]:
    s = q.ap_terms()[-1] / q.num_rel if len(q.relpos) else 0.0
    return [math.log(max(s, MIN_GEO_MEAN))]


def _rprec(q: Query, _p) -> list[float]:
    k = min(q.n, q.num_rel)
    return [q.rel_before(k) / q.num_rel] if k else [0.0]


def _bpref_sum(q: Query) -> float:
    rl, level = q.rl, q.level
    judged = rl >= 0
    nonrel = judged & (rl < level)
    rel_at = np.flatnonzero(judged & ~nonrel)
    if not len(rel_at):
        return 0.0
    num_nonrel = sum(q.rel_levels[:max(level, 0)])
    seen = np.cumsum(nonrel)[rel_at]
    denom = float(min(num_nonrel, q.num_rel))
    terms = np.ones(len(rel_at))
    some = seen > 0
    terms[some] = 1.0 - np.minimum(seen[some], q.num_rel) / denom
    total = float(np.cumsum(terms)[-1])
    return total / q.num_rel if q.num_rel else total


def _bpref(q: Query, _p) -> list[float]:
    return [_bpref_sum(q)]


def _gm_bpref(q: Query, _p) -> list[float]:
    return [math.log(max(_bpref_sum(q), MIN_GEO_MEAN))]


def _infap(q: Query, _p) -> list[float]:
    rl, level = q.rl, q.level
    judged = rl >= 0
    nonrel = judged & (rl < level)
    rel_at = np.flatnonzero(judged & ~nonrel)
    if not len(rel_at):
        return [0.0]
    r = np.arange(1, len(rel_at) + 1)
    nr = np.cumsum(nonrel)[rel_at]
    pu = np.cumsum(rl == UNJUDGED)[rel_at]
    fj = rel_at.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r - 1 + nr + pu) / fj) * (
            (r - 1 + INFAP_EPSILON) / ((r - 1 + nr) + 2 * INFAP_EPSILON))
    terms[rel_at == 0] = 1.0
    total = float(np.cumsum(terms)[-1])
    return [total / q.num_rel if q.num_rel else total]


def _recip_rank(q: Query, _p) -> list[float]:
    return [1.0 / (int(q.relpos[0]) + 1)] if len(q.relpos) else [0.0]


def _interpolated(q: Query, cutoffs: list[int], emit) -> None:
    """trec_eval's backward walk for interpolated precision: emit(index, value) for each cutoff (a
    number of relevant documents) in the order trec_eval reaches it; cutoffs above the relevant
    retrieved are never reached."""
    nrr = len(q.relpos)
    cc = len(cutoffs) - 1
    while cc >= 0 and cutoffs[cc] > q.num_rel_ret:
        cc -= 1
    final = _div(q.num_rel_ret, q.n)
    if nrr:
        best = q.suffix_max_precision()
        for c in range(nrr, 0, -1):
            ip = float(best[q.relpos[c - 1]])
            while cc >= 0 and c == cutoffs[cc]:
                emit(cc, ip)
                cc -= 1
        final = max(final, float(best[q.relpos[0]]))
    while cc >= 0:
        emit(cc, final)
        cc -= 1


def _iprec(q: Query, levels) -> list[float]:
    out = [0.0] * len(levels)
    _interpolated(q, [_lround(x * q.num_rel) for x in levels], out.__setitem__)
    return out


def _11pt(q: Query, levels) -> list[float]:
    total = [0.0]

    def add(_i, v):
        total[0] += v
    _interpolated(q, [_lround(x * q.num_rel) for x in levels], add)
    return [total[0] / len(levels)]


def _at_cutoffs(q: Query, cuts, value) -> list[float]:
    return [value(k, q.rel_before(k)) for k in cuts]


def _p(q: Query, cuts) -> list[float]:
    return _at_cutoffs(q, cuts, lambda k, r: r / k)


def _recall(q: Query, cuts) -> list[float]:
    if not q.num_rel:
        return [0.0] * len(cuts)
    return _at_cutoffs(q, cuts, lambda k, r: r / q.num_rel)


def _relative_p(q: Query, cuts) -> list[float]:
    if not q.num_rel:
        return [0.0] * len(cuts)
    return _at_cutoffs(q, cuts, lambda k, r: r / min(k, q.num_rel))


def _success(q: Query, cuts) -> list[float]:
    return _at_cutoffs(q, cuts, lambda k, r: 1.0 if r else 0.0)


def _map_cut(q: Query, cuts) -> list[float]:
    if not q.num_rel:
        return [0.0] * len(cuts)
    ap = q.ap_terms()
    return _at_cutoffs(q, cuts, lambda k, r: (float(ap[r - 1]) if r else 0.0) / q.num_rel)


def _unj(q: Query, cuts) -> list[float]:
    unj = np.cumsum(q.rl < 0)
    return [(int(unj[min(k, q.n) - 1]) if min(k, q.n) else 0) / k for k in cuts]


def _rprec_mult(q: Query, levels) -> list[float]:
    out = []
    for x in levels:
        c = int(x * q.num_rel + 0.9)
        if c > q.n:
            out.append(q.num_rel_ret / c)
        else:
            out.append(int(q.cumrel[c - 1]) / c if c > 0 else 0.0)
    return out


def _utility(q: Query, c) -> list[float]:
    nrr, n, r = q.num_rel_ret, q.n, q.num_rel
    return [c[0] * nrr + c[1] * (n - nrr) + c[2] * (r - nrr) + c[3] * (0 + nrr - n - r)]


def _bin_g(q: Query, _p) -> list[float]:
    if not len(q.relpos):
        return [0.0]
    terms = 1.0 / q.l2[3 + q.relpos - np.arange(1, len(q.relpos) + 1)]
    return [float(np.cumsum(terms)[-1]) / q.num_rel]


def _row_gains(q: Query, gains) -> np.ndarray:
    """get_gain of each ranked document."""
    table = {level: gain for level, gain, _ in reversed(gains)}  # the first listed wins, as get_gain
    out = np.zeros(q.n)
    for level, gain in table.items():
        if gain != 0:
            out[q.rl == level] = gain
    return out


def _dcg_sum(q: Query, g: np.ndarray) -> np.ndarray:
    """Running DCG of the ranking (inclusive of each rank)."""
    return np.cumsum(g / q.l2[2:q.n + 2])


def _ideal_sum(q: Query, ideal: list[float]) -> np.ndarray:
    return np.cumsum(np.array(ideal) / q.l2[2:len(ideal) + 2]) if ideal else np.zeros(0)


def _g(q: Query, pairs) -> list[float]:
    gains = setup_gains(pairs, q.rel_levels)
    ideal = _ideal(gains)
    g = _row_gains(q, gains)
    if not q.n:
        return [0.0]
    ig = np.zeros(q.n)
    k = min(q.n, len(ideal))
    ig[:k] = ideal[:k]
    cost = np.cumsum(np.where(ig >= 1.0, ig, 1.0))
    got = np.cumsum(g)
    total = 0.0
    for i in np.flatnonzero(g).tolist():
        total += float(g[i]) / math.log2(2 + float(cost[i]) - float(got[i]))
    sum_ideal = float(np.cumsum(ideal)[-1]) if ideal else 0.0
    return [total / sum_ideal if sum_ideal > 0.0 else 0.0]


def _ndcg(q: Query, pairs) -> list[float]:
    gains = setup_gains(pairs, q.rel_levels)
    ideal = _ideal_sum(q, _ideal(gains))
    g = _row_gains(q, gains)
    dcg = float(_dcg_sum(q, g)[-1]) if q.n else 0.0
    return [dcg / float(ideal[-1]) if len(ideal) and ideal[-1] > 0.0 else 0.0]


def _ndcg_rel(q: Query, pairs) -> list[float]:
    gains = setup_gains(pairs, q.rel_levels)
    ideal = _ideal(gains)
    L = len(ideal)
    icum = _ideal_sum(q, ideal)
    g = _row_gains(q, gains)
    dcg = _dcg_sum(q, g) if q.n else np.zeros(0)
    hits = np.flatnonzero(g > 0)
    total = 0.0
    if len(hits):
        at = icum[np.minimum(hits, L - 1)] if L else np.zeros(len(hits))
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = dcg[hits] / at
        total = float(np.cumsum(terms)[-1])
    final_dcg = float(dcg[-1]) if q.n else 0.0
    final_ideal = float(icum[-1]) if L else 0.0
    total += _div(float(L - len(hits)) * final_dcg, final_ideal)
    return [total / L if total > 0.0 else 0.0]


def _rndcg(q: Query, pairs) -> list[float]:
    """nDCG averaged at each rank where the ideal ranking's gain changes (trec_eval's m_Rndcg.c),
    with its quirks: past a short ranking the points go on with the ranking's final DCG, and a
    ranking longer than the ideal's positive part by more than one adds a point at its end."""
    if q.num_rel == 0:
        return [0.0]
    gains = setup_gains(pairs, q.rel_levels)
    ideal = _ideal(gains)
    L = len(ideal)
    icum = _ideal_sum(q, ideal)
    g = _row_gains(q, gains)
    dcg = _dcg_sum(q, g) if q.n else np.zeros(0)

    def dcg_before(k: int) -> float:
        return float(dcg[k - 1]) if k > 0 else 0.0

    total, count = 0.0, 0
    for b in range(1, L + 1):  # ideal gain at b differs from the one at b - 1 (past L: 0, a change)
        if b < L and ideal[b] == ideal[b - 1]:
            continue
        ideal_before = float(icum[b - 1])
        if ideal_before > 0.0:
            total += dcg_before(min(b, q.n)) / ideal_before
            count += 1
    if q.n > L + 1 and L and float(icum[-1]) > 0.0:
        total += dcg_before(q.n) / float(icum[-1])
        count += 1
    return [_div(total, count)]


def _ndcg_cut(q: Query, cuts) -> list[float]:
    gain = np.where(q.rl > 0, q.rl, 0).astype(np.float64)
    dcg = _dcg_sum(q, gain) if q.n else np.zeros(0)
    ideal = q._ideal_raw()
    icum = _ideal_sum(q, [float(x) for x in ideal])
    out = []
    for k in cuts:
        m = min(k, q.n)
        v = float(dcg[m - 1]) if m else 0.0
        j = min(k, len(ideal))
        i = float(icum[j - 1]) if j else 0.0
        out.append(v / i if i > 0.0 else v)
    return out


def _rbp_p(pairs) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def _persistence(p: float, n: int) -> np.ndarray:
    """1, p, p*p, ... as trec_eval multiplies them, one rank at a time."""
    return np.cumprod(np.r_[1.0, np.full(max(n - 1, 0), p)])[:n]


def _rbp(q: Query, pairs) -> list[float]:
    p = _rbp_p(pairs)
    gains = setup_gains(pairs, q.rel_levels)
    lo = hi = 0.0  # trec_eval leaves these unset; 0 is what it reads, and what rankgate's engine assumes
    for _, gain, _ in gains:
        lo, hi = min(lo, gain), max(hi, gain)
    if lo < 0 or hi > 1:
        gains = [[lvl, (gain - lo) / (hi - lo), c] for lvl, gain, c in gains]
    g = _row_gains(q, gains)
    total = float(np.cumsum(g * _persistence(p, q.n))[-1]) if q.n else 0.0
    return [(1.0 - p) * total]


def _rbp_resid(q: Query, pairs) -> list[float]:
    p = _rbp_p(pairs)
    unj = q.rl < 0
    if not unj.any():
        return [0.0]
    w = _persistence(p, q.n + 1)
    total = float(np.cumsum(np.where(unj, w[:q.n], 0.0))[-1])
    return [float(w[q.n]) + (1 - p) * total]


def _set(q: Query, _p, which: str) -> list[float]:
    nrr, n, r = q.num_rel_ret, q.n, q.num_rel
    if which == "set_P":
        return [nrr / n if n else 0.0]
    if which == "set_recall":
        return [nrr / r if r else 0.0]
    if which == "set_relative_P":
        return [nrr / min(n, r) if n and r else 0.0]
    return [(float(nrr) * float(nrr)) / (float(n) * float(r)) if n and r else 0.0]


def _set_f(q: Query, x) -> list[float]:
    if not q.num_rel_ret:
        return [0.0]
    p, r = q.num_rel_ret / q.n, q.num_rel_ret / q.num_rel
    x = x[0]
    return [(x + 1.0) * p * r / (x * p + r)]


def _counts(q: Query, _p, which: str) -> list[float]:
    if which == "num_ret":
        return [float(q.n)]
    if which == "num_rel":
        return [float(q.num_rel)]
    if which == "num_rel_ret":
        return [float(q.num_rel_ret)]
    outside = int(np.count_nonzero(q.rl < 0))
    return [float(q.n - outside - q.num_rel_ret)]  # num_nonrel_judged_ret


KERNELS = {
    "num_ret": lambda q, p: _counts(q, p, "num_ret"), "num_rel": lambda q, p: _counts(q, p, "num_rel"),
    "num_rel_ret": lambda q, p: _counts(q, p, "num_rel_ret"), "map": _map, "gm_map": _gm_map,
    "Rprec": _rprec, "bpref": _bpref, "recip_rank": _recip_rank, "iprec_at_recall": _iprec, "P": _p,
    "recall": _recall, "infAP": _infap, "gm_bpref": _gm_bpref, "Rprec_mult": _rprec_mult,
    "utility": _utility, "11pt_avg": _11pt, "binG": _bin_g, "G": _g, "ndcg": _ndcg, "ndcg_rel": _ndcg_rel,
    "Rndcg": _rndcg, "ndcg_cut": _ndcg_cut, "map_cut": _map_cut, "relative_P": _relative_p,
    "success": _success, "set_P": lambda q, p: _set(q, p, "set_P"),
    "set_relative_P": lambda q, p: _set(q, p, "set_relative_P"),
    "set_recall": lambda q, p: _set(q, p, "set_recall"), "set_map": lambda q, p: _set(q, p, "set_map"),
    "set_F": _set_f, "num_nonrel_judged_ret": lambda q, p: _counts(q, p, "num_nonrel_judged_ret"),
    "rbp": _rbp, "rbp_resid": _rbp_resid, "unj": _unj,
}
# What trec_eval zeroes for a query that -c adds (its one-document stand-in ranking)
ZEROED_FOR_ADDED = ("num_ret", "utility", "unj", "rbp_resid")


def relstring(rl: np.ndarray, length: int) -> str:
    """trec_eval's relstring: the grades of the first ranks, '-' outside the qrels, '.' judged below 0,
    '>' above 9."""
    chars = []
    for r in rl[:max(min(length, len(rl)), 0)].tolist():
        chars.append(">" if r > 9 else str(r) if r >= 0 else "-" if r == NONPOOL else "." if r == UNJUDGED else "<")
    return "".join(chars)


def evaluate_query(rl: np.ndarray, rel_levels: list[int], plan, level: int, added: bool = False) -> list:
    """Every value of one query, in the plan's order: plan is [(root name, parsed parameters)]; a
    relstring entry gives its text, the rest floats (a list per root)."""
    q = Query(rl, rel_levels, level)
    out = []
    for name, params in plan:
        if name == "relstring":
            out.append(["" if added else relstring(rl, params)])
            continue
        values = KERNELS[name](q, params)
        if added and name in ZEROED_FOR_ADDED:
            values = [0.0] * len(values)
        out.append(values)
    return out
