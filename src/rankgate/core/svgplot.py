"""The comparison's charts as one SVG file (`rankgate compare --plot FILE.svg`): no browser, no plotting library.

Per candidate a per-query delta panel (every query, sorted, must-pass queries marked with a triangle),
then one Recall@k panel with a line per run. Text from the data (run names, query IDs) is made visible
(core.text.visible) and XML-escaped.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import numpy as np

from rankgate.core.charts import QueryDelta
from rankgate.core.text import visible

WIDTH = 900
PANEL = 260
MARGIN_L, MARGIN_R, MARGIN_T, MARGIN_B = 70, 20, 40, 40
MAX_BARS = 800  # more queries than this are drawn as bucket means
COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def _t(text: object, width: int = 60) -> str:
    """Untrusted text for an SVG text node: visible, cut to `width`, XML-escaped."""
    t = visible(text)
    return escape(t if len(t) <= width else t[:width - 1] + "…")


def _delta_panel(y0: float, title: str, deltas: list[QueryDelta]) -> list[str]:
    x0, w, h = MARGIN_L, WIDTH - MARGIN_L - MARGIN_R, PANEL - MARGIN_T - MARGIN_B
    top = y0 + MARGIN_T
    out = [f'<text x="{x0}" y="{y0 + 24}" class="title">{_t(title, 100)}</text>']
    v = np.array([d.delta for d in deltas], dtype=np.float64)
    n = len(v)
    span = float(np.abs(v).max()) if n else 0.0
    span = span or 1.0
    zero = top + h / 2

    def y(val: float) -> float:
        return zero - val / span * (h / 2)

    out.append(f'<line x1="{x0}" y1="{zero:.1f}" x2="{x0 + w}" y2="{zero:.1f}" class="axis"/>')
    for val in (span, -span):
        out.append(f'<text x="{x0 - 6}" y="{y(val) + 4:.1f}" class="tick" text-anchor="end">{val:+.3f}</text>')
    out.append(f'<text x="{x0 - 6}" y="{zero + 4:.1f}" class="tick" text-anchor="end">0</text>')
    if n:
        if n > MAX_BARS:
            edges = np.linspace(0, n, MAX_BARS + 1).astype(int)
            bars = [(a, b, float(v[a:b].mean())) for a, b in zip(edges[:-1], edges[1:])]
        else:
            bars = [(i, i + 1, float(v[i])) for i in range(n)]
        bw = w / n
        for a, b, val in bars:
            if abs(val) < 1e-12:
                continue
            yy, hh = (y(val), zero - y(val)) if val > 0 else (zero, y(val) - zero)
            cls = "gain" if val > 0 else "loss"
            out.append(f'<rect x="{x0 + a * bw:.2f}" y="{yy:.2f}" width="{max((b - a) * bw, 0.6):.2f}" '
                       f'height="{max(hh, 0.6):.2f}" class="{cls}"/>')
        for i, d in enumerate(deltas):
            if d.must_pass:
                cx = x0 + (i + 0.5) * bw
                out.append(f'<path d="M{cx - 4:.1f},{top + h + 12:.1f} l4,-8 l4,8 z" class="must">'
                           f"<title>{_t('must-pass ' + d.query)}: {d.delta:+.4f}</title></path>")
    lost = int((v < -1e-9).sum())
    won = int((v > 1e-9).sum())
    out.append(f'<text x="{x0}" y="{top + h + 30}" class="tick">{n} queries, most lost first: '
               f"{lost} lost, {n - lost - won} tied, {won} gained; ▲ must-pass</text>")
    return out


def _recall_panel(y0: float, depth: int, curves: dict[str, np.ndarray]) -> list[str]:
    x0, w, h = MARGIN_L, WIDTH - MARGIN_L - MARGIN_R, PANEL - MARGIN_T - MARGIN_B
    top = y0 + MARGIN_T
    out = [f'<text x="{x0}" y="{y0 + 24}" class="title">Recall@k, k = 1..{depth}</text>',
           f'<rect x="{x0}" y="{top}" width="{w}" height="{h}" class="frame"/>']
    for r in (0.0, 0.5, 1.0):
        yy = top + h - r * h
        out.append(f'<text x="{x0 - 6}" y="{yy + 4:.1f}" class="tick" text-anchor="end">{r:.1f}</text>')

    def x(k: int) -> float:
        return x0 + (0.0 if depth == 1 else (k - 1) / (depth - 1) * w)

    for k in sorted({1, max(1, depth // 4), max(1, depth // 2), depth}):
        out.append(f'<text x="{x(k):.1f}" y="{top + h + 16}" class="tick" text-anchor="middle">{k}</text>')
    for i, (name, c) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{x(k):.1f},{top + h - float(c[k - 1]) * h:.1f}" for k in range(1, depth + 1))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2">'
                   f"<title>{_t(name)}</title></polyline>")
        ly = top + h - 8 - (len(curves) - 1 - i) * 16  # bottom right: the curves rise away from it
        out.append(f'<line x1="{x0 + w - 200}" y1="{ly - 4}" x2="{x0 + w - 180}" y2="{ly - 4}" stroke="{colour}" '
                   f'stroke-width="2"/><text x="{x0 + w - 175}" y="{ly}" class="tick">{_t(name, 28)}</text>')
    return out


def comparison_svg(title: str, panels: list[tuple[str, list[QueryDelta]]], depth: int,
                   curves: dict[str, np.ndarray]) -> str:
    """An SVG document: one delta panel per (title, deltas), then the Recall@k panel."""
    height = PANEL * (len(panels) + 1) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
           "<style>.title{font-size:14px;font-weight:bold}.tick{font-size:11px;fill:#333}"
           ".axis{stroke:#333}.frame{fill:none;stroke:#ccc}.gain{fill:#55a868}.loss{fill:#c44e52}"
           ".must{fill:#222}</style>",
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{MARGIN_L}" y="20" class="title">{_t(title, 100)}</text>']
    for i, (name, deltas) in enumerate(panels):
        out += _delta_panel(30 + i * PANEL, name, deltas)
    out += _recall_panel(30 + len(panels) * PANEL, depth, curves)
    out.append("</svg>")
    return "\n".join(out) + "\n"

