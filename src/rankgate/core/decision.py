"""The decision: a policy's checks over two scored runs, and what the gate measures.

`decide(policy, paired)` turns per-query arrays (core.compare.pair) into checks
and a decision without re-scoring, so the app re-decides after each edit and
the review queue asks what a label would change. `gate_measures` and
`extra_measures` say which measures a gate scores.
"""

from __future__ import annotations

import datetime as dt
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.compare import Paired, budget_stat
from rankgate.core.measures import Measure
from rankgate.core.policy import Policy, Rule

GATE_MACROS = ("hit_rate_at_k", "precision_at_k", "recall_at_k", "mrr_at_k")  # gate_measures' names in the JSON
EPS = 1e-12


def today() -> dt.date:
    return dt.datetime.now(dt.timezone.utc).date()


def gate_measures(k: int) -> list[Measure]:
    """The four measures every gate reports: hit (Success), P, R and RR at k."""
    return [Measure("Success", k), Measure("P", k), Measure("R", k), Measure("RR", k)]


def extra_measures(policy: Policy) -> list[Measure]:
    """Measures reported beside the gate's four (`gate_measures`): the policy's, then those its rules name."""
    k = policy.k
    ruled = [r.measure for r in policy.effective_rules() if r.measure is not None]
    return list(dict.fromkeys(policy.measures + [m for m in ruled if m not in gate_measures(k)]))


def macro_keys(k: int, extra: list[Measure]) -> list[tuple[str, Measure]]:
    """The report's macro names (the gate's four, then measure names) with their measures."""
    return list(zip(GATE_MACROS, gate_measures(k))) + [(m.name, m) for m in extra]


# ---- the decision --------------------------------------------------------------------------------

@dataclass
class Decision:
    checks: dict[str, bool]
    details: list[dict]
    waivers: list[dict]  # every waiver of the policy: its fields, expired, used
    as_of: dt.date

    @property
    def accepted(self) -> bool:
        return all(self.checks.values())

    @property
    def decision(self) -> str:
        return "accept" if self.accepted else "reject"

    @property
    def waivers_used(self) -> list[dict]:
        return [w for w in self.waivers if w["used"]]


def rule_slices(rule: Rule, p: Paired) -> list[str | None]:
    """The slices one rule is checked on: None for all queries; "*" expands to every tag present."""
    if not rule.slices:
        return [None]
    out: list[str | None] = []
    for s in rule.slices:
        out.extend(p.slice_names() if s == "*" else [s])
    return list(dict.fromkeys(out))


def _plural(n: int, one: str = "query", many: str = "queries") -> str:
    return f"{n} {one if n == 1 else many}"


def decide(policy: Policy, p: Paired, *, as_of: dt.date | None = None) -> Decision:
    """The checks of the policy on two runs' per-query values, and the decision.

    Rule checks come first, in the policy's order (a sliced rule gives one check
    per slice, named `name[slice]`), then `must_pass_queries_hit`, then
    `waivers_not_expired` when the policy has waivers.
    """
    as_of = as_of or today()
    current = {w.query for w in policy.waivers if not w.expired(as_of)}
    used: set[str] = set()
    checks: dict[str, bool] = {}
    details: list[dict] = []

    def add(d: dict) -> None:
        checks[d["name"]] = bool(d["passed"])
        details.append(d)

    for rule in policy.effective_rules():
        slices = rule_slices(rule, p)
        if not slices:
            add({"name": f"{rule.name}[*]", "passed": False, "kind": rule.kind, "slice": "*",
                 "why": "no query carries a tag: there is no slice to check"})
            continue
        for s in slices:
            add(_rule_check(rule, s, p, policy, current, used))
    if policy.correction != "none":
        for d in _corrected(details, policy.correction):
            checks[d["name"]] = d["passed"]

    if p.permissions is not None and policy.no_permission_leaks:
        add(_leak_check(p))

    index = p.position()
    hit = p.hits("candidate")
    must = list(policy.must_pass)
    missed_all = [q for q in must if q in index and not hit[index[q]]]
    waived = [q for q in missed_all if q in current]
    used.update(waived)
    missed = [q for q in missed_all if q not in current]
    k = p.k
    if missed:
        why = f"no relevant document in the top {k} for {', '.join(missed)}"
        if waived:
            why += f" (waived: {', '.join(waived)})"
    elif waived:
        why = f"all {len(must)} must-pass queries hit at {k} or waived (waived: {', '.join(waived)})"
    elif len(must) == 1:
        why = f"the must-pass query hits at {k}"
    else:
        why = f"all {len(must)} must-pass queries hit at {k}"
    mp = {"name": "must_pass_queries_hit", "passed": not missed, "kind": "must_pass", "queries": must,
          "failed": missed, "why": why}
    if waived:
        mp["waived"] = waived
    add(mp)

    waivers = []
    for w in policy.waivers:
        waivers.append(dict(w.as_dict(), expired=w.expired(as_of), used=w.query in used))
    if policy.waivers:
        expired = [w for w in policy.waivers if w.expired(as_of)]
        if expired:
            why = "expired: " + "; ".join(f"{w.query} (owner {w.owner}, expired {w.expires.isoformat()})"
                                          for w in expired) + ": renew or remove them"
        else:
            why = f"{_plural(len(policy.waivers), 'waiver', 'waivers')} current as of {as_of.isoformat()}"
        add({"name": "waivers_not_expired", "passed": not expired, "kind": "waivers",
             "expired": [w.query for w in expired], "why": why})
    return Decision(checks, details, waivers, as_of)


def adjusted_p_values(p_values: list[float], method: str) -> list[float]:
    """Holm's step-down or Bonferroni's adjusted p-values, in the order given (each at most 1)."""
    m = len(p_values)
    if method == "bonferroni":
        return [min(1.0, m * x) for x in p_values]
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def _corrected(details: list[dict], method: str) -> list[dict]:
    """Decide the randomization-test checks again on p-values adjusted over all of them (the family:
    every such check of this gate, each slice counted). Returns the checks it changed in place."""
    family = [d for d in details if d.get("kind") == "no_significant_regression" and d.get("test") == "randomization"
              and "p_value" in d]
    name = {"holm": "Holm", "bonferroni": "Bonferroni"}[method]
    for d, adj in zip(family, adjusted_p_values([d["p_value"] for d in family], method)):
        regressed = d["mean_delta"] < -EPS
        d.update(p_adjusted=adj, correction=method, family=len(family), passed=not (regressed and adj < d["alpha"]))
        verdict = "a significant regression" if not d["passed"] else (
            "no significant regression" if regressed else "no regression")
        d["why"] = d["why"].rsplit("; ", 1)[0] + (f"; {name}-adjusted p = {adj:.4f} over {_plural(len(family), 'test', 'tests')}: "
                                                  f"{verdict} at alpha {d['alpha']:g} (randomization)")
    return family


def _rule_check(rule: Rule, s: str | None, p: Paired, policy: Policy, current: set[str], used: set[str]) -> dict:
    """One rule on all queries (s None) or one slice: a check's fields, `passed` and `why`."""
    name = rule.name if s is None else f"{rule.name}[{s}]"
    mask = None if s is None else p.mask(s)
    n = p.n if mask is None else int(mask.sum())
    d: dict = {"name": name, "passed": False}
    head = ""
    if s is not None:
        d.update(slice=s, queries=n)
        head = f"slice {s} ({_plural(n)}): "
        if n < rule.min_queries:
            d.update(kind=rule.kind, min_queries=rule.min_queries,
                     why=f"slice {s} has {_plural(n)}, fewer than min_queries {rule.min_queries}: "
                         "too small to judge")
            if rule.measure is not None:
                d["measure"] = rule.measure.name
            return d
    if rule.weighted and n and not float((p.weights if mask is None else p.weights[mask]).sum()) > 0:
        d.update(kind=rule.kind, weighted=True, why=head + "every query here weighs 0: a weighted rule has nothing "
                 "to weigh (give one a weight above 0)")  # 0/0 would pass silently
        if rule.measure is not None:
            d["measure"] = rule.measure.name
        return d
    check = RULE_CHECKS.get(rule.kind)
    if check is None:  # pragma: no cover - parsing refuses other kinds
        raise ValueError(f"unknown check {rule.kind!r}")
    outcome = check(rule, p, mask, policy, current, used, d)
    if outcome is not None:  # None: the check could not be made, and d says why
        ok, why = outcome
        d["passed"] = bool(ok)
        d["why"] = head + why
    return d


def _measure_check(rule: Rule, p: Paired, mask, policy: Policy, current, used, d: dict):
    """not_lower, floor and no_significant_regression: a measure's macro, candidate against baseline."""
    kind, m = rule.kind, rule.measure
    w = "weighted " if rule.weighted else ""
    bv = p.macro("baseline", m, mask, rule.weighted)
    cv = p.macro("candidate", m, mask, rule.weighted)
    d.update(measure=m.name, kind=kind, baseline=bv, candidate=cv, delta=cv - bv)
    if rule.weighted:
        d["weighted"] = True
    if kind == "not_lower":
        d.update(tolerance=rule.tolerance, floor=rule.floor)
        why = f"{w}{m.name} {cv:.4f} vs baseline {bv:.4f}" + (f" (tolerance {rule.tolerance:g})"
                                                              if rule.tolerance else "")
        return cv >= bv - rule.tolerance - EPS, why
    if kind == "floor":
        d.update(tolerance=rule.tolerance, floor=rule.floor)
        return cv >= rule.floor - EPS, f"{w}{m.name} {cv:.4f}, floor {rule.floor:g}"
    t = p.significance(m, mask=mask, weighted=rule.weighted, resamples=policy.resamples, seed=policy.seed,
                       confidence=1.0 - rule.alpha)
    if rule.test == "bootstrap":
        significant = t.ci_high < -EPS
    else:
        significant = t.delta < -EPS and t.p_value < rule.alpha
    ok = not (t.delta < -EPS and significant)
    es = "n/a" if t.effect_size is None else f"{t.effect_size:+.2f}"
    verdict = "a significant regression" if not ok else (
        "no significant regression" if t.delta < -EPS else "no regression")
    d.update(alpha=rule.alpha, test=rule.test, p_value=t.p_value, ci=[t.ci_low, t.ci_high],
             effect_size=t.effect_size, mean_delta=t.delta, resamples=policy.resamples, seed=policy.seed)
    return ok, (f"{w}{m.name} {cv:.4f} vs baseline {bv:.4f}: mean delta {t.delta:+.4f}, p = {t.p_value:.4f}, "
                f"{1 - rule.alpha:.0%} CI [{t.ci_low:+.4f}, {t.ci_high:+.4f}], effect size {es}; "
                f"{verdict} at alpha {rule.alpha:g} ({rule.test})")


def _newly_failed_check(rule: Rule, p: Paired, mask, policy: Policy, current: set[str], used: set[str], d: dict):
    nf = p.newly_failed() if mask is None else p.newly_failed() & mask
    lost = [q for q, x in zip(p.qids, nf.tolist()) if x]
    waived = [q for q in lost if q in current]
    used.update(waived)
    lost = [q for q in lost if q not in current]
    limit = int(rule.max or 0)
    if lost:
        why = (f"{_plural(len(lost))} hit by the baseline and missed by the candidate at {p.k}: "
               f"{', '.join(lost)}" + (f" (at most {limit} allowed)" if limit else ""))
    else:
        why = f"no query lost its hit at {p.k}"
    if waived:
        why += f" (waived: {', '.join(waived)})"
    d.update(kind=rule.kind, failed=lost, max=limit, waived=waived)
    return len(lost) <= limit, why


def _judged_check(rule: Rule, p: Paired, mask, policy: Policy, current, used, d: dict):
    j, r, share = p.judged_share("candidate", mask)
    d.update(kind=rule.kind, judged=j, ranked=r, share=share, floor=rule.floor)
    return share >= rule.floor - EPS, (f"{j} of {r} documents in the candidate's top {p.k} are judged "
                                       f"({share:.1%}), minimum {rule.floor:.0%}")


def _budget_check(rule: Rule, p: Paired, mask, policy: Policy, current, used, d: dict):
    d.update(kind=rule.kind, field=rule.field, stat=rule.stat, max=rule.max, max_ratio=rule.max_ratio)
    cvals = p.budgets.get("candidate", {}).get(rule.field)
    bvals = p.budgets.get("baseline", {}).get(rule.field)
    cs = budget_stat(cvals, rule.stat) if cvals is not None else None
    bs = budget_stat(bvals, rule.stat) if bvals is not None else None
    d.update(candidate=cs, baseline=bs)
    if cs is None:
        d["why"] = f"the candidate {p.candidate_name} carries no {rule.field}: the budget cannot be checked"
        return None
    ok, parts = True, []
    if rule.max is not None:
        ok = ok and cs <= rule.max + EPS
        parts.append(f"budget {rule.max:g}")
    if rule.max_ratio is not None:
        if bs is None:
            d["why"] = f"the baseline {p.baseline_name} carries no {rule.field}: max_ratio cannot be checked"
            return None
        ratio = cs / bs if bs > 0 else (1.0 if cs <= 0 else float("inf"))
        ok = ok and ratio <= rule.max_ratio + EPS
        parts.append(f"{ratio:.2f}x the baseline's, at most {rule.max_ratio:g}x")
        d["ratio"] = ratio if np.isfinite(ratio) else None
    base = f" (baseline {bs:g})" if bs is not None else ""
    return ok, f"candidate {rule.field} {rule.stat} {cs:g}{base}; " + "; ".join(parts)


def _leak_check(p: Paired) -> dict:
    """With an ACL: the candidate returns no document its query's user may not see (core/acl.py)."""
    found = p.permissions.leaks.get(p.candidate_name, [])
    shown = "; ".join(f"{x['doc']} at rank {x['rank']} for {x['query']}" for x in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    why = (f"{_plural(len(found), 'document', 'documents')} returned to users who may not see "
           f"{'it' if len(found) == 1 else 'them'}: {shown}{more}" if found
           else f"no document outside its query's groups in the candidate {p.candidate_name}")
    return {"name": "no_permission_leaks", "passed": not found, "kind": "no_permission_leaks", "leaks": found,
            "why": why}


def _stage_recall_check(rule: Rule, p: Paired, mask, policy: Policy, current, used, d: dict):
    """The candidate's recall at one stage of its pipeline (core/funnel.py) is at least `min`."""
    d.update(kind=rule.kind, stage=rule.stage, floor=rule.floor)
    f = p.funnels.get("candidate")
    if f is None or rule.stage not in f.stages:
        d["why"] = (f"the candidate {p.candidate_name} has no pipeline" if f is None else
                    f"the candidate's pipeline {f.pipeline} has no stage {rule.stage!r} ({', '.join(f.stages)})")
        return None
    r = f.recall([q for q in p.qids])[rule.stage]
    d["candidate"] = r
    b = p.funnels.get("baseline")
    if b is not None and rule.stage in b.stages:
        d["baseline"] = b.recall(list(p.qids))[rule.stage]
    return r >= rule.floor - EPS, f"recall at stage {rule.stage} {r:.4f}, floor {rule.floor:g}"


def _stage_loss_check(rule: Rule, p: Paired, mask, policy: Policy, current: set[str], used: set[str], d: dict):
    """Must-pass queries: the candidate loses no relevant document at a stage where the baseline kept it."""
    from rankgate.core.funnel import stage_losses

    d.update(kind=rule.kind, stage=rule.stage)
    b, c = p.funnels.get("baseline"), p.funnels.get("candidate")
    if b is None or c is None:
        missing = [n for n, f in ((p.baseline_name, b), (p.candidate_name, c)) if f is None]
        d["why"] = f"no pipeline for {', '.join(missing)}: stages cannot be compared"
        return None
    common = [s for s in c.stages if s in b.stages]
    if (rule.stage and rule.stage not in common) or not common:  # a typo'd stage would pass with nothing compared
        d["why"] = (f"no stage {rule.stage!r} in both pipelines" if rule.stage else "the pipelines share no stage")
        d["why"] += f" (baseline {b.pipeline}: {', '.join(b.stages)}; candidate {c.pipeline}: {', '.join(c.stages)})"
        return None
    must = [q for q in policy.must_pass if q in set(p.qids)]
    losses = stage_losses(b, c, must, rule.stage)
    waived = sorted({x["query"] for x in losses if x["query"] in current})
    used.update(waived)
    losses = [x for x in losses if x["query"] not in current]
    d.update(lost=losses, waived=waived)
    where = f" at stage {rule.stage}" if rule.stage else ""
    if losses:
        why = (f"{_plural(len(losses), 'relevant document', 'relevant documents')} of must-pass queries lost"
               f"{where} where the baseline kept {'it' if len(losses) == 1 else 'them'}: "
               + "; ".join(f"{x['doc']} for {x['query']} at {x['stage']} (baseline rank {x['baseline_rank']})"
                           for x in losses[:5]) + (f" and {len(losses) - 5} more" if len(losses) > 5 else ""))
    else:
        why = f"no must-pass query loses a relevant document{where} where the baseline kept it"
    if waived:
        why += f" (waived: {', '.join(waived)})"
    return not losses, why


# A rule kind is one entry here (how it is checked) and its fields in core/policy.py.
RULE_CHECKS = {"not_lower": _measure_check, "floor": _measure_check, "no_significant_regression": _measure_check,
               "no_newly_failed": _newly_failed_check, "judged": _judged_check, "budget": _budget_check}
RULE_CHECKS.update({"stage_recall_floor": _stage_recall_check, "no_stage_loss": _stage_loss_check})
