"""Query files and document texts (a corpus), each in the forms people have them; all may be gzipped.

Queries:
  JSONL       {"id": ..., "text": ..., "notes", "tags", "must_pass", "held_out", "weight", "no_answer"}
              (the ID may be "id", "_id", "qid", "query_id" or "query": BEIR's queries.jsonl reads as it is)
  TSV         query-id<TAB>text (MS MARCO and TREC DL topics)
  TREC topics <top> <num> Number: 19335 <title> ... <desc> ... <narr> ... </top>,
              or <topic number="1"> <query>...</query> <description>...</description> </topic>
Corpus:
  JSONL       {"docid" | "_id" | "id" | "doc_id": ..., "title": ..., "text" | "contents" | "body": ...}
              (BEIR's corpus.jsonl, Pyserini's JSONL collections)
  TSV         docid<TAB>text, docid<TAB>title<TAB>text, or docid<TAB>url<TAB>title<TAB>text (MS MARCO)
  TREC        <DOC> <DOCNO>...</DOCNO> <TITLE>/<HEADLINE> ... <TEXT> ... </TEXT> </DOC>

Records end at "\\n" only (textio.numbered_lines): a text may hold U+0085, U+2028 or a form feed.
`read_corpus(..., wanted=...)` keeps only the documents asked for, so a corpus of millions of
passages costs the memory of the documents a review shows, not of the whole collection.
"""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path
from typing import Callable, Container, Iterator

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.core.errors import InputError
from rankgate.core.formats.irds import is_irds
from rankgate.core.formats.jsonfmt import _MAY_HOLD_SURROGATE, _no_duplicate_keys, refuse_surrogates
from rankgate.core.formats.textio import (ASCII_SPACE, ascii_fields, iter_blocks, iter_lines, numbered_lines, read_text,
                                          shorten)
from rankgate.core.model import Query


@dataclass(frozen=True)
class Document:
    id: str
    title: str = ""
    text: str = ""


QUERY_ID_KEYS = ("id", "_id", "qid", "query_id", "query")
QUERY_TEXT_KEYS = ("text", "query", "title")
DOC_ID_KEYS = ("docid", "_id", "id", "doc_id", "docno")
DOC_TEXT_KEYS = ("text", "contents", "body")


def _first(text: str) -> str:
    """The first character that is not whitespace ("" for none)."""
    s = text.lstrip(ASCII_SPACE)
    return s[:1]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _bool(obj, key, path, lineno) -> bool:
    v = obj.get(key, False)
    if not isinstance(v, bool):
        raise InputError(path, f"field {key!r} must be true or false", line=lineno)
    return v


def json_line(path: str, raw: str, lineno: int, strict: bool = True) -> dict:
    """One line's JSON object, or one InputError line (invalid JSON, too deep, not an object, a lone surrogate);
    `strict` refuses a key given twice (query files; a corpus is read faster without). The JSONL readers of
    core (queries, corpus, ACL, stage files) share it."""
    try:
        obj = _strict_decode(raw, f"{path}:{lineno}") if strict else json.loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=lineno) from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply", line=lineno) from None
    if not isinstance(obj, dict):
        raise InputError(path, f"expected a JSON object on each line, found {type(obj).__name__}", line=lineno)
    if _MAY_HOLD_SURROGATE.search(raw):
        refuse_surrogates(obj, path, line=lineno)
    return obj


_strict = threading.local()  # per thread: one decoder and the line its duplicate-key message names


def _strict_decode(raw: str, where: str):
    """`json.loads(raw, object_pairs_hook=_no_duplicate_keys(where))`, on a decoder made once per thread
    rather than once per line (json.loads makes one for every call with a hook: 10,000 query lines, about
    a third of their reading)."""
    decoder = getattr(_strict, "decoder", None)
    if decoder is None:
        _strict.where = ""
        hook = _no_duplicate_keys(_Where())
        decoder = _strict.decoder = json.JSONDecoder(object_pairs_hook=hook)
    if raw.startswith("\ufeff"):  # as json.loads says it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", raw, 0)
    _strict.where = where
    return decoder.decode(raw)


class _Where:
    """The place `_strict_decode` reads now, as the duplicate-key message's path."""

    def __str__(self) -> str:
        return _strict.where


def _pick(obj: dict, keys: tuple[str, ...], skip: str | None = None):
    for key in keys:
        if key in obj and key != skip:
            return key, obj[key]
    return None, None


# ---- queries ------------------------------------------------------------------------------------

def query_format(text: str) -> str:
    """'jsonl', 'trec' (topics, or <DOC> for a corpus) or 'tsv', from the first character that is not a space."""
    first = _first(text)
    if first == "{":
        return "jsonl"
    if first == "<":
        return "trec"
    return "tsv"


def read_queries(path: str | Path) -> dict[str, Query]:
    """Every query of a query file (JSONL, TSV or TREC topics; gzipped or not), by ID."""
    path = str(path)
    if is_irds(path):
        from rankgate.core.formats.irds import read_irds_queries

        return read_irds_queries(path)
    kind = corpus_format(path)  # the same first-character rule
    out: dict[str, Query] = {}

    def add(query: Query, lineno: int) -> None:
        if query.id in out:
            raise InputError(path, f"query {shorten(query.id)} appears twice", line=lineno)
        out[query.id] = query

    if kind == "trec":
        text = read_text(path, what="TREC topics")
        for lineno, query in _trec_topics(path, text):
            add(query, lineno)
    elif kind == "tsv":
        for lineno, raw in iter_lines(path):
            if not raw.strip(ASCII_SPACE):
                continue
            qid, sep, qtext = raw.partition("\t")
            qid = qid.strip(ASCII_SPACE)
            if not sep or not qid:
                raise InputError(path, "expected 'query-id<TAB>text', JSON lines or TREC topics (<top>)",
                                 line=lineno)
            add(Query(qid, qtext.strip(ASCII_SPACE)), lineno)
    else:
        for lineno, raw in iter_lines(path):
            if raw.strip(ASCII_SPACE):
                add(_json_query(path, json_line(path, raw, lineno), lineno), lineno)
    if out and all(q.weight == 0 for q in out.values()):
        raise InputError(path, "every query has weight 0: a weighted rule would weigh nothing (give at least one "
                         "query a weight above 0, or leave 'weight' out for 1)")
    return out


# The keys a query line may have: its ID and text (under the names BEIR, ir_datasets and others use), what
# rankgate reads (groups: core/acl.py), and BEIR's "metadata" (kept aside). Any other key is refused, so a misspelt "must_pas"
# cannot silently drop a must-pass query.
QUERY_KEYS = frozenset(QUERY_ID_KEYS + QUERY_TEXT_KEYS + ("notes", "tags", "must_pass", "held_out", "weight",
                                                          "no_answer", "metadata", "groups"))
MAX_WEIGHT = 1e6


def _unknown_query_key(obj: dict, path: str, lineno: int) -> None:
    unknown = [k for k in obj if k not in QUERY_KEYS]
    if not unknown:
        return
    import difflib

    key = unknown[0]
    close = difflib.get_close_matches(key, sorted(QUERY_KEYS), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(path, f"unknown key {shorten(key)} in a query ({hint}expected "
                     f"{', '.join(sorted(QUERY_KEYS))})", line=lineno)


def _json_query(path: str, obj: dict, lineno: int) -> Query:
    _unknown_query_key(obj, path, lineno)
    id_key, qid = _pick(obj, QUERY_ID_KEYS)
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid:
        raise InputError(path, "field 'id' (or '_id', 'qid', 'query_id') must be a non-empty string", line=lineno)
    _, qtext = _pick(obj, QUERY_TEXT_KEYS, skip=id_key)
    if qtext is None:
        qtext = ""
    if not isinstance(qtext, str):
        raise InputError(path, "field 'text' must be a string", line=lineno)
    tags = obj.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InputError(path, "field 'tags' must be a list of strings", line=lineno)
    weight = obj.get("weight", 1.0)
    if (not isinstance(weight, (int, float)) or isinstance(weight, bool) or not math.isfinite(weight)
            or not 0 <= weight <= MAX_WEIGHT):
        raise InputError(path, f"field 'weight' must be a number from 0 to {MAX_WEIGHT:g}, found "
                         f"{shorten(json.dumps(weight))}",
                         line=lineno)
    if not isinstance(obj.get("notes", ""), str):
        raise InputError(path, "field 'notes' must be a string", line=lineno)
    return Query(qid, qtext, obj.get("notes", ""), tuple(tags), _bool(obj, "must_pass", path, lineno),
                 _bool(obj, "held_out", path, lineno), float(weight), _bool(obj, "no_answer", path, lineno))


_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_FIELD = re.compile(r"<(num|title|desc|narr)>(.*?)(?=<(?:num|title|desc|narr)>|\Z)", re.S | re.I)
_LABEL = re.compile(r"\A\s*(?:Number|Topic|Description|Narrative)\s*:", re.I)
_NUMBER_ATTR = re.compile(r"""\bnumber\s*=\s*["']?([^"'\s>]+)""", re.I)


def _clean(text: str) -> str:
    """A topic field's text on one line, without its label ("Number:", "Description:")."""
    return " ".join(ascii_fields(_LABEL.sub("", text)))


def _trec_topics(path: str, text: str) -> Iterator[tuple[int, Query]]:
    """TREC topic files: the classic <top> form and the <topic number=...> XML-like form."""
    found = False
    for m in _TOP.finditer(text):
        found = True
        lineno = _line_of(text, m.start())
        fields = {k.lower(): v for k, v in _FIELD.findall(m.group(1))}
        qid = _clean(fields.get("num", "")).split(" ")[0] if fields.get("num") else ""
        if not qid:
            raise InputError(path, "a <top> without a <num> (expected '<num> Number: 19335')", line=lineno)
        notes = "\n".join(_clean(fields[k]) for k in ("desc", "narr") if _clean(fields.get(k, "")))
        yield lineno, Query(qid, _clean(fields.get("title", "")) or _clean(fields.get("desc", "")), notes)
    for m in _TOPIC.finditer(text):
        found = True
        lineno = _line_of(text, m.start())
        num = _NUMBER_ATTR.search(m.group(1))
        if not num:
            raise InputError(path, "a <topic> without a number (expected <topic number=\"1\">)", line=lineno)
        body = m.group(2)
        tags = {t.lower(): _clean(v) for t, v in re.findall(r"<(query|title|description|narrative)>(.*?)</\1>",
                                                              body, re.S | re.I)}
        qtext = tags.get("query") or tags.get("title") or tags.get("description", "")
        notes = "\n".join(v for k in ("description", "narrative") if (v := tags.get(k)))
        yield lineno, Query(num.group(1), qtext, notes)
    if not found:
        raise InputError(path, "no topics found (expected <top> ... </top> or <topic number=...>)", line=1)


# ---- corpus -------------------------------------------------------------------------------------

def corpus_format(path: str) -> str:
    """'jsonl', 'trec' (<DOC>) or 'tsv', from the first bytes of the file."""
    from rankgate.core.formats.textio import open_input

    with open_input(path) as f:
        try:
            head = f.read(4096)
        except Exception as e:  # a broken gzip stream
            raise InputError(path, f"cannot read compressed data ({e})") from None
    return query_format(head.decode("utf-8", errors="replace").lstrip("\ufeff"))  # the same first-character rule


def read_corpus(path: str | Path, wanted: Container[str] | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict[str, Document]:
    """The documents of a corpus file (JSONL, TSV or TREC <DOC>; gzipped or not), by ID.

    With `wanted`, only those documents are kept (the rest are read past); `progress(done, total)`
    reports the bytes of the file read so far."""
    path = str(path)
    if is_irds(path):
        from rankgate.core.formats.irds import read_irds_corpus

        return {d: Document(*fields) for d, fields in read_irds_corpus(path, wanted, progress).items()}
    kind = corpus_format(path)
    out: dict[str, Document] = {}
    if kind == "trec":
        docs = _trec_doc_stream(path, progress)
    else:
        docs = _line_docs(path, kind, wanted, progress)
    for lineno, doc in docs:
        if wanted is None or doc.id in wanted:
            if doc.id in out:
                raise InputError(path, f"document ID {doc.id!r} appears a second time (expected each ID once)",
                                 line=lineno)
            out[doc.id] = doc
    return out


def _line_docs(path: str, kind: str, wanted, progress) -> Iterator[tuple[int, Document]]:
    for first, block in iter_blocks(path, progress):
        for lineno, raw in numbered_lines(block, first):
            if not raw.strip(ASCII_SPACE):
                continue
            if kind == "tsv":
                doc = _tsv_doc(path, raw, lineno)
            else:
                if wanted is not None and not _may_be_wanted(raw, wanted):
                    continue
                doc = _json_doc(path, json_line(path, raw, lineno, strict=False), lineno)
            yield lineno, doc


_JSON_ID = re.compile(r'"(?:docid|_id|id|doc_id|docno)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _may_be_wanted(raw: str, wanted) -> bool:
    """False only when the line's ID is plainly not wanted (a cheap look before parsing the JSON)."""
    ids = _JSON_ID.findall(raw)
    return len(ids) != 1 or "\\" in ids[0] or ids[0] in wanted


def _json_doc(path: str, obj: dict, lineno: int) -> Document:
    _, did = _pick(obj, DOC_ID_KEYS)
    if isinstance(did, int) and not isinstance(did, bool):
        did = str(did)
    if not isinstance(did, str) or not did:
        raise InputError(path, "field 'docid' (or '_id', 'id') must be a non-empty string", line=lineno)
    title = obj.get("title", "")
    _, text = _pick(obj, DOC_TEXT_KEYS)
    text = "" if text is None else text
    if title is None:
        title = ""
    if not isinstance(title, str) or not isinstance(text, str):
        raise InputError(path, "fields 'title' and 'text' must be strings", line=lineno)
    return Document(did, title, text)


def _tsv_doc(path: str, raw: str, lineno: int) -> Document:
    parts = raw.split("\t")
    did = parts[0].strip(ASCII_SPACE)
    if len(parts) < 2 or not did:
        raise InputError(path, "expected 'docid<TAB>text' (or docid, title, text), JSON lines or TREC <DOC>",
                         line=lineno)
    if len(parts) == 2:
        return Document(did, "", parts[1])
    if len(parts) == 3:
        return Document(did, parts[1], parts[2])
    return Document(did, parts[2], "\t".join(parts[3:]))  # docid, url, title, body (MS MARCO documents)


_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.S | re.I)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_TITLE = re.compile(r"<(TITLE|HEADLINE|HEAD)>(.*?)</\1>", re.S | re.I)
_TEXT = re.compile(r"<TEXT>(.*?)</TEXT>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")


def _trec_doc_stream(path: str, progress=None) -> Iterator[tuple[int, Document]]:
    """The <DOC>s of a TREC corpus, read block by block: memory holds a block and one unfinished <DOC>."""
    from rankgate.core.formats.textio import MAX_DOCUMENT

    rest, rest_line, found = "", 1, False
    for first, block in iter_blocks(path, progress):
        text = rest + block if rest else block
        start = rest_line if rest else first
        end = text.lower().rfind("</doc>")
        if end < 0:
            rest, rest_line = text, start
            if len(rest) > MAX_DOCUMENT:
                raise InputError(path, f"a <DOC> longer than {MAX_DOCUMENT >> 20} MiB (no </DOC> after it)",
                                 line=start)
            continue
        end += len("</doc>")
        for lineno, doc in _trec_docs(path, text[:end], start, need=False):
            found = True
            yield lineno, doc
        rest, rest_line = text[end:], start + text.count("\n", 0, end)
    if not found:
        raise InputError(path, "no documents found (expected <DOC> <DOCNO>...</DOCNO> ... </DOC>)", line=1)


def _trec_docs(path: str, text: str, first_line: int = 1,
               need: bool = True) -> Iterator[tuple[int, Document]]:
    found = False
    lineno, pos = first_line, 0
    for m in _DOC.finditer(text):
        found = True
        lineno, pos = lineno + text.count("\n", pos, m.start()), m.start()
        body = m.group(1)
        no = _DOCNO.search(body)
        if no is None or not no.group(1):
            raise InputError(path, "a <DOC> without a <DOCNO>", line=first_line - 1 + _line_of(text, m.start()))
        title = _TITLE.search(body)
        texts = _TEXT.findall(body)
        rest = " ".join(texts) if texts else body[no.end():]
        yield lineno, Document(no.group(1), " ".join(ascii_fields(_TAG.sub(" ", title.group(2)))) if title else "",
                               _TAG.sub("", rest).strip(ASCII_SPACE))
    if need and not found:
        raise InputError(path, "no documents found (expected <DOC> <DOCNO>...</DOCNO> ... </DOC>)", line=1)
