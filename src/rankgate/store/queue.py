"""The review queue: what needs a label next.

Every document in any loaded run's top k that no one has judged (no
reviewer's judgment stands for it: it is not in the labels), most decisive
first:

1. its label could flip the gate's decision (accept <-> reject), then flip
   any gate check (core.coverage's `review_queue` computes these for the
   gate's baseline and candidate: the gate's own what-if, reused as is);
2. judged relevant, it would change a must-pass query's outcome for some
   loaded run (the run misses that query in its top k today);
3. it would move a gated macro delta (the larger the move, the earlier;
   review_queue's `impact`);
4. it belongs to a must-pass query;
5. its best rank in any loaded run (1 first);
6. then the queries' order in the labels, and the document ID.

Pure (numpy and the core; no TinyDB, no textual): the CLI's `labels queue`
and the app's "next to review" key build it from the same inputs:

    queue = build_queue(qrels, runs, policy, queries=queries, no_answer=no_answer)
    item = queue.next(after=(qid, doc), judged=lambda q, d: d in book.grades(q))

The qrels and the runs must share one `Catalog` (as `load_bundle` and
`Workspace.to_qrels(catalog)` arrange).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rankgate.core.model import Qrels, Query, Run, unique


@dataclass(frozen=True)
class QueueItem:
    """One unjudged document, and why it is where it is in the queue."""

    query: str
    doc: str
    ranks: dict[str, int]  # run -> 1-based rank, for the runs that have it in their top k
    must_pass: bool
    changes_decision: bool = False  # judged relevant, the gate's decision would flip
    flips: tuple[str, ...] = ()  # gate checks whose outcome would change
    impact: float = 0.0  # the largest change of a gated macro delta (candidate - baseline)
    must_pass_runs: tuple[str, ...] = ()  # runs that miss this must-pass query today and would hit it
    effects: dict[str, float] = field(default_factory=dict)

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values())

    def why(self) -> str:
        """One line: the reason this item is this high in the queue."""
        if self.changes_decision:
            return "could flip the gate's decision" + (f" ({', '.join(self.flips)})" if self.flips else "")
        if self.flips:
            return f"could flip {', '.join(self.flips)}"
        if self.impact > 0:
            m, v = max(self.effects.items(), key=lambda kv: abs(kv[1]))
            return f"moves the {m} delta by {v:+.4f}"
        if self.must_pass_runs:
            return f"could make must-pass query hit in {', '.join(self.must_pass_runs)}"
        if self.must_pass:
            return "must-pass query"
        return f"rank {self.best_rank}"

    def as_dict(self) -> dict:
        return {"query": self.query, "doc": self.doc, "ranks": dict(self.ranks), "best_rank": self.best_rank,
                "must_pass": self.must_pass, "changes_decision": self.changes_decision, "flips": list(self.flips),
                "impact": self.impact, "must_pass_runs": list(self.must_pass_runs), "effects": dict(self.effects),
                "why": self.why()}


class ReviewQueue(Sequence):
    """The queue in order; `next()` walks it past what has been judged since it was built."""

    def __init__(self, items: list[QueueItem], k: int, gate: tuple[str, str] | None = None,
                 decision: str | None = None):
        self.items = items
        self.k = k
        self.gate = gate  # (baseline, candidate) when the gate's what-if was computed
        self.decision = decision  # the gate's decision now ("accept" / "reject"), when computed
        self._pos = {(it.query, it.doc): i for i, it in enumerate(items)}

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def index(self, qid: str, doc: str) -> int | None:
        return self._pos.get((qid, doc))

    def next(self, after: tuple[str, str] | None = None,
             judged: Callable[[str, str], bool] | Container | None = None) -> QueueItem | None:
        """The first item after `after` (from the start when None, or when `after` is not queued) that is
        not `judged` (a container of (query, doc), or a function of query and doc); None at the end."""
        start = 0
        if after is not None:
            pos = self._pos.get(tuple(after))
            start = 0 if pos is None else pos + 1
        test = judged if callable(judged) or judged is None else (lambda q, d: (q, d) in judged)
        for it in self.items[start:]:
            if test is None or not test(it.query, it.doc):
                return it
        return None

    def for_query(self, qid: str) -> list[QueueItem]:
        return [it for it in self.items if it.query == qid]

    def as_dict(self, limit: int | None = None) -> dict:
        items = self.items if limit is None else self.items[:limit]
        return {"k": self.k, "gate": list(self.gate) if self.gate else None, "decision": self.decision,
                "total": len(self.items), "items": [it.as_dict() for it in items]}


def _top_k(run: Run, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query code, doc code, 1-based rank) of the run's top k, in trec_eval order."""
    from rankgate.core.model import sort_run

    q, doc, _ = sort_run(run)
    n = len(q)
    if not n:
        z = np.zeros(0, np.int64)
        return z, z, z
    brk = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    starts = np.repeat(brk, np.diff(np.r_[brk, n]))
    rank = np.arange(n) - starts + 1
    top = rank <= k
    return q[top].astype(np.int64), doc[top].astype(np.int64), rank[top]


def build_queue(qrels: Qrels, runs: Mapping[str, Run], policy, *, queries: Mapping[str, Query] | None = None,
                no_answer=frozenset(), k: int | None = None, as_of: dt.date | None = None) -> ReviewQueue:
    """The review queue over every run in `runs` (see the module's doc). `policy`: the gate's policy (its k,
    relevance level, must-pass queries, baseline and candidate); `k` overrides its k."""
    k = int(k or policy.k)
    level = policy.checks.rel_level
    cat = qrels.catalog
    for name, run in runs.items():
        if run.catalog is not cat:
            raise ValueError(f"run {name!r} does not share the qrels' catalog (read them with one Catalog)")
    qnames, dnames = cat.queries.names, cat.docs.names
    key = qrels.q.astype(np.int64) * (1 << 32) + qrels.doc.astype(np.int64)
    judged = unique(key)
    relevant = unique(key[qrels.grade >= level])
    wanted = list(dict.fromkeys(list(qrels.query_ids) + list(queries or {})))
    order = {q: i for i, q in enumerate(wanted)}
    wanted_codes = np.array(sorted(c for q in wanted if (c := cat.queries.get(q)) is not None), dtype=np.int64)
    must = set(policy.must_pass) | {q.id for q in (queries or {}).values() if q.must_pass}
    found: dict[tuple[int, int], dict[str, int]] = {}
    misses_must: dict[str, set[int]] = {}  # run -> must-pass query codes it misses in its top k
    must_codes = np.array([c for q in must if (c := cat.queries.get(q)) is not None], dtype=np.int64)
    for name, run in runs.items():
        q, doc, rank = _top_k(run, k)
        rk = q * (1 << 32) + doc
        inside = np.isin(q, wanted_codes)
        hit_q = unique(q[np.isin(rk, relevant)])
        misses_must[name] = set(np.setdiff1d(must_codes, hit_q).tolist())
        sel = inside & ~np.isin(rk, judged)
        for qc, dc, r in zip(q[sel].tolist(), doc[sel].tolist(), rank[sel].tolist()):
            per = found.setdefault((qc, dc), {})
            per[name] = min(r, per.get(name, r))
    gate_info: dict[tuple[str, str], tuple[bool, tuple[str, ...], float, dict]] = {}
    gate = decision = None
    if policy.baseline and policy.candidate and policy.baseline in runs and policy.candidate in runs:
        from rankgate.core.compare import pair
        from rankgate.core.coverage import review_queue
        from rankgate.core.gate import decide, extra_measures, seed_measures

        measures = list(dict.fromkeys(seed_measures(policy.k) + extra_measures(policy)))
        p = pair(qrels, runs[policy.baseline], runs[policy.candidate], k=policy.k, measures=measures,
                 rel_level=level, no_answer=no_answer, queries=dict(queries or {}))
        dec = decide(policy, p, as_of=as_of)
        gate, decision = (policy.baseline, policy.candidate), dec.decision
        for it in review_queue(p, qrels, policy, as_of=dec.as_of, decision=dec):
            gate_info[(it.query, it.doc)] = (it.changes_decision, it.flips, it.impact, it.effects)
    items = []
    for (qc, dc), ranks in found.items():
        qid, doc = qnames[qc], dnames[dc]
        changes, flips, impact, effects = gate_info.get((qid, doc), (False, (), 0.0, {}))
        mp_runs = tuple(r for r in runs if r in ranks and qc in misses_must[r])
        items.append(QueueItem(qid, doc, dict(sorted(ranks.items(), key=lambda kv: (kv[1], kv[0]))), qid in must,
                               changes, tuple(flips), float(impact), mp_runs,
                               {m: float(v) for m, v in effects.items() if v}))
    items.sort(key=lambda it: (not it.changes_decision, not it.flips, not it.must_pass_runs, -round(it.impact, 12),
                               not it.must_pass, it.best_rank, order.get(it.query, len(order)), it.doc))
    return ReviewQueue(items, k, gate, decision)
