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
    if len(first.split("\t")) == 2 and not looks_like_beir(first):
        return "queries"
    return "qrels"
