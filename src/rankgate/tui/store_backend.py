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
from rankgate.store import paths
from rankgate.store.storage import Locked
from rankgate.store.workspace import Workspace
from rankgate.tui.labels import Backend, Change, Exported, Label

EXPORT_FORMATS = {"jsonl": "jsonl", "trec": "trec", "json": "json-graded"}


class StoreBackend(Backend):
    saved = True

    def __init__(self, ws: Workspace, read_only: str = "") -> None:
        self.ws = ws
        self.where = str(ws.path)
        self.read_only = read_only  # why edits are refused ("" when they are not)

    @classmethod
    def open(cls, inputs, manifest, qrels_path: str | None, reviewer: str | None, collection_version: str = ""
             ) -> "StoreBackend":
        """The workspace for writing; when another process holds it, read-only (labels shown, edits
        refused with the reason) rather than not at all."""
        try:
            return cls._open(inputs, manifest, qrels_path, reviewer, False)
        except Locked as e:
            try:
                backend = cls._open(inputs, manifest, qrels_path, reviewer, True)
            except InputError:  # nothing to read yet (the other process is importing): say who holds it
                raise e from None
            backend.read_only = str(e)
            return backend

    @classmethod
    def _open(cls, inputs, manifest, qrels_path, reviewer, readonly: bool) -> "StoreBackend":
        blind = getattr(inputs, "blind", False)
        if manifest is not None:
            ws = Workspace.open_benchmark(manifest, reviewer=reviewer, path=inputs.db, blind=blind, readonly=readonly)
        else:
            db = inputs.db or (paths.workspace_path(os.path.abspath(qrels_path)) if qrels_path else None)
            ws = Workspace.open(db, reviewer=reviewer, blind=blind, readonly=readonly)
            if readonly:
                return cls(ws)
            try:
                if qrels_path and len(ws) == 0 and not ws.queries():
                    ws.import_files([qrels_path], why=f"first review of {qrels_path}")
            except BaseException:
                ws.close()
                raise
        return cls(ws)

    @property
    def reviewer(self) -> str:
        return self.ws.reviewer

    def labels(self, qid: str) -> dict[str, Label]:
        return {j.doc: Label(j.query, j.doc, j.grade, j.reason, j.collection_version, j.reviewer,
                             j.updated or j.created or None, _how(j)) for j in self.ws.judgments(qid)}

    def _writable(self) -> None:
        if self.read_only:
            raise InputError(self.where, "read-only: another process is writing these labels; close it, then "
                             "press ctrl+r to open them for writing")

    def set(self, qid: str, doc: str, grade: int, reason: str | None) -> None:
        self._writable()
        self.ws.set_judgment(qid, doc, grade, reason=reason, create_query=True, why="rankgate review")

    def remove(self, qid: str, doc: str) -> None:
        self._writable()
        self.ws.remove_judgment(qid, doc, why="rankgate review")

    def history(self, qid: str, doc: str | None) -> list[Change]:
        out = []
        for e in self.ws.history(qid, doc):
            if e.doc is None:  # query events
                continue
            after, before = e.after or {}, e.before or {}
            out.append(Change(e.query, e.doc, e.kind, after.get("grade"), after.get("reason", ""), e.who, e.when,
                              before.get("grade"), {"why": e.why}))
        return out

    def export(self, path: Path, fmt: str) -> Exported:
        result = self.ws.export(EXPORT_FORMATS.get(fmt, fmt), path)
        return Exported(Path(path).resolve(), result.labels, result.format, list(result.notes))

    def to_qrels(self, catalog: Catalog) -> Qrels:
        return self.ws.to_qrels(catalog)

    def queries(self) -> dict[str, Query]:
        return {q.id: q for q in self.ws.queries()}

    def disagreements(self) -> list:
        return self.ws.disagreements()

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str) -> None:
        self._writable()
        self.ws.adjudicate(qid, doc, grade, reason, why="rankgate review")

    def close(self) -> None:
        self.ws.close()


def _how(j) -> str:
    """How a label was reached, when it was more than one reviewer's say ("" for a single reviewer)."""
    return "" if getattr(j, "reached", "single") in ("single", "") else j.how()
