"""Peer for `rankgate compare`: ranx's `compare`, the same job (two runs, five measures, a paired test each).

    python ranx_compare_peer.py QRELS BASELINE CANDIDATE [RESAMPLES]  -> JSON: each measure's two means

ranx reads the TREC files itself (Qrels/Run.from_file, kind="trec") and runs Fisher's randomization test with
RESAMPLES permutations (default 10,000, as rankgate's `--resamples`) on each measure: hit_rate@10, precision@10,
recall@10, mrr@10, ndcg@10 (rankgate's Success@10, P@10, R@10, RR@10, nDCG@10). rankgate also computes a
percentile bootstrap interval and an effect size for each measure, which ranx does not: this peer does less.
"""

import json
import sys

from ranx import Qrels, Run, compare

METRICS = {"Success@10": "hit_rate@10", "P@10": "precision@10", "R@10": "recall@10", "RR@10": "mrr@10",
           "nDCG@10": "ndcg@10"}


def main(qrels_path, base_path, cand_path, resamples="10000"):
    qrels = Qrels.from_file(qrels_path, kind="trec")
    base = Run.from_file(base_path, kind="trec", name="base")
    cand = Run.from_file(cand_path, kind="trec", name="cand")
    report = compare(qrels, runs=[base, cand], metrics=list(METRICS.values()), stat_test="fisher",
                     n_permutations=int(resamples), random_seed=0)
    out = {m: [float(report.results[r][name]) for r in ("base", "cand")] for m, name in METRICS.items()}
    out["p_values"] = {m: float(report.comparisons["base", "cand"][name]["p_value"]) for m, name in METRICS.items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:5])
