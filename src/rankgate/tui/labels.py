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
from dataclasses import field, replace
from pathlib import Path

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

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
    unsure: str = ""  # "unsure / needs discussion": the note ("" when not marked)
    reviewers: tuple[str, ...] = ()  # who judged the pair (the label's own reviewer when empty)
    reached: str = ""  # the store's word for how: "single", "unanimous", "latest" (open disagreement), "adjudicated"
    text_hash: str = ""  # the document text it was judged on (core/staleness.py); "" when not known

    def judged_by(self, name: str) -> bool:
        return name == self.reviewer or name in self.reviewers

    @property
    def disputed(self) -> bool:
        """Reviewers disagree about the pair and nobody has adjudicated it."""
        return self.reached == "latest"


@dataclass
class Change:
    """One entry of a query's label history."""

    query: str
    doc: str
    action: str  # set, regrade, reason, remove, import, notes ...
    grade: int | None  # the grade after the change (None: removed)
    reason: str = ""
    reviewer: str = ""  # whose judgment it is (the file's reviewer for an import)
    time: str | None = None
    before: int | None = None  # the grade before (None: there was none)
    extra: dict = field(default_factory=dict)  # "by": who made the change (who imported it), "why", "cause" ...

    @property
    def by(self) -> str:
        return self.extra.get("by", "") or self.reviewer


@dataclass
class Exported:
    path: Path
    labels: int
    format: str
    notes: list[str] = field(default_factory=list)


class Backend:
    """What LabelBook needs from a store.

    `set` and `remove` act on the acting reviewer's own judgment only; `mine` is
    that judgment (None: the reviewer has none). `cause` ("undo" / "redo") and
    `undoes` (the event id being undone or redone) say what an edit is; each
    edit returns the id of the event it wrote (None when it wrote none).
    """

    where = ""  # where the labels live, for people
    saved = True  # False: edits are lost on exit
    reviewer = ""
    text_hashes: dict[str, str] = {}  # the corpus's {doc: text hash}: a label set now records its document's

    def labels(self, qid: str) -> dict[str, Label]:
        raise NotImplementedError

    def mine(self, qid: str, doc: str) -> Label | None:
        raise NotImplementedError

    def set(self, qid: str, doc: str, grade: int, reason: str | None, collection_version: str | None = None, *,
            cause: str | None = None, undoes: int | None = None, amends: int | None = None) -> int | None:
        """`amends`: the event this finishes (a reason typed right after its grade: one history row)."""
        raise NotImplementedError

    def remove(self, qid: str, doc: str, *, cause: str | None = None, undoes: int | None = None) -> int | None:
        raise NotImplementedError

    def mark_unsure(self, qid: str, doc: str, note: str) -> int | None:
        raise NotImplementedError

    def clear_unsure(self, qid: str, doc: str) -> int | None:
        raise NotImplementedError

    def set_notes(self, query: Query, notes: str) -> Query:
        """Change a query's notes (`query`: the query as the app knows it); the query as stored now."""
        raise NotImplementedError

    def judged_today(self) -> set[tuple[str, str]]:
        """The pairs the reviewer judged today (UTC) before this session."""
        return set()

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

    def fold_if_due(self, min_edits: int) -> bool:
        """Fold the store's journal now if it holds `min_edits` edits (a store's backend); True: folded."""
        return False

    def close(self) -> None:
        pass


class Refused(Exception):
    """An edit the app refuses before it reaches the store (the message says why); nothing changed."""


@dataclass
class Edit:
    """One edit of this session, as undo and redo see it: the reviewer's own judgment before and after."""

    what: str  # for people: "grade 2", "reason", "remove", "collection version v2", "unsure", "not unsure"
    qid: str
    doc: str
    before: Label | None
    after: Label | None
    event: int | None = None  # the store's event of the edit (or of its redo)
    undo_event: int | None = None  # the store's event of its last undo
    open: bool = False  # a grade whose reason is still being typed: the reason joins this edit
    corrected_at: int | None = None  # it corrected other reviewers' judgments (removed by this event)


def _same(a: Label | None, b: Label | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.grade, a.reason, a.collection_version, a.unsure) == (b.grade, b.reason, b.collection_version, b.unsure)


class LabelBook:
    """Labels per query over a backend. `qrels` is the state at open, for the first vectorised scoring.

    Every edit goes to the store at once and onto this session's undo stack
    (`undo()` / `redo()` write the reviewer's judgment back as it was, to the
    store, as an undo or a redo). `judged_session()` / `judged_today()` count
    the pairs the reviewer has judged.
    """

    UNDO_DEPTH = 200

    def __init__(self, backend: Backend, qrels: Qrels) -> None:
        self.backend = backend
        self.qrels = qrels
        self.catalog = qrels.catalog
        self._cache: dict[str, dict[str, Label]] = {}
        self.done: list[Edit] = []  # the undo stack (newest last)
        self.undone: list[Edit] = []  # the redo stack
        self._session: dict[tuple[str, str], tuple[Label | None, bool]] = {}  # pair -> (mine at start, judged now)
        self._exported: dict[tuple[str, str], Label | None] = {}  # pair -> mine at this session's last export
        self._today: set[tuple[str, str]] | None = None

    def labels(self, qid: str) -> dict[str, Label]:
        """doc -> Label for one query (do not mutate)."""
        got = self._cache.get(qid)
        if got is None:
            got = self._cache[qid] = self.backend.labels(qid)
        return got

    def grades(self, qid: str) -> dict[str, int]:
        return {d: lab.grade for d, lab in self.labels(qid).items()}

    def mine(self, qid: str, doc: str) -> Label | None:
        """The reviewer's own judgment of a pair (None: none)."""
        return self.backend.mine(qid, doc)

    def others(self, qid: str, doc: str) -> Label | None:
        """The pair's label when the reviewer has no judgment of it but others have (else None)."""
        lab = self.labels(qid).get(doc)
        if lab is None or lab.judged_by(self.reviewer) or self.mine(qid, doc) is not None:
            return None
        return lab

    # ---- edits (each one undoable) -------------------------------------------------------------------

    def _edit(self, what: str, qid: str, doc: str, write, merge: bool = False) -> Edit:
        before = self.mine(qid, doc)
        self._cache.pop(qid, None)
        event = write()
        after = self.mine(qid, doc)
        self._touched(qid, doc, before, after)
        top = self.done[-1] if self.done else None
        if merge and top is not None and top.open and (top.qid, top.doc) == (qid, doc):
            top.after, top.open = after, False
            if event is not None:
                top.event = event
            return top
        if top is not None:
            top.open = False
        edit = Edit(what, qid, doc, before, after, event)
        if not _same(before, after):
            self.done.append(edit)
            del self.done[:-self.UNDO_DEPTH]
            self.undone.clear()
        return edit

    def set(self, qid: str, doc: str, grade: int, reason: str | None = None, collection_version: str | None = None,
            *, what: str | None = None, merge: bool = False, open: bool = False, corrects: bool = False) -> Label:
        """Write the reviewer's grade (reason / collection version None keep the stored ones) to the store, now.
        `merge`: a reason typed after a grade joins that grade's edit (one undo step). `open`: a reason may follow.
        `corrects`: the other reviewers' judgments of the pair go (history keeps them): this one replaces them."""
        top = self.done[-1] if self.done else None
        amends = top.event if merge and top is not None and top.open and (top.qid, top.doc) == (qid, doc) else None
        correcting = corrects and self.others(qid, doc) is not None
        extra = {"corrects": True} if correcting else {}
        edit = self._edit(what or f"grade {grade}", qid, doc,
                          lambda: self.backend.set(qid, doc, int(grade), reason, collection_version, amends=amends,
                                                   **extra), merge)
        if correcting and edit.corrected_at is None:
            edit.corrected_at, edit.what = edit.event, f"{edit.what} (correcting theirs)"
        edit.open = open and edit is (self.done[-1] if self.done else None)
        return self.labels(qid)[doc]

    def remove(self, qid: str, doc: str) -> Label | None:
        """Remove the reviewer's own judgment; None when the document has no label. Refused (Refused) when only
        other reviewers judged it. Returns the judgment removed."""
        lab = self.labels(qid).get(doc)
        mine = self.mine(qid, doc)
        if mine is None:
            if lab is None:
                return None
            who = ", ".join(lab.reviewers or (lab.reviewer,))
            raise Refused(f"not removed: {qid} {doc} is judged by {who}, not by you ({self.reviewer}); "
                          "remove only removes your own judgment (adjudicate to overrule it)")
        self._edit("remove", qid, doc, lambda: self.backend.remove(qid, doc))
        return mine

    def set_version(self, qid: str, doc: str, version: str) -> Label:
        version = version.strip()
        if not version:
            raise Refused("the collection version cannot be empty: nothing changed")
        mine = self.mine(qid, doc)
        lab = mine or self.labels(qid).get(doc)
        if lab is None:
            raise Refused(f"{doc} has no label yet: grade it first")
        return self.set(qid, doc, lab.grade, None, version, what=f"collection version {version}")

    def mark_unsure(self, qid: str, doc: str, note: str) -> Label:
        if self.labels(qid).get(doc) is None:
            raise Refused(f"{doc} has no label yet: grade it first, then mark it unsure")
        self._edit("unsure", qid, doc, lambda: self.backend.mark_unsure(qid, doc, note))
        return self.labels(qid)[doc]

    def clear_unsure(self, qid: str, doc: str) -> Label | None:
        self._edit("not unsure", qid, doc, lambda: self.backend.clear_unsure(qid, doc))
        return self.labels(qid).get(doc)

    def close_edit(self) -> None:
        """The reason prompt closed: a later reason is an edit of its own."""
        if self.done:
            self.done[-1].open = False

    # ---- undo and redo -------------------------------------------------------------------------------

    def _restore(self, qid: str, doc: str, target: Label | None, cause: str, undoes: int | None,
                 corrects: bool = False) -> int | None:
        """Make the reviewer's judgment `target` again (None: no judgment), written as `cause` (`corrects`: a
        correction's redo removes the others' judgments again)."""
        current = self.mine(qid, doc)
        self._cache.pop(qid, None)
        event = None
        if target is None:
            if current is not None:
                event = self.backend.remove(qid, doc, cause=cause, undoes=undoes)
        else:
            if current is None or (current.grade, current.reason, current.collection_version) != \
                    (target.grade, target.reason, target.collection_version):
                event = self.backend.set(qid, doc, target.grade, target.reason, target.collection_version,
                                         cause=cause, undoes=undoes, **({"corrects": True} if corrects else {}))
            if (current.unsure if current else "") != target.unsure:
                e = self.backend.mark_unsure(qid, doc, target.unsure) if target.unsure else \
                    self.backend.clear_unsure(qid, doc)
                event = event if event is not None else e
        self._cache.pop(qid, None)
        self._touched(qid, doc, current, self.mine(qid, doc))
        return event

    def undo(self) -> Edit | None:
        """Undo this session's last edit (the store records an undo); None when there is none."""
        if not self.done:
            return None
        edit = self.done[-1]
        edit.undo_event = self._restore(edit.qid, edit.doc, edit.before, "undo", edit.event)
        if edit.corrected_at is not None:  # theirs back, as they were
            self.backend.restore_corrected(edit.qid, edit.doc, edit.corrected_at, undoes=edit.event)
            self._cache.pop(edit.qid, None)
        self.done.pop()
        edit.open = False
        self.undone.append(edit)
        return edit

    def redo(self) -> Edit | None:
        if not self.undone:
            return None
        edit = self.undone[-1]
        edit.event = self._restore(edit.qid, edit.doc, edit.after, "redo", edit.undo_event,
                                   corrects=edit.corrected_at is not None)
        if edit.corrected_at is not None:
            edit.corrected_at = edit.event
        self.undone.pop()
        self.done.append(edit)
        return edit

    # ---- progress ------------------------------------------------------------------------------------

    def _touched(self, qid: str, doc: str, before: Label | None, after: Label | None) -> None:
        start, _ = self._session.get((qid, doc), (before, False))
        judged = after is not None and (start is None or start.grade != after.grade or start.reason != after.reason)
        self._session[(qid, doc)] = (start, judged)

    def judged_session(self) -> set[tuple[str, str]]:
        """The pairs the reviewer has judged in this session (a new grade or reason that still stands)."""
        return {pair for pair, (_, judged) in self._session.items() if judged}

    def unexported(self) -> int:
        """The pairs edited in this session whose label is not what this session's last export wrote (with no
        export: not what it was when the session began). The quit dialog of the app on raw files counts them;
        a benchmark folder counts against its qrels file instead (store/sync.py Unexported)."""
        return sum(1 for (qid, doc), (start, _) in self._session.items()
                   if not _same(self.mine(qid, doc), self._exported.get((qid, doc), start)))

    def judged_today(self, session: set[tuple[str, str]] | None = None) -> int:
        """How many pairs the reviewer judged today: before this session, plus this session's (`session`:
        `judged_session()` when the caller has it). Counted without copying today's set (a long day's
        thousands of pairs, on every key)."""
        if self._today is None:
            try:
                self._today = set(self.backend.judged_today())
            except Exception:  # a count for the status line: never an error
                self._today = set()
        session = self.judged_session() if session is None else session
        return len(self._today) + sum(1 for pair in session if pair not in self._today)

    # ---- queries -------------------------------------------------------------------------------------

    def set_notes(self, query: Query, notes: str) -> Query:
        """A query's notes (stored with history); the query as it is now."""
        return self.backend.set_notes(query, notes)

    def history(self, qid: str, doc: str | None = None) -> list[Change]:
        return self.backend.history(qid, doc)

    def disagreements(self) -> list:
        return self.backend.disagreements()

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str) -> Label:
        """Record the pair's final grade (by this book's reviewer), now; returns the pair's label after."""
        self._cache.pop(qid, None)
        self.backend.adjudicate(qid, doc, int(grade), reason)
        return self.labels(qid)[doc]

    def export(self, path: str | Path, fmt: str = "jsonl", *, like: str | None = None) -> Exported:
        """Write the labels to `path`. `like`: the qrels file the app was opened on (raw files): the export
        keeps its format and layout, never replaces it, and takes the queries' notes along (store.sync
        export_reviewed); a backend with no store writes `fmt`."""
        reviewed = getattr(self.backend, "export_reviewed", None)
        done = reviewed(like, Path(path)) if like and reviewed else self.backend.export(Path(path), fmt)
        self._exported = {pair: self.mine(*pair) for pair in self._session}  # what `unexported` counts from
        return done

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

    def fold_if_due(self, min_edits: int) -> bool:
        return self.backend.fold_if_due(min_edits)

    def close(self) -> None:
        self.backend.close()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class MemoryBackend(Backend):
    """Labels in memory only: for tests of the views, and when no store can be opened.

    Like the store, a pair holds one judgment per reviewer; its label is the
    grade they agree on, else the latest judgment.
    """

    saved = False

    def __init__(self, qrels: Qrels, collection_version: str = "", reviewer: str = "", clock=None) -> None:
        self.where = "memory (labels are not saved)"
        self.collection_version = collection_version
        self.reviewer = reviewer
        self.clock = clock or _now
        self.rows: dict[str, dict[str, dict[str, Label]]] = {}  # query -> doc -> reviewer -> judgment
        for q, d, g, det in qrels.judgments():
            who = det.reviewer or "file"
            self.rows.setdefault(q, {}).setdefault(d, {})[who] = Label(q, d, g, det.reason, det.collection_version,
                                                                       who)
        self.log: list[Change] = []
        self.notes: dict[str, Query] = {}
        self._event = 0

    def _log(self, change: Change) -> int:
        self._event += 1
        change.extra.setdefault("by", self.reviewer)
        change.extra["id"] = self._event
        self.log.append(change)
        return self._event

    @staticmethod
    def _pair(revs: dict[str, Label]) -> Label | None:
        if not revs:
            return None
        latest = list(revs.values())[-1]
        names = tuple(revs)
        if len(revs) == 1:
            return replace(latest, reviewers=names, reached="single")
        agreed = len({lab.grade for lab in revs.values()}) == 1
        how = f"unanimous ({', '.join(names)})" if agreed else \
            f"not adjudicated: {', '.join(names)} disagree; the latest is {latest.reviewer}'s"
        return replace(latest, how=how, reviewers=names, reached="unanimous" if agreed else "latest")

    def labels(self, qid):
        out = {}
        for d, revs in self.rows.get(qid, {}).items():
            lab = self._pair(revs)
            if lab is not None:
                out[d] = lab
        return out

    def mine(self, qid, doc):
        return self.rows.get(qid, {}).get(doc, {}).get(self.reviewer)

    def _put(self, lab: Label) -> None:
        revs = self.rows.setdefault(lab.query, {}).setdefault(lab.doc, {})
        revs.pop(lab.reviewer, None)
        revs[lab.reviewer] = lab  # the latest last

    def set(self, qid, doc, grade, reason, collection_version=None, *, cause=None, undoes=None, amends=None):
        old = self.mine(qid, doc)
        if reason is None:
            reason = old.reason if old else ""
        if collection_version is None:
            collection_version = old.collection_version if old else self.collection_version
        if old is not None and (old.grade, old.reason, old.collection_version) == (grade, reason, collection_version):
            return None
        lab = Label(qid, doc, grade, reason, collection_version, self.reviewer, self.clock(),
                    unsure=old.unsure if old else "")
        self._put(lab)
        kind = "set" if old is None else "regrade" if old.grade != grade else "reason"
        last = self.log[-1] if self.log else None
        if amends is not None and last is not None and last.extra.get("id") == amends and \
                (last.query, last.doc) == (qid, doc):  # one row per edit, as the store's history folds it
            last.grade, last.reason = grade, reason
            return amends
        return self._log(Change(qid, doc, kind, grade, reason, self.reviewer, lab.time, old.grade if old else None,
                                {"cause": cause or "", "undoes": undoes}))

    def remove(self, qid, doc, *, cause=None, undoes=None):
        old = self.rows.get(qid, {}).get(doc, {}).pop(self.reviewer, None)
        if old is None:
            raise Refused(f"no judgment of yours to remove for {qid} {doc}")
        return self._log(Change(qid, doc, "remove", None, "", self.reviewer, self.clock(), old.grade,
                                {"cause": cause or "", "undoes": undoes}))

    def _unsure(self, qid, doc, note):
        lab = self.mine(qid, doc)
        if lab is None:  # marking another reviewer's label: the mark is on the pair's label as shown
            pair = self.labels(qid).get(doc)
            if pair is None:
                raise Refused(f"{doc} has no label")
            lab = replace(pair, reviewer=self.reviewer, reviewers=(), how="", time=self.clock())
        self._put(replace(lab, unsure=note))
        return self._log(Change(qid, doc, "unsure" if note else "sure", lab.grade, note, self.reviewer, self.clock(),
                                lab.grade))

    def mark_unsure(self, qid, doc, note):
        return self._unsure(qid, doc, note or "unsure")

    def clear_unsure(self, qid, doc):
        return self._unsure(qid, doc, "")

    def set_notes(self, query, notes):
        q = replace(self.notes.get(query.id) or query, notes=notes)
        self.notes[query.id] = q
        self._log(Change(query.id, "", "notes", None, notes, self.reviewer, self.clock()))
        return q

    def judged_today(self):
        today = self.clock()[:10]
        return {(q, d) for q, per in self.rows.items() for d, revs in per.items()
                if (lab := revs.get(self.reviewer)) is not None and (lab.time or "").startswith(today)}

    def history(self, qid, doc):
        return [c for c in self.log if c.query == qid and (doc is None or c.doc == doc)]

    def to_qrels(self, catalog):
        from array import array

        qs, ds, gs = array("i"), array("i"), array("q")
        details = {}
        declared: dict[int, None] = {}
        for q in self.rows:
            declared[catalog.queries.code(q)] = None
            for d, lab in self.labels(q).items():
                qs.append(catalog.queries.code(q))
                ds.append(catalog.docs.code(d))
                gs.append(lab.grade)
                details[(q, d)] = JudgmentDetail(lab.reason, lab.collection_version, lab.reviewer)
        return Qrels("memory", catalog, np.frombuffer(qs, np.int32).copy(), np.frombuffer(ds, np.int32).copy(),
                     np.frombuffer(gs, np.int64).copy(), list(declared), format="jsonl", details=details)

    def export(self, path, fmt):
        from rankgate.core.receipt import write_atomic

        path = Path(path)
        lines = []
        for q in self.rows:
            for lab in self.labels(q).values():
                if fmt == "trec":
                    lines.append(f"{lab.query} 0 {lab.doc} {lab.grade}\n")
                else:
                    lines.append(json.dumps({"query": lab.query, "doc": lab.doc, "grade": lab.grade,
                                             "reason": lab.reason, "collection_version": lab.collection_version,
                                             "reviewer": lab.reviewer}, ensure_ascii=False) + "\n")
        write_atomic(path, "".join(lines))  # whole or nothing; a named pipe refused, not waited on
        return Exported(path.resolve(), len(lines), fmt)
