"""The numbers behind the pictures: per-query deltas and Recall@k curves (no drawing here).

Every face draws from these: Mermaid in the gate's and compare's Markdown (core/outputs.py),
an SVG file (`rankgate compare --plot`, core/svgplot.py), and the app's compare screen and gate
pane (tui). A chart is data first, so the faces agree on what they show.
"""

from __future__ import annotations


from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.compare import Paired
from rankgate.core.engine import Prepared
from rankgate.core.measures import Measure

MAX_DEPTH = 1000  # a Recall@k curve stops here even when the runs rank deeper


@dataclass(frozen=True)
class QueryDelta:
    query: str
    delta: float  # candidate - baseline
    must_pass: bool


def query_deltas(p: Paired, measure: Measure, must_pass=()) -> list[QueryDelta]:
    """Each query's delta of one measure, most lost first (ties by query ID), must-pass queries marked."""
    must = set(must_pass)
    d = p.candidate[measure] - p.baseline[measure]
    order = np.lexsort((np.arange(p.n), d))
    return [QueryDelta(p.qids[i], float(d[i]), p.qids[i] in must) for i in order.tolist()]


def recall_curve(prep: Prepared, depth: int, level: int | None = None) -> np.ndarray:
    """Mean Recall@k for k = 1..depth over the queries that have a relevant document (k-th entry at index k-1)."""
    level = prep.rel_level if level is None else level
    depth = max(1, int(depth))
    nr = prep.num_rel(level)
    with_rel = int((nr > 0).sum())
    if not with_rel:
        return np.zeros(depth)
    rel = prep.rel(level) & (prep.rank < depth)
    w = 1.0 / np.maximum(nr[prep.qp[rel]], 1.0)
    hist = np.bincount(prep.rank[rel], weights=w, minlength=depth)[:depth]
    return np.cumsum(hist) / with_rel


def curve_depth(*preps: Prepared) -> int:
    """The deepest ranking among the runs (at least 1, at most MAX_DEPTH)."""
    deepest = max((int(p.num_ret.max()) if len(p.num_ret) else 0) for p in preps) if preps else 0
    return max(1, min(MAX_DEPTH, deepest))


def paired_curves(p: Paired) -> tuple[int, dict[str, np.ndarray]]:
    """(depth, {run name: Recall@1..depth}) for a paired baseline and candidate."""
    b, c = p.prepared["baseline"], p.prepared["candidate"]
    depth = curve_depth(b, c)
    return depth, {p.baseline_name: recall_curve(b, depth, p.rel_level),
                   p.candidate_name: recall_curve(c, depth, p.rel_level)}


def curve_points(depth: int, most: int = 20) -> list[int]:
    """The k values a small chart shows: every k up to `most`, else `most` spread from 1 to depth."""
    if depth <= most:
        return list(range(1, depth + 1))
    return sorted({int(round(x)) for x in np.geomspace(1, depth, most)})


BARS = "▁▂▃▄▅▆▇"  # '▄' is a tie; losses below it, gains above


def sparkline(values, width: int) -> str:
    """Deltas as one line of block characters around zero: losses below the middle, gains above.

    More values than `width` are averaged in buckets; the middle character is a tie."""
    v = np.asarray(list(values), dtype=np.float64)
    if not len(v) or width <= 0:
        return ""
    if len(v) > width:
        edges = np.linspace(0, len(v), width + 1).astype(int)
        v = np.array([v[a:b].mean() for a, b in zip(edges[:-1], edges[1:])])
    top = float(np.abs(v).max()) or 1.0
    mid = len(BARS) // 2
    idx = np.clip(np.round(mid + v / top * mid), 0, len(BARS) - 1).astype(int)
    return "".join(BARS[i] for i in idx)
