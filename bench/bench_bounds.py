"""What the gate's stability report (core/bounds.py) costs: the gate with and without it, on generated data.

    .venv/bin/python bench/bench_bounds.py                      # 1,000 and 10,000 queries x 100 documents
    .venv/bin/python bench/bench_bounds.py --queries 500 --depth 1000 --measures AP

Each query has a few judged documents (some relevant) scattered over two runs that share most of their
top ranks; about half of each run's top k is unjudged. Prints wall and CPU seconds (this process: user +
system) for pair + decide + review queue (the gate without stability), the stability report alone, and
the number of checks that could flip; and the load average before and after (the machine may be shared).
`rankgate gate --no-stability` (policy `stability = false`) skips the report.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from rankgate.core.bounds import stability
from rankgate.core.compare import pair
from rankgate.core.decision import decide, extra_measures, gate_measures
from rankgate.core.measures import parse_measures
from rankgate.core.model import Catalog, Qrels, Run
from rankgate.core.policy import Policy
from rankgate.core.queue import gate_queue


def make(nq: int, depth: int, seed: int) -> tuple[Qrels, Run, Run]:
    rng = np.random.default_rng(seed)
    cat = Catalog()
    pool = 3 * depth
    for q in range(nq):
        cat.queries.code(f"q{q:06d}")
    for d in range(pool):
        cat.docs.code(f"d{d:06d}")
    jq, jd, jg = [], [], []
    for q in range(nq):
        docs = rng.choice(depth, size=8, replace=False)  # judged among the top ranks of the shared pool
        jq += [q] * 8
        jd += docs.tolist()
        jg += rng.choice([0, 0, 1, 2, 3], size=8).tolist()
    qrels = Qrels("bench", cat, np.array(jq, np.int32), np.array(jd, np.int32), np.array(jg, np.int64),
                  list(range(nq)))

    def run(name: str, noise: float) -> Run:
        q = np.repeat(np.arange(nq, dtype=np.int32), depth)
        base = np.tile(np.arange(depth), nq)
        doc = np.empty(nq * depth, np.int32)
        for i in range(nq):
            doc[i * depth:(i + 1) * depth] = rng.permutation(pool)[:depth] if noise > 1 else \
                np.argsort(np.arange(depth) + rng.normal(0, noise * depth, depth))
        score = (depth - base).astype(np.float64)
        return Run(name, name, cat, q, doc, score, np.arange(nq * depth, dtype=np.int64))

    return qrels, run("baseline", 0.05), run("candidate", 0.08)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", default="1000,10000")
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--measures", default="nDCG@10")
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args(argv)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for nq in [int(x) for x in args.queries.split(",")]:
        qrels, b, c = make(nq, args.depth, seed=nq)
        policy = Policy(k=args.k, measures=parse_measures(args.measures), resamples=args.resamples)
        ms = list(dict.fromkeys(gate_measures(args.k) + extra_measures(policy)))
        t0, c0 = time.perf_counter(), cpu()
        p = pair(qrels, b, c, k=args.k, measures=ms, rel_level=1)
        dec = decide(policy, p)
        queue = gate_queue(p, qrels, policy, decision=dec)
        t1, c1 = time.perf_counter(), cpu()
        st = stability(p, policy, dec, qrels.catalog.docs.names, order=queue)
        t2, c2 = time.perf_counter(), cpu()
        flips = [x.name for x in st.checks if not x.stable]
        print(f"{nq:>7} queries x {args.depth}: gate + queue {t1 - t0:6.2f} s (CPU {c1 - c0:5.2f}), stability "
              f"{t2 - t1:6.2f} s (CPU {c2 - c1:5.2f}); {len(queue)} unjudged in the top {args.k}; could flip: "
              f"{', '.join(flips) or 'none'} ({len(st.to_judge)} documents to judge)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


def cpu() -> float:
    """CPU seconds of this process so far (user + system)."""
    t = os.times()
    return t.user + t.system


if __name__ == "__main__":
    raise SystemExit(main())
