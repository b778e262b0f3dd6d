"""Charts as Mermaid `xychart-beta` blocks, which GitHub draws in step summaries and pull requests.

Labels come from the data (query IDs), so each is reduced to letters, digits and `-_.:/@+` (anything
else becomes `_`) and cut short: nothing in an ID can close the code fence, end a quoted label or
start a Mermaid directive.
"""

from __future__ import annotations

from rankgate.core.charts import QueryDelta, curve_points
from rankgate.core.text import visible

MOST_CHANGED = 30  # queries in the per-query delta chart
LABEL_WIDTH = 20
_SAFE = set("-_.:/@+")


def label(text: object) -> str:
    """A chart label that Mermaid shows as it is: safe characters only, at most LABEL_WIDTH."""
    t = "".join(ch if ch.isalnum() or ch in _SAFE else "_" for ch in visible(text))
    return t if len(t) <= LABEL_WIDTH else t[:LABEL_WIDTH - 1] + "…"


def _num(x: float) -> str:
    return f"{x:.4f}".rstrip("0").rstrip(".") if x == x else "0"


def delta_chart(deltas: list[QueryDelta], measure_name: str, *, most: int = MOST_CHANGED) -> list[str]:
    """A bar per query for the `most` most changed queries, most lost first; must-pass queries marked ★.

    Returns the Markdown lines (a sentence and the fenced block); no lines when nothing changed."""
    changed = [d for d in deltas if abs(d.delta) > 1e-9]
    if not changed:
        return [f"No query's {measure_name} changed."]
    shown = sorted(sorted(changed, key=lambda d: -abs(d.delta))[:most], key=lambda d: (d.delta, d.query))
    cut = len(changed) - len(shown)
    low = min(0.0, min(d.delta for d in shown))
    high = max(0.0, max(d.delta for d in shown))
    if low == high:
        high = low + 1.0
    names = ", ".join(f'"{"★" if d.must_pass else ""}{label(d.query)}"' for d in shown)
    intro = (f"Per-query {label(measure_name)} delta (candidate − baseline), "
             + (f"the {len(shown)} most changed of {len(changed)} changed queries" if cut else
                f"{len(shown)} changed queries") + ", most lost first; ★ marks a must-pass query:")
    return [intro, "", "```mermaid", "xychart-beta", f'  title "{label(measure_name)} delta per query"',
            f"  x-axis [{names}]", f'  y-axis "delta" {_num(low)} --> {_num(high)}',
            f"  bar [{', '.join(_num(d.delta) for d in shown)}]", "```"]


def recall_chart(depth: int, curves: dict[str, "object"]) -> list[str]:
    """Recall@k for k from 1 to the runs' depth, one line per run (in the order given)."""
    ks = curve_points(depth)
    names = list(curves)
    order = " then ".join(f"{label(n)}" for n in names)
    lines = [f"Recall@k for k = 1..{depth}, one line per run ({order}, in that order):", "", "```mermaid",
             "xychart-beta", '  title "Recall@k"', f"  x-axis [{', '.join(str(k) for k in ks)}]",
             '  y-axis "Recall" 0 --> 1']
    for n in names:
        c = curves[n]
        lines.append(f"  line [{', '.join(_num(float(c[k - 1])) for k in ks)}]")
    return lines + ["```"]
