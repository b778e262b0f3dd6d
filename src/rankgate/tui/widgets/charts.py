"""Charts drawn with characters, for the compare screen and the gate pane (no plotting library).

`delta_bars` draws per-query deltas as columns around a zero line (gains up in green, losses down in
red, must-pass queries marked ▲ under their column); `recall_lines` draws Recall@k curves with braille
dots, one colour per run. Both return Rich Text sized to the width given, so a pane re-draws them
on resize. Why our own: two small functions over data the core already has (core/charts.py) cost
less than a plotting dependency and keep the redraw on the edit path cheap.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text

from rankgate.core.charts import QueryDelta
from rankgate.tui.safe import literal

EIGHTHS = " ▁▂▃▄▅▆▇█"
COLOURS = ["dodger_blue1", "dark_orange", "green3", "red1", "medium_purple1", "tan", "hot_pink", "grey62"]


def _buckets(values: np.ndarray, width: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    n = len(values)
    if n <= width:
        return values, [(i, i + 1) for i in range(n)]
    edges = np.linspace(0, n, width + 1).astype(int)
    spans = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
    return np.array([values[a:b].mean() for a, b in spans]), spans


def delta_bars(deltas: list[QueryDelta], width: int, height: int = 8) -> Text:
    """Columns of per-query deltas (most lost first) around a zero line; ▲ under must-pass queries."""
    width, height = max(4, width), max(2, height)
    half = height // 2
    v = np.array([d.delta for d in deltas], dtype=np.float64)
    if not len(v):
        return Text("no queries", style="dim")
    cols, spans = _buckets(v, width)
    if len(cols) * 2 <= width:  # few queries: each gets a wider column (at most 4 cells)
        rep = min(4, width // len(cols))
        cols = np.repeat(cols, rep)
        spans = [s for s in spans for _ in range(rep)]
    top = float(np.abs(cols).max()) or 1.0
    levels = np.round(np.abs(cols) / top * half * 8).astype(int)  # in eighths of a row
    out = Text(no_wrap=True, overflow="crop")
    for row in range(half):  # gains, top row first
        above = (half - 1 - row) * 8
        for c, lv in zip(cols, levels):
            fill = int(min(max(lv - above, 0), 8)) if c > 1e-12 else 0
            out.append(EIGHTHS[fill], style="green")
        out.append(f" {top:+.2f}\n" if row == 0 else "\n", style="dim")
    out.append("─" * len(cols), style="dim")
    out.append(" 0\n", style="dim")
    for row in range(half):  # losses hang down from the zero line: full cells, then a partial one
        below = row * 8
        for c, lv in zip(cols, levels):
            fill = int(min(max(lv - below, 0), 8)) if c < -1e-12 else 0
            ch = "█" if fill == 8 else (" " if fill == 0 else "▀" if fill >= 4 else "▔")
            out.append(ch, style="red")
        out.append(f" {-top:+.2f}\n" if row == half - 1 else "\n", style="dim")
    marks = [" "] * len(cols)
    for i, (a, b) in enumerate(spans):
        if any(d.must_pass for d in deltas[a:b]):
            marks[i] = "▲"
    out.append("".join(marks), style="bold")
    lost = int((v < -1e-9).sum())
    won = int((v > 1e-9).sum())
    out.append(f"\n{len(v)} queries, most lost first: {lost} lost, {len(v) - lost - won} tied, {won} gained"
               + ("; ▲ must-pass" if any(d.must_pass for d in deltas) else ""), style="dim")
    return out


_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))  # braille dot bits by (row, column)


def recall_lines(depth: int, curves: dict[str, np.ndarray], width: int, height: int = 8) -> Text:
    """Recall@k, k = 1..depth, as braille curves (one colour per run name), y from 0 to 1, with a legend."""
    width, height = max(8, width - 5), max(2, height)
    px, py = width * 2, height * 4
    cells = np.zeros((height, width), dtype=np.int32)
    owner = np.full((height, width), -1, dtype=np.int32)
    for ci, c in enumerate(curves.values()):
        xs = np.arange(px)
        ks = np.clip(np.round(xs / max(px - 1, 1) * (depth - 1)).astype(int), 0, depth - 1)
        ys = np.clip(np.round((1.0 - np.asarray(c)[ks]) * (py - 1)).astype(int), 0, py - 1)
        for x, y in zip(xs.tolist(), ys.tolist()):
            r, cc = y // 4, x // 2
            cells[r, cc] |= _DOTS[y % 4][x % 2]
            owner[r, cc] = ci
    out = Text(no_wrap=True, overflow="crop")
    for r in range(height):
        label = "1.0 " if r == 0 else "0.0 " if r == height - 1 else "    "
        out.append(label, style="dim")
        for cc in range(width):
            bits = int(cells[r, cc])
            ch = chr(0x2800 + bits) if bits else " "
            out.append(ch, style=COLOURS[owner[r, cc] % len(COLOURS)] if bits else "")
        out.append("\n")
    axis = f"    k=1{' ' * max(1, width - 4 - len(str(depth)))}{depth}"
    out.append(axis + "\n", style="dim")
    for ci, key in enumerate(curves):
        out.append("    ━━ ", style=COLOURS[ci % len(COLOURS)])
        out.append_text(literal(key))
        out.append(f"  R@{depth} {float(curves[key][depth - 1]):.3f}\n", style="dim")
    out.rstrip()
    return out


def comparison_charts(comparison, must_pass, width: int) -> list[Text]:
    """The compare screen's pictures: per candidate its per-query delta columns (nDCG@k when compared,
    else RR@k), then one Recall@k chart with every run."""
    from rankgate.core.charts import curve_depth, query_deltas, recall_curve
    from rankgate.core.outputs import chart_measure

    out: list[Text] = []
    preps: dict = {}
    width = max(20, width)
    for rep in comparison.candidates:
        p = rep.paired
        m = chart_measure(p.measures, p.k)
        head = Text("\n")
        head.append_text(literal(rep.candidate, style="bold cyan"))
        head.append(f": {m.name} delta per query", style="bold")
        out += [head, delta_bars(query_deltas(p, m, must_pass), width - 8, 8)]
        preps.setdefault(p.baseline_name, p.prepared["baseline"])
        preps.setdefault(p.candidate_name, p.prepared["candidate"])
    if preps:
        depth = curve_depth(*preps.values())
        curves = {name: recall_curve(prep, depth, comparison.rel_level) for name, prep in preps.items()}
        out += [Text(f"\nRecall@k, k = 1..{depth}", style="bold"), recall_lines(depth, curves, width, 8)]
    return out
