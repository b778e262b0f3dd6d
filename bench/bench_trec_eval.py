"""`rankgate trec_eval -m all_trec` against trec_eval, whole process, on the 7k x 1000 benchmark.

    python bench/bench_trec_eval.py                      # bench/data/msmarco (made by gen_data.py if missing)
    python bench/bench_trec_eval.py --rounds 5 --trec-eval /usr/local/bin/trec_eval

Tools, each a fresh process, in turn, after one untimed warm-up round:
- rankgate: `rankgate trec_eval -m all_trec QRELS RUN` (pyarrow's compiled reader keeps only the judged rows);
- rankgate-bytes: the same with RANKGATE_FAST=0 (the byte reader that keeps every row, as for odd files);
- pytrec_eval: pytrec-eval-terrier (trec_eval 9.0.7 compiled in) asked for all its measures, input parsed
  in Python (bench/peers/pytrec_eval_all_trec_peer.py);
- trec_eval: the C program, when --trec-eval names one (Debian has no package of it; none was on the
  machine where the figures in bench/README.md were taken).
Reported: median wall and CPU seconds (user + system, from wait4), peak RSS, and how many summary
values rankgate and each peer print alike (to 1e-4; pytrec_eval is 9.0.7, so iprec_at_recall and
11pt_avg may differ, and it has no rbp or unj).
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

from bench_score import run_once  # noqa: E402


def rankgate(python: str) -> list[str]:
    return [python, "-m", "rankgate", "trec_eval", "-m", "all_trec"]


def summary(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        if qid == "all":
            out[name.strip()] = value
    return out


def agree(a: dict[str, str], b: dict[str, str]) -> tuple[int, int]:
    both = [k for k in a if k in b and k != "runid"]
    same = sum(1 for k in both if abs(float(a[k]) - float(b[k])) <= 1e-4 + 1e-9)
    return same, len(both)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=HERE / "data" / "msmarco")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the python that runs rankgate and the peer")
    ap.add_argument("--trec-eval", help="a C trec_eval to time too")
    ap.add_argument("--skip", action="append", default=[], help="leave a tool out (rankgate-bytes is slow)")
    args = ap.parse_args(argv)
    qrels, run = args.data / "qrels.txt", args.data / "run.txt"
    if not run.exists():
        subprocess.run([args.python, str(HERE / "gen_data.py"), "--only", "msmarco"], check=True)
    tools = {"rankgate": (rankgate(args.python) + [str(qrels), str(run)], None),
             "rankgate-bytes": (rankgate(args.python) + [str(qrels), str(run)], {"RANKGATE_FAST": "0"}),
             "pytrec_eval": ([args.python, str(HERE / "peers" / "pytrec_eval_all_trec_peer.py"), str(qrels),
                              str(run)], None)}
    te = args.trec_eval or shutil.which("trec_eval")
    if te:
        tools["trec_eval"] = ([te, "-m", "all_trec", str(qrels), str(run)], None)
    else:
        print("no C trec_eval (pass --trec-eval PATH): timing pytrec_eval instead", file=sys.stderr)
    tools = {k: v for k, v in tools.items() if k not in args.skip}
    times: dict[str, list] = {k: [] for k in tools}
    texts = {}
    for r in range(args.rounds + 1):
        for name, (cmd, env) in tools.items():
            wall, cpu, rss, text = run_once(cmd, env)
            texts[name] = text
            if r:
                times[name].append((wall, cpu, rss))
        print(f"round {r} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    ref = summary(texts["rankgate"])
    # pytrec_eval is trec_eval 9.0.7: its figures are compared with rankgate's --trec-eval-version 9 too
    ref9 = summary(run_once(rankgate(args.python)[:3] + ["--trec-eval-version", "9", "-m", "all_trec", str(qrels),
                                                         str(run)])[3])
    print(f"{args.data.name}: {qrels.name} x {run.name}, {args.rounds} rounds, load {os.getloadavg()[0]:.1f}")
    print("| tool | median wall s | median CPU s | peak MB | summary values alike (rankgate 10 / 9) |")
    print("|---|---:|---:|---:|---|")
    for name, ts in times.items():
        same, n = agree(ref, summary(texts[name]))
        same9, n9 = agree(ref9, summary(texts[name]))
        print(f"| {name} | {statistics.median(t[0] for t in ts):.2f} | {statistics.median(t[1] for t in ts):.2f} "
              f"| {max(t[2] for t in ts):.0f} | {same} of {n} / {same9} of {n9} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
