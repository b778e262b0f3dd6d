"""Ordinary memory pages for numpy's arrays in rankgate's own process."""

from __future__ import annotations

import os


def small_pages() -> None:
    """numpy asks Linux for transparent huge pages for each array of 4 MB or more (madvise). Where the kernel
    compacts memory to find them at once (defrag "madvise", the usual setting) and memory is fragmented (a
    large page cache will do), every such array costs milliseconds of system time: a first open of 10k
    queries x 3 runs spent 1-1.5 of its CPU seconds there, `score` of a shuffled 7M-line run 0.5-1.3 s
    (system time 1.06-1.84 s with huge pages, 0.49-0.60 s without). The rankgate process (the CLI's entry
    point, the app) asks for ordinary pages; NUMPY_MADVISE_HUGEPAGE, if set, decides instead."""
    if "NUMPY_MADVISE_HUGEPAGE" in os.environ:
        return
    try:
        from numpy._core.multiarray import _set_madvise_hugepage
    except ImportError:  # (numpy before 2.0)
        try:
            from numpy.core.multiarray import _set_madvise_hugepage
        except ImportError:
            return
    _set_madvise_hugepage(False)
