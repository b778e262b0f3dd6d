"""The live state of a review, kept consistent under label edits (no textual here).

On load every run is scored once by the core engine, vectorised over all
queries. After that a label edit touches one query: `apply_edit()` re-scores
that query alone (the core's `evaluate` on a one-query slice of the labels and
of each run, about a hundred rows) and writes its values into the per-query
arrays. Nothing else is re-scored, so an edit costs the same with 10 or 10,000
queries.

The gate is the core's own decision: `gate()` hands the per-query arrays of
the baseline and the candidate (the evaluated queries, as `core.compare.pair`
orders them) to `core.decision.decide` as a `Paired`, so every rule of the policy
(floors, slices, coverage, budgets, waivers, significance) reads the same here
as in `rankgate gate`. Summing a few arrays of 10,000 floats is all it costs,
except for significance tests (about a second each at 10,000 queries): after an
edit they reuse the last results and `gate(fresh=True)`, which the app runs in
a worker, brings them up to date. `tests/tui/test_model.py` proves the model
and `run_gate` agree after edits. The gate's part is in model_gate.py, the review queue's in
model_queue.py (mixins of ReviewModel).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.compare import budget_values
from rankgate.core.validate import RunShape, short_rankings
from rankgate.core.engine import Scores, evaluate
from rankgate.core.decision import extra_measures, gate_measures
from rankgate.core.measures import Measure
from rankgate.core.model import Catalog, Qrels, Query, Run, sort_run, unique
from rankgate.core.policy import Policy
from rankgate.tui.model_gate import GateAndMacros, GateView, LivePaired  # the last two: imported from here too
from rankgate.tui.model_queue import ReviewQueueing

SORTS = ("change", "benchmark")
FILTER_FLAGS = {
    "is:review": "unjudged documents in some run's top k",
    "is:must": "must-pass queries",
    "is:miss": "the candidate misses (no relevant document in its top k)",
    "is:lost": "the baseline hits and the candidate misses",
    "is:changed": "hit, recall or RR differs between the runs",
    "is:labelled": "queries with at least one label",
    "is:unsure": "queries with a label marked unsure (needs discussion)",
    "is:stale": "queries with a stale label (judged on a text the corpus has changed since)",
}


def in_order(run: Run):
    """(query, doc, score) of a run whose rows are in trec_eval's order already (as the parsed-run cache keeps
    them: tui/runcache.py), else None. Checked as `sort_run` checks, without its sort of every row's query
    and its lookup of every row's document order: each query's block starts with a query not seen before,
    scores do not go up within it, and ties (few) have document IDs going down, byte-wise."""
    q, doc, score = run.q, run.doc, run.score
    n = len(q)
    if n < 2:
        return None
    same = q[1:] == q[:-1]
    firsts = q[np.r_[0, np.flatnonzero(~same) + 1]]
    if len(unique(firsts)) != len(firsts):  # a query in two blocks
        return None
    ds = score[1:] - score[:-1]
    if bool((same & (ds > 0)).any()):
        return None
    tie = np.flatnonzero(same & (ds == 0))
    if len(tie) > 10_000:  # many ties: the catalog's byte-wise order of every document
        order = run.catalog.docs.order()
        if bool((order[doc[tie + 1]] >= order[doc[tie]]).any()):
            return None
    elif len(tie):
        names = run.catalog.docs.names
        if any(names[b].encode("utf-8", "surrogatepass") >= names[a].encode("utf-8", "surrogatepass")
               for a, b in zip(doc[tie].tolist(), doc[tie + 1].tolist())):
            return None
    return q, doc, score


class RunIndex:
    """One run's rankings in trec_eval order, sliced per query of the review."""

    def __init__(self, run: Run, cmap: np.ndarray, nq: int) -> None:
        self.run = run
        self.name = run.name
        q, doc, score = in_order(run) or sort_run(run)
        self.doc = doc
        self._sorted = (q, doc, score)
        self.start = np.zeros(nq, np.int64)
        self.stop = np.zeros(nq, np.int64)
        n = len(q)
        if n:
            brk = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
            ends = np.r_[brk[1:], n]
            ui = cmap[q[brk]]
            ok = ui >= 0
            self.start[ui[ok]] = brk[ok]
            self.stop[ui[ok]] = ends[ok]
            self.rank = np.arange(n) - np.repeat(brk, ends - brk)
            self.row_q = cmap[q]
        else:
            self.rank = np.zeros(0, np.int64)
            self.row_q = np.zeros(0, np.int64)

    def sorted_run(self) -> Run:
        """The run with its rows in trec_eval's order (source lines are not kept)."""
        q, doc, score = self._sorted
        r = self.run
        return Run(r.name, r.path, r.catalog, q, doc, score, np.arange(len(q), dtype=np.int64), r.format, r.meta,
                   r.latency_ms, r.context_tokens, list(r.query_codes))

    def codes(self, qi: int) -> np.ndarray:
        return self.doc[self.start[qi]:self.stop[qi]]

    hidden: np.ndarray | None = None  # with an ACL: per sorted row, the query's user may not see the document

    def hide(self, hidden: np.ndarray) -> None:
        """With an ACL: leave out of every measure the rows the query's user may not see. `rank` becomes the
        rank among the documents the user sees (a hidden row's is past every cut-off), as the core scores
        the run (core/acl.visible_run); `names` still gives the whole ranking, for the rankings pane."""
        if not hidden.any():
            return
        self.hidden = hidden
        seen = np.cumsum(~hidden)  # rows the users may see, up to and including each row
        starts = np.flatnonzero(self.rank == 0)  # each query's first row
        before = np.repeat(seen[starts] - (~hidden[starts]), np.diff(np.r_[starts, len(hidden)]))
        self.rank = np.where(hidden, np.iinfo(np.int64).max // 2, seen - before - 1)

    def sorted_visible_run(self) -> Run:
        """`sorted_run` without the hidden rows: the run as its queries' users may see it."""
        run = self.sorted_run()
        if self.hidden is None:
            return run
        keep = ~self.hidden
        return Run(run.name, run.path, run.catalog, run.q[keep], run.doc[keep], run.score[keep],
                   np.arange(int(keep.sum()), dtype=np.int64), run.format, run.meta, run.latency_ms,
                   run.context_tokens, list(run.query_codes))

    def visible_names(self, qi: int) -> list[str]:
        """The query's ranking as its user may see it (`names` without the hidden documents)."""
        if self.hidden is None:
            return self.names(qi)
        names = self.run.catalog.docs.names
        lo, hi = self.start[qi], self.stop[qi]
        return [names[d] for d in self.doc[lo:hi][~self.hidden[lo:hi]].tolist()]

    def names(self, qi: int) -> list[str]:
        names = self.run.catalog.docs.names
        return [names[d] for d in self.codes(qi).tolist()]

    def __len__(self) -> int:
        return len(self.doc)


@dataclass(frozen=True)
class RankRow:
    rank: int  # 1-based
    doc: str
    grade: int | None  # None: unjudged
    state: str  # "found" (relevant, in the top k), "relevant" (past k), "not-relevant", "unjudged"
    move: int | None  # baseline rank minus candidate rank (positive: the candidate ranks it higher); None: absent
    in_top_k: bool


class ReviewModel(GateAndMacros, ReviewQueueing):
    """Queries, rankings, per-query values, macros and the gate, for every loaded run."""

    FRESH_INLINE_S = 0.02  # a fresh decision that last took at most this long is made on the key itself

    def __init__(self, *, queries: dict[str, Query], runs: dict[str, Run], labels, policy: Policy,
                 no_answer: set[str] = frozenset(), baseline: str | None = None, candidate: str | None = None,
                 name: str = "", collection_version: str = "", progress=None, permissions=None,
                 cached=None) -> None:
        from rankgate.tui.labels import LabelBook  # plain python; keeps the type import light

        self.labels: LabelBook = labels
        qrels: Qrels = labels.qrels
        self.catalog: Catalog = qrels.catalog
        self.policy = policy
        self.k = policy.k
        self.level = policy.checks.rel_level
        self.name = name
        self.collection_version = collection_version
        self.no_answer = set(no_answer)
        # With an ACL (core.acl.Permissions, tui/loader.app_permissions): each run's leaks for the gate, and the
        # access rules: every measure is computed on what each query's user may see, as `rankgate gate` does.
        self.permissions = permissions
        self.access = permissions.access if permissions is not None else None
        self.queries = queries

        self._order_queries(queries, qrels, runs)
        nq = self.nq

        self._must_pass(policy)

        self.extra: list[Measure] = extra_measures(policy)
        self.measures: list[Measure] = self.measures_of(policy)
        self.hit_m, self.p_m, self.r_m, self.rr_m = gate_measures(self.k)

        self.runs: dict[str, RunIndex] = {}
        self.values: dict[str, dict[Measure, np.ndarray]] = {}
        self.evaluated = np.zeros(nq, bool)
        self._score_runs(runs, qrels, progress, cached)
        self.run_names = list(self.runs)
        self.baseline = baseline if baseline in self.runs else (self.run_names[0] if self.run_names else "")
        self.candidate = candidate if candidate in self.runs else (
            self.run_names[1] if len(self.run_names) > 1 else self.baseline)
        self.count = int(self.evaluated.sum())
        self._by_id = self._id_order()
        self.weights = np.array([float(queries[q].weight) if q in queries else 1.0 for q in self.qids])
        self.tags = [tuple(queries[q].tags) if q in queries else () for q in self.qids]
        self.budgets = {rname: budget_values(ri.run) for rname, ri in self.runs.items()}
        self._memo: dict = {}  # significance results, reused after an edit until a fresh gate
        self._memo_version = -1  # the version they were computed at
        self.fresh_s: float | None = None  # CPU seconds the last fresh decision took
        self._evaluated_cache = None  # (review indices by ID, their IDs, their tags, slice masks) of the evaluated

        from rankgate.tui.scorecache import derived_for

        derived = derived_for(cached, self)  # (the counts as the last open made them, when they hold)
        self.derived_from_cache = derived is not None
        self._count_labels(qrels, derived)
        self.unjudged_pair = None  # per query: unjudged in the baseline's or the candidate's top k
        self._qcount = None  # the review queue's items per query and how many are left (queue_left)
        self._unsure: np.ndarray | None = None  # per query: a label marked unsure (read on the first `is:unsure`)
        self.text_hashes: dict[str, str] = {}  # the corpus's {doc: text hash} once read (core/staleness.py)
        self.last_edit_s = 0.0
        self._haystack: list[str] | None = None
        self._tags: list[set[str]] | None = None
        self.version = 0  # bumped by every change the views must show
        self.qversion = np.zeros(nq, np.int64)  # per query: bumped when its labels change
        self.pair_version = 0  # bumped when the baseline or the candidate changes
        if derived is not None and derived["pair"] == [self.baseline, self.candidate]:
            self.unjudged_pair = derived["unjudged_pair"].copy()  # (as the last open counted it)
        self.unjudged_in_pair()  # counted here (the loader's thread), not at the first frame
        self._input_check_state(qrels)

    # ---- the steps of __init__ ----------------------------------------------------------------------

    def _order_queries(self, queries: dict[str, Query], qrels: Qrels, runs: dict[str, Run]) -> None:
        """The review's queries: the benchmark's order, then the labels', then the runs' (qids, qindex, nq)."""
        order: dict[str, None] = dict.fromkeys(queries)
        order.update(dict.fromkeys(qrels.query_ids))
        for run in runs.values():
            order.update(dict.fromkeys(run.query_ids))
        self.qids: list[str] = list(order)
        self.qindex: dict[str, int] = {q: i for i, q in enumerate(self.qids)}
        nq = self.nq = len(self.qids)
        codes = np.fromiter(map(self.catalog.queries.code, self.qids), np.int64, nq)
        cmap = np.full(len(self.catalog.queries), -1, np.int64)
        cmap[codes] = np.arange(nq)
        self._cmap = cmap

    def _must_pass(self, policy: Policy) -> None:
        """Per query: must-pass, answerable; the must-pass queries the review does not have."""
        self.must = np.zeros(self.nq, bool)
        for qid in policy.must_pass:
            if qid in self.qindex:
                self.must[self.qindex[qid]] = True
        self.unknown_must_pass = [q for q in policy.must_pass if q not in self.qindex]
        self.answerable = np.array([q not in self.no_answer for q in self.qids], bool) if self.nq else \
            np.zeros(0, bool)

    def _count_labels(self, qrels: Qrels, derived: dict | None = None) -> None:
        """Per query: relevant labels, and unjudged documents in any run's top k (`derived`: as counted last time)."""
        ok = self._cmap[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
        keep = ok >= 0
        seen = keep if self.access is None else keep & ~self._hidden_rows(qrels)
        self.num_rel = np.bincount(ok[seen & (qrels.grade >= self.level)], minlength=self.nq).astype(np.int64)
        self.rel_any = np.bincount(ok[keep & (qrels.grade >= self.level)], minlength=self.nq) > 0  # ACL or not
        self.num_labels = np.bincount(ok[keep], minlength=self.nq).astype(np.int64)
        if derived is not None:  # (copies: the counts change in place with each edit)
            self.unjudged = derived["unjudged"].copy()
            self.topk_judged = {r: a.copy() for r, a in zip(derived["runs"], derived["topk_judged"])}
            self.topk_ranked = {r: a.copy() for r, a in zip(derived["runs"], derived["topk_ranked"])}
            return
        self.unjudged, self.topk_judged, self.topk_ranked = self._top_k_all(qrels, ok, keep)

    def _input_check_state(self, qrels: Qrels) -> None:
        """What the gate's input checks (core.validate, core.binding) read, on the labels as an export would
        write them."""
        self.input_checks = True  # off for a review of labels alone (no runs)
        self.labels_file = ""  # the file `rankgate gate` reads the labels from (the loader sets it)
        self.shapes = [RunShape(n, ri.run.path, frozenset(ri.run.query_ids), tuple(short_rankings(ri.run, self.k)))
                       for n, ri in self.runs.items()]
        # per query: the collection versions its labels name (from the store's columns: no object per label)
        self._qversions: dict[str, Counter] = versions_by_query(qrels.details)
        total: dict[str, int] = {}  # (summed as plain ints: Counter.update per query cost 30 ms at 10k queries)
        for counts in self._qversions.values():
            for v, n in counts.items():
                total[v] = total.get(v, 0) + n
        self.versions = Counter(total)
        self._input_memo: tuple | None = None  # (judged, relevant, problems) last found

    @staticmethod
    def measures_of(policy: Policy) -> list[Measure]:
        """Every measure the review shows: the gate's, then the policy's extra ones."""
        return list(dict.fromkeys(gate_measures(policy.k) + extra_measures(policy)))

    # ---- initial, vectorised -------------------------------------------------------------------

    def _score_runs(self, runs: dict[str, Run], qrels: Qrels, progress, cached=None) -> None:
        """Rankings, and every run scored once, all queries at once. Runs go to a few threads: numpy
        lets go of the GIL in its sorts and joins, so several cores share the work. With `cached`
        (tui/scorecache.Cached) the runs' values come from it, and only the queries whose labels changed
        since are scored, one by one (as after a grade key)."""
        nq, cmap = self.nq, self._cmap
        no_answer = self.no_answer
        if self.access is not None:  # what each query's user may see (core/acl.py)
            from rankgate.core.acl import as_seen

            qrels, _, no_answer = as_seen(self.access, qrels, [], self.level, no_answer)
            cached = None  # (the score cache holds no scores under an ACL)
        answerable_ids = [q for q in self.qids if q not in no_answer]
        names = {str(m): m for m in self.measures}
        if cached is not None and (set(cached.values) != set(runs) or any(
                set(per) != set(names) for per in cached.values.values())):
            cached = None
        self.scored_from_cache = cached is not None
        if cached is None:  # (with scores from the cache, runs in order need no document order: in_order)
            self.catalog.docs.order()  # computed once here, not by each thread

        def index_and_score(item):
            rname, run = item
            ri = RunIndex(run, cmap, nq)
            if self.access is not None:
                ri.hide(self._hidden_rows(ri.sorted_run()))
            if cached is not None:
                known = [i for i, q in enumerate(cached.qids) if q in self.qindex]
                s = Scores(rname, [cached.qids[i] for i in known],
                           {names[m]: v[known] for m, v in cached.values[rname].items()})
                return rname, ri, s
            # Scored from the rows RunIndex put in trec_eval's order: the engine finds them sorted.
            s = evaluate(qrels, ri.sorted_visible_run(), self.measures, rel_level=self.level, missing="zero",
                         queries=answerable_ids)
            return rname, ri, s

        if progress:
            progress(f"scoring {len(runs)} runs", 0, len(runs))
        workers = max(1, min(len(runs), os.cpu_count() or 1, 4))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                scored = list(pool.map(index_and_score, runs.items()))
        else:
            scored = [index_and_score(item) for item in runs.items()]
        for rname, ri, s in scored:
            self.runs[rname] = ri
            pos = np.fromiter((self.qindex[q] for q in s.qids), np.int64, len(s.qids))
            self.evaluated[pos] = True
            per = {}
            for m in self.measures:
                arr = np.zeros(nq)
                arr[pos] = s.values[m]
                per[m] = arr
            self.values[rname] = per
        for qid in sorted(cached.changed) if cached is not None else ():
            qi = self.qindex.get(qid)
            if qi is None:
                continue
            now, vals = self.score_query(qi)
            self.evaluated[qi] = now
            for rname, per in self.values.items():
                for m, arr in per.items():
                    arr[qi] = vals[rname][m]

    # ---- permissions (with an ACL) -----------------------------------------------------------------------

    def _hidden_rows(self, rows) -> np.ndarray:
        """Per row of qrels or a run: the query's user may not see the document."""
        from rankgate.core.acl import restricted_rows

        return restricted_rows(self.access, self.catalog, rows.q, rows.doc)

    def restricted(self, qi: int, doc: str) -> list[str] | None:
        """The groups allowed to see a document the query's user may not see; None when the user may see it
        (or there is no ACL)."""
        if self.access is None or self.access.may_see(self.qids[qi], doc):
            return None
        return sorted(self.access.acl.get(doc, ()))

    def _seen_grades(self, qid: str) -> dict[str, int]:
        """The query's labels its user may see (all of them without an ACL)."""
        grades = self.labels.grades(qid)
        if self.access is None:
            return grades
        return {d: g for d, g in grades.items() if self.access.may_see(qid, d)}

    def _no_visible_answer(self, qid: str) -> bool:
        """With an ACL: the query has relevant labels and its user may see none of them (core/acl.py)."""
        if self.access is None:
            return False
        from rankgate.core.acl import no_visible_answer

        relevant = [d for d, g in self.labels.grades(qid).items() if g >= self.level]
        return no_visible_answer(self.access, qid, relevant, self.no_answer)

    def _top_k_all(self, qrels: Qrels, ok: np.ndarray, keep: np.ndarray):
        """Per query: unjudged documents in any run's top k (each once); per run and query: judged
        and ranked documents in its top k (as core.compare counts them for coverage)."""
        D = max(len(self.catalog.docs), 1)
        judged = unique(ok[keep] * D + qrels.doc[keep]) if len(ok) else np.zeros(0, np.int64)
        parts, jcount, rcount = [], {}, {}
        for rname, ri in self.runs.items():
            top = (ri.rank < self.k) & (ri.row_q >= 0)
            keys = ri.row_q[top] * D + ri.doc[top]
            if len(judged):
                idx = np.minimum(np.searchsorted(judged, keys), len(judged) - 1)
                is_judged = judged[idx] == keys
            else:
                is_judged = np.zeros(len(keys), bool)
            rows_q = ri.row_q[top]
            rcount[rname] = np.bincount(rows_q, minlength=self.nq).astype(np.int64)
            jcount[rname] = np.bincount(rows_q[is_judged], minlength=self.nq).astype(np.int64)
            parts.append(keys[~is_judged])
        if not parts:
            return np.zeros(self.nq, np.int64), jcount, rcount
        allk = unique(np.concatenate(parts))
        return np.bincount(allk // D, minlength=self.nq).astype(np.int64), jcount, rcount

    def _unjudged_of(self, rnames, qi: np.ndarray, doc: np.ndarray) -> np.ndarray:
        """Per query: unjudged documents in the top k of these runs (each document once), vectorised;
        `qi`, `doc`: the judged pairs (review index, document code)."""
        D = max(len(self.catalog.docs), 1)
        judged = unique(qi.astype(np.int64) * D + doc) if len(qi) else np.zeros(0, np.int64)
        parts = []
        for rname in dict.fromkeys(rnames):
            ri = self.runs.get(rname)
            if ri is None:
                continue
            top = (ri.rank < self.k) & (ri.row_q >= 0)
            parts.append(ri.row_q[top] * D + ri.doc[top])
        if not parts:
            return np.zeros(self.nq, np.int64)
        keys = unique(np.concatenate(parts))
        if len(judged):
            idx = np.minimum(np.searchsorted(judged, keys), len(judged) - 1)
            keys = keys[judged[idx] != keys]
        return np.bincount(keys // D, minlength=self.nq).astype(np.int64)

    def _judged_pairs(self, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
        """The judged pairs now, as (review index, document code): the labels read at open, with the queries
        edited since (qversion > 0) read from the label book instead (no full read of the store)."""
        qi = self._cmap[qrels.q] if len(qrels.q) else np.zeros(0, np.int64)
        keep = qi >= 0
        edited = np.flatnonzero(self.qversion > 0)
        if len(edited):
            keep &= self.qversion[np.maximum(qi, 0)] == 0
        qi, doc = qi[keep], qrels.doc[keep].astype(np.int64)
        if len(edited):
            code = self.catalog.docs.code
            extra = [(i, code(d)) for i in edited.tolist() for d in self.labels.grades(self.qids[i])]
            if extra:
                e = np.array(extra, np.int64)
                qi, doc = np.r_[qi, e[:, 0]], np.r_[doc, e[:, 1]]
        return qi, doc

    def unjudged_in_pair(self) -> int:
        """Unjudged documents left in the top k of the baseline and the candidate (the gate's runs)."""
        if self.unjudged_pair is None:  # the pair changed: counted again
            self.unjudged_pair = self._unjudged_of((self.baseline, self.candidate),
                                                   *self._judged_pairs(self.labels.qrels))
        return int(self.unjudged_pair.sum())

    def queue_left(self) -> int | None:
        """Items of the review queue (built for the current pair) not judged since; None: not built."""
        cached = getattr(self, "_queue", None)
        if cached is None or cached[0] != self.pair_version:
            return None
        queue = cached[2]
        if self._qcount is None or self._qcount[0] is not queue:
            per: dict[str, list[str]] = {}
            for it in queue.items:
                per.setdefault(it.query, []).append(it.doc)
            left = {q: len(docs) for q, docs in per.items()}
            if self.version != cached[1]:  # edits since the queue was built: count those queries again
                left = {q: self._left_in(q, docs) for q, docs in per.items()}
            self._qcount = [queue, per, left, sum(left.values())]
        return self._qcount[3]

    def unsure_queries(self) -> np.ndarray:
        """Per query: does a label of it carry an unsure mark? Read from the labels on the first ask (every
        query's labels once), then kept up to date by `apply_edit`."""
        if self._unsure is None:
            self._unsure = np.fromiter((any(lab.unsure for lab in self.labels.labels(q).values())
                                        for q in self.qids), bool, self.nq)
        return self._unsure

    def is_stale(self, lab) -> bool:
        """A label judged on a text the corpus has changed since (core/staleness.py)."""
        now = self.text_hashes.get(lab.doc)
        return bool(lab.text_hash and now and now != lab.text_hash)

    def stale_labels(self, qid: str) -> list:
        return [lab for lab in self.labels.labels(qid).values() if self.is_stale(lab)]

    def stale_queries(self) -> np.ndarray:
        """Per query: does a label of it stand on a text the corpus changed? (False before the corpus is read)"""
        if not self.text_hashes:
            return np.zeros(self.nq, bool)
        return np.fromiter((bool(self.stale_labels(q)) for q in self.qids), bool, self.nq)

    def set_texts(self, corpus: dict) -> None:
        """The corpus is read: stale labels show, and a label set from now on records its document's text."""
        from rankgate.core.staleness import corpus_hashes

        self.text_hashes = corpus_hashes(corpus)  # no version bump: no label changed (the panes redraw)
        self.labels.backend.text_hashes = self.text_hashes

    def _left_in(self, qid: str, docs: list[str]) -> int:
        grades = self.labels.grades(qid)
        return sum(1 for d in docs if d not in grades)

    def _id_order(self) -> np.ndarray:
        """Review indices sorted by query ID, byte-wise: the order of the core's scores and Paired."""
        return np.array(sorted(range(self.nq), key=lambda i: self.qids[i].encode("utf-8")), dtype=np.int64)

    # ---- per query, on an edit -------------------------------------------------------------------

    def score_query(self, qi: int) -> tuple[bool, dict[str, dict[Measure, float]]]:
        """One query's values for every run, from the current labels (the core's engine on one query)."""
        qid = self.qids[qi]
        grades = self._seen_grades(qid)
        zero = {r: {m: 0.0 for m in self.measures} for r in self.runs}
        if not grades or qid in self.no_answer or self._no_visible_answer(qid):
            return False, zero
        cat = Catalog()
        cat.queries.code(qid)
        docs = list(grades)
        qrels = Qrels("", cat, np.zeros(len(docs), np.int32),
                      np.fromiter(map(cat.docs.code, docs), np.int32, len(docs)),
                      np.fromiter(grades.values(), np.int64, len(docs)), [0])
        out = {}
        for rname, ri in self.runs.items():
            names = ri.visible_names(qi)
            n = len(names)
            run = Run(rname, "", cat, np.zeros(n, np.int32), np.fromiter(map(cat.docs.code, names), np.int32, n),
                      np.arange(n, 0, -1, dtype=np.float64), np.arange(n, dtype=np.int64), query_codes=[0])
            s = evaluate(qrels, run, self.measures, rel_level=self.level, missing="zero", queries=[qid])
            out[rname] = {m: float(s.values[m][0]) for m in self.measures}
        return True, out

    def apply_edit(self, qid: str) -> None:
        """After the labels of one query changed: re-score it, recount its top-k coverage."""
        t0 = time.perf_counter()
        qi = self.qindex.get(qid)
        if qi is None:  # a label for a query no file knew: it joins the review
            qi = self._add_query(qid)
        was = bool(self.evaluated[qi])
        now, vals = self.score_query(qi)
        for rname, per in self.values.items():
            for m, arr in per.items():
                arr[qi] = vals[rname][m]
        self.evaluated[qi] = now
        self.count += int(now) - int(was)
        if now != was:
            self._evaluated_cache = None
        grades = self.labels.grades(qid)
        self.num_rel[qi] = sum(1 for g in self._seen_grades(qid).values() if g >= self.level)
        self.rel_any[qi] = any(g >= self.level for g in grades.values())
        now_versions = Counter(lab.collection_version for lab in self.labels.labels(qid).values()
                               if lab.collection_version)
        self.versions.subtract(self._qversions.get(qid, Counter()))
        self.versions.update(now_versions)
        self._qversions[qid] = now_versions
        self.num_labels[qi] = len(grades)
        self.unjudged[qi] = self._unjudged_one(qi, grades)
        for rname, ri in self.runs.items():
            self.topk_judged[rname][qi] = sum(1 for d in ri.visible_names(qi)[: self.k] if d in grades)
        if self.unjudged_pair is not None:
            top = set()
            for rname in (self.baseline, self.candidate):
                top.update(self.runs[rname].visible_names(qi)[: self.k])
            self.unjudged_pair[qi] = len(top - grades.keys())
        if self._unsure is not None:
            self._unsure[qi] = any(lab.unsure for lab in self.labels.labels(qid).values())
        if self._qcount is not None and qid in self._qcount[1]:
            n = self._left_in(qid, self._qcount[1][qid])
            self._qcount[3] += n - self._qcount[2][qid]
            self._qcount[2][qid] = n
        self.qversion[qi] += 1
        self.version += 1
        self.last_edit_s = time.perf_counter() - t0

    def _unjudged_one(self, qi: int, grades: dict[str, int]) -> int:
        top: set[str] = set()
        for ri in self.runs.values():
            top.update(ri.visible_names(qi)[: self.k])
        return len(top - grades.keys())

    def _add_query(self, qid: str) -> int:
        qi = self.nq
        self.qids.append(qid)
        self.qindex[qid] = qi
        code = self.catalog.queries.code(qid)
        if code >= len(self._cmap):
            self._cmap = np.r_[self._cmap, np.full(code + 1 - len(self._cmap), -1, np.int64)]
        self._cmap[code] = qi
        self.nq += 1
        grow = lambda a, v=0: np.r_[a, np.array([v], dtype=a.dtype)]  # noqa: E731
        self.must = grow(self.must, qid in self.policy.must_pass)
        self.answerable = grow(self.answerable, qid not in self.no_answer)
        self.evaluated = grow(self.evaluated, False)
        self.num_rel, self.num_labels, self.unjudged = grow(self.num_rel), grow(self.num_labels), grow(self.unjudged)
        self.rel_any = grow(self.rel_any, False)
        if self.unjudged_pair is not None:
            self.unjudged_pair = grow(self.unjudged_pair)
        self.qversion = grow(self.qversion)
        if self._unsure is not None:
            self._unsure = grow(self._unsure, False)
        self.weights = grow(self.weights, 1.0)
        self.tags.append(())
        for per in (self.topk_judged, self.topk_ranked):
            for rname in per:
                per[rname] = grow(per[rname])
        for per in self.values.values():
            for m in per:
                per[m] = grow(per[m], 0.0)
        for ri in self.runs.values():
            ri.start, ri.stop = grow(ri.start), grow(ri.stop)
        self._haystack = self._tags = None
        self._by_id = self._id_order()
        self._evaluated_cache = None
        return qi

    # ---- macros and the gate: tui/model_gate.py (GateAndMacros); the review queue: tui/model_queue.py

    # ---- per query views -----------------------------------------------------------------------------

    def query(self, qi: int) -> Query:
        qid = self.qids[qi]
        return self.queries.get(qid) or Query(qid)

    def metric(self, rname: str, m: Measure, qi: int) -> float:
        return float(self.values[rname][m][qi])

    def ranking(self, qi: int, rname: str) -> list[RankRow]:
        """One run's ranking of one query with grade states and movement between baseline and candidate."""
        ri = self.runs[rname]
        names = ri.names(qi)
        grades = self.labels.grades(self.qids[qi])
        other = self.candidate if rname == self.baseline else self.baseline
        other_rank = {d: i for i, d in enumerate(self.runs[other].names(qi))} if other != rname else None
        rows = []
        hidden = ri.hidden[ri.start[qi]:ri.stop[qi]].tolist() if ri.hidden is not None else None
        seen = 0  # documents the user may see, above this one: the top k counts those only (core/acl.py)
        for i, d in enumerate(names):
            g = grades.get(d)
            top = seen < self.k
            if hidden is not None and hidden[i]:  # a leak: never found, drawn inside the top k it sits in
                state = "unjudged" if g is None else "not-relevant" if g < self.level else "relevant"
                rows.append(RankRow(i + 1, d, g, state, self._move(other_rank, rname, i, d), top))
                continue
            seen += 1
            if g is None:
                state = "unjudged"
            elif g >= self.level:
                state = "found" if top else "relevant"
            else:
                state = "not-relevant"
            rows.append(RankRow(i + 1, d, g, state, self._move(other_rank, rname, i, d), top))
        return rows

    def _move(self, other_rank: dict[str, int] | None, rname: str, i: int, d: str) -> int | None:
        """Baseline rank minus candidate rank of a document at 0-based rank i of run `rname`."""
        if other_rank is None:
            return 0
        if d not in other_rank:
            return None
        b, c = (i, other_rank[d]) if rname == self.baseline else (other_rank[d], i)
        return b - c

    def missing(self, qi: int, rname: str) -> list[str]:
        """Relevant documents the run does not have in its top k (core.gate.query_rows' 'missing')."""
        grades = self._seen_grades(self.qids[qi])
        top = set(self.runs[rname].visible_names(qi)[: self.k])
        return sorted(d for d, g in grades.items() if g >= self.level and d not in top)

    def unjudged_items(self, qi: int) -> list[tuple[str, int, str]]:
        """(run, 0-based rank, doc) of each unjudged document in a top k, each document once:
        the candidate's first, then the baseline's, then the other runs'."""
        grades = self.labels.grades(self.qids[qi])
        seen: set[str] = set()
        out = []
        for rname in dict.fromkeys([self.candidate, self.baseline, *self.run_names]):
            for i, d in enumerate(self.runs[rname].visible_names(qi)[: self.k]):
                if d not in grades and d not in seen:
                    seen.add(d)
                    out.append((rname, i, d))
        return out

    def first_unjudged(self, qi: int) -> tuple[str, int, str] | None:
        items = self.unjudged_items(qi)
        return items[0] if items else None

    # ---- the query list: filter and sort ---------------------------------------------------------------

    def _ensure_text(self) -> None:
        if self._haystack is None:
            hay, tags = [], []
            for q in self.qids:
                query = self.queries.get(q)
                hay.append(f"{q} {query.text if query else ''}".lower())
                tags.append({t.lower() for t in query.tags} if query else set())
            self._haystack, self._tags = hay, tags

    def slices(self) -> list[str]:
        return sorted({t for q in self.queries.values() for t in q.tags})

    def deltas(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        b, c = self.values[self.baseline], self.values[self.candidate]
        return c[self.hit_m] - b[self.hit_m], c[self.r_m] - b[self.r_m], c[self.rr_m] - b[self.rr_m]

    def order(self, text: str = "", sort: str = "change") -> np.ndarray:
        """Review indices of the queries that match the filter, in the chosen order.

        The filter's words must all match: `#slice` (a tag), `is:review`, `is:must`, `is:miss`,
        `is:lost`, `is:changed`, `is:labelled`, `is:unsure`, `is:stale`, else a case-insensitive part of the ID or text.
        """
        nq = self.nq
        keep = np.ones(nq, bool)
        words = text.lower().split()
        plain = []
        dhit, dr, drr = self.deltas()
        chit = self.values[self.candidate][self.hit_m]
        bhit = self.values[self.baseline][self.hit_m]
        for w in words:
            if w.startswith("#") and len(w) > 1:
                self._ensure_text()
                tag = w[1:]
                keep &= np.fromiter((tag in t for t in self._tags), bool, nq)
            elif w == "is:review":
                keep &= self.unjudged > 0
            elif w == "is:must":
                keep &= self.must
            elif w == "is:miss":
                keep &= self.evaluated & (chit == 0)
            elif w == "is:lost":
                keep &= self.evaluated & (bhit > 0) & (chit == 0)
            elif w == "is:changed":
                keep &= (dhit != 0) | (dr != 0) | (drr != 0)
            elif w == "is:unsure":
                keep &= self.unsure_queries()
            elif w == "is:stale":
                keep &= self.stale_queries()
            elif w == "is:labelled":
                keep &= self.num_labels > 0
            else:
                plain.append(w)
        if plain:
            self._ensure_text()
            hay = self._haystack
            idx = np.flatnonzero(keep)
            ok = [i for i in idx.tolist() if all(p in hay[i] for p in plain)]
            keep = np.zeros(nq, bool)
            keep[ok] = True
        idx = np.flatnonzero(keep)
        if sort == "change":
            pos = np.arange(nq)
            first = np.where(self.must & self.evaluated & (chit == 0), -3,
                             np.where(dhit < 0, -2, np.where(dhit > 0, 1, 0)))
            perm = np.lexsort((pos[idx], (dr + drr)[idx], first[idx]))
            idx = idx[perm]
        return idx


def versions_by_query(details) -> dict[str, Counter]:
    """{query: Counter of its labels' non-empty collection versions}; the store's lazy details
    (store/labels.Details) count them from their columns, without an object per label."""
    counted = getattr(details, "versions_by_query", None)
    if counted is not None:
        return counted()
    out: dict[str, Counter] = {}
    for (q, _), det in details.items():
        if det.collection_version:
            out.setdefault(q, Counter())[det.collection_version] += 1
    return out
