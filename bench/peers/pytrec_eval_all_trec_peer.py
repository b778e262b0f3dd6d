"""Peer: pytrec-eval-terrier (trec_eval 9.0.7 inside) asked for every measure it has, as `-m all_trec`.

    python pytrec_eval_all_trec_peer.py QRELS RUN   -> trec_eval-style summary lines (mean of each measure)

Input parsed in Python (`line.split()`, dicts), as its users do.
"""

import math
import sys
from collections import defaultdict

import pytrec_eval


def main(qrels_path, run_path):
    qrels = defaultdict(dict)
    with open(qrels_path) as f:
        for line in f:
            q, _, d, g = line.split()
            qrels[q][d] = int(g)
    run = defaultdict(dict)
    with open(run_path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run[q][d] = float(s)
    per_q = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures).evaluate(run)
    names = sorted(next(iter(per_q.values())))
    for name in names:  # summarised as trec_eval does: counts summed, gm_* (logs here) as geometric means
        total = sum(v[name] for v in per_q.values())
        if name.startswith("num_"):
            print(f"{name:<22}\tall\t{int(total)}")
        elif name.startswith("gm_"):
            print(f"{name:<22}\tall\t{math.exp(total / len(per_q)):.4f}")
        else:
            print(f"{name:<22}\tall\t{total / len(per_q):.4f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
