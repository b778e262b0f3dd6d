"""Query files and document texts: JSONL (or a `qid<TAB>text` topics TSV for queries)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.formats.jsonfmt import _jsonl_objects
from rankgate.core.formats.textio import read_text, shorten
from rankgate.core.model import Query


@dataclass(frozen=True)
class Document:
    id: str
    title: str = ""
    text: str = ""


def _bool(obj, key, path, lineno) -> bool:
    v = obj.get(key, False)
    if not isinstance(v, bool):
        raise InputError(path, f"field {key!r} must be true or false", line=lineno)
    return v


def read_queries(path: str | Path) -> dict[str, Query]:
    path = str(path)
    text = read_text(path)
    out: dict[str, Query] = {}
    if not text.lstrip().startswith("{"):
        for lineno, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            qid, sep, qtext = raw.partition("\t")
            if not sep or not qid.strip():
                raise InputError(path, "expected 'query-id<TAB>text' or JSON lines", line=lineno)
            if qid in out:
                raise InputError(path, f"query {shorten(qid)} appears twice", line=lineno)
            out[qid.strip()] = Query(qid.strip(), qtext.strip())
        return out
    for lineno, obj in _jsonl_objects(path, text):
        qid = obj.get("id", obj.get("query"))
        if not isinstance(qid, str) or not qid:
            raise InputError(path, "field 'id' must be a non-empty string", line=lineno)
        if qid in out:
            raise InputError(path, f"query {shorten(qid)} appears twice", line=lineno)
        tags = obj.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InputError(path, "field 'tags' must be a list of strings", line=lineno)
        weight = obj.get("weight", 1.0)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
            raise InputError(path, "field 'weight' must be a non-negative number", line=lineno)
        for key in ("text", "notes"):
            if not isinstance(obj.get(key, ""), str):
                raise InputError(path, f"field {key!r} must be a string", line=lineno)
        out[qid] = Query(qid, obj.get("text", ""), obj.get("notes", ""), tuple(tags),
                         _bool(obj, "must_pass", path, lineno), _bool(obj, "held_out", path, lineno),
                         float(weight), _bool(obj, "no_answer", path, lineno))
    return out


def read_corpus(path: str | Path) -> dict[str, Document]:
    path = str(path)
    out: dict[str, Document] = {}
    for lineno, obj in _jsonl_objects(path, read_text(path)):
        did = obj.get("id", obj.get("_id", obj.get("docid")))
        if not isinstance(did, str) or not did:
            raise InputError(path, "field 'id' must be a non-empty string", line=lineno)
        title, text = obj.get("title", ""), obj.get("text", obj.get("contents", ""))
        if not isinstance(title, str) or not isinstance(text, str):
            raise InputError(path, "fields 'title' and 'text' must be strings", line=lineno)
        out[did] = Document(did, title, text)
    return out
