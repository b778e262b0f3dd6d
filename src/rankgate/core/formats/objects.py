"""Qrels and runs from Python objects, and scores out as a table.

  qrels  {qid: {docid: grade}}    (as pytrec_eval takes them)
         a DataFrame with columns query_id, doc_id, relevance   (as ir_measures and ranx name them)
  runs   {qid: {docid: score}}
         a DataFrame with columns query_id, doc_id, score
  out    scores_frame(scores): one row per run, query and measure (pandas)

pandas is never imported here unless a DataFrame is asked for (scores_frame); a DataFrame coming
in is read through its columns' `tolist()`, so any frame-like object with those columns works.
Bad values are refused as the file readers refuse them: an InputError naming where (a JSON-like
path for dicts, the row for frames) and what was expected; grades are integers, never truncated.
"""

from __future__ import annotations

import math
import numbers
from array import array
from typing import Any, Iterable, Mapping

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import shorten
from rankgate.core.formats.jsonfmt import _has_surrogate, jpath
from rankgate.core.model import Catalog, Qrels, Run, grade_problem

QUERY_COLUMNS = ("query_id", "qid")
DOC_COLUMNS = ("doc_id", "docid", "docno")
GRADE_COLUMNS = ("relevance", "rel", "grade", "label")
SCORE_COLUMNS = ("score",)


def _id(value, what: str, source: str, where: str) -> str:
    if isinstance(value, str) and value:
        if not value.isascii() and _has_surrogate(value):
            raise InputError(source, f"{what} holds a lone UTF-16 surrogate, which is not a character; expected "
                             "valid Unicode text", where=where)
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(value)
    raise InputError(source, f"{what} must be a non-empty string (or an integer), found {value!r}", where=where)


def _queries(data: Mapping, what: str, catalog: Catalog, source: str):
    """(query code, query ID, its inner dict) for each query of {qid: {docid: value}}, checked: IDs are text
    or integers, each once (1 and "1" are the same ID), and each value is a dict of `what`."""
    seen: set[str] = set()
    for qid, inner in data.items():
        qid = _id(qid, "a query ID", source, jpath())
        if qid in seen:
            raise InputError(source, f"query ID {qid!r} appears twice (as an integer and as a string?)",
                             where=jpath(qid))
        seen.add(qid)
        if not isinstance(inner, Mapping):
            raise InputError(source, f"expected a dict of {what}, found {type(inner).__name__}", where=jpath(qid))
        yield catalog.queries.code(qid), qid, inner


def _grade(value, source: str, where: str) -> int:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if (why := grade_problem(int(value))) is not None:
            raise InputError(source, why, where=where)
        return int(value)
    raise InputError(source, f"grade {value!r} is not an integer (expected a whole number such as 0, 1, 2 or -1)",
                     where=where)


def _score(value, source: str, where: str) -> float:
    try:
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    except OverflowError:  # an integer too large for a float
        pass
    raise InputError(source, f"score {shorten(value)} is not a finite number", where=where)


def qrels_from_dict(data: Mapping[Any, Mapping[Any, int]], catalog: Catalog | None = None,
                    source: str = "<dict>") -> Qrels:
    """Qrels from {query ID: {document ID: grade}}; a query with an empty dict is declared, unjudged."""
    if not isinstance(data, Mapping):
        raise InputError(source, f"expected a dict of query IDs, found {type(data).__name__}")
    catalog = catalog or Catalog()
    qs, ds, gs = array("i"), array("i"), array("q")
    declared: list[int] = []
    for q, qid, inner in _queries(data, "document grades", catalog, source):
        declared.append(q)
        for doc, grade in inner.items():
            doc = _id(doc, "a document ID", source, jpath(qid))
            qs.append(q)
            ds.append(catalog.docs.code(doc))
            gs.append(_grade(grade, source, jpath(qid, doc)))
    return Qrels(source, catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                 np.frombuffer(gs, np.int64).copy(), list(dict.fromkeys(declared)), format="dict")


def run_from_dict(data: Mapping[Any, Mapping[Any, float]], name: str = "run", catalog: Catalog | None = None,
                  source: str = "<dict>") -> Run:
    """A run from {query ID: {document ID: score}} (higher scores rank first; ties by document ID, as
    trec_eval)."""
    if not isinstance(data, Mapping):
        raise InputError(source, f"expected a dict of query IDs, found {type(data).__name__}")
    catalog = catalog or Catalog()
    qs, ds, ss, ws = array("i"), array("i"), array("d"), array("q")
    codes: list[int] = []
    for q, qid, ranked in _queries(data, "document scores", catalog, source):
        codes.append(q)
        for i, (doc, score) in enumerate(ranked.items()):
            doc = _id(doc, "a document ID", source, jpath(qid))
            qs.append(q)
            ds.append(catalog.docs.code(doc))
            ss.append(_score(score, source, jpath(qid, doc)))
            ws.append(i)
    return Run(name, source, catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
               np.frombuffer(ss, np.float64).copy(), np.frombuffer(ws, np.int64).copy(), format="dict",
               query_codes=list(dict.fromkeys(codes)))


def is_frame(obj) -> bool:
    """A pandas (or frame-like) table: it has columns."""
    return hasattr(obj, "columns") and hasattr(obj, "__getitem__") and not isinstance(obj, Mapping)


def _column(frame, names: tuple[str, ...], what: str, source: str) -> list:
    columns = [str(c) for c in frame.columns]
    for name in names:
        if name in columns:
            col = frame[name]
            return col.tolist() if hasattr(col, "tolist") else list(col)
    raise InputError(source, f"no {what} column (expected one of {', '.join(names)}; found "
                     f"{', '.join(columns) or 'none'})")


def _rows(frame, value_names: tuple[str, ...], what: str, source: str) -> Iterable[tuple[int, Any, Any, Any]]:
    q = _column(frame, QUERY_COLUMNS, "query", source)
    d = _column(frame, DOC_COLUMNS, "document", source)
    v = _column(frame, value_names, what, source)
    return zip(range(len(q)), q, d, v)


def qrels_from_frame(frame, catalog: Catalog | None = None, source: str = "<DataFrame>") -> Qrels:
    """Qrels from a table with columns query_id, doc_id and relevance (ir_measures' and ranx's names)."""
    data: dict[str, dict[str, int]] = {}
    for row, qid, doc, grade in _rows(frame, GRADE_COLUMNS, "relevance", source):
        where = f"row {row}"
        qid, doc = _id(qid, "a query ID", source, where), _id(doc, "a document ID", source, where)
        judged = data.setdefault(qid, {})
        if doc in judged:
            raise InputError(source, f"a second judgment of {doc!r} for query {qid!r}; expected one grade per "
                             "query and document", where=where)
        judged[doc] = _grade(grade, source, where)
    return qrels_from_dict(data, catalog, source)


def run_from_frame(frame, name: str | None = None, catalog: Catalog | None = None,
                   source: str = "<DataFrame>") -> Run:
    """A run from a table with columns query_id, doc_id and score; named `name`, else by a single value
    of a `run` column, else "run"."""
    if name is None:
        columns = [str(c) for c in frame.columns]
        tags = set(_column(frame, ("run",), "run", source)) if "run" in columns else set()
        if len(tags) > 1:
            raise InputError(source, f"the run column holds {len(tags)} runs; pass one run's rows (or name=)")
        name = str(next(iter(tags))) if tags else "run"
    data: dict[str, dict[str, float]] = {}
    for row, qid, doc, score in _rows(frame, SCORE_COLUMNS, "score", source):
        where = f"row {row}"
        qid, doc = _id(qid, "a query ID", source, where), _id(doc, "a document ID", source, where)
        ranked = data.setdefault(qid, {})
        if doc in ranked:
            raise InputError(source, f"{doc!r} ranked twice for query {qid!r}", where=where)
        ranked[doc] = _score(score, source, where)
    return run_from_dict(data, name, catalog, source)


def scores_frame(scores, per_query: bool = True):
    """One Scores (core.engine) or several as a pandas DataFrame: with `per_query`, one row per run,
    query and measure (columns run, query_id, measure, value, as ir_measures' iter_calc); else one
    row per run and a column per measure (each measure's summary over the queries)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("scores as a DataFrame need pandas: pip install pandas") from None
    from rankgate.core.engine import Scores

    many = list(scores) if isinstance(scores, (list, tuple)) else [scores]
    if not many or not all(isinstance(s, Scores) for s in many):
        raise InputError("scores", "expected what rankgate.evaluate returns (one, or a list of them)")
    if not per_query:
        rows = [{"run": s.run, **{m.name: float(v) for m, v in s.summary().items()}} for s in many]
        return pd.DataFrame(rows)
    cols: dict[str, list] = {"run": [], "query_id": [], "measure": [], "value": []}
    for s in many:
        for m, values in s.values.items():
            n = len(s.qids)
            cols["run"] += [s.run] * n
            cols["query_id"] += list(s.qids)
            cols["measure"] += [m.name] * n
            cols["value"] += [float(x) for x in values.tolist()]
    return pd.DataFrame(cols)
