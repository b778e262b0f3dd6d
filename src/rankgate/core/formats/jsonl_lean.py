"""A JSONL run read for the measures only (`rankgate score`, `compare`, `gate`, `validate`): the lean
run the fast TREC reader gives (core.model.LeanRun), so memory follows what is kept, not the file.

The lines are checked as the general reader checks them (jsonfmt.JsonlRun: same errors, same
order). What is kept of each ranking: its query and length; its rows whose document someone judged
(for any query), with their rank in trec_eval order (score descending, then document ID descending);
the documents it ranks twice (the first MAX_LISTED, and how many); with `keep_top`, its top rows
nobody judged (the gate's review queue and stability bounds). Documents nobody judged are never
interned. Readers that need every row (the app's rankings, ACL leaks, the funnel) read the run whole.
"""

from __future__ import annotations

from array import array
from functools import partial

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats.jsonfmt import JsonlRun, per_query_numbers
from rankgate.core.formats.textio import iter_lines
from rankgate.core.model import Catalog, LeanRun, Qrels, Run, unique

MAX_LISTED = 21  # duplicates named (validate's MAX_PER_RULE, and one to know there are more)


def read_lean_jsonl(path: str, name: str | None, qrels: Qrels, progress=None, keep_top: int = 0) -> LeanRun | None:
    """The run of a JSONL file, lean: see the module's docstring. Errors are the general reader's. None: a
    staged run (one ranking per query and stage), which the general reader reads as its final stage."""
    names = qrels.catalog.docs.names
    judged = {names[c]: c for c in unique(qrels.doc).tolist()}
    return _read(path, name, judged, progress, keep_top)


def _read(path: str, name: str | None, judged: dict[str, int], progress, keep_top: int) -> LeanRun | None:
    lines = JsonlRun(path, iter_lines(path, progress))
    qnames: list[str] = []
    num_ret = array("q")
    jq, jdoc, jrank = array("q"), array("q"), array("q")
    tq, tdocs, trank = array("q"), [], array("q")
    duplicates: list[tuple[int, str, str]] = []
    n_duplicates = 0
    latency: dict[str, float] = {}
    tokens: dict[str, float] = {}
    look = judged.get
    for lineno, qid, docs, scores, obj in lines:
        qi = len(qnames)
        qnames.append(qid)
        n = len(docs)
        num_ret.append(n)
        per_query_numbers(obj, qid, latency, tokens)
        if not n:
            continue
        if len(set(docs)) != n:  # a document ranked twice: name each second (third ...) row, in file order
            seen: set[str] = set()
            for doc in docs:
                if doc in seen:
                    n_duplicates += 1
                    if len(duplicates) < MAX_LISTED:
                        duplicates.append((lineno, qid, doc))
                seen.add(doc)
        rank = _ranks(docs, scores)
        codes = [look(d, -1) for d in docs]
        for i, c in enumerate(codes):
            if c >= 0:
                jq.append(qi)
                jdoc.append(c)
                jrank.append(i if rank is None else rank[i])
        if keep_top:
            top = range(min(n, keep_top)) if rank is None else (i for i in range(n) if rank[i] < keep_top)
            for i in top:
                if codes[i] < 0:
                    tq.append(qi)
                    tdocs.append(docs[i])
                    trank.append(i if rank is None else rank[i])
    if lines.staged is not None:
        return None
    as_np = partial(np.frombuffer, dtype=np.int64)
    if not qnames:
        raise InputError(path, "no rankings found (expected at least one query)")
    return LeanRun(lines.name(name), path, qnames, as_np(num_ret), as_np(jq), as_np(jdoc), as_np(jrank),
                   duplicates, n_duplicates, int(sum(num_ret)), as_np(tq), tdocs, as_np(trank),
                   keep_top, format="jsonl", meta=lines.meta, latency_ms=latency, context_tokens=tokens)


def _ranks(docs: list[str], scores: list[float]) -> list[int] | None:
    """Each row's 0-based rank in trec_eval order (score descending, then document ID descending, byte
    order: Python compares str by code point, which is UTF-8's byte order; equal rows keep file order);
    None when that is the file's order (scores strictly descending, as a bare list of IDs gives)."""
    if all(a > b for a, b in zip(scores, scores[1:])):
        return None
    order = sorted(range(len(docs)), key=lambda i: (scores[i], docs[i]), reverse=True)  # stable when reversed
    rank = [0] * len(docs)
    for r, i in enumerate(order):
        rank[i] = r
    return rank


def lean_run_reader(path: str, name: str | None, qrels: Qrels, progress=None, *, fmt: str = "auto",
                    keep_top: int = 0, trec=None) -> list[LeanRun] | None:
    """load_bundle's `run_reader`: a JSONL run read lean (any size), a TREC run through `trec` (the fast
    TREC reader, trec_fast.lean_reader, when pyarrow is there), or None for the general reader.
    `fmt` is --run-format: a forced format is never second-guessed from the file's first bytes."""
    from rankgate.core.formats.sniff import detect_format

    if fmt == "auto":
        try:
            fmt = detect_format(path)
        except (InputError, OSError):
            return None  # the general reader says what is wrong with the file
    if fmt == "jsonl":
        lean = read_lean_jsonl(path, name, qrels, progress, keep_top)
        return [lean] if lean is not None else None  # None: a staged run, read whole
    if fmt == "trec" and trec is not None:
        return trec(path, name, qrels, progress, keep_top=keep_top)
    return None


def watch_top_k(runs: list[Run | LeanRun], qrels: Qrels, k: int, progress=None) -> None:
    """trec_fast.watch_top_k for runs of any format: the review queue proposes the unjudged documents of
    every run's top k, and each run's what-if needs that document's rank in it, however deep. Lean runs
    are read once more for those documents (TREC by trec_fast, JSONL here); their rows join the top rows."""
    from rankgate.core.engine import UNJUDGED, prepare

    names = qrels.catalog.docs.names
    judged = set(unique(qrels.doc).tolist())
    watched: set[str] = set()
    for run in runs:
        if isinstance(run, LeanRun):
            watched.update(d for d, r in zip(run.top_docs, run.top_rank.tolist()) if r < k)
        else:
            p = prepare(qrels, run, missing="zero")
            rows = np.flatnonzero((p.rank < k) & (p.grade == UNJUDGED))
            watched.update(names[c] for c in p.doc[rows].tolist() if c not in judged)
    lean = [r for r in runs if isinstance(r, LeanRun)]
    wnames = sorted(watched)
    for run in lean:
        run.watched = True  # its rows of documents judged for other queries, at any rank, count too
        if not wnames:
            continue
        if run.format == "jsonl":
            try:
                w = _read(run.path, run.name, {d: i for i, d in enumerate(wnames)}, progress, 0)
            except InputError:
                continue  # the file changed under us: leave the run as it was read
        else:
            from rankgate.core.formats.trec_fast import read_lean_run

            w = read_lean_run(run.path, run.name, _watch_qrels(wnames), progress, duplicates=False)
        if w is None or w.qnames != run.qnames:
            continue
        deep = np.flatnonzero(w.jrank >= run.keep_top)  # the top rows are kept already
        run.top_q = np.r_[run.top_q, w.jq[deep]]
        run.top_docs = run.top_docs + [wnames[c] for c in w.jdoc[deep].tolist()]
        run.top_rank = np.r_[run.top_rank, w.jrank[deep]]


def _watch_qrels(wnames: list[str]) -> Qrels:
    """Qrels that judge exactly the watched documents (what read_lean_run looks documents up in)."""
    cat = Catalog()
    for d in wnames:
        cat.docs.code(d)
    return Qrels("watched", cat, np.zeros(len(wnames), np.int32), np.arange(len(wnames), dtype=np.int32),
                 np.zeros(len(wnames), np.int64), [])


__all__ = ["read_lean_jsonl", "lean_run_reader", "watch_top_k"]
