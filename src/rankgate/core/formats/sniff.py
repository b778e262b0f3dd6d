"""What an input file holds, from its first bytes: its format, and whether it is queries or qrels."""

from __future__ import annotations

import json
import os

from rankgate.core.errors import InputError
from rankgate.core.formats.beir import looks_like_beir
from rankgate.core.formats.textio import open_input

HEAD = 65536  # bytes read to decide


def detect_format(path: str) -> str:
    """'json', 'jsonl', 'beir' or 'trec' from the first bytes of the file ('empty' when it has none)."""
    with open_input(path) as f:
        try:
            head = f.read(HEAD)
        except Exception as e:  # a broken gzip stream
            raise InputError(path, f"cannot read compressed data ({e})") from None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped:
        return "empty"
    if stripped.startswith("{"):
        if path.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            return "jsonl"
        first = stripped.split("\n", 1)[0].strip()
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):  # a cut line, or one nested too deeply: the reader says which
            return "json"
        # A whole object on the first line is JSON lines when more lines follow, or
        # when it is one record (a "query" line, or a lone {"meta": ...} header).
        if isinstance(obj, dict) and ("\n" in stripped.strip() or "query" in obj or set(obj) == {"meta"}):
            return "jsonl"
        return "json"
    if stripped.startswith("["):
        return "json"
    if looks_like_beir(text.split("\n", 1)[0]):
        return "beir"
    return "trec"


def detect_kind(path: str | os.PathLike) -> str:
    """'queries' for a query file (JSONL with id/text, or qid<TAB>text); 'qrels' otherwise."""
    if str(path).startswith("irds:"):
        return "qrels"
    with open_input(str(path)) as f:
        try:
            head = f.read(HEAD)
        except Exception:
            return "qrels"  # let the qrels reader report the broken file
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    if first.startswith("{"):
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):  # a cut line, or one nested too deeply: the reader says which
            return "qrels"
        if isinstance(obj, dict) and not ({"doc", "grade", "meta"} & set(obj)) and ({"id", "text", "notes"} & set(obj)):
            return "queries"
        return "qrels"
    if len(first.split("\t")) == 2 and not looks_like_beir(first) and not _trec_judgments(text, len(head) == HEAD):
        return "queries"
    return "qrels"


def _trec_judgments(text: str, cut: bool) -> bool:
    """Lines that trec_eval reads as qrels (`query iteration document grade`, split at any whitespace), though
    the first has one tab, as `qid<TAB>text` has: every line four fields with a whole-number grade, and some line
    not split by one tab (tabs and spaces mixed), or every iteration column `0` or `Q0`."""
    lines = [ln for ln in text.split("\n")[: -1 if cut else None] if ln.strip() and not ln.startswith("#")]
    fields = [ln.split() for ln in lines]
    if not fields or any(len(f) != 4 or not f[3].lstrip("-").isdigit() for f in fields):
        return False
    return any(ln.count("\t") != 1 for ln in lines) or all(f[1] in ("0", "Q0") for f in fields)


MAX_JSON_SNIFF = 64 << 20  # a JSON file larger than this is not read whole to see whether it holds judgments


def holds_judgments(path: str | os.PathLike) -> bool:
    """Whether an existing file holds qrels (what `labels export` writes, with or without its header) or
    nothing: what an export may replace without --force. From its first HEAD bytes (a JSON document of
    at most MAX_JSON_SNIFF bytes is read whole): every line a TREC judgment `query iteration document
    grade` (comments allowed), JSONL judgments, BEIR qrels, or JSON of query IDs to document lists or
    grades. A run, a queries file, a store, a text or anything unreadable is not."""
    from rankgate.core.formats.textio import ascii_fields

    path = str(path)
    try:
        fmt = detect_format(path)
        if fmt == "empty":
            return True
        with open_input(path) as f:
            head = f.read(HEAD + 1)
    except (InputError, OSError, EOFError, ValueError):
        return False
    if fmt == "json":
        return _json_judgments(path)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if len(head) > HEAD:  # only whole lines
        head = head[: head.rfind(b"\n") + 1]
    try:
        lines = [line for line in head.decode("utf-8").split("\n") if line.strip()]
    except UnicodeDecodeError:
        return False
    if fmt == "beir":
        return True
    if fmt == "jsonl":
        for line in lines:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return False
            if not isinstance(obj, dict) or not ({"query", "doc", "grade"} <= set(obj) or set(obj) == {"meta"}):
                return False
        return True
    judgments = [ascii_fields(line) for line in lines if not line.lstrip().startswith("#")]
    return all(len(f) == 4 and f[3].lstrip("+-").isdigit() for f in judgments)


def _json_judgments(path: str) -> bool:
    from rankgate.core.formats.jsonfmt import load_json

    try:
        if os.path.getsize(path) > MAX_JSON_SNIFF:
            return False
        data = load_json(path)
    except (InputError, OSError):
        return False
    if isinstance(data, dict) and set(data) == {"meta", "qrels"}:
        data = data["qrels"]
    return isinstance(data, dict) and all(
        isinstance(v, list) and all(isinstance(d, str) for d in v)
        or isinstance(v, dict) and all(isinstance(g, int) and not isinstance(g, bool) for g in v.values())
        for v in data.values())
