"""JSON and JSONL forms of qrels and runs.

Qrels:
  release-gate    {"q-backup": ["doc-a", "doc-b"]}  (binary)
  graded          {"q-backup": {"doc-a": 2, "doc-b": 0}}
  export          {"meta": {...}, "qrels": <release-gate or graded>}
  JSONL judgments {"query": ..., "doc": ..., "grade": 2, "reason": ..., "collection_version": ..., "reviewer": ...}
                  (the label store's exports add "reached", "reviewers", "needs_review", "migrated_from")
Runs:
  release-gate    {"run-name": {"q-backup": ["doc-a", ...]}}  (list order is the ranking)
  JSONL           optional {"meta": {...}} first line, then
                  {"query": ..., "ranking": ["doc", ...] | [{"doc": ..., "score": ...}], "latency_ms": .., "context_tokens": ..}
"""

from __future__ import annotations

import itertools

import json
import math
import re
from array import array
from itertools import repeat
from typing import Iterator

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import (RUN_ITEM_KEYS, RUN_LINE_KEYS, JudgmentRows, numbered_lines, read_text, shorten,
                                          unknown_key)
from rankgate.core.model import Catalog, JudgmentDetail, Qrels, Run, grade_problem
from rankgate.core.errors import Problem
from rankgate.core.text import LazyPattern


def jpath(*keys) -> str:
    out = "$"
    for k in keys:
        key = str(k) if isinstance(k, int) else json.dumps(k, ensure_ascii=False)
        out += f"[{key if len(key) <= 80 else key[:60] + '...' + key[-10:]}]"  # a 1 MB key stays short
    return out


def _no_duplicate_keys(path: str):
    def hook(pairs):
        seen = {}
        for k, v in pairs:
            if k in seen:
                raise InputError(path, f"duplicate key {shorten(k)} in one JSON object (expected each ID once)")
            seen[k] = v
        return seen
    return hook


def load_json(path: str, text: str | None = None):
    """One JSON document (at most textio.MAX_DOCUMENT bytes), every string valid Unicode."""
    text = read_text(path, what="one JSON document; use JSON lines or TREC for more") if text is None else text
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys(path))
    except json.JSONDecodeError as e:
        raise InputError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply") from None
    if "\\u" in text and _MAY_HOLD_SURROGATE.search(text):
        refuse_surrogates(data, path)
    return data


# A \uD800-\uDFFF escape: JSON can spell a lone UTF-16 surrogate, which is not a character (no UTF-8 file
# holds one, and writing it anywhere fails). Looked for in the text first, so ordinary files cost nothing.
_MAY_HOLD_SURROGATE = LazyPattern(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def refuse_surrogates(value, path: str, line: int | None = None, at: tuple = ()) -> None:
    """An InputError naming the first string (key or value) of a parsed JSON value that holds a lone
    surrogate (\\ud800 ...): IDs and texts must be valid Unicode to be scored, sorted and written."""
    if isinstance(value, str):
        if _has_surrogate(value):
            raise InputError(path, "a string holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without "
                             "its pair), which is not a character; expected valid Unicode text",
                             line=line, where=jpath(*at) if at else None)
    elif isinstance(value, dict):
        for k, v in value.items():
            refuse_surrogates(k, path, line, at)
            refuse_surrogates(v, path, line, (*at, k if not _has_surrogate(k) else "?"))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            refuse_surrogates(v, path, line, (*at, i))


def _is_grade(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def qrels_from_json(path: str, data, catalog: Catalog | None = None) -> Qrels:
    """The release-gate JSON (binary lists), graded objects, or a rankgate export wrapping either."""
    catalog = catalog or Catalog()
    meta: dict = {}
    prefix: tuple = ()
    if isinstance(data, dict) and set(data) == {"meta", "qrels"} and isinstance(data["meta"], dict):
        meta, data, prefix = dict(data["meta"]), data["qrels"], ("qrels",)
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object of query IDs, found {type(data).__name__}", where=jpath(*prefix))
    qcode, dcode = catalog.queries.code, catalog.docs.code
    qs, ds, gs = array("i"), array("i"), array("q")
    problems: list[Problem] = []
    declared: list[int] = []
    kind = None
    for qid, judged in data.items():
        q = qcode(qid)
        declared.append(q)
        if isinstance(judged, list):
            kind = kind or "json"
            seen: set[str] = set()
            for i, doc in enumerate(judged):
                if not isinstance(doc, str) or not doc:
                    raise InputError(path, "expected a document ID (a non-empty string)", where=jpath(*prefix, qid, i))
                if doc in seen:
                    problems.append(Problem(f"{path}: {jpath(*prefix, qid, i)}",
                                            f"query {shorten(qid)} lists relevant document {shorten(doc)} twice", "duplicate-relevant"))
                    continue
                seen.add(doc)
                qs.append(q)
                ds.append(dcode(doc))
                gs.append(1)
        elif isinstance(judged, dict):
            kind = kind or "json-graded"
            for doc, grade in judged.items():
                if not _is_grade(grade):
                    raise InputError(path, f"grade {shorten(json.dumps(grade))} is not an integer",
                                     where=jpath(*prefix, qid, doc))
                if (why := grade_problem(grade)) is not None:
                    raise InputError(path, why, where=jpath(*prefix, qid, doc))
                if not doc:
                    raise InputError(path, "empty document ID", where=jpath(*prefix, qid))
                qs.append(q)
                ds.append(dcode(doc))
                gs.append(grade)
        else:
            raise InputError(path, "expected a list of relevant document IDs or an object of document grades",
                             where=jpath(*prefix, qid))
    return Qrels(path, catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                 np.frombuffer(gs, np.int64).copy(), declared, format=kind or "json", problems=problems, meta=meta)


def _lines(text, progress=None):
    """(line number, line) of `text`: a whole text (`progress(chars done, chars)` every 4096 lines), or
    lines already numbered (textio.iter_lines, which streams a file and reports its own progress)."""
    if not isinstance(text, str):
        yield from text
        return
    done, total = 0, len(text)
    for lineno, raw in numbered_lines(text):
        if progress is not None:
            done += len(raw) + 1
            if not lineno % 4096:
                progress(min(done, total), total)
        yield lineno, raw
    if progress is not None:
        progress(total, total)


def _trec_line_hint(raw: str) -> str:
    """A TREC qrels or run line among JSON lines (one pasted into a .jsonl file): say so."""
    words = raw.split()
    if len(words) in (4, 6) and words[1] in ("0", "Q0") and not raw.lstrip().startswith(("{", "[")):
        return ("; this line looks like TREC (query iteration document ...): a .jsonl file holds one JSON object a "
                "line (`rankgate docs formats`)")
    return ""


def _jsonl_objects(path: str, text, progress=None):
    """(line number, object) per non-blank line of `text` (a whole text, or numbered lines)."""
    for lineno, raw in _lines(text, progress):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, object_pairs_hook=_no_duplicate_keys(f"{path}:{lineno}"))
        except json.JSONDecodeError as e:
            raise InputError(path, f"invalid JSON: {e.msg} (column {e.colno}){_trec_line_hint(raw)}",
                             line=lineno) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", line=lineno) from None
        if not isinstance(obj, dict):
            raise InputError(path, f"expected a JSON object on each line, found {type(obj).__name__}", line=lineno)
        if "\\u" in raw and _MAY_HOLD_SURROGATE.search(raw):
            refuse_surrogates(obj, path, line=lineno)
        yield lineno, obj


def _str_field(obj, key, path, lineno, required=True) -> str:
    v = obj.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or (required and not v):
        raise InputError(path, f"field {key!r} must be a non-empty string", line=lineno)
    return v


def jsonl_judgments(path: str, text: str, meta: dict) -> Iterator[tuple[int, dict]]:
    """The judgment lines of JSONL qrels: (line number, object), each with a non-empty "query" and "doc"
    and an integer "grade" (several judgments of a pair are the reader's to refuse). `{"meta": {...}}`
    lines go into `meta` as they come."""
    for lineno, obj in _jsonl_objects(path, text):
        if "meta" in obj and len(obj) == 1 and isinstance(obj["meta"], dict):
            meta.update(obj["meta"])
            continue
        for key in ("query", "doc"):
            v = obj.get(key)
            if not isinstance(v, str) or not v:
                raise InputError(path, f"field {key!r} must be a non-empty string; a judgment line holds "
                                 '"query", "doc" and "grade"' + _judgment_hint(obj), line=lineno)
        grade = obj.get("grade")
        if not _is_grade(grade):
            raise InputError(path, f"field 'grade' must be an integer, found {shorten(json.dumps(grade))}"
                             + _judgment_hint(obj), line=lineno)
        yield lineno, obj


def _judgment_hint(obj: dict) -> str:
    """What a line given as a judgment looks like instead, from its keys (a run, a corpus, queries)."""
    keys = set(obj)
    if "ranking" in keys:
        return " (this looks like a run: it has 'ranking'; give it with --runs)"
    if keys & {"docid", "doc_id", "_id", "title", "contents", "body"} and "query" not in keys:
        return " (this looks like a corpus: documents with an ID and a text; give it with --corpus)"
    if keys & {"id", "qid", "query_id"} and "text" in keys and "query" not in keys:
        return " (this looks like a queries file or a corpus: an ID and a text; give it with --queries or --corpus)"
    return ""


def judgment_detail(obj: dict, path: str, lineno: int) -> JudgmentDetail:
    """A JSONL judgment's reason, collection version and reviewer ("" where it has none)."""
    return JudgmentDetail(_str_field(obj, "reason", path, lineno, False),
                          _str_field(obj, "collection_version", path, lineno, False),
                          _str_field(obj, "reviewer", path, lineno, False))


def qrels_from_jsonl(path: str, text: str, catalog: Catalog | None = None) -> Qrels:
    """One judgment per line, with the reviewer's reason and collection version when given."""
    catalog = catalog or Catalog()
    rows = JudgmentRows(path, catalog)
    details: dict = {}
    meta: dict = {}
    for lineno, obj in jsonl_judgments(path, text, meta):
        qid, doc = obj["query"], obj["doc"]
        rows.add(qid, doc, obj["grade"], lineno)
        detail = judgment_detail(obj, path, lineno)
        if detail != JudgmentDetail():
            details[(qid, doc)] = detail
    return rows.qrels("jsonl", details=details, meta=meta)


def runs_from_json(path: str, data, catalog: Catalog | None = None) -> list[Run]:
    """The release-gate JSON's runs file: several named runs, each {qid: [doc, ...]} in rank order."""
    catalog = catalog or Catalog()
    if not isinstance(data, dict):
        raise InputError(path, f"expected a JSON object of run names, found {type(data).__name__}", where="$")
    runs = []
    for name, queries in data.items():
        if not isinstance(queries, dict):
            raise InputError(path, "expected an object of query IDs to ranked document lists", where=jpath(name))
        qs, ds, ss, ws = array("i"), array("i"), array("d"), array("q")
        codes = []
        for qid, ranked in queries.items():
            if not isinstance(ranked, list):
                raise InputError(path, "expected a list of document IDs in rank order", where=jpath(name, qid))
            q = catalog.queries.code(qid)
            codes.append(q)
            n = len(ranked)
            for i, doc in enumerate(ranked):
                if not isinstance(doc, str) or not doc:
                    raise InputError(path, "expected a document ID (a non-empty string)", where=jpath(name, qid, i))
                qs.append(q)
                ds.append(catalog.docs.code(doc))
                ss.append(float(n - i))
                ws.append(i)
        runs.append(Run(name, path, catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                        np.frombuffer(ss, np.float64).copy(), np.frombuffer(ws, np.int64).copy(), format="json",
                        query_codes=codes))
    return runs


class JsonlRun:
    """The lines of a JSONL run, checked, one ranking at a time: iterate it for (line number, query ID,
    documents, scores, the line's object), in file order; `meta` holds the `{"meta": ...}` first line once
    seen. Both readers take it: run_from_jsonl (every row) and jsonl_lean (what the measures need)."""

    def __init__(self, path: str, text, progress=None):
        self.path, self.text, self.progress = path, text, progress
        self.meta: dict = {}
        self.staged = None  # a staged run: the (line number, object) pairs from its first stage line on

    def __iter__(self) -> Iterator[tuple[int, str, list[str], list[float], dict]]:
        path = self.path
        seen: dict[str, int] = {}
        objects = _jsonl_objects(path, self.text, self.progress)
        for lineno, obj in objects:
            if "meta" in obj:
                if seen or self.meta:
                    raise InputError(path, "run metadata must be the first line", line=lineno)
                if not isinstance(obj["meta"], dict):
                    raise InputError(path, "field 'meta' must be an object", line=lineno)
                self.meta = dict(obj["meta"])
                continue
            if "stage" in obj:  # one ranking per query and stage: read as its final stage (formats/staged.py)
                if seen:
                    raise InputError(path, "field 'stage' on this ranking but not on those before: a staged run "
                                     "gives every ranking a stage", line=lineno)
                self.staged = itertools.chain([(lineno, obj)], objects)
                return
            if len(obj) > 2 and not obj.keys() <= RUN_LINE_KEYS:
                unknown_key(obj, RUN_LINE_KEYS, "a ranking line", path, lineno)
            qid = _str_field(obj, "query", path, lineno)
            if qid in seen:
                raise InputError(path, f"query {shorten(qid)} appears twice (first at line {seen[qid]})", line=lineno)
            seen[qid] = lineno
            ranking = obj.get("ranking")
            if not isinstance(ranking, list):
                raise InputError(path, "field 'ranking' must be a list of document IDs", line=lineno)
            n = len(ranking)
            docs: list[str] = []
            scores: list[float] = []
            for i, item in enumerate(ranking):
                if isinstance(item, str) and item:
                    doc, score = item, float(n - i)
                elif isinstance(item, dict) and isinstance(item.get("doc"), str) and item["doc"]:
                    doc, score = item["doc"], item.get("score", float(n - i))
                    if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
                        raise InputError(path, f"ranking[{i}].score must be a finite number", line=lineno)
                    if len(item) > 1 + ("score" in item):
                        unknown_key(item, RUN_ITEM_KEYS, f"ranking[{i}]", path, lineno)
                else:
                    raise InputError(path, f"ranking[{i}] must be a document ID or an object with 'doc' and 'score'",
                                     line=lineno)
                docs.append(doc)
                scores.append(float(score))
            for key in ("latency_ms", "context_tokens"):
                if key in obj and obj[key] is not None:
                    v = obj[key]
                    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                        raise InputError(path, f"field {key!r} must be a non-negative number", line=lineno)
            yield lineno, qid, docs, scores, obj

    def name(self, name: str | None) -> str:
        """The run's name: `name` (NAME=FILE), else the metadata's, else the file's stem."""
        from rankgate.core.formats.trec import run_name_from_path

        return str(name or self.meta.get("name") or run_name_from_path(self.path))


def per_query_numbers(obj: dict, qid: str, latency: dict, tokens: dict) -> None:
    """A ranking line's latency_ms and context_tokens (checked by JsonlRun) into the run's dicts."""
    for key, target in (("latency_ms", latency), ("context_tokens", tokens)):
        if obj.get(key) is not None:
            target[qid] = float(obj[key])


def run_from_jsonl(path: str, text: str, name: str | None, catalog: Catalog | None = None, progress=None) -> Run:
    catalog = catalog or Catalog()
    qs, ds, ss, ws = array("i"), array("i"), array("d"), array("q")
    latency: dict[str, float] = {}
    tokens: dict[str, float] = {}
    codes = []
    lines = JsonlRun(path, text, progress)
    dcode = catalog.docs.code
    for lineno, qid, docs, scores, obj in lines:
        q = catalog.queries.code(qid)
        codes.append(q)
        n = len(docs)
        qs.extend(repeat(q, n))
        ds.extend(map(dcode, docs))
        ss.extend(scores)
        ws.extend(repeat(lineno, n))
        per_query_numbers(obj, qid, latency, tokens)
    if lines.staged is not None:
        from rankgate.core.formats.staged import staged_run

        return staged_run(path, lines.staged, name, catalog, lines.meta)
    # The arrays share the collected buffers (no copy): a large run is never held twice.
    return Run(lines.name(name), path, catalog, np.frombuffer(qs, np.int32), np.frombuffer(ds, np.int32),
               np.frombuffer(ss, np.float64), np.frombuffer(ws, np.int64), format="jsonl",
               meta=lines.meta, latency_ms=latency, context_tokens=tokens, query_codes=codes)
