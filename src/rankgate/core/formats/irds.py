"""`irds:ID`: qrels, queries and documents of an ir_datasets dataset, wherever a file is taken.

    rankgate score irds:msmarco-passage/trec-dl-2019/judged --runs bm25.trec
    rankgate review --qrels irds:beir/scifact/test --queries irds:beir/scifact/test --corpus irds:beir/scifact ...

ir_datasets is an optional extra (`pip install 'rankgate[irds]'`), imported only when an `irds:`
name is read. It fetches what a dataset needs on first use (into IR_DATASETS_HOME); rankgate
never does. The relevance level comes from the dataset's documentation where it has one: its
official measures (`AP(rel=2)`, `RR(rel=2)` for TREC DL) name it. Documents are looked up by ID in
the dataset's document store (only those a review shows), never all held.
"""

from __future__ import annotations

from typing import Callable, Container

from rankgate.core.errors import InputError
from rankgate.core.text import LazyPattern
from rankgate.core.model import Catalog, Qrels, Query

PREFIX = "irds:"
_REL = LazyPattern(r"\(rel=(-?\d+)\)")


def is_irds(spec) -> bool:
    return isinstance(spec, str) and spec.startswith(PREFIX)


def load(spec: str):
    """The ir_datasets dataset named by `irds:ID` (an InputError when it cannot be had)."""
    try:
        import ir_datasets
    except ImportError:
        raise InputError(spec, "ir_datasets is not installed (pip install 'rankgate[irds]')") from None
    did = spec[len(PREFIX):]
    if not did:
        raise InputError(spec, "expected irds:DATASET-ID, e.g. irds:msmarco-passage/trec-dl-2019/judged")
    try:
        return ir_datasets.load(did)
    except KeyError:
        raise InputError(spec, f"no ir_datasets dataset {did!r} (see ir-datasets.com for the IDs)") from None


def _fail(spec: str, what: str, e: BaseException) -> InputError:
    detail = f"{type(e).__name__}: {e}"
    if "download" in detail.lower():  # not in ir_datasets' cache, and no network (rankgate never downloads itself)
        return InputError(spec, f"ir_datasets could not download its {what} (no network here?): download the "
                          "dataset once where there is one (ir_datasets keeps it in ~/.ir_datasets), or give the "
                          f"files themselves; {detail[:160]}{'...' if len(detail) > 160 else ''}")
    return InputError(spec, f"ir_datasets could not provide its {what}: {detail}")


def rel_level(spec_or_dataset) -> int | None:
    """The relevance level the dataset's official measures use (e.g. 2 for TREC DL), or None."""
    ds = load(spec_or_dataset) if isinstance(spec_or_dataset, str) else spec_or_dataset
    try:
        doc = ds.documentation() if hasattr(ds, "documentation") else {}
    except Exception:
        return None
    levels = {int(m) for measure in (doc or {}).get("official_measures", []) or []
              for m in _REL.findall(str(measure))}
    return levels.pop() if len(levels) == 1 else None


def read_irds_qrels(spec: str, catalog: Catalog | None = None) -> Qrels:
    from rankgate.core.formats.textio import JudgmentRows

    ds = load(spec)
    if not ds.has_qrels():
        raise InputError(spec, "this dataset has no qrels")
    rows = JudgmentRows(spec, catalog or Catalog())
    try:
        for n, qrel in enumerate(ds.qrels_iter(), 1):
            rows.add(str(qrel.query_id), str(qrel.doc_id), int(qrel.relevance), n)
    except InputError:
        raise
    except Exception as e:  # a download that failed, a file ir_datasets could not parse
        raise _fail(spec, "qrels", e) from None
    meta = {"source": spec}
    level = rel_level(ds)
    if level is not None:
        meta["dataset_rel_level"] = level
    return rows.qrels("irds", meta=meta)


def read_irds_queries(spec: str) -> dict[str, Query]:
    ds = load(spec)
    if not ds.has_queries():
        raise InputError(spec, "this dataset has no queries")
    out: dict[str, Query] = {}
    try:
        for q in ds.queries_iter():
            text = q.default_text() if hasattr(q, "default_text") else getattr(q, "text", "")
            out[str(q.query_id)] = Query(str(q.query_id), str(text or ""))
    except Exception as e:
        raise _fail(spec, "queries", e) from None
    return out


def read_irds_corpus(spec: str, wanted: Container[str] | None = None,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, tuple[str, str, str]]:
    """The documents asked for (`wanted`), looked up in the dataset's document store; all without:
    (ID, title, text) by ID (corpus.read_corpus makes them Documents)."""
    ds = load(spec)
    if not ds.has_docs():
        raise InputError(spec, "this dataset has no documents")

    def document(d) -> tuple[str, str, str]:
        text = getattr(d, "text", None)
        if not isinstance(text, str):
            text = d.default_text() if hasattr(d, "default_text") else ""
        title = getattr(d, "title", "")
        return str(d.doc_id), title if isinstance(title, str) else "", text

    try:
        if wanted is not None and hasattr(ds, "docs_store"):
            ids = [str(x) for x in wanted]
            found = ds.docs_store().get_many(ids)
            if progress is not None:
                progress(1, 1)
            return {str(k): document(d) for k, d in found.items()}
        return {str(d.doc_id): document(d) for d in ds.docs_iter()
                if wanted is None or str(d.doc_id) in wanted}
    except Exception as e:
        raise _fail(spec, "documents", e) from None
