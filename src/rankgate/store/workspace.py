"""A label workspace: one benchmark's queries, judgments, history and versions.

    with Workspace.open(path, reviewer="ana") as ws:
        ws.set_judgment("q-backup", "doc-a", 2, reason="states the retention period")
        ws.freeze("v1")
        qrels = ws.to_qrels()

Its files, and how an edit becomes durable: store/durable.py (docs/labels.md).
What it reads: store/workspace_reads.py; how it edits: store/workspace_edits.py (both mixed in here).
Import, merge, export and migration: store/transfer/; recovery: store/recovery.py.

Several reviewers (docs/reviewers.md): a pair holds one judgment per
reviewer, and at most one adjudication; its *label* (what `judgments()`,
`to_qrels()` and exports give) is the adjudicated grade, else the grade all
its reviewers agree on, else the most recent judgment (store/labels.py).
`merge_files`, `disagreements`, `adjudicate`, `agreement`, `migrate`, and `blind=True`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable

from rankgate.core.errors import InputError
from rankgate.store import paths, recovery, sync
from rankgate.store.durable import FOLD_EDITS, DurableIndex
from rankgate.store.records import Export, ImportReport, MergeReport, MigrationReport
from rankgate.store.storage import now_iso
from rankgate.store.workspace_edits import WorkspaceEdits
from rankgate.store.workspace_reads import WorkspaceReads
from rankgate.store.transfer import export, imports, merge, migrate


def resolve_reviewer(explicit: str | None = None) -> str:
    """--reviewer, then RANKGATE_REVIEWER, then git's user.name, then the login name."""
    for name in (explicit, os.environ.get("RANKGATE_REVIEWER")):
        if name and name.strip():
            return name.strip()
    try:
        out = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=3,
                             stdin=subprocess.DEVNULL)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # no login name (some containers)
        return f"uid-{os.getuid()}"


class Workspace(WorkspaceReads, WorkspaceEdits, DurableIndex):
    """Queries, judgments, history and versions of one benchmark, durable on disk.

    Open with `Workspace.open(path)` (a writer: takes the lock) or
    `Workspace.open(path, readonly=True)` (a reader: no lock, no writes).
    `blind=True` opens it for blind review: every read shows the reviewer's
    own judgments only (see docs/reviewers.md).
    """

    def __init__(self, path: Path, *, readonly: bool, reviewer: str | None, fold_every: int,
                 blind: bool = False) -> None:
        # every stored timestamp comes from this module's `now_iso`, so that a test can fix it
        super().__init__(path, readonly=readonly, fold_every=fold_every, clock=now_iso)
        self.blind = bool(blind)
        self._reviewer = reviewer
        self._resolved_reviewer: str | None = None
        self.benchmark_import: ImportReport | None = None  # what the first open of a benchmark imported
        # (size, mtime, inode) of the history file while it holds only that import's events (the store was empty)
        self.import_history: tuple | None = None
        self.imported_into_empty = False  # that import went into a store with no event yet
        self.fold_later: int | None = None  # that import's edit seq, while it waits in the journal to be folded
        self.import_comparison = None  # the app's first comparison, kept again once that import is folded
        self.import_grades: tuple | None = None  # (edit seq, the workspace grades) as its sync record has them
        self.located = ""  # how a benchmark's workspace was found, when that needs saying (store/sync.py)
        self.manifest = None  # the benchmark folder's Manifest, when opened with open_benchmark

    def close(self) -> None:
        """Close; a benchmark's writer then counts its unexported edits for `rankgate gate` (store/sync.py)."""
        was_open = not self.closed
        if was_open and not self.readonly:
            self._born_unwritten()
            sync.flush_pending(self.path)  # a first import's sync record, if still left for later (after_open)
        super().close()
        if self._unwritten is not None:  # its import never written (a full disk): nor is its sync record
            sync.flush_pending(self.path, or_drop=True)
        if was_open and not self.readonly and self.manifest is not None:
            try:
                sync.remember(self)
            except Exception:  # a count for a warning never fails a close
                pass

    def _commit(self, ops: list, events: list[dict], *, unwritten: bool = False) -> None:
        sync.before_commit(self, ops)  # the pairs this writer touched, for the count on close (store/sync.py)
        super()._commit(ops, events, unwritten=unwritten)

    def _born(self) -> None:
        first = self._unwritten is not None
        super()._born()
        if first:  # a first import's sync record, if left for later, counts the files as that import left them
            sync.restamp_pending(self.path)

    def _born_unwritten(self) -> None:
        """A first import left unwritten (`_commit(unwritten=True)`) goes into the journal before its sync
        record is written and before anything else."""
        with self._mutex:
            if self._unwritten is not None and not self._closed:
                self._born_quietly()

    # ---------------------------------------------------------------- open

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, readonly: bool = False, reviewer: str | None = None,
             create: bool = True, fold_every: int = FOLD_EDITS, blind: bool = False) -> "Workspace":
        """Open (or create) a workspace file; default: the `default` workspace in the data folder."""
        # the data folder is created by the first edit (a failed command leaves nothing behind)
        path = Path(path) if path is not None else paths.workspace_path(create=False)
        if path.is_dir():
            from rankgate.core.benchmark import is_benchmark

            hint = "; for a benchmark folder use -b/--benchmark" if is_benchmark(path) else ""
            raise InputError(str(path), f"is a folder, expected a label store file (--db names a file){hint}")
        ws = cls(path, readonly=readonly, reviewer=reviewer, fold_every=fold_every, blind=blind)
        ws._open_files(create=create and not readonly)
        return ws

    @classmethod
    def open_benchmark(cls, benchmark, *, readonly: bool = False, reviewer: str | None = None,
                       path: str | os.PathLike | None = None, fold_every: int = FOLD_EDITS,
                       on_conflict: str = "stop", blind: bool = False, fold_import: bool = True,
                       texts=None) -> "Workspace":
        """The workspace of a benchmark folder (or its `Manifest`), found by the benchmark's name.

        The first open imports the folder's qrels (and queries file); later opens use the store.
        `fold_import=False`: a large first import is left in the journal for the caller to fold (`fold_later`).
        `texts(qrels)`: {document ID: text hash} for that first import's labels (imports.import_benchmark).
        """
        from rankgate.core.benchmark import Manifest, load_manifest

        manifest = benchmark if isinstance(benchmark, Manifest) else load_manifest(benchmark)
        # keyed by name and folder; a moved folder's workspace is found by name (store/sync.py)
        located = sync.Located(Path(path)) if path is not None else sync.locate(manifest, create=not readonly)
        db = located.adopt_from if readonly and located.adopt_from is not None else located.path
        if readonly and not db.exists():
            raise InputError(str(db), f"no workspace yet for benchmark {manifest.name!r}; open it for writing once "
                             "(e.g. `rankgate labels import -b FOLDER`) to import its labels")
        from_qrels = located.from_qrels and located.adopt_from is not None
        if not readonly:
            sync.adopt(located)
        ws = cls.open(db, readonly=readonly, reviewer=reviewer, fold_every=fold_every, blind=blind)
        ws.located = located.note
        ws.manifest = manifest
        try:
            if from_qrels and not readonly and not ws._meta.get("benchmark"):  # its labels and sync record stay
                imports.adopt_qrels_workspace(ws, manifest)
            elif not readonly and not ws._meta.get("benchmark"):
                empty = ws._next_event == 1 and not ws._pending  # no event yet: a new store
                ws.benchmark_import = imports.import_benchmark(ws, manifest, on_conflict, fold=fold_import,
                                                               texts=texts)
                if empty:
                    ws.import_history = _file_state(paths.sidecar(ws.path, paths.HISTORY))
                    ws.imported_into_empty = True
            if not readonly:  # `--db FILE` too: its record lives beside FILE, so an export back can tell
                # the file's changes from the workspace's; a first import's record hashed after the app's first
                sync.after_open(ws, manifest, later=not fold_import)  # frame, when it folds that import
        except BaseException:
            ws.close()
            raise
        return ws

    @property
    def edit_seq(self) -> int:
        """The number of the last edit committed (it grows with every edit)."""
        return self._seq

    def fold_import(self, then=None) -> None:
        """Fold the import `open_benchmark(fold_import=False)` left in the journal (the app: after its first
        frame, or on close). With no edit since, the sync record's count still holds (its stamp follows the
        files: store/sync.remember) and `then()` runs before any edit can come in."""
        self._born_unwritten()
        sync.flush_pending(self.path)  # the first import's sync record, if left for now (after_open)
        with self._mutex:
            at, self.fold_later = self.fold_later, None
            if at is None or self._closed or not self.fold_if_due(1) or self.fold_problem or self._seq != at:
                return
            sync.remember(self)
            if then is not None:
                then()

    @property
    def reviewer(self) -> str:
        """Whose name goes into history (resolved once, on the first edit)."""
        if self._resolved_reviewer is None:
            self._resolved_reviewer = resolve_reviewer(self._reviewer)
        return self._resolved_reviewer

    @property
    def name(self) -> str:
        bench = self._meta.get("benchmark") or {}
        return bench.get("name") or self.path.stem

    @property
    def collection_version(self) -> str:
        """The collection version new labels get when none is given (from the benchmark's manifest)."""
        return self._meta.get("collection_version", "")

    def _who(self, reviewer: str | None) -> str:
        return reviewer.strip() if reviewer and reviewer.strip() else self.reviewer

    def _stamp(self, reviewer: str | None) -> tuple[str, str]:
        """(who, when) of an edit."""
        return self._who(reviewer), self._clock()

    # ---------------------------------------------------------------- import, merge, export, migrate, recover

    def import_files(self, files: Iterable[str | os.PathLike], *, queries: Iterable[str | os.PathLike] = (),
                     on_conflict: str = "stop", collection_version: str | None = None, reviewer: str | None = None,
                     why: str | None = None, dry_run: bool = False, texts=None) -> ImportReport:
        """Import qrels (every core format) and query files, all or nothing (store.transfer.imports);
        `texts` {doc: text hash}: the corpus they were judged on (core/staleness.py)."""
        return imports.import_files(self, files, queries=queries, on_conflict=on_conflict,
                                    collection_version=collection_version, reviewer=reviewer, why=why,
                                    dry_run=dry_run, texts=texts)

    def merge_files(self, files: Iterable[str | os.PathLike], *, on_conflict: str = "stop",
                    reviewer: str | None = None, why: str | None = None, dry_run: bool = False) -> MergeReport:
        """Bring several reviewers' exports together, keeping every reviewer's judgment. All or nothing
        (store.transfer.merge)."""
        return merge.merge_files(self, files, on_conflict=on_conflict, reviewer=reviewer, why=why, dry_run=dry_run)

    def export(self, fmt: str = "trec", path: str | os.PathLike | None = None, *, plain: bool = False,
               header: bool | None = None, version: str | None = None, require_adjudication: bool = False,
               judged_by: str | None = None, all_reviewers: bool = False) -> Export:
        """Qrels that `read_qrels` reads back, with version, content hash and export time alongside (in the
        header: TREC only with header=True; store.transfer.export)."""
        return export.export(self, fmt, path, plain=plain, header=header, version=version,
                             require_adjudication=require_adjudication, judged_by=judged_by,
                             all_reviewers=all_reviewers)

    def migrate(self, idmap, *, version: str | None = None, before: str | None = None, drop_unmapped: bool = False,
                collection_version: str | None = None, reviewer: str | None = None, why: str = "",
                dry_run: bool = False) -> MigrationReport:
        """Carry judgments to new document IDs after rechunking, as a new version. All or nothing
        (store.transfer.migrate)."""
        return migrate.migrate(self, idmap, version=version, before=before, drop_unmapped=drop_unmapped,
                               collection_version=collection_version, reviewer=reviewer, why=why, dry_run=dry_run)

    @classmethod
    def recover(cls, path: str | os.PathLike) -> dict:
        """Rebuild a damaged workspace from what can be read; never deletes a file (store.recovery)."""
        return recovery.recover(path)


def _file_state(path) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino
