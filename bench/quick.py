"""Check the speed claims on your own machine in about a minute: a dense workload, rankgate against the
read floor, pytrec_eval and trec_eval, side by side, with the load average before and after.

    python bench/quick.py                      # 2,000 queries x 1,000 (2M lines), 100 judged a query
    python bench/quick.py --queries 500 --rounds 5 --peer-python bench/.venv-peers/bin/python

Generates bench/data/quick-<queries>x<depth>-<judged>/ once (gen_data.py's pooled qrels: most judged
documents from the top of the run, some it did not retrieve; string document IDs), then runs each tool
as a fresh process, in turn, `--rounds` times (after one untimed warm-up) and prints the medians:

    rankgate / floor       rankgate's wall time over pyarrow reading the run's three columns (target <= 2)
    pytrec_eval / rankgate how many times longer pytrec_eval takes (parsing in Python, then its C evaluator)
    trec_eval / rankgate   the same for a `trec_eval` binary on PATH (or --trec-eval), when there is one

A ratio measured on a busy machine says little: look at the load average beside it (bench/README.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gen_data  # noqa: E402
from bench_score import DEFAULT_PEER_PYTHON, PEERS, parse_peer, parse_rankgate, run_once  # noqa: E402

MEASURES = "AP,ndcg_cut_10,RR@10,R@100,P@10"
TREC_EVAL_MEASURES = ["-m", "map", "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "P.10", "-m", "recip_rank"]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def commands(args, qrels: Path, run: Path) -> dict[str, list[str]]:
    rankgate = Path(sys.executable).parent / "rankgate"
    base = [str(rankgate)] if rankgate.exists() else [sys.executable, "-m", "rankgate"]
    cmds = {"rankgate": [*base, "score", "--qrels", str(qrels), "--runs", str(run), "--format", "trec",
                         "-m", MEASURES, "--missing-queries", "zero", "--short-rankings", "allow"],
            "floor": [sys.executable, str(PEERS / "read_floor.py"), str(qrels), str(run)]}
    if args.jobs:
        cmds["rankgate"] += ["--jobs", str(args.jobs)]
    peer = Path(args.peer_python)
    if subprocess.run([str(peer), "-c", "import pytrec_eval"], capture_output=True).returncode == 0:
        cmds["pytrec_eval"] = [str(peer), str(PEERS / "pytrec_eval_peer.py"), str(qrels), str(run)]
    else:
        print(f"note: pytrec_eval is not installed in {peer}: skipped (--peer-python)")
    trec_eval = args.trec_eval or shutil.which("trec_eval")
    if trec_eval:
        cmds["trec_eval"] = [trec_eval, *TREC_EVAL_MEASURES, str(qrels), str(run)]
    else:
        print("note: no trec_eval binary on PATH: skipped (--trec-eval PATH)")
    return cmds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2_000)
    ap.add_argument("--depth", type=int, default=1_000)
    ap.add_argument("--judged-per-query", type=int, default=gen_data.JUDGED_PER_QUERY)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, help="rankgate's --jobs (default: its own, every core)")
    ap.add_argument("--peer-python", default=str(DEFAULT_PEER_PYTHON if DEFAULT_PEER_PYTHON.exists()
                                                 else sys.executable))
    ap.add_argument("--trec-eval", help="a trec_eval binary (default: the one on PATH)")
    args = ap.parse_args(argv)

    folder = gen_data.DATA / f"quick-{args.queries}x{args.depth}-{args.judged_per_query}"
    gen_data.write(folder, args.queries, args.depth, seed=36, shuffled=False, doc_prefix="doc_",
                   per_query=args.judged_per_query)
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    cmds = commands(args, qrels, run)
    before = load()
    print(f"{args.queries:,} queries x {args.depth:,} ({args.queries * args.depth:,} lines), "
          f"{args.judged_per_query} judged a query; {os.cpu_count()} cores; load average before: {before}")
    wall: dict[str, list[float]] = {t: [] for t in cmds}
    cpu: dict[str, list[float]] = {t: [] for t in cmds}
    peak: dict[str, float] = {t: 0.0 for t in cmds}
    means = {}
    for r in range(-1, args.rounds):
        for tool, cmd in cmds.items():
            w, c, mb, out = run_once(cmd)
            if r < 0:
                if tool == "rankgate":
                    means[tool] = parse_rankgate(out)
                elif tool == "pytrec_eval":
                    means[tool] = parse_peer(out)
                continue
            wall[tool].append(w)
            cpu[tool].append(c)
            peak[tool] = max(peak[tool], mb)
    after = load()
    med = {t: statistics.median(v) for t, v in wall.items()}
    print(f"\n| tool | median wall s | median CPU s | peak MB |\n|---|---:|---:|---:|")
    for t in cmds:
        print(f"| {t} | {med[t]:.2f} | {statistics.median(cpu[t]):.2f} | {peak[t]:.0f} |")
    cpu_med = {t: statistics.median(v) for t, v in cpu.items()}
    ratios = [f"rankgate / floor {med['rankgate'] / med['floor']:.2f}x wall (target at most 2), "
              f"{cpu_med['rankgate'] / cpu_med['floor']:.2f}x CPU (the one to trust on a busy machine)"]
    for peer in ("pytrec_eval", "trec_eval"):
        if peer in med:
            ratios.append(f"{peer} / rankgate {med[peer] / med['rankgate']:.2f}x wall")
    print("\n" + "   ".join(ratios))
    if "pytrec_eval" in means:
        off = {m: (means["rankgate"].get(m), v) for m, v in means["pytrec_eval"].items()
               if m != "RR@10" and abs(means["rankgate"].get(m, -1) - v) > 1e-4}
        print("pytrec_eval's means agree with rankgate's to 1e-4" if not off else f"means differ: {off}")
    print(f"load average before: {before}; after: {after}" +
          ("" if float(after.split()[0]) < 0.5 * (os.cpu_count() or 1) else
           "  (a busy machine: the ratios carry its noise)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
