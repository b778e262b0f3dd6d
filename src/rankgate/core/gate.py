"""Run a gate: score two runs, decide (core.decision), and write the report.

The default gate: candidate Recall@k and MRR@k not lower than the baseline's,
and every must-pass query hit in the candidate's top k. A policy adds rules
(floors, tolerances, per-slice floors with a minimum slice size, weighted
macros, "no significant regression", judged coverage, latency and context
budgets, no newly failed queries), waivers, and the binding of runs to the
labels' collection version; see docs/policy.md.

Two steps, kept apart so the app can re-decide after an edit without
re-scoring: `pair()` (core.compare) scores both runs into per-query arrays,
and `decide(policy, paired)` turns those arrays into checks and a decision.
`run_gate` does both and adds the report: macros, deltas with significance,
slices, coverage and the review queue, budgets, binding, waivers.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import field
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: a path that does not use it does not pay for it
    import numpy as np

from rankgate.core.compare import (Paired, budget_summary, coverage_summary, measure_summary, pair,
                                   significance_settings, slice_summary)
from rankgate.core.engine import Scores, evaluate
from rankgate.core.decision import Decision, decide, extra_measures, gate_measures, macro_keys
from rankgate.core.errors import InputError
from rankgate.core.measures import Measure
from rankgate.core.model import Qrels, Query, Run, unique
from rankgate.core.policy import Policy
from rankgate.core.validate import Checks

QUEUE_IN_REPORT = 20  # review-queue entries the gate's JSON lists (the app gets them all)


# ---- per-query rows and macros in the release-gate JSON's shape ------------------------------

def score_run(qrels: Qrels, run: Run, k: int, checks: Checks, extra: list[Measure], answerable: list[str],
              **options) -> Scores:
    """`options`: the engine's depth (trec_eval -M) and judged_only (-J), for `rankgate score`."""
    ms = list(dict.fromkeys(gate_measures(k) + list(extra)))
    return evaluate(qrels, run, ms, rel_level=checks.rel_level, missing="zero", queries=answerable, **options)


def query_rows(scores: Scores, qrels: Qrels, k: int, level: int, extra: list[Measure],
               which: list[int] | None = None) -> list[dict]:
    """Per query: the release-gate JSON's fields (hit, P, R, RR at k, found and missing IDs) plus extra measures.
    `which`: the positions (in scores.qids) of the queries to give rows for, in that order; every query's by
    default (the gate's JSON lists only the queries missed at k: a few of 10,000, each with its sorted IDs)."""
    import numpy as np
    p = scores.prepared
    dn = qrels.catalog.docs  # only the names of these rows (a catalog read fast: not a Python string for each of
    # its documents, 1M judged: 70 MB and 0.1 s)
    rows = p.rel(level) & (p.rank < k)
    ok = (p.qrels_qp >= 0) & (p.qrels_grade >= level)
    if which is not None:  # only the rows and judgments of the queries asked for
        wanted = np.zeros(p.nq + 1, bool)  # (the last: qrels_qp's -1, a query not evaluated)
        wanted[list(which)] = True
        rows &= wanted[p.qp]
        ok &= wanted[p.qrels_qp]
    rows = np.flatnonzero(rows)
    rows = rows[np.argsort(p.qp[rows], kind="stable")]  # by query, each in rank order
    fq, fd = p.qp[rows].astype(np.int64), p.doc[rows].astype(np.int64)
    ok = np.flatnonzero(ok)
    rq, rd = p.qrels_qp[ok].astype(np.int64), qrels.doc[ok].astype(np.int64)
    span = 1 + max([int(a.max()) for a in (fd, rd) if len(a)] or [0])
    relevant = unique(rq * span + rd)  # each relevant document of a query once
    missing = relevant[~np.isin(relevant, fq * span + fd)]
    mq = missing // span
    found_at = np.searchsorted(fq, np.arange(p.nq + 1)).tolist()
    missing_at = np.searchsorted(mq, np.arange(p.nq + 1)).tolist()
    found = dn.names_of(fd)
    absent = dn.names_of(missing % span)
    v = scores.values
    hit, prec, rec, rr = (np.asarray(v[m], dtype=np.float64).tolist() for m in gate_measures(k))
    hit = [bool(x) for x in hit]
    more = {m.name: np.asarray(v[m], dtype=np.float64).tolist() for m in extra}
    out = []
    for i in range(len(scores.qids)) if which is None else which:
        row = {"query": scores.qids[i], "hit_at_k": hit[i], "precision_at_k": prec[i], "recall_at_k": rec[i],
               "reciprocal_rank": rr[i], "found": found[found_at[i]:found_at[i + 1]],
               "missing": sorted(absent[missing_at[i]:missing_at[i + 1]])}
        if extra:
            row["measures"] = {name: values[i] for name, values in more.items()}
        out.append(row)
    return out


def macro(scores: Scores, k: int, extra: list[Measure]) -> dict:
    s = scores.summary()
    hit, prec, rec, rr = gate_measures(k)
    out = {"hit_rate_at_k": s[hit], "precision_at_k": s[prec], "recall_at_k": s[rec], "mrr_at_k": s[rr]}
    for m in extra:
        out[m.name] = s[m]
    return out


def answerable_queries(qrels: Qrels, no_answer: set[str]) -> list[str]:
    return [q for q in qrels.query_ids if q not in no_answer]


# ---- the gate ---------------------------------------------------------------------------------

@dataclass
class GateResult:
    data: dict
    paired: Paired | None = None
    make_rows: object = None  # () -> the candidate's per-query rows: `rows`, made when first asked for (--junit)
    queue: object = None  # the gate's whole review queue (queue.GateQueue), when asked for
    decided: Decision | None = None
    _rows: list | None = field(default=None, repr=False)

    @property
    def rows(self) -> list[dict]:
        """The candidate's per-query rows (the release-gate JSON's shape), every query's."""
        if self._rows is None:
            self._rows = self.make_rows() if self.make_rows is not None else []
        return self._rows

    @property
    def accepted(self) -> bool:
        return bool(self.data["accepted"])


def query_problems(known: set[str], policy: Policy) -> list[InputError]:
    """The policy's queries the labels do not know (`known`: the judged queries and the no-answer ones): a
    must-pass query, a waiver's query. `rankgate gate` refuses the first (exit 2); the review app shows them
    as NO DECISION."""
    out: list[InputError] = []
    unknown = [q for q in policy.must_pass if q not in known]
    if unknown:
        at = policy.must_pass_at  # the file and key (with its line) or the flag that set it
        if at is not None:
            out.append(at.error(f"{'' if at.key else 'must-pass '}query {unknown[0]!r} is not in the qrels",
                                unknown[0]))
        else:
            out.append(InputError(policy.source or "--must-pass", f"must-pass query {unknown[0]!r} is not in the qrels"))
    bad = [w.query for w in policy.waivers if w.query not in known]
    if bad:
        out.append(InputError(policy.source or "waivers", f"waiver for query {bad[0]!r}: the query is not in the qrels"))
    return out


def _check_queries(qrels: Qrels, policy: Policy, no_answer) -> None:
    problems = query_problems(set(qrels.query_ids) | set(no_answer), policy)
    if problems:
        raise problems[0]


def run_gate(qrels: Qrels, baseline: Run, candidate: Run, policy: Policy, no_answer: set[str] = frozenset(), *,
             queries: dict[str, Query] | None = None, as_of: dt.date | None = None, manifest_version: str = "",
             review: bool = True, permissions=None, funnels: dict | None = None) -> GateResult:
    """`permissions` (core.acl.Permissions): the inputs are already what the users may see, and the
    candidate's leaks are a check; `funnels` (role -> core.funnel.Funnel): the runs' pipelines."""
    from rankgate.core.binding import check_binding

    k, level = policy.k, policy.checks.rel_level
    _check_queries(qrels, policy, no_answer)
    binding = check_binding(qrels, [baseline, candidate], allow=policy.allow_snapshot_mismatch,
                            manifest_version=manifest_version)
    extra = extra_measures(policy)
    gm = list(dict.fromkeys(gate_measures(k) + extra))
    p = pair(qrels, baseline, candidate, k=k, measures=gm, rel_level=level, no_answer=no_answer, queries=queries)
    b = Scores(baseline.name, p.qids, p.baseline, p.prepared["baseline"])
    c = Scores(candidate.name, p.qids, p.candidate, p.prepared["candidate"])
    missed = [i for i, x in enumerate(c.values[gate_measures(k)[0]].tolist()) if not x]  # (rows' hit_at_k: bool(x))
    failed = query_rows(c, qrels, k, level, extra, which=missed)  # the JSON's rows: the queries missed at k
    p.permissions, p.funnels = permissions, dict(funnels or {})
    dec = decide(policy, p, as_of=as_of)
    keys = macro_keys(k, extra)
    sig = dict(resamples=policy.resamples, seed=policy.seed, confidence=policy.confidence)
    p.significance_many([m for _, m in keys], **sig)  # one pass for every measure's test
    nf, fx = p.newly_failed(), p.newly_fixed()
    data = {
        "baseline": baseline.name,
        "candidate": candidate.name,
        "k": k,
        "baseline_macro": macro(b, k, extra),
        "candidate_macro": macro(c, k, extra),
        "failed_queries": failed,
        "checks": dec.checks,
        "check_details": dec.details,
        "must_pass": list(policy.must_pass),
        "no_answer_queries": sorted(no_answer),
        "accepted": dec.accepted,
        "decision": dec.decision,
        "as_of": dec.as_of.isoformat(),
        "queries": p.n,
        "baseline_weighted_macro": {key: p.macro("baseline", m, None, True) for key, m in keys},
        "candidate_weighted_macro": {key: p.macro("candidate", m, None, True) for key, m in keys},
        "newly_failed": [q for q, x in zip(p.qids, nf.tolist()) if x],
        "newly_fixed": [q for q, x in zip(p.qids, fx.tolist()) if x],
        "significance": dict(significance_settings(**sig), correction=policy.correction),
        "deltas": {key: measure_summary(p, m, **sig) for key, m in keys},
        "slices": slice_summary(p, [m for _, m in keys], {m: key for key, m in keys}),
        "coverage": coverage_summary(p),
        "budgets": budget_summary(p),
        "binding": binding,
        "waivers": dec.waivers,
    }
    if permissions is not None:
        data["permissions"] = permissions.as_dict()
    from rankgate.core.power import power_advice

    advice = power_advice(p, policy) if baseline.name != candidate.name else None
    if advice is not None:  # the smallest difference these queries detect (core/power.py)
        data["power"] = advice
    if baseline.name == candidate.name:  # one run: nothing was compared (docs/policy.md, One run)
        data["no_baseline"] = True
    if funnels:
        from rankgate.core.funnel import side_by_side

        data["funnel"] = side_by_side(funnels.get("baseline"), funnels.get("candidate"), p.qids)
    queue = None
    if review:
        from rankgate.core.queue import gate_queue

        queue = gate_queue(p, qrels, policy, as_of=dec.as_of, decision=dec)
        data["coverage"]["review_queue"] = [x.as_dict() for x in queue[:QUEUE_IN_REPORT]]
        data["coverage"]["review_queue_total"] = len(queue)
    _add_stability(data, p, qrels, policy, dec, queue)
    return GateResult(data, p, lambda: query_rows(c, qrels, k, level, extra), queue, dec)


def _add_stability(data: dict, p: Paired, qrels: Qrels, policy: Policy, dec: Decision, queue) -> None:
    """The report's "stability" (core.bounds), and with `require_stable` a check that fails when the
    unjudged documents could flip the decision (naming the documents to judge)."""
    from rankgate.core.bounds import doc_list, listed, plural_docs, stability

    if not policy.stability:  # stability = false / --no-stability: not computed, and the receipt's policy says so
        data["stability"] = None
        return
    st = stability(p, policy, dec, qrels.catalog.docs.name_at(), order=queue)  # (the names it lists, only)
    data["stability"] = st.as_dict()
    if policy.require_stable:
        why = ("the decision holds whatever the unjudged documents within each measure's depth are"
               if st.stable else f"the decision could flip: judge {plural_docs(len(st.to_judge))}: "
                                 f"{doc_list(st.to_judge)}")
        d = {"name": "decision_stable", "passed": st.stable, "kind": "stable", "why": why,
             "to_judge": listed(st.to_judge), "to_judge_total": len(st.to_judge)}
        dec.checks[d["name"]] = st.stable
        dec.details.append(d)
        data["accepted"], data["decision"] = dec.accepted, dec.decision


def pair_in_order_given(bundle, policy: Policy) -> bool:
    """Raw files (no benchmark folder) with two runs and not both roles named: the first run given is the
    baseline and the second the candidate; one role named (a policy file, --baseline or --candidate), the other
    run takes the role left. True when the pair was filled in so."""
    if getattr(bundle, "manifest", None) is not None or len(bundle.runs) != 2 or (policy.baseline and policy.candidate):
        return False
    first, second = list(bundle.runs)  # in the order given
    if policy.baseline in (first, second):
        policy.candidate = second if policy.baseline == first else first
    elif policy.candidate in (first, second):
        policy.baseline = second if policy.candidate == first else first
    elif policy.baseline or policy.candidate:  # a name that is neither run's: said below
        return False
    else:
        policy.baseline, policy.candidate = first, second
    return True


def gate_bundle(bundle, policy: Policy, *, as_of: dt.date | None = None, review: bool = True) -> GateResult:
    """`run_gate` on a loaded bundle: its queries (weights, tags), no-answer queries and manifest version."""
    pair_in_order_given(bundle, policy)  # raw files with two runs: baseline then candidate, as given
    if len(bundle.runs) == 1:  # one run fills the role not named (`rankgate gate` refuses comparing rules on it)
        only = next(iter(bundle.runs))
        policy.baseline, policy.candidate = policy.baseline or only, policy.candidate or only
    if not policy.baseline or not policy.candidate:
        raise InputError("gate", "name the runs to compare: --baseline NAME --candidate NAME "
                         f"(loaded: {', '.join(sorted(bundle.runs))})")
    qrels, base, cand, no_answer = bundle.qrels, bundle.run(policy.baseline), bundle.run(policy.candidate), \
        bundle.no_answer
    permissions = None
    if getattr(bundle, "access", None) is not None:  # measures on what each query's user may see (core/acl.py)
        from rankgate.core.acl import apply_access

        qrels, (base, cand), permissions, no_answer = apply_access(bundle.access, qrels, [base, cand],
                                                                   policy.checks.rel_level, no_answer)
    funnels = None
    if getattr(bundle.manifest, "pipelines", None) or any(  # [[pipeline]] tables, or staged runs (core/funnel.py)
            "scored_stage" in (getattr(r, "meta", None) or {}) for r in bundle.runs.values()):
        from rankgate.core.funnel import bundle_funnels

        found = bundle_funnels(bundle, policy.checks.rel_level, [base.name, cand.name])
        funnels = {role: found[n] for role, n in (("baseline", base.name), ("candidate", cand.name)) if n in found}
        staged = any(r.kind in ("stage_recall_floor", "no_stage_loss") for r in policy.effective_rules())
        for f in funnels.values() if staged else ():  # then the stage files decide too: a receipt hashes them
            for path in f.sources:
                if ("stage", path) not in bundle.files and ("run", path) not in bundle.files:
                    bundle.files.append(("stage", path))
    return run_gate(qrels, base, cand, policy, no_answer, queries=bundle.queries, as_of=as_of,
                    manifest_version=bundle.manifest.collection_version if bundle.manifest else "", review=review,
                    permissions=permissions, funnels=funnels)


def verdict_line(d: dict, limit: int = 3) -> str:
    """The decision in one line for a person (`REJECT cand vs base: must-pass q1 lost; 14 of 15 checks pass`),
    IDs escaped by core.text.visible."""
    from rankgate.core.text import visible

    checks = d.get("check_details") or []
    parts = []
    for c in checks:
        if c.get("passed"):
            continue
        if c.get("kind") == "must_pass" and c.get("failed"):
            ids = [visible(q) for q in c["failed"]]
            more = f" and {len(ids) - limit} more" if len(ids) > limit else ""
            parts.append(f"must-pass {', '.join(ids[:limit])}{more} lost")
        else:
            parts.append(f"{visible(c.get('name'))} failed")
    if len(parts) > limit:
        parts = parts[:limit] + [f"{len(parts) - limit} more checks failed"]
    passed = sum(1 for c in checks if c.get("passed"))
    parts.append(f"{passed} of {len(checks)} checks pass")
    word = "ACCEPT" if d.get("accepted") else "REJECT"
    against = " (no baseline: absolute rules only)" if d.get("no_baseline") else f" vs {visible(d.get('baseline'))}"
    return f"{word} {visible(d.get('candidate'))}{against}: " + "; ".join(parts)
