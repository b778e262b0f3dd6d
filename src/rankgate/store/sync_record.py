"""The records a workspace keeps beside it about its qrels file: the sync summary (`<db>.sync`, line 1: what
`rankgate gate` reads cheaply), the last export to a file (`<db>.exported`), and how a pair is keyed in them.
The lowest of the sync modules: store/sync.py, store/unexported.py and store/transfer/export.py build on it,
so none of them imports another to reach these."""

from __future__ import annotations

import json
import os
import stat
import _thread  # threading's RLock is this one; threading itself is not on the gate's path
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store import paths

SYNC_FORMAT = 1


def open_sidecar(path):
    """A record beside the workspace, opened for reading; OSError when there is none or it is not a regular
    file (a FIFO would block, a link to /dev/zero would be read until memory runs out)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return os.fdopen(fd, "rb")


def stamp(db: Path) -> list:
    """What a workspace's files look like now: [size, mtime_ns] of the snapshot and of its journal."""
    out = []
    for p in (db, paths.sidecar(db, paths.JOURNAL)):
        try:
            st = os.stat(p)
            out.append([st.st_size, st.st_mtime_ns])
        except OSError:
            out.append(None)
    return out


# A sync record whose writing was left for later (`defer`): the app's first open of a benchmark hashes its
# 80,000 labels for it after its first frame. Any read or write of that workspace's record in this process
# writes it first (`flush_pending`), so no reader sees the record missing or older than it is; while the
# import itself is not written yet (`held`), a reader finds no record, as a process killed then leaves none.
_pending: dict[str, tuple[dict, object, object]] = {}
_pending_lock = _thread.RLock()  # (re-entrant: the writing itself writes the record)


def _pending_key(db) -> str:
    return os.path.abspath(os.fspath(db))


def defer(db, summary: dict, write, held=None) -> None:
    """`write()` writes `db`'s sync record, whose summary is `summary`: done by the next `flush_pending(db)`,
    never while `held()` is true (the workspace's files do not hold those labels yet: a first import applied in
    memory, its journal record not written; a record written then would outlive a kill or a failed write)."""
    with _pending_lock:
        _pending[_pending_key(db)] = (summary, write, held)


def restamp_pending(db) -> None:
    """The files of `db` were written after its sync record was left for later (a first import journaled after
    the app's first frame): the record's stamp is theirs as they are now."""
    with _pending_lock:
        got = _pending.get(_pending_key(db))
        if got is not None:
            got[0]["stamp"] = stamp(db)


def pending_summary(db) -> dict | None:
    """The summary of `db`'s sync record while its writing waits (None: none waits), without writing it."""
    got = _pending.get(_pending_key(db))
    return got[0] if got is not None else None


def flush_pending(db, *, or_drop: bool = False) -> None:
    """Write `db`'s sync record now if its writing was left for later (a no-op otherwise). A record that cannot
    be written is left unwritten: the workspace's next open rebuilds it from the import's history. One still
    held (`defer`) stays for later, or with `or_drop` is dropped (a newer record replaces it; the workspace
    closed without writing its import)."""
    if not _pending:
        return
    with _pending_lock:
        key = _pending_key(db)
        got = _pending.get(key)
        if got is not None and got[2] is not None and got[2]() and not or_drop:
            return
        got = _pending.pop(key, None)
        if got is not None and not (got[2] is not None and got[2]()):
            try:
                got[1]()
            except (InputError, OSError):
                pass


def read_summary(db: str | os.PathLike) -> dict | None:
    """Line 1 of `<db>.sync` (cheap: the labels on line 2 are not read); None when there is none."""
    flush_pending(db)
    try:
        with open_sidecar(paths.sidecar(db, paths.SYNC)) as f:
            line = f.readline()
        summary = json.loads(line)
        return summary if isinstance(summary, dict) and summary.get("format") == SYNC_FORMAT else None
    except (OSError, ValueError):
        return None


def label_key(qid: str, doc: str) -> str:
    """The key of a (query, document) pair in the sync record: a hash, never the IDs."""
    import hashlib

    text = f"{len(qid)}:{qid} {len(doc)}:{doc}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _resolved(path) -> str:
    return os.path.realpath(os.path.abspath(os.fspath(path)))


@dataclass
class QrelsFile:
    """A qrels file opened on its own (`rankgate review QRELS --runs ...`): what this module reads of a
    benchmark's manifest, so the file and its workspace are compared, and a changed file offered, as a
    benchmark folder's are. Its folder is the file's own; there is no benchmark.toml."""

    qrels: Path
    name: str
    folder: Path
    path: Path | None = None
    queries: None = None
    corpus: None = None
    guidelines: None = None
    acl: None = None
    runs: tuple = ()


def record_export(ws, grades: dict[tuple[str, str], int], path) -> str | None:
    """An export wrote `grades` to the file `path`: kept beside a store of no benchmark folder (a `--db`
    store, the app's workspace of a qrels file), so that the app on raw files reminds of label edits that
    neither the qrels file nor the last export holds (tui/screens/sync.py). A folder's count is against
    its own qrels file: nothing kept. Advice: a failure to write it (a read-only store) does not fail the
    export, whose file is written already; returns the note to print then (None otherwise)."""
    from rankgate.store.storage import atomic_write

    from rankgate.core.outfile import is_stream

    manifest = getattr(ws, "manifest", None)
    if manifest is not None and not isinstance(manifest, QrelsFile):
        return None
    if is_stream(path):  # /dev/null, a pipe: the labels are kept nowhere, so their edits stay unexported
        return None
    summary = {"format": SYNC_FORMAT, "path": _resolved(path), "at": ws._clock()}
    base = {label_key(q, d): g for (q, d), g in grades.items()}
    record = paths.sidecar(ws.path, paths.EXPORTED)
    try:
        atomic_write(record, (json.dumps(summary, ensure_ascii=False) + "\n" +
                     json.dumps(base, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass"), sync=False)
    except (InputError, OSError) as e:  # atomic_write says why as an InputError (a read-only folder, a full disk)
        why = e.what if isinstance(e, InputError) else (e.strerror or str(e))
        return (f"{record}: this export was not recorded beside the workspace ({why}); the labels file is "
                "complete, but the review app's reminder of unexported edits counts from the last export it knows")
    return None


def export_moved(ws, old, new) -> None:
    """The export recorded at `old` was placed at `new` (a browser session's, written privately first, then
    published into the export folder): the record names `new`, so the reminder of unexported edits counts from
    the placed file, not from a private folder deleted since. Nothing when the record names another file;
    advice, as record_export: a failure to rewrite it is ignored."""
    from rankgate.store.storage import atomic_write

    record = paths.sidecar(ws.path, paths.EXPORTED)
    try:
        with open_sidecar(record) as f:
            first, rest = f.readline(), f.read()
        summary = json.loads(first)
    except (OSError, ValueError):
        return
    if not isinstance(summary, dict) or summary.get("path") != _resolved(old):
        return
    summary["path"] = _resolved(new)
    try:
        atomic_write(record, (json.dumps(summary, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass") + rest,
                     sync=False)
    except (InputError, OSError):
        pass


def read_exported(db) -> dict[str, int] | None:
    """{label_key: grade} the last export to a file wrote (record_export); None: none, unreadable, or that
    file is gone (deleted, moved: it holds no label any more, so every edit since the qrels file counts)."""
    try:
        with open_sidecar(paths.sidecar(db, paths.EXPORTED)) as f:
            summary, base = json.loads(f.readline()), json.loads(f.readline())
    except (OSError, ValueError):
        return None
    if isinstance(summary, dict) and summary.get("format") == SYNC_FORMAT and isinstance(base, dict) \
            and isinstance(summary.get("path"), str) and os.path.isfile(summary["path"]):
        return base
    return None
