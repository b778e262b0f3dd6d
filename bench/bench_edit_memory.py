"""Memory of the review app over a long session of edits, headless (Textual's pilot), on a copy of a sample.

    python bench/bench_edit_memory.py                      # ops-handbook, 50 then 250 edits: RSS per edit
    python bench/bench_edit_memory.py --trace 12 --top 8   # and what grew between the two, by traceback

An edit is a grade key and Escape (the reason prompt skipped), Down every 5th, as a reviewer grades. Prints
the process's RSS, the objects the collector tracks and (with --trace) the memory Python allocated, after
--from and after --to edits, and the growth per edit between the two. A steady session grows by a few KB
an edit (its labels and undo steps); until the footer let go of its past keys it grew by ~1 MB an edit.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS"))


async def session(args) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rankgate-mem-"))
    os.environ["RANKGATE_HOME"] = str(tmp / "home")
    os.environ.setdefault("RANKGATE_REVIEWER", "bench")
    bench = tmp / "bench"
    shutil.copytree(args.benchmark, bench)
    sys.path.insert(0, str(ROOT))
    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs
    from tests.tui.conftest import ready

    app = ReviewApp(Inputs(str(bench), []), cursor_blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(pilot)
        done = 0

        async def edits(n: int) -> None:
            nonlocal done
            for _ in range(n):
                done += 1
                await pilot.press(str(done % 4), "escape")
                if done % 5 == 0:
                    await pilot.press("down")
                await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
            gc.collect()

        def figures() -> tuple[float, int, int]:
            traced = tracemalloc.get_traced_memory()[0] if args.trace else 0
            print(f"after {done} edits: RSS {rss_mb():.1f} MB, tracked objects {len(gc.get_objects())}"
                  + (f", traced {traced / 1e6:.2f} MB" if args.trace else ""), flush=True)
            return rss_mb(), len(gc.get_objects()), traced

        await edits(10)
        if args.trace:
            tracemalloc.start(args.trace)
        await edits(args.from_ - 10)
        r1, o1, t1 = figures()
        s1 = tracemalloc.take_snapshot() if args.trace else None
        await edits(args.to - args.from_)
        r2, o2, t2 = figures()
        n = args.to - args.from_
        print(f"per edit: RSS {(r2 - r1) * 1024 / n:.1f} KB, objects {(o2 - o1) / n:.1f}"
              + (f", traced {(t2 - t1) / 1024 / n:.1f} KB" if args.trace else ""))
        if args.trace:
            skip = [tracemalloc.Filter(False, tracemalloc.__file__)]
            stats = tracemalloc.take_snapshot().filter_traces(skip).compare_to(s1.filter_traces(skip), "traceback")
            for st in stats[: args.top]:
                print(f"\n+{st.size_diff / 1024:.1f} KB in {st.count_diff:+d} blocks")
                print("\n".join(st.traceback.format()[-2 * args.trace:]))
        app.exit()
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--benchmark", default=str(ROOT / "sample_benchmarks" / "ops-handbook"))
    p.add_argument("--from", dest="from_", type=int, default=50, help="edits before the first figures (>= 10)")
    p.add_argument("--to", type=int, default=250, help="edits before the second figures")
    p.add_argument("--trace", type=int, default=0, help="tracemalloc frames (0: off; slow when on)")
    p.add_argument("--top", type=int, default=8)
    args = p.parse_args()
    asyncio.run(session(args))


if __name__ == "__main__":
    main()
