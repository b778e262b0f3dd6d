"""Memory of `rankgate score` on a large JSONL run (the general reader streams it line by line).

    .venv/bin/python bench/bench_jsonl.py                 # a 540 MB run
    .venv/bin/python bench/bench_jsonl.py --mb 100 --src /work/main/src   # compare another checkout

Writes `data/jsonl-N/` (N MB): qrels for Q queries (3 judged documents each) and a JSONL run of
1000 {"doc": ..., "score": ...} objects per query, MS MARCO-like IDs, until the file reaches N MB.
Then runs `rankgate score` once (RANKGATE_FAST does not apply to JSONL) and prints the file size,
the wall time and the peak resident memory of the process (ru_maxrss).
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
    a = ap.parse_args()
    qrels, run = build(a.mb)
    env = dict(os.environ, PYTHONPATH=a.src)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "rankgate", "score", "--qrels", str(qrels), "--runs", str(run),
                        "-m", "nDCG@10", "--k", "10"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    size = run.stat().st_size / (1 << 20)
    print(f"JSONL run {size:.0f} MB ({a.src}): exit {p.returncode}, {wall:.1f} s, peak RSS {peak:.0f} MB "
          f"({peak / size:.2f}x the file)")
    if p.returncode:
        print(p.stderr[-2000:])


if __name__ == "__main__":
    main()
