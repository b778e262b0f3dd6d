"""Paired significance for a macro delta: randomization test, bootstrap interval, effect size.

All three work on the per-query deltas d = candidate - baseline of one measure,
optionally weighted (the statistic is then the weighted mean sum(w*d)/sum(w)).

- The paired randomization (sign-flip) test: under "no difference" each
  query's delta is as likely to have the other sign, so the observed mean is
  compared with the means of `resamples` random sign flips. The p-value is
  two-sided, (1 + #{|T*| >= |T|}) / (1 + resamples). When 2^n <= resamples
  every sign pattern is enumerated instead and the p-value is exact.
- The bootstrap confidence interval: queries resampled with replacement,
  the percentile interval of the resampled means.
- The effect size: Cohen's d for paired samples (d_z), mean delta over the
  standard deviation of the deltas (weighted when weights are given).

Everything is vectorised (per chunk of resamples: the sign flips summed from
a table of each byte's sum of deltas, the bootstrap's draws looked up two at a
time in a table of sums; never a Python loop per resample); of the bootstrap's
means only the tails its interval uses are kept (`Tails`: 5% of them at 95%
confidence, not all); with many queries, every resample is summed cheaply
(integers, two measures a gather) and only those whose mean can be at the
order statistics the interval uses are summed exactly (`_Bounded`: the same
floats); and a column of deltas tested lately is not tested again
(`paired_tests`). It is deterministic: the generator is seeded from
(seed, test), so a given seed, resample count and set of deltas always give
the same numbers. Several measures are tested in one pass over the same
resamples (`paired_tests`), which gives each the numbers it would get alone
(up to float rounding).

The random bits come from SplitMix64 used as a counter-based generator
(`SplitMix64`): word i of a test's stream is a pure function of (seed, test,
i), computed for a whole chunk at once with numpy's wrapping uint64
arithmetic, so the numbers are the same on every platform and numpy version,
do not depend on the chunk size, and cost no numpy.random import (a fifth of
the gate's start-up). Receipts written before it (no `generator` in their
`significance`) used numpy's PCG64; `generator("PCG64")` recomputes them.
"""

from __future__ import annotations

import math
import os
from contextvars import ContextVar
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

CHUNK_CELLS = 1 << 20  # resamples x queries per chunk (8 MB of float64)
EPS = 1e-12


MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # SplitMix64's increment


def _mix(z: np.ndarray, t: np.ndarray | None = None) -> np.ndarray:
    """SplitMix64's output function on uint64 words, in place (numpy's uint64 arrays wrap silently); `t`, a
    scratch array of z's shape, is overwritten."""
    t = np.empty_like(z) if t is None else t
    for shift, times in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
        np.right_shift(z, np.uint64(shift), out=t)
        z ^= t
        if times:
            z *= np.uint64(times)
    return z


def splitmix64(state: int, count: int, start: int = 0, scratch: "Scratch | None" = None) -> np.ndarray:
    """Outputs start+1 .. start+count of SplitMix64 seeded with `state` (the i-th adds i * GOLDEN to the state
    and mixes it), as uint64: any stretch of the sequence without computing what comes before it. With
    `scratch`, into its first array of words (its second overwritten), valid until its next use."""
    if scratch is None:
        z = np.arange(start + 1, start + count + 1, dtype=np.uint64)
        z *= np.uint64(GOLDEN)
        z += np.uint64(state & MASK64)
        return _mix(z)
    steps, z, t = scratch.words(count)  # (start + i) * GOLDEN + state = i * GOLDEN + (start * GOLDEN + state)
    np.add(steps, np.uint64((start * GOLDEN + state) & MASK64), out=z)
    return _mix(z, t)


class Scratch:
    """Arrays a thread reuses from chunk to chunk of a bootstrap (fresh ones each chunk cost page faults and
    cache misses): its words, and the draws' values gathered for a sum."""

    def __init__(self):
        self._steps = self._low = self._high = np.empty(0, np.uint64)
        self._picked: dict = {}

    def words(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GOLDEN * (1 .. count) (the state's steps from a chunk's start, mod 2**64) and two arrays of count words."""
        if len(self._steps) < count:
            self._steps = np.arange(1, count + 1, dtype=np.uint64)
            self._steps *= np.uint64(GOLDEN)
            self._low, self._high = np.empty(count, np.uint64), np.empty(count, np.uint64)
        return self._steps[:count], self._low[:count], self._high[:count]

    def picked(self, shape: tuple, dtype=np.float64) -> np.ndarray:
        buf = self._picked.get((shape, dtype))
        if buf is None:
            buf = self._picked[(shape, dtype)] = np.empty(shape, dtype)
        return buf


def _draws_of_halves(low: np.ndarray, high: np.ndarray, n: int) -> None:
    """Words (`low`) split in place into their 32-bit halves, low in `low` and high in `high`, each mapped to a
    draw from 0 .. n-1 by Lemire's multiply-shift, floor(half * n / 2**32)."""
    np.right_shift(low, np.uint64(32), out=high)
    low &= np.uint64(0xFFFFFFFF)
    for part in (low, high):
        part *= np.uint64(n)
        part >>= np.uint64(32)


class SplitMix64:
    """The resamples' random bits: stream `stream` of seed `seed` is SplitMix64 seeded with the seed's
    (stream+1)-th SplitMix64 output. Resample r always gets the same words, whatever the chunk it is drawn in."""

    name = "SplitMix64"

    def __init__(self, seed: int, stream: int):
        self.seed, self.key = int(seed), int(splitmix64(int(seed), 1, stream)[0])

    def sign_bits(self, start: int, m: int, n: int) -> np.ndarray:
        """Resamples start .. start+m-1: one row of n bits each (uint8 0/1); bit j of a row is bit j % 64 of the
        row's (j // 64)-th word."""
        words = (n + 63) // 64
        w = splitmix64(self.key, m * words, start * words).astype("<u8", copy=False)
        return np.unpackbits(w.view(np.uint8).reshape(m, words * 8), axis=1, count=n, bitorder="little")

    FLIP_CELLS = 1 << 24  # resamples x queries per chunk of sign flips (2 MB of sign bytes)
    DRAW_CELLS = 1 << 17  # resamples x queries per chunk of bootstrap draws (its words, their high halves and the
    # values gathered, reused by each thread: Scratch). Not smaller: a row's sum (einsum) differs in its last bit
    # when its chunk holds one resample, not several, so the chunks' sizes are part of the numbers (1 << 16 moved
    # every interval of 32,769-65,536 queries and some others by an ulp)

    @staticmethod
    def byte_sums(wd: np.ndarray) -> list[np.ndarray]:
        """For each byte k of a resample's words, a table of 256 x M: the sum of the deltas (rows 8k .. 8k+7 of
        `wd`) whose bits are set in that byte's value. Made once for all the chunks."""
        values = np.arange(256, dtype=np.uint8)[:, None]
        tables = []
        for k in range((len(wd) + 7) // 8):
            part = wd[8 * k: 8 * k + 8]
            bits = np.unpackbits(values, axis=1, count=len(part), bitorder="little").astype(np.float64)
            tables.append(bits @ part)
        return tables

    def sign_flips(self, start: int, m: int, wd: np.ndarray, tables: list[np.ndarray] | None = None) -> np.ndarray:
        """Resamples start .. start+m-1 of `sign_bits`, each row's set bits summed over `wd` (n x M): what
        `sign_bits(start, m, n) @ wd` gives, from one table of 256 sums per byte of the words (`byte_sums`)
        instead of a multiply-add per bit; a row's sum adds its bytes' sums in byte order, the same whatever
        the chunk."""
        n = len(wd)
        tables = self.byte_sums(wd) if tables is None else tables
        words = (n + 63) // 64
        w = splitmix64(self.key, m * words, start * words).astype("<u8", copy=False)
        data = np.ascontiguousarray(w.view(np.uint8).reshape(m, words * 8)[:, : len(tables)].T)
        out = np.zeros((m, wd.shape[1]))
        looked_up = np.empty_like(out)
        for byte, table in zip(data, tables):
            np.take(table, byte, axis=0, out=looked_up)
            out += looked_up
        return out

    def index_halves(self, start: int, m: int, n: int, scratch: Scratch | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Resamples start .. start+m-1 of `indices`, as two blocks of draws: the low halves' (m x ceil(n/2))
        and the high halves' (m x floor(n/2)); each resample's draws are the same, in another order. With
        `scratch` (one per thread), the blocks are its arrays, valid until its next use."""
        if n >= 2 ** 32:
            raise ValueError("at most 2**32 - 1 queries")
        half = (n + 1) // 2
        count = m * half
        scratch = Scratch() if scratch is None else scratch
        low = splitmix64(self.key, count, start * half, scratch)
        high = scratch.words(count)[2]  # (the scratch's other array: free again)
        _draws_of_halves(low, high, n)
        low, high = low.reshape(m, half), high.reshape(m, half)
        return low.view(np.int64), high[:, : n - half].view(np.int64)  # below 2**32: the same values as intp

    def index_halves_of(self, resamples: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """`index_halves`' blocks for any resamples (an array of their numbers), a row each: row i is resample
        resamples[i]'s, the same integers as index_halves(resamples[i], 1, n) gives."""
        if n >= 2 ** 32:
            raise ValueError("at most 2**32 - 1 queries")
        half = (n + 1) // 2
        z = np.arange(1, half + 1, dtype=np.uint64)
        z *= np.uint64(GOLDEN)
        first = np.asarray(resamples, dtype=np.uint64) * np.uint64(half)  # each one's first word (wrapping)
        first *= np.uint64(GOLDEN)
        first += np.uint64(self.key)
        low = _mix(z[None, :] + first[:, None])
        high = np.empty_like(low)
        _draws_of_halves(low, high, n)
        return low.view(np.int64), high[:, : n - half].view(np.int64)

    def indices(self, start: int, m: int, n: int, dtype) -> np.ndarray:
        """Resamples start .. start+m-1: n draws from 0 .. n-1 each (with replacement). Each draw is a 32-bit half
        of a word (the low half first) mapped by Lemire's multiply-shift, floor(half * n / 2**32): no value is
        likelier than another by more than n / 2**32 (2e-6 at 10,000 queries)."""
        if n >= 2 ** 32:
            raise ValueError("at most 2**32 - 1 queries")
        half = (n + 1) // 2
        w = splitmix64(self.key, m * half, start * half).astype("<u8", copy=False)
        draws = w.view("<u4").reshape(m, 2 * half)[:, :n].astype(np.uint64)
        draws *= np.uint64(n)
        draws >>= np.uint64(32)
        return draws.astype(dtype)


class PCG64:
    """numpy's PCG64 from SeedSequence([seed, stream]): what receipts without a `generator` were computed with.
    It draws in order, so chunks must be asked for in order (they are)."""

    name = "PCG64"

    def __init__(self, seed: int, stream: int):
        import numpy.random

        self.rng = numpy.random.Generator(numpy.random.PCG64(numpy.random.SeedSequence([int(seed), stream])))

    def sign_bits(self, start: int, m: int, n: int) -> np.ndarray:
        return np.unpackbits(self.rng.integers(0, 256, size=(m, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)

    def indices(self, start: int, m: int, n: int, dtype) -> np.ndarray:
        return self.rng.integers(0, n, size=(m, n), dtype=dtype)

    FLIP_CELLS = DRAW_CELLS = CHUNK_CELLS  # its chunks as receipts were made with (its draws depend on them)

    @staticmethod
    def byte_sums(wd: np.ndarray) -> None:
        return None

    def sign_flips(self, start: int, m: int, wd: np.ndarray, tables=None) -> np.ndarray:
        return self.sign_bits(start, m, len(wd)).astype(np.float64) @ wd

    def index_halves(self, start: int, m: int, n: int, scratch: Scratch | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self.indices(start, m, n, np.int64), np.empty((m, 0), dtype=np.int64)


GENERATORS = {g.name: g for g in (SplitMix64, PCG64)}
DEFAULT_GENERATOR = "SplitMix64"
_generator = ContextVar("rankgate_generator", default=DEFAULT_GENERATOR)


class generator:
    """`with generator("PCG64"): ...` computes every resample inside with that generator (a receipt's recomputation)."""

    def __init__(self, name: str):
        self.name = name if name in GENERATORS else DEFAULT_GENERATOR

    def __enter__(self):
        self._token = _generator.set(self.name)
        return self

    def __exit__(self, *exc):
        _generator.reset(self._token)


def generator_name() -> str:
    return _generator.get()


def _rng(seed: int, stream: int):
    return GENERATORS[_generator.get()](seed, stream)


def _prepare(deltas, weights) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(deltas, dtype=np.float64)
    w = np.ones(len(d)) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != d.shape:
        raise ValueError("weights and deltas differ in length")
    if len(w) and (w < 0).any():
        raise ValueError("weights must be non-negative")
    return d, w


def weighted_mean(values, weights=None) -> float:
    v, w = _prepare(values, weights)
    total = w.sum()
    return float((w * v).sum() / total) if total > 0 else 0.0


def _columns(deltas) -> np.ndarray:
    d = np.asarray(deltas, dtype=np.float64)
    return d[:, None] if d.ndim == 1 else d


_threads = [0]  # threads for the resamples' chunks (0: every core the process may use)


def _thread_local():
    """A threading.local(): the class threading takes from _thread, without importing threading (the gate's
    start-up; tests/cli/test_startup.py)."""
    try:
        from _thread import _local
    except ImportError:  # a Python whose threading.local is written in Python
        from threading import local as _local
    return _local()


def use_threads(n: int) -> None:
    """How many threads compute the resamples' chunks (the CLI's --jobs); the numbers do not depend on it."""
    _threads[0] = max(0, int(n))


def _thread_count() -> int:
    if _threads[0]:
        return _threads[0]
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _chunks(rng, cells: int, n: int, resamples: int, work):
    """work(start, m) for resamples start .. start+m-1, chunk by chunk, the results in order. SplitMix64's
    chunks are independent (its words are a function of the resample), so they go to threads (numpy
    releases the GIL while it works); PCG64 draws in order, so its chunks are done one after another."""
    step = max(1, cells // n)
    spans = [(start, min(step, resamples - start)) for start in range(0, resamples, step)]
    threads = min(_thread_count(), len(spans)) if isinstance(rng, SplitMix64) else 1
    if threads <= 1:
        yield from (work(start, m) for start, m in spans)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        pending: deque = deque()
        for start, m in spans:  # a few chunks ahead, not all of them (ten million resamples: 770,000 chunks)
            pending.append(pool.submit(work, start, m))
            if len(pending) >= 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def randomization_tests(deltas, weights=None, *, resamples: int = 10000, seed: int = 0) -> tuple[np.ndarray, bool]:
    """Two-sided p-values of the paired sign-flip test for each column of `deltas` (queries x measures),
    all from the same sign patterns, and whether they are exact (every pattern enumerated)."""
    D = _columns(deltas)
    n, M = D.shape
    if n == 0 or M == 0:
        return np.ones(M), True
    w = np.ones(n) if weights is None else _prepare(D[:, 0], weights)[1]
    total = w.sum()
    if total <= 0:
        return np.ones(M), True
    wd = w[:, None] * D / total  # n x M
    observed = np.abs(wd.sum(axis=0))
    tol = EPS * np.maximum(1.0, np.abs(wd).sum(axis=0))
    zero = observed <= tol
    step = max(1, CHUNK_CELLS // n)
    count = np.zeros(M, dtype=np.int64)
    colsum = wd.sum(axis=0)
    if n <= 20 and 2 ** n <= resamples:
        codes = np.arange(2 ** n, dtype=np.int64)
        for lo in range(0, len(codes), step):
            bits = ((codes[lo:lo + step, None] >> np.arange(n)) & 1).astype(np.float64)
            stats = np.abs(colsum - 2.0 * (bits @ wd))  # a set bit flips that query's sign
            count += np.count_nonzero(stats >= observed - tol, axis=0)
        p = count / 2 ** n
        p[zero] = 1.0
        return p, True
    rng = _rng(seed, 0)
    tables = rng.byte_sums(wd)

    def chunk(start: int, m: int) -> np.ndarray:
        stats = np.abs(colsum - 2.0 * rng.sign_flips(start, m, wd, tables))
        return np.count_nonzero(stats >= observed - tol, axis=0)

    for counted in _chunks(rng, rng.FLIP_CELLS, n, resamples, chunk):
        count += counted
    p = (1 + count) / (1 + resamples)
    p[zero] = 1.0
    return p, False


def randomization_test(deltas, weights=None, *, resamples: int = 10000, seed: int = 0) -> tuple[float, bool]:
    """Two-sided p-value of the paired sign-flip test, and whether it is exact (every pattern)."""
    p, exact = randomization_tests(_prepare(deltas, weights)[0], weights, resamples=resamples, seed=seed)
    return float(p[0]), exact


PAIRS_UP_TO = 1024  # queries: a bootstrap looks its draws up two at a time (a table of n * n sums, 8 MB at most)


class _Draws:
    """One chunk of a bootstrap's draws, ready to sum any column of values over: by pairs (a low half's draw
    and the high half's of the same word, from a table of every two values' sum) when n is small, one by
    one otherwise (and for PCG64's draws); einsum sums a row in order, five times as fast as .sum(axis=1)
    on rows this short, and the same in any chunk."""

    def __init__(self, a: np.ndarray, b: np.ndarray, n: int, scratch: Scratch | None = None):
        k = b.shape[1] if n <= PAIRS_UP_TO else 0
        self.pairs = a[:, :k] * n + b[:, :k]
        self.rest = [a[:, k:], b[:, k:]]
        self.scratch = Scratch() if scratch is None else scratch  # the buffers the draws' values are gathered into

    @staticmethod
    def table(values: np.ndarray) -> np.ndarray:
        return (values[:, None] + values[None, :]).ravel() if len(values) <= PAIRS_UP_TO else values[:0]

    def _take(self, values: np.ndarray, at: np.ndarray) -> np.ndarray:
        """values[at] into a reused buffer; mode="clip" skips take's check of each index (every draw is below
        len(values) by construction), twice as fast, the same values."""
        return values.take(at, out=self.scratch.picked(at.shape), mode="clip")  # (np.take's wrapper: 1 us a call)

    def sums(self, values: np.ndarray, table: np.ndarray) -> np.ndarray:
        out = np.einsum("ij->i", self._take(table, self.pairs)) if self.pairs.shape[1] else 0.0
        for part in self.rest:
            if part.shape[1]:
                out = out + np.einsum("ij->i", self._take(values, part))
        return out


def _mean_rows(a: np.ndarray, b: np.ndarray, n: int, columns: list, tables: list, w, w_table,
               scratch: Scratch) -> np.ndarray:
    """Each resample's mean (a row per row of draws `a`, `b`, as index_halves gives them): its draws' deltas
    summed, column by column. A row's sums depend on its draws and on how many rows its chunk has (einsum sums
    a one-row chunk's long rows in another order), not on the other rows."""
    m = len(a)
    draws = _Draws(a, b, n, scratch)
    den = n if w is None else draws.sums(w, w_table)
    out = np.empty((m, len(columns)))
    for j, col in enumerate(columns):
        num = draws.sums(col, tables[j])
        out[:, j] = num / n if w is None else np.divide(num, den, out=np.zeros(m), where=den > 0)
    return out


def bootstrap_cis(deltas, weights=None, *, resamples: int = 10000, seed: int = 0,
                  confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of the (weighted) mean of each column of `deltas` (queries x
    measures), queries resampled with replacement, the same resamples for every column. Many queries
    unweighted: only the resamples whose mean can be at an order statistic the interval uses are summed
    exactly (`_Bounded`), the same floats as summing every one."""
    D = _columns(deltas)
    n, M = D.shape
    if n == 0 or M == 0:
        return np.zeros(M), np.zeros(M)
    w = None if weights is None else _prepare(D[:, 0], weights)[1]
    rng = _rng(seed, 1)
    alpha = 1.0 - confidence
    qs = [alpha / 2, 1 - alpha / 2]
    wd = D if w is None else w[:, None] * D
    columns = [np.ascontiguousarray(wd[:, j]) for j in range(M)]
    tables = [_Draws.table(col) for col in columns]
    w_table = None if w is None else _Draws.table(w)

    def means_of(a: np.ndarray, b: np.ndarray, scratch: Scratch, only: list[int] | None = None) -> np.ndarray:
        if only is None:
            return _mean_rows(a, b, n, columns, tables, w, w_table, scratch)
        return _mean_rows(a, b, n, [columns[j] for j in only], [tables[j] for j in only], w, w_table, scratch)

    got = None
    if w is None and _Bounded.fits(rng, D, resamples):
        got = _Bounded(rng, D, resamples, qs, means_of).quantiles()
    if got is None:
        local = _thread_local()  # each thread's Scratch, for this call only

        def chunk(start: int, m: int) -> np.ndarray:  # each resample's mean
            scratch = getattr(local, "scratch", None)
            if scratch is None:
                scratch = local.scratch = Scratch()
            return means_of(*rng.index_halves(start, m, n, scratch), scratch)

        means = Tails(resamples, M, qs)  # the resamples' means, the two tails kept
        for means_of_chunk in _chunks(rng, rng.DRAW_CELLS, n, resamples, chunk):
            means.add(means_of_chunk)
        got = means.quantiles()
    lo, hi = got
    const = np.ptp(D, axis=0) == 0
    lo[const] = hi[const] = D[0, const]
    return lo, hi


class _Bounded:
    """A bootstrap's order statistics from a cheap pass over every resample and an exact one over a few.

    The cheap pass: each column's deltas rounded to integers on a grid of 2**b steps between its least and
    greatest value, two columns packed in one 64-bit word (32 bits each) so that one gather serves both,
    every resample's draws summed as integers, exactly (a lane's sum of ceil(n/2) draws stays below
    2**32: no carry into the other). Q_r, resample r's integer sum, is then within E/step of (S_r - n *
    least) / step, where S_r is the sum the exact path computes (its float sum of the same draws), step
    the grid's and E = n * (the largest rounding of a delta) + (any float summation's error bound,
    (n+1) * 2**-53 * n * max|delta|, doubled). Hence the k-th smallest S is that of the resamples whose
    Q lies within W = 2E/step (+2) of the k-th smallest Q, at rank k - #(Q below that window): everything
    below it is certainly smaller, above it certainly larger. Those resamples (a few per order statistic)
    are summed by the exact path, each in a chunk of the same size and at the same row as the full pass
    puts it (a row's float sum may depend on its chunk's shape), so the order statistics, and the
    interval made of them, are the same floats (tests/unit/test_bootstrap_bounds.py)."""

    CELLS = 1 << 16  # draws per chunk of the cheap pass (its words and gathers stay in cache)
    MIN_BITS = 12  # a coarser grid would leave too many resamples to sum exactly: the full pass instead
    AT_MOST = 1 << 22  # resamples x columns whose integer sums are kept (32 MB)

    @classmethod
    def fits(cls, rng, D: np.ndarray, resamples: int) -> bool:
        n, M = D.shape
        if not (isinstance(rng, SplitMix64) and PAIRS_UP_TO < n < 2 ** 32 and resamples * M <= cls.AT_MOST
                and cls.bits(n) >= cls.MIN_BITS and bool(np.isfinite(D).all())
                and float(np.abs(D).max()) < 2.0 ** 500):
            return False
        spread = np.ptp(D, axis=0)  # each grid's step a normal float (deltas near 1e-308 or below: a step of
        # zero, or one whose products round to the subnormals' fixed grid, which the bound does not cover)
        return bool(((spread == 0) | (spread / ((1 << cls.bits(n)) - 1) >= np.finfo(np.float64).tiny)).all())

    @staticmethod
    def bits(n: int) -> int:
        """The grid's bits: ceil(n/2) draws of at most 2**b - 1 sum to less than 2**32."""
        return 32 - ((n + 1) // 2).bit_length()

    def __init__(self, rng: SplitMix64, D: np.ndarray, resamples: int, qs, means_of):
        self.rng, self.D, self.resamples, self.qs, self.means_of = rng, D, resamples, list(qs), means_of
        n, M = D.shape
        self.n, self.M = n, M
        b = self.bits(n)
        top = (1 << b) - 1
        u = 2.0 ** -53
        self.varied = [j for j in range(M) if D[:, j].max() > D[:, j].min()]  # a constant column: its delta
        words = []
        self.window: dict[int, int] = {}  # column -> W, in grid steps
        self.grid: dict[int, tuple] = {}  # column -> (least, step, each delta's grid point)
        self.whole: dict[int, int] = {}  # column of whole numbers -> its least
        for i in range(0, len(self.varied), 2):
            word = np.zeros(n, np.uint64)
            for lane, j in enumerate(self.varied[i:i + 2]):
                v = D[:, j]
                least, most = float(v.min()), float(v.max())
                if most - least <= top and n * max(abs(least), abs(most)) < 2 ** 53 and (v == np.rint(v)).all():
                    # whole numbers (Success@k's -1, 0, 1): every float sum of them is exact, so a resample's
                    # sum is n * least + Q and its mean (n * least + Q) / n, with no resample summed again
                    step, q = 1.0, v - least
                    self.whole[j] = int(least)
                else:
                    step = (most - least) / top
                    q = np.clip(np.rint((v - least) / step), 0, top)
                    off = float(np.abs(v - (least + q * step)).max())  # each delta's distance from its grid point
                    off += 8 * u * (abs(least) + abs(most) + (most - least))  # (that distance's own rounding)
                    error = n * off + 2 * (n + 1) * u * n * float(np.abs(v).max())
                    self.window[j] = int(math.floor(2 * error / step)) + 2
                self.grid[j] = (least, step, q)
                word |= q.astype(np.uint64) << np.uint64(32 * lane)
            words.append(word)
        self.words = words

    def _sums(self) -> np.ndarray:
        """Every resample's integer sums (resamples x varied columns), chunk by chunk on the threads."""
        n, rng, words, k = self.n, self.rng, self.words, len(self.varied)
        local = _thread_local()
        low32 = np.uint64(0xFFFFFFFF)

        def chunk(start: int, m: int) -> np.ndarray:
            scratch = getattr(local, "scratch", None)
            if scratch is None:
                scratch = local.scratch = Scratch()
            a, b = rng.index_halves(start, m, n, scratch)
            out = np.empty((m, k), np.int64)
            got_a, got_b = scratch.picked(a.shape, np.uint64), scratch.picked(b.shape, np.uint64)
            for i, word in enumerate(words):
                s = np.add.reduce(word.take(a, out=got_a, mode="clip"), axis=1)
                if b.shape[1]:
                    t = np.add.reduce(word.take(b, out=got_b, mode="clip"), axis=1)
                    out[:, 2 * i] = (s & low32) + (t & low32)
                    if 2 * i + 1 < k:
                        out[:, 2 * i + 1] = (s >> np.uint64(32)) + (t >> np.uint64(32))
                else:
                    out[:, 2 * i] = s & low32
                    if 2 * i + 1 < k:
                        out[:, 2 * i + 1] = s >> np.uint64(32)
            return out

        parts = list(_chunks(rng, self.CELLS, n, self.resamples, chunk))
        return np.concatenate(parts) if parts else np.empty((0, k), np.int64)

    def quantiles(self) -> tuple[np.ndarray, np.ndarray] | None:
        R, M = self.resamples, self.M
        ranks = [_ranks(R, q) for q in self.qs]
        needed = sorted({k for _, lo, hi in ranks for k in (lo, hi)})
        Q = self._sums() if self.varied else np.empty((R, 0), np.int64)
        plan = []  # (column, rank, the resamples in its window, how many lie below it)
        rows: dict[int, set] = {}  # column -> the resamples to sum exactly
        stats = {k: np.zeros(M) for k in needed}  # order statistic k of each column (constant ones: 0)
        for c, j in enumerate(self.varied):
            col = Q[:, c]
            kth = np.partition(col, needed)
            if j in self.whole:  # the exact path's mean: its exact sum (a float) over n
                for k in needed:
                    stats[k][j] = np.float64(self.n * self.whole[j] + int(kth[k])) / self.n
                continue
            for k in needed:
                at, wide = int(kth[k]), self.window[j]
                inside = np.flatnonzero((col >= at - wide) & (col <= at + wide))
                below = int(np.count_nonzero(col < at - wide))
                plan.append((j, k, inside, below))
                rows.setdefault(j, set()).update(inside.tolist())
        if 4 * sum(map(len, rows.values())) > R * max(1, len(rows)):  # too many near the quantiles (ties of
            return None  # fractions): the full pass is cheaper
        exact = {j: self._exact(sorted(these), j) for j, these in rows.items()}
        for j, k, inside, below in plan:
            vals = np.array([exact[j][r] for r in inside.tolist()])
            stats[k][j] = np.partition(vals, k - below)[k - below]
        lo, hi = (_lerp(v, lo, stats[lo], stats[hi]) for v, lo, hi in ranks)
        return lo, hi

    @staticmethod
    def _batches(rows: list[int], step: int, R: int) -> dict[int, list[list[int]]]:
        """Chunk size -> batches, each a list of rows by position (-1: free): each row (distinct resamples) at its
        position in its chunk (chunks of `step` of R resamples), in the first batch of its chunk's size whose
        position is free, which is the batch numbered by how many rows took that position before it (linear:
        not a search of the batches a row, which at 13,000 rows of 70,000 queries cost more than the full pass)."""
        groups: dict[int, list[list[int]]] = {}
        taken: dict[tuple[int, int], int] = {}  # (size, position) -> rows put there so far
        for r in rows:
            start = r // step * step
            size, pos = min(step, R - start), r - start
            batches = groups.setdefault(size, [])
            k = taken.get((size, pos), 0)
            taken[(size, pos)] = k + 1
            if k == len(batches):
                batches.append([-1] * size)
            batches[k][pos] = r
        return groups

    def _exact(self, rows: list[int], j: int) -> dict[int, float]:
        """The exact path's means of column j for these resamples: each summed at its row of a chunk of its
        chunk's size (the other rows filled with any resample's draws), as `bootstrap_cis`'s full pass does."""
        n, rng = self.n, self.rng
        groups = self._batches(rows, max(1, rng.DRAW_CELLS // n), self.resamples)
        out: dict[int, float] = {}
        scratch = Scratch()
        for size, batches in groups.items():
            for batch in batches:
                fill = next(r for r in batch if r >= 0)
                a, b = rng.index_halves_of(np.array([r if r >= 0 else fill for r in batch]), n)
                means = self.means_of(a, b, scratch, [j])[:, 0]
                for pos, r in enumerate(batch):
                    if r >= 0:
                        out[r] = means[pos]
        return out


def bootstrap_ci(deltas, weights=None, *, resamples: int = 10000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the (weighted) mean delta, queries resampled with replacement."""
    lo, hi = bootstrap_cis(_prepare(deltas, weights)[0], weights, resamples=resamples, seed=seed,
                           confidence=confidence)
    return float(lo[0]), float(hi[0])


def effect_size(deltas, weights=None) -> float | None:
    """Cohen's d_z: mean delta / standard deviation of the deltas (None when undefined or infinite)."""
    d, w = _prepare(deltas, weights)
    n = len(d)
    total = w.sum()
    if n < 2 or total <= 0:
        return None
    mean = float((w * d).sum() / total)
    var = float((w * (d - mean) ** 2).sum() / total) * n / (n - 1)
    sd = math.sqrt(max(var, 0.0))
    if sd <= EPS:
        return 0.0 if abs(mean) <= EPS else None
    return mean / sd


def percentile(values, q: float) -> float | None:
    """The q-th percentile (0-100), linear interpolation between order statistics; None when empty."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if not len(v):
        return None
    return float(quantiles(v, [np.true_divide(q, 100)])[0])


def _ranks(n: int, q: float) -> tuple[float, int, int]:
    """The virtual index of quantile q among n sorted values, and the two order statistics it lies between."""
    v = (n - 1) * float(q)
    lo = n - 1 if v >= n - 1 else 0 if v < 0 else math.floor(v)
    return v, lo, min(lo + 1, n - 1)


def _lerp(v: float, lo: int, a_lo, a_hi):
    t = v - lo
    diff = a_hi - a_lo
    return a_hi - diff * (1 - t) if t >= 0.5 else a_lo + diff * t  # numpy's _lerp, from the nearer end


def quantiles(a, qs) -> list:
    """np.quantile(a, qs, axis=0) by numpy's default ('linear') method, with numpy's own arithmetic, so the
    same floats (tests/unit/test_stats.py compares them bit for bit), but without np.quantile: it calls
    np.unique, which loads numpy.ma, about a twentieth of the gate's start-up."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[0]
    # only the order statistics used are put in place (a partition: the same values as a sort, NaN last)
    s = np.partition(a, sorted({n - 1} | {k for q in qs for k in _ranks(n, q)[1:]}), axis=0)
    out = []
    for q in qs:
        v, lo, hi = _ranks(n, q)
        r = _lerp(v, lo, s[lo], s[hi])
        out.append(np.where(np.isnan(s[-1]), np.nan, r) if s.ndim > 1 else r)
    return out


class Tails:
    """The quantiles `qs` of `total` rows of M columns given chunk by chunk, as `quantiles` gives them (the
    same floats), keeping only the order statistics they need: the smallest rows up to the highest rank a
    quantile below the middle uses, and the largest from the lowest rank one above it uses (at 95%
    confidence, 2.5% of the rows at each end: 8 MB a column at ten million resamples, not 80)."""

    def __init__(self, total: int, M: int, qs):
        self.total, self.qs = total, list(qs)
        ranks = {k for q in self.qs for k in _ranks(total, q)[1:]}
        below = [k for k in ranks if 2 * k < total]
        above = [k for k in ranks if 2 * k >= total]
        self.n_low = max(below) + 1 if below else 0
        self.n_high = total - min(above) if above else 0
        self.low = np.empty((0, M))
        self.high = np.empty((0, M))
        self.pending: list[np.ndarray] = []
        self.rows = 0
        self.nan = np.zeros(M, dtype=bool)
        self.all = self.n_low + self.n_high >= total  # a wide interval: keeping every row costs no more

    def add(self, chunk: np.ndarray) -> None:
        self.nan |= np.isnan(chunk).any(axis=0)
        self.pending.append(chunk)
        self.rows += len(chunk)
        if not self.all and self.rows >= max(2 * self.n_low, 2 * self.n_high, 1 << 18):
            self._reduce()

    def _reduce(self) -> None:
        new = np.concatenate(self.pending) if self.pending else self.low[:0]
        self.pending, self.rows = [], 0
        self.low = self._keep(np.concatenate([self.low, new]), self.n_low, smallest=True)
        self.high = self._keep(np.concatenate([self.high, new]), self.n_high, smallest=False)

    @staticmethod
    def _keep(rows: np.ndarray, n: int, smallest: bool) -> np.ndarray:
        """The n smallest (or largest) of each column, in no order (a partition in place, then a copy)."""
        if len(rows) <= n:
            return rows
        if n == 0:
            return rows[:0]
        cut = n - 1 if smallest else len(rows) - n
        rows.partition(cut, axis=0)
        return (rows[:n] if smallest else rows[cut:]).copy()

    def quantiles(self) -> list:
        if self.all:
            return quantiles(np.concatenate(self.pending), self.qs)
        self._reduce()
        offset = self.total - self.n_high  # the rank of high's first row
        ranks = [_ranks(self.total, q) for q in self.qs]
        low_kth = sorted({k for _, lo, hi in ranks for k in (lo, hi) if k < self.n_low})
        high_kth = sorted({k - offset for _, lo, hi in ranks for k in (lo, hi) if k >= self.n_low})
        low = np.partition(self.low, low_kth, axis=0) if low_kth else self.low
        high = np.partition(self.high, high_kth, axis=0) if high_kth else self.high

        def at(k: int):
            return low[k] if k < self.n_low else high[k - offset]

        return [np.where(self.nan, np.nan, _lerp(v, lo, at(lo), at(hi))) for v, lo, hi in ranks]


@dataclass(frozen=True)
class PairedTest:
    """The significance of one macro delta."""

    n: int
    delta: float  # the (weighted) mean of candidate - baseline
    p_value: float  # two-sided, paired randomization test
    ci_low: float
    ci_high: float
    confidence: float
    effect_size: float | None  # Cohen's d_z
    resamples: int
    seed: int
    exact: bool  # every sign pattern enumerated
    weighted: bool = False

    def as_dict(self) -> dict:
        return {"delta": self.delta, "p_value": self.p_value, "ci": [self.ci_low, self.ci_high],
                "confidence": self.confidence, "effect_size": self.effect_size, "queries": self.n,
                "weighted": self.weighted, "exact": self.exact}


_DONE: dict = {}  # the tests of recent columns of deltas (paired_tests): a gate's what-ifs ask again
DONE_AT_MOST = 64


def paired_tests(deltas, weights=None, *, resamples: int = 10000, seed: int = 0,
                 confidence: float = 0.95) -> list[PairedTest]:
    """A PairedTest for each column of `deltas` (queries x measures; candidate - baseline), in one pass:
    every column sees the same sign patterns and the same resamples, so the answer for a column does
    not depend on which other columns are tested with it (beyond float rounding). A column tested
    lately with the same weights and settings is not tested again: the gate's stability what-ifs
    (core/bounds.py) ask for the same deltas several times (at ten million resamples, seconds each)."""
    D = _columns(deltas)
    n, M = D.shape
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    same = (None if w is None else w.tobytes(), resamples, seed, confidence, generator_name())
    keys = [(np.ascontiguousarray(D[:, j]).tobytes(),) + same for j in range(M)]
    found = {k: v for k in keys if (v := _DONE.get(k)) is not None}  # (another thread may drop one meanwhile)
    todo = [j for j in range(M) if keys[j] not in found]
    if todo:
        T = D[:, todo]
        p, exact = randomization_tests(T, weights, resamples=resamples, seed=seed)
        lo, hi = bootstrap_cis(T, weights, resamples=resamples, seed=seed, confidence=confidence)
        for i, j in enumerate(todo):
            found[keys[j]] = _DONE[keys[j]] = PairedTest(
                n, weighted_mean(D[:, j], weights), float(p[i]), float(lo[i]), float(hi[i]), confidence,
                effect_size(D[:, j], weights), resamples, seed, exact, weights is not None)
        while len(_DONE) > DONE_AT_MOST:  # the oldest go
            _DONE.pop(next(iter(_DONE)), None)
    return [found[k] for k in keys]


def paired_test(baseline, candidate, weights=None, *, resamples: int = 10000, seed: int = 0,
                confidence: float = 0.95) -> PairedTest:
    d = np.asarray(candidate, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    return paired_tests(d, weights, resamples=resamples, seed=seed, confidence=confidence)[0]
