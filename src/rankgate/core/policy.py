"""The release policy: rules, must-pass queries, waivers, significance settings; read from TOML.

A policy comes from (lowest first) the defaults, a benchmark's `[gate]` table
and the policy file it names, a `--policy` file, then flags. docs/policy.md
describes every key. Every mistake is one `InputError` naming the file and
the key: an unknown key, a wrong type, a value out of range.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import field, replace
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from pathlib import Path
from typing import Any, Mapping

from rankgate.core.benchmark import MAX_K, load_toml, toml_key_line
from rankgate.core.errors import InputError, refuse_unknown_keys
from rankgate.core.measures import Measure, parse_measure
from rankgate.core.validate import Checks

CORRECTIONS = ("none", "holm", "bonferroni")  # for the family of randomization tests of one gate
CHECK_KINDS = ("not_lower", "floor", "no_significant_regression", "no_newly_failed", "judged", "budget",
               "stage_recall_floor", "no_stage_loss")
TESTS = ("randomization", "bootstrap")
BUDGET_FIELDS = ("latency_ms", "context_tokens")
BUDGET_STATS = ("p50", "p90", "p95", "p99", "mean", "max")

POLICY_KEYS = {"k", "rel_level", "missing_queries", "short_rankings", "measures", "rules", "must_pass",
               "baseline", "candidate", "policy", "allow_snapshot_mismatch", "significance", "waivers",
               "no_permission_leaks", "require_stable", "stability", "stale_labels", "judge",
               "smallest_difference"}
JUDGE_KEYS = {"min_kappa", "min_overlap", "seed"}
STALE_CHOICES = ("refuse", "warn", "allow")  # core/staleness.py
SIGNIFICANCE_KEYS = {"resamples", "seed", "confidence", "correction"}
WAIVER_KEYS = {"query", "owner", "reason", "expires"}
RULE_COMMON = {"name", "check"}
RULE_KEYS = {  # per check kind, besides name and check
    "not_lower": {"measure", "tolerance", "weighted", "slice", "min_queries"},
    "floor": {"measure", "min", "weighted", "slice", "min_queries"},
    "no_significant_regression": {"measure", "alpha", "test", "weighted", "slice", "min_queries"},
    "no_newly_failed": {"max", "slice", "min_queries"},
    "judged": {"min", "slice", "min_queries"},
    "budget": {"field", "stat", "max", "max_ratio"},
    "stage_recall_floor": {"stage", "min"},  # core/funnel.py: the candidate's recall at one stage
    "no_stage_loss": {"stage"},  # must-pass queries: no relevant document lost where the baseline kept it
}
ALL_RULE_KEYS = RULE_COMMON.union(*RULE_KEYS.values())
MAX_COUNT = 1_000_000_000  # the largest count (min_queries, max newly failed) or relevance level


@dataclass(frozen=True)
class Rule:
    """One check of the gate. `kind` is one of CHECK_KINDS; the other fields apply per kind.

    - not_lower: candidate's macro `measure` >= baseline's - `tolerance`
    - floor: candidate's macro `measure` >= `floor`
    - no_significant_regression: not (delta < 0 and significant at `alpha` by `test`)
    - no_newly_failed: at most `max` queries hit by the baseline and missed by the candidate at k
    - judged: the share of judged documents in the candidate's top k >= `floor`
    - budget: the candidate's `stat` of `field` <= `max`, and/or <= `max_ratio` x the baseline's

    `slices` restricts the check to queries with those tags (one check per slice,
    "*" = every slice); a slice with fewer than `min_queries` queries fails.
    `weighted` uses the queries' weights for the macro.
    """

    name: str
    measure: Measure | None = None
    kind: str = "not_lower"
    tolerance: float = 0.0
    floor: float | None = None
    alpha: float = 0.05
    test: str = "randomization"
    weighted: bool = False
    slices: tuple[str, ...] = ()
    min_queries: int = 1
    field: str | None = None
    stat: str = "p95"
    max: float | None = None
    max_ratio: float | None = None
    stage: str | None = None  # stage_recall_floor, no_stage_loss: a stage of the runs' pipelines

    def as_dict(self) -> dict:
        out: dict = {"name": self.name, "check": self.kind}
        if self.measure is not None:
            out["measure"] = self.measure.name
        keys = RULE_KEYS[self.kind]
        if "tolerance" in keys:
            out["tolerance"] = self.tolerance
        if "min" in keys:
            out["min"] = self.floor
        if "alpha" in keys:
            out.update(alpha=self.alpha, test=self.test)
        if "weighted" in keys:
            out["weighted"] = self.weighted
        if "slice" in keys:
            out.update(slice=list(self.slices), min_queries=self.min_queries)
        if self.kind == "budget":
            out.update(field=self.field, stat=self.stat, max=self.max, max_ratio=self.max_ratio)
        if self.kind == "no_newly_failed":
            out["max"] = int(self.max or 0)
        if "stage" in keys:
            out["stage"] = self.stage
        return out


@dataclass(frozen=True)
class Waiver:
    """A known regression on one query, accepted by `owner` for `reason` until `expires` (inclusive)."""

    query: str
    owner: str
    reason: str
    expires: dt.date

    def expired(self, as_of: dt.date) -> bool:
        return as_of > self.expires

    def as_dict(self) -> dict:
        return {"query": self.query, "owner": self.owner, "reason": self.reason, "expires": self.expires.isoformat()}


RAW_K = 10  # k on raw files (no benchmark folder): what `rankgate init` writes, so every face shows one k


# Rule kinds that compare the candidate with the baseline; a budget compares too when it has a max_ratio.
COMPARING = {"not_lower", "no_significant_regression", "no_newly_failed", "no_stage_loss"}


@dataclass
class Policy:
    k: int = 3
    checks: Checks = field(default_factory=Checks)
    measures: list[Measure] = field(default_factory=list)
    rules: list[Rule] | None = None  # None: the default two rules (R@k and RR@k not lower)
    must_pass: list[str] = field(default_factory=list)
    baseline: str | None = None
    candidate: str | None = None
    source: str | None = None  # the last policy file read, when there is one
    sources: list[str] = field(default_factory=list)  # every policy file read, in order
    allow_snapshot_mismatch: bool = False
    resamples: int = 10000
    seed: int = 0
    confidence: float = 0.95
    correction: str = "none"  # multiple comparisons: "holm" or "bonferroni" over the gate's randomization tests
    waivers: list[Waiver] = field(default_factory=list)
    no_permission_leaks: bool = True  # with an ACL, a run that returns a document its user may not see fails
    require_stable: bool = False  # reject a decision the unjudged documents could flip (core/bounds.py)
    stability: bool = True  # report whether the unjudged documents could flip each check (core/bounds.py)
    must_pass_at: "SetAt | None" = None  # where must_pass was set (a file's key, the queries file, --must-pass)
    stale_labels: str = "warn"  # labels judged on a text the corpus changed since: refuse, warn or allow
    judge_min_kappa: float = 0.6  # [judge]: suggested labels count only while the judge agrees this well
    judge_min_overlap: int = 50  # [judge]: ... on at least this many expert-checked pairs
    judge_seed: int = 0  # [judge]: the draw of the overlap from the judge's suggestions
    smallest_difference: float | None = None  # the difference that matters (power advice); None: 0.02

    def effective_rules(self) -> list[Rule]:
        if self.rules is not None:
            return self.rules
        return [Rule("recall_not_lower", Measure("R", self.k)), Rule("mrr_not_lower", Measure("RR", self.k))]

    def comparing_rules(self) -> list[str]:
        """The names of the rules that compare the candidate with the baseline (a budget when it has a
        max_ratio): with one run in both roles they would compare it with itself and pass."""
        return list(dict.fromkeys(r.name for r in self.effective_rules()
                                  if r.kind in COMPARING or (r.kind == "budget" and r.max_ratio is not None)))

    def copy(self) -> "Policy":
        return replace(self, measures=list(self.measures), rules=None if self.rules is None else list(self.rules),
                       must_pass=list(self.must_pass), sources=list(self.sources), waivers=list(self.waivers))

    def as_dict(self) -> dict:
        """Everything the decision depends on, as plain data (the receipt records it)."""
        out = {
            "k": self.k, "rel_level": self.checks.rel_level, "missing_queries": self.checks.missing_queries,
            "short_rankings": self.checks.short_rankings, "measures": [m.name for m in self.measures],
            "must_pass": list(self.must_pass), "baseline": self.baseline, "candidate": self.candidate,
            "allow_snapshot_mismatch": self.allow_snapshot_mismatch,
            "significance": {"resamples": self.resamples, "seed": self.seed, "confidence": self.confidence,
                             "correction": self.correction},
            "rules": [r.as_dict() for r in self.effective_rules()],
            "waivers": [w.as_dict() for w in self.waivers],
        }
        if not self.no_permission_leaks:  # only when turned off: receipts written before it stay the same
            out["no_permission_leaks"] = False
        if self.require_stable:
            out["require_stable"] = True
        if not self.stability:  # only when turned off: receipts written before it stay the same
            out["stability"] = False
        if self.stale_labels != "warn":  # as above: only when not the default
            out["stale_labels"] = self.stale_labels
        if (self.judge_min_kappa, self.judge_min_overlap, self.judge_seed) != (0.6, 50, 0):
            out["judge"] = {"min_kappa": self.judge_min_kappa, "min_overlap": self.judge_min_overlap,
                            "seed": self.judge_seed}
        if self.smallest_difference is not None:
            out["smallest_difference"] = self.smallest_difference
        return out


# ---- reading ------------------------------------------------------------------------------------

def _type_name(kind) -> str:
    if isinstance(kind, tuple):
        return " or ".join(_type_name(k) for k in kind)
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list",
            dict: "a table", dt.date: "a date"}.get(kind, getattr(kind, "__name__", str(kind)))


def _found(v) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)


def _typed(v, kind, path: str, what: str):
    """v checked against kind; bools are never numbers; ints are accepted as numbers."""
    if kind is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        try:
            v = float(v) if ok else v
        except OverflowError:  # an integer beyond any float
            ok = False
        if ok and not math.isfinite(v):  # nan and inf would make a check always pass or always fail
            raise InputError(path, f"{what} must be a finite number, found {v}")
    elif kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool)
    else:
        ok = isinstance(v, kind)
    if not ok:
        raise InputError(path, f"{what} must be {_type_name(kind)}, found {_found(v)}")
    return v


def policy_from_table(data: dict, path: str, base: Policy | None = None, table: str = "") -> Policy:
    """A policy from a TOML table (a policy file, or the manifest's [gate] table) over `base`; `table`:
    the table's name in the file ("gate"; "" the top level), for messages naming a key's line."""
    p = base.copy() if base else Policy()
    _refuse_unknown_policy_keys(data, path)

    def get(key, kind):
        return _typed(data[key], kind, path, f"policy key {key!r}")

    checks = p.checks
    if "k" in data:
        p.k = get("k", int)
        if p.k < 1:
            raise InputError(path, "policy key 'k' must be at least 1")
        if p.k > MAX_K:
            raise InputError(path, f"policy key 'k' must be at most {MAX_K}")
    if "rel_level" in data:
        checks = replace(checks, rel_level=get("rel_level", int))
        if abs(checks.rel_level) > MAX_COUNT:
            raise InputError(path, f"policy key 'rel_level' must be between -{MAX_COUNT} and {MAX_COUNT}")
    for key, allowed in (("missing_queries", ("error", "zero")), ("short_rankings", ("error", "allow"))):
        if key in data:
            v = get(key, str)
            if v not in allowed:
                raise InputError(path, f"policy key {key!r} must be one of {', '.join(allowed)}, found {v!r}")
            checks = replace(checks, **{key: v})
    p.checks = checks
    if "measures" in data:
        p.measures = [_measure(m, path, "policy key 'measures'") for m in get("measures", list)]
    if "must_pass" in data:
        p.must_pass = _str_list(get("must_pass", list), path, "policy key 'must_pass'", "query IDs")
        p.must_pass_at = SetAt(path, f"[{table}] must_pass" if table else "must_pass", table)
    for key in ("baseline", "candidate"):
        if key in data:
            setattr(p, key, get(key, str))
    if "allow_snapshot_mismatch" in data:
        p.allow_snapshot_mismatch = get("allow_snapshot_mismatch", bool)
    if "require_stable" in data:
        p.require_stable = get("require_stable", bool)
    if "stability" in data:
        p.stability = get("stability", bool)
    if "significance" in data:
        _significance(get("significance", dict), path, p)
    if "stale_labels" in data:
        p.stale_labels = get("stale_labels", str)
        if p.stale_labels not in STALE_CHOICES:
            raise InputError(path, f"policy key 'stale_labels' must be one of {', '.join(STALE_CHOICES)}, "
                             f"found {p.stale_labels!r}")
    if "judge" in data:
        _judge(get("judge", dict), path, p)
    if "smallest_difference" in data:
        p.smallest_difference = get("smallest_difference", float)
        if not p.smallest_difference > 0:
            raise InputError(path, "policy key 'smallest_difference' must be above 0 (the smallest difference "
                             "in the measure that matters)")
    if "rules" in data:
        p.rules = _rules(get("rules", list), path)
    if "no_permission_leaks" in data:
        p.no_permission_leaks = get("no_permission_leaks", bool)
    if "waivers" in data:
        p.waivers = [_waiver(w, path, i) for i, w in enumerate(get("waivers", list))]
        queries = [w.query for w in p.waivers]
        dup = next((q for q in queries if queries.count(q) > 1), None)
        if dup:
            raise InputError(path, f"two waivers for query {dup!r}; keep one")
    return p


def _judge(t: dict, path: str, p: Policy) -> None:
    """The [judge] table: when suggested labels count (docs/policy.md, "A judge that earns its vote")."""
    refuse_unknown_keys(t, JUDGE_KEYS, path, "[judge]")
    if "min_kappa" in t:
        p.judge_min_kappa = _typed(t["min_kappa"], float, path, "[judge] min_kappa")
        if not -1.0 <= p.judge_min_kappa <= 1.0:
            raise InputError(path, f"[judge] min_kappa must be between -1 and 1, found {p.judge_min_kappa}")
    if "min_overlap" in t:
        p.judge_min_overlap = _typed(t["min_overlap"], int, path, "[judge] min_overlap")
        if not 2 <= p.judge_min_overlap <= MAX_COUNT:
            raise InputError(path, f"[judge] min_overlap must be at least 2, found {p.judge_min_overlap}")
    if "seed" in t:
        p.judge_seed = _typed(t["seed"], int, path, "[judge] seed")


def _str_list(v: list, path: str, what: str, of: str) -> list[str]:
    if not all(isinstance(x, str) for x in v):
        raise InputError(path, f"{what} must be a list of {of}")
    return list(v)


def _significance(t: dict, path: str, p: Policy) -> None:
    refuse_unknown_keys(t, SIGNIFICANCE_KEYS, path, "significance")
    if "resamples" in t:
        p.resamples = _typed(t["resamples"], int, path, "significance.resamples")
        if not 100 <= p.resamples <= 10_000_000:
            raise InputError(path, "significance.resamples must be between 100 and 10000000")
    if "seed" in t:
        p.seed = _typed(t["seed"], int, path, "significance.seed")
        if p.seed < 0:
            raise InputError(path, "significance.seed must be 0 or more")
        if p.seed >= 2**63:
            raise InputError(path, "significance.seed must be below 2**63")
    if "confidence" in t:
        p.confidence = _typed(t["confidence"], float, path, "significance.confidence")
        if not 0 < p.confidence < 1:
            raise InputError(path, "significance.confidence must be between 0 and 1 (e.g. 0.95)")
    if "correction" in t:
        p.correction = _typed(t["correction"], str, path, "significance.correction")
        if p.correction not in CORRECTIONS:
            raise InputError(path, f"significance.correction must be one of {', '.join(CORRECTIONS)}, "
                             f"found {p.correction!r}")


def _measure(text, path, what) -> Measure:
    if not isinstance(text, str):
        raise InputError(path, f"{what} must be a measure name such as \"R@5\", found {_found(text)}")
    try:
        return parse_measure(text)
    except InputError as e:
        raise InputError(path, f"{what}: {e.what}") from None


def _refuse_unknown_policy_keys(data: dict, path: str) -> None:
    unknown = sorted(set(data) - POLICY_KEYS)
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(POLICY_KEYS), n=1, cutoff=0.75)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(path, f"unknown policy key {unknown[0]!r} ({guess}expected one of "
                         f"{', '.join(sorted(POLICY_KEYS))})")


def _rules(tables: list, path: str) -> list[Rule]:
    """The policy's [[rules]]: at least one, each named once."""
    if not tables:  # a gate with no check would accept every candidate
        raise InputError(path, "policy key 'rules' lists no rule: a gate with no check accepts anything "
                         "(leave 'rules' out for the default two, or add [[rules]] tables)")
    rules = [_rule(r, path, i) for i, r in enumerate(tables)]
    names = [r.name for r in rules]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(path, f"two rules are named {dup!r}; give one of them another 'name'")
    return rules


def _rule(r, path, i) -> Rule:
    where = f"rules[{i}]"
    kind = _rule_check(r, path, where)

    def num(key, default=None, *, low=None, high=None, low_open=False):
        if key not in r:
            return default
        v = _typed(r[key], float, path, f"{where}.{key}")
        if low is not None and (v < low or (low_open and v == low)) or high is not None and v > high:
            rng = f"{'above' if low_open else 'at least'} {low:g}" if high is None else \
                f"between {low:g} and {high:g}"
            raise InputError(path, f"{where}: {key!r} must be {rng}, found {v:g}")
        return v

    m = None
    if "measure" in RULE_KEYS[kind]:
        if "measure" not in r:
            raise InputError(path, f"{where}: missing 'measure' (e.g. measure = \"R@5\")")
        m = _measure(r["measure"], path, f"{where}.measure")
    tol = num("tolerance", 0.0, low=0.0)
    floor = None
    if kind in ("floor", "judged", "stage_recall_floor"):
        if "min" not in r:
            raise InputError(path, f"{where}: check {kind!r} needs 'min', a number")
        floor = num("min", low=0.0, high=1.0) if kind in ("judged", "stage_recall_floor") else num("min")
    alpha = num("alpha", 0.05, low=0.0, high=0.5, low_open=True)
    test = r.get("test", "randomization")
    if test not in TESTS:
        raise InputError(path, f"{where}: 'test' must be one of {', '.join(TESTS)}, found {test!r}")
    weighted = _typed(r.get("weighted", False), bool, path, f"{where}.weighted")
    slices, min_queries = _rule_slices(r, path, where)
    fld, stat, mx, ratio = _budget_limits(r, num, path, where) if kind == "budget" else (None, "p95", None, None)
    if kind == "no_newly_failed":
        mx = _typed(r.get("max", 0), int, path, f"{where}.max")
        if mx < 0:
            raise InputError(path, f"{where}: 'max' must be 0 or more")
        if mx > MAX_COUNT:
            raise InputError(path, f"{where}: 'max' must be at most {MAX_COUNT}")
        mx = float(mx)
    stage = None
    if "stage" in RULE_KEYS[kind]:
        stage = r.get("stage")
        if stage is not None and (not isinstance(stage, str) or not stage):
            raise InputError(path, f"{where}: 'stage' must be a stage name of the pipelines, e.g. \"rerank\"")
        if stage is None and kind == "stage_recall_floor":
            raise InputError(path, f"{where}: check 'stage_recall_floor' needs 'stage', e.g. stage = \"rerank\"")
    name = r.get("name") or _default_name(kind, m, fld, stat, weighted)
    if stage and not r.get("name"):
        name = f"{stage}_{name}"
    if not isinstance(name, str):
        raise InputError(path, f"{where}: 'name' must be a string")
    return Rule(name, m, kind, float(tol), floor, float(alpha), test, weighted, slices, min_queries, fld, stat, mx,
                ratio, stage)



def _rule_check(r, path: str, where: str) -> str:
    """A rule's check kind; refused when the rule is no table or has a key its check does not take."""
    if not isinstance(r, dict):
        raise InputError(path, f"{where} must be a table with 'measure' and 'check'")
    refuse_unknown_keys(r, ALL_RULE_KEYS, path, where)
    kind = r.get("check", "not_lower")
    if kind not in CHECK_KINDS:
        raise InputError(path, f"{where}: 'check' must be one of {', '.join(CHECK_KINDS)}, found {kind!r}")
    allowed = RULE_KEYS[kind] | RULE_COMMON
    stray = sorted(set(r) - allowed)
    if stray:
        takers = [c for c in CHECK_KINDS if stray[0] in RULE_KEYS[c]]
        named = "" if "check" in r else " (the default, since the rule names no check)"
        hint = f"; check = {takers[0]!r} takes it" if len(takers) == 1 else (
            f"; checks {', '.join(map(repr, takers))} take it" if takers else "")
        raise InputError(path, f"{where}: key {stray[0]!r} does not apply to check {kind!r}{named} "
                         f"(it takes {', '.join(sorted(allowed))}){hint}")
    return kind


def _rule_slices(r: dict, path: str, where: str) -> tuple[tuple[str, ...], int]:
    """(the rule's slices, its min_queries)."""
    slices: tuple[str, ...] = ()
    if "slice" in r:
        s = r["slice"]
        if isinstance(s, str):
            s = [s]
        if not isinstance(s, list) or not s or not all(isinstance(x, str) and x for x in s):
            raise InputError(path, f"{where}: 'slice' must be a tag, a list of tags, or \"*\" for every slice")
        slices = tuple(dict.fromkeys(s))
    min_queries = _typed(r.get("min_queries", 1), int, path, f"{where}.min_queries")
    if min_queries < 1:
        raise InputError(path, f"{where}: 'min_queries' must be at least 1")
    if min_queries > MAX_COUNT:
        raise InputError(path, f"{where}: 'min_queries' must be at most {MAX_COUNT}")
    if "min_queries" in r and not slices:
        raise InputError(path, f"{where}: 'min_queries' applies to a slice's queries, and this rule has no 'slice' "
                         "(add slice = \"TAG\" or \"*\", or leave min_queries out)")
    return slices, min_queries


def _budget_limits(r: dict, num, path: str, where: str) -> tuple:
    """A budget rule's (field, stat, max, max_ratio); `num` reads a number of the rule (checked)."""
    fld = r.get("field")
    if fld not in BUDGET_FIELDS:
        raise InputError(path, f"{where}: a budget needs 'field', one of {', '.join(BUDGET_FIELDS)}"
                         + (f", found {fld!r}" if fld is not None else ""))
    stat = r.get("stat", "p95")
    if stat not in BUDGET_STATS:
        raise InputError(path, f"{where}: 'stat' must be one of {', '.join(BUDGET_STATS)}, found {stat!r}")
    mx = num("max", low=0.0)
    ratio = num("max_ratio", low=0.0, low_open=True)
    if mx is None and ratio is None:
        raise InputError(path, f"{where}: a budget needs 'max' (absolute) or 'max_ratio' (x the baseline's)")
    return fld, stat, mx, ratio

def _default_name(kind: str, m: Measure | None, fld: str | None, stat: str, weighted: bool) -> str:
    w = "weighted_" if weighted else ""
    if kind == "not_lower":
        return f"{m.name}_{w}not_lower"
    if kind == "floor":
        return f"{m.name}_{w}floor"
    if kind == "no_significant_regression":
        return f"{m.name}_{w}no_significant_regression"
    if kind == "judged":
        return "judged_share"
    if kind == "budget":
        return f"{fld}_{stat}_budget"
    if kind in ("stage_recall_floor", "no_stage_loss"):
        return {"stage_recall_floor": "recall_floor", "no_stage_loss": "no_stage_loss"}[kind]
    return "no_newly_failed_queries"


def _waiver(w, path, i) -> Waiver:
    where = f"waivers[{i}]"
    if not isinstance(w, dict):
        raise InputError(path, f"{where} must be a table with query, owner, reason and expires")
    refuse_unknown_keys(w, WAIVER_KEYS, path, where)
    missing = [k for k in ("query", "owner", "reason", "expires") if k not in w]
    if missing:
        raise InputError(path, f"{where}: missing {missing[0]!r} (a waiver names the query, its owner, the reason "
                         "and the date it expires)")
    for key in ("query", "owner", "reason"):
        v = _typed(w[key], str, path, f"{where}.{key}")
        if not v.strip():
            raise InputError(path, f"{where}: {key!r} must not be empty")
    exp = w["expires"]
    if isinstance(exp, str):
        try:
            exp = dt.date.fromisoformat(exp)
        except ValueError:
            raise InputError(path, f"{where}: 'expires' must be a date such as 2026-12-31, found {exp!r}") from None
    elif isinstance(exp, dt.datetime):
        exp = exp.date()
    elif not isinstance(exp, dt.date):
        raise InputError(path, f"{where}: 'expires' must be a date such as 2026-12-31, found {_found(exp)}")
    return Waiver(w["query"], w["owner"], w["reason"], exp)


@dataclass(frozen=True)
class SetAt:
    """Where a policy key was set, for a message about its value: a file and the key as written there
    (`[gate] must_pass`), with the TOML table holding it ("" the top level; None: not a TOML file), or a
    flag (`--must-pass`, key "")."""

    where: str
    key: str
    table: str | None = None

    def error(self, what: str, value: str | None = None) -> InputError:
        """An InputError naming the file, the line of `value` in the key (else of the key) and the key."""
        line = toml_key_line(self.where, self.table, self.key.rpartition(" ")[2], value) \
            if self.table is not None else None
        return InputError(self.where, f"{self.key}: {what}" if self.key else what, line=line)


def _at_key(e: InputError, path, table: str, word: str) -> InputError:
    """An error about `policy key 'k'` of a file, in the file's own word (`[gate] key 'k'` in benchmark.toml) and
    at the key's line (toml_key_line: tomllib gives no positions)."""
    import re

    found = re.search(r"policy key '([^']+)'", e.what)
    if found is None or e.line is not None or e.path != str(path):
        return e
    line = toml_key_line(str(path), table, found.group(1))
    return InputError(e.path, e.what.replace("policy key", word, 1), line=line, where=e.where)


def load_policy(path: str | Path, base: Policy | None = None) -> Policy:
    """A policy file: its top level, or its [gate] table when it has one."""
    data = load_toml(path)
    table = data["gate"] if isinstance(data.get("gate"), dict) else data
    if "policy" in table:  # only benchmark.toml's [gate] names a policy file; one level, never a chain
        where = "[gate] policy" if table is not data else "policy"
        raise InputError(str(path), f"{where}: a policy file cannot name another policy file (only "
                         "benchmark.toml's [gate] table can); copy its rules here or pass it with --policy")
    if not table:  # an empty file (or an empty [gate]) would gate with the defaults, as if no file were given
        raise InputError(str(path), "sets nothing (empty, comments only, or an empty [gate] table): a policy file "
                         "sets rules, must_pass or other keys (docs/policy.md)")
    try:
        p = policy_from_table(table, str(path), base, "gate" if table is not data else "")
    except InputError as e:
        raise _at_key(e, path, "gate" if table is not data else "", "policy key") from None
    p.source = str(path)
    p.sources.append(str(path))
    return p


OVERRIDES = ("policy", "k", "rel_level", "missing_queries", "short_rankings", "measures", "must_pass", "baseline",
             "candidate", "allow_snapshot_mismatch", "resamples", "seed", "stability")


def resolve(overrides: Mapping[str, Any], bundle) -> Policy:
    """The policy in force: defaults < the manifest's [gate] (and the policy file it names) < a policy
    file < overrides. `overrides` maps a name of OVERRIDES to its value: `policy` a policy file, `measures`
    measure texts (added to the policy's), `must_pass` query IDs; a name absent, None or empty overrides
    nothing. `bundle` gives the manifest, queries and must_pass (core.bundle.Bundle)."""
    from rankgate.core.measures import parse_measures

    unknown = set(overrides) - set(OVERRIDES)
    if unknown:
        raise ValueError(f"unknown policy overrides: {', '.join(sorted(unknown))}")
    get = overrides.get
    policy = Policy()
    m = bundle.manifest
    if m is None:
        policy.k = RAW_K  # a policy file or --k may set another
    else:
        policy.k = m.k
        policy.checks = replace(policy.checks, rel_level=m.rel_level)
        gate = dict(m.gate)
        named = gate.pop("policy", None)
        if named is not None:
            if not isinstance(named, str):
                raise InputError(str(m.path), "key 'gate.policy' must be a file name")
            policy = load_policy(m.folder / named, policy)
        try:
            policy = policy_from_table(gate, str(m.path), policy, "gate")
        except InputError as e:
            raise _at_key(e, m.path, "gate", "[gate] key") from None
    if get("policy"):
        policy = load_policy(get("policy"), policy)
    if bundle.queries and not policy.must_pass:
        policy.must_pass = bundle.must_pass
        files = getattr(bundle, "files", None) or []
        policy.must_pass_at = SetAt(next((p for role, p in files if role == "queries"), "the queries file"),
                                    "must_pass")
    if get("k") is not None:
        if get("k") < 1:
            raise InputError("--k", "k must be at least 1")
        if get("k") > MAX_K:
            raise InputError("--k", f"k must be at most {MAX_K}")
        policy.k = get("k")
    checks = policy.checks
    if get("rel_level") is not None:
        checks = replace(checks, rel_level=get("rel_level"))
    if get("missing_queries"):
        checks = replace(checks, missing_queries=get("missing_queries"))
    if get("short_rankings"):
        checks = replace(checks, short_rankings=get("short_rankings"))
    policy.checks = replace(checks, k=policy.k)
    if get("measures"):
        policy.measures = list(dict.fromkeys(policy.measures + [x for t in get("measures") for x in parse_measures(t)]))
    if get("must_pass"):
        policy.must_pass = list(dict.fromkeys(get("must_pass")))
        policy.must_pass_at = SetAt("--must-pass", "")
    for key in ("baseline", "candidate"):
        value = get(key)
        if value and isinstance(value, str):
            setattr(policy, key, value)
    if get("allow_snapshot_mismatch"):
        policy.allow_snapshot_mismatch = True
    if get("resamples") is not None:
        if not 100 <= get("resamples") <= 10_000_000:
            raise InputError("--resamples", "resamples must be between 100 and 10000000")
        policy.resamples = get("resamples")
    if get("seed") is not None:
        if get("seed") < 0:
            raise InputError("--seed", "seed must be 0 or more")
        policy.seed = get("seed")
    if get("stability") is False:  # --no-stability
        policy.stability = False
    if policy.require_stable and not policy.stability:
        raise InputError(policy.source or "policy", "require_stable = true needs the stability report: "
                         "drop stability = false (or --no-stability)")
    return policy
