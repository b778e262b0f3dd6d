"""What a `Workspace` writes: judgments, adjudications, confirmations, unsure marks, queries, versions
and purges (store/workspace.py).

A mixin of `Workspace`: each edit checks its input, builds its records and history events, and hands them
to `DurableIndex._commit` (store/durable.py) as one durable edit.
"""

from __future__ import annotations

import hashlib

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store import marks
from rankgate.store.labels import (
    label_state,
    pair_label,
    standing,
    corrected_judgments,
)
from rankgate.store.records import (
    credit,
    Event,
    Version,
    check_cause,
    check_grade,
    check_id,
    check_version_name,
    query_fields,
    query_record,
    query_state,
)
from rankgate.store.storage import dumps


class WorkspaceEdits:
    """The writing half of `Workspace`: every change of labels, queries and versions."""

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
            caused = self._cause(cause, undoes)
            grade = self._checked_judgment(qid, doc, grade, reason, collection_version, ids_from_file)
            who, now = self._stamp(reviewer)
            ops: list = []
            events: list[dict] = []
            self._add_query_if_new(qid, create_query, who, now, why, ops, events)
            old = self._labels.get(qid, {}).get(doc, {}).get(who)
            live = label_state(old)
            reason, collection_version, text_hash = self._kept_fields(live, reason, collection_version, text_hash)
            flagged = bool(live and live.get("needs_review"))
            rehashed = bool(live) and text_hash != live.get("text_hash", "")
            theirs = corrected_judgments(self._labels.get(qid, {}).get(doc, {}), who) if corrects else []
            if theirs:
                self._no_peeking("a correction of other reviewers' judgments")
            if live and live["grade"] == grade and live["reason"] == reason \
                    and live["collection_version"] == collection_version and not flagged and not rehashed \
                    and not theirs:
                return None
            kind, new = self._judgment_record(qid, doc, grade, reason, collection_version, text_hash, who, now,
                                              old, live)
            why = self._remove_corrected(theirs, qid, doc, who, now, why, caused, ops, events)
            ops.append(["review", new])
            if amends is not None:
                if isinstance(amends, bool) or not isinstance(amends, int) or not 1 <= amends < self._next_event:
                    raise InputError(str(self.path), f"amends={amends!r}: no such event in the history")
                caused["amends"] = amends
            events.append(dict(self._event(kind, qid, doc, live, label_state(new), who, now, why, len(events),
                                           scope="reviewer"), **caused))
            self._commit(ops, events)
            return Event.of(events[-1])

    # the steps of set_judgment

    def _checked_judgment(self, qid: str, doc: str, grade: int, reason: str | None,
                          collection_version: str | None, ids_from_file: bool) -> int:
        """Check a judgment's IDs, grade and text fields; the grade as stored."""
        db = str(self.path)
        # a new ID is checked; one the store already holds (an import takes any the formats read) is not
        if not isinstance(qid, str) or qid not in self._queries:
            check_id(qid, "query", db, typed=not ids_from_file)
        if not isinstance(doc, str) or doc not in self._labels.get(qid, {}):
            check_id(doc, "document", db, typed=not ids_from_file)
        grade = check_grade(grade, db)
        for name, value in (("reason", reason), ("collection version", collection_version)):
            if value is not None and not isinstance(value, str):
                raise InputError(db, f"the {name} must be text")
        return grade

    def _add_query_if_new(self, qid: str, create_query: bool, who: str, now: str, why: str, ops: list,
                          events: list[dict]) -> None:
        """A judgment of a query the store does not know: add the query (`create_query`) or refuse."""
        if qid in self._queries:
            return
        if not create_query:
            raise self.unknown_query(qid)
        rec = query_record(qid, {}, now, now)
        ops.append(["query", rec])
        events.append(self._event("query", qid, None, None, query_state(rec), who, now, why, 0))

    def _kept_fields(self, live: dict | None, reason: str | None, collection_version: str | None,
                     text_hash: str | None) -> tuple[str, str, str]:
        """(reason, collection version, text hash): the ones given, else the reviewer's stored ones (or, for a
        first judgment, empty / the workspace's collection version / empty)."""
        if reason is None:
            reason = live["reason"] if live else ""
        if collection_version is None:
            collection_version = live["collection_version"] if live else self.collection_version
        if text_hash is None or not isinstance(text_hash, str):
            text_hash = live.get("text_hash", "") if live else ""
        return reason, collection_version, text_hash

    def _judgment_record(self, qid: str, doc: str, grade: int, reason: str, collection_version: str,
                         text_hash: str, who: str, now: str, old: dict | None, live: dict | None) -> tuple[str, dict]:
        """(the event's kind, the judgment's new record)."""
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
        return kind, new

    def _remove_corrected(self, theirs: list[dict], qid: str, doc: str, who: str, now: str, why: str,
                          caused: dict, ops: list, events: list[dict]) -> str:
        """Remove the judgments a correction replaces, in the same edit (the pair's label is the new judgment at
        once); the reason the new judgment's event gives."""
        for rec in theirs:
            ops.append(["review", dict(rec, updated=now, removed=now)])
            events.append(dict(self._event("remove", qid, doc, label_state(rec), None, who, now,
                                           f"corrected by {who}" + (f": {why}" if why else ""), len(events),
                                           scope="reviewer"), **caused))
        if theirs:
            why = f"corrects {', '.join(credit(r['reviewer']) for r in theirs)}" + (f": {why}" if why else "")
        return why

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

