"""The snapshot's judgments, one TinyDB document per query holding its judgments as columns.

Store format 3 writes `{"judgments": {"1": {"query": "q1", "n": 2, "doc": [...], "grade": [...],
"reviewer": {"all": "ana"}, ...}, ...}}`: one JSON array per field instead of one object per judgment (a
field with one value for every row is written once), so that a snapshot of 100k judgments parses
in a few C calls. `LazyLabels` keeps each query's columns as parsed and builds that query's judgment
records the first time something reads them; a fold writes untouched queries' columns back as they were.
Opening a store, and an edit of one query, therefore cost no Python loop over every judgment.

Store format 4 uses the same documents for an import: the labels of a query the store has no judgment of
are journaled as one columns document (`new_columns`, op "columns"), and their history events as one
document per query (`bulk_event`) that `expand_events` reads back as one event per judgment. In the
journal, such an event names its op instead of repeating the columns (`journal_form`, `resolve`).
"""

from __future__ import annotations

import threading

from rankgate.store.storage import DamagedFile

# a judgment record's fields, in the order records have always had; `query` is the document's own
FIELDS = ("doc", "grade", "reason", "collection_version", "reviewer", "created", "updated", "removed")
SAME = "all"  # a column whose rows all hold one value: {"all": value}
MORE = "more"  # per row: null, or the record's other fields (unsure, needs_review ...)
_CORE = frozenset(("query",) + FIELDS)


def to_columns(q: str, per: dict[str, dict[str, dict]]) -> dict:
    """One query's judgments ({doc: {reviewer: record}}) as a columns document."""
    rows = [r for revs in per.values() for r in revs.values()]
    doc: dict = {"query": q, "n": len(rows)}
    for f in FIELDS:
        col = [r.get(f, "") if f != "removed" else r.get("removed") for r in rows]
        first = col[0] if col else None
        # a column of one value (one reviewer, one import time ...) is written once: {"all": value}
        doc[f] = {SAME: first} if col and f != "doc" and col.count(first) == len(col) and \
            all(type(v) is type(first) for v in col) else col
    more = [{k: v for k, v in r.items() if k not in _CORE} or None for r in rows]
    if any(m is not None for m in more):
        doc[MORE] = more
    return doc


def _column(doc: dict, f: str) -> list:
    col = doc[f]
    return [col[SAME]] * doc["n"] if isinstance(col, dict) else col


def _records(path: str, doc: dict) -> dict[str, dict[str, dict]]:
    q = doc["query"]
    cols = [_column(doc, f) for f in FIELDS]
    more = doc.get(MORE)
    per: dict[str, dict[str, dict]] = {}
    for i, (d, g, reason, cv, who, created, updated, removed) in enumerate(zip(*cols)):
        if type(g) is not int or type(d) is not str or type(who) is not str:
            raise DamagedFile(path, f"a malformed judgment of query {q!r} (row {i + 1})")
        rec = {"query": q, "doc": d, "grade": g, "reason": reason, "collection_version": cv, "reviewer": who,
               "created": created, "updated": updated, "removed": removed}
        if more is not None and more[i]:
            rec.update(more[i])
        revs = per.get(d)
        if revs is None:
            revs = per[d] = {}
        revs[who] = rec
    return per


def check_columns(path: str, doc) -> str:
    """The query of a well-formed columns document (same-length arrays), else DamagedFile."""
    if not isinstance(doc, dict) or not isinstance(doc.get("query"), str) or type(doc.get("n")) is not int:
        raise DamagedFile(path, "a judgments document without a query or a count")
    n = doc["n"]
    get = doc.get
    for f in _CHECKED:  # (a loop, not all() over a generator: 10,000 queries' documents on every open)
        c = get(f)
        t = type(c)  # (list and dict as JSON gives them, first; then their subclasses)
        if not (len(c) == n if t is list else SAME in c if t is dict else
                len(c) == n if isinstance(c, list) else isinstance(c, dict) and SAME in c):
            if f == MORE and c is None and MORE not in doc:
                continue
            raise DamagedFile(path, f"the judgments of query {doc['query']!r} are not columns of equal length")
    return doc["query"]


_CHECKED = FIELDS + (MORE,)  # (MORE: when there is one)


class LazyLabels(dict):
    """query -> doc -> reviewer -> judgment, like a dict; a query's records are built from its columns
    on first read. Unbuilt queries hold None (keeping the snapshot's order); `raw` keeps their columns."""

    def __init__(self, path: str, raw: dict[str, dict], built: dict | None = None) -> None:
        super().__init__(built if built is not None else dict.fromkeys(raw))
        self.path = path
        self.raw = raw  # query -> columns document, for the queries not built yet
        self._lock = threading.Lock()  # the app reads from worker threads: one builds, the others wait

    def _build(self, q: str) -> dict:
        with self._lock:
            per = dict.get(self, q)
            if per is not None:
                return per
            doc = self.raw.get(q)
            per = _records(self.path, doc) if doc is not None else {}
            dict.__setitem__(self, q, per)
            self.raw.pop(q, None)
            return per

    def build_all(self) -> None:
        for q in list(self.raw):
            self._build(q)

    def get(self, q, default=None):
        v = dict.get(self, q, default)
        return self._build(q) if v is None and dict.__contains__(self, q) else v

    def __getitem__(self, q):
        v = dict.__getitem__(self, q)
        return self._build(q) if v is None else v

    def setdefault(self, q, default=None):
        if q in self:
            return self[q]
        dict.__setitem__(self, q, default)
        return default

    def pop(self, q, *default):
        if dict.__contains__(self, q):
            self.get(q)  # built first: what is popped is the query's judgments
        return dict.pop(self, q, *default)

    def __setitem__(self, q, value) -> None:
        self.raw.pop(q, None)
        dict.__setitem__(self, q, value)

    def items(self):
        self.build_all()
        return dict.items(self)

    def values(self):
        self.build_all()
        return dict.values(self)

    def copy(self) -> dict:
        self.build_all()
        return dict(dict.items(self))

    def columns_of(self, q: str) -> dict | None:
        """The columns document of a query that was never built (to write back as it was), else None."""
        return self.raw.get(q)


# --------------------------------------------------------------------------- an import's judgments as columns


def packed(col: list):
    """A column as stored: {"all": value} when every row holds one value (of one type), else the list."""
    if col:
        first = col[0]
        if col.count(first) == len(col) and len(set(map(type, col))) == 1:  # (one type: no generator a row)
            return {SAME: first}
    return col


def new_columns(q: str, docs: list[str], grades: list[int], reasons: list[str], versions: list[str],
                reviewers: list[str], now: str) -> dict:
    """The columns document of a query's new judgments (each standing, created and updated `now`): what an
    import journals and the snapshot keeps, with no record per judgment."""
    return {"query": q, "n": len(docs), "doc": docs, "grade": packed(grades), "reason": packed(reasons),
            "collection_version": packed(versions), "reviewer": packed(reviewers), "created": {SAME: now},
            "updated": {SAME: now}, "removed": {SAME: None}}


def all_new(doc: dict) -> bool:
    """A columns document whose judgments all stand, one per document (what an import of a new query gives)."""
    removed = doc.get("removed")
    return isinstance(removed, dict) and removed.get(SAME, 0) is None and MORE not in doc and \
        len(set(doc["doc"])) == doc["n"]


# --------------------------------------------------------------------------- history: many events in one document

BULK = "bulk"  # a history document holding `bulk` events of one kind, one query, one edit: columns per field
_AFTER = ("grade", "reason", "collection_version", "reviewer")


def bulk_event(first_id: int, jseq: int, kind: str, cols: dict, who: str, when: str, why) -> dict:
    """The events of a query's new judgments (`cols`, from `new_columns`) as one document: ids `first_id`
    onwards, each `before` None and `after` the judgment's grade, reason, collection version, reviewer."""
    return {"id": first_id, "jseq": jseq, "kind": kind, "query": cols["query"], BULK: cols["n"], "doc": cols["doc"],
            "before": None, "after": {f: cols[f] for f in _AFTER}, "who": who, "when": when, "why": why}


def last_id(e: dict) -> int:
    """The last event id a history document holds."""
    n = e.get(BULK)
    return e["id"] + n - 1 if type(n) is int and n > 0 else e["id"]


def expand_events(path: str, docs) -> list[dict]:
    """History documents as events, one each (a bulk document gives its events in order); DamagedFile when
    one is malformed."""
    out: list[dict] = []
    for e in docs:
        if not isinstance(e, dict) or not isinstance(e.get("jseq"), int) or not isinstance(e.get("id"), int):
            raise DamagedFile(path, "a malformed history event")
        n = e.get(BULK)
        if n is None:
            out.append(e)
            continue
        after, docs_col = e.get("after"), e.get("doc")
        ok = type(n) is int and n >= 0 and isinstance(after, dict) and isinstance(docs_col, list) and \
            len(docs_col) == n
        cols = [docs_col] + [_expand(after.get(f), n) for f in _AFTER] if ok else []
        why = _expand(e.get("why"), n) if ok else None
        if not ok or any(c is None for c in cols) or why is None:
            raise DamagedFile(path, f"a malformed history document (events from #{e.get('id')})")
        first, jseq, kind, q, who, when = e["id"], e["jseq"], e["kind"], e["query"], e["who"], e["when"]
        out.extend({"id": first + i, "jseq": jseq, "kind": kind, "query": q, "doc": d, "before": None,
                    "after": {"grade": g, "reason": r, "collection_version": cv, "reviewer": rv},
                    "who": who, "when": when, "why": w}
                   for i, (d, g, r, cv, rv, w) in enumerate(zip(*cols, why)))
    return out


def _expand(col, n: int) -> list | None:
    if isinstance(col, dict) and SAME in col:
        return [col[SAME]] * n
    if isinstance(col, list) and len(col) == n:
        return col
    if isinstance(col, str):  # one text for every event (a why)
        return [col] * n
    return None


OF_OP = "columns_op"  # in a journal record: a bulk event whose documents and states are that op's columns


def journal_form(record: dict) -> dict:
    """The record as journaled: a bulk event names the columns op it comes from instead of repeating its
    columns (half the bytes of an import); `resolve` puts them back when the record is read."""
    if not any(BULK in e for e in record["events"]):
        return record
    op_of = {id(value["doc"]): i for i, (kind, value) in enumerate(record["ops"]) if kind == "columns"}
    events = []
    for e in record["events"]:
        i = op_of.get(id(e.get("doc"))) if BULK in e else None
        events.append(e if i is None else {**{k: v for k, v in e.items() if k not in ("doc", "after")}, OF_OP: i})
    return dict(record, events=events)


def resolve(record: dict) -> dict:
    """A journal record with its bulk events whole again (see `journal_form`); in place, and idempotent."""
    events = record["events"]
    for n, e in enumerate(events):
        i = e.get(OF_OP) if isinstance(e, dict) else None
        if i is not None:
            cols = record["ops"][i][1]
            events[n] = {**{k: v for k, v in e.items() if k != OF_OP}, "doc": cols["doc"],
                         "after": {f: cols[f] for f in _AFTER}}
    return record
