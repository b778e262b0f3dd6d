"""trec_eval 10's measures, one query at a time, computed as its C code computes them.

`rankgate trec_eval` prints what trec_eval prints, digit for digit. A printed value is C's "%6.4f" of a
double, and a double that falls exactly half-way between two printed digits (0.04375) prints one way or
the other depending on its last bit; so each value here is the same double trec_eval computes: the same
operations in the same order (a running sum is a sequential sum, never a pairwise or compensated
one), the same libm (log2 and log through Python's math module), and the summary summed query by query
in trec_eval's order (queries sorted by ID as bytes) before one division. The engine (core/engine.py),
vectorised over all queries for `rankgate score`, agrees with this kernel to ~1e-12;
tests/unit/test_trec_eval_kernel.py checks the two against each other.

A query is its ranked list of relevance values (trec_eval's `results_rel_list`: the grade of each
ranked document, -1 for one outside the qrels, -2 for a judged grade below 0) and the count of its
judged documents per grade (`rel_levels`). Plain Python, no numpy: a running sum is a left fold
(`_total`, never `sum()`, which Python 3.12 compensates), and most measures walk only the relevant or
judged ranks, found with C-speed list tools; so the whole `rankgate trec_eval` imports neither numpy,
pyarrow nor the engine, and starts in about the time Python does.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from functools import reduce
from itertools import accumulate, compress
from operator import add

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


def log2_table(n: int) -> list[float]:
    """log2(k) for k = 0..n (at least), from libm one by one (as trec_eval calls it), grown when needed."""
    if len(_LOG2) <= n:
        _LOG2.extend(math.log2(k) for k in range(len(_LOG2), max(n + 1, 2 * len(_LOG2), 1024)))
    return _LOG2


def _total(values) -> float:
    """A sequential sum, as C's `sum += x` loop (0.0 when empty)."""
    return reduce(add, values, 0.0)


def _running(values) -> list[float]:
    """The running sequential sums."""
    return list(accumulate(values))


_ATOL = re.compile(r"[ \t\n\r\v\f]*([+-]?\d+)")
_ATOF = re.compile(r"[ \t\n\r\v\f]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
                   r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)


def atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def atof(text: str) -> float:
    m = _ATOF.match(text)
    if not m:
        return 0.0
    t = m.group(1)
    low = t.lower().lstrip("+-")
    if low.startswith("0x"):
        v = float.fromhex(t if "p" in low else t + "p0")
        return v
    return float(t)


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
    (the difference cast to int, so gains less than 1 apart compare equal) and glibc's merge sort."""
    gains = [[atol(name), value, 0] for name, value in pairs if _valid_int(name)]
    for level, count in enumerate(rel_levels):
        for g in gains:
            if g[0] == level:
                g[2] = count
                break
        else:
            gains.append([level, float(level), count])
    return _merge_sort(gains, lambda a, b: int(a[1] - b[1]))


def _merge_sort(items: list, cmp) -> list:
    """glibc's qsort for small arrays (msort: halves sorted, then merged taking the left on a tie): with
    a comparator that is not transitive, as trec_eval's gain comparator is, the order is its order."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = _merge_sort(items[:half], cmp), _merge_sort(items[half:], cmp)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


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

    def __init__(self, rl: list[int], rel_levels: list[int], level: int):
        self.rl, self.rel_levels, self.level = rl, rel_levels, level
        self.n = n = len(rl)
        self.num_rel = sum(rel_levels[max(level, 0):])
        self.relpos = list(compress(range(n), map(level.__le__, rl)))  # ranks (from 0) with grade >= level
        if level >= 0:
            self.num_rel_ret = len(self.relpos)
        else:
            self.num_rel_ret = sum(1 for r in rl if r >= 0)
        self.l2 = log2_table(max(n, sum(rel_levels)) + 3)
        self._ap = self._judged = self._unjudged = self._positive = self._best = None
        self._gains: dict = {}

    def rel_before(self, k: int) -> int:
        """Relevant documents ranked above k (trec_eval's rel_so_far at its cutoff k)."""
        return bisect_left(self.relpos, k)

    def ap_sums(self) -> list[float]:
        """Running sum of precision at each relevant document (trec_eval's `sum` in map)."""
        if self._ap is None:
            self._ap = _running(c / (i + 1) for c, i in enumerate(self.relpos, 1))
        return self._ap

    def outside(self) -> list[int]:
        """Ranks of documents outside the qrels or judged below 0."""
        if self._unjudged is None:
            self._unjudged = list(compress(range(self.n), map((0).__gt__, self.rl)))
        return self._unjudged

    def judged(self):
        """For bpref and infAP: the ranks of the judged relevant documents, and the ranks of the judged
        non-relevant ones and of the pooled-but-unjudged ones (-2)."""
        if self._judged is None:
            rl, level = self.rl, self.level
            rel_at = self.relpos if level >= 0 else [i for i in self.relpos if rl[i] >= 0]
            below = frozenset(range(level))  # judged grades under the relevance level
            nonrel = list(compress(range(self.n), map(below.__contains__, rl)))
            pooled = list(compress(range(self.n), map(UNJUDGED.__eq__, rl)))
            self._judged = (rel_at, nonrel, pooled)
        return self._judged

    def best_precision(self) -> list[float]:
        """Interpolated precision at each count c of relevant documents: the best precision at or below
        the c-th relevant one (c = 0: at or below the first; with none, the precision at the end)."""
        if self._best is None:
            start = _div(self.num_rel_ret, self.n)
            best = list(accumulate((c / (i + 1) for c, i in reversed(list(enumerate(self.relpos, 1)))), max,
                                   initial=start))
            best.reverse()  # best[k] is over the relevant documents k+1.. and the end: shift to 1-based c
            self._best = [best[0]] + best[:-1] if self.relpos else [start]
        return self._best

    def positive(self) -> list[int]:
        """Ranks of documents graded above 0."""
        if self._positive is None:
            self._positive = list(compress(range(self.n), map((0).__lt__, self.rl)))
        return self._positive

    def ranks_with(self, levels) -> list[int]:
        """Ranks of the documents whose grade is one of `levels`."""
        rl = self.rl
        if not levels:
            return []
        if min(levels) > 0:  # the usual case: walk only the documents graded above 0
            if all(g in levels for g in range(1, len(self.rel_levels))):
                return self.positive()  # every judged grade above 0 has a gain (a grade not judged is not ranked)
            return [i for i in self.positive() if rl[i] in levels]
        return [i for i in range(self.n) if rl[i] in levels]

    def gains(self, pairs):
        """For these parameters: the ideal's positive gains and their running DCG; the ranks whose gain
        is not 0, those gains, and the ranking's running DCG at those ranks."""
        key = tuple(pairs)
        if key not in self._gains:
            gains = setup_gains(pairs, self.rel_levels)
            ideal = _ideal(gains)
            table = {}
            for level, gain, _ in gains:
                table.setdefault(level, gain)  # get_gain: the first listed wins
            nonzero = {level: gain for level, gain in table.items() if gain != 0}
            rl, l2 = self.rl, self.l2
            at = self.ranks_with(nonzero)
            g = [nonzero[rl[i]] for i in at]
            dcg = _running(x / l2[i + 2] for x, i in zip(g, at))
            icum = _running(x / l2[i + 2] for i, x in enumerate(ideal))
            self._gains[key] = (ideal, icum, at, g, dcg)
        return self._gains[key]


def _before(at: list[int], running: list[float], k: int) -> float:
    """A running sum over some ranks, read just above rank k (0.0 when none)."""
    j = bisect_left(at, k)
    return running[j - 1] if j else 0.0


def _map(q: Query, _p) -> list[float]:
    return [q.ap_sums()[-1] / q.num_rel] if q.relpos else [0.0]


def _gm_map(q: Query, _p) -> list[float]:
    s = q.ap_sums()[-1] / q.num_rel if q.relpos else 0.0
    return [math.log(max(s, MIN_GEO_MEAN))]


def _rprec(q: Query, _p) -> list[float]:
    k = min(q.n, q.num_rel)
    return [q.rel_before(k) / q.num_rel] if k else [0.0]


def _bpref_sum(q: Query) -> float:
    rel_at, nonrel, _ = q.judged()
    if not rel_at:
        return 0.0
    num_nonrel = sum(q.rel_levels[:max(q.level, 0)])
    r = q.num_rel
    denom = float(min(num_nonrel, r))
    total = _total(1.0 - min(seen, r) / denom if seen else 1.0 for seen in (bisect_left(nonrel, i) for i in rel_at))
    return total / r if r else total


def _bpref(q: Query, _p) -> list[float]:
    return [_bpref_sum(q)]


def _gm_bpref(q: Query, _p) -> list[float]:
    return [math.log(max(_bpref_sum(q), MIN_GEO_MEAN))]


def _infap_term(j: int, r: int, nr: int, pu: int) -> float:
    if j == 0:
        return 1.0
    fj = float(j)
    return 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r - 1 + nr + pu) / fj) * (
        (r - 1 + INFAP_EPSILON) / (r - 1 + nr + 2 * INFAP_EPSILON))


def _infap(q: Query, _p) -> list[float]:
    rel_at, nonrel, pooled = q.judged()
    if not rel_at:
        return [0.0]
    total = _total(_infap_term(j, r, bisect_left(nonrel, j), bisect_left(pooled, j))
                   for r, j in enumerate(rel_at, 1))
    return [total / q.num_rel if q.num_rel else total]


def _recip_rank(q: Query, _p) -> list[float]:
    return [1.0 / (q.relpos[0] + 1)] if q.relpos else [0.0]


def _interpolated(q: Query, cutoffs: list[int], emit) -> None:
    """trec_eval's backward walk for interpolated precision: emit(index, value) for each cutoff (a
    number of relevant documents) in the order trec_eval reaches it; cutoffs above the relevant
    retrieved are never reached. Between two relevant documents precision falls, so the best
    precision at or below a rank is the best at the relevant ranks below it (or at the last rank)."""
    best = q.best_precision()  # best[c]: at or below the c-th relevant document; best[0]: overall
    cc = len(cutoffs) - 1
    while cc >= 0 and cutoffs[cc] > q.num_rel_ret:
        cc -= 1
    if cutoffs == sorted(cutoffs):  # trec_eval's own lists are sorted: each cutoff reached in turn
        for i in range(cc, -1, -1):
            emit(i, best[max(cutoffs[i], 0)])
        return
    for c in range(len(q.relpos), 0, -1):  # a list given out of order: trec_eval's walk, step by step
        while cc >= 0 and c == cutoffs[cc]:
            emit(cc, best[c])
            cc -= 1
    while cc >= 0:
        emit(cc, best[0])
        cc -= 1


def _iprec(q: Query, levels) -> list[float]:
    out = [0.0] * len(levels)
    _interpolated(q, [_lround(x * q.num_rel) for x in levels], out.__setitem__)
    return out


def _11pt(q: Query, levels) -> list[float]:
    reached: list[float] = []
    _interpolated(q, [_lround(x * q.num_rel) for x in levels], lambda _i, v: reached.append(v))
    return [_total(reached) / len(levels)]


def _p(q: Query, cuts) -> list[float]:
    return [q.rel_before(k) / k for k in cuts]


def _recall(q: Query, cuts) -> list[float]:
    return [q.rel_before(k) / q.num_rel for k in cuts] if q.num_rel else [0.0] * len(cuts)


def _relative_p(q: Query, cuts) -> list[float]:
    return [q.rel_before(k) / min(k, q.num_rel) for k in cuts] if q.num_rel else [0.0] * len(cuts)


def _success(q: Query, cuts) -> list[float]:
    return [1.0 if q.rel_before(k) else 0.0 for k in cuts]


def _map_cut(q: Query, cuts) -> list[float]:
    if not q.num_rel:
        return [0.0] * len(cuts)
    ap = q.ap_sums()
    return [(ap[r - 1] if r else 0.0) / q.num_rel for r in map(q.rel_before, cuts)]


def _unj(q: Query, cuts) -> list[float]:
    out = q.outside()
    return [bisect_left(out, k) / k for k in cuts]


def _rprec_mult(q: Query, levels) -> list[float]:
    res = []
    for x in levels:
        c = int(x * q.num_rel + 0.9)
        res.append(q.num_rel_ret / c if c > q.n else q.rel_before(c) / c if c > 0 else 0.0)
    return res


def _utility(q: Query, c) -> list[float]:
    nrr, n, r = q.num_rel_ret, q.n, q.num_rel
    return [c[0] * nrr + c[1] * (n - nrr) + c[2] * (r - nrr) + c[3] * (0 + nrr - n - r)]


def _bin_g(q: Query, _p) -> list[float]:
    if not q.relpos:
        return [0.0]
    l2 = q.l2
    return [_total(1.0 / l2[3 + i - c] for c, i in enumerate(q.relpos, 1)) / q.num_rel]


def _g(q: Query, pairs) -> list[float]:
    ideal, _, at, g, _ = q.gains(pairs)
    if not q.n or not at:
        return [0.0]
    costs = [x if x >= 1.0 else 1.0 for x in ideal[:at[-1] + 1]]
    costs += [1.0] * (at[-1] + 1 - len(costs))
    cost = _running(costs)
    got = _running(g)
    total = _total(x / math.log2(2 + cost[i] - s) for x, i, s in zip(g, at, got))
    sum_ideal = _total(ideal)
    return [total / sum_ideal if sum_ideal > 0.0 else 0.0]


def _ndcg(q: Query, pairs) -> list[float]:
    _, icum, _, _, dcg = q.gains(pairs)
    ideal = icum[-1] if icum else 0.0
    return [(dcg[-1] if dcg else 0.0) / ideal if ideal > 0.0 else 0.0]


def _ndcg_rel(q: Query, pairs) -> list[float]:
    ideal, icum, at, g, dcg = q.gains(pairs)
    L = len(ideal)
    hits = [(i, d) for i, x, d in zip(at, g, dcg) if x > 0]
    total = _total(_div(d, icum[min(i, L - 1)] if L else 0.0) for i, d in hits)
    final_dcg = dcg[-1] if dcg else 0.0
    final_ideal = icum[-1] if L else 0.0
    total += _div(float(L - len(hits)) * final_dcg, final_ideal)
    return [_div(total, L) if total > 0.0 else 0.0]


def _rndcg(q: Query, pairs) -> list[float]:
    """nDCG averaged at each rank where the ideal ranking's gain changes (trec_eval's m_Rndcg.c),
    with its quirks: past a short ranking the points go on with the ranking's final DCG, and a
    ranking longer than the ideal's positive part by more than one adds a point at its end."""
    if q.num_rel == 0:
        return [0.0]
    ideal, icum, at, _, dcg = q.gains(pairs)
    L = len(ideal)
    total, count = 0.0, 0
    for b in range(1, L + 1):  # ideal gain at b differs from the one at b - 1 (past L: 0, a change)
        if b < L and ideal[b] == ideal[b - 1]:
            continue
        if icum[b - 1] > 0.0:
            total += _before(at, dcg, min(b, q.n)) / icum[b - 1]
            count += 1
    if q.n > L + 1 and L and icum[-1] > 0.0:
        total += _before(at, dcg, q.n) / icum[-1]
        count += 1
    return [_div(total, count)]


def _ndcg_cut(q: Query, cuts) -> list[float]:
    rl, l2 = q.rl, q.l2
    at = q.positive()
    dcg = _running(rl[i] / l2[i + 2] for i in at)
    levels = q.rel_levels
    ideal = [lvl for lvl in range(len(levels) - 1, 0, -1) for _ in range(levels[lvl])]
    icum = _running(x / l2[i + 2] for i, x in enumerate(ideal))
    out = []
    for k in cuts:
        v = _before(at, dcg, k)
        j = min(k, len(ideal))
        i = icum[j - 1] if j else 0.0
        out.append(v / i if i > 0.0 else v)
    return out


def _rbp_p(pairs) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


_PERSIST: dict[float, list[float]] = {}


def _persistence(p: float, n: int) -> list[float]:
    """1, p, p*p, ... as trec_eval multiplies them, one rank at a time (a running product: its first n
    values do not depend on how many follow, so one table per p serves every query)."""
    w = _PERSIST.get(p)
    if w is None or len(w) < n:
        w = _PERSIST[p] = list(accumulate([p] * max(n, 1024), lambda a, b: a * b, initial=1.0))
    return w


def _rbp(q: Query, pairs) -> list[float]:
    p = _rbp_p(pairs)
    gains = setup_gains(pairs, q.rel_levels)
    lo = hi = 0.0  # trec_eval leaves these unset; 0 is what it reads, and what rankgate's engine assumes
    for _, gain, _ in gains:
        lo, hi = min(lo, gain), max(hi, gain)
    w = _persistence(p, q.n)
    if lo < 0 or hi > 1:  # gains outside 0..1 are scaled into it
        table = {}
        for level, gain, _ in gains:
            table.setdefault(level, (gain - lo) / (hi - lo))
        table = {level: gain for level, gain in table.items() if gain != 0}
        rl = q.rl
        total = _total(table[rl[i]] * w[i] for i in q.ranks_with(table))
    else:
        _, _, at, g, _ = q.gains(pairs)
        total = _total(x * w[i] for x, i in zip(g, at))
    return [(1.0 - p) * total]


def _rbp_resid(q: Query, pairs) -> list[float]:
    p = _rbp_p(pairs)
    out = q.outside()
    if not out:
        return [0.0]
    w = _persistence(p, q.n + 1)
    return [w[q.n] + (1 - p) * _total(map(w.__getitem__, out))]


def _set(q: Query, which: str) -> list[float]:
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


def _counts(q: Query, which: str) -> list[float]:
    if which == "num_ret":
        return [float(q.n)]
    if which == "num_rel":
        return [float(q.num_rel)]
    if which == "num_rel_ret":
        return [float(q.num_rel_ret)]
    return [float(q.n - len(q.outside()) - q.num_rel_ret)]  # num_nonrel_judged_ret


KERNELS = {
    "num_ret": lambda q, p: _counts(q, "num_ret"), "num_rel": lambda q, p: _counts(q, "num_rel"),
    "num_rel_ret": lambda q, p: _counts(q, "num_rel_ret"), "map": _map, "gm_map": _gm_map,
    "Rprec": _rprec, "bpref": _bpref, "recip_rank": _recip_rank, "iprec_at_recall": _iprec, "P": _p,
    "recall": _recall, "infAP": _infap, "gm_bpref": _gm_bpref, "Rprec_mult": _rprec_mult,
    "utility": _utility, "11pt_avg": _11pt, "binG": _bin_g, "G": _g, "ndcg": _ndcg, "ndcg_rel": _ndcg_rel,
    "Rndcg": _rndcg, "ndcg_cut": _ndcg_cut, "map_cut": _map_cut, "relative_P": _relative_p,
    "success": _success, "set_P": lambda q, p: _set(q, "set_P"),
    "set_relative_P": lambda q, p: _set(q, "set_relative_P"), "set_recall": lambda q, p: _set(q, "set_recall"),
    "set_map": lambda q, p: _set(q, "set_map"), "set_F": _set_f,
    "num_nonrel_judged_ret": lambda q, p: _counts(q, "num_nonrel_judged_ret"),
    "rbp": _rbp, "rbp_resid": _rbp_resid, "unj": _unj,
}
# What trec_eval zeroes for a query that -c adds (its one-document stand-in ranking)
ZEROED_FOR_ADDED = ("num_ret", "utility", "unj", "rbp_resid")


def relstring(rl: list[int], length: int) -> str:
    """trec_eval's relstring: the grades of the first ranks, '-' outside the qrels, '.' judged below 0,
    '>' above 9."""
    return "".join(">" if r > 9 else str(r) if r >= 0 else "-" if r == NONPOOL else "." if r == UNJUDGED else "<"
                   for r in rl[:max(min(length, len(rl)), 0)])


def evaluate_query(rl: list[int], rel_levels: list[int], plan, level: int, added: bool = False) -> list:
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
