"""Each rule of the policy, passing and failing, decided from per-query values (no files, no engine)."""

import datetime as dt

import numpy as np
import pytest

from rankgate.core.compare import Paired
from rankgate.core.decision import decide
from rankgate.core.measures import Measure
from rankgate.core.policy import Policy, Rule, Waiver

K = 3
HIT, R, RR = Measure("Success", K), Measure("R", K), Measure("RR", K)
TODAY = dt.date(2026, 6, 1)


def paired(b, c, *, hit_b=None, hit_c=None, tags=None, weights=None, judged=None, ranked=None, budgets=None):
    """Two runs' per-query R@3 (b, c); RR = R; hits default to R > 0."""
    b, c = np.asarray(b, float), np.asarray(c, float)
    n = len(b)
    qids = [f"q{i:02d}" for i in range(n)]
    hb = np.asarray(hit_b if hit_b is not None else b > 0, float)
    hc = np.asarray(hit_c if hit_c is not None else c > 0, float)
    p = Paired("base", "cand", K, 1, qids, [HIT, R, RR], {HIT: hb, R: b, RR: b.copy()}, {HIT: hc, R: c, RR: c.copy()},
               np.asarray(weights if weights is not None else np.ones(n), float),
               [tuple(t) for t in (tags or [()] * n)])
    p.judged = {"baseline": np.full(n, 3.0), "candidate": np.asarray(judged if judged is not None else [3.0] * n)}
    p.ranked = {"baseline": np.full(n, 3.0), "candidate": np.asarray(ranked if ranked is not None else [3.0] * n)}
    p.budgets = budgets or {"baseline": {}, "candidate": {}}
    return p


def policy(*rules, must_pass=(), waivers=(), **kw):
    return Policy(k=K, rules=list(rules), must_pass=list(must_pass), waivers=list(waivers), **kw)


def check(p, pol, name=None):
    d = decide(pol, p, as_of=TODAY)
    name = name or pol.rules[0].name
    detail = next(x for x in d.details if x["name"] == name)
    return d.checks[name], detail, d


# ---- not_lower and floor ----------------------------------------------------------------------

def test_not_lower_both_ways_and_tolerance():
    r = Rule("r_not_lower", R)
    ok, _, _ = check(paired([0.5, 0.5], [0.5, 0.6]), policy(r))
    assert ok
    ok, d, _ = check(paired([0.5, 0.5], [0.5, 0.4]), policy(r))
    assert not ok and d["why"] == "R@3 0.4500 vs baseline 0.5000"
    ok, d, _ = check(paired([0.5, 0.5], [0.5, 0.4]), policy(Rule("r_not_lower", R, tolerance=0.05)))
    assert ok and "(tolerance 0.05)" in d["why"]


def test_floor_both_ways():
    assert check(paired([0, 0], [0.8, 0.6]), policy(Rule("f", R, "floor", floor=0.7)))[0]
    ok, d, _ = check(paired([0, 0], [0.8, 0.5]), policy(Rule("f", R, "floor", floor=0.7)))
    assert not ok and d["why"] == "R@3 0.6500, floor 0.7"


def test_weighted_macro_decides_when_asked():
    # the heavy query loses, the light ones gain: plain mean rises, weighted mean falls
    p = paired([1.0, 0.0, 0.0], [0.0, 0.6, 0.6], weights=[4, 1, 1])
    assert check(p, policy(Rule("plain", R)))[0]
    ok, d, _ = check(p, policy(Rule("w", R, weighted=True)))
    assert not ok and d["weighted"] and d["why"].startswith("weighted R@3 0.2000 vs baseline 0.6667")


# ---- slices -----------------------------------------------------------------------------------

TAGS = [("critical",), ("critical",), ("critical", "dns"), ("dns",), ()]


def test_slice_floor_both_ways():
    rule = Rule("crit", R, "floor", floor=0.5, slices=("critical",))
    ok, d, _ = check(paired([0] * 5, [0.6, 0.6, 0.6, 0.0, 0.0], tags=TAGS), policy(rule), "crit[critical]")
    assert ok and d["queries"] == 3 and d["why"].startswith("slice critical (3 queries): ")
    ok, _, _ = check(paired([0] * 5, [0.6, 0.3, 0.3, 1.0, 1.0], tags=TAGS), policy(rule), "crit[critical]")
    assert not ok  # the whole set's mean (0.64) would pass; the slice's (0.4) does not


def test_slice_below_min_queries_fails_saying_so():
    rule = Rule("crit", R, "floor", floor=0.0, slices=("critical",), min_queries=4)
    ok, d, _ = check(paired([0] * 5, [1.0] * 5, tags=TAGS), policy(rule), "crit[critical]")
    assert not ok and "has 3 queries, fewer than min_queries 4: too small to judge" in d["why"]
    ok, _, _ = check(paired([0] * 5, [1.0] * 5, tags=TAGS), policy(Rule("crit", R, "floor", floor=0.0,
                                                                         slices=("critical",), min_queries=3)),
                     "crit[critical]")
    assert ok


def test_unknown_slice_and_star():
    p = paired([0] * 5, [1.0, 1.0, 1.0, 0.0, 1.0], tags=TAGS)
    ok, d, _ = check(p, policy(Rule("typo", R, "floor", floor=0.1, slices=("critcal",))), "typo[critcal]")
    assert not ok and "has 0 queries" in d["why"]
    d = decide(policy(Rule("every", R, "floor", floor=0.6, slices=("*",))), p, as_of=TODAY)
    assert d.checks["every[critical]"] is True and d.checks["every[dns]"] is False
    untagged = paired([0, 0], [1, 1])
    d = decide(policy(Rule("every", R, "floor", floor=0.0, slices=("*",))), untagged, as_of=TODAY)
    assert d.checks["every[*]"] is False and not d.accepted


# ---- significance -----------------------------------------------------------------------------

def _sig(test="randomization", alpha=0.05):
    return Rule("sig", R, "no_significant_regression", alpha=alpha, test=test)


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_significant_regression_fails(test):
    rng = np.random.default_rng(0)
    b = rng.uniform(0.4, 0.9, 40)
    c = b - rng.uniform(0.05, 0.2, 40)  # every query drops
    ok, d, _ = check(paired(b, c), policy(_sig(test)))
    assert not ok and d["p_value"] < 0.01 and d["ci"][1] < 0
    assert "a significant regression at alpha 0.05" in d["why"] and d["effect_size"] < -1


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_noisy_drop_and_gain_pass(test):
    rng = np.random.default_rng(1)
    b = rng.uniform(0.3, 0.7, 40)
    noise = rng.normal(0, 0.2, 40)
    c = b + noise - noise.mean() - 0.01  # a small drop, well inside the noise
    ok, d, _ = check(paired(b, c), policy(_sig(test)))
    assert ok and d["mean_delta"] < 0 and "no significant regression" in d["why"]
    ok, d, _ = check(paired(b, b + 0.1), policy(_sig(test)))
    assert ok and "no regression" in d["why"]


def test_adjusted_p_values_holm_and_bonferroni():
    from rankgate.core.decision import adjusted_p_values

    raw = [0.01, 0.04, 0.03, 0.005]
    assert adjusted_p_values(raw, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjusted_p_values(raw, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert adjusted_p_values([0.6, 0.9], "holm") == pytest.approx([1.0, 1.0])  # capped, monotone


def _two_slices(seed):
    rng = np.random.default_rng(seed)
    b = rng.uniform(0.3, 0.7, 30)
    noise = rng.normal(0, 0.15, 30)
    return paired(b, b + noise - noise.mean() - 0.06, tags=[("a",) if i % 2 else ("b",) for i in range(30)])


@pytest.mark.parametrize("method", ["holm", "bonferroni"])
def test_a_correction_over_the_gates_tests_keeps_a_lone_borderline_slice_from_failing(method):
    rule = Rule("sig", R, "no_significant_regression", slices=["*"], min_queries=5)
    p = _two_slices(4)  # slice b drops with raw p about 0.03, slice a does not (p about 0.28)
    raw = decide(policy(rule, resamples=2000), p, as_of=TODAY)
    b = next(d for d in raw.details if d["name"] == "sig[b]")
    assert not raw.checks["sig[b]"] and 0.0167 < b["p_value"] < 0.05  # alone it fails...
    fixed = decide(policy(rule, resamples=2000, correction=method), p, as_of=TODAY)
    b = next(d for d in fixed.details if d["name"] == "sig[b]")
    assert fixed.checks["sig[b]"] and b["p_adjusted"] == pytest.approx(2 * b["p_value"])  # ...not among two
    assert b["family"] == 2 and b["correction"] == method and "-adjusted p = " in b["why"] and "over 2 tests" in b["why"]
    # A clear regression still fails after the correction.
    strong = decide(policy(rule, resamples=2000, correction=method), _two_slices(13), as_of=TODAY)
    assert not strong.checks["sig[b]"]


def test_the_correction_is_read_from_the_policy_file_and_checked(tmp_path):
    from rankgate.core.errors import InputError
    from rankgate.core.policy import load_policy

    f = tmp_path / "p.toml"
    f.write_text('[significance]\ncorrection = "holm"\n')
    assert load_policy(f).correction == "holm" and load_policy(f).as_dict()["significance"]["correction"] == "holm"
    f.write_text('[significance]\ncorrection = "fdr"\n')
    with pytest.raises(InputError, match="correction must be one of none, holm, bonferroni"):
        load_policy(f)


def test_significance_is_deterministic_and_uses_the_policy_settings():
    rng = np.random.default_rng(2)
    b = rng.uniform(0.3, 0.7, 30)
    c = b + rng.normal(-0.03, 0.1, 30)
    pol = policy(_sig(), resamples=500, seed=3)
    a = check(paired(b, c), pol)[1]
    assert a == check(paired(b, c), pol)[1] and a["resamples"] == 500 and a["seed"] == 3


# ---- newly failed, judged, budgets --------------------------------------------------------------

def test_no_newly_failed_both_ways_with_allowance():
    rule = Rule("nnf", None, "no_newly_failed", max=0.0)
    assert check(paired([1, 0, 1], [1, 1, 1]), policy(rule))[0]
    ok, d, _ = check(paired([1, 0, 1], [1, 1, 0]), policy(rule))
    assert not ok and d["failed"] == ["q02"]
    assert check(paired([1, 0, 1], [1, 1, 0]), policy(Rule("nnf", None, "no_newly_failed", max=1.0)))[0]


def test_judged_share_both_ways():
    rule = Rule("judged", None, "judged", floor=0.8)
    ok, d, _ = check(paired([1, 1], [1, 1], judged=[3, 2], ranked=[3, 3]), policy(rule))
    assert ok and d["share"] == pytest.approx(5 / 6)
    ok, d, _ = check(paired([1, 1], [1, 1], judged=[3, 1], ranked=[3, 3]), policy(rule))
    assert not ok and d["why"] == "4 of 6 documents in the candidate's top 3 are judged (66.7%), minimum 80%"


def _budgets(b, c):
    return {"baseline": {"latency_ms": np.asarray(b, float)}, "candidate": {"latency_ms": np.asarray(c, float)}}


def test_budget_max_both_ways():
    rule = Rule("lat", None, "budget", field="latency_ms", stat="p95", max=100.0)
    lat = list(range(1, 101))
    ok, d, _ = check(paired([1], [1], budgets=_budgets(lat, lat)), policy(rule))
    assert ok and d["candidate"] == pytest.approx(95.05)
    ok, d, _ = check(paired([1], [1], budgets=_budgets(lat, [x * 2 for x in lat])), policy(rule))
    assert not ok and "candidate latency_ms p95 190.1" in d["why"]


def test_budget_ratio_both_ways_and_missing_field_fails():
    rule = Rule("lat", None, "budget", field="latency_ms", stat="p50", max_ratio=1.5)
    assert check(paired([1], [1], budgets=_budgets([10, 20, 30], [14, 28, 42])), policy(rule))[0]
    ok, d, _ = check(paired([1], [1], budgets=_budgets([10, 20, 30], [20, 40, 60])), policy(rule))
    assert not ok and d["ratio"] == pytest.approx(2.0)
    ok, d, _ = check(paired([1], [1]), policy(rule))
    assert not ok and "carries no latency_ms" in d["why"]
    ok, d, _ = check(paired([1], [1], budgets={"baseline": {}, "candidate": {"latency_ms": np.array([1.0])}}),
                     policy(rule))
    assert not ok and "baseline base carries no latency_ms" in d["why"]


# ---- must-pass and waivers ------------------------------------------------------------------------

def test_must_pass_both_ways():
    p = paired([1, 1, 1], [1, 0, 1])
    ok, d, _ = check(p, policy(must_pass=["q00", "q02"]), "must_pass_queries_hit")
    assert ok and d["why"] == "all 2 must-pass queries hit at 3"
    ok, d, _ = check(p, policy(must_pass=["q02"]), "must_pass_queries_hit")
    assert ok and d["why"] == "the must-pass query hits at 3"  # not "all 1 ... queries"
    ok, d, _ = check(p, policy(must_pass=["q00", "q01"]), "must_pass_queries_hit")
    assert not ok and d["failed"] == ["q01"] and d["why"] == "no relevant document in the top 3 for q01"


def test_waiver_lets_a_known_regression_pass_until_it_expires():
    p = paired([1, 1, 1], [1, 0, 1])
    w = Waiver("q01", "ana", "known PRF drift", dt.date(2026, 6, 30))
    pol = policy(Rule("nnf", None, "no_newly_failed"), must_pass=["q01"], waivers=[w])
    d = decide(pol, p, as_of=TODAY)
    assert d.accepted and d.checks == {"nnf": True, "must_pass_queries_hit": True, "waivers_not_expired": True}
    assert d.waivers_used == [{"query": "q01", "owner": "ana", "reason": "known PRF drift", "expires": "2026-06-30",
                               "expired": False, "used": True}]
    assert "waived: q01" in d.details[1]["why"]
    on_expiry_day = decide(pol, p, as_of=dt.date(2026, 6, 30))
    assert on_expiry_day.accepted
    late = decide(pol, p, as_of=dt.date(2026, 7, 1))
    assert not late.accepted
    assert late.checks == {"nnf": False, "must_pass_queries_hit": False, "waivers_not_expired": False}
    assert "q01 (owner ana, expired 2026-06-30)" in late.details[-1]["why"]
    assert late.waivers_used == []


def test_an_expired_waiver_fails_even_when_nothing_needs_it():
    p = paired([1, 1], [1, 1])
    pol = policy(must_pass=["q01"], waivers=[Waiver("q01", "ana", "old", dt.date(2026, 1, 1))])
    d = decide(pol, p, as_of=TODAY)
    assert d.checks == {"must_pass_queries_hit": True, "waivers_not_expired": False}
    assert d.waivers[0]["used"] is False and d.waivers[0]["expired"] is True


def test_default_policy_matches_the_seed():
    p = paired([0.5, 1.0], [0.5, 1.0])
    d = decide(Policy(k=K), p, as_of=TODAY)
    assert list(d.checks) == ["recall_not_lower", "mrr_not_lower", "must_pass_queries_hit"] and d.accepted
