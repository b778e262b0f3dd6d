"""Generate the score benchmarks' TREC inputs, deterministically (seeded numpy).

    python bench/gen_data.py                 # all of them, into bench/data/
    python bench/gen_data.py --only msmarco  # one benchmark
    python bench/gen_data.py --queries 700   # a smaller variant (for trying things)

Benchmarks (each a folder under bench/data/ with qrels.txt, run.txt, params.json):

- msmarco: MS MARCO dev sized, 7,000 queries x 1,000 documents (7M run lines),
  plus run.shuffled.txt, the same lines in random order (the sort path).
- wide: 100,000 queries x 100 documents (10M run lines).
- long: msmarco's shape with 25-byte document IDs (`msmarco_passage_0_0012345`),
  grouped (run.txt) and shuffled (run.shuffled.txt): the hash and lookup cost of long IDs.

Runs are `qid Q0 docid rank score tag`, one block per query in a random query
order, scores descending with some exact ties (broken by trec_eval on the doc id).
Doc ids are numeric passage ids from an 8.8M space, qids numeric. Qrels are
`qid 0 docid grade`, about 1.1 relevant documents per query (grades 1-3, more
1s than 3s) and a few judged non-relevant (grade 0); about two thirds of the
relevant documents are retrieved, mostly near the top. Files are regenerated
only when missing or made with other parameters.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DOC_SPACE = 8_841_823  # MS MARCO passage collection size
QID_SPACE = 1_200_000
TAG = "bench"

BENCHMARKS = {
    "msmarco": dict(queries=7_000, depth=1_000, seed=7, shuffled=True),
    "wide": dict(queries=100_000, depth=100, seed=100, shuffled=False),
    "long": dict(queries=7_000, depth=1_000, seed=25, shuffled=True, doc_prefix="msmarco_passage_0_"),
}


def _unique_per_query(rng: np.random.Generator, ids: np.ndarray) -> np.ndarray:
    """Redraw ids until each row of a (queries, depth) array has distinct values."""
    nq, depth = ids.shape
    while True:
        srt = np.sort(ids, axis=1)
        dup_rows = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
        if not len(dup_rows):
            return ids
        for r in dup_rows.tolist():
            row = ids[r]
            _, first = np.unique(row, return_index=True)
            again = np.ones(depth, bool)
            again[first] = False
            row[again] = rng.integers(0, DOC_SPACE, int(again.sum()))


def make(queries: int, depth: int, seed: int):
    """(qids, docs (nq, depth), scores as int ten-thousandths (nq, depth), qrels rows)."""
    rng = np.random.default_rng(seed)
    qids = rng.choice(QID_SPACE, size=queries, replace=False)  # random query order
    docs = _unique_per_query(rng, rng.integers(0, DOC_SPACE, size=(queries, depth)))
    # Scores: a top score per query, then descending integer gaps in 1e-4 steps; one
    # gap in 50 is zero, so exact ties appear (trec_eval breaks them by doc id).
    top = rng.integers(150_000, 400_000, size=(queries, 1))
    gaps = rng.geometric(1 / 60, size=(queries, depth - 1))
    gaps[rng.random(gaps.shape) < 0.02] = 0
    scores = top - np.concatenate([np.zeros((queries, 1), np.int64), np.cumsum(gaps, axis=1)], axis=1)

    # Qrels: 1 relevant document, a second for 9% of queries, a third for 1%.
    nrel = 1 + (rng.random(queries) < 0.09) + (rng.random(queries) < 0.01)
    qrow = np.repeat(np.arange(queries), nrel)
    grade = rng.choice([1, 2, 3], size=len(qrow), p=[0.55, 0.3, 0.15])
    retrieved = rng.random(len(qrow)) < 0.66
    # Retrieved relevant documents sit mostly near the top (a geometric rank).
    rank = np.minimum(rng.geometric(0.08, size=len(qrow)) - 1, depth - 1)
    # Avoid two relevant documents of one query on the same rank: shift the later ones down.
    for i in range(1, len(qrow)):
        if qrow[i] == qrow[i - 1] and rank[i] <= rank[i - 1]:
            rank[i] = min(rank[i - 1] + 1, depth - 1)
    rel_doc = np.where(retrieved, docs[qrow, rank], -1)
    # Not retrieved: a fresh id, not in that query's run.
    missing = np.flatnonzero(~retrieved)
    while len(missing):
        cand = rng.integers(0, DOC_SPACE, size=len(missing))
        clash = (docs[qrow[missing]] == cand[:, None]).any(axis=1) | np.isin(cand, rel_doc[missing])
        rel_doc[missing[~clash]] = cand[~clash]
        missing = missing[clash]
    # A few judged non-relevant documents (grade 0), retrieved, on 5% of queries.
    zq = np.flatnonzero(rng.random(queries) < 0.05)
    zrank = rng.integers(0, depth, size=len(zq))
    zdoc = docs[zq, zrank]
    taken = set(zip(qrow.tolist(), rel_doc.tolist()))
    keep = np.array([(q, d) not in taken for q, d in zip(zq.tolist(), zdoc.tolist())], bool)
    rows_q = np.concatenate([qrow, zq[keep]])
    rows_d = np.concatenate([rel_doc, zdoc[keep]])
    rows_g = np.concatenate([grade, np.zeros(int(keep.sum()), np.int64)])
    order = np.lexsort((rows_d, rows_q))
    qrels = (qids[rows_q[order]], rows_d[order], rows_g[order])
    return qids, docs, scores, qrels


def _doc(prefix: str):
    return str if not prefix else (lambda d: f"{prefix}{d:07d}")


def _run_lines(qids, docs, scores, lo: int, hi: int, prefix: str = "") -> list[str]:
    depth = docs.shape[1]
    out = []
    ranks = range(1, depth + 1)
    name = _doc(prefix)
    for qi in range(lo, hi):
        q = str(qids[qi])
        out.extend(f"{q} Q0 {name(d)} {r} {s // 10000}.{s % 10000:04d} {TAG}\n"
                   for d, r, s in zip(docs[qi].tolist(), ranks, scores[qi].tolist()))
    return out


def write(folder: Path, queries: int, depth: int, seed: int, shuffled: bool, doc_prefix: str = "") -> None:
    params = dict(queries=queries, depth=depth, seed=seed, shuffled=shuffled, version=1)
    if doc_prefix:
        params["doc_prefix"] = doc_prefix
    stamp = folder / "params.json"
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        print(f"{folder}: up to date")
        return
    folder.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    qids, docs, scores, (qq, qd, qg) = make(queries, depth, seed)
    with open(folder / "qrels.txt", "w") as f:
        name = _doc(doc_prefix)
        f.writelines(f"{q} 0 {name(d)} {g}\n" for q, d, g in zip(qq.tolist(), qd.tolist(), qg.tolist()))
    step = max(1, 200_000 // depth)
    with open(folder / "run.txt", "w") as f:
        for lo in range(0, queries, step):
            f.writelines(_run_lines(qids, docs, scores, lo, min(lo + step, queries), doc_prefix))
    if shuffled:
        lines = _run_lines(qids, docs, scores, 0, queries, doc_prefix)
        perm = np.random.default_rng(seed + 1).permutation(len(lines))
        with open(folder / "run.shuffled.txt", "w") as f:
            f.writelines(lines[i] for i in perm.tolist())
        del lines
    stamp.write_text(json.dumps(params) + "\n")
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.0f} MB" for p in sorted(folder.glob("*.txt")))
    print(f"{folder}: {queries} queries x {depth} documents, {len(qq)} judgments ({sizes})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(BENCHMARKS), action="append", help="generate only this benchmark")
    ap.add_argument("--queries", type=int, help="override the number of queries (writes <name>-<queries>/)")
    ap.add_argument("--out", type=Path, default=DATA, help="output folder (default bench/data)")
    args = ap.parse_args(argv)
    for name in args.only or sorted(BENCHMARKS):
        spec = dict(BENCHMARKS[name])
        folder = args.out / name
        if args.queries:
            spec["queries"] = args.queries
            folder = args.out / f"{name}-{args.queries}"
        write(folder, **spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
