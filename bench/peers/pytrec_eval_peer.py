"""Peer: pytrec-eval-terrier, with its input parsed in Python (as its users do).

    python pytrec_eval_peer.py QRELS RUN   -> JSON means of AP, nDCG@10, RR@10, R@100, P@10

trec_eval (and so pytrec_eval) has no recip_rank cutoff: RR@10 is recip_rank on
the run cut to each query's top 10 in trec_eval order (score desc, doc id desc).
Queries are those in both qrels and run (pytrec_eval has no -c); the benchmarks
retrieve for every judged query, so that is every qrels query.
"""

import heapq
import json
import sys
from collections import defaultdict

import pytrec_eval


def read_qrels(path):
    qrels = defaultdict(dict)
    with open(path) as f:
        for line in f:
            q, _, d, g = line.split()
            qrels[q][d] = int(g)
    return qrels


def read_run(path):
    run = defaultdict(dict)
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run[q][d] = float(s)
    return run


def main(qrels_path, run_path):
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recall.100", "P.10"})
    per_q = ev.evaluate(run)
    top10 = {q: dict(heapq.nlargest(10, docs.items(), key=lambda kv: (kv[1], kv[0]))) for q, docs in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    n = len(per_q)
    out = {
        "AP": sum(v["map"] for v in per_q.values()) / n,
        "nDCG@10": sum(v["ndcg_cut_10"] for v in per_q.values()) / n,
        "RR@10": sum(v["recip_rank"] for v in rr.values()) / len(rr),
        "R@100": sum(v["recall_100"] for v in per_q.values()) / n,
        "P@10": sum(v["P_10"] for v in per_q.values()) / n,
        "queries": n,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:3])
