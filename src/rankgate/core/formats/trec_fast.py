"""The fast TREC reader: the compiled fast path for large TREC runs (`rankgate score`, `gate`,
`compare`, `validate`), used when pyarrow is installed and the file is 1 MB or more.

What it does differently from the general reader, with the same results:
- the file is read in blocks of BLOCK bytes, each parsed by pyarrow's CSV reader
  (one space between fields; a tab, CR, VT, FF, NUL, empty field, comment or
  blank line sends the whole file to the general reader, which names any fault);
  scoring parses only the query, document and score columns (`_lean_table`);
- what is kept of a block is its judged rows (query, document, rank) and the
  count of lines per query, so memory stays bounded when each query's lines are
  together, as retrievers write them; of a file whose queries are scattered,
  each row's query, score and hash are kept (20 bytes a line), its document ID
  found again in the file only where needed (ties with a judged row, duplicates;
  a gzipped file's document IDs go to a temporary file); past HOLD_AT bytes kept, the rows go to partitions by
  query on disk, settled one at a time, so memory stays bounded for any file
  (with no room on disk, all is kept in memory); `keep_top` also keeps each
  ranking's top rows (the gate's review queue; its scattered rows are sorted by
  query, in memory up to SPILL_AT bytes of file, else through partitions);
- only query IDs are interned, once per stretch of a query's lines; a document is
  looked up among the judged ones;
- duplicates are found by a 64-bit hash of (query, document) (hash_strings), confirmed exactly;
  the hash is unkeyed, so IDs crafted to share one are matched by name past a few alike (_each_match,
  _HashTable.find), never tried one against each;
- grouped rows are sorted only when not already in trec_eval order; scattered rows are
  not sorted at all: a judged row's rank is counted (the rows of its query with a
  higher score, `_settle_unsorted`); score ties are settled by document ID bytes,
  descending, among the tied rows only.
It returns a `LeanRun` (core.model), which the engine scores (`engine.prepare_lean`) and
core.validate checks (`validate_lean`).
"""

from __future__ import annotations

import os
import weakref
from itertools import repeat
from typing import NamedTuple

import numpy as np

from rankgate.core.errors import InputError
from rankgate.core.formats import textio
from rankgate.core.model import Catalog, LeanRun, Qrels, Run, field_token, is_later, later, unique

BLOCK = 4 << 20  # bytes read and parsed at a time; memory stays near a few blocks (16 MB blocks: 2M lines
#                 peaked at 330 MB, 4 MB blocks at 180 MB, and took less CPU: the blocks stay in the caches)
MIN_BYTES = 1 << 20  # smaller files take the general reader: importing pyarrow would cost more


def available() -> bool:
    """pyarrow is installed (found, not imported: a command on small files should not pay for it)."""
    from importlib.util import find_spec

    return find_spec("pyarrow") is not None


# Bytes str.split() treats as separators but a one-space delimiter does not.
_NOT_PLAIN = (b"\t", b"\r", b"\v", b"\f", b"\x00")


class NotPlain(Exception):
    """The file is not regular enough for the fast path: the general reader reads it and names any fault."""


class _Ungrouped(Exception):
    """A query's lines are not all in one block of the file."""


class _Reader:
    """Parses a plain TREC file block by block (pyarrow's CSV reader on each block)."""

    def __init__(self, path: str, qrels: Qrels | None, progress=None, jobs: int = 1, by_pair: bool = False):
        self.path, self.progress, self.jobs = path, progress, max(1, jobs)
        self.qindex: dict[str, int] = {}
        self.qnames: list[str] = []
        self.known = _Names(self.qnames)  # for blocks that name many queries (_interned)
        self.columns_here = False  # see blocks()
        self.spans: list[tuple[int, int]] = []  # each block's (offset, bytes) in the file, in file order
        self.identity = None  # the file as it was opened (_identity)
        self.judged = None
        if qrels is None:  # read_full_columns: every document is kept
            return
        lean_allocator()
        self.judged_codes, self.judged = _judged_lookup(qrels, by_pair)

    def blocks(self):
        """(row of the first line, qcode, score, judged, key, docs) per block, in file order. The next
        block is read, parsed by pyarrow, hashed and looked up in a second thread (one block after
        another, so the query index grows in file order) while this one is settled (numpy and
        pyarrow release the GIL), so reading and the rest overlap. With `columns_here` (set by a
        caller with little to do per block: a scattered file), the second thread only reads and
        parses, and the hash and lookup are done in the caller's thread, beside it (still in file order)."""
        from concurrent.futures import ThreadPoolExecutor

        if self.jobs > 1 and self.judged is not None:
            yield from self._blocks_at_once()
            return
        raw = self._source()

        def step():
            block = next(raw, None)
            if block is None:
                return None
            tbl = block if isinstance(block, _Keyed) else self._table(block) if self.judged is None \
                else self._lean_table(block)
            return tbl if self.columns_here else self._columns(tbl)

        total, row0 = os.path.getsize(self.path), 0
        with ThreadPoolExecutor(1, thread_name_prefix="rankgate-read") as pool:
            ahead = pool.submit(step)
            try:
                while (parsed := _result(ahead, row0)) is not None:
                    ahead = pool.submit(step)
                    if not isinstance(parsed, tuple):  # a table: its columns here, beside the next block's parsing
                        parsed = self._columns(parsed)
                    yield (row0, *parsed)
                    row0 += len(parsed[0])
                    if self.progress:
                        self.progress(self.done, total)
            finally:
                ahead.cancel()
        if not row0:
            raise NotPlain  # an empty file: the general reader says so

    def _blocks_at_once(self):
        """blocks() with `jobs` blocks parsed, hashed and looked up at once, each in a thread of its own
        (pyarrow and numpy release the GIL); only the query IDs are interned here, block after block in
        file order, so every code and row is what one thread gives."""
        import threading
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        raw, lock, taken = self._source(), threading.Lock(), [0]

        def work():
            with lock:  # blocks are handed out in file order, each its own copy of the bytes
                seq = taken[0]
                taken[0] += 1
                try:
                    block = next(raw, None)
                    if block is not None and not isinstance(block, _Keyed):  # (parsed early already)
                        block = bytes(block)
                    done = self.done
                except LineTooLong as e:
                    return seq, e, 0
            if block is None:
                return seq, None, done
            try:
                tbl = block if isinstance(block, _Keyed) else self._lean_table(block)
                return seq, self._local_columns(tbl), done
            except (NotPlain, LineTooLong) as e:
                return seq, e, done

        total, row0, want, ready = os.path.getsize(self.path), 0, 0, {}
        with ThreadPoolExecutor(self.jobs, thread_name_prefix="rankgate-read") as pool:
            running = {pool.submit(work) for _ in range(self.jobs + 1)}
            try:
                while True:
                    while want not in ready:
                        finished, running = wait(running, return_when=FIRST_COMPLETED)
                        for f in finished:
                            seq, got, done = f.result()
                            ready[seq] = (got, done)
                    got, done = ready.pop(want)
                    want += 1
                    if isinstance(got, LineTooLong):
                        raise LineTooLong(row0 + 1)
                    if isinstance(got, Exception):
                        raise got
                    if got is None:
                        break
                    running.add(pool.submit(work))
                    parsed = self._interned(*got)
                    yield (row0, *parsed)
                    row0 += len(parsed[0])
                    if self.progress:
                        self.progress(done, total)
            finally:
                for f in running:
                    f.cancel()
        if not row0:
            raise NotPlain  # an empty file: the general reader says so

    def _source(self):
        """The file's blocks, as _raw_blocks gives them; a run's first blocks may come parsed and hashed
        already (_Keyed), by a thread read_early started while the qrels were read."""
        early = _EARLY.pop(_early_key(self.path), None) if self.judged is not None else None
        if early is None:
            yield from self._raw_blocks()
            return
        parsed, rest, first = early.take()
        self.identity, self.spans = first.identity, first.spans  # (the list its reading goes on adding to)
        for got, done in parsed:
            self.done = done
            if isinstance(got, Exception):
                raise got
            if got is None:
                return
            yield got
        for block in rest:  # the file read on where the early thread stopped
            self.done = first.done
            yield block

    def _raw_blocks(self):
        """The file's bytes in blocks of about BLOCK that end on a line break (gzip decompressed as it
        streams). One buffer serves every block: a block is parsed (pyarrow copies what it keeps)
        before the next is read, in the same thread, and fresh memory costs page faults."""
        carry, buf = b"", None
        self.done = 0
        start, self.spans = 0, []  # where the next block starts in the file (decompressed)
        with textio.open_regular(self.path) as raw:  # never a pipe the name became since it was sniffed
            self.identity = _identity(raw)
            head = raw.read(3)
            raw.seek(0)
            if head == b"\xef\xbb\xbf":
                raise NotPlain
            f = raw
            if head[:2] == b"\x1f\x8b":  # gzip: decompressed as it streams, block by block, under the bound
                from rankgate.core.formats.textio import BoundedGzip

                f = BoundedGzip(raw, self.path)
            size = BLOCK
            while True:
                need = max(size, len(carry) + BLOCK)
                if buf is None or len(buf) < need:
                    buf = bytearray(need)
                buf[:len(carry)] = carry
                try:
                    got = f.readinto(memoryview(buf)[len(carry):])
                except (EOFError, OSError, zlib_error()):
                    raise NotPlain from None  # a damaged gzip stream: the general reader says so
                end = len(carry) + got
                if not got:
                    if carry:
                        raise NotPlain  # no line break at the end
                    return
                cut = buf.rfind(b"\n", 0, end) + 1
                if not cut:  # one line longer than a block: read on, up to MAX_LINE
                    if end > MAX_LINE:
                        raise LineTooLong(0)  # blocks() knows the line
                    carry = memoryview(buf)[:end]
                    size = 2 * len(buf)
                    continue
                if any(buf.find(c, 0, cut) >= 0 for c in _NOT_PLAIN):  # memchr per byte
                    raise NotPlain
                carry = bytes(memoryview(buf)[cut:end])
                size = BLOCK
                self.done = raw.tell()
                self.spans.append((start, cut))
                start += cut
                yield memoryview(buf)[:cut]

    def _table(self, block):
        """The block's six columns (pyarrow's CSV reader), checked to be plain."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv

        # Q0, rank and tag are read as bytes, only to see that none is empty (a line of five
        # fields and a stray space must not pass as six); the rank need not be a number.
        try:
            tbl = pcsv.read_csv(pa.py_buffer(block), read_options=_csv_options()[0], parse_options=_csv_options()[1],
                                convert_options=pcsv.ConvertOptions(column_types={
                                    "q": pa.string(), "i": pa.binary(), "d": pa.string(), "r": pa.binary(),
                                    "s": pa.float64(), "t": pa.binary()}, strings_can_be_null=False))
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
            raise NotPlain from None  # not six fields, a score that is no number, bad UTF-8
        if tbl["s"].null_count or not len(tbl):
            raise NotPlain
        for col in ("i", "d", "r", "t"):
            if pc.min(pc.binary_length(tbl[col])).as_py() == 0:
                raise NotPlain  # an empty field
        if not _ascii(block):  # query and document are checked UTF-8 by pyarrow; Q0, rank and tag are bytes
            try:
                str(block, "utf-8")
            except UnicodeDecodeError:
                raise NotPlain from None
        return tbl

    def _lean_table(self, block):
        """The block's query, document and score columns (the scoring path), checked to be plain as
        _table checks all six: pyarrow's CSV reader still counts six fields a line, and an empty field
        shows as two spaces in a row or a space before a line break (an empty query or score is seen
        in its column). Query and document are read as bytes (no UTF-8 check per value: the block is
        checked once) and viewed as strings. Three columns, not six: 25% less parsing. Returns the
        columns by name (q, d, s)."""
        import pyarrow as pa
        import pyarrow.csv as pcsv

        if _empty_field(block):
            raise NotPlain
        try:
            tbl = pcsv.read_csv(pa.py_buffer(block), read_options=_csv_options()[0], parse_options=_csv_options()[1],
                                convert_options=pcsv.ConvertOptions(
                                    include_columns=["q", "d", "s"],
                                    column_types={"q": pa.binary(), "d": pa.binary(), "s": pa.float64()},
                                    strings_can_be_null=False))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise NotPlain from None  # not six fields, a score that is no number
        if tbl["s"].null_count or not len(tbl):
            raise NotPlain
        if not _ascii(block):
            try:
                str(block, "utf-8")
            except UnicodeDecodeError:
                raise NotPlain from None
        # one array each (a take from a chunked array costs 10x one from a whole one)
        return {"q": tbl["q"].combine_chunks().view(pa.string()), "d": tbl["d"].combine_chunks().view(pa.string()),
                "s": tbl["s"]}

    def _full_local(self, tbl):
        """(query codes in the file's order of first naming, the document column, scores) of a block
        (read_full_columns)."""
        import pyarrow.compute as pc

        q = pc.dictionary_encode(_one(tbl["q"]))
        if _empty_or_comment(q.dictionary):
            raise NotPlain  # an empty query field, or a comment line (the general reader skips it)
        names = q.dictionary.to_pylist()
        local = np.fromiter(map(self.qindex.get, names, repeat(-1)), np.int64, len(names))
        for i in np.flatnonzero(local < 0).tolist():  # the queries new in this block (distinct: a dictionary)
            local[i] = self.qindex[names[i]] = len(self.qnames)
            self.qnames.append(names[i])
        score = _np(tbl["s"])
        if not np.isfinite(score).all():
            raise NotPlain
        return local[_np(q.indices)], tbl["d"], score

    def _columns(self, tbl):
        """(qcode, score, judged, key, docs) of a block's table."""
        return self._interned(*self._local_columns(tbl))

    def _local_columns(self, tbl):
        """What of a block's columns needs nothing of the other blocks (any thread may work it out):
        (the block's query names, each row's index among them or None, the stretches' first rows,
        score, judged, the documents' hash, docs). `tbl` may be _keyed's answer already (read_early)."""
        names, index, heads, n, score, key, d = tbl.columns if isinstance(tbl, _Keyed) else self._keyed(tbl)
        judged = self.judged.codes(d, key, (names, index, heads, n))
        return names, index, heads, n, score, judged, key, d

    def _keyed(self, tbl):
        """_local_columns less the judged lookup (it needs no qrels): (query names, index, heads, lines,
        score, the documents' hash, docs)."""
        import pyarrow.compute as pc

        # The queries: where lines of one query follow each other (as retrievers write them), only
        # the first line of each stretch is looked up; else through a dictionary of the block's queries.
        q = _one(tbl["q"])
        heads = None  # a scattered file (columns_here) has no long stretches: not looked for
        if len(q) > 1 and not self.columns_here:
            heads = np.r_[0, np.flatnonzero(_bools(pc.not_equal(q[1:], q[:-1]))) + 1]
        if heads is not None and len(heads) <= len(q) // 16:
            qdict, index = q.take(_ints(heads)), None
        else:
            enc = pc.dictionary_encode(q)
            qdict, index = enc.dictionary, _np(enc.indices)
        if _empty_or_comment(qdict):
            raise NotPlain  # an empty query field, or a comment line (the general reader skips it)
        score = _np(tbl["s"])
        if not np.isfinite(score).all():
            raise NotPlain
        d = tbl["d"]
        return qdict, index, heads, len(q), score, hash_strings(d), d

    def _interned(self, names, index, heads, n, score, judged, key, d):
        """(qcode, score, judged, key, docs) of a block: its queries interned, in file order. `names`: the
        block's query names (Arrow strings); only those new to the run become Python strings."""
        local = self.known.codes(names, self.qindex)
        new = np.flatnonzero(local < 0)
        for i, name in zip(new.tolist(), names.take(_ints(new)).to_pylist() if len(new) else ()):
            code = self.qindex.get(name)  # (a query named twice among the heads: its lines not together)
            if code is None:
                code = self.qindex[name] = len(self.qnames)
                self.qnames.append(name)
            local[i] = code
        qcode = local[index] if index is not None else np.repeat(local, np.diff(np.r_[heads, n]))
        key ^= qcode.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        return qcode, score, judged, key, d


EARLY_BLOCKS = 12  # blocks of a run parsed at most while the qrels are read (read_early): 48 MB of file (1M
#                   judgments take about as long to read as 10 blocks to parse: with 8, a core idled meanwhile)


_EARLY: dict = {}  # the run's real path -> _Early (read_early), taken by the _Reader of that file


def _early_key(path: str) -> str:
    return os.path.realpath(path)


def read_early(path: str) -> None:
    """Start parsing a large plain TREC run's first blocks (at most EARLY_BLOCKS) in a thread of its own,
    for the command line to call before it reads the qrels: pyarrow releases the GIL, so the run's parse
    and the qrels' reading overlap on two cores. read_lean_run takes the parsed blocks up, and the file
    where that thread stopped; the result is the same as without (any fault found is raised there, in
    its place). A file that is small, not TREC or not there is left alone (the usual reading says why)."""
    key = _early_key(path)
    try:
        if key in _EARLY or os.path.getsize(path) < MIN_BYTES or not available():
            return
        from rankgate.core.formats.sniff import detect_format

        if detect_format(path) != "trec":
            return
    except (OSError, InputError):
        return
    lean_allocator()  # before any of Arrow's buffers (here, not in two threads at once)
    import atexit

    atexit.unregister(_stop_early)  # (once)
    atexit.register(_stop_early)
    _EARLY[key] = _Early(path)


def _stop_early() -> None:
    """At exit: the early threads no run took stopped and waited for. A command that stops before reading its
    runs (qrels refused: exit 2) left them parsing in pyarrow while the interpreter shut down, and it crashed
    (exit 134 or 139, about 1 in 10 with two 1.3 MB runs and --jobs 2)."""
    for early in list(_EARLY.values()):
        early.stop.set()
    for early in list(_EARLY.values()):
        early.thread.join()


class _Keyed:
    """A block parsed and hashed early (_Reader._keyed's columns), before the qrels were there."""

    __slots__ = ("columns",)

    def __init__(self, columns: tuple):
        self.columns = columns


class _Names:
    """Which of a block's query names (Arrow strings) are among known names, and their codes (-1: not known):
    by a Python dict when the block names few queries, else by pyarrow's hash lookup (`index_in`), which makes
    no Python string of a name (a block of a scattered file names thousands of queries: a Python lookup a
    name cost more than making the lookup's table). `known`: the names in code order, a list that may grow
    (its Arrow copy grows with it when asked for); `fixed`: their codes, else their places."""

    def __init__(self, known: list[str], fixed: np.ndarray | None = None):
        self.known, self.fixed, self.arrow = known, fixed, None

    def codes(self, names, index: dict) -> np.ndarray:
        """The code of each of `names` in `index` (name -> code, of the known names), -1 where it has none."""
        import pyarrow as pa
        import pyarrow.compute as pc

        size = len(index)
        if len(names) * ARROW_LOOKUP < size or not size:
            return np.fromiter(map(index.get, names.to_pylist(), repeat(-1)), np.int64, len(names))
        arrow = self.arrow  # (threads may ask at once: each its own copy, all the same)
        if arrow is None or len(arrow) < size:
            grown = _strings(self.known[0 if arrow is None else len(arrow):size])
            self.arrow = arrow = grown if arrow is None else pa.concat_arrays([arrow, grown])
        at = pc.index_in(names, value_set=arrow)
        out = _np(at).astype(np.int64)
        if at.null_count:  # (not fill_null: its Python -1 imports pandas when installed)
            out[~_bools(at.is_valid())] = -1
        if self.fixed is not None:
            found = out >= 0
            out[found] = self.fixed[out[found]]
        return out


ARROW_LOOKUP = 4  # known names per name of a block, at most, for pyarrow's lookup (_Names); with more, a dict's


class _Early:
    """A run's first blocks parsed in a thread (read_early): (the columns or the fault met, bytes read) each."""

    def __init__(self, path: str):
        import threading

        self.reader = _Reader(path, None)  # no qrels yet: only its reading of the file (_raw_blocks)
        self.raw = self.reader._raw_blocks()
        self.parsed: list[tuple] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="rankgate-early", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while len(self.parsed) < EARLY_BLOCKS and not self.stop.is_set():
                block = next(self.raw, None)
                if block is None:
                    self.parsed.append((None, self.reader.done))
                    return
                self.parsed.append((_Keyed(self.reader._keyed(self.reader._lean_table(block))), self.reader.done))
        except Exception as e:  # noqa: BLE001 (raised again where the reading meets it: _Reader._source)
            self.parsed.append((e, getattr(self.reader, "done", 0)))
            self.raw = iter(())

    def take(self) -> tuple[list, object, _Reader]:
        """(the blocks parsed, the rest of the file's blocks, the reader that read them), once it stopped."""
        self.stop.set()
        self.thread.join()
        return self.parsed, self.raw, self.reader


def _empty_or_comment(strings) -> bool:
    """Some string of the Arrow array is empty or starts with '#' (from its buffers, no Python loop)."""
    offs = np.frombuffer(strings.buffers()[1], np.int32)[strings.offset:strings.offset + len(strings) + 1]
    if not len(strings):
        return False
    if (offs[1:] == offs[:-1]).any():
        return True
    data = np.frombuffer(strings.buffers()[2], np.uint8)
    return bool((data[offs[:-1]] == ord("#")).any())


def _empty_field(block) -> bool:
    """Two spaces in a row, or a space before a line break, somewhere in the block: 16-bit words at
    even and odd offsets compared at once (a byte search for two spaces is 10x slower: spaces are
    everywhere). A stretch of EMPTY_STEP words at a time, into the same two small arrays, which stay in the
    caches (whole-block temporaries were fresh memory for every block: dense-2m's check took 1.3x as long)."""
    n = len(block)
    seen, other = np.empty(EMPTY_STEP, bool), np.empty(EMPTY_STEP, bool)
    for at in (0, 1):
        words = np.ndarray(((n - at) // 2,), "<u2", block, at)
        for i in range(0, len(words), EMPTY_STEP):
            w = words[i:i + EMPTY_STEP]
            s, o = seen[:len(w)], other[:len(w)]
            np.equal(w, 0x2020, out=s)
            np.equal(w, 0x0A20, out=o)
            s |= o
            if s.any():
                return True
    return False


EMPTY_STEP = 1 << 16  # 16-bit words of a block looked at a time (_empty_field)


def _csv_options():
    import pyarrow.csv as pcsv

    return (pcsv.ReadOptions(column_names=["q", "i", "d", "r", "s", "t"]),
            pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, ignore_empty_lines=False))


def zlib_error():
    import zlib

    return zlib.error


def _ascii(block) -> bool:
    """Every byte of the block is below 0x80."""
    a = np.frombuffer(block, np.uint8)
    return not len(a) or int(a.max()) < 0x80


MAX_LINE = textio.MAX_LINE  # bytes: a longer line is refused, as the general reader refuses it


def _result(future, row0: int):
    try:
        return future.result()
    except LineTooLong:
        raise LineTooLong(row0 + 1) from None


def _too_long(path: str, line: int) -> InputError:
    """The general reader's words (textio), so both readers refuse a long line alike."""
    limit = f"{MAX_LINE >> 20} MiB" if MAX_LINE >= 1 << 20 else f"{MAX_LINE} bytes"
    return InputError(path, f"a line longer than {limit} (the longest line rankgate reads; docs/formats.md, "
                      "Limits)", line=line)


class LineTooLong(Exception):
    def __init__(self, line: int):
        self.line = line


_LOOKUP: list = []  # (qrels, its doc array, by pair, judged codes, lookup, the hash) of the last qrels: a command's
#                   runs share it


def _judged_lookup(qrels: Qrels, by_pair: bool = False) -> tuple[np.ndarray, _JudgedLookup]:
    """The judged documents' codes and their lookup, built once for the runs read against one qrels.
    `by_pair`: a row is judged when its document is judged for its own query (else: for any query)."""
    if _LOOKUP and _LOOKUP[0] is qrels and _LOOKUP[1] is field_token(qrels, "doc") and _LOOKUP[2] == by_pair \
            and _LOOKUP[5] is hash_strings:
        return _LOOKUP[3], _LOOKUP[4]
    raw = _raw_docs(qrels) if by_pair else None
    if raw is not None:  # the qrels' document codes not made (score never needs them): by each judgment's own ID
        _LOOKUP[:] = [qrels, field_token(qrels, "doc"), by_pair, None, _JudgedLookup(raw[0], None, qrels, raw[1]),
                      hash_strings]
        return _LOOKUP[3], _LOOKUP[4]
    docs = qrels.catalog.docs
    codes = np.flatnonzero(np.bincount(qrels.doc, minlength=len(docs)))  # (no sort: codes are dense)
    if docs.arrow is not None and len(codes) == len(docs.arrow) and len(docs) == len(docs.arrow):
        names = docs.arrow  # the qrels' own documents, every one (a catalog they filled)
    elif docs.arrow is not None and (not len(codes) or codes[-1] < len(docs.arrow)):
        names = _one(docs.arrow.take(_ints(codes)))  # no Python string a document
    else:
        names = _strings([docs.names[c] for c in codes.tolist()])
    _LOOKUP[:] = [qrels, qrels.doc, by_pair, codes, _JudgedLookup(names, codes, qrels if by_pair else None),
                  hash_strings]
    return _LOOKUP[3], _LOOKUP[4]


def _mix(x: np.ndarray) -> np.ndarray:
    """64 well-mixed bits of each integer (splitmix64's finaliser): a query's share of a pair's hash."""
    h = (x.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


class _JudgedLookup:
    """Which rows hold a judged document, by the documents' 64-bit hashes (hash_strings): a bitmap
    on the hash's top bits rules most rows out, a sorted search finds the rest, and every hit is
    confirmed byte for byte, so a collision never makes an unjudged document judged.

    With `pairs` (the qrels), the entries are the qrels' (query, document) pairs, not the documents:
    a row is judged only where its document is judged for its own query (the query by name, among
    the qrels' queries), its hash the document's mixed with the query's. Rows whose document is
    judged for other queries only are then not kept at all (a dense qrels' documents are judged for
    some query on many rows: the dense benchmark's run held 0.96M such rows against 0.56M judged for
    their query); scoring needs none of them (the engine finds no grade for them)."""

    def __init__(self, names, codes: np.ndarray | None, pairs: Qrels | None = None, hashes: np.ndarray | None = None):
        """`names`: the judged documents' IDs (a pyarrow string array), `codes` their codes. With `hashes`
        (by pair only): `names` are the qrels' document IDs, one a judgment (each pair judged once, as
        `_DocCodes` found), and `hashes` their hash_strings; no document codes are needed."""
        self.names = names
        self.entries = False  # True: codes() gives each row's entry (the qrels' row of its pair), not its document
        h = _name_hashes(names) if hashes is None else hashes
        self.qcode = None
        if pairs is None:  # an entry per document
            self.doc_at, self.codes_, self.entry_q = None, codes, None
        else:  # an entry per judged (query, document)
            qnames = pairs.catalog.queries.names
            counts = np.bincount(pairs.q, minlength=len(qnames)) if len(pairs.q) else np.zeros(len(qnames), np.int64)
            self.qcode = {qnames[c]: c for c in np.flatnonzero(counts).tolist()}  # the queries judged: name -> code
            self.qcode_of = _Names(list(self.qcode), np.fromiter(self.qcode.values(), np.int64, len(self.qcode)))
            self.entry_q = pairs.q  # (32 bits each: 1M pairs cost 12 MB)
            if hashes is not None:  # `names` holds each entry's own document: no codes
                self.doc_at = None
            elif len(codes) and int(codes[-1]) == len(codes) - 1:  # every document's code is judged: no search
                self.doc_at = pairs.doc
            else:
                self.doc_at = np.searchsorted(codes, pairs.doc).astype(np.int32)  # each pair's document in `names`
            if hashes is not None or _judged_once(pairs) or _each_once(pairs):
                # each pair judged once: a row's entry says its grade too
                self.entries, self.codes_ = True, np.arange(len(pairs.q), dtype=np.int64)
            else:
                self.codes_ = pairs.doc
            self.qmix = np.r_[_mix(np.arange(len(qnames))), np.uint64(0)]  # [-1]: a query nobody judged
            if self.doc_at is None:  # (a new array: `hashes` are the qrels reader's, kept for their codes)
                h = h ^ self.qmix[self.entry_q]
            else:
                h = h[self.doc_at] if len(self.doc_at) else np.zeros(0, np.uint64)
                h ^= self.qmix[self.entry_q]
            # the entries grouped by query, for a block whose few queries' entries are looked up alone (_local);
            # qrels files usually are (then in that order already: no sort, no copy)
            self.query_start = np.zeros(len(qnames) + 1, np.int64)
            np.cumsum(counts, out=self.query_start[1:])
            grouped = not len(pairs.q) or bool((pairs.q[1:] >= pairs.q[:-1]).all())
            self.by_query = None if grouped else np.argsort(self.entry_q, kind="stable").astype(np.int32)
            self.h_by_query = h if grouped else h[self.by_query]
        import threading

        self.h, self.built, self.lock = h, False, threading.Lock()
        self.name_of, self.named = {}, None  # the crowded entries by name (and query), and which are in it (by_name)
        if pairs is None:
            self._build()

    def _build(self) -> None:
        """The tables of every entry (a bitmap of the hashes' top bits, a hash table), made when a block
        first needs them: by pair, a grouped file's blocks never do (_local), and 1M entries' tables cost
        0.1 s and 40 MB."""
        with self.lock:
            if self.built:
                return
            h = self.h
            self.table = _HashTable(h)
            self.one_each = not self.table.repeated
            if not self.one_each:  # two entries share a hash: a sorted search finds both
                self.order = np.argsort(h, kind="stable")
                self.sorted = h[self.order]
            self.bits = max(16, min(24, int(len(h) * 64).bit_length()))  # about 1 row in 64 looked up in vain
            self.shift = np.uint64(64 - self.bits)
            self.present = np.zeros(1 << self.bits, bool)
            self.present[(h >> self.shift).astype(np.int64)] = True
            self.h, self.built = None, True

    def _row_queries(self, queries) -> tuple[np.ndarray, np.ndarray]:
        """Each row's query code among the qrels' (-1: none judged), and the codes of the block's query
        names, from a block's (query names, each row's index among them or None, the stretches' first
        rows, lines) (_Reader._keyed)."""
        names, index, heads, n = queries
        local = self.qcode_of.codes(names, self.qcode)
        return local[index] if index is not None else np.repeat(local, np.diff(np.r_[heads, n])), local

    def codes(self, docs, h: np.ndarray, queries=None) -> np.ndarray:
        """The judged document's code of every row (-1: nobody judged it; by pair: not for its query); with
        `entries`, the qrels' row of the row's (query, document) instead. `queries`: see _row_queries (by pair
        only)."""
        import pyarrow.compute as pc

        out = np.full(len(h), -1, np.int64)
        if not len(self.codes_):
            return out
        rq = None

        def confirm(r: np.ndarray, j: np.ndarray) -> None:
            """Rows r whose hash is entry j's: those whose document (and query) are j's are judged."""
            same = _bools(pc.equal(_one(docs.take(_ints(r))),
                                   self.names.take(_ints(j if self.doc_at is None else self.doc_at[j]))))
            if rq is not None:
                same &= rq[r] == self.entry_q[j]
            out[r[same]] = self.codes_[j[same]]

        def by_name(r: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Of rows r and entries j, the (rows, entries) whose documents (and queries) are alike, by name
            (for a run of entries that share one hash: crafted IDs; trying each in turn costs rows x entries).
            The entries' names are kept for every block (taken anew, a crowd of 300k cost 0.25 s a block)."""
            mine = _one(docs.take(_ints(r))).to_pylist()
            if rq is not None:
                mine = zip(mine, rq[r].tolist())
            with self.lock:
                if self.named is None:
                    self.named = np.zeros(len(self.codes_), bool)
                new = j[~self.named[j]]
                keys = self.names.take(_ints(new if self.doc_at is None else self.doc_at[new])).to_pylist()
                if rq is not None:
                    keys = zip(keys, self.entry_q[new].tolist())
                self.name_of.update(zip(keys, new.tolist()))  # (entries alike by name give one code)
                self.named[new] = True
                got = np.fromiter(map(self.name_of.get, mine, repeat(-1)), np.int64, len(r))
            return r[got >= 0], got[got >= 0]

        if self.qcode is not None:
            rq, named = self._row_queries(queries)
            h = h ^ self.qmix[rq]
            local = self._local(named, len(h))
            if local is not None and local[0] is None:  # as many entries as rows, about: one sort of both
                _merge_match(local[1], local[2], h, confirm, by_name)
                return out
            if local is not None:  # a block of few queries (a grouped file): their entries alone
                bits, present, keys, entry = local
                rows = np.flatnonzero(present[(h >> np.uint64(64 - bits)).astype(np.int64)])
                _each_match(keys, entry, rows, h[rows], confirm, by_name)
                return out
        if not self.built:
            self._build()
        rows = np.flatnonzero(self.present[(h >> self.shift).astype(np.int64)])
        if not len(rows):
            return out
        hr = h[rows]
        if self.one_each:  # the usual case: a hash table (a sorted search costs 20 cache misses a row)
            j = self.table.find(hr)
            confirm(rows[j >= 0], j[j >= 0])
            return out
        _each_match(self.sorted, self.order, rows, hr, confirm, by_name)
        return out

    def _local(self, named: np.ndarray, n: int):
        """For a block of n rows whose queries (`named`: their codes, -1 for none judged, repeats allowed)
        have few entries (at most one for LOCAL_ROWS rows): (bits, a bitmap of those entries' hashes' top
        bits, their hashes sorted, the entries in that order); with more, up to MERGE_ENTRIES a row (dense-1m:
        100 judged for 100 rows a query; DL19: 215 for 1,000): (None, their hashes, the entries), for
        _merge_match; else None. Small enough to stay in the processor's caches, where the whole lookup's
        tables (tens of MB for 1M judged) cost a cache miss a row, and those tables are then never made
        (_build: 1M entries, 0.1-0.15 s)."""
        if len(named) * LOCAL_ROWS > n and len(named) > MERGE_ENTRIES * n:
            return None
        qs = unique(named[named >= 0])
        lo, hi = self.query_start[qs], self.query_start[qs + 1]
        m = int((hi - lo).sum())
        if m * LOCAL_ROWS > n and m > MERGE_ENTRIES * n:
            return None
        at = _ranges(lo, hi)
        keys = self.h_by_query[at]
        if m * LOCAL_ROWS > n:
            return None, keys, at if self.by_query is None else self.by_query[at]
        o = np.argsort(keys)
        bits = max(12, min(20, (m * 64).bit_length()))
        present = np.zeros(1 << bits, bool)
        present[(keys >> np.uint64(64 - bits)).astype(np.int64)] = True
        return bits, present, keys[o], at[o] if self.by_query is None else self.by_query[at[o]]


def _merge_match(keys: np.ndarray, entry: np.ndarray, h: np.ndarray, confirm, by_name) -> None:
    """confirm(rows, entries) for every row whose hash (`h`) is an entry's (`keys`, `entry` the entries):
    both sorted at once by their hashes' top bits, each one's position packed in the low bits (entries
    before rows), so a row lands right behind the entry that shares its top bits. A row whose top bits
    two entries share (rare) is looked up among those entries by _each_match."""
    m, n = len(keys), len(h)
    if not m or not n:
        return
    pos, start = _by_top_bits(keys, h)  # pos: entries 0..m-1, rows m..m+n-1
    head = np.flatnonzero(start)
    first = pos[head][np.cumsum(start) - 1]  # each one's group's first: an entry, when the group has one
    row = pos >= m
    twice = ~start & ~row  # an entry behind another of its top bits
    if twice.any():  # those groups' rows, found among their entries one by one
        group = np.cumsum(start) - 1
        crowded = np.zeros(len(head), bool)
        crowded[group[twice]] = True
        crowd = crowded[group]
        e = pos[crowd & ~row]
        o = np.argsort(keys[e], kind="stable")
        r = pos[crowd & row] - m
        _each_match(keys[e[o]], entry[e[o]], r, h[r], confirm, by_name)
        row &= ~crowd
    at = np.flatnonzero(row & (first < m))
    r, j = pos[at] - m, first[at]
    same = h[r] == keys[j]  # the whole hash
    confirm(r[same], entry[j[same]])


def _each_once(qrels: Qrels) -> bool:
    """No (query, document) is judged twice in these qrels."""
    return _pairs_once(qrels.q, qrels.doc)


def _pairs_once(q: np.ndarray, d: np.ndarray) -> bool:
    """No (q[i], d[i]) pair of codes comes twice."""
    return _all_distinct(q.astype(np.int64) << 32 | d.astype(np.int64))


def _all_distinct(key: np.ndarray) -> bool:
    """No value of `key` (a fresh array: sorted in place) comes twice."""
    key.sort()
    return not (key[1:] == key[:-1]).any()


def _by_top_bits(*hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the hashes (the arrays' joined, in order) sorted by the hashes' top bits, each one's
    position packed in the low bits (so one sort, and equal top bits keep position order), and where each run
    of equal top bits starts (True at its first). Whole hashes that share their top bits are told apart by the
    caller."""
    n = sum(map(len, hashes))
    rb = (n - 1).bit_length()
    low = np.uint64((1 << rb) - 1)
    packed = np.empty(n, np.uint64)
    i = 0
    for h in hashes:
        np.bitwise_and(h, ~low, out=packed[i:i + len(h)])
        i += len(h)
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    pos = (packed & low).view(np.int64)
    packed >>= np.uint64(rb)
    start = np.empty(n, bool)
    start[0] = True
    np.not_equal(packed[1:], packed[:-1], out=start[1:])
    return pos, start


LOCAL_ROWS = 8  # rows of a block per entry of its queries, at least, for the entries to be looked up alone
MERGE_ENTRIES = 4  # entries of a block's queries per row, at most, for them to be matched by one sort (_merge_match)


def _each_match(keys: np.ndarray, entry: np.ndarray, rows: np.ndarray, hr: np.ndarray, confirm, by_name) -> None:
    """confirm(rows, entries) for every entry whose hash (`keys`, sorted; `entry` the entries in that
    order) is a row's hash `hr`, entries that share a hash each in turn; a row whose hash more than
    SHARED entries share is matched by name (`by_name`), so crafted IDs of one hash cost no more than others."""
    lo = np.searchsorted(keys, hr, "left")
    if len(keys) < 2 or (keys[1:] != keys[:-1]).all():  # no two alike (the usual case): one search
        lo = np.minimum(lo, len(keys) - 1)
        found = keys[lo] == hr if len(keys) else np.zeros(len(hr), bool)
        confirm(rows[found], entry[lo[found]])
        return
    hi = np.searchsorted(keys, hr, "right")
    found = hi > lo
    rows, lo, hi = rows[found], lo[found], hi[found]
    crowd = hi - lo > SHARED
    if crowd.any():
        first, at = np.unique(lo[crowd], return_index=True)
        confirm(*by_name(rows[crowd], entry[_ranges(first, hi[crowd][at])]))
        rows, lo, hi = rows[~crowd], lo[~crowd], hi[~crowd]
    for extra in range(int((hi - lo).max(initial=0))):
        at = lo + extra
        ok = at < hi
        confirm(rows[ok], entry[at[ok]])


SHARED = 8  # entries of one hash, at most, tried in turn for a row (_each_match); more are matched by name


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The positions lo[0]..hi[0]-1, lo[1]..hi[1]-1, ... in one array (the ranges, joined)."""
    n = hi - lo
    return np.repeat(lo - np.r_[0, np.cumsum(n)[:-1]], n) + np.arange(int(n.sum()))


class _HashTable:
    """Distinct 64-bit hashes -> their position (`repeated`: they are not distinct), by open addressing
    (linear probing, at most half full). Built in slot order with whole-array steps (a key's place is
    the first free slot at or after its own: a running maximum), with no wrap at the end: the table runs
    on past its last key by one empty slot, where every search stops."""

    def __init__(self, h: np.ndarray):
        n = len(h)
        bits = max(10, (2 * n).bit_length())  # at most half full (12 bytes a slot)
        self.shift = np.uint64(64 - bits)
        srt = np.sort(h)
        self.repeated = bool((srt[1:] == srt[:-1]).any())  # two keys alike: no table (a sorted search)
        self.by_key = None  # (_search)
        del srt
        if self.repeated:
            return
        rb = max(n - 1, 1).bit_length()
        packed = (h >> self.shift).astype(np.int64)  # each key's slot, and its position, in one sort
        packed <<= rb
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        at = packed & ((1 << rb) - 1)
        packed >>= rb
        step = np.arange(n, dtype=np.int64)
        packed -= step
        place = np.maximum.accumulate(packed) if n else packed
        place += step
        size = max(1 << bits, int(place[-1]) + 1 if n else 0) + 1
        self.keys = np.zeros(size, np.uint64)
        self.at = np.full(size, -1, np.int32 if n < 1 << 31 else np.int64)
        self.keys[place] = h[at]
        self.at[place] = at

    def find(self, hr: np.ndarray) -> np.ndarray:
        """The position of each hash (-1: not there). The first probe of every hash on whole arrays (most end
        there: a table at most half full), then those that go on, slot by slot; those still unsettled after
        PROBES slots (a long stretch of full slots: crafted hashes) by a sorted search."""
        slot = (hr >> self.shift).astype(np.int64)
        a = self.at[slot]
        hit = self.keys[slot] == hr
        hit &= a >= 0
        out = np.where(hit, a, np.int64(-1)).astype(np.int64, copy=False)
        active = np.flatnonzero((a >= 0) & ~hit)
        slot[active] += 1
        for _ in range(PROBES):
            if not len(active):
                break
            s = slot[active]
            a = self.at[s]
            hit = (a >= 0) & (self.keys[s] == hr[active])
            out[active[hit]] = a[hit]
            active = active[(a >= 0) & ~hit]
            slot[active] += 1
        if len(active):
            out[active] = self._search(hr[active])
        return out

    def _search(self, hr: np.ndarray) -> np.ndarray:
        """find's positions by a binary search of the keys, sorted when first needed."""
        if self.by_key is None:
            held = np.flatnonzero(self.at >= 0)
            o = np.argsort(self.keys[held])
            self.by_key = self.keys[held[o]], self.at[held[o]]  # (one attribute: threads share the table)
        keys, at = self.by_key
        i = np.minimum(np.searchsorted(keys, hr), len(keys) - 1)
        return np.where(keys[i] == hr, at[i], -1)


PROBES = 64  # slots a hash is looked for in (_HashTable.find): a random table's longest search is far shorter


def _ints(a: np.ndarray):
    """A numpy int or float array as an Arrow array, without pyarrow's conversion (which imports pandas
    whenever pandas is installed: 0.2 s)."""
    import pyarrow as pa

    a = np.ascontiguousarray(a)
    t = {np.dtype(np.int64): pa.int64(), np.dtype(np.int32): pa.int32(), np.dtype(np.uint64): pa.uint64(),
         np.dtype(np.uint32): pa.uint32(), np.dtype(np.float64): pa.float64()}[a.dtype]
    return pa.Array.from_buffers(t, len(a), [None, pa.py_buffer(a)])


_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint64": np.uint64,
          "uint32": np.uint32,
          "double": np.float64}


def _np(arr) -> np.ndarray:
    """The values of a numeric Arrow array (or chunked array, or list of arrays) without nulls, as numpy
    (Array.to_numpy imports pandas when it is installed)."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.chunks
    if isinstance(arr, list):
        return np.concatenate([_np(a) for a in arr]) if arr else np.zeros(0, np.int64)
    dtype = _NUMPY[str(arr.type)]
    return np.frombuffer(arr.buffers()[1], dtype)[arr.offset:arr.offset + len(arr)]


def _bools(arr) -> np.ndarray:
    """A boolean Arrow array without nulls as numpy (see _np)."""
    bits = np.unpackbits(np.frombuffer(arr.buffers()[1], np.uint8), bitorder="little")
    return bits[arr.offset:arr.offset + len(arr)].astype(bool)


def _one(arr):
    """One Arrow array of a chunked one."""
    import pyarrow as pa

    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def _strings(values: list[str]):
    """Python strings as an Arrow string array (no pandas import, see _ints)."""
    return _strings_of([v.encode("utf-8", "surrogatepass") for v in values])


class _Tally:
    """What is kept of a run while it streams past: counts per query and the judged rows."""

    def __init__(self, keep_top: int = 0, duplicates: bool = True):
        self.keep_top = keep_top
        self.find_duplicates = duplicates  # False: a second read, whose duplicates the first one listed
        self.reset()

    def reset(self) -> None:
        self.tq, self.tdoc, self.trank = [], [], []
        self.num_ret = np.zeros(0, np.int64)
        self.done = np.zeros(0, bool)
        self.jq, self.jdoc, self.jrank = [], [], []
        self.duplicates: list[tuple[int, str, str]] = []
        self.n_duplicates = 0

    def grow(self, n: int) -> None:
        if n > len(self.num_ret):
            extra = max(n - len(self.num_ret), len(self.num_ret))
            self.num_ret = np.r_[self.num_ret, np.zeros(extra, np.int64)]
            self.done = np.r_[self.done, np.zeros(extra, bool)]

    def add_duplicates(self, n: int, rows: list[int], qcode: np.ndarray, docs, qnames: list[str]) -> None:
        """n duplicate rows; the first of them in file order: rows (line - 1), query codes, documents."""
        self.n_duplicates += n
        self.duplicates += [(r + 1, qnames[q], d) for r, q, d in zip(rows, qcode.tolist(), docs.to_pylist())]
        if len(self.duplicates) > 4 * MAX_LISTED:
            self.duplicates = sorted(self.duplicates)[:MAX_LISTED]

    def settle(self, qcode, score, judged, key, docs, rows, qnames, grouped_check: bool) -> None:
        """Take rows whose queries are complete and contiguous: rows[i] is each one's line - 1."""
        n = len(qcode)
        if not n:
            return
        brk = np.flatnonzero(qcode[1:] != qcode[:-1]) + 1
        starts = np.r_[0, brk]
        gq = qcode[starts]
        self.grow(int(gq.max()) + 1)
        if grouped_check and (self.done[gq].any() or len(unique(gq)) != len(gq)):
            raise _Ungrouped
        self.done[gq] = True
        self.num_ret[gq] += np.diff(np.r_[starts, n])
        gid = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
        dup = _duplicates(gid, key, docs, rows) if self.find_duplicates else ()
        if len(dup):
            dup = dup[np.argsort(rows[dup], kind="stable")]  # file order
            first = dup[:MAX_LISTED]  # the first of this chunk; the run's first are among these
            self.add_duplicates(len(dup), [int(rows[r]) for r in first.tolist()], qcode[first], docs.take(first),
                                qnames)
        jrows = np.flatnonzero(judged >= 0)
        if not len(jrows) and not self.keep_top:
            return
        perm = _trec_order(gid, score, docs, None if self.keep_top else judged >= 0)
        if perm is None:
            rank = np.arange(n) - starts[gid]
        else:
            rank = np.empty(n, np.int64)
            rank[perm] = np.arange(n)
            rank -= starts[gid]
            if not self.keep_top:  # the judged rows in rank order (the engine's order: engine._stretches_order)
                jrows = perm[judged[perm] >= 0]
        self.jq.append(qcode[jrows])
        self.jdoc.append(judged[jrows])
        self.jrank.append(rank[jrows])
        if self.keep_top:  # the top of each ranking, judged or not (the review queue's candidates)
            top = np.flatnonzero((rank < self.keep_top) & (judged < 0))
            self.tq.append(qcode[top])
            self.tdoc.append(docs.take(top))
            self.trank.append(rank[top])


MAX_LISTED = 21  # duplicates named (MAX_PER_RULE, and one to know there are more)


def read_lean_run(path: str, name: str, qrels: Qrels, progress=None, keep_top: int = 0,
                  jobs: int = 1, duplicates: bool = True, by_pair: bool = False) -> LeanRun | None:
    """The run, or None when the file is not regular enough for the fast path.

    A file whose queries each sit in one block of lines (as every retriever writes them) is read
    in bounded memory: blocks of BLOCK bytes, and only the judged rows kept. A file whose lines
    of one query are scattered keeps ROW_BYTES a line in memory up to HOLD_AT bytes, and is
    partitioned by query through temporary files past it; its judged rows are ranked by counting
    (with keep_top, its rows are sorted by query: in memory up to SPILL_AT bytes of file). `jobs`:
    blocks worked on at once (threads); the result is the same for any number. `duplicates=False`: no
    (query, document) repeats looked for (a second read of a file: the first one listed them).
    `by_pair`: the judged rows kept are those whose document is judged for their own query (what
    scoring needs; the engine's Prepared is the same), not every row whose document some query judged
    (what the gate's review queue and watch_top_k use)."""
    try:
        try:
            return _read(path, name, qrels, progress, keep_top, grouped=True, jobs=jobs, duplicates=duplicates,
                         by_pair=by_pair)
        except _Ungrouped:
            return _read(path, name, qrels, progress, keep_top, grouped=False, jobs=jobs, duplicates=duplicates,
                         by_pair=by_pair)
    except NotPlain:
        return None
    except LineTooLong as e:
        raise _too_long(path, e.line) from None


def _read(path: str, name: str, qrels: Qrels, progress, keep_top: int, grouped: bool, jobs: int = 1,
          duplicates: bool = True, by_pair: bool = False) -> LeanRun:
    from itertools import chain

    reader, tally = _Reader(path, qrels, progress, jobs, by_pair), _Tally(keep_top, duplicates)
    lines = 0
    blocks = reader.blocks()
    if grouped:
        first = next(blocks)  # an empty file raises NotPlain
        blocks = chain([first], blocks)
        qcode = first[1]
        if np.count_nonzero(qcode[1:] != qcode[:-1]) + 1 > np.count_nonzero(np.bincount(qcode)):
            grouped = False  # a query in two places of the first block: scattered from the start
    if grouped:
        pend: list[tuple] = []  # the rows of the last query seen, which may go on in the next blocks
        for block in blocks:
            row0, qcode = block[0], block[1]
            lines = row0 + len(qcode)
            if pend and (qcode == pend[-1][1][-1]).all():  # that query goes on through the whole block
                pend.append(block)
                continue
            if pend:  # that query ends early in this block: it is settled with its rows here, the rest apart
                head = int(np.argmax(qcode != pend[-1][1][-1]))  # (slices are views: no copy of the block)
                _settle_grouped(tally, _joined(pend + [_rows_of(block, 0, head)]), reader.qnames)
                block = _rows_of(block, head, len(qcode))
            qcode = block[1]
            last = int(np.flatnonzero(np.r_[True, qcode[1:] != qcode[:-1]])[-1])
            _settle_grouped(tally, _rows_of(block, 0, last), reader.qnames)
            pend = [_rows_of(block, last, len(qcode))]
        if pend:
            _settle_grouped(tally, _joined(pend), reader.qnames)
    else:
        lines = _scattered(reader, tally, blocks)
    cat = lambda xs, t: np.concatenate(xs).astype(t, copy=False) if xs else np.zeros(0, t)  # noqa: E731
    jdoc, jentry = cat(tally.jdoc, np.int64), None
    pending = False
    if reader.judged.entries:  # the rows carried their qrels entry: their documents from it
        jentry = jdoc
        pending = is_later(qrels, "doc")  # the qrels' document codes not made: the rows' made when asked for
        jdoc = None if pending else qrels.doc[jentry].astype(np.int64)
    run = LeanRun(name, path, reader.qnames, tally.num_ret[:len(reader.qnames)], cat(tally.jq, np.int64),
                  jdoc, cat(tally.jrank, np.int64), sorted(tally.duplicates)[:MAX_LISTED],
                  tally.n_duplicates, lines, cat(tally.tq, np.int64),
                  [d for a in tally.tdoc for d in a.to_pylist()], cat(tally.trank, np.int64), keep_top,
                  jentry=jentry, entries_of=(qrels, qrels.q, field_token(qrels, "doc")) if jentry is not None else None)
    if pending:
        later(run, "jdoc", lambda: qrels.doc[jentry].astype(np.int64))
    return run


def _rows_of(part: tuple, start: int, stop: int) -> tuple:
    """Rows start:stop of a part (row of the first line, qcode, score, judged, key, docs), as views."""
    row0, *cols = part
    return (row0 + start, *(c[start:stop] for c in cols))


def _settle_grouped(tally: _Tally, part: tuple, qnames: list[str]) -> None:
    """Settle a part of a grouped file whose queries are complete."""
    row0, qcode, score, judged, key, docs = part
    tally.settle(qcode, score, judged, key, _Docs(docs), _Rows(row0), qnames, True)


def _joined(parts: list[tuple]) -> tuple:
    """Consecutive parts (row of the first line, qcode, score, judged, key, docs) as one: each row is
    copied a bounded number of times, so a query longer than many blocks costs no more than others."""
    import pyarrow as pa

    if len(parts) == 1:
        return parts[0]
    chunks = [c for p in parts for c in (p[5].chunks if isinstance(p[5], pa.ChunkedArray) else [p[5]])]
    return (parts[0][0], *(np.concatenate([p[i] for p in parts]) for i in (1, 2, 3, 4)),
            pa.chunked_array(chunks, pa.string()))


SPILL_AT = 64 << 20  # with keep_top (the gate): a scattered file larger than this is partitioned by query on disk
HOLD_AT = 160 << 20  # without (score): bytes of a scattered file's rows kept in memory (ROW_BYTES a line, 7M
#                      lines: 140 MB); past it the rows go to partitions by query on disk (bounded for any file)
ROW_BYTES = 20  # what a kept row costs: query (4), score (8), the hash (8); its document ID is found in the file
SPILL_BUCKET = 16 << 20  # bytes of the file per temporary file (small parts sort fastest)
MAX_BUCKETS = 512  # temporary files open at once, at most


def _scattered(reader: _Reader, tally: _Tally, blocks) -> int:
    """Read a file whose queries' lines are scattered. Returns its lines.

    Without keep_top (`score`), judged rows are ranked by counting, with no sort (`_settle_unsorted`):
    every row's query, score and hash are kept in memory, its document ID found again in the file
    only for ties and duplicates (_doc_store), up to HOLD_AT bytes; a larger file's
    rows go to partitions by query on disk, settled one at a time (memory: a few blocks, as for a
    grouped file). With keep_top, rows are sorted by query: in memory up to SPILL_AT bytes of file,
    else through partitions that carry the document IDs. With no room on disk, all in memory."""
    import tempfile

    size = os.path.getsize(reader.path)
    reader.columns_here = True  # this thread only keeps each block: it works out the blocks' columns too
    try:
        if not tally.keep_top:
            with tempfile.TemporaryDirectory(prefix="rankgate-") as tmp:
                return _counted(reader, tally, size, blocks, tmp)
        if size > SPILL_AT:
            with tempfile.TemporaryDirectory(prefix="rankgate-") as tmp:
                return _spill(reader, tally, size, blocks, tmp)
    except OSError:  # no room for the temporary files: in memory, then, from the start
        tally.reset()
        blocks = reader.blocks()
    if not tally.keep_top:
        parts = [_Part(_Rows(row0), q, s, j, k, d) for row0, q, s, j, k, d in blocks]
        _settle_unsorted(parts, tally, reader.qnames, reader.jobs)
        return parts[-1].end if parts else 0
    parts = [(np.arange(row0, row0 + len(q)), q, s, j, k, d) for row0, q, s, j, k, d in blocks]
    lines = int(parts[-1][0][-1]) + 1 if parts else 0
    _settle_parts(parts, tally, reader.qnames)
    return lines


def _counted(reader: _Reader, tally: _Tally, size: int, blocks, tmp: str) -> int:
    """Keep each block's query, score and hash (its document IDs to a file), then rank the judged
    rows by counting; past HOLD_AT bytes kept, what is kept and the rest of the file go to
    partitions by query instead."""
    store = _doc_store(reader, tmp)
    try:
        held, kept, lines = [], 0, 0
        for row0, q, s, j, k, d in blocks:
            lines = row0 + len(q)
            store.add(d)
            held.append(_Part(_Rows(row0), q, s, j, k, store))
            kept += ROW_BYTES * len(q)
            if kept > HOLD_AT:  # partitions settled one at a time: the IDs in a file of their own, read once
                if isinstance(store, _Reread):
                    store = store.to_file(os.path.join(tmp, "documents.arrow"))
                return _spill(reader, tally, size, _unheld(held, blocks), tmp, store)
        store.finish()
        _give_back_memory()
        _settle_unsorted(held, tally, reader.qnames, reader.jobs)
        return lines
    finally:
        store.close()


_ALLOCATOR: list = []  # set once a process (lean_allocator)


def lean_allocator() -> None:
    """For a command that reads large files lean (score, compare, gate, validate: cli/evaluate.py sets
    textio.LEAN_ALLOCATOR; the first large qrels or run read calls this): Arrow's buffers from the C
    library's allocator (malloc), not mimalloc, and malloc's arenas kept to one (Linux, glibc). The
    blocks' tables and numpy's temporaries are freed and allocated again block after block, from several
    threads: mimalloc's per-thread heaps and malloc's per-thread arenas each kept their own freed memory,
    which fresh memory then paid for in page faults (2M lines, 200k qrels: peak 225 -> 175 MB, system
    CPU time halved). A pool chosen by ARROW_DEFAULT_MEMORY_POOL is left as it is; the app and the
    Python API keep Arrow's default."""
    if _ALLOCATOR or not textio.LEAN_ALLOCATOR:
        return
    _ALLOCATOR.append(True)
    import sys

    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") or not sys.platform.startswith("linux"):
        return
    import ctypes

    import pyarrow as pa

    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # glibc only (musl has no mallopt arenas)
    except (OSError, AttributeError):
        return
    pa.set_memory_pool(pa.system_memory_pool())
    libc.mallopt(-8, 1)  # M_ARENA_MAX


def _give_back_memory() -> None:
    """Return the memory the reading freed to the system (glibc keeps it in its arenas, one per
    thread), so that the settling's own does not add to it: 30-40 MB less at the peak on 7M lines."""
    import ctypes
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):  # not glibc
            pass


def _unheld(held: list, blocks):
    """The kept parts as blocks again (their documents already stored: None), then the rest; each part
    is let go of as it is handed on."""
    while held:
        p = held.pop(0)
        j = np.full(len(p.q), -1, np.int64)
        j[p.jat] = p.jcode
        yield p.rows.row0, p.q, p.s, j, p.key, None
    yield from blocks


def _spill(reader: _Reader, tally: _Tally, size: int, blocks, tmp: str, store=None) -> int:
    """Partition by query into temporary files in `tmp`. Without keep_top, the document IDs are found
    again through `store` (_doc_store: the file itself, or a gzipped file's IDs in a file of their own,
    in file order as read; a block whose documents are None is there already), only for the few rows
    that need them (ties with a judged row, duplicates)."""
    import pyarrow as pa

    buckets = min(MAX_BUCKETS, max(2, -(-size // SPILL_BUCKET)))
    with_docs = bool(tally.keep_top)
    cols = [("row", pa.int64()), ("q", pa.int32()), ("s", pa.float64()), ("j", pa.int32()),
            ("k", pa.uint64())]
    schema = pa.schema(cols + [("d", pa.string())] if with_docs else cols)
    lines = 0
    writers: dict[int, object] = {}
    if store is None and not with_docs:
        store = _doc_store(reader, tmp)
    try:
        for row0, q, s, j, k, d in blocks:
            lines = row0 + len(q)
            b = (q % buckets).astype(np.uint16)
            order = np.argsort(b, kind="stable")  # a radix sort (16 bits)
            bounds = np.searchsorted(b[order], np.arange(buckets + 1)).tolist()
            arrays = [_ints(np.arange(row0, lines)[order]), _ints(q[order].astype(np.int32)), _ints(s[order]),
                      _ints(j[order].astype(np.int32)), _ints(k[order])]
            if with_docs:
                arrays.append(_one(d).take(_ints(order)))
            elif d is not None:
                store.add(d)
            tbl = pa.Table.from_arrays(arrays, schema=schema)
            for i in range(buckets):
                if bounds[i + 1] > bounds[i]:
                    if i not in writers:
                        writers[i] = pa.ipc.new_stream(os.path.join(tmp, f"{i}.arrow"), schema)
                    writers[i].write_table(tbl.slice(bounds[i], bounds[i + 1] - bounds[i]))
    finally:
        for w in writers.values():
            w.close()
        if store is not None:
            store.finish()
    try:
        for i in sorted(writers):
            where = os.path.join(tmp, f"{i}.arrow")
            with pa.ipc.open_stream(where) as f:
                t = f.read_all()
            rows, q, s, j, k = (_np(t[c]) for c in ("row", "q", "s", "j", "k"))
            j = j.astype(np.int64)
            if with_docs:
                _settle_parts([(rows, q, s, j, k, t["d"])], tally, reader.qnames)
            else:  # the bucket's rows are in file order (blocks in turn, each split stably)
                _settle_unsorted([_Part(rows, q, s, j, k, store)], tally, reader.qnames, reader.jobs)
            del t, rows, q, s, j, k
            os.remove(where)
    finally:
        if store is not None:
            store.close()
    return lines


class _DocStore:
    """Every row's document ID in a temporary Arrow file, in file order, read back for the rows asked
    for (by one thread at a time: the duplicate check and the ties may ask at once). Read as a file,
    not a memory map: the pages a map touches count as the process's memory."""

    def __init__(self, path: str):
        import threading

        self.path, self.writer, self.starts, self.n = path, None, [0], 0
        self.source = self.file = None
        self.lock = threading.Lock()

    def add(self, docs) -> None:
        import pyarrow as pa

        chunks = docs.chunks if isinstance(docs, pa.ChunkedArray) else [docs]
        for c in chunks:
            if not len(c):
                continue
            batch = pa.record_batch([c], names=["d"])
            if self.writer is None:
                self.writer = pa.ipc.new_file(self.path, batch.schema)
            self.writer.write_batch(batch)
            self.n += len(c)
            self.starts.append(self.n)

    def finish(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def take(self, rows: np.ndarray):
        """The document IDs of rows (line - 1), as one Arrow string array."""
        with self.lock:
            return self._take(rows)

    def _take(self, rows: np.ndarray):
        import pyarrow as pa

        if self.file is None:
            self.source = pa.OSFile(self.path)
            self.file = pa.ipc.open_file(self.source)
        bi = np.searchsorted(self.starts, rows, "right") - 1
        order = np.argsort(bi, kind="stable")
        got = [self.file.get_batch(i).column(0).take(_ints(rows[sel] - self.starts[i]))
               for i, sel in _groups(bi, order)]
        return _in_order(pa.concat_arrays(got), order) if got else _strings([])

    def close(self) -> None:
        self.file = None
        if self.source is not None:
            self.source.close()
            self.source = None


class _Reread:
    """Every row's document ID, found again in the file itself when asked for: each block's place in
    the file is kept (the reader's spans), and a block with rows asked for is read and parsed again.
    Few blocks ever are: only rows tied with a judged row and likely duplicates need their document
    ID. Cheaper than writing 25-odd bytes a line to a temporary file (on this project's benchmark
    machine, 1.2 CPU s of 5 for 7M lines). The file is opened once more as its first block is kept
    and read through that descriptor (no name looked up per block; a name that became a FIFO is not
    waited on); a file changed since it was read (its contents, or replaced: `_identity`) is
    refused, not misread. Not for gzip (reading again means decompressing from the start): _DocStore."""

    def __init__(self, reader: _Reader):
        import threading

        self.reader, self.starts, self.fd = reader, [0], None
        self.lock = threading.Lock()

    def add(self, docs) -> None:
        if self.fd is None:  # the reader has opened the file: the same file, or a refusal
            import stat

            self.fd = os.open(self.reader.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            st = os.fstat(self.fd)
            if not stat.S_ISREG(st.st_mode) or _identity(self.fd) != self.reader.identity:
                raise self._changed()
        self.starts.append(self.starts[-1] + len(docs))

    def finish(self) -> None:
        pass

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def take(self, rows: np.ndarray):
        """The document IDs of rows (line - 1), as one Arrow string array."""
        import pyarrow as pa

        with self.lock:
            bi = np.searchsorted(self.starts, rows, "right") - 1
            order = np.argsort(bi, kind="stable")
            asked = [(i, rows[sel] - self.starts[i]) for i, sel in _groups(bi, order)]
            if len(asked) < 4:
                got = [self._block(i, local) for i, local in asked]
            else:  # two blocks at once: reading and finding the line breaks let go of the GIL
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(2, thread_name_prefix="rankgate-reread") as pool:
                    got = list(pool.map(lambda a: self._block(*a), asked))
        return _in_order(pa.concat_arrays(got), order) if got else _strings([])

    def to_file(self, path: str) -> _DocStore:
        """Every kept block's document IDs written to a _DocStore at `path` (each block read again once):
        for rows about to be partitioned, which would otherwise ask for every block once per partition."""
        out = _DocStore(path)
        with self.lock:
            for i in range(len(self.starts) - 1):
                out.add(self._column(i, self._read(i)))
        self.close()
        return out

    def _read(self, i: int) -> bytes:
        """Block i's bytes, read again: refused if the file is no longer what was read."""
        offset, size = self.reader.spans[i]
        if _identity(self.fd) != self.reader.identity:
            raise self._changed()
        block = os.pread(self.fd, size, offset)
        whole = block[-1:] == b"\n" and (not offset or os.pread(self.fd, 1, offset - 1) == b"\n")
        if not whole or len(block) != size or _identity(self.fd) != self.reader.identity:  # changed meanwhile
            raise self._changed()
        return block

    def _column(self, i: int, block: bytes):
        """The document column of block i's bytes (pyarrow's reader)."""
        import pyarrow as pa
        import pyarrow.csv as pcsv

        try:
            tbl = pcsv.read_csv(pa.py_buffer(block), read_options=_csv_options()[0],
                                parse_options=_csv_options()[1], convert_options=pcsv.ConvertOptions(
                                    include_columns=["d"], column_types={"d": pa.binary()}))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise self._changed() from None
        if len(tbl) != self.starts[i + 1] - self.starts[i]:
            raise self._changed()
        return tbl["d"].combine_chunks().view(pa.string())

    def _block(self, i: int, local: np.ndarray):
        """The document IDs of block i's rows `local` (0 = its first line), from the block read again:
        a few rows found line by line, many through pyarrow's reader."""
        block = self._read(i)
        if len(local) > FEW_LINES:
            return self._column(i, block).take(_ints(local))
        docs = _docs_in_lines(block, local, self.starts[i + 1] - self.starts[i])
        if docs is None:
            raise self._changed()
        return _strings_of(docs)

    def _changed(self) -> InputError:
        return InputError(self.reader.path, "the file changed while rankgate was reading it; run the command again "
                          "when it is complete")


FEW_LINES = 2000  # rows of one block asked for again, at most, found line by line (more: the block parsed again)


def _docs_in_lines(block: bytes, local: np.ndarray, n: int) -> list[bytes] | None:
    """The third field of the lines `local` (0-based) of a block of n plain lines (checked when it was
    first read: one space between fields); None when the block no longer has n lines. The line breaks
    are found by numpy, then each line's first WINDOW bytes are looked at for its spaces (a line whose
    third space is further on is split in Python)."""
    b = np.frombuffer(block, np.uint8)
    ends = np.flatnonzero(b == 10)
    if len(ends) != n:
        return None
    local = np.asarray(local, np.int64)
    if not len(local):
        return []
    stop = ends[local]
    start = ends[local - 1] + 1
    start[local == 0] = 0
    spaces = np.cumsum(b[np.minimum(start[:, None] + np.arange(WINDOW), len(b) - 1)] == 32, axis=1, dtype=np.int16)
    second, third = (spaces >= 2).argmax(1), (spaces >= 3).argmax(1)  # (0 where there is none)
    ok = (spaces[:, -1] >= 3) & (start + third < stop)
    out = [block[x:y] for x, y in zip((start + second + 1).tolist(), (start + third).tolist())]
    for i in np.flatnonzero(~ok).tolist():
        fields = block[int(start[i]):int(stop[i])].split(b" ", 3)
        if len(fields) < 4:
            return None
        out[i] = fields[2]
    return out


WINDOW = 96  # bytes of a line looked at for its first three spaces (_docs_in_lines)


def _strings_of(values: list[bytes]):
    """Byte strings (UTF-8) as an Arrow string array (see _strings)."""
    import pyarrow as pa

    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum([len(b) for b in values], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string(), len(values), [None, pa.py_buffer(offsets),
                                                                  pa.py_buffer(b"".join(values))]).cast(pa.string())


def _identity(f) -> tuple:
    """What tells an open file (or descriptor) changed: device, inode, size, modification time, and
    the change time, which no user call sets (a rewrite whose modification time is put back moves it)."""
    st = os.fstat(f if isinstance(f, int) else f.fileno())
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _gzipped(path: str) -> bool:
    """The file starts as gzip does (opened without waiting: a name that became a FIFO is not waited on)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.read(fd, 2) == b"\x1f\x8b"
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _doc_store(reader: _Reader, tmp: str):
    """Where a scattered file's document IDs are found again: the file itself, or (gzip) a temporary file."""
    return _DocStore(os.path.join(tmp, "documents.arrow")) if _gzipped(reader.path) else _Reread(reader)


def _groups(keys: np.ndarray, order: np.ndarray):
    """(key, positions) for each distinct key, `order` sorting keys stably."""
    k = keys[order]
    cut = np.flatnonzero(np.r_[True, k[1:] != k[:-1], True])
    for lo, hi in zip(cut[:-1].tolist(), cut[1:].tolist()):
        yield int(k[lo]), order[lo:hi]


class _Part:
    """Rows of a scattered file kept for `_settle_unsorted`, in file order: `rows[i]` is row i's
    line - 1; `key` each row's hash; judged rows only as their positions `jat` and document codes
    `jcode`; `docs` the document IDs of the rows, or where the whole file's are found again (_doc_store)."""

    __slots__ = ("rows", "q", "s", "key", "docs", "jat", "jcode", "end")

    def __init__(self, rows, q, s, judged, key, docs):
        self.rows, self.s, self.docs = rows, s, docs
        self.key = key
        self.q = q.astype(np.int32) if len(q) and int(q.max()) < 1 << 31 else q
        self.jat = np.flatnonzero(judged >= 0)
        self.jcode = judged[self.jat]
        self.end = rows[len(q) - 1] + 1 if len(q) else 0

    def docs_at(self, at: np.ndarray):
        """The document IDs of rows `at` (an Arrow string array)."""
        if isinstance(self.docs, (_DocStore, _Reread)):
            return self.docs.take(self.rows[at])
        return _one(self.docs.take(_ints(at)))


def _settle_unsorted(parts: list[_Part], tally: _Tally, qnames: list[str], jobs: int = 1) -> None:
    """Every line of the queries in `parts`, the rows in file order but the queries' lines mixed:
    counts, duplicates and the judged rows' ranks in trec_eval order, without sorting the rows.
    A judged row's rank is the number of its query's rows with a higher score, plus those with
    its score and a greater document ID (or the same document, earlier in the file)."""
    parts = [p for p in parts if len(p.q)]
    if not parts:
        return
    starts = np.cumsum([0] + [len(p.q) for p in parts])
    nq = max(int(p.q.max()) for p in parts) + 1
    tally.grow(nq)
    for p in parts:
        tally.num_ret[:nq] += np.bincount(p.q, minlength=nq)
    tally.done[:nq] |= tally.num_ret[:nq] > 0
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="rankgate-duplicates") as pool:  # beside the counting
        dups = pool.submit(_unsorted_duplicates, parts, starts, tally, qnames) if tally.find_duplicates else None
        _rank_by_counting(parts, starts, nq, tally, jobs)
        if dups is not None:
            dups.result()


def _rank_by_counting(parts: list[_Part], starts: np.ndarray, nq: int, tally: _Tally, jobs: int = 1) -> None:
    """The judged rows' ranks (see _settle_unsorted) into the tally: the rows counted in pieces of
    RANK_PIECE, `jobs` at once (numpy lets go of the GIL), each piece's counts the same for any jobs."""
    # the judged rows, grouped by query and by score within it
    at = np.concatenate([p.jat + starts[i] for i, p in enumerate(parts)])
    if not len(at):
        return
    jq = np.concatenate([p.q[p.jat] for p in parts]).astype(np.int64)
    js = np.concatenate([p.s[p.jat] for p in parts])
    jcode = np.concatenate([p.jcode for p in parts])
    o = np.argsort(js, kind="stable")  # by query, then score, then line (`at` grows already): two stable sorts,
    o = o[np.argsort(_dense(jq)[o], kind="stable")]  # the second a radix sort up to 65,536 queries
    at, jq, js, jcode = at[o], jq[o], js[o], jcode[o]
    cnt = np.bincount(jq, minlength=nq)
    first = np.zeros(nq + 1, np.int32 if len(at) < 1 << 31 else np.int64)  # 32 bits: half the memory traffic
    np.cumsum(cnt, out=first[1:])
    before = np.zeros(len(at) + 1, np.int64)  # difference array: rows ranked above each judged row
    per_query = cnt.astype(first.dtype)
    # A row ranked below every judged row of its query (most rows: judged documents sit near the
    # top) counts for none of them: one look at the query's lowest judged score rules it out.
    lowest = np.full(nq, np.inf)  # a query without judged rows: every row is below
    lowest[cnt > 0] = js[first[:-1][cnt > 0]]

    def counted(piece: tuple) -> tuple:
        """For rows a:b of part i: the spans of judged rows each row is ranked above, and its ties."""
        i, a, b = piece
        p = parts[i]
        rows = a + np.flatnonzero(lowest[p.q[a:b]] <= p.s[a:b])  # above or level with some judged row of its query
        q, s = p.q[rows], p.s[rows]
        k = per_query[q]  # judged rows of each row's query
        lo = first[q]
        c = _count_below(js, lo, k, s)  # judged rows of its query with a lower score: js[lo:lo + c]
        nxt = lo + c
        above = np.flatnonzero(c)
        tie = np.flatnonzero(c < k)
        tie = tie[js[nxt[tie]] == s[tie]]
        # (the spans counted at the end: one count of all, not one a piece as long as `before`)
        return lo[above], nxt[above], rows[tie] + starts[i], nxt[tie]

    pieces = [(i, a, min(a + RANK_PIECE, len(p.q))) for i, p in enumerate(parts) for a in range(0, len(p.q), RANK_PIECE)]
    spans_lo, spans_hi, tied, tied_to = zip(*_in_threads(counted, pieces, jobs))
    before += np.bincount(np.concatenate(spans_lo), minlength=len(before))
    before -= np.bincount(np.concatenate(spans_hi), minlength=len(before))
    del spans_lo, spans_hi
    rank = np.cumsum(before)[:-1]
    rank += _tie_ranks(parts, starts, np.concatenate(tied), np.concatenate(tied_to), at, jq, js)
    tally.jq.append(jq)
    tally.jdoc.append(jcode)
    tally.jrank.append(rank)


RANK_PIECE = 1 << 18  # rows of a scattered file counted at once (_rank_by_counting)


def _in_threads(f, items: list, jobs: int) -> list:
    """[f(x) for x in items], `jobs` at once in threads (for work that lets go of the GIL)."""
    if jobs < 2 or len(items) < 2:
        return [f(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(jobs, len(items)), thread_name_prefix="rankgate-count") as pool:
        return list(pool.map(f, items))


def _count_below(js: np.ndarray, lo: np.ndarray, m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """For each row, how many of js[lo:lo + m] (sorted, m >= 1) are below its score s. A row whose
    query has one judged row (most) takes one comparison; the others a binary search on them alone,
    all at once, without branches."""
    one = (js[lo] < s).view(np.uint8)  # the count where m is 1
    many = np.flatnonzero(m > 1)
    if not len(many):
        return one
    count = one.astype(lo.dtype)
    lo, m, s = lo[many], m[many], s[many]
    base = lo
    while True:
        half = m >> 1
        if not half.any():
            break
        mid = base + half
        base = np.where(js[mid] < s, mid, base)
        m = m - half
    count[many] = base - lo + (js[base] < s)
    return count


def _gather(parts: list[_Part], starts: np.ndarray, at: np.ndarray, field: str) -> np.ndarray:
    """parts' `field` (q, s, key) at global positions `at`."""
    out = None
    pi = np.searchsorted(starts, at, "right") - 1
    for i in np.flatnonzero(np.bincount(pi, minlength=len(parts))).tolist():
        sel = np.flatnonzero(pi == i)
        vals = getattr(parts[i], field)[at[sel] - starts[i]]
        if out is None:
            out = np.empty(len(at), vals.dtype)
        out[sel] = vals
    return out if out is not None else np.zeros(0, np.int64)


def _docs_of(parts: list[_Part], starts: np.ndarray, at: np.ndarray):
    """The document IDs at global positions `at`, as one Arrow string array."""
    import pyarrow as pa

    if not len(at):
        return _strings([])
    pi = np.searchsorted(starts, at, "right") - 1
    order = np.argsort(pi, kind="stable")
    store = parts[0].docs
    if isinstance(store, _Reread) and all(p.docs is store for p in parts):  # one file's: asked for at once
        rows = np.empty(len(at), np.int64)  # (line - 1 of each)
        for i, sel in _groups(pi, order):
            rows[sel] = parts[i].rows[at[sel] - starts[i]]
        return store.take(rows)
    chunks = [parts[i].docs_at(at[sel] - starts[i]) for i, sel in _groups(pi, order)]
    return _in_order(pa.concat_arrays(chunks), order)


def _in_order(got, order: np.ndarray):
    """`got`, the values at positions `order` (a stable sort's permutation), put back in the order asked
    for; no copy when they already are (rows asked for in file order: the ties, the duplicates)."""
    if not len(order) or (order[1:] > order[:-1]).all():
        return got
    back = np.empty(len(order), np.int64)
    back[order] = np.arange(len(order))
    return got.take(_ints(back))


def _tie_ranks(parts, starts, tied: np.ndarray, tied_to: np.ndarray, at: np.ndarray, jq: np.ndarray,
               js: np.ndarray) -> np.ndarray:
    """Per judged row (at, sorted by query and score), the rows of its query and score ranked above
    it: those with a greater document ID, or the same one earlier in the file. `tied` are the rows
    (global positions) with the score of some judged row of their query, the judged rows among them;
    `tied_to[i]` is the first judged row of that query and score."""
    import pyarrow as pa
    import pyarrow.compute as pc

    J = len(at)
    out = np.zeros(J, np.int64)
    new = np.r_[True, (jq[1:] != jq[:-1]) | (js[1:] != js[:-1])]
    group = np.cumsum(new) - 1  # judged rows of one query and score share a group
    g = group[tied_to]
    crowded = np.bincount(g, minlength=int(group[-1]) + 1)[g] > 1  # a judged row alone with its score: no tie
    if not crowded.any():
        return out
    g, tied = g[crowded], tied[crowded]
    o = np.lexsort((tied, -_byte_ranks(_docs_of(parts, starts, tied)), g))  # by group, document descending, line
    g, tied = g[o], tied[o]
    ahead = np.arange(len(g)) - np.searchsorted(g, g, "left")  # members of the group sorted above
    by_at = np.argsort(tied)
    pos = np.minimum(np.searchsorted(tied[by_at], at), len(tied) - 1)
    inside = tied[by_at[pos]] == at  # each judged row in a crowded group is among the tied rows
    out[inside] = ahead[by_at[pos[inside]]]
    return out


def _byte_ranks(strings) -> np.ndarray:
    """Each string's place among the distinct strings of an Arrow string array in byte order (equal
    strings, equal places): sorting numbers beats sorting a table with a string column (a file whose
    every row ties: 1.0 s against 0.1 s on 1.5M rows)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(strings)
    rank = np.empty(len(enc.dictionary), np.int64)
    rank[_np(pc.sort_indices(enc.dictionary))] = np.arange(len(enc.dictionary))
    return rank[_np(enc.indices)]


def _unsorted_duplicates(parts: list[_Part], starts: np.ndarray, tally: _Tally, qnames: list[str]) -> None:
    """Rows whose (query, document) came earlier in the file, among rows in any order of queries:
    the top 32 bits of the rows' hashes sorted once; of the rows that share them, those whose whole
    hash is shared too (true duplicates, and about one pair in 4 billion by chance) are sorted by
    query, document and line, and compared exactly (only they need their document IDs)."""
    twice = _repeated(_top(p.key) for p in parts)  # (each part's made again below: not all held at once)
    if not len(twice):
        return
    cand = np.concatenate([_among(_top(p.key), twice) + starts[i] for i, p in enumerate(parts)])
    cand = cand[_shared(_gather(parts, starts, cand, "key"))]
    if not len(cand):
        return
    q = _gather(parts, starts, cand, "q").astype(np.int64)
    o, docs, later = _repeats(q, _docs_of(parts, starts, cand), cand)
    q, cand = q[o], cand[o]
    if not len(later):
        return
    first = later[np.argsort(cand[later], kind="stable")[:MAX_LISTED]]  # in file order
    tally.add_duplicates(len(later), _gather_rows(parts, starts, cand[first]), q[first], docs.take(_ints(first)),
                         qnames)


def _shared(keys: np.ndarray) -> np.ndarray:
    """Which of `keys` another one equals."""
    o = np.argsort(keys, kind="stable")
    k = keys[o]
    eq = k[1:] == k[:-1]
    out = np.empty(len(keys), bool)
    out[o] = np.r_[eq, False] | np.r_[False, eq]
    return out


def _repeated(keys, pieces: int = 8) -> np.ndarray:
    """The values (32 bits) found more than once among the arrays `keys` (any iterable), sorted: one range
    of values at a time (an eighth of the rows each: a few MB to sort), two ranges at once (numpy lets go
    of the GIL: the counting beside it is soon done, and both cores sort). Each array's values are first
    put in order of their range, as it comes (a counting sort of their top bits, in the caches: one pass,
    not one a range)."""
    from concurrent.futures import ThreadPoolExecutor

    shift = np.uint32(32 - (pieces - 1).bit_length())
    ranges = []
    for k in keys:
        high = (k >> shift).astype(np.uint8)
        ends = np.cumsum(np.bincount(high, minlength=pieces))
        ranges.append(np.split(k[np.argsort(high, kind="stable")], ends[:-1]))

    def repeated_in(i: int) -> np.ndarray:
        piece = np.concatenate([r[i] for r in ranges])
        piece.sort()
        return piece[1:][piece[1:] == piece[:-1]]

    with ThreadPoolExecutor(2, thread_name_prefix="rankgate-duplicates") as pool:
        return np.concatenate(list(pool.map(repeated_in, range(pieces))))


def _top(key: np.ndarray) -> np.ndarray:
    """The top 32 bits of 64-bit hashes (what the duplicate check of a scattered file sorts)."""
    return (key >> np.uint64(32)).astype(np.uint32)


def _gather_rows(parts: list[_Part], starts: np.ndarray, at: np.ndarray) -> list[int]:
    """The line - 1 of rows at global positions `at`."""
    pi = (np.searchsorted(starts, at, "right") - 1).tolist()
    return [int(parts[i].rows[a - int(starts[i])]) for i, a in zip(pi, at.tolist())]


def _settle_parts(parts: list, tally: _Tally, qnames: list[str]) -> None:
    """Every line of the queries in `parts` ((rows, qcode, score, judged, key, docs) each): sort by
    query, then settle them at once."""
    import pyarrow as pa

    if not parts:
        return
    rows, qcode, score = (np.concatenate([p[i] for p in parts]) for i in (0, 1, 2))
    order = _by_query_then_score(qcode, score)
    judged, key = (np.concatenate([p[i] for p in parts])[order] for i in (3, 4))
    chunks = [c for p in parts for c in (p[5].chunks if isinstance(p[5], pa.ChunkedArray) else [p[5]])]
    docs = _Docs(pa.chunked_array(chunks, pa.string()), order)
    tally.settle(qcode[order], score[order], judged, key, docs, rows[order], qnames, False)


def _by_query_then_score(qcode: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The rows by query, then score descending (equal scores in any order: ties are settled by
    document later). Long rankings: grouped by query (a radix sort), then each one sorted on its own
    (2.4x faster than one sort of all rows for 1,000 rows a query); short ones: one sort of all."""
    dense = _dense(qcode)
    n = len(qcode)
    groups = int(dense.max()) + 1 if n else 0
    if n < 128 * groups:
        by_score = np.argsort(-score)
        return by_score[np.argsort(dense[by_score], kind="stable")]  # a radix sort up to 65,536 queries
    order = np.argsort(dense, kind="stable")
    bounds = np.searchsorted(dense[order], np.arange(groups + 1)).tolist()
    neg = -score[order]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        order[lo:hi] = order[lo:hi][np.argsort(neg[lo:hi])]
    return order


def _dense(codes: np.ndarray) -> np.ndarray:
    """The codes renumbered 0, 1, ... in their order, in the smallest unsigned type (numpy's stable
    sort is a radix sort up to 16 bits)."""
    present = np.flatnonzero(np.bincount(codes))
    remap = np.zeros(int(present[-1]) + 1 if len(present) else 1, np.uint32)
    remap[present] = np.arange(len(present), dtype=np.uint32)
    out = remap[codes]
    return out.astype(np.uint16) if len(present) <= 1 << 16 else out


class _Docs:
    """The document IDs of a chunk's rows: `src[i]` is row i's position in `docs` (None: i itself)."""

    def __init__(self, docs, src: np.ndarray | None = None):
        self.docs, self.src = docs, src

    def take(self, rows: np.ndarray):
        return self.docs.take(_ints(rows if self.src is None else self.src[rows]))


class _Rows:
    """rows[i] = row0 + i, without building the array."""

    def __init__(self, row0: int):
        self.row0 = row0

    def __getitem__(self, i):
        return self.row0 + i


HASH_STEP = 1 << 16  # strings hashed at a time (hash_strings)
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(9)], np.uint64)  # the low i bytes of a word


def hash_strings(d) -> np.ndarray:
    """A 64-bit hash of every string of a pyarrow string array, eight bytes a step: (h ^ word) x an
    odd prime per 8-byte word (zero-padded), the length mixed in first, then a final bit mix. A
    document ID of up to 8 bytes never collides with another; longer ones rarely (duplicates found
    by it are confirmed exactly)."""
    import pyarrow as pa

    if isinstance(d, pa.ChunkedArray):
        return np.concatenate([hash_strings(c) for c in d.chunks]) if d.num_chunks else np.zeros(0, np.uint64)
    n = len(d)
    if not n:
        return np.zeros(0, np.uint64)
    if n > 2 * HASH_STEP:  # a slice at a time: its temporaries stay in the caches (1M IDs: 0.06 -> 0.04 s)
        out = np.empty(n, np.uint64)
        for i in range(0, n, HASH_STEP):
            out[i:i + HASH_STEP] = hash_strings(d.slice(i, HASH_STEP))
        return out
    offs = np.frombuffer(d.buffers()[1], np.int32)[d.offset:d.offset + n + 1].astype(np.int64)
    lens = offs[1:] - offs[:-1]
    first, last = int(offs[0]), int(offs[-1])
    shortest, longest = int(lens.min()), int(lens.max())
    data = np.frombuffer(d.buffers()[2], np.uint8)[first:last] if last > first else np.zeros(0, np.uint8)
    prime = np.uint64(0x100000001B3)
    h = (np.uint64(0xCBF29CE484222325) ^ lens.astype(np.uint64)) * prime
    if shortest == longest and shortest:  # one length (long IDs usually are): whole columns of words
        for j in range(0, shortest, 8):
            h = (h ^ _words_at(d.buffers()[2], data, first, shortest, n, j)) * prime
    else:
        padded = np.zeros(last - first + 8, np.uint8)  # the strings' bytes, and 8 zeros to read past the end
        padded[:last - first] = data
        words = np.ndarray((len(padded) - 7,), "<u8", padded, 0, (1,))  # the 8 bytes from every position
        start = offs[:-1] - first
        for j in range(0, longest, 8):
            rows = np.flatnonzero(lens > j) if j >= shortest else None  # None: every string is that long
            w = words[start + j if rows is None else start[rows] + j]
            if j + 8 > shortest:  # keep only each string's own bytes of its last word
                w &= _MASKS[np.minimum(lens if rows is None else lens[rows], j + 8) - j]
            if rows is None:
                h = (h ^ w) * prime
            else:
                h[rows] = (h[rows] ^ w) * prime
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


def _words_at(buf, data: np.ndarray, first: int, size: int, n: int, j: int) -> np.ndarray:
    """Bytes j to j + 8 of each of n strings of `size` bytes that sit one after another from byte `first`
    of `buf` (`data` their bytes), as little-endian words, bytes past a string's end zero: read in place,
    a word every `size` bytes (no copy of the strings into a padded table: a copy a string), the last
    strings' words, which would read past the buffer, from a padded copy of those alone."""
    inside = min(n, max(0, (buf.size - first - j - 8) // size + 1))  # strings whose word ends in the buffer
    w = np.ndarray((inside,), "<u8", buf, first + j, (size,))
    if inside < n:
        tail = np.zeros((n - inside) * size + 8, np.uint8)
        tail[:(n - inside) * size] = data[inside * size:]
        w = np.r_[w, np.ndarray((n - inside,), "<u8", tail, j, (size,))]
    return w & _MASKS[size - j] if j + 8 > size else w


def _duplicates(gid: np.ndarray, key: np.ndarray, docs: _Docs, rows) -> np.ndarray:
    """Rows whose (query, document) came earlier in the file (rows grouped by query, `key` their
    hash, `rows[i]` row i's line - 1)."""
    top = (key >> np.uint64(32)).astype(np.uint32)  # half the bytes to sort: the usual case has no candidate
    twice = _twice(top)
    if not len(twice):
        return np.zeros(0, np.int64)
    maybe = _among(top, twice)
    del top
    # the candidates by query, document and line: a repeat sits right after its first, even when a
    # document whose hash collides with it comes in between in the file (crafted IDs: every row of a query)
    o, _, later = _repeats(gid[maybe], docs.take(maybe), np.asarray(rows[maybe], np.int64))
    return np.sort(maybe[o[later]])


def _repeats(q: np.ndarray, docs, line: np.ndarray) -> tuple:
    """Rows sorted by query code, document ID (Arrow strings) and line, by Arrow (no Python object a row):
    (that order, the documents in it, the positions in it of the rows whose query and document the row
    before has: the later of two equal rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    docs = _one(docs)
    o = _np(pc.sort_indices(pa.Table.from_arrays([_ints(q), docs, _ints(line)], names=["q", "d", "at"]),
                            sort_keys=[("q", "ascending"), ("d", "ascending"), ("at", "ascending")]))
    q, docs = q[o], docs.take(_ints(o))
    return o, docs, np.flatnonzero((q[1:] == q[:-1]) & _bools(pc.equal(docs[1:], docs[:-1]))) + 1


def _twice(top: np.ndarray) -> np.ndarray:
    """The values of `top` (32 bits) found more than once, sorted, each as often as it comes again (np.isin
    and np.unique would import numpy.ma: 50 ms). Of SLOTTED_AT values or more (a block's 100k rows), only
    those that share a slot of a table of their top bits with another are sorted (about one in ten; the
    table is written, never cleared)."""
    n = len(top)
    if SLOTTED_AT <= n <= SLOTTED_AT << 6:  # (more values than that crowd the table's slots)
        bits = min(n.bit_length() + 4, 20)  # a slot for each 16 values, or fewer (a 4 MB table at most)
        slot = top >> np.uint32(32 - bits)
        last = np.empty(1 << bits, np.int32)
        row = np.arange(n, dtype=np.int32)
        last[slot] = row  # one row of each slot (whichever is written last)
        alone = last[slot] == row  # False: another row has this slot
        if alone.all():
            return np.zeros(0, np.uint32)
        last[slot[~alone]] = -1  # the slots of two rows or more
        top = top[last[slot] == -1]
    srt = np.sort(top)
    return srt[1:][srt[1:] == srt[:-1]]


SLOTTED_AT = 4096  # values (_twice) from which a table rules most out before the sort (up to 64 times as many)


def _among(top: np.ndarray, twice: np.ndarray) -> np.ndarray:
    """The positions of `top` (32-bit values) whose value is in `twice` (sorted, few): a table of
    their top 20 bits rules most out with one gather, a sorted search settles the rest."""
    mark = np.zeros(1 << 20, bool)
    mark[twice >> np.uint32(12)] = True
    maybe = np.flatnonzero(mark[top >> np.uint32(12)])
    at = np.minimum(np.searchsorted(twice, top[maybe]), len(twice) - 1)
    return maybe[twice[at] == top[maybe]]


def _trec_order(qp: np.ndarray, score: np.ndarray, docs, needed: np.ndarray | None = None) -> np.ndarray | None:
    """A permutation into trec_eval order, or None when the rows already are in it. With `needed` (a mask
    of the rows whose rank is used), rows tied on score are put in document order only where a needed
    row is among them: the others' order among themselves moves no needed row's rank."""
    n = len(qp)
    if not n:
        return None
    same = qp[1:] == qp[:-1]
    grouped = int(np.count_nonzero(~same)) + 1 == int(np.count_nonzero(np.bincount(qp)))
    perm = None
    if not grouped or bool((same & (score[1:] > score[:-1])).any()):
        perm = np.lexsort((-score, qp))
        qp, score = qp[perm], score[perm]
        same = qp[1:] == qp[:-1]
    tie = same & (score[1:] == score[:-1])
    if tie.any():
        import pyarrow as pa
        import pyarrow.compute as pc

        in_group = np.r_[tie, False] | np.r_[False, tie]
        rows = np.flatnonzero(in_group)
        group = np.cumsum(np.r_[True, ~tie])[rows]
        if needed is not None:  # only the tie groups with a needed row
            wanted = needed[rows if perm is None else perm[rows]]
            has = np.zeros(int(group[-1]) + 1, bool)
            has[group[wanted]] = True
            rows, group = rows[has[group]], group[has[group]]
            if not len(rows):
                return perm
        src = rows if perm is None else perm[rows]
        tied_docs = docs.take(src)
        o = _np(pc.sort_indices(pa.Table.from_arrays([_ints(group), tied_docs], names=["g", "d"]),
                                sort_keys=[("g", "ascending"), ("d", "descending")]))
        if perm is None:
            perm = np.arange(n)
        perm[rows] = src[o]
    return perm


def _plain_qrels_bytes(path: str):
    """The bytes of a qrels file large enough for read_trec_qrels_fast, with nothing that sends it to the
    general reader (gzip, a BOM, a tab, CR, VT, FF or NUL, a comment, a line starting with a space, bad
    UTF-8, no line break at the end); None otherwise."""
    try:
        if os.path.getsize(path) < MIN_BYTES or not available():
            return None
        from rankgate.core.formats.textio import open_regular

        with open_regular(path) as f:  # a name swapped for a pipe since it was sniffed: refused, not waited on
            head = f.read(BLOCK)
            # a first block with no line break or with a NUL is not plain: the general reader refuses it
            # (at line 1, within MAX_LINE) without this reading the whole file first
            if b"\n" not in head or b"\x00" in head:
                return None
            data = bytearray(max(os.fstat(f.fileno()).st_size, len(head)))  # the rest read in place (no copy)
            data[:len(head)] = head
            got = len(head)
            del head
            while got < len(data) and (more := f.readinto(memoryview(data)[got:])):
                got += more
            rest = f.read()  # (a file that grew since: read to its end)
            if got < len(data) or rest:
                data = data[:got] + rest
    except (OSError, InputError):
        return None
    if data[:2] == b"\x1f\x8b" or data[:3] == b"\xef\xbb\xbf" or not data.endswith(b"\n"):
        return None
    if any(data.find(c) >= 0 for c in _NOT_PLAIN) or data.startswith((b"#", b" ")) or (
            data.find(b"#") >= 0 and data.find(b"\n#") >= 0):  # (one byte looked for first: 10x faster)
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return data


def read_trec_qrels_fast(path: str, catalog: Catalog | None = None) -> Qrels | None:
    """Plain TREC qrels (`query iteration document grade`, single spaces, integer grades, no comments,
    one grade per pair) through pyarrow: the Qrels the general reader gives, or None for it to read
    the file (and name any fault). For files of MIN_BYTES or more when pyarrow is there (100k
    judgments: about 10x faster than a Python loop per line)."""
    data = _plain_qrels_bytes(path)
    if data is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    from rankgate.core.model import grade_problem

    lean_allocator()

    try:  # strings, encoded once over the whole column below (faster than pyarrow's dictionary per chunk)
        tbl = pcsv.read_csv(pa.py_buffer(data), read_options=pcsv.ReadOptions(column_names=["q", "i", "d", "g"]),
                            parse_options=_csv_options()[1], convert_options=pcsv.ConvertOptions(
                                column_types={"q": pa.string(), "i": pa.binary(), "d": pa.string(),
                                              "g": pa.string()}, strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    del data  # the table holds its own copy
    if not len(tbl) or pc.min(pc.binary_length(tbl["i"])).as_py() == 0:
        return None
    grades = tbl["g"].combine_chunks()
    grade = _whole_numbers(grades)
    if grade is None:
        return None  # not a whole number, or one too long for a float to hold: the general reader says
    if any(grade_problem(int(g)) for g in unique(grade).tolist()):
        return None
    pool = pa.default_memory_pool()  # (mimalloc, when chosen, keeps what is freed: given back as each step ends)
    queries, docs = tbl["q"], tbl["d"]
    del tbl, grades  # each column dropped as soon as it is encoded
    qdict, qindex = _encode_grouped(_one(queries))
    del queries
    docs = _one(docs)
    dhash = hash_strings(docs)
    if _empty_or_comment(qdict) or _empty_or_comment(docs):
        return None
    catalog = catalog or Catalog()
    qmap = catalog.queries.extend(qdict.to_pylist(), distinct=True)  # in the order the file first names them
    qcode = qmap[qindex]
    q = qcode.astype(np.int32)
    if not len(catalog.docs) and _pairs_once_hashed(q, dhash):
        # the document codes made when first asked for (Catalog.docs_later, Qrels.doc): the run reader looks
        # the judgments up by their documents' IDs and hashes (by pair), and `score` never asks for codes
        q.flags.writeable = False
        fill = _DocCodes(docs, dhash, q)
        qrels = Qrels(path, catalog, q, None, grade.astype(np.int64), qmap.tolist(), format="trec", meta={})
        later(qrels, "doc", fill.codes_of(catalog))
        catalog.docs_later(fill)
        _PENDING[:] = [weakref.ref(q), field_token(qrels, "doc"), fill]
        _ONCE[:] = [weakref.ref(q), lambda: None]
        return qrels  # (the freed parse kept by malloc, not given back: the run's reading reuses it, 50 MB of
        #               page faults fewer on 1M judgments)
    pool.release_unused()  # before the documents become Python strings (1M judged: a peak of 380 MB -> 250)
    ddict, dindex, dhash = _encode(docs, dhash)
    del docs
    if not len(catalog.docs):  # Arrow strings (their Python strings made if asked for); the run reader
        dcode = catalog.docs.adopt(ddict)[dindex]  # looks the judged documents up by them
        _HASHED[:] = [ddict, dhash, hash_strings]  # (their hashes, which the judged lookup takes: _name_hashes)
    else:
        dcode = catalog.docs.extend(ddict.to_pylist(), distinct=True)[dindex]
    if not _pairs_once(qcode, dcode):
        return None  # a pair judged twice: the general reader names both lines
    d = dcode.astype(np.int32)
    q.flags.writeable = d.flags.writeable = False  # what was checked stays so (_judged_once)
    _ONCE[:] = [weakref.ref(q), weakref.ref(d)]
    return Qrels(path, catalog, q, d, grade.astype(np.int64), qmap.tolist(), format="trec", meta={})


_PENDING: list = []  # (a weak reference to the query codes, Qrels.doc's token, _DocCodes) of the qrels last read


def _raw_docs(qrels: Qrels) -> tuple | None:
    """(each judgment's document ID as Arrow strings, their hash_strings) of qrels read_trec_qrels_fast read
    whose document codes are not made yet (each pair judged once: it checked), else None."""
    if not _PENDING or _PENDING[0]() is not qrels.q or _PENDING[1] is not field_token(qrels, "doc") \
            or not is_later(qrels, "doc"):
        return None
    return _PENDING[2].raw()


def judged_ids(qrels: Qrels):
    """Each judgment's document ID (Arrow strings, in the qrels' order) of qrels read_trec_qrels_fast read whose
    document codes are not made yet, else None: what names a judgment's document without making them."""
    raw = _raw_docs(qrels)
    return None if raw is None else raw[0]


def _pairs_once_hashed(q: np.ndarray, h: np.ndarray) -> bool:
    """No (q[i], document i) comes twice, by the documents' hashes `h` mixed with the query codes: True
    proves it (equal pairs have equal keys); False may be two documents of one hash (the exact check says)."""
    if len(q) < 2:
        return True
    key = _mix(np.arange(int(q.max()) + 1))[q]
    key ^= h
    return _all_distinct(key)


class _DocCodes:
    """The document codes of qrels read_trec_qrels_fast read, made when first asked for (Catalog.docs_later
    and Qrels.doc both call on this): each judgment's document ID and its hash are kept until then."""

    def __init__(self, docs, h: np.ndarray, q: np.ndarray):
        import threading

        self.docs, self.h, self.q = docs, h, weakref.ref(q)
        self.codes, self.lock = None, threading.Lock()

    def raw(self) -> tuple | None:
        with self.lock:
            return None if self.docs is None else (self.docs, self.h)

    def __call__(self, interner) -> np.ndarray:
        """The codes, the documents interned into `interner` (the qrels' catalog's) the first time."""
        with self.lock:
            if self.codes is None:
                ddict, dindex, dhash = _encode(self.docs, self.h)
                d = interner.adopt(ddict)[dindex].astype(np.int32)
                _HASHED[:] = [ddict, dhash, hash_strings]
                d.flags.writeable = False
                if _ONCE and _ONCE[0]() is self.q() and self.q() is not None:  # (checked once, by hash: _judged_once)
                    _ONCE[1] = weakref.ref(d)
                self.codes, self.docs, self.h = d, None, None
        return self.codes

    def codes_of(self, catalog: Catalog):
        """Qrels.doc's maker: the codes in the catalog's document interner (made by this when not yet)."""
        return lambda: self(catalog.docs)


_ONCE: list = []  # weak references to the query and document codes of the last qrels read_trec_qrels_fast read


def _judged_once(qrels: Qrels) -> bool:
    """These qrels judge each (query, document) once, as read_trec_qrels_fast found (their codes are those
    it checked and made read-only, so they are still what it checked): no need to check again."""
    doc = qrels.doc  # (first: codes left for later are made now, and _DocCodes names them in _ONCE)
    return bool(_ONCE) and _ONCE[0]() is qrels.q and _ONCE[1]() is doc and not qrels.q.flags.writeable \
        and not doc.flags.writeable


def _encode(strings, h: np.ndarray | None = None) -> tuple:
    """pc.dictionary_encode's answer for an Arrow string array: (the distinct strings in order of first
    appearance, each string's index among them as int32 numpy), and the distinct strings' hash_strings.
    By the strings' 64-bit hashes, sorted once with each string's position packed in their low bits (a
    million judged document IDs, nearly all distinct: Arrow's hash table took 0.3-0.5 s, this about a
    fifth); every string is confirmed equal to the first of its hash (a true collision of two different
    strings, about once in 10^7 such files, takes Arrow's dictionary)."""
    import pyarrow.compute as pc

    n = len(strings)
    if n < 2 or n >= 1 << 31:
        return _arrow_encoded(strings)
    h = hash_strings(strings) if h is None else h  # (`h`: those hashes, made already)
    at, new = _by_top_bits(h)  # equal hashes' strings together, in file order; new: the first of its top bits
    again = np.flatnonzero(~new)  # a string behind another of its hash's top bits: the same string?
    if len(again) and (h[at[again]] != h[at[again - 1]]).any():  # two hashes alike in their top bits only
        at = np.argsort(h, kind="stable")  # (1M strings: about 3% of files): the whole hashes sorted, stable
        hs = h[at]
        np.not_equal(hs[1:], hs[:-1], out=new[1:])
        del hs
        again = np.flatnonzero(~new)
    if len(again) and not _bools(pc.equal(strings.take(_ints(at[again])), strings.take(_ints(at[again - 1])))).all():
        return _arrow_encoded(strings)  # two strings of one hash
    head = np.flatnonzero(new)
    first = at[head]  # the first appearance of each distinct string
    seen = np.zeros(n, bool)
    seen[first] = True
    where = np.flatnonzero(seen)  # the distinct strings' positions, in file order
    code = np.cumsum(seen, dtype=np.int32)
    code -= 1
    index = np.empty(n, np.int32)
    index[at] = np.repeat(code[first], np.diff(np.r_[head, n]))
    return strings.take(_ints(where)), index, h[where]


def _arrow_encoded(strings) -> tuple:
    """_encode's answer by Arrow's dictionary (and the hashes of its strings)."""
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(strings)
    return enc.dictionary, _np(enc.indices).astype(np.int32), hash_strings(enc.dictionary)


def _encode_grouped(strings) -> tuple:
    """pc.dictionary_encode's (dictionary, int32 numpy indices) of an Arrow string array whose equal strings
    mostly stand together (the queries of a qrels file): only the first of each stretch is encoded."""
    import pyarrow.compute as pc

    n = len(strings)
    if n < 2:
        enc = pc.dictionary_encode(strings)
        return enc.dictionary, _np(enc.indices).astype(np.int32)
    heads = np.r_[0, np.flatnonzero(_bools(pc.not_equal(strings[1:], strings[:-1]))) + 1]
    enc = pc.dictionary_encode(strings.take(_ints(heads)) if len(heads) < n else strings)
    index = _np(enc.indices).astype(np.int32)
    return enc.dictionary, np.repeat(index, np.diff(np.r_[heads, n])) if len(heads) < n else index


_HASHED: list = []  # (the judged documents' names as the qrels reader gave them, their hashes, the hash function)


def _name_hashes(names) -> np.ndarray:
    """hash_strings of the judged documents' names: the qrels reader's, when they are its names."""
    if _HASHED and _HASHED[0] is names and _HASHED[2] is hash_strings:
        h = _HASHED[1]
        _HASHED.clear()  # (taken once: the lookup made of them is kept, _LOOKUP; 8 MB a million names)
        return h
    return hash_strings(names) if len(names) else np.zeros(0, np.uint64)


def _whole_numbers(strings) -> np.ndarray | None:
    """The values of an Arrow string array whose every value is a whole number of 1 to 15 digits with
    an optional sign (`[+-]?[0-9]{1,15}`), or None when one is not: from the bytes, a digit place a step
    (qrels grades are one or two characters; a regular expression and a cast cost 10x more)."""
    n = len(strings)
    if not n:
        return np.zeros(0, np.int64)
    offs = np.frombuffer(strings.buffers()[1], np.int32)[strings.offset:strings.offset + n + 1]
    data = np.frombuffer(strings.buffers()[2], np.uint8) if strings.buffers()[2] is not None else np.zeros(0, np.uint8)
    if (offs[1:] == offs[:-1]).any():
        return None  # an empty value
    if offs[-1] - offs[0] == n:  # one character each (most qrels): the digits themselves
        digit = data[offs[0]:offs[-1]] - np.uint8(ord("0"))
        return digit.astype(np.int64) if int(digit.max()) <= 9 else None
    offs = offs.astype(np.int64)
    lens = np.diff(offs)
    first = data[offs[:-1]]
    signed = (first == ord("-")) | (first == ord("+"))
    digits = lens - signed
    if int(digits.min()) < 1 or int(digits.max()) > 15:
        return None
    start = offs[:-1] + signed
    value = np.zeros(n, np.int64)
    for place in range(int(digits.max())):
        rows = np.flatnonzero(digits > place) if place >= int(digits.min()) else None  # None: every row
        d = data[start + place if rows is None else start[rows] + place].astype(np.int64) - ord("0")
        if ((d < 0) | (d > 9)).any():
            return None
        if rows is None:
            value = value * 10 + d
        else:
            value[rows] = value[rows] * 10 + d
    return np.where(first == ord("-"), -value, value)


class FullColumns(NamedTuple):
    """Every row of a plain TREC run in the file's own codes: queries and documents numbered in the order
    the file first names them (`qnames[q[i]]`, `dnames[doc[i]]`), scores and line numbers."""

    qnames: list[str]
    q: np.ndarray  # int32
    dnames: list[str]
    doc: np.ndarray  # int32
    score: np.ndarray
    where: np.ndarray  # int64, the line of each row
    darrow: object = None  # `dnames` as the Arrow string array they came from (None: not kept)


def read_full_columns(path: str, progress=None) -> FullColumns | None:
    """Every row of a plain TREC run (`FullColumns`), or None when the file is not plain. For the review app,
    which shows whole rankings: the blocks' query names are interned as they come; the documents are
    encoded once for the whole file, by pyarrow (a per-block dictionary and its Python lookups cost the
    app about half a CPU second per million rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    reader = _Reader(path, None, progress)
    reader._columns = reader._full_local
    qs, ds, ss = [], [], []
    try:
        for _row0, q, d, s in reader.blocks():
            qs.append(q)
            ds.extend(d.chunks if isinstance(d, pa.ChunkedArray) else [d])
            ss.append(s)
    except NotPlain:
        return None
    except LineTooLong as e:
        raise _too_long(path, e.line) from None
    docs = pa.chunked_array(ds, pa.string())
    if docs.nbytes < 1 << 30:  # one array (offsets of 32 bits) encodes faster than its chunks
        docs = pa.concat_arrays(docs.chunks)
    enc = pc.dictionary_encode(docs)
    if isinstance(enc, pa.ChunkedArray):  # (the chunks share the one dictionary of the whole column)
        darrow = enc.chunk(0).dictionary if enc.num_chunks else None
        dnames = darrow.to_pylist() if darrow is not None else []
        dcode = _np([c.indices for c in enc.chunks])
    else:
        darrow = enc.dictionary
        dnames, dcode = darrow.to_pylist(), _np(enc.indices)
    q = np.concatenate(qs).astype(np.int32)
    return FullColumns(reader.qnames, q, dnames, dcode.astype(np.int32), np.concatenate(ss),
                       np.arange(1, len(q) + 1, dtype=np.int64), darrow)


def read_full_run(path: str, name: str | None, catalog: Catalog, progress=None) -> Run | None:
    """Every row of a plain TREC run, as the general reader gives it (`read_trec_run`), or None when the
    file is not plain (read_full_columns, in the catalog's codes)."""
    from rankgate.core.formats.trec import run_name_from_path

    got = read_full_columns(path, progress)
    if got is None:
        return None
    qmap, dmap = catalog.queries.extend(got.qnames), catalog.docs.extend(got.dnames)
    return Run(name or run_name_from_path(path), path, catalog, qmap[got.q], dmap[got.doc], got.score, got.where,
               format="trec", query_codes=qmap.tolist())


def lean_reader(path: str, name: str | None, qrels: Qrels, progress=None, keep_top: int = 0, jobs: int = 1,
                deep: bool = False) -> list[LeanRun] | None:
    """For load_bundle: a TREC run through the fast path, or None for the usual reader. `keep_top`
    keeps each ranking's top rows that nobody judged for their query too (for the gate's review queue).
    `deep`: the gate's measures see whole rankings, so every row of a document judged for any query is
    kept (jsonl_lean.watch_top_k's what-ifs look for them at any rank)."""
    from rankgate.core.formats.sniff import detect_format
    from rankgate.core.formats.trec import run_name_from_path

    try:
        if os.path.getsize(path) < MIN_BYTES or detect_format(path) != "trec":
            return None
        run = read_lean_run(path, name or run_name_from_path(path), qrels, progress, keep_top, jobs, by_pair=not deep)
    except OSError:
        return None  # the usual reader says what is wrong with the file
    return [run] if run is not None else None
