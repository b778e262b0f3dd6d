"""A cache of parsed run files, so that re-opening a large benchmark is fast.

Reading a TREC run of a million lines takes the core reader about 1.5 s; its
columns (query and document codes, scores, source lines) load from a `.npz`
file in a few milliseconds. They are stored in trec_eval's order, so that the
engine's sort (about a second for a million rows with tied scores) is paid
once, when the entry is written. An entry is keyed by the file's absolute path,
size, modification time and inode and by the rankgate version, so an edited
or replaced file is read again; a file modified less than RACY_S before it is
read is not kept (`file_key`: an edit in place within the same modification
time would leave every one of those unchanged). Entries live under the data folder
(`RANKGATE_HOME` in tests) in `cache/runs/`; a broken entry is ignored and
rewritten. Small files (under 128 KB) are read directly (the cache would not pay).

The same folder keeps the labels of a benchmark's qrels file as the app's
comparison with the workspace reads them (`file_grades`): re-reading 80,000
JSONL judgments with reasons on every open cost about a second.

This belongs beside the readers in the core (`core.formats`) in time; it
lives here until then so that only the app depends on it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Callable

import numpy as np

from rankgate.core.version import __version__
from rankgate.core.formats import read_runs, split_run_spec
from rankgate.core.model import Catalog, Run, unique

MIN_BYTES = 1 << 17  # files smaller than this (128 KB) are read directly
FORMAT = 3  # 2: query and document names as one text each, not JSON; 3: a run ranking a document twice is never kept


def cache_dir() -> Path:
    from rankgate.store.paths import data_dir, make_private_dir

    path = data_dir() / "cache" / "runs"
    make_private_dir(path)
    return path


def _key(path: str, spec: str) -> str | None:
    name, _ = split_run_spec(spec)  # NAME=FILE names the run; the same file by another path is the same entry
    return file_key(path, FORMAT, name, settled=True)


# A file whose modification time is less than this before now is not kept in the cache ("racy", as git calls
# it): the key is taken before the file is read, and an edit in place made after the read but within the
# same tick of the file system's clock (ext4: a few milliseconds; FAT: 2 seconds) keeps the size, the
# modification time and the inode, so the entry would stand for the file as it no longer is. A file settled
# this long before its key is taken cannot be edited again without a new modification time. The file is
# read again at the next open, settled by then. (Files rankgate itself writes, the label store's, change size
# at each append and inode at each replace: they are keyed without this.) RANKGATE_RACY_S sets another
# (the tests: 0, as their files are written a moment before they are opened).
RACY_S = 2.0


def racy(st: os.stat_result) -> bool:
    """The file was modified less than RACY_S ago (or in the future: another machine's clock)."""
    import time

    settle = float(os.environ.get("RANKGATE_RACY_S", RACY_S))
    return time.time_ns() - st.st_mtime_ns < settle * 1_000_000_000


def file_key(path: str, *parts, settled: bool = False) -> str | None:
    """The identity of a file as it is now (absolute path, size, modification time, inode, the rankgate
    version and `parts`); None when it cannot be read, or with `settled` when it was modified too recently
    to stand for its content (`racy`: a file the user edits, not one rankgate writes)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if settled and racy(st):
        return None
    ident = json.dumps([*parts, __version__, os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino])
    return hashlib.sha256(ident.encode("utf-8")).hexdigest()[:32]


def read_runs_cached(spec: str, catalog: Catalog, *, min_bytes: int | None = None,
                     folder: Path | None = None, on_hit: Callable[[str], None] | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     later: list[Callable[[], None]] | None = None, ahead: "ReadAhead | None" = None) -> list[Run]:
    """The runs of one file (as `core.formats.read_runs`), from the cache when it is fresh;
    `progress(bytes done, bytes)` while a file is parsed. With `later`, a new entry is not written here:
    its writing is appended to `later` (the app writes it after its first frame). With `ahead`, a plain
    TREC file's columns are those it parsed meanwhile (ReadAhead)."""
    _, path = split_run_spec(spec)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    if size < (MIN_BYTES if min_bytes is None else min_bytes):
        return _checked(read_runs(spec, "auto", catalog, progress))
    key = _key(path, spec)
    where = (folder or cache_dir()) / f"{key}.npz"
    early = ahead.take(spec) if ahead is not None else None
    if early is not None and early.key != key:  # the file changed meanwhile: read as it is now
        early = None
    if early is not None:  # parsed ahead (it had no entry): its columns, as read below
        cols = early.result(progress)
        if cols is not None:
            return [_from_columns(spec, path, cols, catalog, where if key is not None else None, later)]
    elif key is not None and where.is_file():
        try:
            runs = _load(where, catalog)
            _used(where)
            if on_hit:
                on_hit(str(where))
            return runs
        except Exception:  # a torn or foreign entry: read the file again
            pass
    cols = _read_columns(spec, path, progress) if early is None else None  # (ahead: not plain TREC)
    if cols is not None:  # a plain TREC file: its names looked up in the catalog once each
        return [_from_columns(spec, path, cols, catalog, where if key is not None else None, later)]
    local = Catalog()
    runs = [in_trec_order(r) for r in _checked(_read(spec, path, local, progress))]  # refused: never cached
    if key is not None:
        _write(later, where, runs, local.queries.names, local.docs.names)
    return [_recode(r, local, catalog) for r in runs]


class _Early:
    """One file's columns being parsed by a ReadAhead (a future), with how far it has got."""

    def __init__(self, pool, spec: str, path: str, key: str | None) -> None:
        self.key, self.done = key, (0, 1)
        self.future = pool.submit(_read_columns, spec, path, self._reading)

    def _reading(self, done: int, total: int) -> None:
        self.done = (done, total)

    def result(self, progress: Callable[[int, int], None] | None):
        """The columns (as `_read_columns` gives them, or raises); `progress` told meanwhile, so that the
        caller may stop (it raises) while the file is still parsed."""
        from concurrent.futures import TimeoutError

        while True:
            try:
                return self.future.result(timeout=0.05)
            except TimeoutError:
                if progress:
                    progress(*self.done)


class ReadAhead:
    """A first open's run files parsed in one background thread while the label store is opened (its first
    import is pure Python; pyarrow parses with the GIL released, on the other core): plain TREC files of
    `min_bytes` or more with no cache entry. Their columns are in each file's own codes, so the catalog's
    codes (the labels' first) are given as before, when `read_runs_cached` takes them. `close()` drops
    what was not taken (a cancelled or failed load)."""

    def __init__(self, specs: list[str], *, min_bytes: int | None = None, folder: Path | None = None) -> None:
        self._early: dict[str, _Early] = {}
        self._pool = None
        if os.environ.get("RANKGATE_FAST", "1") == "0":
            return
        for spec in specs:
            _, path = split_run_spec(spec)
            try:
                if os.path.getsize(path) < (MIN_BYTES if min_bytes is None else min_bytes):
                    continue
            except OSError:
                continue
            key = _key(path, spec)
            if key is not None and ((folder or cache_dir()) / f"{key}.npz").is_file():
                continue  # read from its entry (a re-open)
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(1, thread_name_prefix="rankgate-read-ahead")
            self._early.setdefault(spec, _Early(self._pool, spec, path, key))

    def take(self, spec: str) -> _Early | None:
        return self._early.pop(spec, None)

    def close(self) -> None:
        for early in self._early.values():
            early.future.cancel()
        self._early.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False)


def _write(later: list | None, where: Path, *entry) -> None:
    """`_save(where, *entry)` now, or appended to `later`; a failure to write is ignored (read again next time)."""
    def write() -> None:
        try:
            _save(where, *entry)
        except OSError:
            pass

    write() if later is None else later.append(write)


def _read_columns(spec: str, path: str, progress):
    """A plain TREC run's columns in the file's own codes through pyarrow (trec_fast.read_full_columns),
    None for another file (the general reader reads it)."""
    if os.environ.get("RANKGATE_FAST", "1") == "0":
        return None
    from rankgate.core.formats import detect_format, trec_fast

    if not trec_fast.available() or detect_format(path) != "trec":
        return None
    return trec_fast.read_full_columns(path, progress)


def _from_columns(spec: str, path: str, cols, catalog: Catalog, where: Path | None, later: list | None) -> Run:
    """The run in the catalog's codes, checked and in trec_eval's order; its entry written (in the file's own
    codes, which are the entry's) when `where`."""
    from rankgate.core.formats.trec import run_name_from_path

    name = split_run_spec(spec)[0] or run_name_from_path(path)
    qmap, dmap = _codes(catalog.queries, cols.qnames), _codes(catalog.docs, cols.dnames, cols.darrow)
    run = Run(name, path, catalog, qmap[cols.q], dmap[cols.doc], cols.score, cols.where, "trec",
              query_codes=qmap.tolist())
    _checked([run])  # refused: never cached
    perm = _trec_perm(run)
    if perm is not None:
        run = _permuted(run, perm)
    if where is not None:
        q, d = (cols.q, cols.doc) if perm is None else (cols.q[perm], cols.doc[perm])
        _write(later, where, [run], cols.qnames, cols.dnames, [(q, d)])
    return run


def _checked(runs: list[Run]) -> list[Run]:
    """A run that ranks a document twice for a query is refused with its file:line, as `rankgate gate` does."""
    from rankgate.core.validate import refuse_duplicates

    for run in runs:
        refuse_duplicates(run)
    return runs


def _read(spec: str, path: str, catalog: Catalog, progress) -> list[Run]:
    """A run file that is not plain TREC (or without pyarrow): the general reader."""
    return read_runs(spec, "auto", catalog, progress)


def in_trec_order(run: Run) -> Run:
    """The run's rows in trec_eval's order (query blocks; score descending, then document ID
    descending, byte-wise), as the engine sorts them; every later scoring finds them in order and
    skips its sort (a million rows with ties take the engine about a second each time)."""
    perm = _trec_perm(run)
    return run if perm is None else _permuted(run, perm)


def _trec_perm(run: Run) -> np.ndarray | None:
    """The rows' permutation to trec_eval's order; None when they are in it."""
    if not len(run.q):
        return None
    perm = _grouped_order(run)
    if perm is None:  # queries scattered through the file: one sort of every row
        docorder = run.catalog.docs.order()[run.doc]
        perm = np.lexsort((-docorder, -run.score, run.q))
    if np.array_equal(perm, np.arange(len(perm))):
        return None
    return perm


def _permuted(run: Run, perm: np.ndarray) -> Run:
    return Run(run.name, run.path, run.catalog, run.q[perm], run.doc[perm], run.score[perm], run.where[perm],
               run.format, run.meta, run.latency_ms, run.context_tokens, list(run.query_codes))


def _grouped_order(run: Run) -> np.ndarray | None:
    """The order `in_trec_order` sorts to, for a file whose queries come in blocks (as most do; a query's
    code is the order of its first line, so the codes do not go down): only the blocks where a score
    goes up, or ties with a document ID not going down, are sorted (a million rows: a few milliseconds
    instead of half a second). None for a scattered file."""
    q, score, doc = run.q, run.score, run.doc
    n = len(q)
    if n < 2 or bool((q[1:] < q[:-1]).any()):
        return None if n >= 2 else np.arange(n)
    same = q[1:] == q[:-1]
    ds = score[1:] - score[:-1]
    bad = same & (ds > 0)
    tie = np.flatnonzero(same & (ds == 0))
    if len(tie) > 10_000:  # many ties: the catalog's byte-wise order of every document
        docorder = run.catalog.docs.order()
        bad[tie] = docorder[doc[tie + 1]] >= docorder[doc[tie]]
    elif len(tie):
        names = run.catalog.docs.names
        bad[tie] = [names[b].encode("utf-8", "surrogatepass") >= names[a].encode("utf-8", "surrogatepass")
                    for a, b in zip(doc[tie].tolist(), doc[tie + 1].tolist())]
    perm = np.arange(n)
    if not bad.any():
        return perm
    blocks = unique(q[1:][bad])
    starts, stops = np.searchsorted(q, blocks, "left"), np.searchsorted(q, blocks, "right")
    rows = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), stops.tolist())])
    sub = doc[rows]
    codes = unique(sub)  # their documents ranked by ID, byte-wise (as Interner.order)
    names = run.catalog.docs.names
    key = np.array([names[c] for c in codes.tolist()], dtype=str)
    rank = np.empty(len(codes), np.int64)
    rank[np.argsort(key, kind="stable")] = np.arange(len(codes))
    docrank = rank[np.searchsorted(codes, sub)]
    perm[rows] = rows[np.lexsort((-docrank, -score[rows], q[rows]))]
    return perm


def _save(where: Path, runs: list[Run], qnames: list[str], dnames: list[str],
          codes: list[tuple[np.ndarray, np.ndarray]] | None = None) -> None:
    """The entry: the runs with their codes into `qnames` and `dnames` (the runs' own, or `codes`: (query
    codes, document codes) of each run)."""
    arrays: dict[str, np.ndarray] = {}
    header = {"runs": []}
    for what, names in (("queries", qnames), ("docs", dnames)):
        if any("\n" in n or not n for n in names):  # (a JSON run's IDs may hold a line break)
            header[what] = names
        else:  # one text, split on load: much faster than JSON for 100,000s of IDs
            arrays[what] = np.frombuffer("\n".join(names).encode("utf-8", "surrogatepass"), np.uint8)
    for i, r in enumerate(runs):
        header["runs"].append({"name": r.name, "path": r.path, "format": r.format, "meta": r.meta,
                               "latency_ms": r.latency_ms, "context_tokens": r.context_tokens,
                               "query_codes": list(r.query_codes)})
        q, d = codes[i] if codes is not None else (r.q, r.doc)
        arrays[f"q{i}"], arrays[f"d{i}"], arrays[f"s{i}"], arrays[f"w{i}"] = q, d, r.score, r.where
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    tmp = where.with_name(where.name + f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, where)
    _prune(where.parent, "[0-9a-f]*.npz", KEEP_RUNS, lambda p: len(p.name) == 36)


KEEP_RUNS = 32  # run entries kept, the most recently used (each edit of a run file leaves its old entry behind)
KEEP_LABELS = 8  # qrels-label entries kept


def _used(where: Path) -> None:
    try:
        os.utime(where)  # recently used: kept by _prune
    except OSError:
        pass


def _prune(folder: Path, pattern: str, keep: int, entry=lambda p: True) -> None:
    try:
        entries = sorted((p for p in folder.glob(pattern) if entry(p)), key=lambda p: p.stat().st_mtime_ns,
                         reverse=True)
    except OSError:
        return
    for old in entries[keep:]:
        for path in (old, _map_path(old)):
            try:
                path.unlink()
            except OSError:
                pass


class _Mapped(dict):
    """The arrays of an uncompressed `.npz` entry (as `np.savez` writes it), mapped from the file rather than
    read: `np.load` copies every array through the zip reader and checks each one's CRC, a pass over the
    whole entry (about 80 MB for 3 runs of a million rows) on every open. The map is private (copy on write):
    the arrays are writable as `np.load`'s are, and a change never reaches the file. A torn entry (cut
    short) fails here (ValueError), as it does in `np.load`; the entry is written whole, then renamed."""

    def __init__(self, where: Path) -> None:
        import mmap
        import zipfile

        super().__init__()
        with open(where, "rb") as f:
            with zipfile.ZipFile(f) as zf:
                infos = zf.infolist()
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if os.fstat(f.fileno()).st_size else b""
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                raise ValueError(f"not an entry of stored arrays: {info.filename}")
            self[info.filename[:-4]] = _npy_at(buf, info)

    def __enter__(self) -> "_Mapped":
        return self

    def __exit__(self, *exc) -> None:
        pass  # (the map stays while arrays use it, and goes with the last of them)


def _npy_at(buf, info) -> np.ndarray:
    """The array of one stored `.npy` member of a zip file mapped as `buf`."""
    import io
    import struct

    from numpy.lib import format as npy

    at = info.header_offset
    if buf[at:at + 4] != b"PK\x03\x04":
        raise ValueError("not a zip member")
    name_len, extra_len = struct.unpack("<HH", buf[at + 26:at + 30])
    start = at + 30 + name_len + extra_len
    if start + info.file_size > len(buf):
        raise ValueError("entry cut short")
    head = io.BytesIO(buf[start:start + min(info.file_size, 1 << 16)])
    version = npy.read_magic(head)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"an array of format {version}")
    read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
    shape, fortran, dtype = read_header(head)
    if dtype.hasobject:
        raise ValueError("objects in an entry")
    count = int(np.prod(shape, dtype=np.int64))
    if head.tell() + count * dtype.itemsize > info.file_size:
        raise ValueError("entry cut short")
    arr = np.frombuffer(buf, dtype, count, start + head.tell()) if count else np.zeros(0, dtype)
    return arr.reshape(shape, order="F" if fortran else "C")


def _load(where: Path, catalog: Catalog) -> list[Run]:
    with _Mapped(where) as z:
        header = json.loads(z["header"].tobytes().decode("utf-8"))
        maps = _mapped(where, catalog, _count(z, header, "queries"), _count(z, header, "docs"))
        if maps is None:
            qnames, dnames = _names(z, header, "queries"), _names(z, header, "docs")
            state, n0 = _state(catalog), (len(catalog.queries), len(catalog.docs))
            qmap, dmap = _codes(catalog.queries, qnames), _codes(catalog.docs, dnames)
            _save_map(where, state, qmap, dmap, catalog.queries.names[n0[0]:], catalog.docs.names[n0[1]:])
        else:
            qmap, dmap = maps
        runs = []
        for i, h in enumerate(header["runs"]):
            q, d = z[f"q{i}"], z[f"d{i}"]
            runs.append(Run(h["name"], h["path"], catalog, qmap[q] if len(q) else q, dmap[d] if len(d) else d,
                            z[f"s{i}"], z[f"w{i}"], h["format"], h["meta"], h["latency_ms"], h["context_tokens"],
                            _taken(qmap, h["query_codes"])))
    return runs


# An entry's codes in the review's catalog, as the last open found them ("<key>-map.npz"): a re-open of
# the same benchmark builds the same catalog (labels first, then the runs in order), so while the catalog
# holds the same names when the entry is read, its codes are those of last time and only the names new to
# the catalog are interned, with no lookup of the others (200,000 document IDs: 0.15 s less per run).

def _state(catalog: Catalog) -> str | None:
    """A digest of the catalog's names in order (None when a name holds a line break)."""
    h = hashlib.sha256()
    for interner in (catalog.queries, catalog.docs):
        digest = _names_digest(interner)
        if digest is None:
            return None
        h.update(f"{len(interner)}\n{digest}\n".encode())
    return h.hexdigest()[:32]


_digests: dict[int, tuple] = {}  # id(interner) -> (interner, names hashed, their running hash or None): the
# queries' and the documents' of the catalog being loaded


def _names_digest(interner) -> str | None:
    """sha256 of the interner's names, each followed by a line break (None when a name holds one), kept
    running: interners only grow, so each run of an open hashes only the names added since the last
    (was: every name again for each run, 200,000 of them)."""
    got = _digests.get(id(interner))
    if got is None or got[0] is not interner or got[1] > len(interner):
        if len(_digests) >= 2:  # (the catalog being loaded only: an earlier one is let go)
            _digests.clear()
        got = (interner, 0, hashlib.sha256())
    _, done, h = got
    names = interner.names
    if h is not None and done < len(names):
        h = h.copy()
        new = names[done:]
        text = "\n".join(new) + "\n"
        if text.count("\n") != len(new):
            h = None
        else:
            h.update(text.encode("utf-8", "surrogatepass"))
    _digests[id(interner)] = (interner, len(names), h)
    return h.hexdigest() if h is not None else None


def _map_path(where: Path) -> Path:
    return where.with_name(where.stem + "-map.npz")


def _save_map(where: Path, state: str | None, qmap: np.ndarray, dmap: np.ndarray, qnew: list[str],
              dnew: list[str]) -> None:
    """The entry's codes in this catalog, with the names the entry added to it (`qnew`, `dnew`, in code order):
    a re-open takes those from here rather than splitting every name of the entry."""
    if state is None or any("\n" in n for n in qnew) or any("\n" in n for n in dnew):
        return
    try:
        tmp = where.with_name(where.name + f".{os.getpid()}.map.tmp")
        with open(tmp, "wb") as f:
            np.savez(f, state=np.frombuffer(state.encode(), np.uint8), q=qmap, d=dmap,
                     qnew=np.frombuffer("\n".join(qnew).encode("utf-8", "surrogatepass"), np.uint8),
                     dnew=np.frombuffer("\n".join(dnew).encode("utf-8", "surrogatepass"), np.uint8))
        os.replace(tmp, _map_path(where))
    except OSError:
        pass


def _count(z, header: dict, what: str) -> int:
    """How many names the entry holds (as `len(_names(...))`, without making them)."""
    if what in header:
        return len(header[what])
    data = z[what]
    return int(np.count_nonzero(data == 10)) + 1 if len(data) else 0


def _mapped(where: Path, catalog: Catalog, nq: int, nd: int):
    """(query codes, document codes) of the entry's `nq` and `nd` names from its map, interning the names new
    to the catalog as the map has them; None when the map is missing or was made for another catalog (nothing
    is interned then)."""
    path = _map_path(where)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            state, qmap, dmap = z["state"].tobytes().decode(), z["q"], z["d"]
            added = [z[k].tobytes().decode("utf-8", "surrogatepass") for k in ("qnew", "dnew")]
    except Exception:  # (a map of before it kept the names it added: made again)
        return None
    if len(qmap) != nq or len(dmap) != nd or state != _state(catalog):
        return None
    plan = []
    for interner, text, codes in ((catalog.queries, added[0], qmap), (catalog.docs, added[1], dmap)):
        n0 = len(interner)
        new = codes[codes >= n0]
        names = text.split("\n") if text else []
        if len(new) != len(names) or not np.array_equal(unique(new), np.arange(n0, n0 + len(new))) or \
                (len(codes) and codes.min() < 0):
            return None
        plan.append((interner, names, n0))
    for interner, new, n0 in plan:  # the new names take the codes they had: n0, n0 + 1, ...
        if new:  # (distinct, and new to the catalog while the digest holds: no lookup of each, and no
            interner.append_new(new)  # dictionary made for them when the catalog has none yet)
        if len(interner) != n0 + len(new):  # (cannot happen while the digest holds)
            raise ValueError("catalog out of step with the entry's map")
    return qmap, dmap


def _taken(qmap: np.ndarray, codes: list[int]) -> list[int]:
    """[int(qmap[c]) for c in codes], in one numpy pass (10,000 queries a run)."""
    return qmap[np.asarray(codes, np.int64)].tolist() if len(codes) else []


def _codes(interner, names: list[str], arrow=None) -> np.ndarray:
    """The codes of `names` in the interner, new ones interned: known names are looked up at C speed
    (dict.get through map), only the new ones one by one. `arrow`: the names as the Arrow strings they came
    from (a fast reader's dictionary): a large list is looked up by pyarrow's hash among an Arrow copy of the
    interner's names (`_arrow_copy`) instead, the same codes without a dictionary probe per name (200,000
    document IDs in a 200,000-name dictionary: 0.14 CPU s a run, its probes missing the caches)."""
    from itertools import repeat

    out = _arrow_codes(interner, arrow) if arrow is not None and len(names) >= ARROW_LOOKUP else None
    if out is None:
        out = np.fromiter(map(interner.codes.get, names, repeat(-1)), np.int64, len(names))
    new = np.flatnonzero(out < 0)
    if len(new):  # `names` are distinct (a catalog's): the new ones take the next codes, in order, as `code`
        n0 = len(interner)  # would give them, without a second lookup each
        added = [names[i] for i in new.tolist()]
        if len(dict.fromkeys(added)) != len(added):  # (a damaged entry: read the file again)
            raise ValueError("an entry's names repeat")
        interner.codes.update(zip(added, range(n0, n0 + len(added))))
        interner.names.extend(added)
        interner.order_changed()
        out[new] = np.arange(n0, n0 + len(added))
        if arrow is not None:
            _arrow_added(interner, n0, arrow, new)
    return out.astype(np.int32)


ARROW_LOOKUP = 20_000  # names from which `_codes` looks a fast reader's dictionary up by pyarrow

_arrow_copies: dict[int, tuple] = {}  # id(interner) -> (interner, names copied, their Arrow strings or None):
# the documents' of the catalog being loaded (as `_digests`)


def _arrow_copy(interner):
    """The interner's names as one Arrow string array (kept up to date as it grows: only the names added since
    are converted), None when a name is not UTF-8 (surrogate-escaped bytes: the dictionary's way then)."""
    from rankgate.core.model import _arrow_strings

    got = _arrow_copies.get(id(interner))
    if got is None or got[0] is not interner or got[1] > len(interner):
        if len(_arrow_copies) >= 1:  # (the catalog being loaded only: an earlier one is let go)
            _arrow_copies.clear()
        got = (interner, 0, _arrow_strings([]))
    _, done, copy = got
    names = interner.names
    if copy is not None and done < len(names):
        import pyarrow as pa

        try:
            copy = pa.concat_arrays([copy, _arrow_strings(names[done:])])
        except UnicodeError:
            copy = None
    _arrow_copies[id(interner)] = (interner, len(names), copy)
    return copy


def _arrow_codes(interner, arrow) -> np.ndarray | None:
    """Each of `arrow`'s names' code in the interner, -1 when it has none (None: no Arrow copy of its names).
    The interner's names are distinct, and a string's UTF-8 bytes are equal exactly when it is: the codes
    a dictionary probe gives."""
    import pyarrow as pa

    from rankgate.core.model import _looked_up

    copy = _arrow_copy(interner)
    if copy is None or not isinstance(arrow, pa.Array) or not pa.types.is_string(arrow.type):
        return None
    return _looked_up(arrow, copy)


def _arrow_added(interner, n0: int, arrow, new: np.ndarray) -> None:
    """The names `_codes` just interned (`arrow`'s at `new`, codes n0 onwards), added to the Arrow copy too."""
    import pyarrow as pa

    from rankgate.core.model import _arrow_ints

    got = _arrow_copies.get(id(interner))
    if got is None or got[0] is not interner or got[2] is None or got[1] != n0:
        return  # (no copy, or one behind: the next lookup converts what it lacks)
    taken = arrow.take(_arrow_ints(new))
    _arrow_copies[id(interner)] = (interner, n0 + len(new), pa.concat_arrays([got[2], taken.cast(pa.string())]))


def _names(z, header: dict, what: str) -> list[str]:
    if what in header:
        return header[what]
    data = z[what].tobytes()
    return data.decode("utf-8", "surrogatepass").split("\n") if data else []


def _recode(run: Run, local: Catalog, catalog: Catalog) -> Run:
    if local is catalog:
        return run
    qmap = _codes(catalog.queries, local.queries.names)
    dmap = _codes(catalog.docs, local.docs.names)
    return Run(run.name, run.path, catalog, qmap[run.q] if len(run.q) else run.q,
               dmap[run.doc] if len(run.doc) else run.doc, run.score, run.where, run.format, run.meta,
               run.latency_ms, run.context_tokens, [int(qmap[c]) for c in run.query_codes])


# ---- the labels of a benchmark's qrels file, for the comparison with its workspace -----------------------

LABELS_FORMAT = 1


def file_grades(manifest, read, *, min_bytes: int = MIN_BYTES, folder: Path | None = None) -> dict:
    """{(query, doc): grade} of the manifest's qrels file as `read(manifest)` gives them (with details,
    which are not kept), from the cache when the file is unchanged. A file that no longer reads raises as
    `read` does, every time."""
    path = str(manifest.qrels)
    try:
        size = os.path.getsize(path)
    except OSError:
        size = 0
    key = file_key(path, "qrels-labels", LABELS_FORMAT, settled=True) if size >= min_bytes else None
    where = (folder or cache_dir()) / f"labels-{key}.npz" if key is not None else None
    if where is not None and where.is_file():
        try:
            with np.load(where, allow_pickle=False) as z:
                header = json.loads(z["header"].tobytes().decode("utf-8"))
                qs, ds, grades = _names(z, header, "queries"), _names(z, header, "docs"), z["grades"].tolist()
            if len(qs) == len(ds) == len(grades):
                _used(where)
                return dict(zip(zip(qs, ds), grades))
        except Exception:  # a torn or foreign entry: read the file again
            pass
    grades, _ = read(manifest)
    if where is not None:
        try:
            _save_labels(where, grades)
            _prune(where.parent, "labels-*.npz", KEEP_LABELS)
        except OSError:
            pass
    return grades


def _save_labels(where: Path, grades: dict) -> None:
    arrays: dict[str, np.ndarray] = {"grades": np.fromiter(grades.values(), np.int64, len(grades))}
    header: dict = {}
    for what, names in (("queries", [q for q, _ in grades]), ("docs", [d for _, d in grades])):
        if any("\n" in n or not n for n in names):
            header[what] = names
        else:
            arrays[what] = np.frombuffer("\n".join(names).encode("utf-8", "surrogatepass"), np.uint8)
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    tmp = where.with_name(where.name + f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, where)


# ---- the comparison of a benchmark's qrels file with its workspace, as the last open found it -------------

COMPARISON_FORMAT = 1
KEEP_COMPARISONS = 8


def comparison_key(ws, manifest) -> str | None:
    """The comparison's inputs as they are now: the qrels file (as `file_key`), and the workspace's snapshot,
    journal and sync record (size, modification time, inode); None when the qrels file cannot be read."""
    from rankgate.store import paths

    parts: list = ["comparison", COMPARISON_FORMAT, os.path.realpath(ws.path)]
    for p in (ws.path, paths.sidecar(ws.path, paths.JOURNAL), paths.sidecar(ws.path, paths.SYNC)):
        try:
            st = os.stat(p)
            parts.append([st.st_size, st.st_mtime_ns, st.st_ino])
        except OSError:
            parts.append(None)
    return file_key(str(manifest.qrels), *parts, settled=True)


def compare_cached(ws, manifest, read, *, folder: Path | None = None):
    """(`store.sync.compare(ws, manifest)`, None), or from the cache when none of its inputs changed since
    (`comparison_key`): (the comparison without the file's labels and the last sync's, a function giving them
    for `sync.Unexported`). Re-opening an 80,000-label benchmark compared them again each time: 0.3 s."""
    from rankgate.store import sync

    key = comparison_key(ws, manifest)
    where = (folder or cache_dir()) / f"compare-{key}.json" if key is not None else None
    fresh = _just_imported(ws, manifest)
    if fresh is not None:
        if where is not None:
            _save_comparison(where, fresh[0])
        ws.import_comparison = (fresh[0], folder)  # saved again once the import is folded (keep_import_comparison)
        return fresh
    if where is not None and where.is_file():
        try:
            got = json.loads(where.read_text(encoding="utf-8"))
            record = sync.read_record(ws.path, labels=False)
            if bool(got["synced"]) == (record is not None):
                comparison = sync.Comparison(
                    Path(ws.path), Path(manifest.qrels), [sync.Difference(*d) for d in got["differences"]],
                    got["file_labels"], got["workspace_labels"], record[0] if record else None, {}, {},
                    {} if record else None)
                _used(where)

                def inputs():
                    base = sync.read_record(ws.path)
                    return file_grades(manifest, read, folder=folder), base[1] if base else None

                return comparison, inputs
        except Exception:  # a torn or foreign entry: compare again
            pass
    comparison = sync.compare(ws, manifest, file_grades(manifest, read, folder=folder), {})
    if where is not None:
        _save_comparison(where, comparison)
    return comparison, None


def _save_comparison(where: Path, comparison) -> None:
    try:
        data = {"synced": comparison.synced is not None, "file_labels": comparison.file_labels,
                "workspace_labels": comparison.workspace_labels,
                "differences": [[d.query, d.doc, d.base, d.file, d.workspace, d.side]
                                for d in comparison.differences]}
        tmp = where.with_name(where.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, where)
        _prune(where.parent, "compare-*.json", KEEP_COMPARISONS)
    except OSError:
        pass


def _just_imported(ws, manifest):
    """As `compare_cached`, when this open imported the folder's qrels file into a new workspace, every row
    of it a new label, and nothing changed since: the workspace holds exactly the file's labels, as the sync
    record has them. In sync, no difference, nothing read again (a first open of 80,000 labels read and
    compared them again: 0.6 s). None otherwise."""
    from rankgate.store import sync

    report = getattr(ws, "benchmark_import", None)
    at = getattr(ws, "import_grades", None)
    ws.import_grades = None  # once: the workspace's next comparison is made afresh
    if report is None or at is None or not getattr(ws, "imported_into_empty", False) or at[0] != ws.edit_seq:
        return None  # (at[0]: no edit since the import)
    synced = at[1]
    if report.conflicts or report.changed or report.unchanged or report.kept or \
            not report.added == getattr(report, "file_labels", -1) == len(synced):
        return None
    got = synced
    summary = sync.pending_summary(ws.path)  # (the record hashed and written after the first frame, if left)
    if summary is None:
        record = sync.read_record(ws.path, labels=False)
        if record is None:
            return None
        summary = record[0]
    comparison = sync.Comparison(Path(ws.path), Path(manifest.qrels), [], len(got), len(synced), summary,
                                 {}, {}, {})

    def inputs():
        base = sync.read_record(ws.path)
        return got, base[1] if base else None

    return comparison, inputs


def keep_import_comparison(ws) -> None:
    """The first open's comparison (`_just_imported`) under the store's files as they are now (its import
    folded, nothing else changed): the next open finds it."""
    got = getattr(ws, "import_comparison", None)
    ws.import_comparison = None
    if got is None or ws.manifest is None:
        return
    key = comparison_key(ws, ws.manifest)
    if key is not None:
        _save_comparison((got[1] or cache_dir()) / f"compare-{key}.json", got[0])


# ---- the labels of a label store as the review's first catalog, as the last open made them --------------

STORE_QRELS_FORMAT = 1
KEEP_STORE_QRELS = 8


def store_key(ws) -> str | None:
    """The label store as it is now: its snapshot (as `file_key`) and its journals (size, modification time,
    inode); None for a store another process may write meanwhile (read-only, shared) or seen blind."""
    from rankgate.store import paths

    if ws.readonly or ws.blind or getattr(ws, "shared", False) or getattr(ws, "_journal", None) is None:
        return None
    parts: list = ["store-qrels", STORE_QRELS_FORMAT]
    for suffix in (paths.JOURNAL, paths.JOURNAL_PREV):
        try:
            st = os.stat(paths.sidecar(ws.path, suffix))
            parts.append([st.st_size, st.st_mtime_ns, st.st_ino])
        except OSError:
            parts.append(None)
    return file_key(str(ws.path), *parts)


def store_qrels(ws, catalog: Catalog, *, folder: Path | None = None):
    """`ws.to_qrels(catalog)` into a fresh catalog (the review's: labels first), with the document names, codes
    and grades as the last open made them while the store's files are unchanged (`store_key`): 80,000 labels'
    documents interned and their columns checked cost about 0.1 s on every open. Anything else is read as
    `to_qrels` reads it, and kept for the next open."""
    key = store_key(ws) if not len(catalog.queries) and not len(catalog.docs) else None
    if key is None:
        return ws.to_qrels(catalog)
    where = (folder or cache_dir()) / f"store-{key}.npz"
    if where.is_file():
        try:
            known = _load_known(where)
            qrels = ws.to_qrels(catalog, known=known)
            _used(where)
            return qrels
        except Exception:  # a torn or foreign entry, or one that does not fit (the catalog is left as it was)
            if len(catalog.queries) or len(catalog.docs):
                raise
    parts: list = []
    qrels = ws.to_qrels(catalog, parts=parts)
    if parts:
        _save_known(where, parts[0])
    return qrels


def _load_known(where: Path):
    from rankgate.store.labels import KnownQrels

    with np.load(where, allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes().decode("utf-8"))
        if header.get("format") != STORE_QRELS_FORMAT:
            raise ValueError("an entry of another format")
        docs = _names(z, header, "docs")
        return KnownQrels(docs, z["ds"].astype(np.int32, copy=False), z["grades"].astype(np.int64, copy=False),
                          z["counts"].astype(np.int64, copy=False), z["fast"].astype(bool, copy=False),
                          header.get("collection_version"))


def _save_known(where: Path, known) -> None:
    if any("\n" in n or not n for n in known.docs):  # (names kept as one text: a name with a line break is not)
        return
    arrays = {"docs": np.frombuffer("\n".join(known.docs).encode("utf-8", "surrogatepass"), np.uint8),
              "ds": known.ds, "grades": known.grades, "counts": known.counts, "fast": known.fast,
              "header": np.frombuffer(json.dumps({"format": STORE_QRELS_FORMAT,
                                                  "collection_version": known.collection_version}).encode("utf-8"),
                                      np.uint8)}
    try:
        tmp = where.with_name(where.name + f".{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, where)
        _prune(where.parent, "store-*.npz", KEEP_STORE_QRELS)
    except OSError:
        pass
