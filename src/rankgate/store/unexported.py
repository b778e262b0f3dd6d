"""CI's warning about label edits not yet in a benchmark folder's qrels file (store/sync.py keeps the record).

`rankgate gate|score|compare FOLDER` calls `unexported_note(manifest)`: a stat
and one line of `<db>.sync` when the folder has a workspace, a stat when it has
none. Nothing is created or locked; TinyDB is imported only when the workspace
changed since its count was written (a writer is open), to count again read-only.
"""

from __future__ import annotations

from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store import paths
from rankgate.store.sync_record import SYNC_FORMAT, read_summary, stamp  # noqa: F401 (their home)


def unexported_count(manifest) -> tuple[int, Path] | None:
    """(unexported edits, workspace file) of this folder's workspace, or None when it has none (or no sync
    record). Reads one line; opens the workspace read-only only when its files changed since the count."""
    if not _may_have_a_record(manifest.name):
        return None
    db = paths.benchmark_workspace_path(manifest.name, manifest.folder, create=False)
    summary = read_summary(db)
    if summary is None:
        return None
    if summary.get("stamp") == stamp(db):
        return int(summary.get("unexported") or 0), db
    from rankgate.store.sync import count_unexported, read_record, workspace_grades
    from rankgate.store.workspace import Workspace

    try:
        with Workspace.open(db, readonly=True) as ws:
            record = read_record(db)
            if record is None:
                return None
            return count_unexported(record[1], workspace_grades(ws)), db
    except (InputError, OSError):
        return None


def _may_have_a_record(name: str) -> bool:
    """Whether a sync record of a workspace of this benchmark's name may exist: one listing of the workspaces
    folder, before the folder's key is hashed (CI's machines hold no workspace: hashlib is not imported)."""
    import os

    stem = paths.workspace_file_name(name)[: -len(".json")] + "-"
    try:
        return any(f.startswith(stem) and f.endswith(".json" + paths.SYNC) for f in os.listdir(paths.workspace_dir(False)))
    except OSError:
        return False


def unexported_note(manifest) -> str | None:
    """The one warning line of `rankgate gate|score|compare BENCH`, or None."""
    try:
        found = unexported_count(manifest)
    except Exception:  # a warning must never break the gate
        return None
    if not found or not found[0]:
        return None
    n, db = found
    return (f"warning: the workspace of this benchmark holds {n} unexported label edit{'s' if n != 1 else ''} "
            f"(not in {Path(manifest.qrels).name}, so not in this decision); see `rankgate labels status "
            f"{manifest.folder}`")
