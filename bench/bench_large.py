"""Memory of `rankgate score` as the run file grows: a few GB in bounded memory.

    .venv/bin/python bench/bench_large.py              # 1, 4 and 12 copies of the msmarco run
    .venv/bin/python bench/bench_large.py --copies 1,12 --rounds 3 --shuffled

Builds `data/large-N/` from `data/msmarco/` (run `gen_data.py --only msmarco`
first): N copies of the run and qrels, copy c with its query IDs prefixed `cC_`,
so the file has N x 7,000 queries and N x 7,000,000 lines (12 copies: 3.0 GB).
Then times `rankgate score` on each (whole process, median of the rounds) and
reports peak resident memory. The lines of each query are together, as
retrievers write them, so the fast path keeps only a few blocks and the judged
rows: peak memory should stay flat while the file grows. `--shuffled` adds the
same for a file whose lines are in random order (read whole: grows ~40 B a line).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_score import DATA, parse_rankgate, rankgate_cmd, run_once  # noqa: E402


def build(copies: int, shuffled: bool) -> Path:
    src = DATA / "msmarco"
    name = "run.shuffled.txt" if shuffled else "run.txt"
    out = DATA / f"large-{copies}"
    out.mkdir(parents=True, exist_ok=True)
    run, qrels = out / name, out / "qrels.txt"
    if not run.exists():
        data = (src / name).read_bytes()
        tmp = run.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            for c in range(copies):
                p = f"c{c}_".encode()
                f.write(p + data[:-1].replace(b"\n", b"\n" + p) + b"\n")
        tmp.rename(run)
    if not qrels.exists():
        data = (src / "qrels.txt").read_bytes()
        qrels.write_bytes(b"".join(f"c{c}_".encode() + data[:-1].replace(b"\n", b"\nc%d_" % c) + b"\n"
                                   for c in range(copies)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", default="1,4,12", help="comma-separated copy counts (default 1,4,12)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shuffled", action="store_true", help="also the shuffled run (read whole)")
    ap.add_argument("--rankgate", nargs="+", default=[str(Path(sys.executable).parent / "rankgate")])
    ap.add_argument("--keep", action="store_true", help="keep the generated files (they are large)")
    ap.add_argument("--build", type=int, help=argparse.SUPPRESS)  # internal: build one input and exit
    args = ap.parse_args(argv)
    if args.build is not None:
        build(args.build, args.shuffled)
        return 0
    if not (DATA / "msmarco" / "run.txt").exists():
        print("first: python bench/gen_data.py --only msmarco", file=sys.stderr)
        return 2
    print("| run file | lines | GB | median s | s per M lines | peak MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for shuffled in (False, True) if args.shuffled else (False,):
        for copies in [int(c) for c in args.copies.split(",")]:
            # built by a child process: a child started from a big parent reports the parent's
            # memory as its own peak (ru_maxrss counts the pages it shared before exec)
            subprocess.run([sys.executable, __file__, "--build", str(copies)] + ["--shuffled"] * shuffled,
                           check=True)
            folder = DATA / f"large-{copies}"
            run = folder / ("run.shuffled.txt" if shuffled else "run.txt")
            walls, peaks, macro = [], [], None
            for _ in range(args.rounds):
                wall, _cpu, peak, out = run_once(rankgate_cmd(args, folder / "qrels.txt", run))
                walls.append(wall)
                peaks.append(peak)
                macro = parse_rankgate(out)
            lines = copies * 7_000_000
            med = statistics.median(walls)
            print(f"| {run.parent.name}/{run.name} | {lines:,} | {run.stat().st_size / 1e9:.2f} | {med:.2f} | "
                  f"{med / lines * 1e6:.3f} | {max(peaks):.0f} |", flush=True)
            print(f"  macro: {macro}", file=sys.stderr)
            if not args.keep:
                run.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
