"""Folding a label store's journal: its events appended to the history file, the snapshot rewritten, a new
journal started; and the history read back (store/durable.py). A mixin of `DurableIndex`."""

from __future__ import annotations

import zlib

from rankgate.core.errors import InputError
from rankgate.store.columns import (
    LazyLabels,
    expand_events,
    to_columns,
)
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV
from rankgate.store.storage import (
    DamagedFile,
    Journal,
    SnapshotStorage,
    atomic_write,
    crashpoint,
    fsync_dir,
    history_matches,
    keep_copy,
    parse_tables,
)
from rankgate.store.durable_format import (
    EMPTY_HISTORY,
    FORMAT_VERSION,
    history_bytes,
)


class IndexFolding:
    """The fold (journal -> snapshot and history file) and the history file read on demand."""

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
            if self._unborn or self._unwritten is not None:
                self._born()
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
