"""The bootstrap's cheap pass and exact recount (stats._Bounded): the intervals are the floats that summing every
resample gives (the full pass), for sizes whose chunks hold one resample or several, rows short and long (einsum
sums a one-row chunk's long rows in another order), odd and even counts of queries, many seeds; and the pieces
it rests on: the draws of any resamples at once, the integer sums and their bound, each recounted mean."""

import numpy as np
import pytest

from rankgate.core import stats
from rankgate.core.stats import SplitMix64


def deltas(rng, n: int) -> np.ndarray:
    """Columns as compare's measures give them: continuous (nDCG), on a grid of tenths (P@10), a few nonzero
    among ties (Success@10), one outlier among small deltas, and a constant one."""
    return np.column_stack([
        rng.normal(0, 0.15, n).clip(-1, 1),
        rng.integers(-3, 4, n) / 10,
        np.where(rng.random(n) < 0.998, 0.0, rng.choice([-1.0, 1.0], n)),
        np.r_[1.0, rng.normal(0, 0.01, n - 1)],
        np.full(n, 0.25),
    ])


def both(monkeypatch, D: np.ndarray, resamples: int, seed: int):
    """(the full pass's intervals, the bounded pass's, whether the bounded pass answered)."""
    used = []
    answer = stats._Bounded.quantiles

    def spy(self):
        got = answer(self)
        used.append(got is not None)
        return got

    with monkeypatch.context() as m:
        m.setattr(stats._Bounded, "fits", classmethod(lambda cls, rng, D, resamples: False))
        full = stats.bootstrap_cis(D, resamples=resamples, seed=seed)
    with monkeypatch.context() as m:
        m.setattr(stats._Bounded, "quantiles", spy)
        bounded = stats.bootstrap_cis(D, resamples=resamples, seed=seed)
    return full, bounded, used


def check_sizes(monkeypatch, threads, n, resamples, seeds=2, confidences=(0.95, 0.9)):
    monkeypatch.setattr(stats, "_threads", [threads])
    rng = np.random.default_rng(n)
    D = deltas(rng, n)
    for seed in [0, *rng.integers(1, 10**6, seeds - 1).tolist()]:
        for confidence in confidences:
            used = []
            answer = stats._Bounded.quantiles
            with monkeypatch.context() as m:
                m.setattr(stats._Bounded, "fits", classmethod(lambda cls, g, D, r: False))
                full = stats.bootstrap_cis(D, resamples=resamples, seed=seed, confidence=confidence)
            with monkeypatch.context() as m:
                m.setattr(stats._Bounded, "quantiles", lambda self: used.append(answer(self)) or used[-1])
                bounded = stats.bootstrap_cis(D, resamples=resamples, seed=seed, confidence=confidence)
            assert used and used[0] is not None, "the bounded pass did not answer"
            for x, y in zip(full, bounded):
                assert x.tobytes() == y.tobytes(), (n, resamples, seed, confidence, x, y)


@pytest.mark.parametrize("threads, n, resamples", [
    (1, 1025, 3001), (2, 2000, 4000), (1, 10000, 801), (2, 40000, 100), (1, 70001, 40),
])
def test_the_bounded_pass_gives_the_full_pass_floats(monkeypatch, threads, n, resamples):
    check_sizes(monkeypatch, threads, n, resamples, confidences=(0.95,))


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, resamples", [
    (1025, 3001), (1999, 2000), (2000, 10000), (4097, 1500), (10000, 2001), (16385, 400),
    (32769, 301), (40000, 250), (50001, 200), (65536, 160), (65537, 150), (70001, 120),
])
def test_the_bounded_pass_gives_the_full_pass_floats_at_many_sizes(monkeypatch, threads, n, resamples):
    check_sizes(monkeypatch, threads, n, resamples)  # seed 0 and one drawn: the suite stays under 5 minutes


def test_the_bounded_pass_answers_and_agrees_on_each_kind_of_column(monkeypatch):
    """Each column alone (the cheap pass packs two a word: alone, one lane is empty) and all together."""
    rng = np.random.default_rng(7)
    D = deltas(rng, 10000)
    for cols in ([0], [1], [2], [3], [4], [0, 1, 2], [0, 1, 2, 3, 4]):
        full, bounded, used = both(monkeypatch, D[:, cols], 1000, 3)
        assert used == [True], cols  # (a constant column: no resample summed, its delta)
        for x, y in zip(full, bounded):
            assert x.tobytes() == y.tobytes(), cols


def test_draws_of_any_resamples_are_index_halves_draws():
    for n in (1025, 2000, 40001):
        g = SplitMix64(21, 1)
        rows = np.array([0, 5, 3, 5, 2**40 + 7, 10**6])
        a, b = g.index_halves_of(rows, n)
        for i, r in enumerate(rows.tolist()):
            ra, rb = g.index_halves(r, 1, n)
            assert a[i].tolist() == ra[0].tolist() and b[i].tolist() == rb[0].tolist()


@pytest.mark.parametrize("n, resamples", [(10000, 30), (40000, 7), (50001, 5), (70000, 4)])
def test_each_recounted_mean_is_the_full_pass_mean(n, resamples):
    """Every resample recounted alone equals its row of the full pass's chunk, the last chunk of one resample
    too (40,000 queries: chunks of 3, 3 and 1; rows of 20,000 draws, which a one-row chunk sums otherwise)."""
    rng = np.random.default_rng(n)
    D = deltas(rng, n)
    g = stats._rng(4, 1)
    columns = [np.ascontiguousarray(D[:, j]) for j in range(D.shape[1])]
    tables = [stats._Draws.table(c) for c in columns]

    def means_of(a, b, scratch, only=None):
        keep = range(len(columns)) if only is None else only
        return stats._mean_rows(a, b, n, [columns[j] for j in keep], [tables[j] for j in keep], None, None, scratch)

    step = max(1, g.DRAW_CELLS // n)
    full = np.concatenate([means_of(*g.index_halves(s, min(step, resamples - s), n), stats.Scratch())
                           for s in range(0, resamples, step)])
    bounded = stats._Bounded(g, D, resamples, [0.025, 0.975], means_of)
    for j in bounded.varied:
        got = bounded._exact(list(range(resamples)), j)
        assert np.array([got[r] for r in range(resamples)]).tobytes() == full[:, j].tobytes(), j
        for r in (0, resamples - 1):  # one at a time: the other rows of its chunk are filled
            assert bounded._exact([r], j)[r] == full[r, j]


def test_the_integer_sums_are_exact_and_bound_the_float_sums():
    n, resamples = 1501, 400
    rng = np.random.default_rng(2)
    D = deltas(rng, n)
    g = stats._rng(9, 1)
    bounded = stats._Bounded(g, D, resamples, [0.025, 0.975], None)
    Q = bounded._sums()
    draws = g.indices(0, resamples, n, np.int64)
    assert bounded.bits(n) == 22 and ((n + 1) // 2) * (2 ** 22 - 1) < 2 ** 32
    for c, j in enumerate(bounded.varied):
        least, step, q = bounded.grid[j]
        assert q.max() <= 2 ** 22 - 1 and q.min() >= 0
        assert Q[:, c].tolist() == q.astype(np.int64)[draws].sum(axis=1).tolist()
        exact = D[draws, j].sum(axis=1)  # any order of summing: within the bound's float part
        if j in bounded.whole:  # whole numbers: the sums themselves, exactly
            assert step == 1.0 and bounded.whole[j] == least
            assert exact.tolist() == [float(n * bounded.whole[j] + s) for s in Q[:, c].tolist()]
            continue
        off = np.abs(exact - (n * least + step * Q[:, c].astype(float)))
        assert (off <= bounded.window[j] * step / 2).all(), j
    assert sorted(bounded.whole) == [2] and sorted(bounded.window) == [0, 1, 3]  # (4: constant)


def test_coarse_grids_and_weights_take_the_full_pass():
    rng = np.random.default_rng(3)
    D = deltas(rng, 2000)
    g = stats._rng(0, 1)
    assert stats._Bounded.fits(g, D, 10000)
    assert not stats._Bounded.fits(g, D[:1000], 10000)  # few queries: the full pass is cheap (pairs of draws)
    assert not stats._Bounded.fits(g, np.where(D == 0.25, np.nan, D), 10000)
    assert not stats._Bounded.fits(g, D, 10 ** 7)  # its integer sums would not be kept
    assert stats._Bounded.bits(2 ** 21) < stats._Bounded.MIN_BITS
    with stats.generator("PCG64"):
        assert not stats._Bounded.fits(stats._rng(0, 1), D, 10000)


def test_deltas_near_the_smallest_float_take_the_full_pass(monkeypatch):
    """A grid whose step underflows (deltas of 1e-320: a step of zero, which crashed the cheap pass with a
    ZeroDivisionError; 1e-310: a subnormal step, outside the bound's float model) is not used: the full
    pass's floats; a step just above the smallest normal float still is."""
    rng = np.random.default_rng(5)
    n = 2000
    top = (1 << stats._Bounded.bits(n)) - 1
    for D in (rng.choice([0.0, 1e-320], n)[:, None], rng.normal(0, 1e-310, (n, 2)),
              np.column_stack([rng.normal(0, 0.1, n), rng.choice([0.0, 5e-324, -5e-324], n)])):
        assert not stats._Bounded.fits(stats._rng(0, 1), D, 1000)
        full, bounded, used = both(monkeypatch, D, 1000, 2)
        assert used == []
        for x, y in zip(full, bounded):
            assert x.tobytes() == y.tobytes()
    D = rng.choice([0.0, 2.0 ** -1021 * top], n)[:, None]
    assert stats._Bounded.fits(stats._rng(0, 1), D, 1000)
    full, bounded, used = both(monkeypatch, D, 1000, 2)
    assert used == [True] and all(x.tobytes() == y.tobytes() for x, y in zip(full, bounded))


def test_recounted_rows_are_batched_by_their_chunk_position():
    """_Bounded._batches: each row at its position in a chunk of its chunk's size, in the first batch whose
    position is free (the search it replaced, kept here as the reference), for chunks of one resample (every
    batch one row) or many, a short last chunk, rows crowding one position."""
    def searched(rows, step, R):
        groups = {}
        for r in rows:
            start = r // step * step
            size, pos = min(step, R - start), r - start
            batches = groups.setdefault(size, [])
            for batch in batches:
                if batch[pos] < 0:
                    batch[pos] = r
                    break
            else:
                batch = [-1] * size
                batch[pos] = r
                batches.append(batch)
        return groups

    rng = np.random.default_rng(11)
    for step, R in ((1, 500), (6, 1000), (6, 1003), (127, 10000), (127, 130)):
        for rows in (sorted(rng.choice(R, min(R, 300), replace=False).tolist()), list(range(0, R, step)),
                     list(range(R)), [R - 1], []):
            assert stats._Bounded._batches(rows, step, R) == searched(rows, step, R), (step, R)
