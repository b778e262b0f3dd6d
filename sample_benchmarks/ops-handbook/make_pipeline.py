#!/usr/bin/env python3
"""Build the three-stage pipelines of bm25-plain and bm25-prf (the manifest's [[pipeline]] tables).

    python make_pipeline.py        # (re)write runs/pipeline/*.jsonl, byte-identically

Stages (standard library only, deterministic):
  retrieve  the system's run as it is: BM25 top 20 (runs/bm25-plain.jsonl, runs/bm25-prf.jsonl)
  rerank    a term-coverage reranker over those 20: 0.4 x the BM25 score scaled to [0, 1] within the
            query, + 0.4 x the share of the query's distinct terms the chunk holds, + 0.2 x the share
            its title holds; the top 10 kept
  context   the reranked list packed into a context of at most 3 chunks and 450 tokens (a chunk
            whose words x 1.3 would overflow the budget is skipped): what the model receives

bm25-plain's stages are three run files (runs/bm25-plain.jsonl, runs/pipeline/bm25-plain-rerank.jsonl,
runs/pipeline/bm25-plain-context.jsonl); bm25-prf's are one JSONL file with a "stage" on each ranking
(runs/pipeline/bm25-prf-stages.jsonl), the two ways docs/formats.md describes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "runs" / "pipeline"
RERANK_DEPTH, CONTEXT_CHUNKS, CONTEXT_BUDGET = 10, 3, 450
STOP = set("a an and are as at be by can do does for from how i if in is it its me my of on or our so that the "
           "this to up we what when where which who why will with you your".split())


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def terms(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOP}


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def rerank(query: str, ranking: list[dict], corpus: dict[str, dict]) -> list[dict]:
    q = terms(query) or set(words(query))
    top = max(r["score"] for r in ranking) if ranking else 1.0
    low = min(r["score"] for r in ranking) if ranking else 0.0
    out = []
    for r in ranking:
        doc = corpus[r["doc"]]
        body = terms(doc["title"] + " " + doc["text"])
        title = terms(doc["title"])
        bm25 = (r["score"] - low) / (top - low) if top > low else 1.0
        score = 0.4 * bm25 + 0.4 * len(q & body) / len(q) + 0.2 * len(q & title) / len(q)
        out.append({"doc": r["doc"], "score": round(score, 6)})
    out.sort(key=lambda x: (-x["score"], x["doc"]))
    return out[:RERANK_DEPTH]


def context(ranking: list[dict], corpus: dict[str, dict]) -> tuple[list[dict], int]:
    chosen, used = [], 0
    for r in ranking:
        doc = corpus[r["doc"]]
        tokens = round(len(words(doc["title"] + " " + doc["text"])) * 1.3)
        if used + tokens > CONTEXT_BUDGET:
            continue
        chosen.append(r)
        used += tokens
        if len(chosen) == CONTEXT_CHUNKS:
            break
    return chosen, used


def main() -> None:
    corpus = {d["id"]: d for d in load(HERE / "corpus.jsonl")}
    queries = {q["id"]: q["text"] for q in load(HERE / "queries.jsonl")}
    OUT.mkdir(parents=True, exist_ok=True)
    for system in ("bm25-plain", "bm25-prf"):
        rows = load(HERE / "runs" / f"{system}.jsonl")
        meta = rows[0]["meta"]
        reranked, contexts, staged = [], [], []
        for row in rows[1:]:
            q = row["query"]
            rr = rerank(queries[q], row["ranking"], corpus)
            ctx, used = context(rr, corpus)
            reranked.append({"query": q, "ranking": rr})
            contexts.append({"query": q, "ranking": ctx, "context_tokens": used})
            staged += [{"query": q, "stage": "retrieve", "ranking": row["ranking"]},
                       {"query": q, "stage": "rerank", "ranking": rr},
                       {"query": q, "stage": "context", "ranking": ctx, "context_tokens": used}]

        def write(name: str, stage_rows: list[dict], stage: str) -> None:
            head = {"meta": dict(meta, name=name, stage=stage, reranker="term-coverage (make_pipeline.py 1)")}
            text = "\n".join(json.dumps(r) for r in [head, *stage_rows]) + "\n"
            (OUT / f"{name}.jsonl").write_text(text, encoding="utf-8")

        if system == "bm25-plain":
            write("bm25-plain-rerank", reranked, "rerank")
            write("bm25-plain-context", contexts, "context")
        else:
            write("bm25-prf-stages", staged, "retrieve, rerank, context")


if __name__ == "__main__":
    main()
