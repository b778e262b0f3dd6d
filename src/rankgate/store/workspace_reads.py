"""What a `Workspace` reads: queries, labels, reviews, history, versions and qrels (store/workspace.py).

A mixin of `Workspace`: its methods read the state `DurableIndex` (store/durable.py) keeps in memory,
under its lock, and the reviewer and blind-review settings `Workspace` holds. Nothing here writes.
"""

from __future__ import annotations

import difflib

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store import paths
from rankgate.store.columns import expand_events
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
    labels_as_qrels,
    pair_label,
    pair_view,
    standing,
)
from rankgate.store.records import (
    REVIEW_KINDS,
    fold_amended,
    Diff,
    Disagreement,
    Event,
    Judgment,
    Version,
    query_from_record,
)
from rankgate.store.reviewers import (
    agreement_groups,
    disagreements_of,
    judgments_by_reviewer,
    ratings_of,
    reviews_of,
)


class WorkspaceReads:
    """The reading half of `Workspace`: every method here only reads."""

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

    def to_qrels(self, catalog=None, version: str | None = None, *, for_reviewer: str | None = None,
                 known=None, parts: list | None = None):
        """The labels as core `Qrels` (columnar arrays), with reasons as details; every query declared.

        The grade of a pair is its label (adjudicated, agreed, or by the rule for
        an open disagreement: docs/reviewers.md). `for_reviewer=NAME`: NAME's own
        judgments only; a workspace open for blind review gives its reviewer's.
        `known`, `parts`: the labels now as a cache keeps them (store/labels.py labels_as_qrels).
        """
        with self._mutex:
            self._check_open()
            if self.blind:
                for_reviewer, _ = self._view(for_reviewer, True)
            meta = {"workspace": str(self.path), "version": version or "unfrozen"}
            if version is None and for_reviewer is None:  # the labels now: from the snapshot's columns
                return labels_as_qrels(str(self.path), self._queries, self._labels, self._adj, catalog, meta,
                                       known=known, parts=parts)
            queries, labels = self._label_set(version, for_reviewer)
            if for_reviewer is not None:
                meta["reviewer"] = for_reviewer
            return as_qrels(str(self.path), queries, labels, catalog, meta)

