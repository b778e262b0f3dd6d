"""Memory of `rankgate score` (or gate, compare, validate) on a large JSONL run.

    .venv/bin/python bench/bench_jsonl.py                 # a 540 MB run, score
    .venv/bin/python bench/bench_jsonl.py --command gate  # the gate: the run as baseline and candidate (its
                                                          # review queue keeps each ranking's top unjudged rows)
    .venv/bin/python bench/bench_jsonl.py --general       # RANKGATE_FAST=0: the general reader, every row
    .venv/bin/python bench/bench_jsonl.py --mb 100 --src /work/main/src   # compare another checkout

Writes `data/jsonl-N/` (N MB): qrels for Q queries (3 judged documents each) and a JSONL run of
1000 {"doc": ..., "score": ...} objects per query, MS MARCO-like IDs, until the file reaches N MB.
Then runs the command once and prints the file size, the wall and CPU seconds (user + system), the
peak resident memory of the process (ru_maxrss) and the load average before and after. Commands read a
JSONL run lean (core/formats/jsonl_lean.py: only judged rows kept) unless RANKGATE_FAST=0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"


def build(mb: int) -> tuple[Path, Path]:
    folder = DATA / f"jsonl-{mb}"
    qrels, run = folder / "qrels.trec", folder / "run.jsonl"
    if run.exists() and qrels.exists():
        return qrels, run
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    target = mb << 20
    size = 0
    with open(run, "w") as r, open(qrels, "w") as q:
        r.write(json.dumps({"meta": {"name": "bench"}}) + "\n")
        i = 0
        while size < target:
            docs = rng.sample(range(8_841_823), 1000)
            ranking = [{"doc": str(d), "score": round(30 - j * 0.01, 4)} for j, d in enumerate(docs)]
            line = json.dumps({"query": f"q{i}", "ranking": ranking, "latency_ms": 12.5}) + "\n"
            r.write(line)
            size += len(line)
            for n, d in enumerate(docs[:2] + [rng.randrange(8_841_823)]):
                q.write(f"q{i} 0 {d} {rng.randint(1 if n == 0 else 0, 3)}\n")
            i += 1
    return qrels, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=540)
    ap.add_argument("--src", default=str(HERE.parent / "src"), help="the rankgate source tree to measure")
    ap.add_argument("--command", choices=("score", "gate", "compare", "validate"), default="score")
    ap.add_argument("--general", action="store_true", help="RANKGATE_FAST=0: every row read (the general reader)")
    a = ap.parse_args()
    qrels, run = build(a.mb)
    env = dict(os.environ, PYTHONPATH=a.src)
    if a.general:
        env["RANKGATE_FAST"] = "0"
    args = {"score": ["-m", "nDCG@10"], "gate": ["--baseline", "a", "--candidate", "b", "--missing-queries", "zero"],
            "compare": ["--baseline", "a"], "validate": []}
    two = a.command in ("gate", "compare")  # the same file twice, as baseline a and candidate b
    runs = ["--runs", f"a={run}", "--runs", f"b={run}"] if two else ["--runs", str(run)]
    load = os.getloadavg()[0]
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "rankgate", a.command, "--qrels", str(qrels), *runs, "--k", "10",
                        *args[a.command]], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = use.ru_maxrss / 1024
    size = run.stat().st_size / (1 << 20)
    print(f"rankgate {a.command}{' (RANKGATE_FAST=0)' if a.general else ''}, JSONL run {size:.0f} MB ({a.src}): "
          f"exit {p.returncode}, {wall:.1f} s wall, {use.ru_utime + use.ru_stime:.1f} s CPU, peak RSS {peak:.0f} MB "
          f"({peak / size:.2f}x the file); load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    if p.returncode not in (0, 3):
        print(p.stderr[-2000:])


if __name__ == "__main__":
    main()
