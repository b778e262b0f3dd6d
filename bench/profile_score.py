"""Where `rankgate score` spends its time: stage timers, and optionally a full profile.

    bench/.venv-peers/bin/python bench/profile_score.py                  # msmarco, stage timers
    ... profile_score.py --bench shuffled
    ... profile_score.py --bench quick         # bench/quick.py's workload (2,000 x 1,000, 100 judged a query)
    ... profile_score.py --general             # the general (non-pyarrow) reader
    ... profile_score.py --profiler cprofile   # plus the top functions (cProfile, slower)
    ... profile_score.py --profiler pyinstrument --html data/profile.html

Runs the same command as bench_score.py in this process, with wall-clock timers
wrapped around the functions that make up the stages (looked up by name; a
function the engine no longer has is reported as missing, not fatal). Times are
inclusive; a stage's `self` is its time less its timed children.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import io
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_score import BENCHES, DATA  # noqa: E402

T0 = time.perf_counter()

# (label, module, attribute path, parent label)
STAGES = [
    ("load inputs", "rankgate.cli.evaluate", "load", "score command"),
    ("read qrels", "rankgate.core.formats.trec", "read_trec_qrels", "load inputs"),
    ("read qrels, fast path (read_trec_qrels_fast)", "rankgate.core.formats.trec_fast", "read_trec_qrels_fast",
     "load inputs"),
    ("judged documents' hash table (_judged_lookup)", "rankgate.core.formats.trec_fast", "_judged_lookup",
     "read run, fast path (read_lean_run)"),
    # the fast path (core/formats/trec_fast.py: pyarrow, when installed and the file is plain)
    ("read run, fast path (read_lean_run)", "rankgate.core.formats.trec_fast", "read_lean_run", "load inputs"),
    # _Reader._table and _columns run in the reading thread, beside the rest: their time overlaps their siblings'
    ("read_csv of a block, in the reading thread (_table)", "rankgate.core.formats.trec_fast", "_Reader._table",
     "read run, fast path (read_lean_run)"),
    ("columns of a block, in the reading thread (queries, hash, judged lookup)", "rankgate.core.formats.trec_fast",
     "_Reader._columns",
     "read run, fast path (read_lean_run)"),
    ("hash (query, document) (hash_strings)", "rankgate.core.formats.trec_fast", "hash_strings",
     "columns of a block, in the reading thread (queries, hash, judged lookup)"),
    ("partition by query on disk (_spill)", "rankgate.core.formats.trec_fast", "_spill",
     "read run, fast path (read_lean_run)"),
    ("settle a scattered file's rows, no sort (_settle_unsorted)", "rankgate.core.formats.trec_fast",
     "_settle_unsorted", "read run, fast path (read_lean_run)"),
    ("duplicate check, any order (_unsorted_duplicates)", "rankgate.core.formats.trec_fast", "_unsorted_duplicates",
     "settle a scattered file's rows, no sort (_settle_unsorted)"),
    ("ties with judged rows (_tie_ranks)", "rankgate.core.formats.trec_fast", "_tie_ranks",
     "settle a scattered file's rows, no sort (_settle_unsorted)"),
    ("settle complete queries (_Tally.settle)", "rankgate.core.formats.trec_fast", "_Tally.settle",
     "read run, fast path (read_lean_run)"),
    ("duplicate check (_duplicates)", "rankgate.core.formats.trec_fast", "_duplicates",
     "settle complete queries (_Tally.settle)"),
    ("trec_eval order (_trec_order)", "rankgate.core.formats.trec_fast", "_trec_order",
     "settle complete queries (_Tally.settle)"),
    # the general path (core/formats/trec.py)
    ("read run, general path (read_trec_run)", "rankgate.core.formats.trec", "read_trec_run", "load inputs"),
    ("regular blocks (_fast_block)", "rankgate.core.formats.trec", "_fast_block",
     "read run, general path (read_trec_run)"),
    ("irregular blocks (_slow_block)", "rankgate.core.formats.trec", "_slow_block",
     "read run, general path (read_trec_run)"),
    ("validate", "rankgate.cli.evaluate", "check", "score command"),
    ("evaluate", "rankgate.core.engine", "evaluate", "score command"),
    ("prepare, fast path (prepare_lean)", "rankgate.core.engine", "prepare_lean", "evaluate"),
    ("prepare, general path (sort + join)", "rankgate.core.engine", "prepare", "evaluate"),
    ("sort (sort_run)", "rankgate.core.model", "sort_run", "prepare, general path (sort + join)"),
    ("doc byte order (Interner.order)", "rankgate.core.model", "Interner.order", "sort (sort_run)"),
    ("measures (per_query)", "rankgate.core.engine", "per_query", "evaluate"),
    ("output", "rankgate.cli.evaluate", "emit", "score command"),
]


class Timers:
    def __init__(self):
        self.total: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # CPU seconds of the calling thread (steadier than wall on a busy machine)
        self.calls: dict[str, int] = {}
        self.missing: list[str] = []

    def wrap(self, label, fn):
        @functools.wraps(fn)
        def timed(*a, **kw):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                self.total[label] = self.total.get(label, 0.0) + time.perf_counter() - t
                self.cpu[label] = self.cpu.get(label, 0.0) + time.thread_time() - c
                self.calls[label] = self.calls.get(label, 0) + 1
        return timed

    def install(self):
        for label, mod_name, attr, _ in STAGES:
            try:
                mod = importlib.import_module(mod_name)
                owner, name = mod, attr
                if "." in attr:
                    cls, name = attr.split(".")
                    owner = getattr(mod, cls)
                fn = getattr(owner, name)
            except (ImportError, AttributeError):
                self.missing.append(f"{mod_name}.{attr}")
                continue
            timed = self.wrap(label, fn)
            setattr(owner, name, timed)
            # also where another module imported it by name
            for m in list(sys.modules.values()):
                if getattr(m, "__name__", "").startswith("rankgate") and m is not owner:
                    for k, v in list(vars(m).items()):
                        if v is fn:
                            setattr(m, k, timed)


def score_argv(qrels: Path, run: Path) -> list[str]:
    return ["score", "--qrels", str(qrels), "--runs", str(run), "--format", "trec",
            "-m", "AP,ndcg_cut_10,RR@10,R@100,P@10", "--missing-queries", "zero", "--short-rankings", "allow"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="msmarco", choices=sorted(BENCHES))
    ap.add_argument("--queries", type=int, help="use the smaller inputs of `gen_data.py --queries N`")
    ap.add_argument("--profiler", choices=("timers", "cprofile", "pyinstrument"), default="timers")
    ap.add_argument("--top", type=int, default=25, help="functions to list with cprofile")
    ap.add_argument("--html", type=Path, help="pyinstrument: write the HTML report here")
    ap.add_argument("--general", action="store_true", help="profile the general path (RANKGATE_FAST=0)")
    args = ap.parse_args(argv)
    if args.general:
        import os

        os.environ["RANKGATE_FAST"] = "0"
    folder, run_name = BENCHES[args.bench]
    if args.queries:
        folder = f"{folder}-{args.queries}"
    qrels, run = DATA / folder / "qrels.txt", DATA / folder / run_name

    t_import = time.perf_counter()
    from rankgate import cli  # the import cost of the CLI path
    import_s = time.perf_counter() - t_import

    timers = Timers()
    timers.install()
    prof = None
    if args.profiler == "cprofile":
        import cProfile

        prof = cProfile.Profile()
    elif args.profiler == "pyinstrument":
        from pyinstrument import Profiler

        prof = Profiler(interval=0.001)
    buf = io.StringIO()
    t, cpu = time.perf_counter(), time.process_time()
    if prof:
        prof.enable() if args.profiler == "cprofile" else prof.start()
    with redirect_stdout(buf):
        code = cli.main(score_argv(qrels, run))
    if prof:
        prof.disable() if args.profiler == "cprofile" else prof.stop()
    total, cpu = time.perf_counter() - t, time.process_time() - cpu
    timers.total["score command"], timers.cpu["score command"] = total, cpu
    if code not in (0, None):
        print(f"rankgate exited {code}", file=sys.stderr)

    children: dict[str, list[str]] = {}
    for label, _, _, parent in STAGES:
        children.setdefault(parent, []).append(label)
    path = "general path" if args.general else "fast path when it applies"
    print(f"rankgate score on {run.relative_to(HERE)} ({path}; {args.profiler}; seconds, inclusive: wall, and CPU "
          "of the thread that ran it; the command's CPU is both threads')")
    print(f"  {'import rankgate.cli':45s} {import_s:7.2f}")

    def show(label, depth):
        if label not in timers.total:
            return
        t, c = timers.total[label], timers.cpu[label]
        kids = [k for k in children.get(label, []) if k in timers.total]
        own = c - sum(timers.cpu[k] for k in kids)
        calls = timers.calls.get(label, 1)
        extra = f"  (self cpu {own:.2f})" if kids else ""
        print(f"  {'  ' * depth + label:45s} {t:6.2f} wall {c:6.2f} cpu  x{calls}{extra}")
        for k in kids:
            show(k, depth + 1)

    show("score command", 0)
    if timers.missing:
        print("  not found (renamed?): " + ", ".join(timers.missing))
    if args.profiler == "cprofile":
        import pstats

        print()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    elif args.profiler == "pyinstrument":
        print(prof.output_text(unicode=True, color=False, show_all=False))
        if args.html:
            args.html.write_text(prof.output_html())
    return 0


if __name__ == "__main__":
    sys.exit(main())
