"""BEIR qrels: a TSV with a header line `query-id  corpus-id  score`."""

from __future__ import annotations

from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import JudgmentRows, iter_lines, numbered_lines, parse_grade
from rankgate.core.model import Catalog, Qrels

HEADER = ("query-id", "corpus-id", "score")


def looks_like_beir(first_line: str) -> bool:
    return tuple(first_line.strip().split("\t")[:2]) == HEADER[:2]


def read_beir_qrels(path: str | Path, catalog: Catalog | None = None, text: str | None = None) -> Qrels:
    path = str(path)
    catalog = catalog or Catalog()
    lines = iter_lines(path) if text is None else numbered_lines(text)
    _, head = next(lines, (1, ""))
    if not looks_like_beir(head):
        raise InputError(path, "expected the header 'query-id<TAB>corpus-id<TAB>score'", line=1)
    rows = JudgmentRows(path, catalog)
    for lineno, raw in lines:
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 3:
            raise InputError(path, f"{len(parts)} tab-separated columns, expected 3: query-id corpus-id score",
                             line=lineno)
        qid, doc = parts[0].strip(), parts[1].strip()
        if not qid or not doc:
            raise InputError(path, "empty query or document ID", line=lineno)
        rows.add(qid, doc, parse_grade(parts[2].strip(), path, lineno), lineno)
    return rows.qrels("beir")
