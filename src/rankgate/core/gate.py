"""Policy -> checks -> decision.

The seed's gate: candidate Recall@k and MRR@k not lower than the baseline's,
and every must-pass query hit in the candidate's top k. A policy file adds
measures, tolerances, absolute floors and must-pass queries; flags override it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from rankgate.core.benchmark import load_toml
from rankgate.core.engine import Scores, evaluate
from rankgate.core.errors import InputError
from rankgate.core.measures import Measure, parse_measure
from rankgate.core.model import Qrels, Run
from rankgate.core.validate import Checks

SEED_MACRO = ("hit_rate_at_k", "precision_at_k", "recall_at_k", "mrr_at_k")


@dataclass(frozen=True)
class Rule:
    """One check on a macro measure: `not_lower` than the baseline (minus a tolerance), or a `floor`."""

    name: str
    measure: Measure
    kind: str = "not_lower"
    tolerance: float = 0.0
    floor: float | None = None


@dataclass
class Policy:
    k: int = 3
    checks: Checks = field(default_factory=Checks)
    measures: list[Measure] = field(default_factory=list)
    rules: list[Rule] | None = None  # None: the seed's two rules
    must_pass: list[str] = field(default_factory=list)
    baseline: str | None = None
    candidate: str | None = None
    source: str | None = None  # the policy file, when there is one

    def effective_rules(self) -> list[Rule]:
        if self.rules is not None:
            return self.rules
        return [Rule("recall_not_lower", Measure("R", self.k)), Rule("mrr_not_lower", Measure("RR", self.k))]


POLICY_KEYS = {"k", "rel_level", "missing_queries", "short_rankings", "measures", "rules", "must_pass",
               "baseline", "candidate", "policy"}
RULE_KEYS = {"measure", "check", "tolerance", "min", "name"}


def policy_from_table(data: dict, path: str, base: Policy | None = None) -> Policy:
    """A policy from a TOML table (a policy file, or the manifest's [gate] table)."""
    p = replace(base) if base else Policy()
    unknown = sorted(set(data) - POLICY_KEYS)
    if unknown:
        raise InputError(path, f"unknown policy key {unknown[0]!r} (expected one of {', '.join(sorted(POLICY_KEYS))})")

    def get(key, kind):
        v = data[key]
        if (kind is int and isinstance(v, bool)) or not isinstance(v, kind):
            raise InputError(path, f"policy key {key!r} must be a {getattr(kind, '__name__', kind)}, "
                             f"found {type(v).__name__}")
        return v

    checks = p.checks
    if "k" in data:
        p.k = get("k", int)
        if p.k < 1:
            raise InputError(path, "policy key 'k' must be at least 1")
    if "rel_level" in data:
        checks = replace(checks, rel_level=get("rel_level", int))
    for key, allowed in (("missing_queries", ("error", "zero")), ("short_rankings", ("error", "allow"))):
        if key in data:
            v = get(key, str)
            if v not in allowed:
                raise InputError(path, f"policy key {key!r} must be one of {', '.join(allowed)}, found {v!r}")
            checks = replace(checks, **{key: v})
    p.checks = checks
    if "measures" in data:
        p.measures = [_measure(m, path, "measures") for m in get("measures", list)]
    if "must_pass" in data:
        mp = get("must_pass", list)
        if not all(isinstance(x, str) for x in mp):
            raise InputError(path, "policy key 'must_pass' must be a list of query IDs")
        p.must_pass = list(mp)
    for key in ("baseline", "candidate"):
        if key in data:
            setattr(p, key, get(key, str))
    if "rules" in data:
        rules = get("rules", list)
        p.rules = [_rule(r, path, i) for i, r in enumerate(rules)]
    return p


def _measure(text, path, key) -> Measure:
    if not isinstance(text, str):
        raise InputError(path, f"policy key {key!r} must list measure names")
    try:
        return parse_measure(text)
    except InputError as e:
        raise InputError(path, e.what) from None


def _rule(r, path, i) -> Rule:
    where = f"rules[{i}]"
    if not isinstance(r, dict):
        raise InputError(path, f"{where} must be a table with 'measure' and 'check'")
    unknown = sorted(set(r) - RULE_KEYS)
    if unknown:
        raise InputError(path, f"{where}: unknown key {unknown[0]!r} (expected {', '.join(sorted(RULE_KEYS))})")
    if "measure" not in r:
        raise InputError(path, f"{where}: missing 'measure'")
    m = _measure(r["measure"], path, f"{where}.measure")
    kind = r.get("check", "not_lower")
    if kind not in ("not_lower", "floor"):
        raise InputError(path, f"{where}: 'check' must be 'not_lower' or 'floor', found {kind!r}")
    tol = r.get("tolerance", 0.0)
    if not isinstance(tol, (int, float)) or isinstance(tol, bool) or tol < 0:
        raise InputError(path, f"{where}: 'tolerance' must be a non-negative number")
    floor = r.get("min")
    if kind == "floor":
        if not isinstance(floor, (int, float)) or isinstance(floor, bool):
            raise InputError(path, f"{where}: a floor needs 'min', a number")
    name = r.get("name") or (f"{m.name}_not_lower" if kind == "not_lower" else f"{m.name}_floor")
    if not isinstance(name, str):
        raise InputError(path, f"{where}: 'name' must be a string")
    return Rule(name, m, kind, float(tol), None if floor is None else float(floor))


def load_policy(path: str | Path, base: Policy | None = None) -> Policy:
    data = load_toml(path)
    table = data.get("gate", data) if isinstance(data.get("gate"), dict) else data
    p = policy_from_table(table, str(path), base)
    p.source = str(path)
    return p


# ---- per-query rows and macros in the seed's shape -------------------------------------------

def seed_measures(k: int) -> list[Measure]:
    return [Measure("Success", k), Measure("P", k), Measure("R", k), Measure("RR", k)]


def score_run(qrels: Qrels, run: Run, k: int, checks: Checks, extra: list[Measure], answerable: list[str]) -> Scores:
    ms = list(dict.fromkeys(seed_measures(k) + list(extra)))
    return evaluate(qrels, run, ms, rel_level=checks.rel_level, missing="zero", queries=answerable)


def query_rows(scores: Scores, qrels: Qrels, k: int, level: int, extra: list[Measure]) -> list[dict]:
    """Per query: the seed's fields (hit, P, R, RR at k, found and missing IDs) plus extra measures."""
    p = scores.prepared
    dn = qrels.catalog.docs.names
    found: list[list[str]] = [[] for _ in range(p.nq)]
    rows = np.flatnonzero(p.rel(level) & (p.rank < k))
    for qp, d in zip(p.qp[rows].tolist(), p.doc[rows].tolist()):
        found[qp].append(dn[d])
    relevant: list[set[str]] = [set() for _ in range(p.nq)]
    ok = (p.qrels_qp >= 0) & (p.qrels_grade >= level)
    for qp, d in zip(p.qrels_qp[ok].tolist(), qrels.doc[ok].tolist()):
        relevant[qp].add(dn[d])
    v = scores.values
    hit, prec, rec, rr = (v[m] for m in seed_measures(k))
    out = []
    for i, qid in enumerate(scores.qids):
        row = {"query": qid, "hit_at_k": bool(hit[i]), "precision_at_k": float(prec[i]),
               "recall_at_k": float(rec[i]), "reciprocal_rank": float(rr[i]), "found": found[i],
               "missing": sorted(relevant[i] - set(found[i]))}
        if extra:
            row["measures"] = {m.name: float(v[m][i]) for m in extra}
        out.append(row)
    return out


def macro(scores: Scores, k: int, extra: list[Measure]) -> dict:
    s = scores.summary()
    hit, prec, rec, rr = seed_measures(k)
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

    @property
    def accepted(self) -> bool:
        return bool(self.data["accepted"])


def run_gate(qrels: Qrels, baseline: Run, candidate: Run, policy: Policy, no_answer: set[str] = frozenset()) -> GateResult:
    k, level = policy.k, policy.checks.rel_level
    rules = policy.effective_rules()
    rule_measures = [r.measure for r in rules]
    extra = list(dict.fromkeys(policy.measures + [m for m in rule_measures if m not in seed_measures(k)]))
    answerable = answerable_queries(qrels, no_answer)
    unknown = [q for q in policy.must_pass if q not in set(qrels.query_ids) | set(no_answer)]
    if unknown:
        raise InputError(policy.source or "--must-pass", f"must-pass query {unknown[0]!r} is not in the qrels")
    b = score_run(qrels, baseline, k, policy.checks, extra, answerable)
    c = score_run(qrels, candidate, k, policy.checks, extra, answerable)
    b_sum, c_sum = b.summary(), c.summary()
    c_rows = query_rows(c, qrels, k, level, extra)
    by_q = {r["query"]: r for r in c_rows}

    checks: dict[str, bool] = {}
    details: list[dict] = []
    for r in rules:
        bv, cv = b_sum[r.measure], c_sum[r.measure]
        if r.kind == "not_lower":
            ok = cv >= bv - r.tolerance - 1e-12
            why = (f"{r.measure.name} {cv:.4f} vs baseline {bv:.4f}"
                   + (f" (tolerance {r.tolerance:g})" if r.tolerance else ""))
        else:
            ok = cv >= r.floor - 1e-12
            why = f"{r.measure.name} {cv:.4f}, floor {r.floor:g}"
        checks[r.name] = bool(ok)
        details.append({"name": r.name, "passed": bool(ok), "measure": r.measure.name, "kind": r.kind,
                        "baseline": bv, "candidate": cv, "delta": cv - bv, "tolerance": r.tolerance,
                        "floor": r.floor, "why": why})
    missed = [q for q in policy.must_pass if q in by_q and not by_q[q]["hit_at_k"]]
    checks["must_pass_queries_hit"] = not missed
    details.append({"name": "must_pass_queries_hit", "passed": not missed, "kind": "must_pass",
                    "queries": list(policy.must_pass), "failed": missed,
                    "why": (f"no relevant document in the top {k} for {', '.join(missed)}" if missed
                            else f"all {len(policy.must_pass)} must-pass queries hit at {k}")})
    accepted = all(checks.values())
    data = {
        "baseline": baseline.name,
        "candidate": candidate.name,
        "k": k,
        "baseline_macro": macro(b, k, extra),
        "candidate_macro": macro(c, k, extra),
        "failed_queries": [r for r in c_rows if not r["hit_at_k"]],
        "checks": checks,
        "check_details": details,
        "must_pass": list(policy.must_pass),
        "no_answer_queries": sorted(no_answer),
        "accepted": accepted,
        "decision": "accept" if accepted else "reject",
    }
    return GateResult(data)
