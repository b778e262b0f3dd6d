"""A workspace's in-memory index, kept durable: the snapshot, the journal, the fold, the history file.

Files, all beside the workspace file `<db>` and readable by their owner only:

    <db>                TinyDB snapshot: tables meta, queries, judgments (one document of columns per query:
                        store/columns.py), versions, and adjudications once there is one; it names the
                        journal's generation
    <db>.history        TinyDB file: table history, the append-only events (read on demand)
    <db>.journal        the edits since the snapshot, one line each framed with its CRC-32 and length,
                        fsynced per edit
    <db>.bak            the snapshot before the current one (and <db>.history.bak)
    <db>.journal.prev   the journal folded by the last fold: with the .bak files it rebuilds everything
    <db>.lock           the writer's lock, naming its holder

An edit is validated, appended to the journal and fsynced, then applied to the
in-memory index (`_commit`): its cost does not depend on the size of the store.
Every `fold_every` edits (and on close, past `FOLD_ON_CLOSE`) the journal is
folded: new events are appended to the history file, a new journal (a new
generation) replaces the old one, kept as `.journal.prev`, and the snapshot is
rewritten by atomic replace, naming that generation. On open: read the
snapshot, check the journal is the one it names, replay it. A new store's files
are written by its first edit. See docs/labels.md.
"""

from __future__ import annotations

import glob
import json
import os
import threading
import uuid
import zlib
from pathlib import Path
from typing import Callable, Self

from rankgate.core.errors import InputError
from rankgate.store import paths
from rankgate.store.columns import (
    OF_OP,
    LazyLabels,
    all_new,
    bulk_event,
    check_columns,
    expand_events,
    journal_form,
    last_id,
    resolve,
    to_columns,
)
from rankgate.store.labels import labels_at, pair_labels, put_review, standing
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, LOCK, sidecar
from rankgate.store.shared import SharedWriter
from rankgate.store.storage import (
    JOURNAL_MAGIC,
    JOURNAL_VERSION,
    DamagedFile,
    NewerFormat,
    Journal,
    SnapshotStorage,
    WriterLock,
    atomic_write,
    check_seal,
    crashpoint,
    dumps,
    fsync_dir,
    history_matches,
    keep_copy,
    now_iso,
    encode_record,
    parse_tables,
    read_journal,
    remove_stale_temps,
    resolve_db,
)

FORMAT = "rankgate-labels"
FORMAT_VERSION = 5  # 5: the snapshot sealed with a CRC-32 of its bytes (storage.seal), journals framed with
# each record's length; 4: an import's new judgments journaled as columns, and their events kept in history as
# one document per query (store/columns.py, BULK); 3: judgments as columns, one document per query; 2: one
# judgment per reviewer per (query, document), adjudications; 1: one judgment a pair. Older formats are read
# as they are and written as 5 by the next fold.
FOLD_EDITS = 1000  # fold the journal into the snapshot after this many edits ...
FOLD_BYTES = 8 << 20  # ... or this many journal bytes (a large import folds at once)
FOLD_ON_CLOSE = 100  # on close, fold when the journal holds at least this many edits
EMPTY_HISTORY = b'{"history":{}}'
# A snapshot that cannot be read and has no backup (.bak): what to do, since `labels recover` starts from one of them.
NO_BASE = ("there is no backup copy (.bak) to recover from: move it aside (`mv {db} {db}.damaged`, with its .journal "
           "and .history) and import the labels again from your exported qrels (`rankgate labels import --db {db} "
           "QRELS`), or put back a copy of all its files")


def parse_snapshot(path: Path, raw: bytes) -> dict:
    """The snapshot's tables; its seal checked (a store of format 5 or later must have one)."""
    tables = parse_tables(path, raw)  # invalid JSON first: its message says where
    sealed = check_seal(path, raw)
    meta = tables.get("meta", {}).get("1")
    if not sealed and isinstance(meta, dict) and isinstance(meta.get("format_version"), int) \
            and 5 <= meta["format_version"] <= FORMAT_VERSION:
        raise DamagedFile(str(path), "its checksum is missing (changed or damaged on disk)")
    return tables


_PAIR_EDITS = ("judgment", "review", "adjudication")


def check_edit(path: Path, record: dict) -> None:
    """A journal record read from disk holds well-formed ops (its shape checked by `is_record`): a pair's
    judgment names a query and a doc and has an integer grade; the others name what they change. DamagedFile
    otherwise, before anything is applied (a valid checksum over a record no rankgate wrote)."""
    for kind, value in record["ops"]:
        if kind in _PAIR_EDITS:
            ok = isinstance(value, dict) and type(value.get("query")) is str and type(value.get("doc")) is str \
                and type(value.get("grade")) is int and type(value.get("reviewer", "")) is str
        elif kind in ("query", "version", "purge"):
            key = {"query": "id", "version": "name", "purge": "query"}[kind]
            ok = isinstance(value, dict) and type(value.get(key)) is str
        elif kind == "meta":
            ok = isinstance(value, dict)
        elif kind == "columns":
            check_columns(str(path), value)
            ok = True
        else:  # an unknown kind is refused by _apply (written by a newer rankgate)
            ok = True
        if not ok:
            raise DamagedFile(str(path), f"edit {record['seq']} holds a malformed {kind!r} op (not written by "
                              "rankgate)")
    for e in record["events"]:  # a bulk event names its columns op (columns.journal_form)
        i = e.get(OF_OP)
        if i is not None and not (type(i) is int and 0 <= i < len(record["ops"])
                                  and record["ops"][i][0] == "columns"):
            raise DamagedFile(str(path), f"edit {record['seq']} holds an event of no columns op (not written by "
                              "rankgate)")


def history_bytes(events: list[dict]) -> bytes:
    """The history file: TinyDB's layout, one table keyed by event id."""
    return dumps({"history": {str(e["id"]): e for e in events}}).encode("ascii")


class Batch:
    """The ops and events of one journal record in the making, all by `who` at `now` (an import, a
    merge, a migration): `index._commit(batch.ops, batch.events)` makes them durable at once."""

    def __init__(self, index: "DurableIndex", who: str, now: str) -> None:
        self.index, self.who, self.now = index, who, now
        self.ops: list = []
        self.events: list[dict] = []
        self.ids = 0  # event ids taken (a bulk document takes one per judgment)

    def event(self, kind: str, query, doc, before, after, why: str, scope: str = "") -> None:
        self.events.append(self.index._event(kind, query, doc, before, after, self.who, self.now, why,
                                             self.ids, scope=scope))
        self.ids += 1

    def new_columns(self, kind: str, cols: dict, why) -> None:
        """A query's new judgments as columns (store/columns.py `new_columns`): one op, one history document
        holding an event per judgment. For a query with no judgment stored yet."""
        self.ops.append(["columns", cols])
        self.events.append(bulk_event(self.index._next_event + self.ids, self.index._seq + 1, kind, cols,
                                      self.who, self.now, why))
        self.ids += cols["n"]


class DurableIndex(SharedWriter):
    """Queries, judgments, adjudications and versions in memory, changed only by journaled edits.

    `_open_files` takes the lock and reads the files (a writer holds the journal
    open); `_commit` journals an edit (fsync) and applies it; `_fold` writes the
    snapshot and the history; `_label_set` gives the labels now or at a version.
    `clock` gives the time every stored timestamp takes.
    """

    def __init__(self, path: Path, *, readonly: bool, fold_every: int,
                 clock: Callable[[], str] = now_iso) -> None:
        self.path = resolve_db(path)  # the real file: a symlinked --db shares the real file's journal and lock
        self.readonly = readonly
        self.fold_every = max(1, int(fold_every))
        self._clock = clock
        self._mutex = threading.RLock()
        self._lock = WriterLock(sidecar(self.path, LOCK), self.path)
        self._journal: Journal | None = None
        self._closed = False
        self._meta: dict = {}
        self._queries: dict[str, dict] = {}
        self._labels: dict[str, dict[str, dict[str, dict]]] = {}  # query -> doc -> reviewer -> judgment
        self._adj: dict[str, dict[str, dict]] = {}  # query -> doc -> adjudication
        self._live = 0  # pairs with a label (a standing judgment or adjudication)
        self._versions: dict[str, dict] = {}
        self._seq = 0
        self._next_event = 1
        self._pending: list[dict] = []  # journal records not yet folded (their events are not in the history file)
        self._history: list[dict] | None = None
        self._history_rewrite = False
        self.fold_problem: str | None = None  # why the last automatic fold failed (the edits are safe)
        self._retry_at = 0  # after a failed automatic fold: the journal length at which to try again
        self._unborn = False  # a new store whose files are written by its first edit (a failed command leaves none)
        self._made_dirs: list[Path] = []  # folders this writer created for a new store
        self.shared = False  # several processes write this store: the lock is held only for an edit (store/shared.py)
        self._touched: set[str] | None = set()  # queries the others' edits touched (None: all read again)
        self._their_reviews: list[dict] = []  # the judgments those edits made (review ops), for the app to tell

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return self._live

    def close(self) -> None:
        """Fold a long journal into the snapshot, release the lock. Safe to call twice."""
        with self._mutex:
            if self._closed:
                return
            if self.shared:  # the fold needs the lock, and the others' edits read in first
                try:
                    self._take_turn(5.0)
                except InputError:
                    self._closed = True
                    return
            try:
                if not self.readonly and self._journal is not None and self._journal.count >= FOLD_ON_CLOSE \
                        and not self._journal.broken:
                    self._fold_quietly()
            finally:
                self._closed = True
                self._release()

    def _release(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self._lock.release(remove=self._unborn)
        if self._unborn:  # nothing was written: leave no folder behind either
            for d in reversed(self._made_dirs):
                try:
                    d.rmdir()
                except OSError:
                    break
            self._made_dirs = []

    @property
    def closed(self) -> bool:
        return self._closed

    def _file(self, suffix: str) -> Path:
        return sidecar(self.path, suffix)

    # ---------------------------------------------------------------- loading

    def _open_files(self, create: bool) -> None:
        """A writer takes the lock and clears what a killed writer left half-written; then the snapshot
        and the journal are read (`create`: a new workspace where there is none)."""
        if not self.readonly:
            missing, d = [], self.path.parent
            while not d.exists() and d != d.parent:
                missing.append(d)
                d = d.parent
            if missing:
                paths.make_private_dir(self.path.parent)
                self._made_dirs = list(reversed(missing))
            self._lock_was_there = os.path.lexists(self._lock.path)
            self._lock.acquire()
            remove_stale_temps(self.path)
        try:
            self._load(create=create)
        except BaseException:
            self._release()
            raise

    def _load(self, create: bool) -> None:
        attempts = 1 if not self.readonly else 5
        for attempt in range(attempts):
            storage = SnapshotStorage(self.path, access_mode="r" if self.readonly else "r+")
            raw = storage.read_bytes()
            if not raw:
                self._check_no_leftovers(raw)
                if not create:
                    raise InputError(str(self.path), "no label store here (import labels into it first)")
                self._create()
                return
            try:
                self._load_tables(parse_snapshot(self.path, raw))
                journal = read_journal(self._file(JOURNAL))
                before = self._journal_before(journal)
            except DamagedFile as e:
                if attempt + 1 < attempts:  # a reader raced a writer's fold: read again
                    continue
                raise self._damaged(e) from None
            break
        base = self._meta["journal_seq"]
        if journal is None:
            if not self.readonly:  # a store written before journal generations (the next fold records one)
                Journal.create(self._file(JOURNAL), base, self._meta["workspace_id"])
                journal = read_journal(self._file(JOURNAL))
            else:
                return
        if journal.workspace_id != self._meta["workspace_id"]:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), "the journal belongs to another workspace"))
        if journal.damage:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), journal.damage, line=journal.damage_line))
        erasing = any(kind == "purge" for r in before + journal.records if r["seq"] > self._seq
                      for kind, _ in r["ops"])
        try:
            if before:  # a fold stopped after its new journal, before its snapshot: finish it
                self._replay(before)
                if not self.readonly:
                    self._finish_fold(journal)
            self._replay(journal.records)
        except (KeyError, TypeError, ValueError) as e:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), f"a journal record is malformed ({e!r})")) \
                from None
        except DamagedFile as e:
            raise self._damaged(e) from None
        if erasing:
            self._history_rewrite = True  # a purge not yet folded: its erasure is finished below
        if not self.readonly:
            self._journal = Journal(self._file(JOURNAL), journal.good_size, len(journal.records), journal.version)
            if journal.torn:  # a record cut short by a crash: never acknowledged, so drop it
                self._journal.truncate_to(journal.good_size)
            for tmp in self.path.parent.glob(f".{glob.escape(self.path.name)}*.tmp-*"):
                tmp.unlink(missing_ok=True)  # half-written files of a writer that was killed (we hold the lock)
            if self._history_rewrite:  # a purge was killed before it erased everything: erase now
                self._fold()

    def _journal_before(self, journal) -> list[dict]:
        """Check that `journal` is the one the snapshot expects (the snapshot records its generation), so
        that a journal deleted, or swapped for an older copy, is reported instead of silently dropping the
        edits it held. Returns the records of `.journal.prev` still to replay when a fold stopped between
        putting its new journal in place and writing its snapshot ([] otherwise)."""
        base, gen = self._meta["journal_seq"], self._meta.get("journal_gen")
        where = str(self._file(JOURNAL))
        if journal is None:
            if gen is not None:
                raise DamagedFile(where, "the journal is missing (the snapshot expects one): edits made since the "
                                  "last fold may be lost")
            return []
        expected = journal.gen == gen if gen is not None else journal.base <= base
        if expected:
            if gen is not None and journal.base != base:
                raise DamagedFile(where, f"the journal starts at edit {journal.base}, the snapshot at edit {base}")
            return []
        if journal.base > base:  # newer than the snapshot: the previous journal must bridge the gap
            try:
                prev = read_journal(self._file(JOURNAL_PREV))
            except DamagedFile:
                prev = None
            if prev is not None and prev.gen == gen and prev.base == base and not prev.damage:
                bridge = [r for r in prev.records if base < r["seq"] <= journal.base]
                if [r["seq"] for r in bridge] == list(range(base + 1, journal.base + 1)):
                    return bridge
            raise DamagedFile(str(self.path), f"the snapshot is older than the journal (snapshot at edit {base}, "
                              f"journal from edit {journal.base})")
        raise DamagedFile(where, f"the journal is not the one the snapshot expects (generation {journal.gen or 'none'}"
                          f", expected {gen}): it was replaced by another copy (.journal.prev?), and edits made "
                          "since the last fold may be missing")

    def _replay(self, records: list[dict]) -> None:
        for record in records:
            if record["seq"] <= self._seq:
                continue
            if record["seq"] != self._seq + 1:
                raise DamagedFile(str(self._file(JOURNAL)), f"edit {self._seq + 1} is missing from the journal")
            check_edit(self._file(JOURNAL), record)
            self._apply(record)
            self._pending.append(record)

    def _check_no_leftovers(self, raw: bytes | None) -> None:
        """A missing or empty snapshot is only a new workspace when nothing else says otherwise."""
        bak = self._file(BACKUP)
        journal = None
        try:
            journal = read_journal(self._file(JOURNAL))
        except DamagedFile:
            pass
        hist = self._file(HISTORY)
        hist_size = hist.stat().st_size if hist.exists() else 0
        if bak.exists() or (journal and (journal.records or journal.base)) or hist_size > len(EMPTY_HISTORY):
            what = "is empty" if raw is not None else "is missing"
            raise self._damaged(DamagedFile(str(self.path), f"the snapshot {what} but the workspace's other files "
                                            "are not"))

    def _create(self) -> None:
        """A new, empty store in memory; its files are written by its first edit (`_materialize`)."""
        self._meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "workspace_id": uuid.uuid4().hex,
                      "created": self._clock(), "journal_seq": 0, "history_seq": 0,
                      "history_bytes": len(EMPTY_HISTORY), "history_crc": zlib.crc32(EMPTY_HISTORY[:-2]),
                      "next_event": 1, "live": 0, "collection_version": "",
                      "benchmark": None}
        self._labels = LazyLabels(str(self.path), {})
        self._unborn = True

    def _materialize(self) -> None:
        """Write a new store's files: history, journal, then the snapshot (a missing snapshot beside an
        empty history and journal is still a new store)."""
        atomic_write(self._file(HISTORY), EMPTY_HISTORY)
        gen = Journal.create(self._file(JOURNAL), 0, self._meta["workspace_id"])
        meta = dict(self._meta, journal_gen=gen)
        SnapshotStorage(self.path).write({"meta": {"1": meta}, "queries": {}, "judgments": {}, "versions": {}})
        self._meta = meta
        self._journal = Journal(self._file(JOURNAL), self._file(JOURNAL).stat().st_size, 0)
        self._unborn = False
        self._made_dirs = []

    def _load_tables(self, tables: dict) -> None:
        path = str(self.path)
        meta = tables.get("meta", {}).get("1")
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise DamagedFile(path, "not a rankgate label store (a TinyDB file without rankgate's meta table)")
        if not isinstance(meta.get("format_version"), int) or meta["format_version"] > FORMAT_VERSION:
            if isinstance(meta.get("format_version"), int):
                raise NewerFormat(path, f"written by a newer rankgate (store format {meta['format_version']}); open "
                                  "it with that version (nothing was changed)")
            raise DamagedFile(path, f"store format {meta.get('format_version')!r} is not a number")
        for key in ("journal_seq", "history_seq", "history_bytes", "next_event"):
            if not isinstance(meta.get(key), int):
                raise DamagedFile(path, f"meta field {key!r} is missing or not an integer")
        queries: dict[str, dict] = {}
        for doc in tables.get("queries", {}).values():
            if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
                raise DamagedFile(path, "a query without an id")
            queries[doc["id"]] = doc
        labels: dict[str, dict[str, dict[str, dict]]] = {}
        adjudications: dict[str, dict[str, dict]] = {}
        columnar = meta["format_version"] >= 3
        if columnar:  # one columns document per query, built on first read
            raw = {}
            for doc in tables.get("judgments", {}).values():
                q = check_columns(path, doc)
                if q not in queries:
                    raise DamagedFile(path, f"judgments of an unknown query {q!r}")
                raw[q] = doc
            labels = LazyLabels(path, raw)
        for table, many in (("judgments", True), ("adjudications", False)):
            if many and columnar:
                continue
            for doc in tables.get(table, {}).values():
                try:
                    q, d, g = doc["query"], doc["doc"], doc["grade"]
                except (KeyError, TypeError):
                    raise DamagedFile(path, f"a {table[:-1]} without query, doc or grade") from None
                if type(g) is not int or q not in queries or type(d) is not str \
                        or type(doc.get("reviewer", "")) is not str:
                    raise DamagedFile(path, f"a malformed {table[:-1]}: {json.dumps(doc)[:200]}")
                if many:
                    per = labels.get(q)
                    if per is None:
                        per = labels[q] = {}
                    revs = per.get(d)
                    if revs is None:
                        revs = per[d] = {}
                    revs[doc.get("reviewer", "")] = doc
                else:
                    adjudications.setdefault(q, {})[d] = doc
                    labels.setdefault(q, {}).setdefault(d, {})
        if not columnar:  # as a format 3 store holds them, all built
            labels = LazyLabels(path, {}, built=labels)
        live = meta.get("live") if columnar else None  # format 3 keeps the count: no loop over the labels
        if not isinstance(live, int):
            live = 0
            for q, per in labels.items():
                adjq = adjudications.get(q)
                for d, revs in per.items():
                    if any(r.get("removed") is None for r in revs.values()) or \
                            (adjq is not None and standing(adjq.get(d))):
                        live += 1
        versions = {}
        for doc in tables.get("versions", {}).values():
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                raise DamagedFile(path, "a version without a name")
            versions[doc["name"]] = doc
        self._meta, self._queries, self._labels, self._live, self._versions = meta, queries, labels, live, versions
        self._adj = adjudications
        self._seq = meta["journal_seq"]
        self._next_event = meta["next_event"]
        self._pending = []
        self._history = None

    def _damaged(self, e: DamagedFile) -> DamagedFile:
        """The same error, with the way back (the path quoted, as a shell takes it)."""
        import shlex

        db = shlex.quote(str(self.path))
        if isinstance(e, NewerFormat):  # not damage: recovery would roll it back to an older copy
            return e
        if Path(e.path) == self._file(JOURNAL) and e.line:
            hint = (f"`rankgate labels recover --db {db}` keeps every intact edit, before and after line {e.line}, "
                    "names the ones it cannot read, and moves the damaged journal aside")
        elif self._file(BACKUP).exists():
            hint = (f"the last good snapshot is kept as {self._file(BACKUP)}: `rankgate labels recover --db {db}` "
                    "rebuilds the workspace from it and the journals")
        elif Path(e.path) == self.path and self._journal_from_start():
            hint = (f"the journal holds every edit since the store was made: `rankgate labels recover --db {db}` "
                    "rebuilds the snapshot from it")
        elif Path(e.path) == self.path and (other := self._not_a_store()):  # --db given a qrels file by mistake
            if not getattr(self, "_lock_was_there", True):
                self._unborn = True  # its lock file goes too: nothing is left beside the user's file
            return DamagedFile(e.path, other)
        elif Path(e.path) == self.path:  # the snapshot, and no backup: `labels recover` has nothing to start from
            hint = NO_BASE.format(db=db)
        else:
            hint = ("there is no backup copy; `rankgate labels recover --db {db}` moves the damaged files aside "
                    "and keeps what can be read").format(db=db)
        return DamagedFile(e.path, f"{e.what}; {hint}", line=e.line, where=e.where)

    def _journal_from_start(self) -> bool:
        """A journal (or the previous one) begins at the store's first edit: it can rebuild a lost snapshot."""
        for suffix in (JOURNAL_PREV, JOURNAL):
            try:
                jc = read_journal(self._file(suffix))
            except (DamagedFile, InputError):
                continue
            if jc is not None and jc.base == 0 and jc.records:
                return True
        return False

    def _not_a_store(self) -> str:
        """What to say when the file given as the store is a qrels, run or queries file (no journal, history or
        backup beside it): "" when it does not look like one (then it is a damaged store)."""
        if any(self._file(s).exists() for s in (JOURNAL, HISTORY, BACKUP)):
            return ""
        from rankgate.core.formats.sniff import detect_kind, holds_judgments
        from rankgate.core.formats.textio import ascii_fields

        path = str(self.path)
        try:
            if holds_judgments(path):
                kind = "a qrels file"
            elif detect_kind(path) == "queries":
                kind = "a queries file"
            else:
                with open(path, "rb") as f:
                    head = f.read(4096).decode("utf-8", "replace")
                first = next((ln for ln in head.splitlines() if ln.strip() and not ln.startswith("#")), "")
                if len(ascii_fields(first)) == 6 or '"ranking"' in first:
                    kind = "a run file"
                else:
                    return ""
        except (OSError, InputError, ValueError):
            return ""
        import shlex

        how = f"; import it into one with `rankgate labels import --db work.json {shlex.quote(path)}`" \
            if kind == "a qrels file" else ""
        return (f"looks like {kind}, not a label store: --db names the workspace file rankgate keeps labels in "
                f"(made on first use, e.g. --db work.json){how}; nothing was changed")

    # ---------------------------------------------------------------- applying edits

    def _pair_standing(self, q: str, d: str) -> bool:
        revs = self._labels.get(q, {}).get(d)
        if revs and any(r.get("removed") is None for r in revs.values()):
            return True
        return standing(self._adj.get(q, {}).get(d))

    def _apply(self, record: dict) -> None:
        resolve(record)
        for kind, value in record["ops"]:
            if kind in ("judgment", "review", "adjudication"):
                # judgment: the pair holds exactly this judgment (store format 1, and journals it wrote);
                # review: one reviewer's judgment of the pair; adjudication: the pair's adjudication
                q, d = value["query"], value["doc"]
                before = self._pair_standing(q, d)
                per = self._labels.get(q)
                if per is None:
                    per = self._labels[q] = {}
                revs = per.get(d)
                if revs is None:
                    revs = per[d] = {}
                if kind == "judgment":
                    revs.clear()
                    revs[value.get("reviewer", "")] = value
                    adjq = self._adj.get(q)
                    if adjq:
                        adjq.pop(d, None)
                elif kind == "review":
                    put_review(revs, value)
                else:
                    self._adj.setdefault(q, {})[d] = value
                self._live += self._pair_standing(q, d) - before
            elif kind == "columns":
                self._put_columns(value)
            elif kind == "query":
                self._queries[value["id"]] = value
            elif kind == "version":
                self._versions[value["name"]] = value
            elif kind == "meta":
                self._meta = dict(self._meta, **value)
            elif kind == "purge":
                q, d = value["query"], value.get("doc")
                per = self._labels.get(q, {})
                docs = [d] if d is not None else list(per)
                self._live -= sum(1 for x in docs if self._pair_standing(q, x))
                adjq = self._adj.get(q, {})
                for x in docs:
                    per.pop(x, None)
                    adjq.pop(x, None)
                if d is None:
                    self._labels.pop(q, None)
                    self._adj.pop(q, None)
                    self._queries.pop(q, None)
            else:
                raise DamagedFile(str(self._file(JOURNAL)), f"unknown edit {kind!r} (written by a newer rankgate?)")
        self._seq = record["seq"]
        for e in record["events"]:
            last = last_id(e)
            if last >= self._next_event:
                self._next_event = last + 1

    def _put_columns(self, cols: dict) -> None:
        """A query's judgments as a columns document (an import's new query): kept as columns, built when
        read; into a query that has judgments already, one judgment at a time."""
        q = check_columns(str(self._file(JOURNAL)), cols)
        if not dict.get(self._labels, q) and q not in self._labels.raw and not self._adj.get(q) and all_new(cols):
            self._labels[q] = None  # unbuilt: the columns are its judgments
            self._labels.raw[q] = cols
            self._live += cols["n"]
            return
        for revs in LazyLabels(str(self._file(JOURNAL)), {q: cols})[q].values():
            for rec in revs.values():
                self._apply({"seq": self._seq, "ops": [["review", rec]], "events": []})

    def _apply_history(self, events: list[dict], record: dict) -> None:
        for kind, value in record["ops"]:
            if kind == "purge":
                q, d = value["query"], value.get("doc")
                events[:] = [e for e in events if not (e["query"] == q and (d is None or e["doc"] == d)
                                                       and e["kind"] not in ("freeze", "purge"))]
        events.extend(expand_events(str(self._file(JOURNAL)), resolve(record)["events"]))

    def _check_writable(self) -> None:
        if self._closed:
            raise InputError(str(self.path), "the workspace is closed")
        if self.readonly:
            raise InputError(str(self.path), "opened read-only; open it for writing to change labels")

    def _check_open(self) -> None:
        if self._closed:
            raise InputError(str(self.path), "the workspace is closed")

    def _event(self, kind: str, query, doc, before, after, who: str, when: str, why: str, offset: int,
               scope: str = "") -> dict:
        e = {"id": self._next_event + offset, "jseq": self._seq + 1, "kind": kind, "query": query, "doc": doc,
             "before": before, "after": after, "who": who, "when": when, "why": why or ""}
        if scope:  # "reviewer" or "adjudication"; none: the pair's label (as in store format 1)
            e["scope"] = scope
        return e

    def _commit(self, ops: list, events: list[dict]) -> None:
        """Journal the edit (fsync), then apply it: once this returns, the edit survives a crash."""
        assert events, "every edit leaves an event"
        if self.shared and self._journal is None:
            raise InputError(str(self.path), "a shared workspace is written only in a turn (DurableIndex.turn)")
        if self._unborn:
            self._materialize()
        record = {"seq": self._seq + 1, "ops": ops, "events": events}
        if self._journal.version < JOURNAL_VERSION:
            self._upgrade_journal()
        self._journal.append(journal_form(record))  # raises before anything changes in memory
        self._apply(record)
        self._pending.append(record)
        if self._history is not None:
            self._apply_history(self._history, record)
        due = self._journal.count >= self.fold_every or self._journal.size >= FOLD_BYTES
        if due and self._journal.count >= self._retry_at:
            self._fold_quietly()

    def _upgrade_journal(self) -> None:
        """A journal written before records carried their length: rewritten whole in the current framing (same
        generation, same records) by atomic replace, before the first edit is appended to it."""
        old = read_journal(self._file(JOURNAL))
        if old is None or old.damage or len(old.records) != self._journal.count:
            raise InputError(str(self._file(JOURNAL)), "changed on disk while open; reopen the workspace")
        header = {"journal": JOURNAL_MAGIC, "version": JOURNAL_VERSION, "base": old.base,
                  "workspace": old.workspace_id}
        if old.gen is not None:
            header["gen"] = old.gen
        size = atomic_write(self._file(JOURNAL), b"".join([encode_record(header)] +
                                                          [encode_record(r) for r in old.records]))
        self._journal.close()
        self._journal = Journal(self._file(JOURNAL), size, len(old.records))

    def _commit_erasure(self, ops: list, events: list[dict]) -> None:
        """Commit an edit that erases (a purge): the history file is written whole, and the backups and
        the previous journal, which still hold what was erased, are replaced too."""
        # the backups hold what is erased: they go first, so a kill at any point leaves none of it in them
        for suffix in (BACKUP, HISTORY + BACKUP, JOURNAL_PREV):
            self._file(suffix).unlink(missing_ok=True)
        fsync_dir(self.path.parent)
        crashpoint("purge-backups")
        self._history_rewrite = True
        self._commit(ops, events)
        crashpoint("purge-journaled")
        if self._history_rewrite:  # not folded by the commit already
            self._fold()

    def _fold_quietly(self) -> None:
        """A fold the caller did not ask for: the edits are safe in the journal whatever happens, so a
        failure (a full disk, a damaged history file) must not fail the edit; it is kept in
        `fold_problem`, and the next fold tries again."""
        try:
            self._fold()
            self.fold_problem = None
            self._retry_at = 0
        except (InputError, OSError) as e:
            self.fold_problem = str(e)
            self._retry_at = self._journal.count + self.fold_every  # try again later, not on every edit

    # ---------------------------------------------------------------- folding

    def fold_if_due(self, min_edits: int) -> bool:
        """Fold now when the journal holds at least `min_edits` edits (the app calls this while the
        reviewer pauses, so the fold every `fold_every` edits seldom falls on a key). A failure is kept in
        `fold_problem`, as for the fold an edit starts: the edits are safe in the journal either way."""
        with self._mutex:
            j = self._journal
            if self.readonly or self._closed or j is None or j.broken or j.count < max(1, min_edits):
                return False
            self._fold_quietly()
            return True

    def checkpoint(self) -> None:
        """Fold the journal into the snapshot now (the TUI may call this when idle)."""
        with self._mutex:
            self._check_writable()
            if self._unborn:
                self._materialize()
            elif self._journal.count or self._history_rewrite:
                self._fold()

    def _fold(self) -> None:
        """Fold the journal into the snapshot. In order: the history file; the journal kept as `.journal.prev`
        and a new journal (a new generation) in its place; the snapshot, naming that generation. A kill
        between the last two leaves the snapshot one fold behind, and `.journal.prev` bridges it (`_load`
        finishes the fold). After a purge (`_history_rewrite`) no backup keeps the erased text."""
        seq = self._seq
        erase = self._history_rewrite
        hist_path, hist_bak = self._file(HISTORY), self._file(HISTORY + BACKUP)
        hist = SnapshotStorage(hist_path)
        size = None
        if not erase:
            new = [(e["id"], e) for r in self._pending if r["seq"] > self._meta["history_seq"] for e in r["events"]]
            crc = self._meta.get("history_crc")
            size = hist.append_docs("history", new, self._meta["history_bytes"], backup=hist_bak,
                                    open_crc=crc if isinstance(crc, int) else None)
            crc = hist.open_crc
        if size is None:  # after a purge, or a history file that is not as we left it: write it whole
            events = self._load_history()
            if not erase:
                keep_copy(hist_path, hist_bak)  # it parsed: a good copy
            data = history_bytes(events)
            size, crc = atomic_write(hist_path, data), zlib.crc32(data[:-2])
        crashpoint("fold-history")
        old = self._journal
        old.close()
        try:
            keep_copy(self._file(JOURNAL), self._file(JOURNAL_PREV))
            gen = Journal.create(self._file(JOURNAL), seq, self._meta["workspace_id"])
        except BaseException:  # the old journal stays in place (the snapshot still expects it): keep using it
            self._journal = Journal(self._file(JOURNAL), old.size, old.count, old.version)
            raise
        self._journal = Journal(self._file(JOURNAL), self._file(JOURNAL).stat().st_size, 0)
        crashpoint("fold-journal")
        meta = dict(self._meta, journal_seq=seq, journal_gen=gen, history_seq=seq, history_bytes=size,
                    history_crc=crc, next_event=self._next_event)
        try:
            if not erase:
                keep_copy(self.path, self._file(BACKUP))
            SnapshotStorage(self.path).write(self._tables(meta))
        except BaseException:
            self._unfold(old)
            raise
        crashpoint("fold-snapshot")
        if erase:  # the previous journal held the erased text too
            self._file(JOURNAL_PREV).unlink(missing_ok=True)
            fsync_dir(self.path.parent)
        self._meta = meta
        self._pending = []
        self._history_rewrite = False

    def _unfold(self, old: Journal) -> None:
        """The snapshot could not be written: put the journal it expects back (kept as `.journal.prev`)."""
        self._journal.close()
        try:
            keep_copy(self._file(JOURNAL_PREV), self._file(JOURNAL))
            self._journal = Journal(self._file(JOURNAL), old.size, old.count, old.version)
        except (InputError, OSError) as e:
            self._journal = Journal(self._file(JOURNAL), self._file(JOURNAL).stat().st_size, 0)
            self._journal.broken = (f"a fold failed half-way ({e}); reopen the workspace (it finishes the fold)")

    def _finish_fold(self, journal) -> None:
        """Write the snapshot a killed fold did not: the state at the start of `journal` (its generation)."""
        meta = dict(self._meta, journal_seq=self._seq, journal_gen=journal.gen, next_event=self._next_event,
                    history_bytes=-1, history_crc=None)  # the fold wrote the history: rewritten whole next time
        SnapshotStorage(self.path).write(self._tables(meta))
        self._meta = meta
        self._pending = []

    def _tables(self, meta: dict) -> dict:
        judgments, n = {}, 0
        adjudications, m = {}, 0
        lazy = self._labels if isinstance(self._labels, LazyLabels) else None
        for q in self._queries:
            cols = lazy.columns_of(q) if lazy is not None else None
            if cols is None:
                per = dict.get(self._labels, q)
                cols = to_columns(q, per) if per else None
            if cols is not None:  # untouched queries are written back as they were read
                n += 1
                judgments[str(n)] = cols
            for a in self._adj.get(q, {}).values():
                m += 1
                adjudications[str(m)] = a
        tables = {"meta": {"1": dict(meta, format_version=FORMAT_VERSION, live=self._live)},
                  "queries": {str(i): q for i, q in enumerate(self._queries.values(), 1)},
                  "judgments": judgments, "versions": {str(i): v for i, v in enumerate(self._versions.values(), 1)}}
        if adjudications:  # the table exists only once someone adjudicates
            tables["adjudications"] = adjudications
        return tables

    def _load_history(self) -> list[dict]:
        if self._history is None:
            path = self._file(HISTORY)
            raw = SnapshotStorage(path, access_mode="r").read_bytes()
            if raw is None:
                if self._meta["history_seq"] or self._meta["next_event"] > 1:
                    raise self._damaged(DamagedFile(str(path), "the history file is missing"))
                raw = EMPTY_HISTORY
            if not history_matches(raw, self._meta):
                raise self._damaged(DamagedFile(str(path), "its checksum does not match its contents (changed or "
                                                "damaged on disk)"))
            try:
                table = parse_tables(path, raw).get("history")
                if not isinstance(table, dict):
                    raise DamagedFile(str(path), "not a rankgate history file (no history table)")
                events = expand_events(str(path), table.values())
                watermark = events[-1]["jseq"] if events else 0
                if watermark < self._meta["history_seq"]:
                    raise DamagedFile(str(path), f"the history file ends at edit {watermark}, the snapshot expects "
                                      f"{self._meta['history_seq']}")
            except DamagedFile as e:
                raise self._damaged(e) from None
            for record in self._pending:
                if record["seq"] > watermark:
                    self._apply_history(events, record)
            self._history = events
        return self._history

    # ---------------------------------------------------------------- labels at a version

    def _label_set(self, version: str | None, only: str | None = None
                   ) -> tuple[dict[str, dict], dict[str, dict[str, dict]]]:
        """(queries, {qid: {doc: label}}) of the current labels, or of a version rebuilt from history.
        `only`: reviewer `only`'s own judgments instead of the labels."""
        if version is None:
            return self._queries, pair_labels(self._labels, self._adj, only)
        v = self._versions.get(version)
        if v is None:
            names = ", ".join(self._versions) or "none yet"
            raise InputError(str(self.path), f"no version {version!r} (versions: {names})")
        return labels_at(self._load_history(), v["history_id"], only)
