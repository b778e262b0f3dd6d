"""Power advice: the smallest difference the query set can detect, and how many queries a difference needs.

From the per-query differences d (candidate - baseline) of the gate's measure,
with n queries and their standard deviation sd, the paired t-test's minimum
detectable effect at two-sided level alpha and power 1 - beta is

    MDE = (t[1 - alpha/2, n-1] + t[1 - beta, n-1]) * sd / sqrt(n)

(Webber, Moffat and Zobel, CIKM 2008; Sakai's topic set size design). The
queries needed to detect the policy's `smallest_difference` delta solve the
same equation for n (by iteration, as t depends on n). The t quantiles come
from the normal's by the Cornish-Fisher expansion (Hill 1970), close to 1e-4
for 5 or more degrees of freedom: no scipy. The measure: the first rule that
compares the runs on a measure (no_significant_regression first); alpha: that
rule's when it has one, else 0.05. tests/unit/test_power.py checks the line
against a simulation of the paired t-test.
"""

from __future__ import annotations

import math

import numpy as np

POWER = 0.8
DEFAULT_ALPHA = 0.05
DEFAULT_DIFFERENCE = 0.02  # the smallest difference that matters when the policy names none
MAX_QUERIES = 10_000_000


# statistics.NormalDist().inv_cdf at the default alpha's and power's p (tests/unit/test_power.py checks them): the
# gate's start-up does not import statistics (decimal, fractions, random: 10% of numpy's import) for them.
_NORMAL_QUANTILES = {1 - DEFAULT_ALPHA / 2: 1.9599639845400536, POWER: 0.8416212335729144}


def normal_quantile(p: float) -> float:
    """statistics.NormalDist().inv_cdf(p)."""
    known = _NORMAL_QUANTILES.get(p)
    if known is not None:
        return known
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def t_quantile(p: float, df: float) -> float:
    """The Student t distribution's p-quantile (Cornish-Fisher from the normal's; the normal's for df = inf)."""
    z = normal_quantile(p)
    if not math.isfinite(df):
        return z
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def mde(sd: float, n: int, alpha: float = DEFAULT_ALPHA, power: float = POWER) -> float | None:
    """The smallest true mean difference a paired t-test on n queries detects with `power` (None: n < 2)."""
    if n < 2:
        return None
    df = n - 1
    return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * sd / math.sqrt(n)


def queries_needed(sd: float, delta: float, alpha: float = DEFAULT_ALPHA, power: float = POWER) -> int | None:
    """About how many queries a paired t-test needs to detect `delta` with `power` (None: sd is 0)."""
    if sd <= 0 or delta <= 0:
        return None
    z = normal_quantile(1 - alpha / 2) + normal_quantile(power)
    n = max(2, math.ceil((z * sd / delta) ** 2))
    for _ in range(50):  # t's quantiles depend on n: iterate to the fixed point
        if n > MAX_QUERIES:
            return MAX_QUERIES
        k = t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)
        nxt = max(2, math.ceil((k * sd / delta) ** 2))
        if nxt == n:
            break
        n = nxt
    return n


def gate_measure_and_alpha(policy) -> tuple[object | None, float]:
    """The measure the advice is about and its alpha (see the module's doc)."""
    rules = policy.effective_rules()
    for kind in ("no_significant_regression", "not_lower"):
        for r in rules:
            if r.kind == kind and r.measure is not None and not r.slices:
                return r.measure, (r.alpha if kind == "no_significant_regression" else DEFAULT_ALPHA)
    return None, DEFAULT_ALPHA


def smallest_difference(policy, measure) -> tuple[float, str]:
    """The difference that matters and where it comes from."""
    if policy.smallest_difference is not None:
        return float(policy.smallest_difference), "the policy's smallest_difference"
    for r in policy.effective_rules():
        if r.kind == "not_lower" and r.measure == measure and r.tolerance > 0:
            return float(r.tolerance), f"the tolerance of {r.name}"
    return DEFAULT_DIFFERENCE, "the default; set smallest_difference in the policy"


def power_advice(p, policy) -> dict | None:
    """The gate's power advice (JSON), from the paired per-query values `p` (core.compare.Paired)."""
    m, alpha = gate_measure_and_alpha(policy)
    if m is None or m not in p.baseline or p.n < 2:
        return None
    d = np.asarray(p.candidate[m], float) - np.asarray(p.baseline[m], float)
    n = int(len(d))
    sd = float(np.std(d, ddof=1))
    found = mde(sd, n, alpha)
    delta, source = smallest_difference(policy, m)
    need = queries_needed(sd, delta, alpha)
    out = {"measure": m.name, "alpha": alpha, "power": POWER, "queries": n, "sd": sd, "mde": found,
           "smallest_difference": delta, "smallest_difference_from": source, "queries_needed": need,
           "test": "paired t-test (t quantiles)"}
    out["line"] = power_line(out)
    return out


def power_line(a: dict) -> str:
    """One line for people."""
    if a["sd"] == 0:
        return (f"power: the {a['queries']} queries' {a['measure']} differences are all equal: no spread to "
                f"size a test by")
    need = a["queries_needed"]
    enough = f"the query set is large enough (about {need} queries would do)" if need is not None and \
        need <= a["queries"] else \
        f"about {need} queries would detect it" if need is not None else "no number of queries detects it"
    return (f"power: with {a['queries']} queries, the smallest {a['measure']} difference detectable at alpha "
            f"{a['alpha']:g} with {a['power']:.0%} power is {a['mde']:.3f} (sd of the per-query differences "
            f"{a['sd']:.3f}); for {a['smallest_difference']:g} ({a['smallest_difference_from']}) {enough}")
