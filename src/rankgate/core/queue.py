"""The review queue: the unjudged documents in the runs' top k, most decisive first.

The engine scores an unjudged document as not relevant, so labelling one "not
relevant" changes no measure (only the judged share); labelling it relevant
can. Two layers, one on the other:

The gate's queue (`gate_queue(paired, qrels, policy)`). For every unjudged
document in the baseline's or the candidate's top k, it re-scores its query
with the document judged relevant (at the highest grade in the labels), all
such what-ifs in one vectorised engine call, and asks what that would do to
the gate:

1. would the decision flip (accept <-> reject)?
2. which checks would change outcome (`flips`)?
3. by how much would each gated macro delta (candidate - baseline) move
   (`effects`; `impact` is the largest absolute one)?

It is ordered by those three, then must-pass queries first, then the best
rank. Every check is re-evaluated exactly from the changed per-query values,
except "no significant regression": its test is re-run (same seed, same
resamples) only for the documents that could move it the right way, at most a
fixed budget of resample work per rule, the largest effects first.

The review queue (`build_queue(qrels, runs, policy)`), what the CLI's
`labels queue` and the app's "next to review" key walk: every document in any
loaded run's top k that no one has judged (no reviewer's judgment stands for
it: it is not in the labels), most decisive first:

1. its label could flip the gate's decision, then flip any gate check (the
   gate's queue above, for the policy's baseline and candidate, reused as is);
2. judged relevant, it would change a must-pass query's outcome for some
   loaded run (the run misses that query in its top k today);
3. it would move a gated macro delta (the larger the move, the earlier);
4. it belongs to a must-pass query;
5. its best rank in any loaded run (1 first);
6. then the queries' order in the labels, and the document ID.

Labels marked unsure (`build_queue(..., unsure={(qid, doc): note})`, from the
store's `Workspace.unsure()`) that are in any loaded run's top k come first,
before every unjudged document, in the same order among themselves (best rank,
queries' order, ID); their item's `unsure` is the note and `why()` says
"unsure: NOTE". They are judged, so `next(judged=...)` does not skip them.

    queue = build_queue(qrels, runs, policy, queries=queries, no_answer=no_answer)
    item = queue.next(after=(qid, doc), judged=lambda q, d: d in book.grades(q))

The qrels and the runs must share one `Catalog` (as `load_bundle` and
`Workspace.to_qrels(catalog)` arrange).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import field
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.compare import Paired, aggregate, pair
from rankgate.core.decision import decide, extra_measures, gate_measures, rule_slices
from rankgate.core.engine import MIN_GEO_MEAN, UNJUDGED, evaluate
from rankgate.core.measures import DEPTH_FAMILIES, Measure
from rankgate.core.model import Catalog, LeanRun, Qrels, Query, Run, sort_run, unique
from rankgate.core.stats import bootstrap_ci, randomization_test, weighted_mean

SIG_BUDGET = 20_000_000  # resamples x queries re-run per significance rule


# ---- the gate's queue: a what-if per unjudged document of the baseline's and candidate's top k ------

@dataclass(frozen=True)
class GateQueueItem:
    """One unjudged document in the baseline's or candidate's top k, with what a relevant label would do
    to the gate."""

    query: str
    doc: str
    baseline_rank: int | None  # 1-based rank in the baseline (None: not ranked)
    candidate_rank: int | None
    must_pass: bool
    changes_decision: bool  # judged relevant, the decision would flip
    flips: tuple[str, ...]  # checks whose outcome would change
    impact: float  # the largest |change| of a gated macro delta (candidate - baseline)
    effects: dict[str, float] = field(default_factory=dict)  # measure -> change of the macro delta
    grade: int = 1  # the grade assumed for "judged relevant"

    def as_dict(self) -> dict:
        return {"query": self.query, "doc": self.doc, "baseline_rank": self.baseline_rank,
                "candidate_rank": self.candidate_rank, "must_pass": self.must_pass,
                "changes_decision": self.changes_decision, "flips": list(self.flips), "impact": self.impact,
                "effects": self.effects, "assumed_grade": self.grade}


def _ragged(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices starts[i] .. starts[i] + lengths[i] - 1, concatenated."""
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, np.int64)
    offs = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts.astype(np.int64), lengths) + np.arange(total) - offs


def unjudged_in_top_k(p: Paired) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The (query position, document code) pairs unjudged in either run's top k, and each run's
    1-based rank of them (0 when not ranked, or ranked deeper than every measure's cut-off: no
    measure sees it there, and the fast path keeps rankings only that deep)."""
    depth = ranking_depth(p.measures)
    keys = []
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        sel = (pr.grade == UNJUDGED) & (pr.rank < p.k)
        keys.append(pr.qp[sel].astype(np.int64) * (1 << 32) + pr.doc[sel].astype(np.int64))
    allk = unique(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    qp, doc = allk >> 32, allk & ((1 << 32) - 1)
    ranks = {}
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        rk = pr.qp.astype(np.int64) * (1 << 32) + pr.doc.astype(np.int64)
        order = np.argsort(rk, kind="stable")
        srk = rk[order]
        idx = np.searchsorted(srk, allk)
        idx_c = np.minimum(idx, max(len(srk) - 1, 0))
        found = (srk[idx_c] == allk) if len(srk) else np.zeros(len(allk), bool)
        r = np.zeros(len(allk), np.int64)
        r[found] = pr.rank[order[idx_c[found]]] + 1
        if depth is not None:
            r[r > depth] = 0
        ranks[role] = r
    return qp, doc, ranks


def _blocks(qp: np.ndarray, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each query's rows start and how many there are. The engine keeps each query's rows in
    one block, but the blocks stay in the run's own order (not sorted by query)."""
    start = np.zeros(nq, np.int64)
    count = np.zeros(nq, np.int64)
    n = len(qp)
    if n:
        brk = np.flatnonzero(np.r_[True, qp[1:] != qp[:-1]])
        start[qp[brk]] = brk
        count[qp[brk]] = np.diff(np.r_[brk, n])
    return start, count


def ranking_depth(measures: list[Measure]) -> int | None:
    """How deep the rankings must be to score these measures (None: all of it)."""
    if all(m.family in DEPTH_FAMILIES and m.cutoff is not None for m in measures):
        return int(max(m.cutoff for m in measures))
    return None


def relabelled(p: Paired, qrels: Qrels, qp: np.ndarray, doc: np.ndarray, grade: int
               ) -> dict[str, dict[Measure, np.ndarray]]:
    """Per what-if i (query qp[i] with document doc[i] judged `grade`): each measure's new value of that
    query, for both runs. One engine call per run over all what-ifs ("virtual queries")."""
    P = len(qp)
    out: dict[str, dict[Measure, np.ndarray]] = {}
    if not P:
        return {role: {m: np.zeros(0) for m in p.measures} for role in ("baseline", "candidate")}
    cat = Catalog()
    cat.docs = qrels.catalog.docs  # shared: same codes
    width = len(str(P))
    names = [f"{i:0{width}d}" for i in range(P)]  # in byte order, as the engine orders query IDs
    for name in names:
        cat.queries.code(name)
    pr0 = p.prepared["baseline"]
    # The judgments of each what-if's query, plus the new one.
    jq = pr0.qrels_qp
    jsel = np.flatnonzero(jq >= 0)
    jorder = jsel[np.argsort(jq[jsel], kind="stable")]
    jcount = np.bincount(jq[jsel], minlength=p.n)
    jstart = np.r_[0, np.cumsum(jcount)[:-1]]
    rows = jorder[_ragged(jstart[qp], jcount[qp])]
    vq = np.r_[np.repeat(np.arange(P), jcount[qp]), np.arange(P)].astype(np.int32)
    vdoc = np.r_[qrels.doc[rows], doc].astype(np.int32)
    vgrade = np.r_[pr0.qrels_grade[rows], np.full(P, grade)].astype(np.int64)
    # A judgment the what-if replaces would be a duplicate: drop the old one (it was unjudged, so none).
    vqrels = Qrels("review-queue", cat, vq, vdoc, vgrade, list(range(P)))
    for role in ("baseline", "candidate"):
        pr = p.prepared[role]
        # Only the rows of judged documents matter to a measure, and the what-if's own document: each
        # what-if takes its query's judged rows and that one row (when the run ranks it), with their
        # ranks as they are, and the query's count of documents ranked (a LeanRun).
        judged = np.flatnonzero(pr.grade != UNJUDGED)  # grouped by query, in rank order
        start, count = _blocks(pr.qp[judged], p.n)
        rr = judged[_ragged(start[qp], count[qp])]
        rq = np.repeat(np.arange(P), count[qp])
        key = pr.qp.astype(np.int64) * (1 << 32) + pr.doc.astype(np.int64)
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        want = qp.astype(np.int64) * (1 << 32) + doc.astype(np.int64)
        at = np.minimum(np.searchsorted(ordered, want), max(len(key) - 1, 0))
        hit = np.flatnonzero(ordered[at] == want) if len(key) else np.zeros(0, np.int64)
        rr, rq = np.r_[rr, order[at[hit]]], np.r_[rq, hit]
        run = LeanRun(role, "review-queue", names, pr.num_ret[qp].astype(np.int64), rq,
                      pr.doc[rr].astype(np.int64), pr.rank[rr].astype(np.int64), [], 0, 0)
        s = evaluate(vqrels, run, p.measures, rel_level=p.rel_level, missing="zero")
        out[role] = s.values
    return out


def _macros_after(m: Measure, values: np.ndarray, weights: np.ndarray | None, mask: np.ndarray | None,
                  qp: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The macro of `values` (over `mask`) after replacing values[qp[i]] by new[i], for every i."""
    w = np.ones(len(values)) if weights is None else weights
    inside = np.ones(len(qp), bool) if mask is None else mask[qp]
    sel = np.ones(len(values), bool) if mask is None else mask
    ws, vs = w[sel], values[sel]
    if not len(vs):
        return np.zeros(len(qp))
    wq = w[qp] * inside
    if m.summed:
        return (ws * vs).sum() + wq * (new - values[qp])
    total = ws.sum()
    if total <= 0:
        return np.zeros(len(qp))
    if m.geometric:
        lg = lambda x: np.log(np.maximum(x, MIN_GEO_MEAN))  # noqa: E731
        return np.exp(((ws * lg(vs)).sum() + wq * (lg(new) - lg(values[qp]))) / total)
    return ((ws * vs).sum() + wq * (new - values[qp])) / total


def gate_queue(p: Paired, qrels: Qrels, policy, *, as_of: dt.date | None = None, decision=None,
               grade: int | None = None) -> "GateQueue":
    """Every unjudged document in either run's top k, most decisive first (see the module's doc)."""
    qp, doc, ranks = unjudged_in_top_k(p)
    P = len(qp)
    if not P:
        return GateQueue.empty()
    if grade is None:
        grade = max(int(qrels.grade.max()) if len(qrels.grade) else p.rel_level, p.rel_level)
    dec = decision or decide(policy, p, as_of=as_of)
    new = relabelled(p, qrels, qp, doc, grade)
    old = {role: p.values(role) for role in ("baseline", "candidate")}

    effects, impact = _effects(p, qp, old, new)
    names, after_ok = _checks_after(p, policy, dec, qp, ranks, old, new, effects)
    # Checks not re-evaluated above (none today) keep their outcome.
    untouched = [n for n in dec.checks if n not in names]
    if names:
        after = np.vstack(after_ok).T
        before = np.array([dec.checks[n] for n in names], dtype=bool)
        flipped = after != before
        accepted_after = after.all(axis=1) & all(dec.checks[n] for n in untouched)
    else:
        flipped = np.zeros((P, 0), bool)
        accepted_after = np.full(P, dec.accepted)
    changes = accepted_after != dec.accepted
    must_q = np.array([q in set(policy.must_pass) for q in p.qids], dtype=bool)[qp]
    big = np.int64(1) << 60
    best = np.minimum(np.where(ranks["baseline"] > 0, ranks["baseline"], big),
                      np.where(ranks["candidate"] > 0, ranks["candidate"], big))
    docorder = qrels.catalog.docs.order()[doc]
    order = np.lexsort((docorder, qp, best, ~must_q, -np.round(impact, 12), ~flipped.any(axis=1), ~changes))
    return GateQueue(p.qids, qrels.catalog.docs.names, qp[order], doc[order], ranks["baseline"][order],
                     ranks["candidate"][order], must_q[order], changes[order], names, flipped[order],
                     impact[order], {k: v[order] for k, v in effects.items()}, grade)


def _effects(p: Paired, qp: np.ndarray, old: dict, new: dict) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """How each plain macro delta would move after each what-if, and the largest move (the impact)."""
    effects: dict[str, np.ndarray] = {}
    for m in p.measures:
        after = (_macros_after(m, old["candidate"][m], None, None, qp, new["candidate"][m])
                 - _macros_after(m, old["baseline"][m], None, None, qp, new["baseline"][m]))
        eff = after - (aggregate(m, old["candidate"][m]) - aggregate(m, old["baseline"][m]))
        effects[m.name] = np.where(np.abs(eff) < 1e-12, 0.0, eff)  # rounding noise is no effect
    impact = np.max(np.abs(np.vstack(list(effects.values()))), axis=0) if effects else np.zeros(len(qp))
    return effects, impact


def _checks_after(p: Paired, policy, dec, qp: np.ndarray, ranks: dict, old: dict, new: dict,
                  effects: dict) -> tuple[list[str], list[np.ndarray]]:
    """Each check's outcome after each what-if: the checks' names and, per name, an outcome per what-if."""
    P = len(qp)
    current = {w.query for w in policy.waivers if not w.expired(dec.as_of)}
    waived = np.array([q in current for q in p.qids], dtype=bool)
    hit = p.hit
    hb_new, hc_new = new["baseline"][hit] > 0, new["candidate"][hit] > 0
    hb, hc = p.hits("baseline"), p.hits("candidate")
    names: list[str] = []
    after_ok: list[np.ndarray] = []

    def record(name: str, ok_after: np.ndarray) -> None:
        if name in dec.checks:
            names.append(name)
            after_ok.append(ok_after.astype(bool))

    for rule in policy.effective_rules():
        for s in rule_slices(rule, p):
            name = rule.name if s is None else f"{rule.name}[{s}]"
            mask = None if s is None else p.mask(s)
            before = dec.checks.get(name)
            if before is None:
                continue
            if s is not None and int(mask.sum()) < rule.min_queries:
                record(name, np.full(P, before))
                continue
            inside = np.ones(P, bool) if mask is None else mask[qp]
            kind, m = rule.kind, rule.measure
            w = p.weights if rule.weighted else None
            if kind in ("not_lower", "floor"):
                cv = _macros_after(m, old["candidate"][m], w, mask, qp, new["candidate"][m])
                if kind == "floor":
                    record(name, cv >= rule.floor - 1e-12)
                else:
                    bv = _macros_after(m, old["baseline"][m], w, mask, qp, new["baseline"][m])
                    record(name, cv >= bv - rule.tolerance - 1e-12)
            elif kind == "no_significant_regression":
                record(name, _significance_after(rule, p, policy, mask, qp, new, effects, before))
            elif kind == "no_newly_failed":
                nf = hb & ~hc & ~waived
                if mask is not None:
                    nf &= mask
                nf_new = hb_new & ~hc_new & ~waived[qp] & inside
                count = int(nf.sum()) - nf[qp].astype(int) + nf_new.astype(int)
                record(name, count <= int(rule.max or 0))
            elif kind == "judged":
                j, r, _ = p.judged_share("candidate", mask)
                add = (ranks["candidate"] > 0) & (ranks["candidate"] <= p.k) & inside
                share = (j + add) / r if r else np.ones(P)
                record(name, share >= rule.floor - 1e-12)
            else:  # budgets do not depend on labels
                record(name, np.full(P, before))
    if "must_pass_queries_hit" in dec.checks:
        must = np.array([q in set(policy.must_pass) for q in p.qids], dtype=bool) & ~waived
        miss = must & ~hc
        count = int(miss.sum()) - miss[qp].astype(int) + (must[qp] & ~hc_new).astype(int)
        record("must_pass_queries_hit", count == 0)
    if "waivers_not_expired" in dec.checks:
        record("waivers_not_expired", np.full(P, dec.checks["waivers_not_expired"]))
    return names, after_ok


class GateQueue(Sequence):
    """The gate's queue as arrays, in order; items (`GateQueueItem`) are built when read, so a queue of
    a hundred thousand documents costs no more than its arrays."""

    def __init__(self, qids, docnames, qp, doc, brank, crank, must, changes, checks, flipped, impact, effects,
                 grade):
        self._qids, self._docs = qids, docnames
        self.qp, self.doc, self.brank, self.crank = qp, doc, brank, crank
        self.must, self.changes, self.checks, self.flipped = must, changes, list(checks), flipped
        self.impact, self.effects, self.grade = impact, effects, grade

    @classmethod
    def empty(cls) -> "GateQueue":
        z = np.zeros(0, np.int64)
        return cls([], [], z, z, z, z, z.astype(bool), z.astype(bool), [], np.zeros((0, 0), bool), z * 1.0, {}, 1)

    def __len__(self) -> int:
        return len(self.qp)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return GateQueueItem(self._qids[int(self.qp[i])], self._docs[int(self.doc[i])], int(self.brank[i]) or None,
                          int(self.crank[i]) or None, bool(self.must[i]), bool(self.changes[i]),
                          tuple(n for n, f in zip(self.checks, self.flipped[i].tolist()) if f),
                          float(self.impact[i]), {k: float(v[i]) for k, v in self.effects.items()}, self.grade)

    def for_query(self, qid: str) -> list[GateQueueItem]:
        """This query's entries, in queue order (the app's per-query walk)."""
        try:
            pos = self._qids.index(qid)
        except ValueError:
            return []
        return [self[int(i)] for i in np.flatnonzero(self.qp == pos)]


def _significance_after(rule, p: Paired, policy, mask, qp, new, effects, before: bool) -> np.ndarray:
    """Outcome of a significance rule after each what-if: re-run for those that could flip it."""
    P = len(qp)
    out = np.full(P, before)
    m = rule.measure
    b, c = p.baseline[m].copy(), p.candidate[m].copy()
    w = p.weights if rule.weighted else np.ones(p.n)
    sel = np.ones(p.n, bool) if mask is None else mask
    inside = sel[qp]
    change = (new["candidate"][m] - c[qp]) - (new["baseline"][m] - b[qp])
    # A passing rule can only fail by a drop; a failing one can only pass by a rise.
    want = (change < -1e-12) if before else (change > 1e-12)
    cand = np.flatnonzero(want & inside)
    n = int(sel.sum())
    if not len(cand) or n == 0:
        return out
    cap = max(1, SIG_BUDGET // max(1, policy.resamples * n))
    cand = cand[np.argsort(-np.abs(change[cand]), kind="stable")][:cap]
    d0 = (c - b)[sel]
    w0 = w[sel]
    pos = np.cumsum(sel) - 1  # query position -> position within the selection
    alpha = rule.alpha
    for i in cand.tolist():
        d = d0.copy()
        d[pos[qp[i]]] += change[i]
        mean = weighted_mean(d, w0)
        if rule.test == "bootstrap":
            lo, hi = bootstrap_ci(d, w0, resamples=policy.resamples, seed=policy.seed, confidence=1 - alpha)
            significant = hi < -1e-12
        else:
            pv, _ = randomization_test(d, w0, resamples=policy.resamples, seed=policy.seed)
            significant = mean < -1e-12 and pv < alpha
        out[i] = not (mean < -1e-12 and significant)
    return out


# ---- the review queue over every loaded run ------------------------------------------------------

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
    unsure: str = ""  # a judged label marked unsure: its note (it comes first)
    stale: bool = False  # a judged label whose document's text changed since (core/staleness.py): next
    blind: bool = False  # in the judge's overlap (core/judge_vote.py): judged blind, before other documents

    @property
    def judged(self) -> bool:
        """A judged label queued again (unsure or stale), not an unjudged document."""
        return bool(self.unsure or self.stale)

    @property
    def best_rank(self) -> int:
        return min(self.ranks.values())

    def why(self) -> str:
        """One line: the reason this item is this high in the queue."""
        if self.unsure:
            return f"unsure: {self.unsure}"
        if self.blind:
            return "the judge's overlap: judge it blind (its suggestion is hidden)"
        if self.stale:
            return "stale: the document's text changed since it was judged" + \
                (" (in the gate's top k)" if self.changes_decision else "")
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
                "unsure": self.unsure, "stale": self.stale, "blind": self.blind,
                "why": self.why()}


class ReviewQueue(Sequence):
    """The queue in order; `next()` walks it past what has been judged since it was built."""

    def __init__(self, items: list[QueueItem], k: int, gate: tuple[str, str] | None = None,
                 decision: str | None = None):
        self.items = items
        self.k = k
        self.gate = gate  # (baseline, candidate) when the gate's what-if was computed
        self.decision = decision  # the gate's decision now ("accept" / "reject"), when computed
        self.stability = None  # core.bounds.Stability of the gate, when asked for (build_queue)
        self._pos = {(it.query, it.doc): i for i, it in enumerate(items)}

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def index(self, qid: str, doc: str) -> int | None:
        return self._pos.get((qid, doc))

    @property
    def unsure(self) -> int:
        """How many items are labels marked unsure (they come first)."""
        return sum(1 for it in self.items if it.unsure)

    @property
    def stale(self) -> int:
        """How many items are stale labels (not marked unsure too)."""
        return sum(1 for it in self.items if it.stale and not it.unsure)

    def next(self, after: tuple[str, str] | None = None,
             judged: Callable[[str, str], bool] | Container | None = None) -> QueueItem | None:
        """The first item after `after` (from the start when None, or when `after` is not queued) that is
        not `judged` (a container of (query, doc), or a function of query and doc); None at the end.
        A label marked unsure is judged, and never skipped as such."""
        start = 0
        if after is not None:
            pos = self._pos.get(tuple(after))
            start = 0 if pos is None else pos + 1
        test = judged if callable(judged) or judged is None else (lambda q, d: (q, d) in judged)
        for it in self.items[start:]:
            if test is None or it.judged or not test(it.query, it.doc):
                return it
        return None

    def for_query(self, qid: str) -> list[QueueItem]:
        return [it for it in self.items if it.query == qid]

    def as_dict(self, limit: int | None = None) -> dict:
        items = self.items if limit is None else self.items[:limit]
        return {"k": self.k, "gate": list(self.gate) if self.gate else None, "decision": self.decision,
                "total": len(self.items), "unsure": self.unsure, "stale": self.stale,
                "items": [it.as_dict() for it in items]}


def _top_k(run: Run, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query code, doc code, 1-based rank) of the run's top k, in trec_eval order."""
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
                no_answer=frozenset(), k: int | None = None, as_of: dt.date | None = None,
                unsure: Mapping[tuple[str, str], str] | None = None, stability: bool = False,
                stale: Iterable[tuple[str, str]] = (), blind: Iterable[tuple[str, str]] = ()) -> ReviewQueue:
    """The review queue over every run in `runs` (see the module's doc). `policy`: the gate's policy (its k,
    relevance level, must-pass queries, baseline and candidate); `k` overrides its k. `unsure`:
    {(query, doc): note} of labels marked unsure; those in a run's top k come first. `stability`: also
    whether the unjudged documents could flip the gate (core.bounds), as the queue's `stability`. `stale`:
    (query, doc) of stale labels (core/staleness.py) in a run's top k: those in the gate's baseline or
    candidate top k (a new grade could change the decision) come next, the others in the queue's order.
    `blind`: (query, doc) of the judge's overlap (core/judge_vote.py): unjudged ones come right after the
    unsure labels, so that experts check the judge before the rest."""
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
    notes = {}  # key -> unsure note
    for (qid, doc), note in (unsure or {}).items():
        qc, dc = cat.queries.get(qid), cat.docs.get(doc)
        if qc is not None and dc is not None and note:
            notes[int(qc) * (1 << 32) + int(dc)] = note
    overlap = set(blind)
    stale_keys = {int(qc) * (1 << 32) + int(dc) for qid, doc in stale
                  if (qc := cat.queries.get(qid)) is not None and (dc := cat.docs.get(doc)) is not None}
    unsure_keys = np.array(sorted(set(notes) | stale_keys), dtype=np.int64)
    for name, run in runs.items():
        q, doc, rank = _top_k(run, k)
        rk = q * (1 << 32) + doc
        inside = np.isin(q, wanted_codes)
        hit_q = unique(q[np.isin(rk, relevant)])
        misses_must[name] = set(np.setdiff1d(must_codes, hit_q).tolist())
        sel = inside & (~np.isin(rk, judged) | np.isin(rk, unsure_keys))
        for qc, dc, r in zip(q[sel].tolist(), doc[sel].tolist(), rank[sel].tolist()):
            per = found.setdefault((qc, dc), {})
            per[name] = min(r, per.get(name, r))
    gate_info, gate, decision, stab = _gate_info(qrels, runs, policy, level, no_answer, queries, as_of, stability)
    items = []
    for (qc, dc), ranks in found.items():
        qid, doc = qnames[qc], dnames[dc]
        changes, flips, impact, effects = gate_info.get((qid, doc), (False, (), 0.0, {}))
        mp_runs = tuple(r for r in runs if r in ranks and qc in misses_must[r])
        is_stale = qc * (1 << 32) + dc in stale_keys
        is_blind = (qid, doc) in overlap
        if is_stale:  # a regrade could change the decision when the gate's runs rank it in their top k
            changes = bool(gate and any(r in ranks for r in gate))
        items.append(QueueItem(qid, doc, dict(sorted(ranks.items(), key=lambda kv: (kv[1], kv[0]))), qid in must,
                               changes, tuple(flips), float(impact), mp_runs,
                               {m: float(v) for m, v in effects.items() if v}, notes.get(qc * (1 << 32) + dc, ""),
                               is_stale, is_blind))
    items.sort(key=lambda it: (not it.unsure, not it.blind, not (it.stale and (it.changes_decision or gate is None)),
                               not it.changes_decision,
                               not it.flips,
                               not it.must_pass_runs, -round(it.impact, 12),
                               not it.must_pass, it.best_rank, order.get(it.query, len(order)), it.doc))
    out = ReviewQueue(items, k, gate, decision)
    out.stability = stab
    return out


def _gate_info(qrels: Qrels, runs: Mapping[str, Run], policy, level: int, no_answer, queries, as_of, stability: bool):
    """What the gate's pair says of each unjudged document, when the policy's baseline and candidate are both in
    `runs`: ({(query, doc): (changes the decision, flips, impact, effects)}, (baseline, candidate), the decision,
    the stability report); ({}, None, None, None) without a gate."""
    gate_info: dict[tuple[str, str], tuple[bool, tuple[str, ...], float, dict]] = {}
    gate = decision = stab = None
    if policy.baseline and policy.candidate and policy.baseline in runs and policy.candidate in runs:
        measures = list(dict.fromkeys(gate_measures(policy.k) + extra_measures(policy)))
        p = pair(qrels, runs[policy.baseline], runs[policy.candidate], k=policy.k, measures=measures,
                 rel_level=level, no_answer=no_answer, queries=dict(queries or {}))
        dec = decide(policy, p, as_of=as_of)
        gate, decision = (policy.baseline, policy.candidate), dec.decision
        gq = gate_queue(p, qrels, policy, as_of=dec.as_of, decision=dec)
        for it in gq:
            gate_info[(it.query, it.doc)] = (it.changes_decision, it.flips, it.impact, it.effects)
        if stability:
            from rankgate.core.bounds import stability as stability_of

            stab = stability_of(p, policy, dec, qrels.catalog.docs.names, order=gq)
    return gate_info, gate, decision, stab


# ---- orders from a judge's suggestions (labels suggest) -------------------------------------------

QUEUE_ORDERS = ("decisive", "suggested", "disagreement")


def by_suggestion(queue: ReviewQueue, suggested: Mapping[tuple[str, str], int], level: int) -> ReviewQueue:
    """The queue with the unjudged documents a judge suggested relevant first (the highest suggested grade
    first, then the queue's order), then the rest in the queue's order. Unsure labels stay first."""
    def key(it: QueueItem):
        g = suggested.get((it.query, it.doc))
        return (not it.unsure, not (g is not None and g >= level), -(g if g is not None else 0))

    out = ReviewQueue(sorted(queue.items, key=key), queue.k, queue.gate, queue.decision)
    out.stability = queue.stability
    return out


def suggestion_disagreements(suggested: Mapping[tuple[str, str], int], labels: Mapping[tuple[str, str], int],
                             level: int) -> list[tuple[str, str, int, int]]:
    """(query, doc, suggested grade, label's grade) of the judged pairs whose suggestion differs from the
    label: those that disagree on relevant or not first, then the largest difference, then by IDs."""
    out = [(q, d, g, labels[(q, d)]) for (q, d), g in suggested.items() if (q, d) in labels and labels[(q, d)] != g]
    out.sort(key=lambda x: ((x[2] >= level) == (x[3] >= level), -abs(x[2] - x[3]), x[0], x[1]))
    return out
