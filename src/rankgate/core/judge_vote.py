"""A judge that earns its vote: suggested labels count in the gate only while the judge agrees with the experts.

The overlap: `min_overlap` (or more) pairs drawn at random (seeded, recorded) from
the judge's suggestions and placed in the experts' review queue blind (the expert
does not see the suggestion). Once experts judged them, the judge's kappa against
the experts on those pairs decides: the gate counts the suggestions when at least
`min_overlap` overlap pairs are judged and kappa >= `min_kappa`.

Kappa is Cohen's on binarised labels (relevant: grade >= the policy's rel_level):
what the gate's recall, hit and reciprocal-rank checks see, and what Thomas et al.
(SIGIR 2024) report for LLM judges against TREC assessors. Its 95% interval is a
percentile bootstrap over the overlap pairs (2,000 resamples, seeded).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

RESAMPLES = 2000


def draw_overlap(pairs: Sequence[tuple[str, str]], n: int, seed: int) -> list[tuple[str, str]]:
    """`n` of the suggested pairs at random (all when fewer), the same for the same pairs and seed."""
    pool = sorted(set(pairs))
    if n >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, n))


def binary_kappa(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cohen's kappa of two boolean raters, along the last axis (nan when chance agreement is 1).

    From the whole-number counts of the 2x2 table, 2(n11 n00 - n10 n01) / ((n11+n10)(n10+n00) +
    (n11+n01)(n01+n00)), one division: a kappa of exactly 0.6 is the float 0.6 and meets a bar of 0.6
    (from proportions, 6/3/3/42 pairs gave 0.5999999999999996, "below 0.6")."""
    n11 = (a & b).sum(axis=-1, dtype=np.int64)
    n10 = (a & ~b).sum(axis=-1, dtype=np.int64)
    n01 = (~a & b).sum(axis=-1, dtype=np.int64)
    n00 = (~a & ~b).sum(axis=-1, dtype=np.int64)
    num = 2 * (n11 * n00 - n10 * n01)
    den = (n11 + n10) * (n10 + n00) + (n11 + n01) * (n01 + n00)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1, den))


def kappa_interval(judge: Sequence[int], expert: Sequence[int], level: int, seed: int = 0,
                   resamples: int = RESAMPLES) -> tuple[float | None, float | None, float | None]:
    """(kappa, low, high): the binarised kappa and its 95% percentile-bootstrap interval; None when undefined."""
    a = np.asarray(judge) >= level
    b = np.asarray(expert) >= level
    if a.size == 0:
        return None, None, None
    k = float(binary_kappa(a, b))
    if np.isnan(k):
        return None, None, None
    idx = np.random.default_rng(seed).integers(0, a.size, size=(resamples, a.size))
    boot = binary_kappa(a[idx], b[idx])
    boot = boot[~np.isnan(boot)]
    if boot.size == 0:
        return k, None, None
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return k, float(lo), float(hi)


@dataclass
class JudgeVote:
    """Whether the gate counts the judge's suggestions, and why."""

    counted: bool
    suggestions: int  # suggested labels of pairs nobody judged (what would count)
    checked: int  # overlap pairs the experts have judged
    drawn: int  # overlap pairs drawn
    kappa: float | None
    low: float | None
    high: float | None
    min_kappa: float
    min_overlap: int
    seed: int = 0
    judges: list[dict] = field(default_factory=list)  # name, model, prompt hash of the suggestions
    overlap: list[list[str]] = field(default_factory=list)  # the pairs drawn

    def line(self) -> str:
        """The gate's first line about the judge."""
        if self.counted:
            return (f"suggested labels counted: {self.suggestions} (judge kappa {self.kappa:.2f} on {self.checked} "
                    f"expert-checked pairs, 95% interval {self.low:.2f}-{self.high:.2f})")
        if self.drawn == 0:
            return (f"suggested labels not counted: no expert-checked overlap (draw one with `rankgate labels "
                    f"overlap`, then judge it; {self.min_overlap} pairs needed)")
        if self.checked < self.min_overlap:
            return (f"suggested labels not counted: {self.checked} expert-checked pairs, below {self.min_overlap} "
                    f"(of {self.drawn} drawn)")
        if self.kappa is None:
            return f"suggested labels not counted: kappa undefined on {self.checked} expert-checked pairs"
        return (f"suggested labels not counted: kappa {self.kappa:.2f} below {self.min_kappa:g} (on "
                f"{self.checked} expert-checked pairs, 95% interval {_f(self.low)}-{_f(self.high)})")

    def as_dict(self) -> dict:
        return {"counted": self.counted, "suggestions": self.suggestions if self.counted else 0,
                "suggested": self.suggestions, "kappa": self.kappa, "interval_95": [self.low, self.high],
                "expert_checked": self.checked, "overlap_drawn": self.drawn, "min_kappa": self.min_kappa,
                "min_overlap": self.min_overlap, "overlap_seed": self.seed, "kappa_on": "binarised at rel_level",
                "judges": self.judges, "overlap": self.overlap, "line": self.line()}


def _f(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def judge_vote(suggested: Mapping[tuple[str, str], int], overlap: Sequence[tuple[str, str]],
               expert: Mapping[tuple[str, str], int], *, unjudged: int, level: int, min_kappa: float,
               min_overlap: int, seed: int = 0, judges: list[dict] | None = None) -> JudgeVote:
    """The judge's vote: its suggestions on the overlap pairs the experts judged against their grades."""
    overlap = list(dict.fromkeys(overlap))  # a pair listed twice counts once
    both = [(suggested[p], expert[p]) for p in overlap if p in suggested and p in expert]
    k, lo, hi = kappa_interval([a for a, _ in both], [b for _, b in both], level, seed)
    counted = len(both) >= min_overlap and k is not None and k >= min_kappa
    return JudgeVote(counted, unjudged, len(both), len(overlap), k, lo, hi, min_kappa, min_overlap, seed,
                     judges or [], [list(p) for p in overlap])


def without_suggestions(q):
    """The qrels without the suggested rows `with_suggestions` appended."""
    from rankgate.core.model import Qrels

    n = len(q.q) - int(q.meta.get("suggestions_counted", 0))
    meta = dict(q.meta, suggestions_counted=0)
    return Qrels(q.path, q.catalog, q.q[:n].copy(), q.doc[:n].copy(), q.grade[:n].copy(), q.query_codes, q.format,
                 q.details, q.problems, meta)
