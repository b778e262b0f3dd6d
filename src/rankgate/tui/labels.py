"""The one place the app talks to the label store.

`LabelBook` is what the panes and the live model need: a query's labels and
grades (the store keeps an in-memory index, so these are cheap; the book
caches each query's labels until that query is edited), edits that go to the
store at once, history and export. `StoreBackend` (store_backend.py) is the
real store; `MemoryBackend` holds labels in memory only, for tests of the
views and as the fallback when no store can be opened. When the store's API
changes, only the backends change.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rankgate.core.model import Catalog, JudgmentDetail, Qrels, Query


@dataclass(frozen=True)
class Label:
    """One judgment as the label pane shows it."""

    query: str
    doc: str
    grade: int
    reason: str = ""
    collection_version: str = ""
    reviewer: str = ""
    time: str | None = None  # when it was last changed (ISO 8601, UTC)
    how: str = ""  # how the grade was reached when several reviewers judged it ("adjudicated by lena" ...)


@dataclass
class Change:
    """One entry of a query's label history."""

    query: str
    doc: str
    action: str  # set, regrade, reason, remove, import ...
    grade: int | None  # the grade after the change (None: removed)
    reason: str = ""
    reviewer: str = ""
    time: str | None = None
    before: int | None = None  # the grade before (None: there was none)
    extra: dict = field(default_factory=dict)


@dataclass
class Exported:
    path: Path
    labels: int
    format: str
    notes: list[str] = field(default_factory=list)


class Backend:
    """What LabelBook needs from a store."""

    where = ""  # where the labels live, for people
    saved = True  # False: edits are lost on exit
    reviewer = ""

    def labels(self, qid: str) -> dict[str, Label]:
        raise NotImplementedError

    def set(self, qid: str, doc: str, grade: int, reason: str | None) -> None:
        raise NotImplementedError

    def remove(self, qid: str, doc: str) -> None:
        raise NotImplementedError

    def history(self, qid: str, doc: str | None) -> list[Change]:
        return []

    def export(self, path: Path, fmt: str) -> Exported:
        raise NotImplementedError

    def to_qrels(self, catalog: Catalog) -> Qrels:
        raise NotImplementedError

    def queries(self) -> dict[str, Query] | None:
        return None

    def disagreements(self) -> list:
        """Open disagreements between reviewers (the store's `Disagreement`s); none without a store."""
        return []

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str) -> None:
        raise NotImplementedError("adjudication needs the label store")

    def close(self) -> None:
        pass


class LabelBook:
    """Labels per query over a backend. `qrels` is the state at open, for the first vectorised scoring."""

    def __init__(self, backend: Backend, qrels: Qrels) -> None:
        self.backend = backend
        self.qrels = qrels
        self.catalog = qrels.catalog
        self._cache: dict[str, dict[str, Label]] = {}

    def labels(self, qid: str) -> dict[str, Label]:
        """doc -> Label for one query (do not mutate)."""
        got = self._cache.get(qid)
        if got is None:
            got = self._cache[qid] = self.backend.labels(qid)
        return got

    def grades(self, qid: str) -> dict[str, int]:
        return {d: lab.grade for d, lab in self.labels(qid).items()}

    def set(self, qid: str, doc: str, grade: int, reason: str | None = None) -> Label:
        """Write a grade (reason None keeps the stored reason) to the store, now."""
        self._cache.pop(qid, None)
        self.backend.set(qid, doc, int(grade), reason)
        return self.labels(qid)[doc]

    def remove(self, qid: str, doc: str) -> bool:
        if doc not in self.labels(qid):
            return False
        self._cache.pop(qid, None)
        self.backend.remove(qid, doc)
        return True

    def history(self, qid: str, doc: str | None = None) -> list[Change]:
        return self.backend.history(qid, doc)

    def disagreements(self) -> list:
        return self.backend.disagreements()

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str) -> Label:
        """Record the pair's final grade (by this book's reviewer), now; returns the pair's label after."""
        self._cache.pop(qid, None)
        self.backend.adjudicate(qid, doc, int(grade), reason)
        return self.labels(qid)[doc]

    def export(self, path: str | Path, fmt: str = "jsonl") -> Exported:
        return self.backend.export(Path(path), fmt)

    def to_qrels(self) -> Qrels:
        """The current labels as core qrels in the app's catalog (for a full check against the core)."""
        return self.backend.to_qrels(self.catalog)

    @property
    def where(self) -> str:
        return self.backend.where

    @property
    def saved(self) -> bool:
        return self.backend.saved

    @property
    def reviewer(self) -> str:
        return self.backend.reviewer

    def close(self) -> None:
        self.backend.close()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class MemoryBackend(Backend):
    """Labels in memory only: for tests of the views, and when no store can be opened."""

    saved = False

    def __init__(self, qrels: Qrels, collection_version: str = "", reviewer: str = "", clock=None) -> None:
        self.where = "memory (labels are not saved)"
        self.collection_version = collection_version
        self.reviewer = reviewer
        self.clock = clock or _now
        self.rows: dict[str, dict[str, Label]] = {}
        for q, d, g, det in qrels.judgments():
            self.rows.setdefault(q, {})[d] = Label(q, d, g, det.reason, det.collection_version, det.reviewer)
        self.log: list[Change] = []

    def labels(self, qid):
        return dict(self.rows.get(qid, {}))

    def set(self, qid, doc, grade, reason):
        old = self.rows.get(qid, {}).get(doc)
        if reason is None:
            reason = old.reason if old else ""
        lab = Label(qid, doc, grade, reason, old.collection_version if old else self.collection_version,
                    self.reviewer, self.clock())
        self.rows.setdefault(qid, {})[doc] = lab
        kind = "set" if old is None else "regrade" if old.grade != grade else "reason"
        self.log.append(Change(qid, doc, kind, grade, reason, self.reviewer, lab.time, old.grade if old else None))

    def remove(self, qid, doc):
        old = self.rows.get(qid, {}).pop(doc, None)
        self.log.append(Change(qid, doc, "remove", None, "", self.reviewer, self.clock(),
                               old.grade if old else None))

    def history(self, qid, doc):
        return [c for c in self.log if c.query == qid and (doc is None or c.doc == doc)]

    def to_qrels(self, catalog):
        from array import array

        qs, ds, gs = array("i"), array("i"), array("q")
        details = {}
        declared: dict[int, None] = {}
        for q, per in self.rows.items():
            declared[catalog.queries.code(q)] = None
            for d, lab in per.items():
                qs.append(catalog.queries.code(q))
                ds.append(catalog.docs.code(d))
                gs.append(lab.grade)
                details[(q, d)] = JudgmentDetail(lab.reason, lab.collection_version, lab.reviewer)
        return Qrels("memory", catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                     np.frombuffer(gs, np.int64).copy(), list(declared), format="jsonl", details=details)

    def export(self, path, fmt):
        path = Path(path)
        n = 0
        with open(path, "w", encoding="utf-8") as f:
            for per in self.rows.values():
                for lab in per.values():
                    n += 1
                    if fmt == "trec":
                        f.write(f"{lab.query} 0 {lab.doc} {lab.grade}\n")
                    else:
                        f.write(json.dumps({"query": lab.query, "doc": lab.doc, "grade": lab.grade,
                                            "reason": lab.reason, "collection_version": lab.collection_version,
                                            "reviewer": lab.reviewer}, ensure_ascii=False) + "\n")
        return Exported(path.resolve(), n, fmt)
