"""TREC qrels (`qid iter docid grade`) and TREC runs (`qid Q0 docid rank score tag`).

Lines starting with `#` are comments; a `#` inside an ID is part of the ID.
Runs keep trec_eval's order: score descending, ties by document id descending;
the rank column is read for shape only and otherwise ignored.
"""

from __future__ import annotations

import math
import re
from array import array
from pathlib import Path

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import (JudgmentRows, field_splitter, iter_blocks, numbered_lines, parse_grade,
                                          plain_spaces, shorten)
from rankgate.core.model import Catalog, Qrels, Run, unique
from rankgate.core.text import LazyPattern, visible


def read_trec_qrels(path: str | Path, catalog: Catalog | None = None) -> Qrels:
    path = str(path)
    catalog = catalog or Catalog()
    rows = JudgmentRows(path, catalog)
    meta: dict = {}
    for first, block in iter_blocks(path):  # streamed: memory holds one block and what is kept
        fields = field_splitter(block)
        for lineno, raw in numbered_lines(block, first):
            parts = fields(raw)
            if not parts:
                continue
            if parts[0].startswith("#"):
                _comment_meta(raw, meta)
                continue
            if len(parts) != 4:
                raise InputError(path, f"{len(parts)} columns, expected 4: query iteration document grade"
                                 + (_queries_hint(raw) or qrels_line_hint(parts)), line=lineno)
            try:
                grade = parse_grade(parts[3], path, lineno)
            except InputError as e:
                e.what += _queries_hint(raw)
                raise
            rows.add(parts[0], parts[2], grade, lineno)
    return rows.qrels("trec", meta=meta)


def qrels_line_hint(parts: list[str]) -> str:
    """What a qrels line of the wrong width most likely is: a run (the two files swapped), or BEIR's qrels
    without their header line."""
    if len(parts) == 6 and parts[1].upper() == "Q0":
        return "; this looks like a run (6 columns, Q0): are the qrels and the run swapped?"
    if len(parts) == 3:
        return ("; 3 columns is BEIR's qrels layout: give the file its header line "
                "query-id<TAB>corpus-id<TAB>score, or write TREC's 4 (query 0 document grade)")
    return ""


def run_line_hint(parts: list[str]) -> str:
    """A run line of 4 columns whose last is a whole number: qrels (the two files swapped)."""
    if len(parts) == 4 and parts[1] in ("0", "Q0") and parts[3].lstrip("-").isdigit():
        return "; this looks like qrels (4 columns: query iteration document grade): are the qrels and the run swapped?"
    return ""


def _queries_hint(line: str) -> str:
    """A qrels line that reads `id<TAB>text` is a queries (topics) file given as qrels: say so."""
    cols = line.split("\t")
    if len(cols) == 2 and cols[1].split()[:1] in (["0"], ["Q0"]):  # `1<TAB>0 d1 1`: trec_eval's iteration column
        return ""
    if len(cols) == 2 and cols[0].strip() and any(c.isalpha() for c in cols[1]):
        return ("; this looks like a queries file (2 tab-separated columns, text in the second): "
                "give it with --queries")
    return ""


def _comment_meta(line: str, meta: dict) -> None:
    """`# key: value` header lines, as rankgate's exports write them."""
    body = line.lstrip("#").strip()
    key, sep, value = body.partition(":")
    if sep and key and " " not in key.strip():
        meta[key.strip()] = value.strip()


def read_trec_run(path: str | Path, name: str | None = None, catalog: Catalog | None = None,
                  progress=None) -> Run:
    """A TREC run file, streamed in blocks; a regular block is parsed column-wise."""
    path = str(path)
    catalog = catalog or Catalog()
    name = name or run_name_from_path(path)
    qparts, dparts, sparts, wparts = [], [], [], []
    declared: dict[int, None] = {}
    for first_line, block in iter_blocks(path, progress):
        cols = _fast_block(block, first_line, catalog)
        if cols is None:
            cols = _slow_block(block, first_line, catalog, path)
        q, d, s, w = cols
        qparts.append(q)
        dparts.append(d)
        sparts.append(s)
        wparts.append(w)
        declared.update(dict.fromkeys(unique(q).tolist()))
    q = np.concatenate(qparts) if qparts else np.zeros(0, np.int32)
    return Run(name, path, catalog, q,
               np.concatenate(dparts) if dparts else np.zeros(0, np.int32),
               np.concatenate(sparts) if sparts else np.zeros(0, np.float64),
               np.concatenate(wparts) if wparts else np.zeros(0, np.int64),
               format="trec", query_codes=_first_seen_order(q, declared))


def _first_seen_order(q: np.ndarray, declared: dict) -> list[int]:
    if not len(q):
        return []
    uniq, first = np.unique(q, return_index=True)
    return uniq[np.argsort(first, kind="stable")].tolist()


# A score as C's strtod reads it whole (trec_eval): ASCII digits, an optional point and exponent; also
# inf and nan, which the caller refuses by name. Python's float() would take "1_5" as 15 and "٣" as 3.
SCORE = LazyPattern(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z|[+-]?(?:inf|infinity|nan)\Z", re.I)


def _plain_numbers(scores: list[str]) -> bool:
    """True when float() reads every score as strtod would: no "_", only ASCII (else the slow path checks each)."""
    joined = "".join(scores)
    return joined.isascii() and "_" not in joined


def _fast_block(block: str, first_line: int, catalog: Catalog):
    """Column-wise parse when every line has exactly six fields and no comments; else None."""
    if block.startswith("#") or "\n#" in block or not plain_spaces(block):
        return None
    lines = block.count("\n") + (0 if block.endswith("\n") else 1)
    toks = block.split()
    n = len(toks) // 6
    if len(toks) != 6 * lines or n == 0:
        return None
    # A line with too few or too many fields shifts every later column: constant
    # iteration and tag columns rule that out.
    iters, tags = toks[1::6], toks[5::6]
    if iters.count(iters[0]) != n or tags.count(tags[0]) != n:
        return None
    score_text = toks[4::6]
    if not _plain_numbers(score_text):
        return None  # the slow path names the line
    try:
        scores = np.fromiter(map(float, score_text), np.float64, count=n)
    except ValueError:
        return None
    if not np.isfinite(scores).all():
        return None
    q = catalog.queries.extend(toks[0::6])
    d = catalog.docs.extend(toks[2::6])
    where = np.arange(first_line, first_line + n, dtype=np.int64)
    return q, d, scores, where


def _slow_block(block: str, first_line: int, catalog: Catalog, path: str):
    qcode, dcode = catalog.queries.code, catalog.docs.code
    qs, ds, ss, ws = array("i"), array("i"), array("d"), array("q")
    fields = field_splitter(block)
    for lineno, raw in numbered_lines(block, first_line):
        parts = fields(raw)
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) > 6 and "\r" in raw:  # "d2 2 2 t\rq1 Q0 d3 3 1 t": the next line's document, lost as extra fields
            raise InputError(path, f"{len(parts)} columns, with a carriage return (CR) inside the line: the file mixes "
                             "line ends (LF or CRLF, or CR alone throughout); save it with one kind", line=lineno)
        if len(parts) < 6:
            raise InputError(path, f"{len(parts)} columns, expected 6: query Q0 document rank score tag"
                             + (run_line_hint(parts) or _queries_hint(raw)), line=lineno)
        try:
            if not SCORE.match(parts[4]):
                raise ValueError
            score = float(parts[4])
        except ValueError:
            raise InputError(path, f"score {shorten(parts[4])} is not a number (column 5; expected a plain decimal "
                             "number such as 12.5, -3 or 1e-05)", line=lineno) from None
        if not math.isfinite(score):
            raise InputError(path, f"score {shorten(parts[4])} is not a finite number (column 5)", line=lineno)
        qs.append(qcode(parts[0]))
        ds.append(dcode(parts[2]))
        ss.append(score)
        ws.append(lineno)
    return (np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
            np.frombuffer(ss, np.float64).copy(), np.frombuffer(ws, np.int64).copy())


def run_name_from_path(path: str) -> str:
    name = Path(path).name
    for suffix in (".gz", ".trec", ".txt", ".run", ".jsonl", ".json", ".tsv"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or Path(path).name


def format_trec_qrels(rows, header: dict | None = None) -> str:
    """rows: iterable of (qid, docid, grade). Header fields become `# key: value` lines."""
    out = [f"# {k}: {visible(v)}\n" for k, v in (header or {}).items()]  # a value never starts a line
    out.extend(f"{q} 0 {d} {g}\n" for q, d, g in rows)
    return "".join(out)
