"""Bounds and stability: would the gate say the same if the unjudged documents were judged?

The engine scores a document nobody judged as not relevant. This module asks
what each measure and each check would be under other answers, within the
depth the measure sees (its cut-off; a measure without one, such as AP, is
bounded at the runs' depth, and the report says so). Four scenarios, each a
set of grades for the unjudged documents of both runs' rankings at that depth:

- "none": every one judged not relevant (grade 0);
- "all": every one judged relevant, at the lowest relevant grade (the level);
- "for_candidate": those the candidate ranks higher than the baseline (or only
  the candidate ranks) relevant, the others not;
- "for_baseline": the other way round.

A check is *stable* when it has its current outcome in every scenario;
otherwise it *could flip*. Its documents to judge are the shortest prefix of
its unjudged documents, most decisive for it first (the review queue's
what-ifs: those whose own label flips it, then those that move its measure
the wrong way), such that with those left as they are the check keeps its
outcome in the scenarios that flipped it: if they come back not relevant, the
check holds. The prefix is found by bisection, deciding that check alone on its
measures; exact up to SLACK documents, at most 1/SLACK more beyond. The
decision could flip when it accepts and a check could flip, or when it rejects
and every failing check could flip. Scenarios are extremes, not every
labelling: a check stable here can still move when some documents are
relevant and others not.

Stage checks (`stage_recall_floor`, `no_stage_loss`) read the pipelines' stage
files, not the runs: they are bounded on the documents nobody judged in those
stages, exactly (`stage_stability`). Budgets, waivers and permission leaks do
not depend on labels. Each what-if computes a measure with a cut-off on the
rows within it only (`within_depth`), and only a check that could flip looks
for documents to judge. The gate skips all of this with `stability = false`.

    st = stability(paired, policy, decision, qrels.catalog.docs.names, order=queue)
    st.stable, st.to_judge, st.as_dict()
"""

from __future__ import annotations

from dataclasses import field, replace
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: a path that does not use it does not pay for it
    import numpy as np

from rankgate.core.compare import Paired, _top_k_counts
from rankgate.core.decision import decide, macro_keys, extra_measures, rule_slices
from rankgate.core.engine import UNJUDGED, Prepared, per_query
from rankgate.core.measures import DEPTH_FAMILIES, Measure
from rankgate.core.model import unique

SCENARIOS = {
    "none": "every unjudged document within the depth judged not relevant",
    "all": "every unjudged document within the depth judged relevant (at the lowest relevant grade)",
    "for_candidate": "those the candidate ranks higher relevant, the rest not",
    "for_baseline": "those the baseline ranks higher relevant, the rest not",
}
LABEL_FREE = ("budget",)  # check kinds no label can move
STAGE_KINDS = ("stage_recall_floor", "no_stage_loss")  # bounded on the pipelines' stages (stage_stability)
SHIFT = 1 << 32
SHOWN = 10  # documents named in a one-line summary
LISTED = 100  # documents to judge listed in the JSON (the total is given beside them)
SLACK = 64  # the documents to judge are the fewest, or (beyond SLACK of them) at most 1/SLACK more
UNCUT_DEPTH = 100  # a measure without a cut-off is bounded at the runs' depth, at most this deep


def measure_depth(m: Measure) -> int | None:
    """How deep a measure looks into a ranking (None: the whole ranking)."""
    if m.family in DEPTH_FAMILIES and m.cutoff is not None:
        return int(m.cutoff)
    return None


@dataclass
class CheckStability:
    name: str
    passed: bool
    stable: bool
    depth: int | None  # None: no labels move it (budgets, waivers)
    unjudged: int  # unjudged documents within its depth (its slice's queries)
    outcomes: dict[str, bool] = field(default_factory=dict)  # scenario -> passed
    to_judge: list[tuple[str, str]] = field(default_factory=list)

    def why(self) -> str:
        if self.stable:
            return "stable"
        n = len(self.to_judge)
        return f"could flip: judge {'this document' if n == 1 else f'these {n} documents'}"

    def as_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "stable": self.stable, "depth": self.depth,
                "unjudged": self.unjudged, "outcomes": dict(self.outcomes), "to_judge": listed(self.to_judge),
                "to_judge_total": len(self.to_judge), "why": self.why()}


@dataclass
class Stability:
    accepted: bool
    could_flip: bool
    checks: list[CheckStability]
    measures: dict[str, dict]
    runs_depth: int
    to_judge: list[tuple[str, str]] = field(default_factory=list)

    @property
    def stable(self) -> bool:
        return not self.could_flip

    def check(self, name: str) -> CheckStability | None:
        return next((c for c in self.checks if c.name == name), None)

    def summary(self) -> str:
        """One line: "stable" or "could flip: judge these 2 documents: q/d, q/d"."""
        if self.stable:
            return "stable: no answer for the unjudged documents within each measure's depth changes the decision"
        return f"could flip: judge {plural_docs(len(self.to_judge))}: {doc_list(self.to_judge)}"

    def as_dict(self) -> dict:
        return {"stable": self.stable, "decision_could_flip": self.could_flip, "summary": self.summary(),
                "to_judge": listed(self.to_judge), "to_judge_total": len(self.to_judge),
                "runs_depth": self.runs_depth, "scenarios": dict(SCENARIOS),
                "measures": self.measures, "checks": [c.as_dict() for c in self.checks]}


def listed(pairs: list[tuple[str, str]], limit: int = LISTED) -> list[dict]:
    """The first `limit` documents to judge as JSON objects."""
    return [{"query": q, "doc": d} for q, d in pairs[:limit]]


def plural_docs(n: int) -> str:
    return "this document" if n == 1 else f"these {n} documents"


def doc_list(pairs: list[tuple[str, str]], shown: int = SHOWN) -> str:
    from rankgate.core.text import visible

    out = ", ".join(f"{visible(q)}/{visible(d)}" for q, d in pairs[:shown])
    return out + (f" and {len(pairs) - shown} more" if len(pairs) > shown else "")


# ---- scenarios -------------------------------------------------------------------------------------

def _keys(pr: Prepared) -> np.ndarray:
    import numpy as np
    return pr.qp.astype(np.int64) * np.int64(SHIFT) + pr.doc.astype(np.int64)


def unjudged_keys(p: Paired, depth: int | None) -> np.ndarray:
    """(query position << 32 | document code) of the unjudged documents in either run's top `depth`."""
    import numpy as np
    parts = []
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        sel = pr.grade == UNJUDGED
        if depth is not None:
            sel &= pr.rank < depth
        parts.append(_keys(pr)[sel])
    return unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)  # np.unique would load numpy.ma


def _ranks(p: Paired, keys: np.ndarray) -> dict[str, np.ndarray]:
    """Each run's 0-based rank of each key (a large number when it does not rank it)."""
    import numpy as np
    out = {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        got = p._cache.get(("bounds-sorted", role))
        if got is None:  # each run's rows by key, once per Paired
            rk = _keys(pr)
            order = np.argsort(rk, kind="stable")
            got = p._cache[("bounds-sorted", role)] = (order, rk[order])
        order, srk = got
        r = np.full(len(keys), np.iinfo(np.int64).max // 2, np.int64)
        if len(srk):
            at = np.minimum(np.searchsorted(srk, keys), len(srk) - 1)
            found = srk[at] == keys
            r[found] = pr.rank[order[at[found]]]
        out[role] = r
    return out


def scenario_grades(p: Paired, keys: np.ndarray, scenario: str) -> np.ndarray:
    """The grade each unjudged key gets in a scenario."""
    import numpy as np
    hi = int(p.rel_level)
    lo = min(0, hi - 1)
    if scenario == "none":
        return np.full(len(keys), lo, np.int64)
    if scenario == "all":
        return np.full(len(keys), hi, np.int64)
    r = _ranks(p, keys)
    better = r["candidate"] < r["baseline"] if scenario == "for_candidate" else r["baseline"] < r["candidate"]
    return np.where(better, hi, lo).astype(np.int64)


class RowIndex:
    """Where the unjudged keys (sorted) sit in each run's rows, found once for many relabellings."""

    def __init__(self, p: Paired, keys: np.ndarray):
        import numpy as np
        self.rows, self.at = {}, {}
        for role in ("baseline", "candidate"):
            pr = p.prepared[role]
            u = np.flatnonzero(pr.grade == UNJUDGED)
            if not len(keys) or not len(u):
                self.rows[role], self.at[role] = u[:0], u[:0]
                continue
            rk = _keys(pr)[u]
            at = np.minimum(np.searchsorted(keys, rk), len(keys) - 1)
            found = keys[at] == rk
            self.rows[role], self.at[role] = u[found], at[found]


def within_depth(p: Paired, role: str, depth: int | None) -> tuple[Prepared, np.ndarray | None]:
    """One run's rows ranked within `depth` as a Prepared (each query's num_ret stays the whole ranking's),
    and for each row of the whole run its row there (-1: deeper); (the whole, None) when nothing is deeper.
    A measure with a cut-off reads nothing below it (DEPTH_FAMILIES), so its what-ifs need only these rows.
    Made once per Paired."""
    import numpy as np
    pr = p.prepared[role]
    if depth is None:
        return pr, None
    key = ("bounds-within", role, depth)
    got = p._cache.get(key)
    if got is None:
        inside = pr.rank < depth
        if inside.all():
            got = (pr, None)
        else:
            rows = np.flatnonzero(inside)
            where = np.full(len(pr.rank), -1, np.int64)
            where[rows] = np.arange(len(rows))
            got = (Prepared(pr.qids, pr.nq, pr.qp[rows], pr.rank[rows], pr.grade[rows], pr.doc[rows], pr.num_ret,
                            pr.qrels_qp, pr.qrels_grade, pr.rel_level, pr.compat), where)
        p._cache[key] = got
    return got


def _appended(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.r_[a, b].astype(a.dtype): with integers, b cast and appended, not every value of a copied to the wider
    type and back (a gate's what-ifs append to each run's judgments some 40 times)."""
    import numpy as np
    if np.result_type(a, b).kind in "iu":  # a round-trips through the wider integer type; b's cast is the same
        return np.concatenate([a, b.astype(a.dtype)])
    return np.r_[a, b].astype(a.dtype)


def relabel(p: Paired, keys: np.ndarray, grades: np.ndarray, measures: list[Measure] | None = None, *,
            index: RowIndex | None = None, keep: np.ndarray | None = None, counts: bool = True) -> Paired:
    """`p` re-scored with the unjudged `keys` (sorted, unique) judged `grades`, both runs; every measure,
    or `measures`. `keep`: only those keys (a mask); `index`: RowIndex(p, keys), when reused; `counts`:
    also the judged share of the top k (else p's, for a check that does not read it). Each measure is
    computed on the rows within its cut-off only (`within_depth`); the result's `prepared` holds the
    rows the deepest of them reads."""
    import numpy as np
    measures = list(p.measures) if measures is None else measures
    if keep is None:
        keep = np.ones(len(keys), bool)
    if not keep.any():
        return p
    index = index or RowIndex(p, keys)
    groups: dict[int | None, list[Measure]] = {}
    for m in measures:
        groups.setdefault(measure_depth(m), []).append(m)
    if counts and not any(d is None or d >= p.k for d in groups):
        groups[p.k] = []  # the judged share of the top k reads the top k
    deepest = None if None in groups else max(groups)
    values, prepared = {}, {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        rows, at = index.rows[role], index.at[role]
        sel = keep[at]
        rows, new_grades = rows[sel], grades[at[sel]]
        qrels_qp = _appended(pr.qrels_qp, keys[keep] >> 32)
        qrels_grade = _appended(pr.qrels_grade, grades[keep])
        got: dict[Measure, np.ndarray] = {}
        for depth, ms in groups.items():
            base, where = within_depth(p, role, depth)
            r = rows if where is None else where[rows]
            ok = r >= 0
            g = base.grade.copy()
            g[r[ok]] = new_grades[ok]
            new = Prepared(base.qids, base.nq, base.qp, base.rank, g, base.doc, base.num_ret, qrels_qp, qrels_grade,
                           base.rel_level, base.compat)
            for m in ms:
                got[m] = per_query(new, m)
            if depth == deepest:
                prepared[role] = new
        values[role] = {m: got[m] for m in measures}
    kept = {key: v for key, v in p._cache.items() if key == "position" or (isinstance(key, tuple) and key[0] == "mask")}
    out = replace(p, measures=measures, baseline=values["baseline"], candidate=values["candidate"],
                  prepared=prepared, judged=dict(p.judged), ranked=dict(p.ranked), _cache=kept)  # labels move neither
    if counts:
        for role in ("baseline", "candidate"):
            out.judged[role], out.ranked[role] = _top_k_counts(prepared[role], p.k)
    return out


# ---- which checks look how deep -------------------------------------------------------------------

@dataclass
class _Scope:
    """What one check looks at: how deep, whether labels move it, its slice, its measure, and a policy
    with that check alone (so a what-if decides only it)."""

    depth: int | None
    moved: bool
    mask: np.ndarray | None = None
    measure: Measure | None = None
    policy: object = None
    rule: object = None  # a stage check's rule (its stages are bounded apart: stage_stability)


def _check_scopes(p: Paired, policy, dec) -> dict[str, _Scope]:
    runs_depth = runs_depth_of(p)
    family = policy.correction != "none"  # adjusted p-values need every test of the gate: keep them all
    out = {}
    for rule in policy.effective_rules():
        for s in rule_slices(rule, p) or ["*"]:
            name = rule.name if s is None else f"{rule.name}[{s}]"
            if name not in dec.checks:
                continue
            if rule.kind in LABEL_FREE or s == "*":
                out[name] = _Scope(None, False)
                continue
            if rule.kind in STAGE_KINDS:
                out[name] = _Scope(None, False, rule=rule)
                continue
            d = measure_depth(rule.measure) if rule.measure is not None else p.k
            alone = policy if family and rule.kind == "no_significant_regression" else \
                replace(policy, rules=[replace(rule, slices=() if s is None else (s,))], must_pass=[])
            out[name] = _Scope(runs_depth if d is None else d, True, None if s is None else p.mask(s),
                               rule.measure or p.hit, alone)
    if "must_pass_queries_hit" in dec.checks:
        out["must_pass_queries_hit"] = _Scope(p.k, True, None, p.hit, replace(policy, rules=[]))
    for name in dec.checks:
        out.setdefault(name, _Scope(None, False))
    return out


def runs_depth_of(p: Paired) -> int:
    """How deep a measure without a cut-off is bounded: the longest ranking of the two runs, at most
    UNCUT_DEPTH (the fast reader keeps the unjudged documents that deep, cli/evaluate.py)."""
    deepest = max((int(p.prepared[r].num_ret.max()) if len(p.prepared[r].num_ret) else 0)
                  for r in ("baseline", "candidate"))
    return min(deepest, UNCUT_DEPTH)


class _Scenarios:
    """Each scenario's re-scored Paired per depth, made once (the checks' outcomes and the measures'
    bounds both read them)."""

    def __init__(self, p: Paired):
        self.p = p
        self.keys: dict = {}
        self.done: dict = {}

    def keys_for(self, depth: int | None) -> np.ndarray:
        if depth not in self.keys:
            self.keys[depth] = unjudged_keys(self.p, depth)
        return self.keys[depth]

    def index(self, depth: int | None) -> RowIndex:
        if ("index", depth) not in self.done:
            self.done[("index", depth)] = RowIndex(self.p, self.keys_for(depth))
        return self.done[("index", depth)]

    def grades(self, scenario: str, depth: int | None) -> np.ndarray:
        if ("grades", scenario, depth) not in self.done:
            self.done[("grades", scenario, depth)] = scenario_grades(self.p, self.keys_for(depth), scenario)
        return self.done[("grades", scenario, depth)]

    def paired(self, scenario: str, depth: int | None) -> Paired:
        if (scenario, depth) not in self.done:
            self.done[(scenario, depth)] = relabel(self.p, self.keys_for(depth), self.grades(scenario, depth),
                                                   index=self.index(depth))
        return self.done[(scenario, depth)]


def _outcomes(scen: _Scenarios, policy, dec, depth, cache: dict) -> dict[str, dict[str, bool]]:
    """Scenario -> the checks' outcomes, with the unjudged documents within `depth` judged as it says."""
    if depth not in cache:
        cache[depth] = {sc: decide(policy, scen.paired(sc, depth), as_of=dec.as_of).checks for sc in SCENARIOS}
    return cache[depth]


def stability(p: Paired, policy, dec, docnames: list[str], *, order=None) -> Stability:
    """Bounds of every gated measure and the stability of every check (see the module's doc).
    `docnames`: the catalog's document names (qrels.catalog.docs.names). `order`: the gate's review
    queue (core.queue.GateQueue), whose what-ifs order the documents to judge; without it, must-pass
    queries first, then the best rank."""
    import numpy as np
    runs_depth = runs_depth_of(p)
    scopes = _check_scopes(p, policy, dec)
    cache: dict = {}
    scen = _Scenarios(p)
    keys_for = scen.keys_for

    checks: list[CheckStability] = []
    for name, now in dec.checks.items():
        sc_ = scopes[name]
        if sc_.rule is not None:
            waived = {w.query for w in policy.waivers if not w.expired(dec.as_of)}
            checks.append(stage_stability(p, sc_.rule, name, now, set(policy.must_pass), waived))
            continue
        if not sc_.moved:
            checks.append(CheckStability(name, now, True, None, 0, {sc: now for sc in SCENARIOS}))
            continue
        keys = keys_for(sc_.depth)
        mine = keys if sc_.mask is None else keys[sc_.mask[(keys >> 32).astype(np.int64)]]
        outs = _outcomes(scen, policy, dec, sc_.depth, cache)
        per = {sc: bool(o[name]) for sc, o in outs.items()}
        stable = all(v == now for v in per.values())
        c = CheckStability(name, now, stable, sc_.depth, len(mine), per)
        if not stable:
            flipping = [sc for sc, v in per.items() if v != now]
            c.to_judge = _to_judge(p, dec, name, now, scen, mine, _order_for(order, name, sc_.measure, now, p),
                                   sc_, flipping, docnames, set(policy.must_pass))
        checks.append(c)
    failing = [c for c in checks if not c.passed]
    if dec.accepted:
        movers = [c for c in checks if not c.stable]
    else:
        movers = failing if all(not c.stable for c in failing) else []
    to_judge = list(dict.fromkeys(x for c in movers for x in c.to_judge))
    return Stability(dec.accepted, bool(movers), checks, measure_bounds(p, policy, scen, runs_depth),
                     runs_depth, to_judge)


def _order_for(order, name: str, measure: Measure | None, passed: bool, p: Paired) -> tuple[np.ndarray, np.ndarray]:
    """The review queue's documents in their order for one check, as (sorted keys, place of each): those
    whose own what-if flips it first, then those that move its measure's delta the way that could flip
    it (down when it passes), most first, then the queue's order. Read from the queue's arrays."""
    import numpy as np
    if order is None or not len(order):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos = {q: i for i, q in enumerate(p.qids)}
    qmap = np.array([pos.get(q, -1) for q in order._qids], np.int64)
    keys = qmap[order.qp] * np.int64(SHIFT) + order.doc.astype(np.int64)
    n = len(keys)
    flips = order.flipped[:, order.checks.index(name)] if name in order.checks else np.zeros(n, bool)
    eff = order.effects.get(measure.name) if measure is not None else None
    move = np.zeros(n) if eff is None else np.maximum((-1.0 if passed else 1.0) * eff, 0.0)
    place = np.empty(n, np.int64)
    place[np.lexsort((np.arange(n), -move, ~flips))] = np.arange(n)
    srt = np.argsort(keys, kind="stable")
    return keys[srt], place[srt]


def _to_judge(p: Paired, dec, name: str, now: bool, scen, mine: np.ndarray, rank_of, scope: _Scope,
              scenarios: list[str], dn: list[str], must: set[str]) -> list[tuple[str, str]]:
    """The shortest prefix of the check's unjudged documents (most decisive first) that, left as they
    are, keeps the check's outcome in the scenarios that flipped it (found by bisection, deciding that
    check alone on its measures)."""
    import numpy as np
    okeys, oplace = rank_of
    place = np.full(len(mine), len(okeys), np.int64)
    if len(okeys):
        at = np.minimum(np.searchsorted(okeys, mine), len(okeys) - 1)
        found = okeys[at] == mine
        place[found] = oplace[at[found]]
    ranks = _ranks(p, mine)
    best = np.minimum(ranks["baseline"], ranks["candidate"])
    mq = np.array([p.qids[int(q)] in must for q in (mine >> 32).tolist()], bool)
    idx = np.lexsort((mine, best, ~mq, place))
    ms = list(dict.fromkeys([p.hit] + ([scope.measure] if scope.measure is not None else [])))
    keys = scen.keys_for(scope.depth)
    grades = {sc: scen.grades(sc, scope.depth) for sc in scenarios}
    index = scen.index(scope.depth)
    where = np.searchsorted(keys, mine)  # mine is a subset of keys, both sorted
    counts = any(r.kind == "judged" for r in scope.policy.effective_rules())

    def holds(j: int) -> bool:
        keep = np.ones(len(keys), bool)
        keep[where[idx[:j]]] = False
        for sc in scenarios:
            q = relabel(p, keys, grades[sc], ms, index=index, keep=keep, counts=counts)
            if bool(decide(scope.policy, q, as_of=dec.as_of).checks.get(name, now)) != now:
                return False
        return True

    lo, hi = 0, len(idx)  # holds(hi) is true: nothing of this check's is left to assume
    while hi - lo > hi // SLACK:  # exact up to SLACK documents; within 1/SLACK of the fewest above
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return [(p.qids[int(k >> 32)], dn[int(k & (SHIFT - 1))]) for k in mine[idx[:hi]].tolist()]


def measure_bounds(p: Paired, policy, scen: _Scenarios, runs_depth: int) -> dict[str, dict]:
    """Per gated macro: its depth, how many unjudged documents lie within it, and the baseline's,
    the candidate's and the delta's value now, with none and with all of them relevant."""
    out = {}
    for key, m in macro_keys(p.k, extra_measures(policy)):
        d = measure_depth(m)
        depth = runs_depth if d is None else d
        keys = scen.keys_for(depth)
        note = f"at its cut-off {d}"
        if d is None:
            most = ", the most looked at" if runs_depth == UNCUT_DEPTH else ""
            note = f"{m.name} has no cut-off: bounded at the runs' depth ({runs_depth}{most})"
        entry = {"depth": depth, "depth_note": note, "unjudged": int(len(keys))}
        for role in ("baseline", "candidate"):
            entry[role] = {"now": p.macro(role, m), "none": scen.paired("none", depth).macro(role, m),
                           "all": scen.paired("all", depth).macro(role, m)}
        entry["delta"] = {sc: entry["candidate"][sc] - entry["baseline"][sc] for sc in ("now", "none", "all")}
        out[key] = entry
    return out


# ---- stage checks: bounded on the pipelines' stages ---------------------------------------------------

def _stage_recalls(f, stage: int, queries: list[str], unjudged: set[tuple[str, str]]) -> tuple[float, float]:
    """The candidate's macro recall at one stage (as Funnel.recall) at its lowest and its highest when the
    `unjudged` (query, doc) pairs of its stages may be relevant: lowest when those the stage lacks are and
    those it holds are not, highest the other way round. Each is exact: a query's recall is moved alone,
    and a query with no relevant document yet joins the mean at 0 (lowest) or 1 (highest)."""
    name = f.stages[stage]
    lows, highs = [], []
    for q in queries:
        ps = f.paths.get(q, [])
        rel, kept = len(ps), sum(p.ranks[stage] is not None for p in ps)
        here = {d for d in f.unjudged.get(name, {}).get(q, ()) if (q, d) in unjudged}
        anywhere = {d for s in f.stages for d in f.unjudged.get(s, {}).get(q, ()) if (q, d) in unjudged}
        away = len(anywhere - here)
        if rel + away:
            lows.append(kept / (rel + away))
        if rel + len(here):
            highs.append((kept + len(here)) / (rel + len(here)))
    return (sum(lows) / len(lows) if lows else 0.0), (sum(highs) / len(highs) if highs else 0.0)


def stage_stability(p: Paired, rule, name: str, now: bool, must: set[str], waived: set[str] = frozenset()
                    ) -> CheckStability:
    """A stage check's stability. Labels move it: a stage's recall counts the relevant documents at that
    stage out of all a query has, so an unjudged document in any stage of the candidate's pipeline could
    change it (`stage_recall_floor`), and an unjudged document the baseline keeps at a stage where the
    candidate lacks it would be a loss if relevant (`no_stage_loss`, which nothing unjudged can make
    pass). Bounded exactly on the stage files' documents nobody judged (Funnel.unjudged); its depth is the
    deepest stage's. "for_candidate"/"for_baseline" are the labellings most favourable to either. `waived`:
    must-pass queries whose waiver holds (their losses do not count)."""
    from rankgate.core.decision import EPS

    c, b = p.funnels.get("candidate"), p.funnels.get("baseline")
    if c is None or (rule.kind == "stage_recall_floor" and rule.stage not in c.stages) or \
            (rule.kind == "no_stage_loss" and b is None):  # the check says why it cannot be decided
        return CheckStability(name, now, True, None, 0, {sc: now for sc in SCENARIOS})
    depth = max((d if d is not None else max((len(v) for v in c.unjudged.get(s, {}).values()), default=0))
                for s, d in zip(c.stages, c.depths))
    qids = list(p.qids)
    if rule.kind == "no_stage_loss":
        common = [s for s in c.stages if s in b.stages and (not rule.stage or s == rule.stage)]
        risky = list(dict.fromkeys((q, d) for q in qids if q in must and q not in waived for s in common
                                   for d in b.unjudged.get(s, {}).get(q, ())
                                   if d not in c.unjudged.get(s, {}).get(q, ())))
        worst = now and not risky
        out = {"none": now, "all": worst, "for_candidate": now, "for_baseline": worst}
        st = CheckStability(name, now, all(v == now for v in out.values()), depth, len(risky), out)
        st.to_judge = [] if st.stable else risky  # any one of them relevant is a loss: each must be judged
        return st
    i = c.stages.index(rule.stage)
    pool = [(q, d) for q in qids for d in dict.fromkeys(d for s in c.stages for d in c.unjudged.get(s, {}).get(q, ()))]
    everyone = set(pool)
    low, high = _stage_recalls(c, i, qids, everyone)
    ok = lambda r: r >= rule.floor - EPS  # noqa: E731  (as decision._stage_recall_check)
    here = {(q, d) for q in qids for d in c.unjudged.get(rule.stage, {}).get(q, ())}
    n_all = _all_relevant_recall(c, i, qids)
    out = {"none": now, "all": ok(n_all), "for_candidate": ok(high), "for_baseline": ok(low)}
    st = CheckStability(name, now, all(v == now for v in out.values()), depth, len(pool), out)
    if st.stable:
        return st
    # Most decisive first: for a pass, the documents the stage lacks (each one relevant lowers its recall),
    # for a fail those it holds; by how much their query's recall could move, then IDs. The shortest prefix
    # that, left not relevant, keeps the outcome at the extreme that flipped it (found by bisection).
    wanted = [x for x in pool if (x in here) != now]
    share = {}
    for q, d in wanted:
        share[q] = share.get(q, 0) + 1
    wanted.sort(key=lambda x: (-share[x[0]], x))

    def holds(j: int) -> bool:
        lo, hi = _stage_recalls(c, i, qids, everyone - set(wanted[:j]))
        return ok(lo if now else hi) == now

    lo_j, hi_j = 0, len(wanted)
    while lo_j < hi_j:
        mid = (lo_j + hi_j) // 2
        if holds(mid):
            hi_j = mid
        else:
            lo_j = mid + 1
    st.to_judge = wanted[:hi_j]
    return st


def _all_relevant_recall(f, stage: int, queries: list[str]) -> float:
    """The candidate's macro recall at a stage with every unjudged document of its stages relevant."""
    name, vals = f.stages[stage], []
    for q in queries:
        ps = f.paths.get(q, [])
        here = set(f.unjudged.get(name, {}).get(q, ()))
        anywhere = {d for s in f.stages for d in f.unjudged.get(s, {}).get(q, ())}
        if len(ps) + len(anywhere):
            vals.append((sum(p.ranks[stage] is not None for p in ps) + len(here)) / (len(ps) + len(anywhere)))
    return sum(vals) / len(vals) if vals else 0.0
