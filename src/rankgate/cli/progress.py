"""Progress on a terminal for long loads (stderr, only when it is a TTY)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from rankgate.core.text import visible

MIN_BYTES = 32 << 20  # files smaller than this load without a progress line


def terminal_progress(path: str):
    """A byte-progress callback for one file, or None when quiet is better."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    if size < MIN_BYTES or not sys.stderr.isatty():
        return None
    name = visible(Path(path).name)
    start = time.monotonic()
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.2:
            return
        last[0] = now
        pct = 100.0 * done / total if total else 100.0
        rate = done / max(now - start, 1e-6) / 1e6
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rreading {name}: {pct:5.1f}%  {done / 1e6:,.0f} of {total / 1e6:,.0f} MB  "
                         f"({rate:,.0f} MB/s){end}")
        sys.stderr.flush()

    return report
