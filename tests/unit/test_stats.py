"""Paired significance: the randomization test, the bootstrap interval, the effect size."""

import itertools

import numpy as np
import pytest

from rankgate.core.stats import (bootstrap_ci, effect_size, paired_test, paired_tests, percentile,
                                 randomization_test, weighted_mean)


def brute_p(d):
    """The exact two-sided sign-flip p-value, by enumerating every pattern in Python."""
    d = np.asarray(d, float)
    obs = abs(d.mean())
    hits = sum(abs((np.array(s) * d).mean()) >= obs - 1e-12 for s in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


@pytest.mark.parametrize("d", [[0.5, 0.2, -0.1, 0.3], [1, 1, 1, 1, 1, 1], [0.1, -0.1, 0.2, -0.3, 0.05, 0.4, -0.2]])
def test_small_samples_are_exact(d):
    p, exact = randomization_test(d, resamples=10000)
    assert exact and p == pytest.approx(brute_p(d))


def test_deterministic_and_seeded():
    rng = np.random.default_rng(1)
    d = rng.normal(0.05, 0.2, 60)
    a = randomization_test(d, resamples=2000, seed=7)
    assert a == randomization_test(d, resamples=2000, seed=7)
    assert a[1] is False
    assert bootstrap_ci(d, resamples=2000, seed=7) == bootstrap_ci(d, resamples=2000, seed=7)
    # another seed moves p by sampling noise only
    assert abs(randomization_test(d, resamples=2000, seed=8)[0] - a[0]) < 0.05


def test_strong_effect_is_significant_and_null_is_not():
    rng = np.random.default_rng(2)
    strong = rng.normal(0.3, 0.2, 50)
    null = rng.normal(0.0, 0.2, 50)
    assert randomization_test(strong, resamples=1000)[0] < 0.01
    assert randomization_test(null, resamples=1000)[0] > 0.05
    assert randomization_test(np.zeros(30))[0] == 1.0


def test_bootstrap_interval_brackets_the_mean():
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 0.3, 80)
    lo, hi = bootstrap_ci(d, resamples=3000, confidence=0.9)
    assert lo < d.mean() < hi
    lo99, hi99 = bootstrap_ci(d, resamples=3000, confidence=0.99)
    assert lo99 <= lo and hi <= hi99
    assert bootstrap_ci([0.2] * 10) == (0.2, 0.2)


def test_many_measures_in_one_pass_equal_one_at_a_time():
    rng = np.random.default_rng(4)
    D = rng.normal(0, 0.2, (45, 3))
    w = rng.uniform(0.5, 3, 45)
    together = paired_tests(D, w, resamples=1500, seed=5)
    from rankgate.core import stats

    stats._DONE.clear()  # each column alone computed again, not remembered
    for j in range(3):
        alone = paired_tests(D[:, j], w, resamples=1500, seed=5)[0]
        assert alone.p_value == together[j].p_value
        assert (alone.ci_low, alone.ci_high) == pytest.approx((together[j].ci_low, together[j].ci_high), abs=1e-12)


def test_weights_and_effect_size():
    assert weighted_mean([1.0, 0.0], [3.0, 1.0]) == 0.75
    d = np.array([0.1, 0.2, 0.3, 0.4])
    assert effect_size(d) == pytest.approx(d.mean() / d.std(ddof=1))
    assert effect_size([0.2, 0.2, 0.2]) is None  # infinite: reported as n/a
    assert effect_size([0.0, 0.0]) == 0.0
    t = paired_test([0.5, 0.5, 0.5], [0.6, 0.7, 0.5], resamples=1000)
    assert t.delta == pytest.approx(0.1) and t.exact and t.n == 3
    with pytest.raises(ValueError):
        weighted_mean([1.0], [-1.0])


def test_percentile():
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([1.0, 2.0], 95) == pytest.approx(1.95)
    assert percentile([], 50) is None


@pytest.mark.parametrize("seed", range(40))
def test_quantiles_are_numpys_bit_for_bit(seed):
    """stats.quantiles replaces np.quantile (which loads numpy.ma): the same floats, ties, one row,
    NaN columns, the bootstrap's own 2.5% and 97.5%, and percentile against np.percentile."""
    from rankgate.core.stats import quantiles

    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(1, 60)), int(rng.integers(1, 5))
    a = rng.normal(size=(rows, cols)) * 10.0 ** int(rng.integers(-6, 6))
    if seed % 3 == 0:
        a = np.round(a, 1)  # ties
    if seed % 7 == 0 and cols > 1:
        a[rng.integers(0, rows), 0] = np.nan
    qs = [0.0, 0.025, 0.05, 1 / 3, 0.5, 0.975, 1.0, float(rng.random())]
    mine, theirs = quantiles(a, qs), np.quantile(a, qs, axis=0)
    for q, m, t in zip(qs, mine, theirs):
        assert np.array_equal(m, t, equal_nan=True), (q, m, t)
    v = a[:, -1]
    for q in (0, 2.5, 50, 95, 97.5, 100, float(rng.random() * 100)):
        assert percentile(v, q) == float(np.percentile(v, q)), q
