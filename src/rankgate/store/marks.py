"""Unsure marks: a label that needs discussion, with a note (`Workspace.mark_unsure`, `clear_unsure`).

A mark is a field of one stored judgment (or adjudication), kept with history
as an `unsure` event; it changes no grade and is not an edit of the judgment
(its place among the pair's judgments and its `updated` time stay).
"""

from __future__ import annotations

from rankgate.core.errors import InputError
from rankgate.store.labels import label_state, standing
from rankgate.store.records import Event


def target(ws, qid: str, doc: str, who: str, marked: bool) -> tuple[str, dict]:
    """("review" | "adjudication", record) a mark goes on (or, `marked`, is cleared from): `who`'s own
    judgment, else the record the pair's label comes from (the adjudication, else the latest judgment)."""
    revs = ws._labels.get(qid, {}).get(doc, {})
    adj = ws._adj.get(qid, {}).get(doc)
    own = revs.get(who)
    if standing(own) and (not marked or own.get("unsure")):
        return "review", own
    if not ws.blind:  # in blind review, only the reviewer's own judgment
        live = [r for r in revs.values() if standing(r)]
        candidates = ([("adjudication", adj)] if standing(adj) else []) + [("review", r) for r in reversed(live)]
        for kind, rec in candidates:
            if not marked or rec.get("unsure"):
                return kind, rec
    if marked and ws.judgment(qid, doc) is not None:
        raise InputError(str(ws.path), f"document {doc!r} for query {qid!r} is not marked unsure")
    if qid not in ws._queries:
        raise ws.unknown_query(qid)
    raise InputError(str(ws.path), f"no label to mark: document {doc!r} for query {qid!r} is not judged "
                     "(grade it first)")


def set_mark(ws, qid: str, doc: str, note: str, reviewer: str | None, why: str, caused: dict) -> Event | None:
    """Mark (`note`) or clear ("") a pair's unsure mark: one `unsure` event; None when it is so already."""
    who, now = ws._stamp(reviewer)
    kind, rec = target(ws, qid, doc, who, marked=not note)
    if rec.get("unsure", "") == note:
        return None
    new = {k: v for k, v in rec.items() if k != "unsure"}
    if note:
        new["unsure"] = note
    event = dict(ws._event("unsure", qid, doc, label_state(rec), label_state(new), who, now, why, 0,
                           scope="reviewer" if kind == "review" else "adjudication"), **caused)
    ws._commit([[kind, new]], [event])
    return Event.of(event)
