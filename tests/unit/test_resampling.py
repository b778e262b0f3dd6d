"""The resamples' generator (stats.SplitMix64): it is SplitMix64, computed for any stretch of a stream at once;
deterministic for a seed, streams and seeds differ, chunks do not matter; sign flips and bootstrap draws are
uniform, p-values under no difference are uniform and bootstrap intervals cover. numpy's PCG64 is kept for
receipts written before it."""

import numpy as np
import pytest

from rankgate.core import stats
from rankgate.core.stats import PCG64, SplitMix64, bootstrap_ci, generator, paired_tests, randomization_test

MASK = (1 << 64) - 1


def reference(state: int, count: int) -> list[int]:
    """SplitMix64 as published (Vigna's splitmix64.c), one output at a time."""
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        out.append(z ^ (z >> 31))
    return out


def test_it_is_splitmix64_and_any_stretch_equals_the_sequence():
    assert reference(1234567, 3) == [6457827717110365317, 3203168211198807973, 9817491932198370423]
    assert stats.splitmix64(1234567, 3).tolist() == reference(1234567, 3)
    seq = reference(2**64 - 5, 300)  # the state wraps
    assert stats.splitmix64(2**64 - 5, 300).tolist() == seq
    assert stats.splitmix64(2**64 - 5, 17, 250).tolist() == seq[250:267]


def test_bits_and_draws_follow_their_definition():
    """Sign bit j of resample r is bit j % 64 of word r * ceil(n/64) + j // 64; bootstrap draw j of resample r is
    the (j % 2 == 0: low, else high) half of word r * ceil(n/2) + j // 2, times n, over 2**32."""
    seed, n = 11, 70
    key0, key1 = reference(seed, 2)
    g0, g1 = SplitMix64(seed, 0), SplitMix64(seed, 1)
    assert (g0.key, g1.key) == (key0, key1)
    bits = g0.sign_bits(3, 2, n)
    words = reference(key0, 10)
    for r in range(2):
        for j in range(n):
            assert bits[r, j] == (words[(3 + r) * 2 + j // 64] >> (j % 64)) & 1
    draws = g1.indices(3, 2, n, np.int64)
    words = reference(key1, 5 * 35)
    for r in range(2):
        for j in range(n):
            w = words[(3 + r) * 35 + j // 2]
            half = w & 0xFFFFFFFF if j % 2 == 0 else w >> 32
            assert draws[r, j] == half * n >> 32


def test_deterministic_for_a_seed_and_different_across_streams_and_seeds():
    a = SplitMix64(5, 0).sign_bits(0, 50, 40)
    assert np.array_equal(a, SplitMix64(5, 0).sign_bits(0, 50, 40))
    assert not np.array_equal(a, SplitMix64(5, 1).sign_bits(0, 50, 40))
    assert not np.array_equal(a, SplitMix64(6, 0).sign_bits(0, 50, 40))
    d = np.random.default_rng(1).normal(0.05, 0.2, 60)
    assert randomization_test(d, resamples=2000, seed=7) == randomization_test(d, resamples=2000, seed=7)
    assert bootstrap_ci(d, resamples=2000, seed=7) != bootstrap_ci(d, resamples=2000, seed=8)


@pytest.mark.parametrize("threads", [1, 2])
def test_chunks_do_not_change_the_numbers(monkeypatch, threads):
    D = np.random.default_rng(2).normal(0, 0.2, (90, 3))
    monkeypatch.setattr(stats, "_threads", [1])
    stats._DONE.clear()
    whole = paired_tests(D, resamples=3000, seed=4)
    monkeypatch.setattr(stats, "_threads", [threads])
    monkeypatch.setattr(stats, "CHUNK_CELLS", 1000)  # 11 resamples a chunk
    monkeypatch.setattr(SplitMix64, "FLIP_CELLS", 1000)
    monkeypatch.setattr(SplitMix64, "DRAW_CELLS", 1000)
    stats._DONE.clear()  # computed again, not remembered
    chunked = paired_tests(D, resamples=3000, seed=4)
    assert [(t.p_value, t.ci_low, t.ci_high) for t in whole] == [(t.p_value, t.ci_low, t.ci_high) for t in chunked]


def test_sign_bits_are_fair_coins():
    bits = SplitMix64(0, 0).sign_bits(0, 20000, 37).astype(float)
    assert abs(bits.mean() - 0.5) < 0.002
    assert np.abs(bits.mean(axis=0) - 0.5).max() < 0.015  # every query (20,000 flips: sd 0.0035)
    c = np.corrcoef(bits[:, :10].T)
    assert np.abs(c - np.eye(10)).max() < 0.03  # neighbouring queries' signs independent


@pytest.mark.parametrize("n", [1, 2, 7, 100, 1001])
def test_bootstrap_draws_are_uniform_over_the_queries(n):
    rows = max(1, 200_000 // n)
    draws = SplitMix64(3, 1).indices(0, rows, n, np.int32)
    assert draws.shape == (rows, n) and draws.min() >= 0 and draws.max() <= n - 1
    counts = np.bincount(draws.ravel(), minlength=n)
    expected = rows * n / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < n - 1 + 6 * np.sqrt(2 * max(1, n - 1)) + 10  # chi-square with n - 1 degrees of freedom


def test_p_values_under_no_difference_are_uniform():
    """Deltas symmetric about 0: P(p <= a) is about a for every a (the test is neither liberal nor conservative)."""
    rng = np.random.default_rng(5)
    p = np.array([randomization_test(rng.normal(0, 0.2, 25), resamples=400, seed=s)[0] for s in range(400)])
    for a in (0.05, 0.1, 0.25, 0.5, 0.75):
        assert abs((p <= a).mean() - a) < 4 * np.sqrt(a * (1 - a) / 400) + 0.01, a


def test_bootstrap_intervals_cover_the_true_mean():
    rng = np.random.default_rng(6)
    covered = [lo <= 0.1 <= hi for lo, hi in
               (bootstrap_ci(rng.normal(0.1, 0.3, 40), resamples=1000, seed=s, confidence=0.9) for s in range(300))]
    assert 0.83 <= np.mean(covered) <= 0.95  # 90% nominal; the percentile interval runs a little short at n = 40


def test_a_strong_effect_is_found_by_both_generators_alike():
    d = np.random.default_rng(7).normal(0.1, 0.2, 80)
    new = paired_tests(d, resamples=4000, seed=1)[0]
    with generator("PCG64"):
        old = paired_tests(d, resamples=4000, seed=1)[0]
    assert new.p_value < 0.01 and old.p_value < 0.01
    assert new.ci_low == pytest.approx(old.ci_low, abs=0.01) and new.ci_high == pytest.approx(old.ci_high, abs=0.01)


def test_the_old_generator_draws_exactly_what_rankgate_drew_before():
    """PCG64 is what every receipt without a `generator` was computed with: numpy's PCG64 seeded with
    SeedSequence([seed, stream]), sign bytes then unpacked bits, bootstrap indices by Generator.integers."""
    import numpy.random

    old = numpy.random.Generator(numpy.random.PCG64(numpy.random.SeedSequence([9, 0])))
    g = PCG64(9, 0)
    for m in (100, 37):
        assert np.array_equal(g.sign_bits(0, m, 45),
                              np.unpackbits(old.integers(0, 256, size=(m, 6), dtype=np.uint8), axis=1, count=45))
    old = numpy.random.Generator(numpy.random.PCG64(numpy.random.SeedSequence([9, 1])))
    g = PCG64(9, 1)
    assert np.array_equal(g.indices(0, 50, 45, np.int32), old.integers(0, 45, size=(50, 45), dtype=np.int32))


def test_the_generator_in_force_is_named_and_restored():
    assert stats.generator_name() == "SplitMix64"
    with generator("PCG64"):
        assert stats.generator_name() == "PCG64"
        with generator("no such generator"):  # an unknown name (a newer receipt's): the default
            assert stats.generator_name() == "SplitMix64"
        assert stats.generator_name() == "PCG64"
    assert stats.generator_name() == "SplitMix64"


def test_the_fast_forms_are_the_defined_bits_and_draws():
    """sign_flips is sign_bits @ wd; index_halves holds each resample's draws of `indices` (in another order)."""
    rng = np.random.default_rng(9)
    for n in (1, 7, 8, 43, 64, 70, 130):
        g = SplitMix64(21, 0)
        wd = rng.normal(size=(n, 3))
        assert np.allclose(g.sign_flips(5, 40, wd), g.sign_bits(5, 40, n).astype(float) @ wd, rtol=0, atol=1e-12)
        a, b = SplitMix64(21, 1).index_halves(5, 40, n)
        draws = SplitMix64(21, 1).indices(5, 40, n, np.int64)
        assert a.shape[1] + b.shape[1] == n
        assert np.array_equal(np.sort(np.hstack([a, b]), axis=1), np.sort(draws, axis=1))


def _halves_from_the_words(g, start, m, n):
    """index_halves as rankgate computed it before its Scratch: fresh words from splitmix64, split and mapped."""
    half = (n + 1) // 2
    low = stats.splitmix64(g.key, m * half, start * half).reshape(m, half)
    high = low >> np.uint64(32)
    low &= np.uint64(0xFFFFFFFF)
    for part in (low, high):
        part *= np.uint64(n)
        part >>= np.uint64(32)
    return low.view(np.int64), high[:, : n - half].view(np.int64)


def test_draws_made_in_a_reused_scratch_are_the_words_draws():
    """A thread's Scratch holds the steps GOLDEN * i and the words chunk after chunk, larger and smaller ones, n odd
    and even: every chunk's draws are those of splitmix64's words, whatever the chunk before left there."""
    g, scratch = SplitMix64(2**63 + 12345, 1), stats.Scratch()
    for start, m, n in ((0, 5, 10_000), (5, 3, 10_000), (700, 40, 1001), (3, 1, 7), (2**40, 9, 2**20 + 1),
                        (8, 2, 1), (0, 13, 10_000)):
        a, b = g.index_halves(start, m, n, scratch)
        want = _halves_from_the_words(g, start, m, n)
        assert a.dtype == b.dtype == np.int64 and a.shape == want[0].shape and b.shape == want[1].shape
        assert np.array_equal(a, want[0]) and np.array_equal(b, want[1]), (start, m, n)


@pytest.mark.parametrize("seed", range(12))
def test_the_kept_tails_give_the_quantiles_of_every_row(seed):
    """stats.Tails keeps only the order statistics the interval needs, chunk by chunk: the same floats as
    quantiles() of every row, whatever the chunks, the confidence (a wide one keeps every row) or a NaN."""
    from rankgate.core.stats import Tails, quantiles

    rng = np.random.default_rng(seed)
    total, M = int(rng.integers(1, 200_000)), int(rng.integers(1, 4))
    rows = np.round(rng.normal(size=(total, M)), int(rng.integers(1, 6)))  # ties too
    if seed % 5 == 4:
        rows[rng.integers(0, total), 0] = np.nan
    confidence = [0.95, 0.99, 0.5, 0.9999, 0.01, 1 / 3][seed % 6]
    qs = [(1 - confidence) / 2, 1 - (1 - confidence) / 2]
    kept = Tails(total, M, qs)
    done = 0
    while done < total:
        m = int(rng.integers(1, 40_000))
        kept.add(rows[done:done + m].copy())
        done += m
    for mine, theirs in zip(kept.quantiles(), quantiles(rows, qs)):
        assert np.array_equal(mine, theirs, equal_nan=True)
    if confidence == 0.95 and total > 100_000:
        assert len(kept.low) + len(kept.high) < total / 10  # only the tails were kept


def test_a_column_tested_lately_is_not_tested_again(monkeypatch):
    """The gate's stability what-ifs ask for the same deltas several times: each column is tested once per
    weights and settings (generator included), and any change tests it again."""
    calls = []
    real = stats.bootstrap_cis
    monkeypatch.setattr(stats, "bootstrap_cis", lambda D, *a, **k: calls.append(D.shape[1]) or real(D, *a, **k))
    stats._DONE.clear()
    D = np.random.default_rng(3).normal(0, 0.2, (30, 2))
    first = paired_tests(D, resamples=500, seed=1)
    assert paired_tests(D[:, ::-1], resamples=500, seed=1) == first[::-1] and calls == [2]
    assert paired_tests(np.column_stack([D[:, 0], D[:, 0] + 1]), resamples=500, seed=1)[0] == first[0]
    assert calls == [2, 1]  # only the new column
    for change in ({"seed": 2}, {"confidence": 0.9}, {"resamples": 600}):
        paired_tests(D[:, 0], **{"resamples": 500, "seed": 1, **change})
    paired_tests(D[:, 0], np.full(30, 2.0), resamples=500, seed=1)
    with generator("PCG64"):
        paired_tests(D[:, 0], resamples=500, seed=1)
    assert calls == [2, 1, 1, 1, 1, 1, 1]


def test_draws_summed_in_pairs_or_one_by_one_give_the_same_intervals(monkeypatch):
    """Up to PAIRS_UP_TO queries the bootstrap sums its draws two at a time from a table of sums; above it,
    one by one: the same intervals (to float rounding), weighted or not, n odd or even."""
    rng = np.random.default_rng(12)
    for n in (1, 2, 7, 44):
        D = rng.normal(0, 0.2, (n, 2))
        for w in (None, rng.uniform(0, 3, n)):
            paired = stats.bootstrap_cis(D, w, resamples=3000, seed=6)
            monkeypatch.setattr(stats, "PAIRS_UP_TO", 0)
            single = stats.bootstrap_cis(D, w, resamples=3000, seed=6)
            monkeypatch.undo()
            for x, y in zip(paired, single):
                assert np.allclose(x, y, rtol=0, atol=1e-12), (n, w is None)


def test_more_columns_than_are_remembered_at_once():
    D = np.random.default_rng(5).normal(0, 0.2, (12, stats.DONE_AT_MOST + 5))
    stats._DONE.clear()
    tests = paired_tests(D, resamples=200, seed=1)
    assert len(tests) == D.shape[1] and len(stats._DONE) == stats.DONE_AT_MOST
    assert paired_tests(D, resamples=200, seed=1) == tests


def _sign_flips_chunk_by_chunk(g, start, m, wd):
    """sign_flips as rankgate 0.x computed it: each chunk made the byte tables again and gathered them from
    the rows of sign bytes (the reference for the tables made once)."""
    n = len(wd)
    words = (n + 63) // 64
    w = stats.splitmix64(g.key, m * words, start * words).astype("<u8", copy=False)
    data = w.view(np.uint8).reshape(m, words * 8)
    values = np.arange(256, dtype=np.uint8)[:, None]
    out = np.zeros((m, wd.shape[1]))
    for k in range((n + 7) // 8):
        part = wd[8 * k: 8 * k + 8]
        bits = np.unpackbits(values, axis=1, count=len(part), bitorder="little").astype(np.float64)
        out += (bits @ part)[data[:, k]]
    return out


@pytest.mark.parametrize("n", [1, 9, 64, 1003])
def test_sign_flips_from_tables_made_once_are_the_same_floats(n):
    wd = np.random.default_rng(n).normal(0, 0.1, (n, 3)) / n
    g = SplitMix64(12, 0)
    tables = g.byte_sums(wd)
    for start, m in ((0, 1), (37, 50), (1000, 7)):
        assert g.sign_flips(start, m, wd, tables).tobytes() == _sign_flips_chunk_by_chunk(g, start, m, wd).tobytes()


@pytest.mark.parametrize("weighted", [False, True])
def test_threads_and_chunk_sizes_give_the_same_p_values_and_intervals(monkeypatch, weighted):
    """10,000 queries (the draws one by one, the sign flips over 1,250 bytes): one thread with the chunks of
    before (CHUNK_CELLS) against two threads with the larger sign-flip and smaller draw chunks."""
    rng = np.random.default_rng(5)
    D = rng.normal(0.0, 0.2, (10_000, 2))
    w = rng.uniform(0.5, 2, 10_000) if weighted else None

    def tests(threads, flip_cells, draw_cells):
        monkeypatch.setattr(stats, "_threads", [threads])
        monkeypatch.setattr(SplitMix64, "FLIP_CELLS", flip_cells)
        monkeypatch.setattr(SplitMix64, "DRAW_CELLS", draw_cells)
        p, _ = stats.randomization_tests(D, w, resamples=700, seed=3)
        lo, hi = stats.bootstrap_cis(D, w, resamples=700, seed=3)
        return np.concatenate([p, lo, hi])

    before = tests(1, stats.CHUNK_CELLS, stats.CHUNK_CELLS)
    assert 0.01 < before[0] < 0.99  # not a trivially certain test
    assert tests(2, 1 << 24, 1 << 17).tobytes() == before.tobytes()
    assert tests(2, SplitMix64.FLIP_CELLS, SplitMix64.DRAW_CELLS).tobytes() == before.tobytes()  # the defaults
    assert tests(1, 1 << 20, 1 << 12).tobytes() == before.tobytes()


@pytest.mark.parametrize("n, resamples, want", [
    (40000, 3, ("-0x1.39afa41d003e4p-11", "0x1.fa37a98f85f17p-10")),
    (50000, 7, ("-0x1.7d3a572da81d1p-10", "0x1.c1d61b2190ebcp-9")),
    (22000, 5, ("-0x1.829e97cb8a49cp-13", "0x1.06ad992aded0dp-8")),
])
def test_bootstrap_intervals_of_many_queries_are_those_rankgate_gave_before(n, resamples, want):
    """einsum sums a one-resample chunk's row in another order than a row of a larger chunk (rows this long):
    the chunks' sizes are part of the numbers, and intervals must stay byte-identical across releases (receipts).
    The floats are those of e357c9b (DRAW_CELLS 1 << 17); 1 << 16 put 40,000 queries in chunks of one resample."""
    D = ((np.arange(n) * 7919) % 1001 - 500) / 1000.0  # exact values, no generator's
    lo, hi = stats.bootstrap_cis(D, resamples=resamples, seed=0)
    assert (float(lo[0]).hex(), float(hi[0]).hex()) == want
