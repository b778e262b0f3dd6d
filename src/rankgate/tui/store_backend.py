"""The label store (`rankgate.store.workspace.Workspace`) behind the app's LabelBook.

A benchmark folder opens the benchmark's workspace (its first open imports the
folder's labels and queries; later opens use the store). A qrels file opens
the workspace named after that file (or `--db`), importing the file on the
first open. Every edit is a `set_judgment` / `remove_judgment`: journaled and
fsynced by the store before the app shows it.
"""

from __future__ import annotations

import os
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.model import Catalog, Qrels, Query
from rankgate.store import paths, sync
from rankgate.store.storage import Locked
from rankgate.store.workspace import Workspace, _file_state
from rankgate.tui.labels import Backend, Change, Exported, Label

EXPORT_FORMATS = {"jsonl": "jsonl", "trec": "trec", "json": "json-graded"}


class StoreBackend(Backend):
    saved = True

    def __init__(self, ws: Workspace, read_only: str = "") -> None:
        self.ws = ws
        self.where = str(ws.path)
        self.read_only = read_only  # why edits are refused ("" when they are not)
        self.queries_file: str | None = None  # --queries: the texts of the queries the store knows by ID only

    @classmethod
    def open(cls, inputs, manifest, qrels_path: str | None, reviewer: str | None, collection_version: str = ""
             ) -> "StoreBackend":
        """The workspace for writing; when another process holds it, read-only (labels shown, edits
        refused with the reason) rather than not at all."""
        backend = cls._open_any(inputs, manifest, qrels_path, reviewer)
        backend.queries_file = getattr(inputs, "queries", None)
        return backend

    @classmethod
    def _open_any(cls, inputs, manifest, qrels_path: str | None, reviewer: str | None) -> "StoreBackend":
        try:
            if getattr(inputs, "viewer", False):  # a viewer's browser session: read-only whoever writes
                backend = cls._open(inputs, manifest, qrels_path, reviewer, True)
                backend.read_only = "a viewer's session: read-only"
                backend.follow = True  # the reviewers' edits, read again as they come (catch_up)
                return backend
            if getattr(inputs, "shared", False):  # the browser face: every session writes this workspace
                backend = cls._open_shared(inputs, manifest, qrels_path, reviewer)
                try:
                    backend.ws.share()  # writes a first import's files (a full disk refuses them)
                except BaseException:
                    backend.ws.close()  # the lock let go: the other sessions are not refused
                    raise
                return backend
            return cls._open(inputs, manifest, qrels_path, reviewer, False)
        except Locked as e:
            try:
                backend = cls._open(inputs, manifest, qrels_path, reviewer, True)
            except InputError:  # nothing to read yet (the other process is importing): say who holds it
                raise e from None
            backend.read_only = str(e)
            return backend

    @classmethod
    def _open_shared(cls, inputs, manifest, qrels_path, reviewer) -> "StoreBackend":
        """Another session holds the lock for an edit (milliseconds) or its first open's import: wait."""
        import time

        deadline = time.monotonic() + 30
        while True:
            try:
                return cls._open(inputs, manifest, qrels_path, reviewer, False)
            except Locked:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @classmethod
    def _open(cls, inputs, manifest, qrels_path, reviewer, readonly: bool) -> "StoreBackend":
        blind = getattr(inputs, "blind", False)
        if manifest is not None:
            ws = Workspace.open_benchmark(manifest, reviewer=reviewer, path=inputs.db, blind=blind, readonly=readonly,
                                          fold_import=False)  # folded after the first frame (fold_import)
        else:
            db = inputs.db or (paths.qrels_workspace_path(qrels_path) if qrels_path else None)
            if not inputs.db and qrels_path and not db.exists():  # a benchmark folder's file: one workspace
                db = sync.benchmark_workspace_of(qrels_path) or db
            ws = Workspace.open(db, reviewer=reviewer, blind=blind, readonly=readonly)
            try:
                imported = None
                if qrels_path and not readonly and len(ws) == 0 and not ws.queries():
                    imported = ws.import_files([qrels_path], why=f"{sync.FIRST_REVIEW}{qrels_path}")
                if qrels_path:  # the file changed since: offered on open, as a benchmark folder's (screens/sync.py)
                    own = inputs.db is None and not ws._meta.get("benchmark")
                    sync.follow_file(ws, qrels_path, imported=imported, own=own)
            except BaseException:
                ws.close()
                raise
        return cls(ws)

    @property
    def reviewer(self) -> str:
        return self.ws.reviewer

    def labels(self, qid: str) -> dict[str, Label]:
        return {j.doc: _label(j, _how(j)) for j in self.ws.judgments(qid)}

    def mine(self, qid: str, doc: str) -> Label | None:
        j = self.ws.judgment(qid, doc, for_reviewer=self.ws.reviewer, blind=True)
        return _label(j, "") if j is not None else None

    def _writable(self) -> None:
        if self.read_only:
            raise InputError(self.where, "read-only: another process is writing these labels; close it, then "
                             "press ctrl+r to open them for writing")

    def set(self, qid: str, doc: str, grade: int, reason: str | None, collection_version: str | None = None, *,
            cause: str | None = None, undoes: int | None = None, amends: int | None = None,
            corrects: bool = False) -> int | None:
        self._writable()
        # the app's IDs come from its files (a typed one is checked by the add form, screens/label_form.py)
        with self.ws.turn():
            event = self.ws.set_judgment(qid, doc, grade, reason=reason, collection_version=collection_version,
                                         create_query=True, why="rankgate review", cause=cause or "",
                                         undoes=undoes, amends=amends, ids_from_file=True,
                                         text_hash=self.text_hashes.get(doc), corrects=corrects)
        return getattr(event, "id", None)

    def restore_corrected(self, qid: str, doc: str, event: int, *, undoes: int | None = None) -> None:
        """The judgments a correction (its event `event`) removed, back (its undo)."""
        self._writable()
        with self.ws.turn():
            self.ws.restore_corrected(qid, doc, event, undoes=undoes)

    def remove(self, qid: str, doc: str, *, cause: str | None = None, undoes: int | None = None) -> int | None:
        """The reviewer's own judgment only (another reviewer's judgment is never touched)."""
        self._writable()
        with self.ws.turn():
            event = self.ws.remove_judgment(qid, doc, why="rankgate review", cause=cause or "", undoes=undoes)
        return getattr(event, "id", None)

    def mark_unsure(self, qid: str, doc: str, note: str) -> int | None:
        self._writable()
        with self.ws.turn():
            return getattr(self.ws.mark_unsure(qid, doc, note, why="rankgate review"), "id", None)

    def clear_unsure(self, qid: str, doc: str) -> int | None:
        self._writable()
        with self.ws.turn():
            return getattr(self.ws.clear_unsure(qid, doc, why="rankgate review"), "id", None)

    def set_notes(self, query: Query, notes: str) -> Query:
        self._writable()
        with self.ws.turn():
            if self.ws.query(query.id) is None:
                self.ws.set_query(query, why="rankgate review")
            self.ws.set_notes(query.id, notes, why="rankgate review")
            return self.ws.query(query.id)

    def judged_today(self) -> set[tuple[str, str]]:
        """The pairs the reviewer set by hand today (UTC): in the app or with `labels set`, not imported."""
        import time

        today = time.strftime("%Y-%m-%d", time.gmtime())
        return self.ws.judged_by_hand(today, in_history_file=hand_edits_cached(self.ws))

    def history(self, qid: str, doc: str | None) -> list[Change]:
        """One row per event: whose judgment it is (the reviewer the file named, for an import) and, apart,
        who made the change (`extra["by"]`: who imported it); query events as "notes" when the notes changed."""
        out = []
        for e in self.ws.history(qid, doc):
            after, before = e.after or {}, e.before or {}
            extra = {"why": e.why, "by": e.who, "id": e.id, "scope": e.scope,
                     "cause": e.cause, "undoes": e.undoes,
                     "source": after.get("source", "") or before.get("source", ""),
                     "version": after.get("collection_version", ""), "version_before": before.get("collection_version")}
            if e.doc is None:  # query events: the notes are what the app edits
                if e.kind == "query" and before and before.get("notes", "") != after.get("notes", ""):
                    out.append(Change(e.query, "", "notes", None, after.get("notes", ""), e.who, e.when, None, extra))
                continue
            kind = "withdraw" if extra["scope"] == "adjudication" and e.kind == "remove" else e.kind
            reason = after.get("reason", "")
            if kind == "unsure":
                kind = "unsure" if after.get("unsure") else "sure"  # the mark, set or cleared
                reason = f"unsure: {after['unsure']}" if after.get("unsure") else "unsure mark cleared"
            elif kind == "reason" and before.get("reason") == reason:  # only the collection version changed
                kind, reason = "version", f"collection version {before.get('collection_version') or 'none'} → " \
                    f"{after.get('collection_version') or 'none'}"
            whose = e.reviewer or extra["source"] or e.who
            out.append(Change(e.query, e.doc, kind, after.get("grade"), reason, whose, e.when, before.get("grade"),
                              extra))
        return out

    def export(self, path: Path, fmt: str) -> Exported:
        result = self.ws.export(EXPORT_FORMATS.get(fmt, fmt), path)
        return Exported(Path(path).resolve(), result.labels, result.format, list(result.notes))

    def export_reviewed(self, qrels: str, path: Path) -> Exported:
        """The labels of the qrels file the app was opened on, in that file's format and layout (store/sync.py)."""
        result, target, notes = sync.export_reviewed(self.ws, qrels, path, query_texts=self._query_texts())
        extra = [f"query notes in {notes}"] if notes is not None else []
        return Exported(Path(target).resolve(), result.labels, result.format, list(result.notes) + extra)

    def export_moved(self, old: Path, new: Path) -> None:
        """An export written at `old` now lives at `new` (review --serve places it in the export folder)."""
        from rankgate.store.sync_record import export_moved

        export_moved(self.ws, old, new)

    def _query_texts(self) -> dict[str, str]:
        """{query ID: text} of --queries (the notes sidecar's texts where the store has none); {} without it."""
        if not self.queries_file:
            return {}
        from rankgate.core.formats.corpus import read_queries

        try:
            return {qid: q.text for qid, q in read_queries(self.queries_file).items()}
        except (InputError, OSError):  # (read when the app opened: gone since, the notes go without texts)
            return {}

    def to_qrels(self, catalog: Catalog) -> Qrels:
        return self.ws.to_qrels(catalog)

    def queries(self) -> dict[str, Query]:
        return {q.id: q for q in self.ws.queries()}

    def disagreements(self) -> list:
        return self.ws.disagreements()

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str) -> None:
        self._writable()
        with self.ws.turn():
            self.ws.adjudicate(qid, doc, grade, reason, why="rankgate review")

    def fold_if_due(self, min_edits: int) -> bool:
        return self.ws.fold_if_due(min_edits)

    def close(self) -> None:
        try:
            self.fold_import()
        finally:
            self.ws.close()

    def fold_import(self) -> None:
        """A first open's import waits in the journal (safe there) so that the first frame comes sooner: it is
        folded into the snapshot here, after the first frame (or on close), so that no later open replays it;
        the comparison kept at open is kept under the files' new state (tui/runcache.py)."""
        from rankgate.tui.runcache import keep_import_comparison

        with self.ws.turn():
            self.ws.fold_import(then=lambda: keep_import_comparison(self.ws))

    def import_unwritten(self) -> str | None:
        """Why a first open's import is still not in the workspace's files after fold_import (a full disk, a
        folder that cannot be written), else None: its labels are still in the benchmark's file."""
        return self.ws.fold_problem if getattr(self.ws, "_unwritten", None) is not None else None

    def catch_up(self) -> tuple[set[str] | None, list[dict]]:
        """Other sessions' edits since the last call (a shared workspace, the browser face): the queries they
        touched (None: any may have changed) and the judgments they made. Cheap when the files did not
        change: their size and time are compared first."""
        if self.ws.closed or not (self.ws.shared or getattr(self, "follow", False)):
            return set(), []
        state = []
        for suffix in ("", paths.JOURNAL):
            try:
                st = os.stat(paths.sidecar(self.ws.path, suffix) if suffix else self.ws.path)
                state.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                state.append(None)
        if state == getattr(self, "_seen_files", None):
            return set(), []
        self._seen_files = state
        if self.ws.readonly:  # a viewer: no lock to take, the store read again (a reader retries a fold's race)
            try:
                self.ws.read_again()
            except InputError:
                self._seen_files = None  # the next call tries again
                return set(), []
            return None, []
        return self.ws.catch_up()


def _label(j, how: str) -> Label:
    return Label(j.query, j.doc, j.grade, j.reason, j.collection_version, j.reviewer, j.updated or j.created or None,
                 how, j.unsure, tuple(j.reviewers), j.reached, j.text_hash)


def _how(j) -> str:
    """How a label was reached, when it was more than one reviewer's say ("" for a single reviewer)."""
    return "" if j.reached in ("single", "") else j.how()


def hand_edits_cached(ws: Workspace, folder: Path | None = None) -> list[list[str]]:
    """`ws.hand_edits_in_history_file()`, kept in the cache folder keyed by the history file as it is (it
    changes only at a fold): reading the file of an 80,000-label benchmark to find today's few edits cost
    0.15 s on every open. Only the edits of the file's last two days are kept (an older edit is never
    today's)."""
    import json
    import time

    from rankgate.tui.runcache import KEEP_LABELS, _prune, _used, cache_dir, file_key

    history = paths.sidecar(ws.path, paths.HISTORY)
    key = file_key(str(history), "hand-edits", 1)
    if key is None:  # no history file yet
        return ws.hand_edits_in_history_file()
    where = (folder or cache_dir()) / f"hand-{key}.json"
    try:
        got = json.loads(where.read_text(encoding="utf-8"))
        if isinstance(got, list) and all(isinstance(e, list) and len(e) == 4 for e in got):
            _used(where)  # recently used: kept by _prune
            return got
    except (OSError, ValueError):
        pass
    # a benchmark's first open into a new store: its history is the import's, which holds no hand edit
    only_import = ws.import_history is not None and ws.import_history == _file_state(history)
    edits = [] if only_import else ws.hand_edits_in_history_file()
    try:
        since = time.strftime("%Y-%m-%d", time.gmtime(os.stat(history).st_mtime - 86400))
        tmp = where.with_name(f".{where.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([e for e in edits if e[0][:10] >= since]), encoding="utf-8")
        os.replace(tmp, where)
        _prune(where.parent, "hand-*.json", KEEP_LABELS)  # (each fold makes a new entry)
    except OSError:  # a cache that cannot be written is read again next time
        pass
    return edits
