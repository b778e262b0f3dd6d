"""A label workspace: one benchmark's queries, judgments, history and versions.

    with Workspace.open(path, reviewer="ana") as ws:
        ws.set_judgment("q-backup", "doc-a", 2, reason="states the retention period")
        ws.freeze("v1")
        qrels = ws.to_qrels()

Its files, and how an edit becomes durable: store/durable.py (docs/labels.md).
Import, merge, export and migration: store/transfer/; recovery: store/recovery.py.

Several reviewers (docs/reviewers.md): a pair holds one judgment per
reviewer, and at most one adjudication; its *label* (what `judgments()`,
`to_qrels()` and exports give) is the adjudicated grade, else the grade all
its reviewers agree on, else the most recent judgment (store/labels.py).
`merge_files`, `disagreements`, `adjudicate`, `agreement`, `migrate`, and `blind=True`.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Iterable

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store import marks, paths, recovery, sync
from rankgate.store.columns import expand_events
from rankgate.store.durable import FOLD_EDITS, DurableIndex
from rankgate.store.labels import (
    as_judgment,
    as_qrels,
    content_hash,
    diff_labels,
    grades_of,
    HAND_KINDS,
    hand_edits,
    judgments_of,
    label_counts,
    label_state,
    labels_as_qrels,
    pair_label,
    pair_view,
    standing,
    corrected_judgments,
)
from rankgate.store.records import (
    REVIEW_KINDS,
    credit,
    fold_amended,
    Diff,
    Disagreement,
    Event,
    Export,
    ImportReport,
    Judgment,
    MergeReport,
    MigrationReport,
    Version,
    check_cause,
    check_grade,
    check_id,
    check_version_name,
    query_fields,
    query_from_record,
    query_record,
    query_state,
)
from rankgate.store.reviewers import (
    agreement_groups,
    disagreements_of,
    judgments_by_reviewer,
    ratings_of,
    reviews_of,
)
from rankgate.store.storage import dumps, now_iso
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


class Workspace(DurableIndex):
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
        super().close()
        if was_open and not self.readonly and self.manifest is not None:
            try:
                sync.remember(self)
            except Exception:  # a count for a warning never fails a close
                pass

    def _commit(self, ops: list, events: list[dict]) -> None:
        sync.before_commit(self, ops)  # the pairs this writer touched, for the count on close (store/sync.py)
        super()._commit(ops, events)

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
                       on_conflict: str = "stop", blind: bool = False, fold_import: bool = True) -> "Workspace":
        """The workspace of a benchmark folder (or its `Manifest`), found by the benchmark's name.

        The first open imports the folder's qrels (and queries file); later opens use the store.
        `fold_import=False`: a large first import is left in the journal for the caller to fold (`fold_later`).
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
                ws.benchmark_import = imports.import_benchmark(ws, manifest, on_conflict, fold=fold_import)
                if empty:
                    ws.import_history = _file_state(paths.sidecar(ws.path, paths.HISTORY))
                    ws.imported_into_empty = True
            if not readonly:  # `--db FILE` too: its record lives beside FILE, so an export back can tell
                sync.after_open(ws, manifest)  # the file's changes from the workspace's
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

    # ---------------------------------------------------------------- reading

    def queries(self) -> list[Query]:
        """Every query, in the order the workspace first saw them."""
        with self._mutex:
            self._check_open()
            return [query_from_record(q) for q in self._queries.values()]

    def query(self, qid: str) -> Query | None:
        q = self._queries.get(qid)
        return query_from_record(q) if q else None

    def _view(self, for_reviewer: str | None, blind: bool | None) -> tuple[str | None, bool]:
        """Whose view a read takes: (None: the pairs' labels | a reviewer's name, blind?)."""
        if self.blind:
            me = self.reviewer
            if for_reviewer is not None and for_reviewer != me:
                raise InputError(str(self.path), f"open for blind review by {me}: another reviewer's judgments "
                                 "are hidden")
            return me, True
        if blind and for_reviewer is None:
            for_reviewer = self.reviewer
        return for_reviewer, bool(blind)

    def _qids(self, qid: str | None) -> list[str]:
        """One query, or every query in workspace order."""
        return [qid] if qid is not None else list(self._queries)

    def _no_peeking(self, what: str) -> None:
        if self.blind:
            raise InputError(str(self.path), f"open for blind review by {self.reviewer}: {what} would show other "
                             "reviewers' grades; open the workspace without blind review")

    def judgments(self, qid: str | None = None, *, include_removed: bool = False, for_reviewer: str | None = None,
                  blind: bool | None = None) -> list[Judgment]:
        """Each judged pair's label (of one query, or all), queries in workspace order, documents in judged order.

        The label is what exports and the gate use: one per pair, whatever the
        number of reviewers (`Judgment.reached` says how it was reached).
        `for_reviewer=NAME`: NAME's own judgment where NAME has one, the label
        elsewhere; with `blind=True`, NAME's own judgments only (blind review:
        nobody else's grades). A workspace opened with `blind=True` reads
        this way always, for its reviewer.
        """
        with self._mutex:
            self._check_open()
            who, blind = self._view(for_reviewer, blind)
            return judgments_of(self._labels, self._adj, self._qids(qid), who, blind, include_removed)

    def judgment(self, qid: str, doc: str, *, for_reviewer: str | None = None,
                 blind: bool | None = None) -> Judgment | None:
        """One pair's label (or, with `for_reviewer`/`blind`, as `judgments` says); None when it has none."""
        who, blind = self._view(for_reviewer, blind)
        rec, label = pair_view(self._labels.get(qid, {}).get(doc), self._adj.get(qid, {}).get(doc), who, blind)
        return as_judgment(rec, label) if rec is not None else None

    def grades(self, qid: str, *, for_reviewer: str | None = None, blind: bool | None = None) -> dict[str, int]:
        """{doc: grade} of one query's labels (or, with `for_reviewer`/`blind`, as `judgments` says)."""
        who, blind = self._view(for_reviewer, blind)
        return grades_of(self._labels.get(qid, {}), self._adj.get(qid, {}), who, blind)

    def reviews(self, qid: str | None = None, doc: str | None = None, *,
                include_removed: bool = False) -> list[Judgment]:
        """Every reviewer's own judgments (of one query, or one pair); a pair's judgments in the order of
        their last edit (the last one is "the latest"). Not in blind review."""
        with self._mutex:
            self._check_open()
            self._no_peeking("reviews()")
            return reviews_of(self._labels, self._qids(qid), doc, include_removed)

    def adjudication(self, qid: str, doc: str) -> Judgment | None:
        """The pair's standing adjudication, if any."""
        self._no_peeking("adjudication()")
        adj = self._adj.get(qid, {}).get(doc)
        if not standing(adj):
            return None
        return as_judgment(pair_label(self._labels.get(qid, {}).get(doc), adj), True)

    def reviewers(self) -> dict[str, int]:
        """Each reviewer's number of standing judgments, by name."""
        with self._mutex:
            self._check_open()
            return judgments_by_reviewer(self._labels)

    def disagreements(self, qid: str | None = None, *, include_adjudicated: bool = False) -> list[Disagreement]:
        """Pairs whose reviewers gave different grades: each reviewer's grade and reason, the label now,
        and the adjudication if any. Without `include_adjudicated`, the open ones only (what an
        adjudication screen walks). Queries in workspace order, documents in judged order."""
        with self._mutex:
            self._check_open()
            self._no_peeking("disagreements()")
            return disagreements_of(self._labels, self._adj, self._qids(qid), include_adjudicated)

    def text_hashes(self) -> list[tuple[str, str, str]]:
        """(query, doc, text hash) of every standing label; hash "" when judged without the text."""
        return [(j.query, j.doc, j.text_hash) for j in self.judgments()]

    def unsure(self, qid: str | None = None) -> list[Judgment]:
        """Labels marked unsure (of one query, or all): `Judgment.unsure` is the note. In blind review, the
        reviewer's own judgments only."""
        return [j for j in self.judgments(qid) if j.unsure]

    def ratings(self, qid: str | None = None) -> dict[tuple[str, str], dict[str, int]]:
        """(query, doc) -> {reviewer: grade} of the standing judgments: what agreement is computed on."""
        with self._mutex:
            self._check_open()
            self._no_peeking("ratings()")
            return ratings_of(self._labels, self._qids(qid))

    def agreement(self, by: str | None = None):
        """Agreement between the reviewers (core.agreement): (overall, {group: Agreement}).

        `by`: None (no groups), "query", or "slice" (a query's tags; a query with
        several tags counts in each).
        """
        from rankgate.core.agreement import measure, measure_groups

        if by not in (None, "query", "slice"):
            raise InputError(str(self.path), f"agreement by {by!r}: expected query or slice")
        ratings = self.ratings()
        return measure(ratings), measure_groups(ratings, agreement_groups(self._queries, ratings, by))

    def _visible(self, e: dict) -> bool:
        """In blind review: events about other reviewers' grades are hidden."""
        if e["kind"] not in REVIEW_KINDS and e["kind"] != "remove":
            return True
        if e.get("scope") == "adjudication":
            return False
        return (e["after"] or e["before"] or {}).get("reviewer") == self.reviewer

    def history(self, qid: str | None = None, doc: str | None = None, *, limit: int | None = None) -> list[Event]:
        """Events, oldest first: all, one query's, or one judgment's. `limit` keeps the newest.
        In blind review, changes of other reviewers' judgments and adjudications are left out."""
        with self._mutex:
            self._check_open()
            events = fold_amended(self._load_history())
            if qid is not None:
                events = [e for e in events if e["query"] == qid and (doc is None or e["doc"] == doc)]
            if self.blind:
                events = [e for e in events if self._visible(e)]
            if limit is not None:
                events = events[-limit:] if limit > 0 else []
            return [Event.of(e) for e in events]

    def hand_edits_in_history_file(self) -> list[list[str]]:
        """[when, query, doc, reviewer] of each grade or reason set by hand (`HAND_KINDS`: the app's keys,
        `labels set`) that the history file holds, read without building the events of imports (a document of
        an import's judgments is skipped whole). The history file changes only at a fold, so the app keeps
        this list in its cache keyed by the file (tui/store_backend.py)."""
        from rankgate.store.durable import EMPTY_HISTORY
        from rankgate.store.storage import SnapshotStorage, parse_tables

        with self._mutex:
            self._check_open()
            if self._history is not None:
                return hand_edits(e for e in self._history if e["jseq"] <= self._meta["history_seq"])
            path = self._file(paths.HISTORY)
            raw = SnapshotStorage(path, access_mode="r").read_bytes() or EMPTY_HISTORY
            table = parse_tables(path, raw).get("history")
            docs = [e for e in table.values() if isinstance(e, dict) and e.get("kind") in HAND_KINDS] \
                if isinstance(table, dict) else []
            return hand_edits(expand_events(str(path), docs))

    def judged_by_hand(self, day: str, reviewer: str | None = None, *,
                       in_history_file: list[list[str]] | None = None) -> set[tuple[str, str]]:
        """The pairs whose judgment by `reviewer` (default: the workspace's) was set by hand on `day` (UTC,
        "YYYY-MM-DD": a grade or a reason typed in the app or given to `labels set`) and still stands with
        that day's edit. Labels imported or merged, adjudications and confirmations do not count.
        `in_history_file`: `hand_edits_in_history_file()` as kept (read from the file when None); the edits
        not folded yet come from the journal, in memory."""
        with self._mutex:
            self._check_open()
            who = reviewer or self.reviewer
            folded = self.hand_edits_in_history_file() if in_history_file is None else in_history_file
            recent = hand_edits(e for r in self._pending if r["seq"] > self._meta["history_seq"]
                                for e in r["events"])
            out = set()
            for when, q, d, rv in folded + recent:
                if rv == who and when.startswith(day):
                    rec = self._labels.get(q, {}).get(d, {}).get(who)
                    if standing(rec) and (rec.get("updated") or "").startswith(day):
                        out.add((q, d))
            return out

    def versions(self) -> list[Version]:
        with self._mutex:
            self._check_open()
            return [Version.of(v) for v in self._versions.values()]

    def stats(self) -> dict:
        counts = label_counts(self._labels, self._adj)
        return {"path": str(self.path), "name": self.name, "queries": len(self._queries), "judgments": self._live,
                "removed": counts.pop("removed"), "versions": len(self._versions), "last_event": self._next_event - 1,
                "journal_edits": self._journal.count if self._journal else None,
                "collection_version": self.collection_version, "benchmark": self._meta.get("benchmark"),
                "readonly": self.readonly, **counts}

    def unknown_query(self, qid: str, *, can_add: bool = True) -> InputError:
        """The error for a query the workspace does not know, with the likely ones; `can_add`: the command
        can add it (--add-query)."""
        close = difflib.get_close_matches(qid, list(self._queries), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return InputError(str(self.path), f"unknown query {qid!r}{hint}; import its queries or qrels first"
                          + (", or add it with --add-query" if can_add else ""))

    # ---------------------------------------------------------------- versions

    def content_hash(self, version: str | None = None) -> str:
        """The hash of the current labels (or of a version's labels, recomputed)."""
        with self._mutex:
            _, labels = self._label_set(version)
            return content_hash((q, d, s["grade"]) for q, per in labels.items() for d, s in per.items())

    def _version_name(self, version: str | None, digest: str) -> str:
        if version is not None:
            return version
        for v in reversed(list(self._versions.values())):
            if v["content_hash"] == digest:
                return v["name"]
        return "unfrozen"

    def diff(self, old: str, new: str | None = None) -> Diff:
        """The changelog from version `old` to version `new` (None: the current labels)."""
        with self._mutex:
            self._check_open()
            return diff_labels(old, new or "current", self._label_set(old)[1], self._label_set(new)[1])

    # ---------------------------------------------------------------- to the core

    def to_qrels(self, catalog=None, version: str | None = None, *, for_reviewer: str | None = None):
        """The labels as core `Qrels` (columnar arrays), with reasons as details; every query declared.

        The grade of a pair is its label (adjudicated, agreed, or by the rule for
        an open disagreement: docs/reviewers.md). `for_reviewer=NAME`: NAME's own
        judgments only; a workspace open for blind review gives its reviewer's.
        """
        with self._mutex:
            self._check_open()
            if self.blind:
                for_reviewer, _ = self._view(for_reviewer, True)
            meta = {"workspace": str(self.path), "version": version or "unfrozen"}
            if version is None and for_reviewer is None:  # the labels now: from the snapshot's columns
                return labels_as_qrels(str(self.path), self._queries, self._labels, self._adj, catalog, meta)
            queries, labels = self._label_set(version, for_reviewer)
            if for_reviewer is not None:
                meta["reviewer"] = for_reviewer
            return as_qrels(str(self.path), queries, labels, catalog, meta)

    # ---------------------------------------------------------------- edits

    def _cause(self, cause: str, undoes: int | None) -> dict:
        """The fields an undo or a redo adds to its event (checked): {} for an ordinary edit."""
        return check_cause(cause, undoes, self._next_event, str(self.path))

    def set_judgment(self, qid: str, doc: str, grade: int, reason: str | None = None,
                     collection_version: str | None = None, reviewer: str | None = None, *, why: str = "",
                     create_query: bool = False, cause: str = "", undoes: int | None = None,
                     amends: int | None = None, ids_from_file: bool = False, corrects: bool = False,
                     text_hash: str | None = None) -> Event | None:
        """Set the reviewer's judgment of a pair (new, regrade, or a new reason). None when nothing changed.

        `corrects`: the other reviewers' judgments of the pair were wrong and this one replaces them: they are
        removed in the same edit (one `remove` event each, "corrected by NAME"; history keeps them), so the
        pair holds this judgment alone and no disagreement is counted (`labels set --correct`; the review
        app's "correct theirs"). Without it, theirs stay beside this one (a disagreement until adjudicated).

        A pair holds one judgment per reviewer: this sets `reviewer`'s (default:
        the workspace's reviewer) and leaves other reviewers' judgments alone;
        `judgment()` then shows the pair's label, which is this grade unless
        other reviewers disagree (docs/reviewers.md). `reason`/`collection_version`
        None keep the reviewer's stored ones (or, for their first judgment of the
        pair, empty / the workspace's collection version). Setting a judgment
        that a migration flagged as needing review clears the flag (kind
        "confirm" when the grade and reason stay). An unknown query is refused
        unless `create_query`. One edit is one history event, whatever it changes
        (grade, reason and collection version together). An unsure mark stays.
        `cause="undo"`/`"redo"` (with `undoes=` the event id): the edit undoes or
        redoes an earlier one, and history says so. `amends=N`: the same edit as
        event N, finished (a reason typed right after its grade): history shows
        the two as one row. `ids_from_file`: the IDs were read from a file (a run the review app
        shows), not typed: a new one with a control character is taken as it is. `text_hash`: the
        document's text as the reviewer saw it (core/staleness.py; None keeps the stored one): judging a
        stale label again on the new text records the new one (a "confirm" when nothing else changes).
        """
        with self._mutex:
            self._check_writable()
            db = str(self.path)
            caused = self._cause(cause, undoes)
            # a new ID is checked; one the store already holds (an import takes any the formats read) is not
            if not isinstance(qid, str) or qid not in self._queries:
                check_id(qid, "query", db, typed=not ids_from_file)
            if not isinstance(doc, str) or doc not in self._labels.get(qid, {}):
                check_id(doc, "document", db, typed=not ids_from_file)
            grade = check_grade(grade, db)
            for name, value in (("reason", reason), ("collection version", collection_version)):
                if value is not None and not isinstance(value, str):
                    raise InputError(db, f"the {name} must be text")
            who, now = self._stamp(reviewer)
            ops: list = []
            events: list[dict] = []
            if qid not in self._queries:
                if not create_query:
                    raise self.unknown_query(qid)
                rec = query_record(qid, {}, now, now)
                ops.append(["query", rec])
                events.append(self._event("query", qid, None, None, query_state(rec), who, now, why, 0))
            old = self._labels.get(qid, {}).get(doc, {}).get(who)
            live = label_state(old)
            if reason is None:
                reason = live["reason"] if live else ""
            if collection_version is None:
                collection_version = live["collection_version"] if live else self.collection_version
            flagged = bool(live and live.get("needs_review"))
            if text_hash is None or not isinstance(text_hash, str):
                text_hash = live.get("text_hash", "") if live else ""
            rehashed = bool(live) and text_hash != live.get("text_hash", "")
            theirs = corrected_judgments(self._labels.get(qid, {}).get(doc, {}), who) if corrects else []
            if theirs:
                self._no_peeking("a correction of other reviewers' judgments")
            if live and live["grade"] == grade and live["reason"] == reason \
                    and live["collection_version"] == collection_version and not flagged and not rehashed \
                    and not theirs:
                return None
            kind = "set" if live is None else "regrade" if live["grade"] != grade else \
                "reason" if (live["reason"], live["collection_version"]) != (reason, collection_version) else "confirm"
            new = {"query": qid, "doc": doc, "grade": grade, "reason": reason,
                   "collection_version": collection_version, "reviewer": who,
                   "created": old["created"] if live else now, "updated": now if kind != "confirm" else old["updated"],
                   "removed": None}
            if live and live.get("unsure"):
                new["unsure"] = live["unsure"]
            if text_hash:
                new["text_hash"] = text_hash
            for rec in theirs:  # removed first, in the same edit: the pair's label is this judgment at once
                ops.append(["review", dict(rec, updated=now, removed=now)])
                events.append(dict(self._event("remove", qid, doc, label_state(rec), None, who, now,
                                               f"corrected by {who}" + (f": {why}" if why else ""), len(events),
                                               scope="reviewer"), **caused))
            if theirs:
                why = f"corrects {', '.join(credit(r['reviewer']) for r in theirs)}" + (f": {why}" if why else "")
            ops.append(["review", new])
            if amends is not None:
                if isinstance(amends, bool) or not isinstance(amends, int) or not 1 <= amends < self._next_event:
                    raise InputError(db, f"amends={amends!r}: no such event in the history")
                caused["amends"] = amends
            events.append(dict(self._event(kind, qid, doc, live, label_state(new), who, now, why, len(events),
                                           scope="reviewer"), **caused))
            self._commit(ops, events)
            return Event.of(events[-1])

    def restore_corrected(self, qid: str, doc: str, event: int, *, cause: str = "undo",
                          undoes: int | None = None) -> list[Event]:
        """Put back the judgments a correction (`set_judgment(corrects=True)`, its event `event`) removed, as
        they were (an undo of the correction; history says so). [] when it removed none, or they stand."""
        with self._mutex:
            self._check_writable()
            caused = self._cause(cause, undoes)
            who, now = self._stamp(None)
            revs = self._labels.get(qid, {}).get(doc, {})
            removed = [e for e in self._load_history() if e.get("kind") == "remove" and e.get("query") == qid
                       and e.get("doc") == doc and str(e.get("why", "")).startswith("corrected by ")
                       and event - len(revs) <= e["id"] < event]
            ops, events = [], []
            for e in removed:
                rec = revs.get(e["before"]["reviewer"])
                if rec is None or standing(rec):
                    continue
                back = dict(rec, updated=now, removed=None)
                ops.append(["review", back])
                events.append(dict(self._event("set", qid, doc, None, label_state(back), who, now,
                                               "correction undone", len(events), scope="reviewer"), **caused))
            if ops:
                self._commit(ops, events)
            return [Event.of(e) for e in events]

    def remove_judgment(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None,
                        of_reviewer: str | None = None, cause: str = "", undoes: int | None = None) -> Event:
        """Remove the reviewer's own judgment of a pair (history keeps it, the store a tombstone until a purge).

        Never another reviewer's: when only others have judged the pair, InputError (adjudicate instead).
        `of_reviewer=NAME` removes NAME's judgment, explicitly (`labels remove --of-reviewer`). Other
        reviewers' judgments and an adjudication stay; the pair's label follows from what stands.
        `cause`/`undoes`: as `set_judgment`.
        """
        with self._mutex:
            self._check_writable()
            caused = self._cause(cause, undoes)
            revs = self._labels.get(qid, {}).get(doc, {})
            who, now = self._stamp(reviewer)
            if self.blind:  # in blind review, only the reviewer's own judgment
                of_reviewer, _ = self._view(of_reviewer, True)
            whose = of_reviewer if of_reviewer is not None else who
            old = revs.get(whose)
            live = label_state(old)
            if live is None:
                others = [r["reviewer"] for r in revs.values() if standing(r)]
                if of_reviewer is None and others and not self.blind:
                    names = ", ".join(others)
                    raise InputError(str(self.path), f"document {doc!r} for query {qid!r} is judged by {names}, not "
                                     f"by you ({who}); removing never touches another reviewer's judgment: "
                                     "adjudicate instead")
                if of_reviewer is None and standing(self._adj.get(qid, {}).get(doc)):
                    raise InputError(str(self.path), f"document {doc!r} for query {qid!r} has an adjudication and "
                                     "no judgment of yours: withdraw the adjudication instead")
                if of_reviewer is None and qid not in self._queries:
                    raise self.unknown_query(qid)
                what = "was removed already" if old is not None else "does not exist"
                mine = "your" if of_reviewer is None else f"{of_reviewer}'s"
                raise InputError(str(self.path), f"no judgment to remove: {mine} judgment of document {doc!r} for "
                                 f"query {qid!r} {what}")
            event = dict(self._event("remove", qid, doc, live, None, who, now, why, 0, scope="reviewer"), **caused)
            self._commit([["review", dict(old, updated=now, removed=now)]], [event])
            return Event.of(event)

    def adjudicate(self, qid: str, doc: str, grade: int, reason: str, reviewer: str | None = None, *,
                   why: str = "") -> Event | None:
        """Record the pair's final grade, with its own reason, by `reviewer` (the adjudicator; default: the
        workspace's reviewer). The pair's label is this grade from now on, whatever its reviewers said,
        until someone adjudicates again or withdraws it (`remove_adjudication`). The reviewers' grades
        at this moment are kept with it. None when the same adjudication stands already."""
        with self._mutex:
            self._check_writable()
            self._no_peeking("adjudication")
            db = str(self.path)
            grade = check_grade(grade, db)
            if not isinstance(reason, str) or not reason.strip():
                raise InputError(db, f"an adjudication needs a reason (why is {doc!r} graded {grade} for {qid!r}?)")
            revs = self._labels.get(qid, {}).get(doc, {})
            live = [r for r in revs.values() if r.get("removed") is None]
            if not live:
                if qid not in self._queries:
                    raise self.unknown_query(qid)
                raise InputError(db, f"nothing to adjudicate: no reviewer has judged document {doc!r} for query "
                                 f"{qid!r}")
            old = self._adj.get(qid, {}).get(doc)
            before = label_state(old)
            who, now = self._stamp(reviewer)
            grades = {r["reviewer"]: r["grade"] for r in live}
            if before and before["grade"] == grade and before["reason"] == reason and before["reviewer"] == who \
                    and not before.get("needs_review") and before.get("grades") == grades:
                return None
            cvs = {r["collection_version"] for r in live}
            new = {"query": qid, "doc": doc, "grade": grade, "reason": reason,
                   "collection_version": cvs.pop() if len(cvs) == 1 else self.collection_version,
                   "reviewer": who, "created": old["created"] if before else now, "updated": now, "removed": None,
                   "grades": grades}
            event = self._event("adjudicate", qid, doc, before, label_state(new), who, now, why, 0,
                                scope="adjudication")
            self._commit([["adjudication", new]], [event])
            return Event.of(event)

    def remove_adjudication(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None) -> Event:
        """Withdraw a pair's adjudication: the disagreement is open again (history keeps it)."""
        with self._mutex:
            self._check_writable()
            self._no_peeking("adjudication")
            old = self._adj.get(qid, {}).get(doc)
            live = label_state(old)
            if live is None:
                raise InputError(str(self.path), f"no adjudication to withdraw for document {doc!r} of query {qid!r}")
            who, now = self._stamp(reviewer)
            event = self._event("remove", qid, doc, live, None, who, now, why, 0, scope="adjudication")
            self._commit([["adjudication", dict(old, updated=now, removed=now)]], [event])
            return Event.of(event)

    def confirm(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None) -> list[Event]:
        """The pair's carried label still holds: clear `needs_review` from its judgments and adjudication
        (grades, reasons and times stay). One `confirm` event per judgment; [] when nothing was flagged."""
        with self._mutex:
            self._check_writable()
            revs = self._labels.get(qid, {}).get(doc, {})
            adj = self._adj.get(qid, {}).get(doc)
            if pair_label(revs, adj) is None or (self.blind and not standing(revs.get(self.reviewer))):
                raise InputError(str(self.path), f"no label to confirm: document {doc!r} for query {qid!r}")
            who, now = self._stamp(reviewer)
            if self.blind:  # in blind review, only the reviewer's own judgment
                revs = {n: r for n, r in revs.items() if n == self.reviewer}
                adj = None
            ops, events = [], []
            for kind, rec in [("review", r) for r in revs.values()] + [("adjudication", adj)]:
                if not standing(rec) or not rec.get("needs_review"):
                    continue
                new = {k: v for k, v in rec.items() if k != "needs_review"}
                ops.append([kind, new])
                events.append(self._event("confirm", qid, doc, label_state(rec), label_state(new), who, now, why,
                                          len(events), scope="reviewer" if kind == "review" else "adjudication"))
            if not ops:
                return []
            self._commit(ops, events)
            return [Event.of(e) for e in events]

    # ---------------------------------------------------------------- unsure marks

    def mark_unsure(self, qid: str, doc: str, note: str, *, reviewer: str | None = None, why: str = "",
                    cause: str = "", undoes: int | None = None) -> Event | None:
        """Mark a pair's label unsure (needs discussion), with a note saying why; kept with history.

        The mark goes on the reviewer's own judgment of the pair, else on the
        judgment the pair's label comes from (an imported one, say; grades stay).
        `judgment().unsure` is the note; `labels disagreements` and the review
        queue surface it. None when the same note stands already.
        """
        with self._mutex:
            self._check_writable()
            caused = self._cause(cause, undoes)
            if not isinstance(note, str) or not note.strip():
                raise InputError(str(self.path), f"an unsure mark needs a note (what is unsure about {doc!r} for "
                                 f"{qid!r}?)")
            return marks.set_mark(self, qid, doc, note.strip(), reviewer, why, caused)

    def clear_unsure(self, qid: str, doc: str, *, reviewer: str | None = None, why: str = "",
                     cause: str = "", undoes: int | None = None) -> Event:
        """Clear a pair's unsure mark (the reviewer's own first, else the one its label shows)."""
        with self._mutex:
            self._check_writable()
            caused = self._cause(cause, undoes)
            event = marks.set_mark(self, qid, doc, "", reviewer, why, caused)
            assert event is not None  # a marked record was found
            return event

    # ---------------------------------------------------------------- queries and versions

    def set_query(self, query: Query, *, why: str = "", reviewer: str | None = None, cause: str = "",
                  undoes: int | None = None) -> Event | None:
        """Add a query or change its description (one event, old and new fields); None when nothing changed."""
        with self._mutex:
            self._check_writable()
            caused = self._cause(cause, undoes)
            check_id(query.id, "query", str(self.path))
            who, now = self._stamp(reviewer)
            old = self._queries.get(query.id)
            state = query_fields(query)
            if old is not None and query_state(old) == state:
                return None
            rec = query_record(query.id, state, old["created"] if old else now, now)
            event = dict(self._event("query", query.id, None, query_state(old) if old else None, state, who, now, why,
                                     0), **caused)
            self._commit([["query", rec]], [event])
            return Event.of(event)

    def set_notes(self, qid: str, notes: str, *, why: str = "", reviewer: str | None = None, cause: str = "",
                  undoes: int | None = None) -> Event | None:
        """Change a query's notes only (one `query` event showing old -> new notes); None when the same."""
        if not isinstance(notes, str):
            raise InputError(str(self.path), "the notes must be text")
        query = self.query(qid)
        if query is None:
            raise self.unknown_query(qid)
        import dataclasses

        return self.set_query(dataclasses.replace(query, notes=notes), why=why, reviewer=reviewer, cause=cause,
                              undoes=undoes)

    def freeze(self, name: str, *, note: str = "", reviewer: str | None = None) -> Version:
        """Name the current labels as a version (name, time, content hash)."""
        with self._mutex:
            self._check_writable()
            check_version_name(name, self._versions, str(self.path))
            who, now = self._stamp(reviewer)
            digest = self.content_hash()
            rec = self._version_record(name, now, who, digest, self._live, self._next_event, note)
            event = self._event("freeze", None, None, None, {"version": name, "content_hash": digest,
                                                             "labels": self._live}, who, now, note, 0)
            self._commit([["version", rec]], [event])
            return Version.of(rec)

    def _version_record(self, name: str, now: str, who: str, digest: str, labels: int, history_id: int,
                        note: str) -> dict:
        return {"name": name, "created": now, "who": who, "content_hash": digest, "labels": labels,
                "queries": len(self._queries), "history_id": history_id, "note": note or ""}

    def purge(self, qid: str, doc: str | None = None, *, why: str = "", reviewer: str | None = None) -> Event:
        """Erase a query (or one judgment) with its history, from the store and its backups.

        The only way anything is erased. A `purge` event records who, when, why and
        how much, but not the IDs (they may be what had to go): only a hash of them,
        `sha256(json [qid, doc])`, so that someone who knows them can check. Versions
        frozen before keep their recorded hash; their labels, rebuilt from history,
        no longer include what was purged.
        """
        with self._mutex:
            self._check_writable()
            self._no_peeking("a purge")
            if qid not in self._queries or (doc is not None and doc not in self._labels.get(qid, {})):
                target = f"document {doc!r} of query {qid!r}" if doc is not None else f"query {qid!r}"
                raise InputError(str(self.path), f"nothing to purge: no {target} in the store")
            history = self._load_history()
            n_events = sum(1 for e in history if e["query"] == qid and (doc is None or e["doc"] == doc)
                           and e["kind"] not in ("freeze", "purge"))
            per = self._labels.get(qid, {})
            n_labels = 1 if doc is not None else len(per)
            who, now = self._stamp(reviewer)
            target = "sha256:" + hashlib.sha256(dumps([qid, doc]).encode("ascii")).hexdigest()
            event = self._event("purge", None, None, {"judgments": n_labels, "events": n_events},
                                {"target": target}, who, now, why, 0)
            self._commit_erasure([["purge", {"query": qid, "doc": doc}]], [event])
            return Event.of(event)

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
