"""Opening a label store: the lock taken, the snapshot read and checked, the journal replayed, damage told
plainly (store/durable.py). A mixin of `DurableIndex`, whose in-memory index it fills."""

from __future__ import annotations

import glob
import json
import os
import uuid
import zlib
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store import paths
from rankgate.store.columns import LazyLabels, check_columns
from rankgate.store.labels import standing
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV
from rankgate.store.storage import (
    DamagedFile,
    NewerFormat,
    Journal,
    SnapshotStorage,
    atomic_write,
    read_journal,
    remove_stale_temps,
)
from rankgate.store.durable_format import (
    EMPTY_HISTORY,
    FORMAT,
    FORMAT_VERSION,
    NO_BASE,
    check_edit,
    parse_snapshot,
)


class IndexLoading:
    """Reading a store's files into the `DurableIndex` (the snapshot, then the journal's edits)."""

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
        empty history and journal is still a new store). Its meta is the store's before an edit left unwritten
        (a first import): until that edit is journaled, the files say nothing was imported, so that an open
        after a kill or a failed write imports the benchmark again."""
        atomic_write(self._file(HISTORY), EMPTY_HISTORY)
        gen = Journal.create(self._file(JOURNAL), 0, self._meta["workspace_id"])
        written = self._unwritten_meta if self._unwritten is not None else self._meta
        SnapshotStorage(self.path).write({"meta": {"1": dict(written, journal_gen=gen)}, "queries": {},
                                          "judgments": {}, "versions": {}})
        self._meta = dict(self._meta, journal_gen=gen)
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
