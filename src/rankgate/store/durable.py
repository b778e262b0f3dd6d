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

import threading
from pathlib import Path
from typing import Callable, Self

from rankgate.core.errors import InputError
from rankgate.store.columns import (
    LazyLabels,
    all_new,
    bulk_event,
    check_columns,
    expand_events,
    journal_form,
    last_id,
    resolve,
)
from rankgate.store.labels import labels_at, pair_labels, put_review, standing
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, LOCK, sidecar
from rankgate.store.shared import SharedWriter
from rankgate.store.storage import (
    JOURNAL_MAGIC,
    JOURNAL_VERSION,
    OWNER,
    DamagedFile,
    Journal,
    WriterLock,
    atomic_write,
    crashpoint,
    fsync_dir,
    now_iso,
    encode_record,
    read_journal,
    resolve_db,
)
from rankgate.store.durable_format import (
    EMPTY_HISTORY,
    FOLD_BYTES,
    FOLD_EDITS,
    FOLD_ON_CLOSE,
    FORMAT,
    FORMAT_VERSION,
    NO_BASE,
    check_edit,
    history_bytes,
    parse_snapshot,
)
from rankgate.store.durable_fold import IndexFolding
from rankgate.store.durable_load import IndexLoading

__all__ = ["Batch", "DurableIndex", "EMPTY_HISTORY", "FOLD_BYTES", "FOLD_EDITS", "FOLD_ON_CLOSE", "FORMAT",
           "FORMAT_VERSION", "NO_BASE", "check_edit", "history_bytes", "parse_snapshot"]


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


class DurableIndex(IndexLoading, IndexFolding, SharedWriter):
    """Queries, judgments, adjudications and versions in memory, changed only by journaled edits.

    `_open_files` takes the lock and reads the files (a writer holds the journal
    open); `_commit` journals an edit (fsync) and applies it; `_fold` writes the
    snapshot and the history; `_label_set` gives the labels now or at a version.
    `clock` gives the time every stored timestamp takes. Opening (the files read in) is
    `IndexLoading` (store/durable_load.py); the fold and the history file, `IndexFolding`
    (store/durable_fold.py); the format's constants, store/durable_format.py.
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
        self._unwritten: dict | None = None  # a new store's first edit, applied but not journaled yet (_born)
        self._unwritten_meta: dict = {}  # the store's meta before that edit: what its files say until it is journaled
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
                if self._unwritten is not None:
                    self._born_quietly()
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
        # kept per suffix: an import's replay names the journal once per query (10,000 pathlib joins: 0.2 s)
        files = self.__dict__.setdefault("_files", {})
        got = files.get(suffix)
        if got is None or got[0] != self.path:
            got = files[suffix] = (self.path, sidecar(self.path, suffix))
        return got[1]

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

    def _commit(self, ops: list, events: list[dict], *, unwritten: bool = False) -> None:
        """Journal the edit (fsync), then apply it: once this returns, the edit survives a crash. `unwritten`
        (a new store's first edit: the app's first import of a benchmark, whose labels its files still hold):
        applied now, its files and journal record written by `_born` (the next edit, a fold, close) so that
        the first frame does not wait for them; a crash before that leaves no store, and the next open
        imports again. No edit is acknowledged before that import's record is in the journal."""
        assert events, "every edit leaves an event"
        if self.shared and self._journal is None:
            raise InputError(str(self.path), "a shared workspace is written only in a turn (DurableIndex.turn)")
        record = {"seq": self._seq + 1, "ops": ops, "events": events}
        if unwritten and self._unborn and self._unwritten is None:
            self._unwritten_meta = dict(self._meta)
            self._take(record)
            self._unwritten = record
            return
        self._born()
        self._append(record)  # raises before anything changes in memory
        self._take(record)
        due = self._journal.count >= self.fold_every or self._journal.size >= FOLD_BYTES
        if due and self._journal.count >= self._retry_at:
            self._fold_quietly()

    def _take(self, record: dict) -> None:
        self._apply(record)
        self._pending.append(record)
        if self._history is not None:
            self._apply_history(self._history, record)

    def _append(self, record: dict) -> None:
        """Journal one edit (fsync); the record names its workspace (never replayed elsewhere)."""
        if self._journal.version < JOURNAL_VERSION:
            self._upgrade_journal()
        self._journal.append(dict(journal_form(record), **{OWNER: self._meta["workspace_id"]}))

    def _born(self) -> None:
        """A new store's files, then the first edit left unwritten (`_commit(unwritten=True)`), journaled."""
        if self._unborn:
            self._materialize()
        if self._unwritten is not None:
            self._append(self._unwritten)
            self._unwritten = None

    def _born_quietly(self) -> None:
        """`_born` where a failure must not fail the caller (close, the app's fold after its first frame): the
        labels it would write are the benchmark's file's, imported again by the next open if never written;
        the next edit tries again and says why it cannot be saved."""
        try:
            self._born()
        except (InputError, OSError) as e:
            self.fold_problem = str(e)

    def _upgrade_journal(self) -> None:
        """A journal of an older version (records without their length, or without their workspace): rewritten
        whole in the current one (same generation, same records, each naming this workspace) by atomic replace,
        before the first edit is appended to it."""
        old = read_journal(self._file(JOURNAL))
        if old is None or old.damage or len(old.records) != self._journal.count:
            raise InputError(str(self._file(JOURNAL)), "changed on disk while open; reopen the workspace")
        header = {"journal": JOURNAL_MAGIC, "version": JOURNAL_VERSION, "base": old.base,
                  "workspace": old.workspace_id}
        if old.gen is not None:
            header["gen"] = old.gen
        size = atomic_write(self._file(JOURNAL), b"".join([encode_record(header)] +
                                                          [encode_record(dict(r, **{OWNER: old.workspace_id}))
                                                           for r in old.records]))
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
