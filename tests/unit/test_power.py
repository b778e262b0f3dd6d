"""Power advice (core/power.py): the smallest detectable difference and the queries a difference needs agree
with a simulation of the paired t-test (within 10%), and the gate reports them in the JSON and the Markdown."""

import json

import numpy as np
import pytest

from rankgate.core.power import mde, queries_needed, t_quantile
from tests.conftest import SAMPLES

SIMS = 4000


def simulated_power(mean: float, sd: float, n: int, alpha: float, seed: int = 0) -> float:
    """The share of simulated query sets (n normal per-query differences) whose two-sided paired t-test
    rejects at alpha; the critical value is itself simulated under no difference (no t table involved)."""
    rng = np.random.default_rng(seed)

    def t_stats(mu: float) -> np.ndarray:
        d = rng.normal(mu, sd, size=(SIMS, n))
        return d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))

    critical = np.quantile(np.abs(t_stats(0.0)), 1 - alpha)
    return float((np.abs(t_stats(mean)) > critical).mean())


@pytest.mark.parametrize("n,sd,alpha", [(43, 0.2, 0.05), (12, 0.35, 0.05), (100, 0.1, 0.01)])
def test_the_smallest_detectable_difference_has_80_percent_power(n, sd, alpha):
    found = mde(sd, n, alpha)
    power = simulated_power(found, sd, n, alpha, seed=n)
    assert power == pytest.approx(0.8, rel=0.10)
    # and a difference half as large is clearly underpowered: the line is not loose
    assert simulated_power(found / 2, sd, n, alpha, seed=n + 1) < 0.45


def test_queries_needed_detects_the_difference_that_matters():
    sd, delta = 0.25, 0.08
    n = queries_needed(sd, delta)
    assert 70 < n < 90  # ((1.96 + 0.84) * 0.25 / 0.08)^2 = 76.6, a little more for t
    assert simulated_power(delta, sd, n, 0.05, seed=5) == pytest.approx(0.8, rel=0.10)
    assert queries_needed(0.0, delta) is None


def test_t_quantiles_match_the_table():
    assert t_quantile(0.975, 10) == pytest.approx(2.228, abs=2e-3)
    assert t_quantile(0.975, 42) == pytest.approx(2.018, abs=1e-3)
    assert t_quantile(0.8, 5) == pytest.approx(0.920, abs=2e-3)


def test_the_gate_reports_power_in_json_and_markdown(cli, tmp_path):
    bench = SAMPLES / "ops-handbook"
    code, out, _ = cli("gate", bench, "--markdown", tmp_path / "r.md", "--as-of", "2026-06-01")
    adv = json.loads(out)["power"]
    assert adv["queries"] > 10 and adv["mde"] > 0 and adv["alpha"] in (0.05, 0.01, 0.1)
    d_expected = mde(adv["sd"], adv["queries"], adv["alpha"])
    assert adv["mde"] == pytest.approx(d_expected)
    md = (tmp_path / "r.md").read_text()
    assert "- power: with " in md and f"{adv['mde']:.3f}" in md


def test_the_normal_quantiles_kept_at_hand_are_the_standard_librarys():
    """core/power.py keeps NormalDist().inv_cdf at the default alpha's and power's p (the gate's start-up
    imports no statistics for them): the same floats, bit for bit, and any other p goes to statistics."""
    from statistics import NormalDist

    from rankgate.core import power

    assert power._NORMAL_QUANTILES and all(v == NormalDist().inv_cdf(p) for p, v in power._NORMAL_QUANTILES.items())
    assert {1 - power.DEFAULT_ALPHA / 2, power.POWER} == set(power._NORMAL_QUANTILES)
    assert power.normal_quantile(0.995) == NormalDist().inv_cdf(0.995)
