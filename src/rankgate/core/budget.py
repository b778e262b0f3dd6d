"""A judging budget: the N judgments that most reduce the uncertainty of the gate's decision.

The bounds (core/bounds.py) decide the gate in four scenarios for the documents
nobody judged within the depth its checks look at: none relevant, all relevant,
those each run ranks higher relevant. The decision is *certain* when all four
give the same decision. `stability(...).to_judge` lists the fewest documents
that, judged and found not relevant (what the gate assumes of them today), make
it certain; most decisive first. The budget takes those first, then the rest of
the gate's review queue in its order (the documents whose label would move the
decision or a gated delta most), and says what the decision is in the worst and
the best case once the N are judged: the other unjudged documents at the
scenarios' extremes, the N as the gate counts them now (not relevant; a
judgment that finds one relevant is new evidence, and the budget is asked again).

    b = judging_budget(paired, policy, decision, qrels, n=20)
    b.items, b.worst, b.best, b.certain_after
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rankgate.core.bounds import SCENARIOS, SHIFT, _check_scopes, _Scenarios, relabel, runs_depth_of, stability
from rankgate.core.decision import decide


@dataclass
class Budget:
    """The budget's documents and what the decision is, now and once they are judged."""

    items: list[tuple[str, str]]
    decision: str  # the gate's decision now ("accept" / "reject")
    worst_now: str  # the decision in the worst and the best case of every unjudged document
    best_now: str
    worst: str  # ... once `items` are judged (found not relevant); the rest at the extremes
    best: str
    certain_after: int | None  # how many judgments make it certain (0: certain now; None: none can)
    unjudged: int  # unjudged documents within the checks' depth
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)  # why each is in the budget

    @property
    def certain(self) -> bool:
        return self.worst == self.best

    def progress(self) -> str:
        """The app's progress phrase: how many more judgments make the decision certain."""
        if self.certain_after == 0:
            return "decision certain"
        if self.certain_after is None:
            return "no judgments can make the decision certain"
        n = self.certain_after
        return f"{n} more judgment{'s' if n != 1 else ''} make the decision certain"

    def as_dict(self) -> dict:
        return {"decision": self.decision, "now": {"worst": self.worst_now, "best": self.best_now},
                "after": {"worst": self.worst, "best": self.best, "certain": self.certain},
                "certain_after": self.certain_after, "unjudged": self.unjudged, "progress": self.progress(),
                "items": [{"query": q, "doc": d, "why": self.reasons.get((q, d), "")} for q, d in self.items]}


def _word(accepted: bool) -> str:
    return "accept" if accepted else "reject"


def _depth(p, policy, dec) -> int:
    """The deepest any label-moved check looks."""
    depths = [s.depth for s in _check_scopes(p, policy, dec).values() if s.moved]
    return max((d if d is not None else runs_depth_of(p) for d in depths), default=p.k)


def _extremes(scen: _Scenarios, p, policy, dec, depth: int, judged: np.ndarray) -> tuple[str, str]:
    """(worst, best) decision over the scenarios, the `judged` keys (a mask over the depth's keys) kept out."""
    keys = scen.keys_for(depth)
    keep = ~judged
    index = scen.index(depth)
    outcomes = []
    for sc in SCENARIOS:
        q = relabel(p, keys, scen.grades(sc, depth), index=index, keep=keep)
        outcomes.append(decide(policy, q, as_of=dec.as_of).accepted)
    return _word(all(outcomes)), _word(any(outcomes))


def judging_budget(p, policy, dec, qrels, n: int, *, order=None) -> Budget:
    """The N judgments that most reduce the decision's uncertainty (see the module's doc). `order`: the
    gate's review queue (core.queue.gate_queue), which also orders the bounds' documents to judge."""
    names = qrels.catalog.docs.names
    st = stability(p, policy, dec, names, order=order)
    depth = _depth(p, policy, dec)
    scen = _Scenarios(p)
    keys = scen.keys_for(depth)
    reasons: dict[tuple[str, str], str] = {}
    chosen = list(st.to_judge)
    for pair in chosen:
        reasons[pair] = "settles the decision (with the others listed, if not relevant)"
    for it in (order or []):
        pair = (it.query, it.doc)
        if pair not in reasons:
            reasons[pair] = "moves the decision" if it.changes_decision else "moves a gated check"
            chosen.append(pair)
    pos = {q: i for i, q in enumerate(p.qids)}
    key_of = {}
    for q, d in chosen:
        code = qrels.catalog.docs.get(d)
        if q in pos and code is not None:
            key_of[(q, d)] = pos[q] * SHIFT + int(code)
    chosen = [x for x in chosen if x in key_of and np.isin(key_of[x], keys)]  # within the checks' depth
    items = chosen[:max(n, 0)]
    judged = np.isin(keys, np.array([key_of[x] for x in items], np.int64))
    worst_now, best_now = _extremes(scen, p, policy, dec, depth, np.zeros(len(keys), bool))
    worst, best = _extremes(scen, p, policy, dec, depth, judged)
    if st.stable:
        certain_after: int | None = 0
    elif st.to_judge:
        certain_after = len(st.to_judge)
    else:
        certain_after = None  # a check no label settles (a must-pass loss any relevant document makes)
    return Budget(items, _word(dec.accepted), worst_now, best_now, worst, best, certain_after, int(len(keys)),
                  {x: reasons[x] for x in items})


def budget_for(qrels, runs, policy, n: int, *, queries=None, no_answer=frozenset(), as_of=None) -> Budget:
    """`judging_budget` for the policy's baseline and candidate among `runs` (read with the qrels' catalog)."""
    from rankgate.core.compare import pair
    from rankgate.core.decision import extra_measures, gate_measures
    from rankgate.core.queue import gate_queue

    measures = list(dict.fromkeys(gate_measures(policy.k) + extra_measures(policy)))
    p = pair(qrels, runs[policy.baseline], runs[policy.candidate], k=policy.k, measures=measures,
             rel_level=policy.checks.rel_level, no_answer=no_answer, queries=dict(queries or {}))
    dec = decide(policy, p, as_of=as_of)
    order = gate_queue(p, qrels, policy, as_of=dec.as_of, decision=dec)
    return judging_budget(p, policy, dec, qrels, n, order=order)
