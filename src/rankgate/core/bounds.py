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
its unjudged documents, most decisive first (the review queue's order), such
that with those left as they are the check keeps its outcome in every scenario
of the rest: if they come back not relevant, the check holds. The decision
could flip when it accepts and a check could flip, or when it rejects and
every failing check could flip. Scenarios are extremes, not every labelling:
a check stable here can still move when some documents are relevant and others
not, though each document's own what-if (the review queue) is among them.

    st = stability(paired, policy, decision, qrels.catalog.docs.names, order=queue)
    st.stable, st.to_judge, st.as_dict()
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from rankgate.core.compare import Paired, _top_k_counts
from rankgate.core.decision import decide, macro_keys, extra_measures, rule_slices
from rankgate.core.engine import UNJUDGED, Prepared, per_query
from rankgate.core.measures import DEPTH_FAMILIES, Measure

SCENARIOS = {
    "none": "every unjudged document within the depth judged not relevant",
    "all": "every unjudged document within the depth judged relevant (at the lowest relevant grade)",
    "for_candidate": "those the candidate ranks higher relevant, the rest not",
    "for_baseline": "those the baseline ranks higher relevant, the rest not",
}
LABEL_FREE = ("budget",)  # check kinds no label can move
SHIFT = np.int64(1) << 32
SHOWN = 10  # documents named in a one-line summary
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
                "unjudged": self.unjudged, "outcomes": dict(self.outcomes),
                "to_judge": [{"query": q, "doc": d} for q, d in self.to_judge], "why": self.why()}


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
                "to_judge": [{"query": q, "doc": d} for q, d in self.to_judge],
                "runs_depth": self.runs_depth, "scenarios": dict(SCENARIOS),
                "measures": self.measures, "checks": [c.as_dict() for c in self.checks]}


def plural_docs(n: int) -> str:
    return "this document" if n == 1 else f"these {n} documents"


def doc_list(pairs: list[tuple[str, str]], shown: int = SHOWN) -> str:
    from rankgate.core.text import visible

    out = ", ".join(f"{visible(q)}/{visible(d)}" for q, d in pairs[:shown])
    return out + (f" and {len(pairs) - shown} more" if len(pairs) > shown else "")


# ---- scenarios -------------------------------------------------------------------------------------

def _keys(pr: Prepared) -> np.ndarray:
    return pr.qp.astype(np.int64) * SHIFT + pr.doc.astype(np.int64)


def unjudged_keys(p: Paired, depth: int | None) -> np.ndarray:
    """(query position << 32 | document code) of the unjudged documents in either run's top `depth`."""
    parts = []
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        sel = pr.grade == UNJUDGED
        if depth is not None:
            sel &= pr.rank < depth
        parts.append(_keys(pr)[sel])
    return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def _ranks(p: Paired, keys: np.ndarray) -> dict[str, np.ndarray]:
    """Each run's 0-based rank of each key (a large number when it does not rank it)."""
    out = {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        rk = _keys(pr)
        order = np.argsort(rk, kind="stable")
        srk = rk[order]
        r = np.full(len(keys), np.iinfo(np.int64).max // 2, np.int64)
        if len(srk):
            at = np.minimum(np.searchsorted(srk, keys), len(srk) - 1)
            found = srk[at] == keys
            r[found] = pr.rank[order[at[found]]]
        out[role] = r
    return out


def scenario_grades(p: Paired, keys: np.ndarray, scenario: str) -> np.ndarray:
    """The grade each unjudged key gets in a scenario."""
    hi = int(p.rel_level)
    lo = min(0, hi - 1)
    if scenario == "none":
        return np.full(len(keys), lo, np.int64)
    if scenario == "all":
        return np.full(len(keys), hi, np.int64)
    r = _ranks(p, keys)
    better = r["candidate"] < r["baseline"] if scenario == "for_candidate" else r["baseline"] < r["candidate"]
    return np.where(better, hi, lo).astype(np.int64)


def relabel(p: Paired, keys: np.ndarray, grades: np.ndarray) -> Paired:
    """`p` re-scored with the unjudged `keys` judged `grades` (both runs, every measure)."""
    if not len(keys):
        return p
    order = np.argsort(keys)
    keys, grades = keys[order], grades[order]
    values, prepared = {}, {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        rk = _keys(pr)
        at = np.minimum(np.searchsorted(keys, rk), len(keys) - 1)
        hit = (keys[at] == rk) & (pr.grade == UNJUDGED)
        g = pr.grade.copy()
        g[hit] = grades[at[hit]]
        new = Prepared(pr.qids, pr.nq, pr.qp, pr.rank, g, pr.doc, pr.num_ret,
                       np.r_[pr.qrels_qp, keys >> 32].astype(pr.qrels_qp.dtype),
                       np.r_[pr.qrels_grade, grades].astype(pr.qrels_grade.dtype), pr.rel_level, pr.compat)
        prepared[role] = new
        values[role] = {m: per_query(new, m) for m in p.measures}
    out = replace(p, baseline=values["baseline"], candidate=values["candidate"], prepared=prepared,
                  judged={}, ranked={}, _cache={})
    for role in ("baseline", "candidate"):
        out.judged[role], out.ranked[role] = _top_k_counts(prepared[role], p.k)
    return out


# ---- which checks look how deep -------------------------------------------------------------------

def _check_scopes(p: Paired, policy, dec) -> dict[str, tuple[int | None, bool, np.ndarray | None, str]]:
    """Check name -> (depth, moved by labels, query mask or None, the measure it checks or "")."""
    runs_depth = runs_depth_of(p)
    out = {}
    for rule in policy.effective_rules():
        for s in rule_slices(rule, p) or ["*"]:
            name = rule.name if s is None else f"{rule.name}[{s}]"
            if name not in dec.checks:
                continue
            if rule.kind in LABEL_FREE or s == "*":
                out[name] = (None, False, None, "")
                continue
            d = measure_depth(rule.measure) if rule.measure is not None else p.k
            out[name] = (runs_depth if d is None else d, True, None if s is None else p.mask(s),
                         rule.measure.name if rule.measure is not None else p.hit.name)
    if "must_pass_queries_hit" in dec.checks:
        out["must_pass_queries_hit"] = (p.k, True, None, p.hit.name)
    for name in dec.checks:
        out.setdefault(name, (None, False, None, ""))
    return out


def runs_depth_of(p: Paired) -> int:
    """How deep a measure without a cut-off is bounded: the longest ranking of the two runs, at most
    UNCUT_DEPTH (the fast reader keeps the unjudged documents that deep, cli/evaluate.py)."""
    deepest = max((int(p.prepared[r].num_ret.max()) if len(p.prepared[r].num_ret) else 0)
                  for r in ("baseline", "candidate"))
    return min(deepest, UNCUT_DEPTH)


def _outcomes(p: Paired, policy, dec, keys: np.ndarray, cache: dict, tag) -> dict[str, dict[str, bool]]:
    """Scenario -> the checks' outcomes, with `keys` judged as each scenario says."""
    if tag in cache:
        return cache[tag]
    out = {}
    for sc in SCENARIOS:
        if not len(keys):
            out[sc] = dict(dec.checks)
            continue
        q = relabel(p, keys, scenario_grades(p, keys, sc))
        out[sc] = decide(policy, q, as_of=dec.as_of).checks
    cache[tag] = out
    return out


def stability(p: Paired, policy, dec, docnames: list[str], *, order=None) -> Stability:
    """Bounds of every gated measure and the stability of every check (see the module's doc).
    `docnames`: the catalog's document names (qrels.catalog.docs.names). `order`: the gate's review queue (core.queue.GateQueue), whose order ranks the documents to
    judge; without it, must-pass queries first, then the best rank."""
    runs_depth = runs_depth_of(p)
    scopes = _check_scopes(p, policy, dec)
    cache: dict = {}
    keys_at: dict = {}

    def keys_for(depth):
        if depth not in keys_at:
            keys_at[depth] = unjudged_keys(p, depth)
        return keys_at[depth]

    checks: list[CheckStability] = []
    for name, now in dec.checks.items():
        depth, moved, mask, measure = scopes[name]
        if not moved:
            checks.append(CheckStability(name, now, True, None, 0, {sc: now for sc in SCENARIOS}))
            continue
        keys = keys_for(depth)
        mine = keys if mask is None else keys[mask[(keys >> 32).astype(np.int64)]]
        outs = _outcomes(p, policy, dec, keys, cache, ("all", depth))
        per = {sc: bool(o[name]) for sc, o in outs.items()}
        stable = all(v == now for v in per.values())
        c = CheckStability(name, now, stable, depth, len(mine), per)
        if not stable:
            c.to_judge = _to_judge(p, policy, dec, name, now, keys, mine, _order_for(order, name, measure, now),
                                   cache, depth, docnames)
        checks.append(c)
    failing = [c for c in checks if not c.passed]
    if dec.accepted:
        movers = [c for c in checks if not c.stable]
    else:
        movers = failing if all(not c.stable for c in failing) else []
    to_judge = list(dict.fromkeys(x for c in movers for x in c.to_judge))
    return Stability(dec.accepted, bool(movers), checks, measure_bounds(p, policy, keys_for, runs_depth),
                     runs_depth, to_judge)


def _order_for(order, name: str, measure: str, passed: bool) -> dict[tuple[str, str], int]:
    """(query, doc) -> its place among the review queue's documents for one check: those whose own what-if
    flips it first, then those that move its measure's delta the way that could flip it (down when it
    passes), most first, then the queue's order. Unqueued documents come after, by best rank."""
    items = list(order or [])
    sign = -1.0 if passed else 1.0

    def key(i):
        it = items[i]
        move = sign * it.effects.get(measure, 0.0)
        return (name not in it.flips, -max(move, 0.0), i)

    out: dict[tuple[str, str], int] = {}
    for place, i in enumerate(sorted(range(len(items)), key=key)):
        out.setdefault((items[i].query, items[i].doc), place)
    return out


def _to_judge(p: Paired, policy, dec, name: str, now: bool, keys: np.ndarray, mine: np.ndarray, rank_of,
              cache: dict, depth, dn: list[str]) -> list[tuple[str, str]]:
    """The shortest prefix of the check's unjudged documents (most decisive first) that, left as they
    are, keeps the check's outcome in every scenario of the rest (found by bisection)."""
    must = set(policy.must_pass)
    ranks = _ranks(p, mine)
    best = np.minimum(ranks["baseline"], ranks["candidate"])
    pairs = [(p.qids[int(k >> 32)], dn[int(k & (SHIFT - 1))]) for k in mine.tolist()]
    big = len(rank_of) + 1
    idx = sorted(range(len(mine)), key=lambda i: (rank_of.get(pairs[i], big), pairs[i][0] not in must,
                                                 int(best[i]), pairs[i]))

    def holds(j: int) -> bool:
        drop = mine[idx[:j]]
        rest = keys[~np.isin(keys, drop)]
        outs = _outcomes(p, policy, dec, rest, cache, ("rest", depth, rest.tobytes()))
        return all(bool(o[name]) == now for o in outs.values())

    lo, hi = 0, len(idx)  # holds(hi) is true: nothing of this check's is left to assume
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return [pairs[i] for i in idx[:hi]]


def measure_bounds(p: Paired, policy, keys_for, runs_depth: int) -> dict[str, dict]:
    """Per gated macro: its depth, how many unjudged documents lie within it, and the baseline's,
    the candidate's and the delta's value now, with none and with all of them relevant."""
    out = {}
    scen: dict = {}
    for key, m in macro_keys(p.k, extra_measures(policy)):
        d = measure_depth(m)
        depth = runs_depth if d is None else d
        keys = keys_for(depth)
        note = f"at its cut-off {d}"
        if d is None:
            most = ", the most looked at" if runs_depth == UNCUT_DEPTH else ""
            note = f"{m.name} has no cut-off: bounded at the runs' depth ({runs_depth}{most})"
        entry = {"depth": depth, "depth_note": note, "unjudged": int(len(keys))}
        for sc in ("none", "all"):
            if (sc, depth) not in scen:
                scen[(sc, depth)] = relabel(p, keys, scenario_grades(p, keys, sc))
        for role in ("baseline", "candidate"):
            entry[role] = {"now": p.macro(role, m), "none": scen[("none", depth)].macro(role, m),
                           "all": scen[("all", depth)].macro(role, m)}
        entry["delta"] = {sc: entry["candidate"][sc] - entry["baseline"][sc] for sc in ("now", "none", "all")}
        out[key] = entry
    return out
