"""Peer: ir_measures, reading the TREC files itself (read_trec_qrels / read_trec_run).

    python ir_measures_peer.py QRELS RUN   -> JSON means of AP, nDCG@10, RR@10, R@100, P@10

ir_measures picks a provider per measure: pytrec_eval for AP, nDCG@10, R@100 and
P@10; its msmarco provider for RR@10 (pytrec_eval has no RR cut-off).
"""

import json
import sys

import ir_measures
from ir_measures import AP, P, R, RR, nDCG


def main(qrels_path, run_path):
    measures = [AP, nDCG @ 10, RR @ 10, R @ 100, P @ 10]
    res = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(qrels_path),
                                     ir_measures.read_trec_run(run_path))
    names = {AP: "AP", nDCG @ 10: "nDCG@10", RR @ 10: "RR@10", R @ 100: "R@100", P @ 10: "P@10"}
    print(json.dumps({names[m]: float(v) for m, v in res.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
