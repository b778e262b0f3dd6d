"""Reading input files: gzip by magic bytes, strict UTF-8, BOM, errors with line numbers."""

from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path
from typing import Iterator

from rankgate.core.errors import InputError, LongId
from rankgate.core.text import LazyPattern
# the guarded opener's home is core/infile.py (trec_eval reads through it without the formats package)
from rankgate.core.infile import (  # noqa: F401
    GUNZIP_FREE, MAX_GUNZIP, MAX_RATIO, _special, cr_only, open_input, open_regular,
    MAX_LINE as _INFILE_MAX_LINE,
    read_whole_latin1,
)

BLOCK = 8 << 20  # bytes per block when streaming large text files
INTEGER = LazyPattern(r"[+-]?[0-9]+\Z")


MAX_LINE = _INFILE_MAX_LINE  # the longest line any line-by-line reader takes (bytes); docs/formats.md "Limits"
MAX_DOCUMENT = 256 << 20  # the largest file read whole (a JSON document, TREC topics), after gunzip
MAX_TOML = 8 << 20  # the largest benchmark.toml or policy file
LEAN_ALLOCATOR = False  # set by the command line's lean reads (cli/evaluate.py): see trec_fast.lean_allocator
_MIB = 1 << 20


def _decode(data: bytes, path: str, first_line: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        raise InputError(path, "invalid UTF-8 text (expected a UTF-8 encoded text file)", line=line) from None


def _too_big(path: str, limit: int, what: str) -> InputError:
    return InputError(path, f"larger than {limit // _MIB} MiB, the most rankgate reads whole as {what} "
                      "(docs/formats.md, Limits)")


def _gzipped(f) -> bool:
    """Whether open_input gave a gzip file (gzip is imported for the first one: none before it)."""
    gz = sys.modules.get("gzip")
    return gz is not None and isinstance(f, gz.GzipFile)


def __getattr__(name: str):  # textio.BoundedGzip, as before (core/infile.py makes it for the first gzip file)
    if name == "BoundedGzip":
        from rankgate.core.infile import bounded_gzip

        return bounded_gzip()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def read_text(path: str | Path, limit: int = MAX_DOCUMENT, what: str = "one document") -> str:
    """The whole file as text (gz transparently), without a byte-order mark; a file (or its gunzipped
    contents) larger than `limit` bytes is refused without being read whole."""
    path = str(path)
    with open_input(path) as f:
        if not _gzipped(f) and os.fstat(f.fileno()).st_size > limit:
            raise _too_big(path, limit, what)
        try:
            data = f.read(limit + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(path, f"cannot read compressed data ({e})") from None
    if len(data) > limit:
        raise _too_big(path, limit, what)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data[:8192]:
        raise InputError(path, "binary data (a NUL byte), expected a text file", line=1 + data.count(b"\n", 0, data.index(b"\x00")))
    if cr_only(data[:BLOCK]):  # CR line ends are line ends, never one long line
        data = data.replace(b"\r", b"\n")
    return _decode(data, path, 1)


def find_line(path: str, needle: str) -> int | None:
    """The number of the first line of the file holding `needle` (for an error found after reading);
    None when it cannot be found."""
    try:
        for first, block in iter_blocks(path):
            at = block.find(needle)
            if at >= 0:
                return first + block.count("\n", 0, at)
    except InputError:
        return None
    return None


class naming_ids:
    """`with naming_ids(path):` around a reader: an ID too long (LongId, raised where IDs are interned) is
    named with this file and the line that holds it."""

    def __init__(self, path):
        self.path = str(path)

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if isinstance(e, LongId) and e.path == "an ID":
            raise LongId(e.name, self.path, find_line(self.path, e.name[:200])) from None
        return False


def _line_too_long(path: str, line: int) -> InputError:
    return InputError(path, f"a line longer than {MAX_LINE // _MIB} MiB (the longest line rankgate reads; "
                      "docs/formats.md, Limits)", line=line)


def iter_blocks(path: str | Path, progress=None) -> Iterator[tuple[int, str]]:
    """Stream the file as (first line number, text) blocks that end on a line break.

    `progress(done_bytes, total_bytes)` is called after each block (bytes of the file
    on disk, so a gzipped file reports its compressed position). A line longer than
    MAX_LINE bytes is refused as soon as it is seen (memory stays bounded by it).
    """
    path = str(path)
    line = 1
    pending: list[bytes] = []  # the pieces of a line that has not ended yet
    pending_size = 0
    first = True
    cr = False  # CR-only line ends: each CR is read as a line end
    with open_input(path) as f:
        raw = getattr(f, "fileobj", f)
        total = os.fstat(raw.fileno()).st_size
        while True:
            if progress is not None:
                progress(raw.tell(), total)
            try:
                data = f.read(BLOCK)
            except (OSError, EOFError, zlib.error) as e:
                raise InputError(path, f"cannot read compressed data ({e})") from None
            if first:
                if data.startswith(b"\xef\xbb\xbf"):
                    data = data[3:]
                if b"\x00" in data[:8192]:
                    raise InputError(path, "binary data (a NUL byte), expected a text file",
                                     line=1 + data.count(b"\n", 0, data.index(b"\x00")))
                cr = cr_only(data)
                first = False
            if cr:
                data = data.replace(b"\r", b"\n")
            if not data:
                break
            cut = data.rfind(b"\n")
            if cut < 0:
                pending.append(data)
                pending_size += len(data)
                if pending_size > MAX_LINE:
                    raise _line_too_long(path, line)
                continue
            block = b"".join([*pending, data[: cut + 1]]) if pending else data[: cut + 1]
            pending, pending_size = ([data[cut + 1:]], len(data) - cut - 1) if cut + 1 < len(data) else ([], 0)
            if len(block) > MAX_LINE and block.find(b"\n") > MAX_LINE:
                raise _line_too_long(path, line)
            yield line, _decode(block, path, line)
            line += block.count(b"\n")
    if pending:
        yield line, _decode(b"".join(pending), path, line)


def iter_lines(path: str | Path, progress=None) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of the file, streamed block by block (see iter_blocks):
    memory holds one block, never the whole file."""
    for first, block in iter_blocks(path, progress):
        if block.endswith("\n"):
            block = block[:-1]
        yield from numbered_lines(block, first)


# Records end at "\n" only (a "\r" before it is dropped): str.splitlines() would also end them at
# U+0085, U+2028, U+2029, form feed, vertical tab and \x1c-\x1e, which real texts hold.
def numbered_lines(text: str, first: int = 1) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line of `text`, split on "\n" (and "\r\n") only."""
    for lineno, raw in enumerate(text.split("\n"), first):
        yield lineno, raw[:-1] if raw.endswith("\r") else raw


ASCII_SPACE = " \t\n\r\v\f"  # what trec_eval (C isspace) splits fields on
_FIELDS = LazyPattern(r"[ \t\n\r\v\f]+")
# Characters str.split() treats as spaces that trec_eval does not (ASCII and beyond).
_ODD_SPACE = LazyPattern("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def ascii_fields(line: str) -> list[str]:
    """The whitespace-separated fields of a line, split on ASCII whitespace only (as trec_eval does)."""
    line = line.strip(ASCII_SPACE)
    return _FIELDS.split(line) if line else []


def plain_spaces(text: str) -> bool:
    """True when str.split() splits `text` exactly as ascii_fields does (no other space characters)."""
    if text.isascii():
        return not any(c in text for c in "\x1c\x1d\x1e\x1f")
    return _ODD_SPACE.search(text) is None


def field_splitter(text: str):
    """The fastest correct field splitter for the lines of `text`."""
    return str.split if plain_spaces(text) else ascii_fields


def parse_grade(token: str, path: str, line: int | None, where: str | None = None) -> int:
    """An integer grade; 1.5, 0x37, 1e+8 and 1.1.11 are refused, never truncated."""
    if not INTEGER.match(token):
        raise InputError(path, f"grade {shorten(token)} is not an integer (expected a whole number such as 0, 1, 2 or -1)",
                         line=line, where=where)
    return int(token)


def shorten(text: str, width: int = 60) -> str:
    text = repr(text)
    return text if len(text) <= width else text[: width - 3] + "..."


class JudgmentRows:
    """Collects one reader's judgments: one grade per (query, document), in file order."""

    def __init__(self, path: str, catalog):
        from array import array

        self.path, self.catalog = path, catalog
        self.qs, self.ds, self.gs = array("i"), array("i"), array("q")
        self.seen: dict[tuple[int, int], int] = {}
        self.declared: dict[int, None] = {}

    def add(self, qid: str, doc: str, grade: int, line: int) -> None:
        from rankgate.core.model import grade_problem

        if (why := grade_problem(grade)) is not None:
            raise InputError(self.path, why, line=line)
        q, d = self.catalog.queries.code(qid), self.catalog.docs.code(doc)
        first = self.seen.get((q, d))
        if first is not None:
            raise InputError(self.path, f"duplicate judgment of {shorten(doc)} for query {shorten(qid)} "
                             f"(first at line {first}); expected one grade per query and document", line=line)
        self.seen[(q, d)] = line
        self.declared[q] = None
        self.qs.append(q)
        self.ds.append(d)
        self.gs.append(grade)

    def qrels(self, fmt: str, **extra):
        import numpy as np

        from rankgate.core.model import Qrels

        return Qrels(self.path, self.catalog, np.frombuffer(self.qs, np.int32).copy(),
                     np.frombuffer(self.ds, np.int32).copy(), np.frombuffer(self.gs, np.int64).copy(),
                     list(self.declared), format=fmt, **extra)


# The keys a ranking line and a ranked item may have; any other is refused, so a misspelt "latency_ms"
# cannot silently leave a budget rule without its numbers ("stage": formats/staged.py).
RUN_LINE_KEYS = frozenset(("query", "ranking", "latency_ms", "context_tokens", "stage"))
RUN_ITEM_KEYS = frozenset(("doc", "score"))


def unknown_key(obj: dict, known: frozenset, what: str, path: str, lineno: int) -> None:
    """Refuse the first key of `obj` not in `known`, with a "did you mean" when one is close."""
    key = next((k for k in obj if k not in known), None)
    if key is None:
        return
    import difflib

    close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise InputError(path, f"unknown key {shorten(str(key))} in {what} ({hint}expected "
                     f"{', '.join(sorted(known))})", line=lineno)
