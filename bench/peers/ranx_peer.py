"""Peer: ranx, reading the TREC files itself (Qrels/Run.from_file, kind="trec").

    python ranx_peer.py QRELS RUN   -> JSON means of AP, nDCG@10, RR@10, R@100, P@10

ranx's "ndcg" uses the grade as gain (as trec_eval does; "ndcg_burges" would be
2^grade - 1). ranx orders tied scores by its own sort, not by doc id descending
as trec_eval does, so cut-off measures can differ slightly on tied rows.
"""

import json
import sys

from ranx import Qrels, Run, evaluate


def main(qrels_path, run_path):
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    res = evaluate(qrels, run, ["map", "ndcg@10", "mrr@10", "recall@100", "precision@10"])
    out = {"AP": res["map"], "nDCG@10": res["ndcg@10"], "RR@10": res["mrr@10"],
           "R@100": res["recall@100"], "P@10": res["precision@10"]}
    print(json.dumps({k: float(v) for k, v in out.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
