"""Merge several reviewers' exports into a workspace, keeping every reviewer's judgment. All or nothing."""

from __future__ import annotations

import os
from typing import Iterable

from rankgate.core.errors import InputError
from rankgate.store.durable import Batch
from rankgate.store.labels import describe_label, differs, label_state, standing, with_stored_details
from rankgate.store.records import (
    Conflict,
    MergeConflicts,
    MergeReport,
    check_id,
    check_on_conflict,
    query_record,
    query_state,
)
from rankgate.store.transfer.imports import read_reviewer_file


def merge_files(ws, files: Iterable[str | os.PathLike], *, on_conflict: str = "stop",
                reviewer: str | None = None, why: str | None = None, dry_run: bool = False) -> MergeReport:
    """Bring several reviewers' exports together, keeping every reviewer's judgment. All or nothing.

    Each file is a reviewer's export: JSONL judgments naming their reviewer
    (any number of reviewers, one judgment per reviewer per pair; lines
    reached "adjudicated" are adjudications), or TREC / JSON / BEIR qrels whose
    header names the reviewer (`# reviewer: NAME`, `"meta": {"reviewer": NAME}`).
    `NAME=FILE` names the reviewer of a file that does not. A judgment is
    compared with the same reviewer's judgment of the pair only: other
    reviewers' judgments are never touched. One that differs (another grade,
    another non-empty reason or collection version, or one the reviewer
    removed) is a conflict: `on_conflict` "stop" raises `MergeConflicts`
    listing them and merges nothing, "keep" keeps the store's, "overwrite"
    takes the file's. Two files giving one reviewer's pair different grades
    or reasons are an error. Queries the store does not know are added.
    """
    with ws._mutex:
        ws._check_writable()
        ws._no_peeking("a merge")
        check_on_conflict(on_conflict, str(ws.path))
        specs = [str(f) for f in files]
        if not specs:
            raise InputError(str(ws.path), "nothing to merge: name the reviewers' exports")
        who, now = ws._stamp(reviewer)
        report = MergeReport(files=[], dry_run=dry_run)
        incoming, declared = _read_exports(specs, report)
        batch = Batch(ws, who, now)
        for qid, source in declared.items():
            if qid not in ws._queries:
                check_id(qid, "query", source)
                rec = query_record(qid, {}, now, now)
                batch.ops.append(["query", rec])
                batch.event("query", qid, None, None, query_state(rec), why or f"merge {source}")
                report.queries_added += 1
        touched = _merge_judgments(ws, batch, incoming, on_conflict, why, report)
        if report.conflicts and on_conflict == "stop":
            raise MergeConflicts(str(ws.path), report.conflicts)
        report.disagreements = open_disagreements_after(ws, batch.ops, touched)
        if dry_run or not batch.events:
            return report
        ws._commit(batch.ops, batch.events)
        return report


def merge_spec(spec: str) -> tuple[str, str | None]:
    """`FILE` or `NAME=FILE` (a file whose reviewer is NAME): (path, name or None)."""
    if "=" in spec and not os.path.exists(spec):
        name, path = spec.split("=", 1)
        if name and os.path.exists(path):
            if name != name.strip() or any(ord(c) < 32 for c in name):
                raise InputError(spec, f"reviewer name {name!r} has surrounding spaces or control characters")
            return path, name
    return spec, None


def _read_exports(specs: list[str], report: MergeReport) -> tuple[dict, dict[str, str]]:
    """({(qid, doc, reviewer or None for the adjudication): (state, where)}, {qid: source}) of every
    file; two files that disagree about one reviewer's judgment are an error."""
    incoming: dict[tuple[str, str, str | None], tuple[dict, str]] = {}
    declared: dict[str, str] = {}
    for spec in specs:
        path, name = merge_spec(spec)
        report.files.append(path)
        rows, qids, notes = read_reviewer_file(path, name)
        report.notes.extend(notes)
        for qid in qids:
            declared.setdefault(qid, path)
        for (q, d, key), state, where in rows:
            prev = incoming.get((q, d, key))
            if prev is not None and (prev[0]["grade"], prev[0]["reason"]) != (state["grade"], state["reason"]):
                whose = f"{key}'s judgment" if key is not None else "the adjudication"
                raise InputError(where, f"{whose} of document {d!r} for query {q!r} is "
                                 f"{describe_label(state)} here but {describe_label(prev[0])} in "
                                 f"{prev[1]}; nothing was merged (fix one of the files)")
            incoming[(q, d, key)] = (state, where)
            if key is not None:
                report.reviewers[key] = report.reviewers.get(key, 0) + 1
    return incoming, declared


def _merge_judgments(ws, batch: Batch, incoming: dict, on_conflict: str, why: str | None,
                     report: MergeReport) -> set[tuple[str, str]]:
    """Each file judgment against the same reviewer's (or the adjudication) in the store; the conflicts
    go into `report`. Returns the pairs that change."""
    now = batch.now
    conflicts: list[Conflict] = []
    touched: set[tuple[str, str]] = set()
    for (qid, doc, key), (state, src) in incoming.items():
        if key is None:
            old = ws._adj.get(qid, {}).get(doc)
        else:
            old = ws._labels.get(qid, {}).get(doc, {}).get(key)
        live = label_state(old)
        whose = f"{key}'s judgment" if key is not None else "the adjudication"
        if old is None:
            report.added += key is not None
        elif live is None:
            conflicts.append(Conflict(qid, doc, f"{whose} removed on {old['removed']} (was "
                                      f"{describe_label(old)})", describe_label(state), src))
            if on_conflict != "overwrite":
                report.kept += 1
                continue
            report.changed += key is not None
        else:
            if not (differs(live, state) or (key is None and live["reviewer"] != state["reviewer"])):
                report.unchanged += 1
                continue
            conflicts.append(Conflict(qid, doc, f"{whose}: {describe_label(live)}", describe_label(state), src))
            if on_conflict != "overwrite":
                report.kept += 1
                continue
            state = with_stored_details(state, live)
            report.changed += key is not None
        rec = {"query": qid, "doc": doc, "grade": state["grade"], "reason": state["reason"],
               "collection_version": state["collection_version"] or ws.collection_version,
               "reviewer": state["reviewer"], "created": old["created"] if live else now, "updated": now,
               "removed": None}
        for flag in ("needs_review", "migrated_from", "unsure"):
            if state.get(flag):
                rec[flag] = state[flag]
        kind = "review" if key is not None else "adjudication"
        report.adjudications += key is None
        batch.ops.append([kind, rec])
        batch.event("merge", qid, doc, live, label_state(rec), why or f"merge {src}",
                    "reviewer" if key is not None else "adjudication")
        touched.add((qid, doc))
    report.conflicts = conflicts
    return touched


def open_disagreements_after(ws, ops: list, touched: set[tuple[str, str]]) -> int:
    """How many pairs would have an open disagreement once `ops` (reviews, adjudications) apply."""
    count = 0
    for q, per in ws._labels.items():
        adjq = ws._adj.get(q, {})
        for d, revs in per.items():
            if (q, d) in touched or len(revs) < 2 or standing(adjq.get(d)):
                continue
            if len({r["grade"] for r in revs.values() if r.get("removed") is None}) > 1:
                count += 1
    after: dict[tuple[str, str], list] = {}
    for q, d in touched:
        after[(q, d)] = [dict(ws._labels.get(q, {}).get(d, {})), ws._adj.get(q, {}).get(d)]
    for kind, rec in ops:
        slot = after.get((rec.get("query"), rec.get("doc")))
        if slot is None:
            continue
        if kind == "review":
            slot[0][rec["reviewer"]] = rec
        elif kind == "adjudication":
            slot[1] = rec
    for revs, adj in after.values():
        if not standing(adj) and len({r["grade"] for r in revs.values() if r.get("removed") is None}) > 1:
            count += 1
    return count
