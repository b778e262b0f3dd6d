"""The label store: one benchmark's queries, judgments, history and versions, durable on disk.

    from rankgate.store import Workspace

Names are imported on first use, so that the CLI does not load TinyDB for
commands that never open a workspace.

Where things live: records.py (plain records and constants), labels.py (how a
pair's label is reached), reviewers.py (several reviewers of a pair),
durable.py (the snapshot, the journal, the fold), columns.py (the snapshot's judgments as columns),
workspace.py (`Workspace`), marks.py (unsure marks),
recovery.py, transfer/ (import, merge, export, migrate), storage.py (files,
journal, lock), paths.py (where workspaces live), sync.py (a benchmark
folder's qrels file and its workspace), unexported.py (CI's check for edits
not yet exported).
"""

from __future__ import annotations

_HOME = {
    "Workspace": "workspace", "resolve_reviewer": "workspace",
    "content_hash": "labels",
    "Judgment": "records", "Event": "records", "Version": "records", "Diff": "records", "Export": "records",
    "ImportReport": "records", "Conflict": "records", "Conflicts": "records", "ImportConflicts": "records",
    "Disagreement": "records", "MergeReport": "records", "MergeConflicts": "records",
    "MigrationReport": "records", "EXPORT_FORMATS": "records", "ON_CONFLICT": "records",
    "DamagedFile": "storage", "Locked": "storage",
}
__all__ = list(_HOME)


def __getattr__(name: str):
    if name in _HOME:
        from importlib import import_module

        return getattr(import_module(f"rankgate.store.{_HOME[name]}"), name)
    raise AttributeError(f"module 'rankgate.store' has no attribute {name!r}")
