"""The label store: TinyDB behind one small repository layer.

    from rankgate.store import Workspace

Names are imported on first use, so that the CLI does not load TinyDB for
commands that never open a workspace.
"""

from __future__ import annotations

__all__ = ["Workspace", "Judgment", "Event", "Version", "Diff", "Export", "ImportReport", "ImportConflicts",
           "Conflict", "resolve_reviewer", "content_hash", "Disagreement", "MergeReport", "MergeConflicts",
           "MigrationReport"]


def __getattr__(name: str):
    if name in __all__:
        from rankgate.store import workspace

        return getattr(workspace, name)
    raise AttributeError(f"module 'rankgate.store' has no attribute {name!r}")
