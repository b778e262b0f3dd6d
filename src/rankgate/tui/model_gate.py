"""The review model's gate: the pair of runs as the core's Paired (significance answered from the last fresh
decision while edits go on), the core's decision on it, why `rankgate gate` would refuse these inputs, and
the macros. A mixin of ReviewModel (tui/model.py), with the view the gate panel shows (GateView)."""

from __future__ import annotations

import time
from dataclasses import field

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.binding import HOW_TO_ALLOW, binding_problems, count_versions, run_snapshot
from rankgate.core.compare import Paired, aggregate
from rankgate.core.leniency import with_how_to_accept
from rankgate.core.validate import gate_input_problems
from rankgate.core.decision import decide, macro_keys
from rankgate.core.gate import query_problems


@dataclass
class GateView:
    """The gate as the panel shows it, in the shape of core.gate's result data."""

    baseline: str
    candidate: str
    k: int
    baseline_macro: dict[str, float]
    candidate_macro: dict[str, float]
    checks: dict[str, bool]
    check_details: list[dict]
    failed: np.ndarray  # review indices of evaluated queries the candidate misses
    must_pass: list[str]
    accepted: bool
    evaluated: int
    unknown_must_pass: list[str] = field(default_factory=list)
    stale: bool = False  # significance results are from before the last edit (a fresh gate follows)
    version: int = 0  # the model's version this view was computed at
    memo: dict | None = field(default=None, repr=False)  # its significance results
    refused: list[tuple[str, str]] = field(default_factory=list)  # (file, why) `rankgate gate` would refuse: no decision
    power: dict | None = None  # the power advice (core/power.py), as the gate's JSON has it

    @property
    def decided(self) -> bool:
        return not self.refused

    @property
    def decision(self) -> str:
        return "accept" if self.accepted else "reject"


class LivePaired(Paired):
    """The core's Paired, whose significance tests may answer from an earlier decision (`defer`).

    A deferred answer is the memo's result for the same test, or failing that (the evaluated
    queries changed, so the masks did) for the same measure and settings on as many queries;
    `used_memo` says one was used.
    """

    def setup(self, memo: dict, defer: bool, shared: dict) -> "LivePaired":
        self.memo, self.defer, self.used_memo = memo, defer, False
        self.shared = shared  # slice masks and positions, kept while the evaluated queries stay the same
        return self

    def position(self) -> dict[str, int]:
        got = self.shared.get("position")
        if got is None:
            got = self.shared["position"] = super().position()
        return got

    def mask(self, slice_name=None):
        if slice_name is None:
            return super().mask(None)
        got = self.shared.get(("mask", slice_name))
        if got is None:  # a loop over every query's tags: once, not on every edit
            got = self.shared[("mask", slice_name)] = super().mask(slice_name)
        return got

    def significance(self, m, *, mask=None, weighted=False, resamples=10000, seed=0, confidence=0.95):
        settings = (self.baseline_name, self.candidate_name, m, weighted, resamples, seed, confidence)
        exact = settings + (None if mask is None else mask.tobytes(),)
        loose = settings + ("n", self.n if mask is None else int(mask.sum()))
        if self.defer:
            got = self.memo.get(exact) or self.memo.get(loose)
            if got is not None:
                self.used_memo = True
                return got
        result = super().significance(m, mask=mask, weighted=weighted, resamples=resamples, seed=seed,
                                      confidence=confidence)
        self.memo[exact] = self.memo[loose] = result
        return result


class GateAndMacros:
    """ReviewModel's gate: `gate()` decides on the current labels (`decide` in a worker, on `gate_inputs`)."""

    def paired(self, *, fresh: bool = False) -> LivePaired:
        """Baseline and candidate on the evaluated queries, in the shape core.compare.pair makes.
        The arrays are copies: a worker may decide on them while edits go on."""
        if self._evaluated_cache is None:  # the evaluated queries change rarely: keep their lists
            idx = self._by_id[self.evaluated[self._by_id]]
            self._evaluated_cache = (idx, [self.qids[i] for i in idx.tolist()], [self.tags[i] for i in idx.tolist()],
                                     {})
        idx, qids, tags, shared = self._evaluated_cache
        b, c = self.baseline, self.candidate
        p = LivePaired(
            baseline_name=b, candidate_name=c, k=self.k, rel_level=self.level,
            qids=list(qids), measures=list(self.measures),
            baseline={m: v[idx] for m, v in self.values[b].items()},
            candidate={m: v[idx] for m, v in self.values[c].items()},
            weights=self.weights[idx], tags=list(tags),
            judged={"baseline": self.topk_judged[b][idx], "candidate": self.topk_judged[c][idx]},
            ranked={"baseline": self.topk_ranked[b][idx], "candidate": self.topk_ranked[c][idx]},
            budgets={"baseline": self.budgets[b], "candidate": self.budgets[c]})
        p.permissions = self.permissions  # leaks, found at load (tui/loader.app_permissions)
        return p.setup({} if fresh else self._memo, defer=not fresh, shared=shared)

    def refusals(self) -> list[tuple[str, str]]:
        """Why `rankgate gate` would refuse these labels, exported, with these runs (exit 2): the core's input
        checks (core.validate.gate_input_problems: judged queries against each run's, short rankings) with
        the gate's "how to accept", and the binding of the pair of runs to the labels' collection version
        (core.binding), under the policy's options. [] when the gate would decide."""
        if not self.input_checks:
            return []
        judged, rel = self.num_labels > 0, self.rel_any
        memo = self._input_memo
        if memo is None or not (np.array_equal(memo[0], judged) and np.array_equal(memo[1], rel)):
            ids = [self.qids[i] for i in self._by_id[judged[self._by_id]].tolist()]
            found = gate_input_problems(self.labels_file or "the labels", ids,
                                        {self.qids[i] for i in np.flatnonzero(rel).tolist()}, self.shapes,
                                        self.policy.checks, self.no_answer)
            found = [(p.where, p.what) for p in with_how_to_accept(found)]
            if ids:  # (with none, "no judgments yet" says it all)
                found += [(e.path, e.what) for e in query_problems(set(ids) | self.no_answer, self.policy)]
            memo = self._input_memo = (judged.copy(), rel.copy(), found)
        out = list(memo[2])
        if not self.policy.allow_snapshot_mismatch and self.baseline in self.runs and self.candidate in self.runs:
            pair = [self.runs[n].run for n in dict.fromkeys((self.baseline, self.candidate))]
            labels = count_versions(+self.versions, int(self.num_labels.sum()), "", self.collection_version)
            for path, what, version in binding_problems(labels, {r.name: run_snapshot(r) for r in pair},
                                                        {r.name: r.path for r in pair}):
                where = self._carrier(version)
                out.append((path, f"{what}{f', e.g. {where}' if where else ''}; {HOW_TO_ALLOW}"))
        return out

    def _carrier(self, version: str) -> str:
        """A label with this collection version, as `rankgate gate` names one: "query 'q', document 'd'"."""
        for qid, counts in self._qversions.items():
            if counts.get(version, 0) > 0:
                doc = next((d for d, lab in self.labels.labels(qid).items() if lab.collection_version == version), None)
                if doc is not None:
                    return f"query {qid!r}, document {doc!r}"
        return ""

    def snapshot_warning(self, version: str) -> str:
        """What a label's collection version does to the gate when it is not the corpus snapshot the pair of
        runs was made on ("" when it is, or the runs carry none, or the policy allows a mismatch)."""
        if self.policy.allow_snapshot_mismatch or self.baseline not in self.runs or self.candidate not in self.runs:
            return ""
        snaps = sorted({s for s in (run_snapshot(self.runs[n].run) for n in (self.baseline, self.candidate)) if s})
        version = version.strip()
        if not snaps or not version or version in snaps:
            return ""
        return (f"not the runs' corpus_snapshot {' / '.join(snaps)}: the gate stops (NO DECISION here, "
                "`rankgate gate` exits 2) until the runs are made on this version or the policy allows a mismatch")

    def gate_inputs(self, *, fresh: bool = False) -> tuple:
        """What a decision reads, taken now (on the thread that edits)."""
        hit = self.values[self.candidate][self.hit_m]
        return (self.paired(fresh=fresh), np.flatnonzero(self.evaluated & (hit == 0)), self.version,
                self._memo_version, self.refusals())

    def decide(self, inputs: tuple) -> GateView:
        """The core's decision on gate_inputs(); safe in a worker thread (reads only the inputs)."""
        p, failed, version, memo_version, refused = inputs
        t0 = time.thread_time()  # CPU, not wall: a busy machine must not move cheap tests into a worker
        dec = decide(self.policy, p)
        if not p.defer:
            self.fresh_s = time.thread_time() - t0
        keys = macro_keys(self.k, self.extra)
        stale = p.used_memo and memo_version != version
        return GateView(p.baseline_name, p.candidate_name, self.k,
                        {key: p.macro("baseline", m) for key, m in keys},
                        {key: p.macro("candidate", m) for key, m in keys},
                        dec.checks, dec.details, failed, list(self.policy.must_pass), dec.accepted, p.n,
                        self.unknown_must_pass, stale, version, p.memo if not p.used_memo else None, refused,
                        self._power(p))

    def _power(self, p) -> dict | None:
        """The gate's power advice on these per-query values (core/power.py); None when it has none."""
        from rankgate.core.power import power_advice

        try:
            return power_advice(p, self.policy) if p.baseline_name != p.candidate_name else None
        except (AttributeError, KeyError):  # a measure the app does not score
            return None

    def fresh_is_cheap(self) -> bool:
        """Whether significance tests are cheap enough to run on the key (ops-handbook's 40 queries with
        10,000 resamples: about 12 ms) rather than in a worker after the frame (about a second each at
        10,000 queries). Measured in CPU time of the thread that decided."""
        return self.fresh_s is not None and self.fresh_s <= self.FRESH_INLINE_S

    def adopt(self, view: GateView) -> None:
        """Keep a fresh decision's significance results for the deferred decisions that follow."""
        if view.memo is not None and view.version >= self._memo_version:
            self._memo, self._memo_version = view.memo, view.version

    def gate(self, *, fresh: bool = False) -> GateView:
        """The core's decision on the current labels. Unless `fresh`, significance tests answer from
        the last fresh gate (`view.stale` says when that mattered); everything else is current."""
        view = self.decide(self.gate_inputs(fresh=fresh))
        self.adopt(view)
        return view

    def macro(self, rname: str) -> dict[str, float]:
        """One run's macros in core.gate.macro's shape (the gate's four names, then the extra measures)."""
        ev = self.evaluated
        return {key: aggregate(m, self.values[rname][m][ev]) for key, m in macro_keys(self.k, self.extra)}

    def set_pair(self, baseline: str | None = None, candidate: str | None = None) -> None:
        if baseline is not None:
            if baseline not in self.runs:
                raise KeyError(baseline)
            self.baseline = baseline
        if candidate is not None:
            if candidate not in self.runs:
                raise KeyError(candidate)
            self.candidate = candidate
        self.pair_version += 1
        self.version += 1
        self.unjudged_pair = None  # counted again when asked
