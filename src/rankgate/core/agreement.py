"""Agreement between reviewers: Cohen's kappa for two, Krippendorff's alpha for any number.

Pure numpy, no store: the workspace gathers the grades, this module only counts.

A *unit* is one query-document pair; a *rating* is one reviewer's grade of it.
Only units graded by at least two reviewers say anything about agreement
("pairable" units, in Krippendorff's word); the others are counted and left out.

- `cohen_kappa(a, b)`: two reviewers' grades of the same units, in the same
  order. Unweighted: (p_o - p_e) / (1 - p_e), chance agreement p_e from each
  reviewer's own marginals. `weights="quadratic"` (or "linear") weighs a
  disagreement by (g1 - g2)^2 (|g1 - g2|) on the grades themselves, so 0 vs 3
  costs more than 0 vs 1: kappa_w = 1 - sum(w * observed) / sum(w * expected).
- `krippendorff_alpha(units, level="ordinal")`: any number of reviewers, any
  of them missing per unit. alpha = 1 - D_o / D_e from the coincidence matrix
  (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"); the
  ordinal distance between grades c <= k is
  (sum of n_g for g from c to k  -  (n_c + n_k) / 2)^2, n_g the marginal
  count of grade g. "nominal" and "interval" are there for checking.
- `measure(ratings)`: one group of units (a query, a slice, everything):
  alpha, observed agreement, and kappa for every pair of reviewers that share
  units.

A figure that is undefined (no pairable unit, or every grade the same, so
there is no variation to agree about) is None, never a made-up 1.0 or 0.0.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")
WEIGHTS = (None, "linear", "quadratic")


def cohen_kappa(a: Sequence[int], b: Sequence[int], *, weights: str | None = None) -> float | None:
    """Cohen's kappa of two reviewers over the same units (a[i] and b[i] grade unit i)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights {weights!r}: expected one of None, 'linear', 'quadratic'")
    x = np.asarray(a, dtype=np.int64)
    y = np.asarray(b, dtype=np.int64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("kappa needs two equally long lists of grades")
    n = len(x)
    if not n:
        return None
    values = np.unique(np.concatenate([x, y]))
    k = len(values)
    observed = np.zeros((k, k))
    np.add.at(observed, (np.searchsorted(values, x), np.searchsorted(values, y)), 1.0)
    observed /= n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    diff = (values[:, None] - values[None, :]).astype(np.float64)
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff)
    else:
        w = diff * diff
    de = float((w * expected).sum())
    if de <= 1e-15:  # both gave every unit one and the same grade: nothing to agree beyond chance
        return None
    return 1.0 - float((w * observed).sum()) / de


def _distances(values: np.ndarray, marginals: np.ndarray, level: str) -> np.ndarray:
    """delta^2 between every two values (Krippendorff's metric differences)."""
    k = len(values)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        d = (values[:, None] - values[None, :]).astype(np.float64)
        return d * d
    # ordinal: only the order of the values and how often each was used count
    i = np.arange(k)
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    cum = np.cumsum(marginals)
    between = cum[hi] - cum[lo] + marginals[lo]  # sum of n_g for lo <= g <= hi
    d = between - (marginals[lo] + marginals[hi]) / 2.0
    return d * d


def coincidences(units: Iterable[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(values, coincidence matrix o_ck) over the pairable units (two or more grades)."""
    units = [list(u) for u in units if len(u) >= 2]
    if not units:
        return np.zeros(0, np.int64), np.zeros((0, 0))
    flat = np.array([g for u in units for g in u], dtype=np.int64)
    values, codes = np.unique(flat, return_inverse=True)
    sizes = np.array([len(u) for u in units])
    unit_of = np.repeat(np.arange(len(units)), sizes)
    counts = np.zeros((len(units), len(values)))
    np.add.at(counts, (unit_of, codes), 1.0)
    scaled = counts / (sizes - 1)[:, None]
    # o_ck = sum over units of (n_uc * n_uk - [c == k] n_uc) / (m_u - 1): pairs from different reviewers
    o = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    return values, o


def krippendorff_alpha(units: Iterable[Sequence[int]], level: str = "ordinal") -> float | None:
    """Krippendorff's alpha; `units` holds each unit's grades (one per reviewer who graded it)."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r}: expected one of {', '.join(LEVELS)}")
    values, o = coincidences(units)
    if not len(values):
        return None
    marginals = o.sum(axis=1)
    n = marginals.sum()
    d2 = _distances(values, marginals, level)
    de = float((np.outer(marginals, marginals) * d2).sum())
    if de <= 1e-12:  # a single value throughout: alpha is undefined
        return None
    return float(1.0 - (float(n) - 1.0) * float((o * d2).sum()) / de)


def matrix_units(matrix) -> list[list[int]]:
    """Krippendorff's reliability data (reviewers x units, NaN or None where a reviewer did not grade)
    as per-unit lists of grades."""
    rows = [[None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v) for v in row] for row in matrix]
    width = max((len(r) for r in rows), default=0)
    return [[r[u] for r in rows if u < len(r) and r[u] is not None] for u in range(width)]


# --------------------------------------------------------------------------- a group of units


@dataclass(frozen=True)
class PairKappa:
    """Two reviewers over the units both graded."""

    a: str
    b: str
    units: int
    agreed: int  # units both gave the same grade
    kappa: float | None
    kappa_quadratic: float | None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.units if self.units else None

    def as_dict(self) -> dict:
        return {"reviewers": [self.a, self.b], "units": self.units, "agreed": self.agreed,
                "agreement": self.agreement, "kappa": self.kappa, "kappa_quadratic": self.kappa_quadratic}


@dataclass(frozen=True)
class Agreement:
    """Agreement over one group of units (a query, a slice, or all of them)."""

    units: int  # units graded by two or more reviewers (the ones agreement is about)
    single: int  # units graded by one reviewer only (left out)
    ratings: int  # grades on the pairable units
    agreed: int  # pairable units on which every reviewer gave the same grade
    reviewers: tuple[str, ...]  # who graded pairable units
    alpha: float | None  # Krippendorff's alpha, ordinal
    alpha_nominal: float | None
    pairs: tuple[PairKappa, ...] = field(default_factory=tuple)

    @property
    def agreement(self) -> float | None:
        """The share of pairable units on which every reviewer agreed."""
        return self.agreed / self.units if self.units else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa when exactly two reviewers share units (else None: see `pairs`)."""
        return self.pairs[0].kappa if len(self.pairs) == 1 else None

    def as_dict(self) -> dict:
        return {"units": self.units, "single": self.single, "ratings": self.ratings, "agreed": self.agreed,
                "agreement": self.agreement, "reviewers": list(self.reviewers), "alpha_ordinal": self.alpha,
                "alpha_nominal": self.alpha_nominal, "kappa": [p.as_dict() for p in self.pairs]}


def measure(ratings: Mapping[Hashable, Mapping[str, int]]) -> Agreement:
    """Agreement over `ratings`: unit -> {reviewer: grade}."""
    pairable = [(u, per) for u, per in ratings.items() if len(per) >= 2]
    single = sum(1 for per in ratings.values() if len(per) == 1)
    units = [list(per.values()) for _, per in pairable]
    names = sorted({r for _, per in pairable for r in per})
    pairs = []
    for a, b in combinations(names, 2):
        both = [(per[a], per[b]) for _, per in pairable if a in per and b in per]
        if not both:
            continue
        x, y = [g for g, _ in both], [g for _, g in both]
        pairs.append(PairKappa(a, b, len(both), sum(1 for g, h in both if g == h), cohen_kappa(x, y),
                               cohen_kappa(x, y, weights="quadratic")))
    return Agreement(len(pairable), single, sum(len(u) for u in units),
                     sum(1 for u in units if len(set(u)) == 1), tuple(names),
                     krippendorff_alpha(units, "ordinal"), krippendorff_alpha(units, "nominal"), tuple(pairs))


def measure_groups(ratings: Mapping[Hashable, Mapping[str, int]],
                   groups: Mapping[str, Iterable[Hashable]]) -> dict[str, Agreement]:
    """Agreement per named group of units (per query, per slice), in the groups' order."""
    return {name: measure({u: ratings[u] for u in members if u in ratings}) for name, members in groups.items()}


# --------------------------------------------------------------------------- a judge against each expert


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge's suggestions against one reviewer's grades, over the pairs both graded."""

    judge: str
    reviewer: str
    units: int
    agreed: int
    kappa: float | None
    kappa_quadratic: float | None
    confusion: dict[int, dict[int, int]]  # judge's grade -> reviewer's grade -> pairs
    relevant_agreed: int = 0  # pairs on which both say relevant, or both not (grade >= level)

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.units if self.units else None

    def as_dict(self) -> dict:
        return {"judge": self.judge, "reviewer": self.reviewer, "units": self.units, "agreed": self.agreed,
                "agreement": self.agreement, "kappa": self.kappa, "kappa_quadratic": self.kappa_quadratic,
                "relevant_agreed": self.relevant_agreed,
                "confusion": {str(g): {str(h): n for h, n in row.items()} for g, row in self.confusion.items()}}


def judge_agreement(suggested: Mapping[Hashable, int], ratings: Mapping[Hashable, Mapping[str, int]], *,
                    judge: str = "judge", grades: Iterable[int] = (), level: int = 1) -> list[JudgeAgreement]:
    """The judge (unit -> suggested grade) against every reviewer in `ratings` (unit -> {reviewer: grade}),
    one per reviewer, by name. `grades`: the scale, so the confusion table has every row and column."""
    names = sorted({r for per in ratings.values() for r in per})
    out = []
    for name in names:
        both = [(suggested[u], per[name]) for u, per in ratings.items() if name in per and u in suggested]
        scale = sorted(set(grades) | {g for pair in both for g in pair})
        confusion = {g: {h: 0 for h in scale} for g in scale}
        for g, h in both:
            confusion[g][h] += 1
        x, y = [g for g, _ in both], [h for _, h in both]
        out.append(JudgeAgreement(judge, name, len(both), sum(1 for g, h in both if g == h),
                                  cohen_kappa(x, y) if both else None,
                                  cohen_kappa(x, y, weights="quadratic") if both else None, confusion,
                                  sum(1 for g, h in both if (g >= level) == (h >= level))))
    return out
