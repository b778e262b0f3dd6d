"""Several processes writing one workspace: the browser face's sessions (`rankgate review --serve`).

A writer normally holds the workspace's lock from open to close. A shared writer (`share()`) lets it go
and takes it again for each edit (`turn()`): under the lock it first reads in what the other writers
journaled since (the journal's new records, or the whole store again when another writer folded it into
a new generation), then makes its edit, then lets go. `catch_up()` does the reading alone, between edits,
and says which queries the others touched and what they judged. Each edit is still journaled and fsynced
before it is acknowledged (store/durable.py); nothing here writes a label.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from rankgate.core.errors import InputError
from rankgate.store.paths import JOURNAL, JOURNAL_PREV
from rankgate.store.storage import Journal, read_journal


class SharedWriter:
    """Mixed into DurableIndex: the methods of a writer that shares its workspace with other processes."""

    shared = False

    def share(self) -> None:
        """Let other processes write this store too (each session of `rankgate review --serve`): the lock is
        let go now and taken again for each edit (`turn`), which first reads in what the others wrote."""
        with self._mutex:
            if self.readonly or self._closed or self.shared:
                return
            self._born()
            self._let_go()
            self.shared = True

    @contextmanager
    def turn(self, wait: float = 5.0):
        """A shared writer's edit: the lock (waiting up to `wait` seconds for another writer's edit to end),
        the others' edits read in, then the edit, then the lock let go. A writer that is not shared: nothing."""
        with self._mutex:
            if not self.shared:
                yield
                return
            self._check_open()
            self._take_turn(wait)
            try:
                yield
            finally:
                self._let_go()

    def catch_up(self) -> tuple[set[str] | None, list[dict]]:
        """A shared writer between edits: read in the others' edits now. Returns the queries they touched
        (set() when none, None when everything was read again: another writer folded the journal) and the
        judgments they made (each a dict with query, doc, reviewer, grade), in order."""
        with self.turn(5.0):
            touched, self._touched = self._touched, set()
            reviews, self._their_reviews = self._their_reviews, []
            return touched, reviews

    def read_again(self) -> None:
        """A reader (readonly): the store as it is on disk now, the other writers' edits included."""
        with self._mutex:
            self._check_open()
            old = (self._meta, self._queries, self._labels, self._adj, self._live, self._versions, self._seq,
                   self._next_event, self._pending, self._history, self._history_rewrite)
            self._reset()
            try:
                self._load(create=False)
            except BaseException:  # what was read before stays
                (self._meta, self._queries, self._labels, self._adj, self._live, self._versions, self._seq,
                 self._next_event, self._pending, self._history, self._history_rewrite) = old
                raise

    def _take_turn(self, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            try:
                self._lock.acquire()
                break
            except InputError:  # Locked: another session's edit takes milliseconds
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)
        try:
            self._read_others()
        except BaseException:
            self._let_go()
            raise

    def _let_go(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self._lock.release()

    def _read_others(self) -> None:
        """Under the lock: the journal's records past ours (same generation), else the whole store again."""
        journal = read_journal(self._file(JOURNAL))
        same = journal is not None and not journal.damage and journal.gen == self._meta.get("journal_gen") \
            and journal.base == self._meta.get("journal_seq")
        if not same:  # another writer folded: the store again, and what it did since ours from both journals
            missed = self._records_past(self._seq, journal)
            self._reset()
            self._load(create=False)
            self._touched = None
            self._their_reviews += [v for r in missed for kind, v in r["ops"] if kind == "review" and isinstance(v, dict)]
            return
        new = [r for r in journal.records if r["seq"] > self._seq]
        self._replay(new)
        if self._history is not None:
            for record in new:
                self._apply_history(self._history, record)
        if self._touched is not None:
            self._touched |= {v.get("query") or v.get("id") for r in new for _, v in r["ops"] if isinstance(v, dict)}
        self._their_reviews += [v for r in new for kind, v in r["ops"] if kind == "review" and isinstance(v, dict)]
        self._journal = Journal(self._file(JOURNAL), journal.good_size, len(journal.records), journal.version)
        if journal.torn:
            self._journal.truncate_to(journal.good_size)

    def _records_past(self, seq: int, journal) -> list[dict]:
        """The records after edit `seq` that the folded journal (`.journal.prev`) and the new one hold, once
        each: so a session told whose grade overruled its own is told after a fold too."""
        out: dict[int, dict] = {}
        for held in (read_journal(self._file(JOURNAL_PREV)), journal):
            if held is not None and not held.damage:
                out.update((r["seq"], r) for r in held.records if r["seq"] > seq)
        return [out[k] for k in sorted(out)]

    def _reset(self) -> None:
        self._meta, self._queries, self._labels, self._adj = {}, {}, {}, {}
        self._live, self._versions, self._seq, self._next_event = 0, {}, 0, 1
        self._pending, self._history, self._history_rewrite = [], None, False
