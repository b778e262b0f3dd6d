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

Dense qrels, pooled as real ones are (issue 36; TREC DL 2019 holds 215 judgments a query):
`--judged-per-query N` judgments a query (default 100), 80% of them drawn from the
top 200 of the run (nearer the top more often), 20% documents the run did not
retrieve; grades mostly 0, relevant ones nearer the top. String document IDs
(`doc_0012345`):

- dense: 7,000 queries x 1,000 (7M lines, 700k qrels), and run.shuffled.txt.
- dense-wide: 100,000 queries x 100 (10M lines), a tenth as many judged a query (1M qrels).
- dense-1m: 10,000 queries x 100 (1M lines).
- dense-2m: 2,000 queries x 1,000 (2M lines).

Each dense benchmark also gets run.cand.txt, a second run for `compare` and `gate`: the same
queries and documents, each score moved by a little noise and each ranking sorted again, so the
measures differ query by query as two real systems' do (written when missing).

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
    # dense qrels (judged: the share of --judged-per-query this benchmark takes)
    "dense": dict(queries=7_000, depth=1_000, seed=36, shuffled=True, doc_prefix="doc_", judged=1.0),
    "dense-wide": dict(queries=100_000, depth=100, seed=37, shuffled=False, doc_prefix="doc_", judged=0.1),
    "dense-1m": dict(queries=10_000, depth=100, seed=38, shuffled=False, doc_prefix="doc_", judged=1.0),
    "dense-2m": dict(queries=2_000, depth=1_000, seed=39, shuffled=False, doc_prefix="doc_", judged=1.0),
}
JUDGED_PER_QUERY = 100
POOL_DEPTH = 200  # pooled judgments come from the top of each run


def _unique_per_query(rng: np.random.Generator, ids: np.ndarray, lo: int = 0, hi: int = DOC_SPACE) -> np.ndarray:
    """Redraw ids (from lo to hi) until each row of a (queries, depth) array has distinct values."""
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
            row[again] = rng.integers(lo, hi, int(again.sum()))


def _run(rng: np.random.Generator, queries: int, depth: int):
    """(qids, docs (nq, depth), scores as int ten-thousandths (nq, depth))."""
    qids = rng.choice(QID_SPACE, size=queries, replace=False)  # random query order
    docs = _unique_per_query(rng, rng.integers(0, DOC_SPACE, size=(queries, depth)))
    # Scores: a top score per query, then descending integer gaps in 1e-4 steps; one
    # gap in 50 is zero, so exact ties appear (trec_eval breaks them by doc id).
    top = rng.integers(150_000, 400_000, size=(queries, 1))
    gaps = rng.geometric(1 / 60, size=(queries, depth - 1))
    gaps[rng.random(gaps.shape) < 0.02] = 0
    scores = top - np.concatenate([np.zeros((queries, 1), np.int64), np.cumsum(gaps, axis=1)], axis=1)
    return qids, docs, scores


def make_pooled(queries: int, depth: int, seed: int, per_query: int):
    """As make, with per_query judgments a query pooled as TREC pools them: 80% drawn from the
    top POOL_DEPTH of the run (the top more often), 20% documents the run did not retrieve (ids
    past the run's space); grade 0 mostly, relevant ones more often near the top."""
    rng = np.random.default_rng(seed)
    qids, docs, scores = _run(rng, queries, depth)
    pool = min(POOL_DEPTH, depth)
    retrieved = min(pool, int(round(per_query * 0.8)))
    # ranks without replacement, weighted to the top: sort noise that grows with the rank
    noise = rng.random((queries, pool)) * (1 + np.arange(pool) / 40)
    rank = np.sort(np.argsort(noise, axis=1)[:, :retrieved], axis=1)
    r_doc = np.take_along_axis(docs, rank, axis=1)
    unretrieved = per_query - retrieved
    u_doc = _unique_per_query(rng, rng.integers(DOC_SPACE, 2 * DOC_SPACE, size=(queries, unretrieved)),
                              DOC_SPACE, 2 * DOC_SPACE)
    p_rel = np.concatenate([0.6 * np.exp(-rank / 60), np.full((queries, unretrieved), 0.15)], axis=1)
    rel = rng.random(p_rel.shape) < p_rel
    grade = np.where(rel, rng.choice([1, 2, 3], size=p_rel.shape, p=[0.55, 0.3, 0.15]), 0)
    d = np.concatenate([r_doc, u_doc], axis=1)
    # each query's judgments in a shuffled order, queries in qid order (as qrels files come)
    perm = np.argsort(rng.random(d.shape), axis=1)
    d, grade = np.take_along_axis(d, perm, axis=1), np.take_along_axis(grade, perm, axis=1)
    by_qid = np.argsort(qids, kind="stable")
    q = np.repeat(qids[by_qid], per_query)
    return qids, docs, scores, (q, d[by_qid].ravel(), grade[by_qid].ravel())


def make(queries: int, depth: int, seed: int):
    """(qids, docs (nq, depth), scores as int ten-thousandths (nq, depth), qrels rows)."""
    rng = np.random.default_rng(seed)
    qids, docs, scores = _run(rng, queries, depth)
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


def candidate_scores(scores: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A second system: each score plus noise (about five ranks' worth), each ranking sorted again
    (descending); (order of the documents per query, the new scores)."""
    rng = np.random.default_rng(seed + 2)
    moved = scores + rng.integers(-300, 301, size=scores.shape)
    order = np.argsort(-moved, axis=1, kind="stable")
    return order, np.take_along_axis(moved, order, axis=1)


def write_candidate(folder: Path, queries: int, depth: int, seed: int, doc_prefix: str, per_query: int) -> None:
    """run.cand.txt beside a dense benchmark's run.txt (made from the same draws), when missing."""
    path = folder / "run.cand.txt"
    if path.exists():
        return
    qids, docs, scores, _ = make_pooled(queries, depth, seed, per_query)
    order, moved = candidate_scores(scores, seed)
    docs = np.take_along_axis(docs, order, axis=1)
    tmp = path.with_suffix(".tmp")
    step = max(1, 200_000 // depth)
    with open(tmp, "w") as f:
        for lo in range(0, queries, step):
            f.writelines(_run_lines(qids, docs, moved, lo, min(lo + step, queries), doc_prefix))
    tmp.rename(path)
    print(f"{path}: the second run ({path.stat().st_size / 1e6:.0f} MB)")


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


def write(folder: Path, queries: int, depth: int, seed: int, shuffled: bool, doc_prefix: str = "",
          per_query: int = 0) -> None:
    params = dict(queries=queries, depth=depth, seed=seed, shuffled=shuffled, version=1)
    if doc_prefix:
        params["doc_prefix"] = doc_prefix
    if per_query:
        params["judged_per_query"] = per_query
    stamp = folder / "params.json"
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        print(f"{folder}: up to date")
        if per_query:
            write_candidate(folder, queries, depth, seed, doc_prefix, per_query)
        return
    folder.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    if per_query:
        qids, docs, scores, (qq, qd, qg) = make_pooled(queries, depth, seed, per_query)
    else:
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
    (folder / "run.cand.txt").unlink(missing_ok=True)
    stamp.write_text(json.dumps(params) + "\n")
    if per_query:
        write_candidate(folder, queries, depth, seed, doc_prefix, per_query)
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.0f} MB" for p in sorted(folder.glob("*.txt")))
    print(f"{folder}: {queries} queries x {depth} documents, {len(qq)} judgments ({sizes})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=sorted(BENCHMARKS), action="append", help="generate only this benchmark")
    ap.add_argument("--queries", type=int, help="override the number of queries (writes <name>-<queries>/)")
    ap.add_argument("--out", type=Path, default=DATA, help="output folder (default bench/data)")
    ap.add_argument("--judged-per-query", type=int, default=JUDGED_PER_QUERY,
                    help=f"judgments a query of the dense benchmarks (default {JUDGED_PER_QUERY}; dense-wide "
                         "takes a tenth)")
    args = ap.parse_args(argv)
    for name in args.only or sorted(BENCHMARKS):
        spec = dict(BENCHMARKS[name])
        share = spec.pop("judged", 0)
        if share:
            spec["per_query"] = max(1, int(round(args.judged_per_query * share)))
        folder = args.out / name
        if args.queries:
            spec["queries"] = args.queries
            folder = args.out / f"{name}-{args.queries}"
        write(folder, **spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
