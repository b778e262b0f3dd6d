"""The gate pane's line on incomplete labels: "labels: stable" or "could flip: judge these 2 documents"."""

from __future__ import annotations

from rich.text import Text

from rankgate.tui.safe import literal

SHOWN = 3  # documents named on the line


UNASKED = False  # shown before the passing checks are listed (enter)? True changes the app's snapshots


def stability_line(model, *, always: bool) -> Text | None:
    """The line for the gate pane (None when the queue has not looked yet; and, unless `always` (the
    passing checks listed) or UNASKED, until asked)."""
    got = model.stability() if model is not None and hasattr(model, "stability") else None
    if got is None or not (always or UNASKED):
        return None
    st, edits = got
    t = Text(end="")
    if st.stable:
        t.append("≈ labels: stable", style="green")
        t.append(" (no answer for the unjudged documents flips the decision)", style="dim")
    else:
        n = len(st.to_judge)
        t.append("? could flip: ", style="bold yellow")
        t.append(f"judge {'this document' if n == 1 else f'these {n} documents'}", style="yellow")
        for q, d in st.to_judge[:SHOWN]:
            t.append("\n    ")
            t.append_text(literal(f"{q} {d}"))
        if n > SHOWN:
            t.append(f"\n    … and {n - SHOWN} more (u walks the review queue)", style="dim")
    if edits:
        t.append(f"  (before your last {edits} edits)" if edits > 1 else "  (before your last edit)", style="dim")
    return t
