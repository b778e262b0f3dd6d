"""A label workspace: one benchmark's queries, judgments, history and versions.

    with Workspace.open(path, reviewer="ana") as ws:
        ws.set_judgment("q-backup", "doc-a", 2, reason="states the retention period")
        ws.freeze("v1")
        qrels = ws.to_qrels()

Files, all beside the workspace file `<db>` and readable by their owner only:

    <db>                TinyDB snapshot: tables meta, queries, judgments (one per reviewer per pair),
                        versions, and adjudications once there is one
    <db>.history        TinyDB file: table history, the append-only events (read on demand)
    <db>.journal        the edits since the snapshot, one checksummed line each, fsynced per edit
    <db>.bak            the snapshot before the current one (and <db>.history.bak)
    <db>.journal.prev   the journal folded by the last fold: with the .bak files it rebuilds everything
    <db>.lock           the writer's lock, naming its holder

An edit is validated, appended to the journal and fsynced, then applied to the
in-memory index: its cost does not depend on the size of the store. Every
`fold_every` edits (and on close, past `FOLD_ON_CLOSE`) the journal is folded:
new events are appended to the history file, the snapshot is rewritten by
atomic replace, the previous files are kept as backups, and the journal starts
afresh. On open: read the snapshot, replay the journal. See docs/labels.md.

Several reviewers (docs/reviewers.md): a pair holds one judgment per
reviewer, and at most one adjudication; its *label* (what `judgments()`,
`to_qrels()` and exports give) is the adjudicated grade, else the grade all
its reviewers agree on, else the most recent judgment. `merge_files`,
`disagreements`, `adjudicate`, `agreement`, `migrate`, and `blind=True`.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import glob
import hashlib
import json
import os
import subprocess
import threading
import uuid
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store import paths
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, LOCK, sidecar
from rankgate.store.storage import (
    DamagedFile,
    Journal,
    SnapshotStorage,
    WriterLock,
    remove_stale_temps,
    atomic_write,
    crashpoint,
    dumps,
    keep_copy,
    move_aside,
    now_iso,
    parse_tables,
    read_journal,
)

FORMAT = "rankgate-labels"
FORMAT_VERSION = 2  # 2: one judgment per reviewer per (query, document), adjudications (reads 1 as is)
FOLD_EDITS = 1000  # fold the journal into the snapshot after this many edits ...
FOLD_BYTES = 8 << 20  # ... or this many journal bytes (a large import folds at once)
FOLD_ON_CLOSE = 100  # on close, fold when the journal holds at least this many edits
EMPTY_HISTORY = b'{"history":{}}'
ON_CONFLICT = ("stop", "keep", "overwrite")
EXPORT_FORMATS = ("trec", "json", "json-graded", "jsonl")
GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
LABEL_KINDS = ("set", "regrade", "reason", "import")
REVIEW_KINDS = LABEL_KINDS + ("merge", "migrate", "confirm", "adjudicate")  # events that set a judgment
REACHED = ("single", "unanimous", "latest", "adjudicated")  # how a pair's grade was reached
UNRESOLVED = ("latest",)  # reviewers disagree and nobody adjudicated: the most recent judgment counts
QUERY_FIELDS = ("text", "notes", "tags", "must_pass", "held_out", "weight", "no_answer")
QUERY_DEFAULTS = {"text": "", "notes": "", "tags": [], "must_pass": False, "held_out": False, "weight": 1.0,
                  "no_answer": False}


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Judgment:
    """A stored judgment. `removed` is the time it was removed (None while it stands).

    As `judgments()` returns them, a judgment is a query-document pair's label:
    its grade is the one exports and the gate use, `reached` says how
    ("single", "unanimous", "latest", "adjudicated": see docs/reviewers.md),
    `reviewers` who judged the pair, and `reviewer` whose grade (or
    adjudication) it is. One reviewer's own judgment (`reviews()`,
    `for_reviewer=`) has `reached` "". `needs_review`: carried by a migration
    to a new document ID and not looked at since.
    """

    query: str
    doc: str
    grade: int
    reason: str = ""
    collection_version: str = ""
    reviewer: str = ""
    created: str = ""
    updated: str = ""
    removed: str | None = None
    reached: str = ""
    reviewers: tuple[str, ...] = ()
    needs_review: bool = False
    migrated_from: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def unresolved(self) -> bool:
        """Reviewers disagree about this pair and nobody has adjudicated it."""
        return self.reached in UNRESOLVED

    def how(self) -> str:
        """How the grade was reached, for people: `adjudicated by lena`, `unanimous (priya, ana)` ..."""
        if self.reached == "adjudicated":
            return f"adjudicated by {self.reviewer}"
        if self.reached == "single":
            return f"single reviewer {self.reviewer}"
        if self.reached == "unanimous":
            return f"unanimous ({', '.join(self.reviewers)})"
        if self.reached == "latest":
            return f"not adjudicated: {', '.join(self.reviewers)} disagree; the latest is {self.reviewer}'s"
        return f"judged by {self.reviewer}"


@dataclass(frozen=True)
class Event:
    """One change, as history keeps it. `before`/`after` hold the state (None: absent)."""

    id: int
    kind: str  # set, regrade, reason, remove, import, query, freeze, purge
    query: str | None
    doc: str | None
    before: dict | None
    after: dict | None
    who: str
    when: str
    why: str = ""
    scope: str = ""  # "reviewer": one reviewer's judgment; "adjudication"; "pair" or "": the pair's label

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def reviewer(self) -> str:
        """Whose judgment changed (a reviewer's, or the adjudicator's)."""
        return (self.after or self.before or {}).get("reviewer", "")

    def describe(self) -> str:
        """One line for people: `#12 2025-06-01T12:00:00.000Z ana regrade q1 d7: 1 -> 2 "reason"`."""
        target = " ".join(x for x in (self.query, self.doc) if x)
        b, a = self.before or {}, self.after or {}
        if self.kind in REVIEW_KINDS or self.kind == "remove":
            change = f"{b.get('grade', '-')} -> {a.get('grade', '-')}" if self.before or self.after else ""
            if a.get("reason") and (self.kind != "confirm"):
                change += f" {json.dumps(a['reason'], ensure_ascii=False)}"
            if self.scope == "adjudication":
                change += " [adjudication]"
                if a.get("grades"):
                    change += " (" + ", ".join(f"{r} {g}" for r, g in a["grades"].items()) + ")"
            elif self.scope == "reviewer" and self.reviewer and self.reviewer != self.who:
                change += f" [{self.reviewer}'s judgment]"
            if a.get("needs_review"):
                change += " [needs review]"
            if a.get("migrated_from"):
                change += f" (from {', '.join(a['migrated_from'])})"
        elif self.kind == "freeze":
            change = f"version {a.get('version')} {a.get('content_hash', '')}"
        elif self.kind == "query":
            keys = sorted(k for k in a if b.get(k, QUERY_DEFAULTS.get(k)) != a.get(k)) if self.before else ["new"]
            change = ", ".join(keys)
        elif self.kind == "purge":
            change = f"erased {b.get('judgments', 0)} judgments and {b.get('events', 0)} events ({a.get('target')})"
        else:
            change = ""
        why = f" (why: {self.why})" if self.why else ""
        return f"#{self.id} {self.when} {self.who} {self.kind} {target}{': ' if target and change else ''}{change}{why}"


@dataclass(frozen=True)
class Version:
    """A frozen, named set of labels. Its labels are the events with id < history_id."""

    name: str
    created: str
    who: str
    content_hash: str
    labels: int
    queries: int
    history_id: int
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Diff:
    """What changed between two sets of labels (a version, or the current labels)."""

    old: str
    new: str
    added: list[dict] = field(default_factory=list)  # {query, doc, grade}
    removed: list[dict] = field(default_factory=list)  # {query, doc, grade}
    regraded: list[dict] = field(default_factory=list)  # {query, doc, before, after}

    def as_dict(self) -> dict:
        return {"old": self.old, "new": self.new, "added": self.added, "removed": self.removed,
                "regraded": self.regraded}

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.regraded)


@dataclass(frozen=True)
class Conflict:
    """An imported label that disagrees with the store."""

    query: str
    doc: str | None  # None: a query's description
    stored: str
    incoming: str
    source: str

    def __str__(self) -> str:
        target = f"query {self.query} document {self.doc}" if self.doc is not None else f"query {self.query}"
        return f"{target}: the store has {self.stored}; {self.source} has {self.incoming}"

    def as_dict(self) -> dict:
        return asdict(self)


class Conflicts(InputError):
    """An import or merge stopped on conflicts; nothing was written."""

    def __init__(self, db: str, conflicts: list[Conflict], with_what: str, nothing: str):
        self.conflicts = conflicts
        n = len(conflicts)
        super().__init__(db, f"{n} conflict{'s' if n != 1 else ''} with {with_what} in the store; {nothing} "
                             "(choose with --on-conflict keep|overwrite)")


class ImportConflicts(Conflicts):
    """The import stopped on conflicts; nothing was imported."""

    def __init__(self, db: str, conflicts: list[Conflict]):
        super().__init__(db, conflicts, "labels", "nothing was imported")


@dataclass
class ImportReport:
    files: list[str]
    added: int = 0  # new judgments
    changed: int = 0  # judgments overwritten (or restored after removal)
    unchanged: int = 0
    kept: int = 0  # conflicts where the stored label was kept
    queries_added: int = 0
    queries_updated: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False

    def as_dict(self) -> dict:
        d = asdict(self)
        d["conflicts"] = [c.as_dict() for c in self.conflicts]
        return d


@dataclass
class Export:
    text: str
    format: str
    version: str
    content_hash: str
    labels: int  # judgments written
    left_out: int = 0  # judgments a binary export does not list (grade < 1)
    notes: list[str] = field(default_factory=list)
    unresolved: int = 0  # pairs whose reviewers disagree and nobody adjudicated (exported: the latest judgment)
    adjudicated: int = 0
    needs_review: int = 0  # labels carried by a migration and not reviewed since


@dataclass(frozen=True)
class Disagreement:
    """A query-document pair whose reviewers gave different grades.

    `judgments`: each reviewer's own judgment (grade, reason, collection
    version, times), in the order of their last edit (the last is the latest). `label`: the pair's label now (what
    exports and the gate use; `label.reached` says how). `adjudication`: the
    adjudicator's judgment, when someone has adjudicated.
    """

    query: str
    doc: str
    judgments: tuple[Judgment, ...]
    label: Judgment
    adjudication: Judgment | None = None

    @property
    def grades(self) -> dict[str, int]:
        return {j.reviewer: j.grade for j in self.judgments}

    @property
    def resolved(self) -> bool:
        return self.adjudication is not None

    def as_dict(self) -> dict:
        return {"query": self.query, "doc": self.doc,
                "judgments": [{"reviewer": j.reviewer, "grade": j.grade, "reason": j.reason,
                               "collection_version": j.collection_version, "updated": j.updated}
                              for j in self.judgments],
                "grade": self.label.grade, "reached": self.label.reached,
                "adjudication": None if self.adjudication is None else
                {"reviewer": self.adjudication.reviewer, "grade": self.adjudication.grade,
                 "reason": self.adjudication.reason, "updated": self.adjudication.updated}}


class MergeConflicts(Conflicts):
    """The merge stopped on conflicts; nothing was merged."""

    def __init__(self, db: str, conflicts: list[Conflict]):
        super().__init__(db, conflicts, "a reviewer's judgment", "nothing was merged")


@dataclass
class MergeReport:
    files: list[str]
    added: int = 0  # reviewers' judgments new to the store
    changed: int = 0  # a reviewer's judgment overwritten (or restored after removal)
    unchanged: int = 0
    kept: int = 0  # conflicts where the store's judgment was kept
    adjudications: int = 0  # adjudications merged (new or changed)
    queries_added: int = 0
    reviewers: dict[str, int] = field(default_factory=dict)  # reviewer -> judgments read from the files
    disagreements: int = 0  # pairs whose reviewers disagree after the merge, not adjudicated
    conflicts: list[Conflict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False

    def as_dict(self) -> dict:
        d = asdict(self)
        d["conflicts"] = [c.as_dict() for c in self.conflicts]
        return d


@dataclass
class MigrationReport:
    map: str
    version: str  # the version frozen after the migration
    before: str  # the version that holds the labels before it (frozen now, or already)
    carried: list[dict] = field(default_factory=list)  # {query, doc, from: [old], reviewers: [..]}
    merged: list[dict] = field(default_factory=list)  # carried from several old IDs
    unmapped: list[dict] = field(default_factory=list)  # {query, doc, reviewers}: IDs the map does not name
    retired: int = 0  # judgments on old IDs removed (history and the `before` version keep them)
    dropped_unmapped: bool = False
    dry_run: bool = False

    @property
    def flagged(self) -> int:
        return len(self.carried)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["flagged"] = self.flagged
        return d


# --------------------------------------------------------------------------- helpers


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


def content_hash(rows: Iterable[tuple[str, str, int]]) -> str:
    """sha256 over the sorted (query, document, grade) triples; order, reasons and empty queries do not count."""
    text = "".join(f"{len(q)}:{q} {len(d)}:{d} {g}\n" for q, d, g in sorted(rows))  # lengths: no ambiguity
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def export_time() -> str:
    """Now, in whole seconds UTC; SOURCE_DATE_EPOCH fixes it for reproducible exports."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.strip().isdigit():
        t = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc)
    else:
        t = _dt.datetime.now(_dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_id(value, what: str, db: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(db, f"{what} ID must be a non-empty string")
    if value != value.strip() or any(ord(c) < 32 for c in value):
        raise InputError(db, f"{what} ID {value!r} has surrounding spaces or control characters")
    return value


def _check_grade(grade, db: str) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int):
        if isinstance(grade, str) and grade.strip().lstrip("+-").isdigit():
            grade = int(grade)
        else:
            raise InputError(db, f"grade {grade!r} is not an integer (expected a whole number such as 0, 1, 2 or -1)")
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputError(db, f"grade {grade} is out of range")
    return grade


def _label_state(j: dict | None) -> dict | None:
    """What history keeps of a judgment: grade, reason, collection version, reviewer (and flags when set)."""
    if j is None or j.get("removed") is not None:
        return None
    out = {"grade": j["grade"], "reason": j["reason"], "collection_version": j["collection_version"],
           "reviewer": j["reviewer"]}
    if j.get("needs_review"):
        out["needs_review"] = True
    if j.get("migrated_from"):
        out["migrated_from"] = list(j["migrated_from"])
    if j.get("grades"):
        out["grades"] = dict(j["grades"])
    return out


def _standing(rec: dict | None) -> bool:
    return rec is not None and rec.get("removed") is None


def _final(revs: dict[str, dict] | None, adj: dict | None) -> dict | None:
    """A pair's label from its reviewers' judgments and its adjudication (None: nothing stands).

    1. adjudicated: the adjudicator's grade;
    2. one reviewer: that grade ("single");
    3. every reviewer the same grade ("unanimous");
    4. otherwise the reviewers disagree and nobody adjudicated: the most
       recent judgment counts ("latest": the last one the store received; a
       cleared needs-review flag is not an edit), as the last edit did when a
       pair held one judgment. `disagreements()` lists these pairs; exports count them.
    The raw record is returned as is for a single reviewer (no copy: this is
    the common case, and `to_qrels` at 100k labels calls it for every pair).
    """
    live = [r for r in revs.values() if r.get("removed") is None] if revs else []
    if adj is not None and adj.get("removed") is None:
        out = dict(adj, reached="adjudicated", reviewers=tuple(r["reviewer"] for r in live),
                   needs_review=bool(adj.get("needs_review")))
        return out
    if not live:
        return None
    if len(live) == 1:
        return live[0]
    reached = "unanimous" if len({r["grade"] for r in live}) == 1 else "latest"
    chosen = live[-1]  # a pair's judgments are kept in the order of their last edit (see _apply)
    return {"query": chosen.get("query"), "doc": chosen.get("doc"), "grade": chosen["grade"],
            "reason": chosen["reason"], "collection_version": chosen["collection_version"],
            "reviewer": chosen["reviewer"], "created": min(r.get("created", "") for r in live),
            "updated": max(r.get("updated", "") for r in live), "removed": None, "reached": reached,
            "reviewers": tuple(r["reviewer"] for r in live),
            "needs_review": all(r.get("needs_review") for r in live)}


def _is_edit(old: dict | None, new: dict | None) -> bool:
    """A change of grade, reason, collection version or standing (not a cleared flag)."""
    if old is None or new is None or old.get("removed") is not None or new.get("removed") is not None:
        return True
    return (old["grade"], old["reason"], old["collection_version"]) != \
        (new["grade"], new["reason"], new["collection_version"])


def _put_review(revs: dict[str, dict], value: dict) -> None:
    """Set a reviewer's judgment of a pair. An edit goes last, so the order of a pair's judgments is the
    order of their last edits (what "the latest judgment" means); a cleared flag leaves it in place."""
    name = value.get("reviewer", "")
    old = revs.get(name)
    if old is not None and _is_edit(old, value):
        del revs[name]
    revs[name] = value


def _reached(state: dict) -> str:
    return state.get("reached", "single")


def _query_state(q: dict) -> dict:
    return {k: q[k] for k in QUERY_FIELDS}


def _query_record(qid: str, state: dict, created: str, updated: str) -> dict:
    rec = {"id": qid}
    rec.update({k: state.get(k, QUERY_DEFAULTS[k]) for k in QUERY_FIELDS})
    rec["tags"] = list(rec["tags"])
    rec["created"], rec["updated"] = created, updated
    return rec


def _query_from_record(q: dict) -> Query:
    return Query(q["id"], q["text"], q["notes"], tuple(q["tags"]), q["must_pass"], q["held_out"], float(q["weight"]),
                 q["no_answer"])


def _query_fields(query: Query) -> dict:
    return {"text": query.text, "notes": query.notes, "tags": list(query.tags), "must_pass": query.must_pass,
            "held_out": query.held_out, "weight": float(query.weight), "no_answer": query.no_answer}


def _judgment(j: dict, label: bool = False) -> Judgment:
    """A Judgment from a record; `label`: it is a pair's label (a final), not one reviewer's own."""
    reached = _reached(j) if label else ""
    reviewers = tuple(j.get("reviewers", (j["reviewer"],))) if label else ()
    return Judgment(j["query"], j["doc"], j["grade"], j["reason"], j["collection_version"], j["reviewer"],
                    j.get("created", ""), j.get("updated", ""), j.get("removed"), reached, reviewers,
                    bool(j.get("needs_review")), tuple(j.get("migrated_from") or ()))


def _describe_label(state: dict) -> str:
    out = f"grade {state['grade']}"
    if state.get("reason"):
        out += f" ({json.dumps(state['reason'], ensure_ascii=False)})"
    if state.get("collection_version"):
        out += f" [collection {state['collection_version']}]"
    return out


def _header_reviewer(qrels) -> str:
    """The reviewer an export names in its header (`# reviewer: NAME`, `"meta": {"reviewer": NAME}`), if any."""
    name = qrels.meta.get("reviewer")
    return name.strip() if isinstance(name, str) and name.strip() and not any(ord(c) < 32 for c in name) else ""


def _finals_of(labels: dict, adjudications: dict, only: str | None = None) -> dict[str, dict[str, dict]]:
    """{qid: {doc: label}} from {qid: {doc: {reviewer: judgment}}} and the adjudications
    (or reviewer `only`'s own judgments)."""
    out_all: dict[str, dict[str, dict]] = {}
    for q, per in labels.items():
        adjq = adjudications.get(q)
        out: dict[str, dict] = {}
        for d, revs in per.items():
            if only is not None:
                r = revs.get(only)
                if r is not None and r.get("removed") is None:
                    out[d] = r
                continue
            if not adjq and len(revs) == 1:
                for r in revs.values():  # the common case: one reviewer, no adjudication
                    if r.get("removed") is None:
                        out[d] = r
                continue
            f = _final(revs, adjq.get(d) if adjq else None)
            if f is not None:
                out[d] = f
        out_all[q] = out
    return out_all


def _merge_spec(spec: str) -> tuple[str, str | None]:
    """`FILE` or `NAME=FILE` (a file whose reviewer is NAME): (path, name or None)."""
    if "=" in spec and not os.path.exists(spec):
        name, path = spec.split("=", 1)
        if name and os.path.exists(path):
            if name != name.strip() or any(ord(c) < 32 for c in name):
                raise InputError(spec, f"reviewer name {name!r} has surrounding spaces or control characters")
            return path, name
    return spec, None


def _read_reviewer_file(path: str, name: str | None, report) -> tuple[list, list[str], list[str]]:
    """A reviewer's export: ([((query, doc, reviewer or None for an adjudication), state, where)], declared
    queries, notes). JSONL may hold several reviewers per pair; other formats one reviewer, named in their
    header or by NAME=FILE."""
    from rankgate.core.formats import _sniff, read_qrels

    kind = _sniff(path) if os.path.exists(path) else "missing"
    if kind == "missing":
        raise InputError(path, "no such file")
    if kind == "jsonl":
        return _read_reviewer_jsonl(path, name)
    qrels = read_qrels(path)
    header = _header_reviewer(qrels) or name
    rows = []
    cv = str(qrels.meta.get("collection_version", "") or "")
    for qid, doc, grade, detail in qrels.judgments():
        who = detail.reviewer or header
        if not who:
            raise InputError(path, "names no reviewer (no reviewer in its lines or its header): write it as "
                             "NAME=FILE, or export it with `rankgate labels export --judged-by NAME`")
        _check_id(qid, "query", path)
        _check_id(doc, "document", path)
        rows.append(((qid, doc, who), {"grade": int(grade), "reason": detail.reason,
                                       "collection_version": detail.collection_version or cv,
                                       "reviewer": who}, path))
    notes = []
    expected = qrels.meta.get("content_hash")
    if expected and content_hash((q, d, s["grade"]) for (q, d, _), s, _ in rows) != expected:
        notes.append(f"{path}: its labels do not match the content_hash in its header (edited after export?)")
    return rows, qrels.query_ids, notes


def _read_reviewer_jsonl(path: str, name: str | None) -> tuple[list, list[str], list[str]]:
    from rankgate.core.formats.textio import read_text

    text = read_text(path)
    header: dict = {}
    rows = []
    qids: dict[str, None] = {}
    seen: dict[tuple, int] = {}
    labels_only = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as e:
            raise InputError(path, f"invalid JSON ({e})", line=lineno) from None
        if not isinstance(obj, dict):
            raise InputError(path, "expected a JSON object on each line", line=lineno)
        if set(obj) == {"meta"} and isinstance(obj["meta"], dict):
            header.update(obj["meta"])
            continue
        where = f"{path}:{lineno}"
        for key in ("query", "doc"):
            if not isinstance(obj.get(key), str) or not obj[key]:
                raise InputError(path, f"field {key!r} must be a non-empty string", line=lineno)
        grade = obj.get("grade")
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise InputError(path, f"field 'grade' must be an integer, found {json.dumps(grade)[:40]}", line=lineno)
        for key in ("reason", "collection_version", "reviewer", "reached"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise InputError(path, f"field {key!r} must be a string", line=lineno)
        try:
            _check_id(obj["query"], "query", path)
            _check_id(obj["doc"], "document", path)
        except InputError as e:
            raise InputError(path, e.what, line=lineno) from None
        named = header.get("reviewer") if isinstance(header.get("reviewer"), str) else ""
        who = obj.get("reviewer") or named or name
        if not who or who != who.strip() or any(ord(c) < 32 for c in who):
            raise InputError(path, "the judgment names no reviewer (no \"reviewer\" field, none in the file's "
                             "meta line): write the file as NAME=FILE", line=lineno)
        adjudication = obj.get("reached") == "adjudicated"
        key = (obj["query"], obj["doc"], None if adjudication else who)
        if key in seen:
            raise InputError(path, f"a second judgment by {who} of {obj['doc']!r} for query {obj['query']!r} "
                             f"(first at line {seen[key]})", line=lineno)
        seen[key] = lineno
        if isinstance(obj.get("reviewers"), list) and len(obj["reviewers"]) > 1 and not adjudication:
            labels_only = True
        state = {"grade": grade, "reason": obj.get("reason") or "",
                 "collection_version": obj.get("collection_version") or
                 (header.get("collection_version") if isinstance(header.get("collection_version"), str) else "")
                 or "", "reviewer": who}
        if obj.get("needs_review") is True:
            state["needs_review"] = True
        if isinstance(obj.get("migrated_from"), list):
            state["migrated_from"] = [str(x) for x in obj["migrated_from"]]
        rows.append((key, state, where))
        qids[obj["query"]] = None
    if not rows:
        raise InputError(path, "no judgments found (expected JSONL judgments with a reviewer)")
    notes = []
    if labels_only:
        notes.append(f"{path} holds labels (one a pair), not every reviewer's judgments: for pairs several "
                     "reviewers judged, only the reviewer named on the line is merged (export with "
                     "--all-reviewers to exchange them all)")
    expected = header.get("content_hash")
    pairs = {(k[0], k[1]) for k, _, _ in rows}
    if expected and len(pairs) == len(rows) and \
            content_hash((k[0], k[1], s["grade"]) for k, s, _ in rows) != expected:
        notes.append(f"{path}: its labels do not match the content_hash in its header (edited after export?)")
    return rows, list(qids), notes


def _history_bytes(events: list[dict]) -> bytes:
    """The history file: TinyDB's layout, one table keyed by event id."""
    return dumps({"history": {str(e["id"]): e for e in events}}).encode("ascii")


def detect_kind(path: str | os.PathLike) -> str:
    """'queries' for a query file (JSONL with id/text, or qid<TAB>text); 'qrels' otherwise."""
    from rankgate.core.formats.beir import looks_like_beir
    from rankgate.core.formats.textio import _open

    with _open(str(path)) as f:
        try:
            head = f.read(65536)
        except Exception:
            return "qrels"  # let the qrels reader report the broken file
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("{"):
        try:
            obj = json.loads(first)
        except ValueError:
            return "qrels"
        if isinstance(obj, dict) and not ({"doc", "grade", "meta"} & set(obj)) and ({"id", "text", "notes"} & set(obj)):
            return "queries"
        return "qrels"
    if len(first.split("\t")) == 2 and not looks_like_beir(first):
        return "queries"
    return "qrels"


# --------------------------------------------------------------------------- the workspace


class Workspace:
    """Queries, judgments, history and versions of one benchmark, durable on disk.

    Open with `Workspace.open(path)` (a writer: takes the lock) or
    `Workspace.open(path, readonly=True)` (a reader: no lock, no writes).
    `blind=True` opens it for blind review: every read shows the reviewer's
    own judgments only (see docs/reviewers.md).
    """

    def __init__(self, path: Path, *, readonly: bool, reviewer: str | None, fold_every: int,
                 blind: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.blind = bool(blind)
        self.fold_every = max(1, int(fold_every))
        self._reviewer = reviewer
        self._resolved_reviewer: str | None = None
        self._mutex = threading.RLock()
        self._lock = WriterLock(sidecar(self.path, LOCK), self.path)
        self._journal: Journal | None = None
        self._closed = False
        self._meta: dict = {}
        self._queries: dict[str, dict] = {}
        self._labels: dict[str, dict[str, dict[str, dict]]] = {}  # query -> doc -> reviewer -> judgment
        self._adj: dict[str, dict[str, dict]] = {}  # query -> doc -> adjudication
        self._live = 0  # pairs with a label (a standing judgment or adjudication)
        self._versions: dict[str, dict] = {}
        self._seq = 0
        self._next_event = 1
        self._pending: list[dict] = []  # journal records not yet folded (their events are not in the history file)
        self._history: list[dict] | None = None
        self._history_rewrite = False
        self.benchmark_import: ImportReport | None = None  # what the first open of a benchmark imported
        self.fold_problem: str | None = None  # why the last automatic fold failed (the edits are safe)
        self._retry_at = 0  # after a failed automatic fold: the journal length at which to try again

    # ---------------------------------------------------------------- open / close

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, readonly: bool = False, reviewer: str | None = None,
             create: bool = True, fold_every: int = FOLD_EDITS, blind: bool = False) -> "Workspace":
        """Open (or create) a workspace file; default: the `default` workspace in the data folder."""
        path = Path(path) if path is not None else paths.workspace_path(create=not readonly)
        if path.is_dir():
            from rankgate.core.benchmark import is_benchmark

            hint = "; for a benchmark folder use -b/--benchmark" if is_benchmark(path) else ""
            raise InputError(str(path), f"is a folder, expected a label store file (--db names a file){hint}")
        ws = cls(path, readonly=readonly, reviewer=reviewer, fold_every=fold_every, blind=blind)
        if not readonly:
            if not path.parent.exists():
                paths.make_private_dir(path.parent)
            ws._lock.acquire()
            remove_stale_temps(path)
        try:
            ws._load(create=create and not readonly)
        except BaseException:
            ws._release()
            raise
        return ws

    @classmethod
    def open_benchmark(cls, benchmark, *, readonly: bool = False, reviewer: str | None = None,
                       path: str | os.PathLike | None = None, fold_every: int = FOLD_EDITS,
                       on_conflict: str = "stop", blind: bool = False) -> "Workspace":
        """The workspace of a benchmark folder (or its `Manifest`), found by the benchmark's name.

        The first open imports the folder's qrels (and queries file); later opens use the store.
        """
        from rankgate.core.benchmark import Manifest, load_manifest

        manifest = benchmark if isinstance(benchmark, Manifest) else load_manifest(benchmark)
        db = Path(path) if path is not None else paths.workspace_path(manifest.name, create=not readonly)
        if readonly and not db.exists():
            raise InputError(str(db), f"no workspace yet for benchmark {manifest.name!r}; open it for writing once "
                             "(e.g. `rankgate labels import -b FOLDER`) to import its labels")
        ws = cls.open(db, readonly=readonly, reviewer=reviewer, fold_every=fold_every, blind=blind)
        try:
            if not readonly and not ws._meta.get("benchmark"):
                ws.benchmark_import = ws._import_benchmark(manifest, on_conflict)
        except BaseException:
            ws.close()
            raise
        return ws

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Fold a long journal into the snapshot, release the lock. Safe to call twice."""
        with self._mutex:
            if self._closed:
                return
            try:
                if not self.readonly and self._journal is not None and self._journal.count >= FOLD_ON_CLOSE \
                        and not self._journal.broken:
                    self._fold_quietly()
            finally:
                self._closed = True
                self._release()

    def _release(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self._lock.release()

    @property
    def closed(self) -> bool:
        return self._closed

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

    def _file(self, suffix: str) -> Path:
        return sidecar(self.path, suffix)

    # ---------------------------------------------------------------- loading

    def _load(self, create: bool) -> None:
        attempts = 1 if not self.readonly else 5
        for attempt in range(attempts):
            storage = SnapshotStorage(self.path, access_mode="r" if self.readonly else "r+")
            raw = storage.read_bytes()
            if not raw:
                self._check_no_leftovers(raw)
                if not create:
                    raise InputError(str(self.path), "no label store here (import labels into it first)")
                self._create(storage)
                raw = storage.read_bytes()
            try:
                self._load_tables(parse_tables(self.path, raw))
                journal = read_journal(self._file(JOURNAL))
            except DamagedFile as e:
                raise self._damaged(e) from None
            base = self._meta["journal_seq"]
            if journal is not None and journal.base > base:
                if attempt + 1 < attempts:  # a writer folded between our two reads: read again
                    continue
                raise self._damaged(DamagedFile(str(self.path), f"the snapshot is older than the journal (snapshot "
                                                f"at edit {base}, journal from edit {journal.base})"))
            break
        if journal is None:
            if not self.readonly:
                Journal.create(self._file(JOURNAL), base, self._meta["workspace_id"])
                journal = read_journal(self._file(JOURNAL))
            else:
                return
        if journal.workspace_id != self._meta["workspace_id"]:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), "the journal belongs to another workspace"))
        if journal.damage:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), journal.damage, line=journal.damage_line))
        try:
            for record in journal.records:
                if record["seq"] <= self._seq:
                    continue
                if record["seq"] != self._seq + 1:
                    raise DamagedFile(str(self._file(JOURNAL)), f"edit {self._seq + 1} is missing from the journal")
                self._apply(record)
                self._pending.append(record)
        except (KeyError, TypeError, ValueError) as e:
            raise self._damaged(DamagedFile(str(self._file(JOURNAL)), f"a journal record is malformed ({e!r})")) \
                from None
        except DamagedFile as e:
            raise self._damaged(e) from None
        if not self.readonly:
            self._journal = Journal(self._file(JOURNAL), journal.good_size, len(journal.records))
            if journal.torn:  # a record cut short by a crash: never acknowledged, so drop it
                self._journal.truncate_to(journal.good_size)
            for tmp in self.path.parent.glob(f".{glob.escape(self.path.name)}*.tmp-*"):
                tmp.unlink(missing_ok=True)  # half-written files of a writer that was killed (we hold the lock)

    def _check_no_leftovers(self, raw: bytes | None) -> None:
        """A missing or empty snapshot is only a new workspace when nothing else says otherwise."""
        bak = self._file(BACKUP)
        journal = None
        try:
            journal = read_journal(self._file(JOURNAL))
        except DamagedFile:
            pass
        hist = self._file(HISTORY)
        hist_size = hist.stat().st_size if hist.exists() else 0
        if bak.exists() or (journal and (journal.records or journal.base)) or hist_size > len(EMPTY_HISTORY):
            what = "is empty" if raw is not None else "is missing"
            raise self._damaged(DamagedFile(str(self.path), f"the snapshot {what} but the workspace's other files "
                                            "are not"))

    def _create(self, storage: SnapshotStorage) -> None:
        wid = uuid.uuid4().hex
        now = now_iso()
        meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "workspace_id": wid, "created": now,
                "journal_seq": 0, "history_seq": 0, "history_bytes": len(EMPTY_HISTORY), "next_event": 1,
                "collection_version": "", "benchmark": None}
        atomic_write(self._file(HISTORY), EMPTY_HISTORY)
        Journal.create(self._file(JOURNAL), 0, wid)
        storage.write({"meta": {"1": meta}, "queries": {}, "judgments": {}, "versions": {}})

    def _load_tables(self, tables: dict) -> None:
        path = str(self.path)
        meta = tables.get("meta", {}).get("1")
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise DamagedFile(path, "not a rankgate label store (a TinyDB file without rankgate's meta table)")
        if not isinstance(meta.get("format_version"), int) or meta["format_version"] > FORMAT_VERSION:
            raise DamagedFile(path, f"written by a newer rankgate (store format {meta.get('format_version')!r})")
        for key in ("journal_seq", "history_seq", "history_bytes", "next_event"):
            if not isinstance(meta.get(key), int):
                raise DamagedFile(path, f"meta field {key!r} is missing or not an integer")
        queries: dict[str, dict] = {}
        for doc in tables.get("queries", {}).values():
            if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
                raise DamagedFile(path, "a query without an id")
            queries[doc["id"]] = doc
        labels: dict[str, dict[str, dict[str, dict]]] = {}
        adjudications: dict[str, dict[str, dict]] = {}
        for table, many in (("judgments", True), ("adjudications", False)):
            for doc in tables.get(table, {}).values():
                try:
                    q, d, g = doc["query"], doc["doc"], doc["grade"]
                except (KeyError, TypeError):
                    raise DamagedFile(path, f"a {table[:-1]} without query, doc or grade") from None
                if type(g) is not int or q not in queries or type(d) is not str \
                        or type(doc.get("reviewer", "")) is not str:
                    raise DamagedFile(path, f"a malformed {table[:-1]}: {json.dumps(doc)[:200]}")
                if many:
                    per = labels.get(q)
                    if per is None:
                        per = labels[q] = {}
                    revs = per.get(d)
                    if revs is None:
                        revs = per[d] = {}
                    revs[doc.get("reviewer", "")] = doc
                else:
                    adjudications.setdefault(q, {})[d] = doc
                    labels.setdefault(q, {}).setdefault(d, {})
        live = 0
        for q, per in labels.items():
            adjq = adjudications.get(q)
            for d, revs in per.items():
                if any(r.get("removed") is None for r in revs.values()) or \
                        (adjq is not None and _standing(adjq.get(d))):
                    live += 1
        versions = {}
        for doc in tables.get("versions", {}).values():
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                raise DamagedFile(path, "a version without a name")
            versions[doc["name"]] = doc
        self._meta, self._queries, self._labels, self._live, self._versions = meta, queries, labels, live, versions
        self._adj = adjudications
        self._seq = meta["journal_seq"]
        self._next_event = meta["next_event"]
        self._pending = []
        self._history = None

    def _damaged(self, e: DamagedFile) -> DamagedFile:
        """The same error, with the way back."""
        db = str(self.path)
        if Path(e.path) == self._file(JOURNAL) and e.line:
            hint = (f"the edits before line {e.line} are intact: `rankgate labels recover --db {db}` keeps them "
                    "and moves the damaged journal aside")
        elif self._file(BACKUP).exists():
            hint = (f"the last good snapshot is kept as {self._file(BACKUP)}: `rankgate labels recover --db {db}` "
                    "rebuilds the workspace from it and the journals")
        else:
            hint = ("there is no backup copy; `rankgate labels recover --db {db}` moves the damaged files aside "
                    "and keeps what can be read").format(db=db)
        return DamagedFile(e.path, f"{e.what}; {hint}", line=e.line, where=e.where)

    # ---------------------------------------------------------------- applying edits

    def _pair_standing(self, q: str, d: str) -> bool:
        revs = self._labels.get(q, {}).get(d)
        if revs and any(r.get("removed") is None for r in revs.values()):
            return True
        return _standing(self._adj.get(q, {}).get(d))

    def _apply(self, record: dict) -> None:
        for kind, value in record["ops"]:
            if kind in ("judgment", "review", "adjudication"):
                # judgment: the pair holds exactly this judgment (store format 1, and journals it wrote);
                # review: one reviewer's judgment of the pair; adjudication: the pair's adjudication
                q, d = value["query"], value["doc"]
                before = self._pair_standing(q, d)
                per = self._labels.get(q)
                if per is None:
                    per = self._labels[q] = {}
                revs = per.get(d)
                if revs is None:
                    revs = per[d] = {}
                if kind == "judgment":
                    revs.clear()
                    revs[value.get("reviewer", "")] = value
                    adjq = self._adj.get(q)
                    if adjq:
                        adjq.pop(d, None)
                elif kind == "review":
                    _put_review(revs, value)
                else:
                    self._adj.setdefault(q, {})[d] = value
                self._live += self._pair_standing(q, d) - before
            elif kind == "query":
                self._queries[value["id"]] = value
            elif kind == "version":
                self._versions[value["name"]] = value
            elif kind == "meta":
                self._meta = dict(self._meta, **value)
            elif kind == "purge":
                q, d = value["query"], value.get("doc")
                per = self._labels.get(q, {})
                docs = [d] if d is not None else list(per)
                self._live -= sum(1 for x in docs if self._pair_standing(q, x))
                adjq = self._adj.get(q, {})
                for x in docs:
                    per.pop(x, None)
                    adjq.pop(x, None)
                if d is None:
                    self._labels.pop(q, None)
                    self._adj.pop(q, None)
                    self._queries.pop(q, None)
            else:
                raise DamagedFile(str(self._file(JOURNAL)), f"unknown edit {kind!r} (written by a newer rankgate?)")
        self._seq = record["seq"]
        for e in record["events"]:
            if e["id"] >= self._next_event:
                self._next_event = e["id"] + 1

    @staticmethod
    def _apply_history(events: list[dict], record: dict) -> None:
        for kind, value in record["ops"]:
            if kind == "purge":
                q, d = value["query"], value.get("doc")
                events[:] = [e for e in events if not (e["query"] == q and (d is None or e["doc"] == d)
                                                       and e["kind"] not in ("freeze", "purge"))]
        events.extend(record["events"])

    def _check_writable(self) -> None:
        if self._closed:
            raise InputError(str(self.path), "the workspace is closed")
        if self.readonly:
            raise InputError(str(self.path), "opened read-only; open it for writing to change labels")

    def _check_open(self) -> None:
        if self._closed:
            raise InputError(str(self.path), "the workspace is closed")

    def _event(self, kind: str, query, doc, before, after, who: str, when: str, why: str, offset: int,
               scope: str = "") -> dict:
        e = {"id": self._next_event + offset, "jseq": self._seq + 1, "kind": kind, "query": query, "doc": doc,
             "before": before, "after": after, "who": who, "when": when, "why": why or ""}
        if scope:  # "reviewer" or "adjudication"; none: the pair's label (as in store format 1)
            e["scope"] = scope
        return e

    def _commit(self, ops: list, events: list[dict]) -> None:
        """Journal the edit (fsync), then apply it: once this returns, the edit survives a crash."""
        assert events, "every edit leaves an event"
        record = {"seq": self._seq + 1, "ops": ops, "events": events}
        self._journal.append(record)  # raises before anything changes in memory
        self._apply(record)
        self._pending.append(record)
        if self._history is not None:
            self._apply_history(self._history, record)
        due = self._journal.count >= self.fold_every or self._journal.size >= FOLD_BYTES
        if due and self._journal.count >= self._retry_at:
            self._fold_quietly()

    def _fold_quietly(self) -> None:
        """A fold the caller did not ask for: the edits are safe in the journal whatever happens, so a
        failure (a full disk, a damaged history file) must not fail the edit; it is kept in
        `fold_problem`, and the next fold tries again."""
        try:
            self._fold()
            self.fold_problem = None
            self._retry_at = 0
        except (InputError, OSError) as e:
            self.fold_problem = str(e)
            self._retry_at = self._journal.count + self.fold_every  # try again later, not on every edit

    # ---------------------------------------------------------------- folding

    def checkpoint(self) -> None:
        """Fold the journal into the snapshot now (the TUI may call this when idle)."""
        with self._mutex:
            self._check_writable()
            if self._journal.count or self._history_rewrite:
                self._fold()

    def _fold(self) -> None:
        seq = self._seq
        hist_path, hist_bak = self._file(HISTORY), self._file(HISTORY + BACKUP)
        hist = SnapshotStorage(hist_path)
        size = None
        if not self._history_rewrite:
            new = [(e["id"], e) for r in self._pending if r["seq"] > self._meta["history_seq"] for e in r["events"]]
            size = hist.append_docs("history", new, self._meta["history_bytes"], backup=hist_bak)
        if size is None:  # after a purge, or a history file that is not as we left it: write it whole
            events = self._load_history()
            keep_copy(hist_path, hist_bak)  # it parsed: a good copy
            size = atomic_write(hist_path, _history_bytes(events))
        crashpoint("fold-history")
        meta = dict(self._meta, journal_seq=seq, history_seq=seq, history_bytes=size, next_event=self._next_event)
        keep_copy(self.path, self._file(BACKUP))
        SnapshotStorage(self.path).write(self._tables(meta))
        crashpoint("fold-snapshot")
        self._meta = meta
        old = self._journal
        old.close()
        try:
            keep_copy(self._file(JOURNAL), self._file(JOURNAL_PREV))
            Journal.create(self._file(JOURNAL), seq, meta["workspace_id"])
        except BaseException:  # the old journal stays in place (its edits are in the snapshot): keep using it
            self._journal = Journal(self._file(JOURNAL), old.size, old.count)
            raise
        self._journal = Journal(self._file(JOURNAL), self._file(JOURNAL).stat().st_size, 0)
        crashpoint("fold-journal")
        self._pending = []
        self._history_rewrite = False

    def _tables(self, meta: dict) -> dict:
        judgments, n = {}, 0
        adjudications, m = {}, 0
        for q in self._queries:
            for revs in self._labels.get(q, {}).values():
                for j in revs.values():
                    n += 1
                    judgments[str(n)] = j
            for a in self._adj.get(q, {}).values():
                m += 1
                adjudications[str(m)] = a
        tables = {"meta": {"1": dict(meta, format_version=FORMAT_VERSION)},
                  "queries": {str(i): q for i, q in enumerate(self._queries.values(), 1)},
                  "judgments": judgments, "versions": {str(i): v for i, v in enumerate(self._versions.values(), 1)}}
        if adjudications:  # the table exists only once someone adjudicates
            tables["adjudications"] = adjudications
        return tables

    def _load_history(self) -> list[dict]:
        if self._history is None:
            path = self._file(HISTORY)
            raw = SnapshotStorage(path, access_mode="r").read_bytes()
            if raw is None:
                if self._meta["history_seq"] or self._meta["next_event"] > 1:
                    raise self._damaged(DamagedFile(str(path), "the history file is missing"))
                raw = EMPTY_HISTORY
            try:
                table = parse_tables(path, raw).get("history")
                if not isinstance(table, dict):
                    raise DamagedFile(str(path), "not a rankgate history file (no history table)")
                events = list(table.values())
                if not all(isinstance(e, dict) and isinstance(e.get("jseq"), int) for e in events):
                    raise DamagedFile(str(path), "a malformed history event")
                watermark = events[-1]["jseq"] if events else 0
                if watermark < self._meta["history_seq"]:
                    raise DamagedFile(str(path), f"the history file ends at edit {watermark}, the snapshot expects "
                                      f"{self._meta['history_seq']}")
            except DamagedFile as e:
                raise self._damaged(e) from None
            for record in self._pending:
                if record["seq"] > watermark:
                    self._apply_history(events, record)
            self._history = events
        return self._history

    # ---------------------------------------------------------------- reading

    def __len__(self) -> int:
        return self._live

    def queries(self) -> list[Query]:
        """Every query, in the order the workspace first saw them."""
        with self._mutex:
            self._check_open()
            return [_query_from_record(q) for q in self._queries.values()]

    def query(self, qid: str) -> Query | None:
        q = self._queries.get(qid)
        return _query_from_record(q) if q else None

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

    def _no_peeking(self, what: str) -> None:
        if self.blind:
            raise InputError(str(self.path), f"open for blind review by {self.reviewer}: {what} would show other "
                             "reviewers' grades; open the workspace without blind review")

    def _pair_view(self, revs: dict | None, adj: dict | None, who: str | None, blind: bool
                   ) -> tuple[dict | None, bool]:
        """(record, is it the pair's label) as `who` sees the pair."""
        if who is not None:
            own = revs.get(who) if revs else None
            if own is not None and own.get("removed") is None:
                return own, False
            if blind:
                return None, False
        return _final(revs, adj), True

    @staticmethod
    def _tombstone(revs: dict | None, adj: dict | None, who: str | None) -> dict | None:
        """The last removed judgment of a pair that has no label (for include_removed)."""
        recs = [r for n, r in (revs or {}).items() if who is None or n == who]
        if adj is not None and who is None:
            recs.append(adj)
        gone = [r for r in recs if r.get("removed") is not None]
        return max(gone, key=lambda r: r["removed"]) if gone else None

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
            qids = [qid] if qid is not None else list(self._queries)
            out = []
            for q in qids:
                adjq = self._adj.get(q, {})
                for d, revs in self._labels.get(q, {}).items():
                    rec, label = self._pair_view(revs, adjq.get(d), who, blind)
                    if rec is not None:
                        out.append(_judgment(rec, label))
                    elif include_removed:
                        tomb = self._tombstone(revs, adjq.get(d), who if blind else None)
                        if tomb is not None:
                            out.append(_judgment(tomb))
            return out

    def judgment(self, qid: str, doc: str, *, for_reviewer: str | None = None,
                 blind: bool | None = None) -> Judgment | None:
        """One pair's label (or, with `for_reviewer`/`blind`, as `judgments` says); None when it has none."""
        who, blind = self._view(for_reviewer, blind)
        rec, label = self._pair_view(self._labels.get(qid, {}).get(doc), self._adj.get(qid, {}).get(doc), who,
                                     blind)
        return _judgment(rec, label) if rec is not None else None

    def grades(self, qid: str, *, for_reviewer: str | None = None, blind: bool | None = None) -> dict[str, int]:
        who, blind = self._view(for_reviewer, blind)
        adjq = self._adj.get(qid, {})
        out = {}
        for d, revs in self._labels.get(qid, {}).items():
            if who is None and not adjq and len(revs) == 1:
                (r,) = revs.values()
                if r.get("removed") is None:
                    out[d] = r["grade"]
                continue
            rec, _ = self._pair_view(revs, adjq.get(d), who, blind)
            if rec is not None:
                out[d] = rec["grade"]
        return out

    def reviews(self, qid: str | None = None, doc: str | None = None, *,
                include_removed: bool = False) -> list[Judgment]:
        """Every reviewer's own judgments (of one query, or one pair); a pair's judgments in the order of
        their last edit (the last one is "the latest"). Not in blind review."""
        with self._mutex:
            self._check_open()
            self._no_peeking("reviews()")
            qids = [qid] if qid is not None else list(self._queries)
            out = []
            for q in qids:
                per = self._labels.get(q, {})
                for d in ([doc] if doc is not None else list(per)):
                    for r in per.get(d, {}).values():
                        if include_removed or r.get("removed") is None:
                            out.append(_judgment(r))
            return out

    def adjudication(self, qid: str, doc: str) -> Judgment | None:
        """The pair's standing adjudication, if any."""
        self._no_peeking("adjudication()")
        adj = self._adj.get(qid, {}).get(doc)
        if not _standing(adj):
            return None
        return _judgment(_final(self._labels.get(qid, {}).get(doc), adj), True)

    def reviewers(self) -> dict[str, int]:
        """Each reviewer's number of standing judgments, by name."""
        with self._mutex:
            self._check_open()
            counts: dict[str, int] = {}
            for per in self._labels.values():
                for revs in per.values():
                    for name, r in revs.items():
                        if r.get("removed") is None:
                            counts[name] = counts.get(name, 0) + 1
            return dict(sorted(counts.items()))

    def disagreements(self, qid: str | None = None, *, include_adjudicated: bool = False) -> list[Disagreement]:
        """Pairs whose reviewers gave different grades: each reviewer's grade and reason, the label now,
        and the adjudication if any. Without `include_adjudicated`, the open ones only (what an
        adjudication screen walks). Queries in workspace order, documents in judged order."""
        with self._mutex:
            self._check_open()
            self._no_peeking("disagreements()")
            out = []
            for q in ([qid] if qid is not None else list(self._queries)):
                adjq = self._adj.get(q, {})
                for d, revs in self._labels.get(q, {}).items():
                    if len(revs) < 2:
                        continue
                    live = [r for r in revs.values() if r.get("removed") is None]
                    if len({r["grade"] for r in live}) < 2:
                        continue
                    adj = adjq.get(d)
                    if not _standing(adj):
                        adj = None
                    elif not include_adjudicated:
                        continue
                    label = _judgment(_final(revs, adj), True)
                    out.append(Disagreement(q, d, tuple(_judgment(r) for r in live), label,
                                            None if adj is None else label))
            return out

    def ratings(self, qid: str | None = None) -> dict[tuple[str, str], dict[str, int]]:
        """(query, doc) -> {reviewer: grade} of the standing judgments: what agreement is computed on."""
        with self._mutex:
            self._check_open()
            self._no_peeking("ratings()")
            out = {}
            for q in ([qid] if qid is not None else list(self._queries)):
                for d, revs in self._labels.get(q, {}).items():
                    per = {n: r["grade"] for n, r in revs.items() if r.get("removed") is None}
                    if per:
                        out[(q, d)] = per
            return out

    def agreement(self, by: str | None = None):
        """Agreement between the reviewers (core.agreement): (overall, {group: Agreement}).

        `by`: None (no groups), "query", or "slice" (a query's tags; a query with
        several tags counts in each).
        """
        from rankgate.core.agreement import measure, measure_groups

        if by not in (None, "query", "slice"):
            raise InputError(str(self.path), f"agreement by {by!r}: expected query or slice")
        ratings = self.ratings()
        groups: dict[str, list] = {}
        if by == "query":
            for q in self._queries:
                groups[q] = [u for u in ratings if u[0] == q]
        elif by == "slice":
            for q, rec in self._queries.items():
                for tag in rec.get("tags") or ():
                    groups.setdefault(tag, [])
            by_q: dict[str, list] = {}
            for u in ratings:
                by_q.setdefault(u[0], []).append(u)
            for q, rec in self._queries.items():
                for tag in rec.get("tags") or ():
                    groups[tag].extend(by_q.get(q, []))
        return measure(ratings), measure_groups(ratings, groups)

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
            events = self._load_history()
            if qid is not None:
                events = [e for e in events if e["query"] == qid and (doc is None or e["doc"] == doc)]
            if self.blind:
                events = [e for e in events if self._visible(e)]
            if limit is not None:
                events = events[-limit:] if limit > 0 else []
            return [Event(e["id"], e["kind"], e["query"], e["doc"], e["before"], e["after"], e["who"], e["when"],
                          e.get("why", ""), e.get("scope", "")) for e in events]

    def versions(self) -> list[Version]:
        with self._mutex:
            self._check_open()
            return [self._version(v) for v in self._versions.values()]

    @staticmethod
    def _version(v: dict) -> Version:
        return Version(v["name"], v["created"], v["who"], v["content_hash"], v["labels"], v["queries"],
                       v["history_id"], v.get("note", ""))

    def stats(self) -> dict:
        removed = 0
        reviews = 0
        names: set[str] = set()
        unresolved = needs = 0
        for q, per in self._labels.items():
            adjq = self._adj.get(q, {})
            for d, revs in per.items():
                live = [r for r in revs.values() if r.get("removed") is None]
                reviews += len(live)
                names.update(r["reviewer"] for r in live)
                if not live and not _standing(adjq.get(d)):
                    removed += 1
                    continue
                if len(live) > 1 or adjq:
                    f = _final(revs, adjq.get(d))
                    unresolved += _reached(f) in UNRESOLVED
                    needs += bool(f.get("needs_review"))
                else:
                    needs += bool(live[0].get("needs_review"))
        adjudicated = sum(1 for per in self._adj.values() for a in per.values() if a.get("removed") is None)
        return {"path": str(self.path), "name": self.name, "queries": len(self._queries), "judgments": self._live,
                "removed": removed, "versions": len(self._versions), "last_event": self._next_event - 1,
                "journal_edits": self._journal.count if self._journal else None,
                "collection_version": self.collection_version, "benchmark": self._meta.get("benchmark"),
                "readonly": self.readonly, "reviewers": sorted(names), "reviewer_judgments": reviews,
                "disagreements": unresolved, "adjudicated": adjudicated, "needs_review": needs}

    def _unknown_query(self, qid: str) -> InputError:
        close = difflib.get_close_matches(qid, list(self._queries), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return InputError(str(self.path), f"unknown query {qid!r}{hint}; import its queries or qrels first, or "
                          "add it with --add-query")

    # ---------------------------------------------------------------- labels at a version

    def _finals(self, only: str | None = None) -> dict[str, dict[str, dict]]:
        """{qid: {doc: label}} of the current labels (or of reviewer `only`'s own judgments)."""
        return _finals_of(self._labels, self._adj, only)

    def _rebuild(self, history_id: int) -> tuple[dict[str, dict], dict[str, dict[str, list]]]:
        """Queries and pairs ({qid: {doc: [reviewer -> state or None, adjudication or None]}}) as they
        were before event `history_id`, replayed from history."""
        queries: dict[str, dict] = {}
        pairs: dict[str, dict[str, list]] = {}
        for e in self._load_history():
            if e["id"] >= history_id:
                break
            kind = e["kind"]
            if kind == "query":
                queries[e["query"]] = dict(e["after"], id=e["query"])
                continue
            if kind not in REVIEW_KINDS and kind != "remove":
                continue
            slot = pairs.setdefault(e["query"], {}).setdefault(e["doc"], [{}, None])
            after = e["after"]
            scope = e.get("scope") or ""
            state = None if after is None else dict(after, query=e["query"], doc=e["doc"], updated=e["when"])
            if scope == "reviewer":
                name = (after or e["before"] or {}).get("reviewer", "")
                prev = slot[0].get(name)
                if state is not None and prev is not None and not _is_edit(prev, state):
                    state["updated"] = prev.get("updated", e["when"])  # a flag cleared: not a new edit
                elif name in slot[0]:
                    del slot[0][name]  # as _put_review: an edit goes last
                slot[0][name] = state
            elif scope == "adjudication":
                if state is not None and kind == "confirm" and slot[1] is not None:
                    state["updated"] = slot[1].get("updated", e["when"])
                slot[1] = state
            elif state is None:  # the pair removed: every judgment and the adjudication
                slot[0] = {n: None for n in slot[0]}
                slot[1] = None
            else:  # the pair holds exactly this judgment (set/import before store format 2; import)
                slot[0] = {n: None for n in slot[0]}
                slot[0][state.get("reviewer", "")] = state
                slot[1] = None
        return queries, pairs

    def _label_set(self, version: str | None, only: str | None = None
                   ) -> tuple[dict[str, dict], dict[str, dict[str, dict]]]:
        """(queries, {qid: {doc: label}}) of the current labels, or of a version rebuilt from history.
        `only`: reviewer `only`'s own judgments instead of the labels."""
        if version is None:
            return self._queries, self._finals(only)
        v = self._versions.get(version)
        if v is None:
            names = ", ".join(self._versions) or "none yet"
            raise InputError(str(self.path), f"no version {version!r} (versions: {names})")
        queries, pairs = self._rebuild(v["history_id"])
        labels: dict[str, dict[str, dict]] = {}
        for q, per in pairs.items():
            out = {}
            for d, (revs, adj) in per.items():
                revs = {n: s for n, s in revs.items() if s is not None}
                if only is not None:
                    s = revs.get(only)
                else:
                    s = _final(revs, adj)
                if s is not None:
                    out[d] = s
            labels[q] = out
        return queries, labels

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

    # ---------------------------------------------------------------- to the core

    def to_qrels(self, catalog=None, version: str | None = None, *, for_reviewer: str | None = None):
        """The labels as core `Qrels` (columnar arrays), with reasons as details; every query declared.

        The grade of a pair is its label (adjudicated, agreed, or by the rule for
        an open disagreement: docs/reviewers.md). `for_reviewer=NAME`: NAME's own
        judgments only; a workspace open for blind review gives its reviewer's.
        """
        import numpy as np

        from rankgate.core.model import Catalog, JudgmentDetail, Qrels

        with self._mutex:
            self._check_open()
            if self.blind:
                for_reviewer, _ = self._view(for_reviewer, True)
            queries, labels = self._label_set(version, for_reviewer)
            catalog = catalog or Catalog()
            qcode, dcode = catalog.queries.code, catalog.docs.code
            qs, ds, gs = array("i"), array("i"), array("q")
            details: dict = {}
            shared: dict[tuple, JudgmentDetail] = {}  # one object per distinct (reason, version, reviewer)
            declared = []
            versions = set()
            for qid in queries:
                q = qcode(qid)
                declared.append(q)
                for doc, s in labels.get(qid, {}).items():
                    qs.append(q)
                    ds.append(dcode(doc))
                    gs.append(s["grade"])
                    key = (s["reason"], s["collection_version"], s["reviewer"])
                    if key != ("", "", ""):
                        detail = shared.get(key)
                        if detail is None:
                            detail = shared[key] = JudgmentDetail(*key)
                        details[(qid, doc)] = detail
                    versions.add(key[1])
            meta = {"workspace": str(self.path), "version": version or "unfrozen"}
            if for_reviewer is not None:
                meta["reviewer"] = for_reviewer
            if len(versions) == 1 and "" not in versions:
                meta["collection_version"] = versions.pop()
            return Qrels(str(self.path), catalog, np.frombuffer(qs, np.int32).copy(),
                         np.frombuffer(ds, np.int32).copy(), np.frombuffer(gs, np.int64).copy(), declared,
                         format="store", details=details, meta=meta)

    # ---------------------------------------------------------------- edits

    def _who(self, reviewer: str | None) -> str:
        return reviewer.strip() if reviewer and reviewer.strip() else self.reviewer

    def set_judgment(self, qid: str, doc: str, grade: int, reason: str | None = None,
                     collection_version: str | None = None, reviewer: str | None = None, *, why: str = "",
                     create_query: bool = False) -> Event | None:
        """Set the reviewer's judgment of a pair (new, regrade, or a new reason). None when nothing changed.

        A pair holds one judgment per reviewer: this sets `reviewer`'s (default:
        the workspace's reviewer) and leaves other reviewers' judgments alone;
        `judgment()` then shows the pair's label, which is this grade unless
        other reviewers disagree (docs/reviewers.md). `reason`/`collection_version`
        None keep the reviewer's stored ones (or, for their first judgment of the
        pair, empty / the workspace's collection version). Setting a judgment
        that a migration flagged as needing review clears the flag (kind
        "confirm" when the grade and reason stay). An unknown query is refused
        unless `create_query`.
        """
        with self._mutex:
            self._check_writable()
            db = str(self.path)
            _check_id(qid, "query", db)
            _check_id(doc, "document", db)
            grade = _check_grade(grade, db)
            for name, value in (("reason", reason), ("collection version", collection_version)):
                if value is not None and not isinstance(value, str):
                    raise InputError(db, f"the {name} must be text")
            who, now = self._who(reviewer), now_iso()
            ops: list = []
            events: list[dict] = []
            if qid not in self._queries:
                if not create_query:
                    raise self._unknown_query(qid)
                rec = _query_record(qid, {}, now, now)
                ops.append(["query", rec])
                events.append(self._event("query", qid, None, None, _query_state(rec), who, now, why, 0))
            old = self._labels.get(qid, {}).get(doc, {}).get(who)
            live = _label_state(old)
            if reason is None:
                reason = live["reason"] if live else ""
            if collection_version is None:
                collection_version = live["collection_version"] if live else self.collection_version
            flagged = bool(live and live.get("needs_review"))
            if live and live["grade"] == grade and live["reason"] == reason \
                    and live["collection_version"] == collection_version and not flagged:
                return None
            kind = "set" if live is None else "regrade" if live["grade"] != grade else \
                "reason" if (live["reason"], live["collection_version"]) != (reason, collection_version) else "confirm"
            new = {"query": qid, "doc": doc, "grade": grade, "reason": reason,
                   "collection_version": collection_version, "reviewer": who,
                   "created": old["created"] if live else now, "updated": now if kind != "confirm" else old["updated"],
                   "removed": None}
            ops.append(["review", new])
            events.append(self._event(kind, qid, doc, live, _label_state(new), who, now, why, len(events),
                                      scope="reviewer"))
            self._commit(ops, events)
            e = events[-1]
            return Event(e["id"], kind, qid, doc, live, e["after"], who, now, e["why"], "reviewer")

    def remove_judgment(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None,
                        of_reviewer: str | None = None) -> Event:
        """Remove a pair's label: every reviewer's judgment of it and its adjudication. History keeps them,
        and the store keeps tombstones (until a purge). `of_reviewer=NAME`: NAME's judgment only."""
        with self._mutex:
            self._check_writable()
            revs = self._labels.get(qid, {}).get(doc, {})
            adj = self._adj.get(qid, {}).get(doc)
            who, now = self._who(reviewer), now_iso()
            if self.blind:  # in blind review, only the reviewer's own judgment
                of_reviewer, _ = self._view(of_reviewer, True)
            if of_reviewer is not None:
                old = revs.get(of_reviewer)
                live = _label_state(old)
                if live is None:
                    what = "was removed already" if old is not None else "does not exist"
                    raise InputError(str(self.path), f"no judgment to remove: {of_reviewer}'s judgment of document "
                                     f"{doc!r} for query {qid!r} {what}")
                event = self._event("remove", qid, doc, live, None, who, now, why, 0, scope="reviewer")
                self._commit([["review", dict(old, updated=now, removed=now)]], [event])
                return Event(event["id"], "remove", qid, doc, live, None, who, now, event["why"], "reviewer")
            final = _final(revs, adj)
            if final is None:
                what = "was removed already" if revs or adj else "does not exist"
                raise InputError(str(self.path), f"no label to remove: document {doc!r} for query {qid!r} {what}")
            ops = [["review", dict(r, updated=now, removed=now)] for r in revs.values() if r.get("removed") is None]
            if _standing(adj):
                ops.append(["adjudication", dict(adj, updated=now, removed=now)])
            before = self._pair_state(revs, adj, final)
            event = self._event("remove", qid, doc, before, None, who, now, why, 0)
            self._commit(ops, [event])
            return Event(event["id"], "remove", qid, doc, before, None, who, now, event["why"])

    @staticmethod
    def _pair_state(revs: dict, adj: dict | None, final: dict | None = None) -> dict | None:
        """What history keeps of a pair's label: its state, and every judgment when there are several."""
        final = final if final is not None else _final(revs, adj)
        if final is None:
            return None
        state = _label_state(final)
        live = [r for r in revs.values() if r.get("removed") is None]
        if len(live) > 1 or _standing(adj):
            state["reached"] = _reached(final)
            state["judgments"] = {r["reviewer"]: _label_state(r) for r in live}
            if _standing(adj):
                state["adjudication"] = _label_state(adj)
        return state

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
            grade = _check_grade(grade, db)
            if not isinstance(reason, str) or not reason.strip():
                raise InputError(db, f"an adjudication needs a reason (why is {doc!r} graded {grade} for {qid!r}?)")
            revs = self._labels.get(qid, {}).get(doc, {})
            live = [r for r in revs.values() if r.get("removed") is None]
            if not live:
                if qid not in self._queries:
                    raise self._unknown_query(qid)
                raise InputError(db, f"nothing to adjudicate: no reviewer has judged document {doc!r} for query "
                                 f"{qid!r}")
            old = self._adj.get(qid, {}).get(doc)
            before = _label_state(old)
            who, now = self._who(reviewer), now_iso()
            grades = {r["reviewer"]: r["grade"] for r in live}
            if before and before["grade"] == grade and before["reason"] == reason and before["reviewer"] == who \
                    and not before.get("needs_review") and before.get("grades") == grades:
                return None
            cvs = {r["collection_version"] for r in live}
            new = {"query": qid, "doc": doc, "grade": grade, "reason": reason,
                   "collection_version": cvs.pop() if len(cvs) == 1 else self.collection_version,
                   "reviewer": who, "created": old["created"] if before else now, "updated": now, "removed": None,
                   "grades": grades}
            event = self._event("adjudicate", qid, doc, before, _label_state(new), who, now, why, 0,
                                scope="adjudication")
            self._commit([["adjudication", new]], [event])
            return Event(event["id"], "adjudicate", qid, doc, before, event["after"], who, now, event["why"],
                         "adjudication")

    def remove_adjudication(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None) -> Event:
        """Withdraw a pair's adjudication: the disagreement is open again (history keeps it)."""
        with self._mutex:
            self._check_writable()
            self._no_peeking("adjudication")
            old = self._adj.get(qid, {}).get(doc)
            live = _label_state(old)
            if live is None:
                raise InputError(str(self.path), f"no adjudication to withdraw for document {doc!r} of query {qid!r}")
            who, now = self._who(reviewer), now_iso()
            event = self._event("remove", qid, doc, live, None, who, now, why, 0, scope="adjudication")
            self._commit([["adjudication", dict(old, updated=now, removed=now)]], [event])
            return Event(event["id"], "remove", qid, doc, live, None, who, now, event["why"], "adjudication")

    def confirm(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None) -> list[Event]:
        """The pair's carried label still holds: clear `needs_review` from its judgments and adjudication
        (grades, reasons and times stay). One `confirm` event per judgment; [] when nothing was flagged."""
        with self._mutex:
            self._check_writable()
            revs = self._labels.get(qid, {}).get(doc, {})
            adj = self._adj.get(qid, {}).get(doc)
            if _final(revs, adj) is None or (self.blind and not _standing(revs.get(self.reviewer))):
                raise InputError(str(self.path), f"no label to confirm: document {doc!r} for query {qid!r}")
            who, now = self._who(reviewer), now_iso()
            if self.blind:  # in blind review, only the reviewer's own judgment
                revs = {n: r for n, r in revs.items() if n == self.reviewer}
                adj = None
            ops, events = [], []
            for kind, rec in [("review", r) for r in revs.values()] + [("adjudication", adj)]:
                if not _standing(rec) or not rec.get("needs_review"):
                    continue
                new = {k: v for k, v in rec.items() if k != "needs_review"}
                ops.append([kind, new])
                events.append(self._event("confirm", qid, doc, _label_state(rec), _label_state(new), who, now, why,
                                          len(events), scope="reviewer" if kind == "review" else "adjudication"))
            if not ops:
                return []
            self._commit(ops, events)
            return [Event(e["id"], "confirm", qid, doc, e["before"], e["after"], who, now, e["why"], e["scope"])
                    for e in events]

    def set_query(self, query: Query, *, why: str = "", reviewer: str | None = None) -> Event | None:
        """Add a query or change its description; None when nothing changed."""
        with self._mutex:
            self._check_writable()
            _check_id(query.id, "query", str(self.path))
            who, now = self._who(reviewer), now_iso()
            old = self._queries.get(query.id)
            state = _query_fields(query)
            if old is not None and _query_state(old) == state:
                return None
            rec = _query_record(query.id, state, old["created"] if old else now, now)
            event = self._event("query", query.id, None, _query_state(old) if old else None, state, who, now, why, 0)
            self._commit([["query", rec]], [event])
            return Event(event["id"], "query", query.id, None, event["before"], state, who, now, event["why"])

    def freeze(self, name: str, *, note: str = "", reviewer: str | None = None) -> Version:
        """Name the current labels as a version (name, time, content hash)."""
        with self._mutex:
            self._check_writable()
            self._check_version_name(name)
            who, now = self._who(reviewer), now_iso()
            digest = self.content_hash()
            rec = self._version_record(name, now, who, digest, self._live, self._next_event, note)
            event = self._event("freeze", None, None, None, {"version": name, "content_hash": digest,
                                                             "labels": self._live}, who, now, note, 0)
            self._commit([["version", rec]], [event])
            return self._version(rec)

    def _check_version_name(self, name) -> None:
        if not isinstance(name, str) or not name.strip() or name != name.strip() \
                or any(ord(c) < 32 for c in name):
            raise InputError(str(self.path), f"version name {name!r} must be non-empty text without surrounding "
                             "spaces or control characters")
        if name == "unfrozen":
            raise InputError(str(self.path), "'unfrozen' is reserved for labels that are not a version")
        if name in self._versions:
            v = self._versions[name]
            raise InputError(str(self.path), f"version {name!r} exists already (frozen {v['created']} by "
                             f"{v['who']}); versions never change: choose another name")

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
            who, now = self._who(reviewer), now_iso()
            target = "sha256:" + hashlib.sha256(dumps([qid, doc]).encode("ascii")).hexdigest()
            event = self._event("purge", None, None, {"judgments": n_labels, "events": n_events},
                                {"target": target}, who, now, why, 0)
            self._history_rewrite = True
            self._commit([["purge", {"query": qid, "doc": doc}]], [event])
            if self._history_rewrite:  # not folded by the commit already
                self._fold()
            # The backups and the previous journal still hold what was purged: replace them too.
            keep_copy(self.path, self._file(BACKUP), link=False)
            keep_copy(self._file(HISTORY), self._file(HISTORY + BACKUP), link=False)
            keep_copy(self._file(JOURNAL), self._file(JOURNAL_PREV), link=False)
            return Event(event["id"], "purge", None, None, event["before"], event["after"], who, now, event["why"])

    # ---------------------------------------------------------------- import

    def import_files(self, files: Iterable[str | os.PathLike], *, queries: Iterable[str | os.PathLike] = (),
                     on_conflict: str = "stop", collection_version: str | None = None, reviewer: str | None = None,
                     why: str | None = None, dry_run: bool = False) -> ImportReport:
        """Import qrels (every core format) and query files, all or nothing.

        A file is read as queries when it looks like one (JSONL with id/text, or
        `qid<TAB>text`), or when passed in `queries`. Any unreadable file imports
        nothing. Labels that disagree with the store (another grade, another reason
        or collection version, or a label that was removed) are conflicts:
        `on_conflict="stop"` raises `ImportConflicts` listing them, "keep" keeps the
        store's, "overwrite" takes the file's. Import adds and changes; it never removes.
        """
        from rankgate.core.formats import read_qrels
        from rankgate.core.formats.corpus import read_queries

        files, query_files = [str(f) for f in files], [str(f) for f in queries]
        qrels_list, query_list = [], []
        for f in files:
            if detect_kind(f) == "queries":
                query_list.append((f, read_queries(f)))
            else:
                qrels_list.append(read_qrels(f))
        for f in query_files:
            query_list.append((f, read_queries(f)))
        return self._import(qrels_list, query_list, files=files + query_files, on_conflict=on_conflict,
                            collection_version=collection_version, reviewer=reviewer, why=why, dry_run=dry_run)

    def _import(self, qrels_list: list, query_list: list, *, files: list[str], on_conflict: str,
                collection_version: str | None, reviewer: str | None, why: str | None, dry_run: bool,
                meta: dict | None = None, no_answer: Iterable[str] = ()) -> ImportReport:
        with self._mutex:
            self._check_writable()
            if meta is None:  # a benchmark's first open imports its labels, blind or not
                self._no_peeking("an import (its conflicts)")
            if on_conflict not in ON_CONFLICT:
                raise InputError(str(self.path), f"--on-conflict {on_conflict!r}: expected one of {', '.join(ON_CONFLICT)}")
            who, now = self._who(reviewer), now_iso()
            report = ImportReport(files=files, dry_run=dry_run)
            # 1. Everything the files say, checked against each other.
            incoming: dict[tuple[str, str], tuple[dict, str]] = {}
            declared: dict[str, tuple[dict, str, bool]] = {}  # qid -> (fields, source, explicit)
            for qrels in qrels_list:
                source = qrels.path
                file_cv = collection_version if collection_version is not None else \
                    str(qrels.meta.get("collection_version", "") or "")
                self._check_export_hash(qrels, report)
                file_reviewer = _header_reviewer(qrels) or who
                for qid in qrels.query_ids:
                    declared.setdefault(qid, (dict(QUERY_DEFAULTS), source, False))
                for qid, doc, grade, detail in qrels.judgments():
                    state = {"grade": int(grade), "reason": detail.reason,
                             "collection_version": detail.collection_version or file_cv,
                             "reviewer": detail.reviewer or file_reviewer}
                    prev = incoming.get((qid, doc))
                    if prev is not None and (prev[0]["grade"], prev[0]["reason"]) != (state["grade"], state["reason"]):
                        raise InputError(source, f"document {doc!r} of query {qid!r} is judged {_describe_label(state)}"
                                         f" here but {_describe_label(prev[0])} in {prev[1]}; nothing was imported "
                                         "(fix one of the files)")
                    incoming[(qid, doc)] = (state, source)
            for source, qmap in query_list:
                for qid, query in qmap.items():
                    fields = _query_fields(query)
                    prev = declared.get(qid)
                    if prev is not None and prev[2] and prev[0] != fields:
                        raise InputError(source, f"query {qid!r} is described differently in {prev[1]}; nothing was "
                                         "imported (fix one of the files)")
                    declared[qid] = (fields, source, True)
            for qid in no_answer:
                fields, source, explicit = declared.get(qid, (dict(QUERY_DEFAULTS), "the manifest", False))
                declared[qid] = (dict(fields, no_answer=True), source, True)
            for (qid, _doc) in incoming:
                declared.setdefault(qid, (dict(QUERY_DEFAULTS), "", False))
            # 2. Against the store.
            conflicts: list[Conflict] = []
            ops: list = []
            events: list[dict] = []

            def event(kind, q, d, before, after, source):
                events.append(self._event(kind, q, d, before, after, who, now, why or f"import {source}",
                                          len(events)))

            for qid, (fields, source, explicit) in declared.items():
                old = self._queries.get(qid)
                if old is None:
                    rec = _query_record(qid, fields, now, now)
                    ops.append(["query", rec])
                    event("query", qid, None, None, _query_state(rec), source)
                    report.queries_added += 1
                    continue
                if not explicit:
                    continue
                stored = _query_state(old)
                merged, clash = dict(stored), []
                for k in QUERY_FIELDS:
                    if fields[k] == stored[k] or fields[k] == QUERY_DEFAULTS[k]:
                        continue
                    if stored[k] == QUERY_DEFAULTS[k] or on_conflict == "overwrite":
                        merged[k] = fields[k]
                    else:
                        clash.append(k)
                if clash:
                    conflicts.append(Conflict(qid, None, ", ".join(f"{k}={json.dumps(stored[k])}" for k in clash),
                                              ", ".join(f"{k}={json.dumps(fields[k])}" for k in clash), source))
                if merged != stored:
                    ops.append(["query", _query_record(qid, merged, old["created"], now)])
                    event("query", qid, None, stored, merged, source)
                    report.queries_updated += 1
            for (qid, doc), (state, source) in incoming.items():
                revs = self._labels.get(qid, {}).get(doc, {})
                adj = self._adj.get(qid, {}).get(doc)
                final = _final(revs, adj)
                live = _label_state(final)
                if not revs and adj is None:
                    report.added += 1
                elif live is None:  # removed by a reviewer: bringing it back is a decision
                    tomb = self._tombstone(revs, adj, None) or {}
                    conflicts.append(Conflict(qid, doc, f"it removed on {tomb.get('removed')} (was "
                                              f"{_describe_label(tomb)})", _describe_label(state), source))
                    if on_conflict != "overwrite":
                        report.kept += 1
                        continue
                    report.changed += 1
                else:
                    differs = live["grade"] != state["grade"] or \
                        (state["reason"] and state["reason"] != live["reason"]) or \
                        (state["collection_version"] and state["collection_version"] != live["collection_version"])
                    if not differs:
                        report.unchanged += 1
                        continue
                    conflicts.append(Conflict(qid, doc, _describe_label(live), _describe_label(state), source))
                    if on_conflict != "overwrite":
                        report.kept += 1
                        continue
                    state = dict(state, reason=state["reason"] or live["reason"],
                                 collection_version=state["collection_version"] or live["collection_version"])
                    report.changed += 1
                # The pair holds exactly the file's judgment afterwards (as a store with one judgment per
                # pair did): other reviewers' judgments and an adjudication are retired, history keeps them.
                for r in revs.values():
                    if r.get("removed") is None and r["reviewer"] != state["reviewer"]:
                        ops.append(["review", dict(r, updated=now, removed=now)])
                if _standing(adj):
                    ops.append(["adjudication", dict(adj, updated=now, removed=now)])
                rec = {"query": qid, "doc": doc, "grade": state["grade"], "reason": state["reason"],
                       "collection_version": state["collection_version"], "reviewer": state["reviewer"],
                       "created": final.get("created") or now if final else now, "updated": now, "removed": None}
                ops.append(["review", rec])
                event("import", qid, doc, self._pair_state(revs, adj, final), _label_state(rec), source)
            report.conflicts = conflicts
            if conflicts and on_conflict == "stop":
                raise ImportConflicts(str(self.path), conflicts)
            if meta:
                ops.append(["meta", meta])
                if not events:
                    event("benchmark", None, None, None, dict(meta), ", ".join(files) or "benchmark")
            if dry_run or not events:
                return report
            self._commit(ops, events)
            return report

    def _check_export_hash(self, qrels, report: ImportReport) -> None:
        """A rankgate export carries its content hash: say so when its labels no longer match it."""
        expected = qrels.meta.get("content_hash")
        if not expected:
            return
        if content_hash((q, d, int(g)) for q, d, g, _ in qrels.judgments()) != expected:
            report.notes.append(f"{qrels.path}: its labels do not match the content_hash in its header "
                                "(edited after export?)")

    def _import_benchmark(self, manifest, on_conflict: str = "stop") -> ImportReport:
        """The first open of a benchmark's workspace: its qrels and queries, its collection version."""
        from rankgate.core.formats import read_qrels
        from rankgate.core.formats.corpus import read_queries

        qrels = read_qrels(manifest.qrels)
        query_list = [(str(manifest.queries), read_queries(manifest.queries))] if manifest.queries else []
        cv = manifest.collection_version or None
        meta = {"benchmark": {"name": manifest.name, "folder": str(Path(manifest.folder).resolve()),
                              "qrels": str(Path(manifest.qrels).resolve()),
                              "imported": now_iso()},
                "collection_version": manifest.collection_version or self.collection_version}
        return self._import([qrels], query_list, files=[str(manifest.qrels)] + [q for q, _ in query_list],
                            on_conflict=on_conflict, collection_version=cv, reviewer=None,
                            why=f"import benchmark {manifest.name}", dry_run=False, meta=meta,
                            no_answer=manifest.no_answer)

    # ---------------------------------------------------------------- merge

    def merge_files(self, files: Iterable[str | os.PathLike], *, on_conflict: str = "stop",
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
        with self._mutex:
            self._check_writable()
            self._no_peeking("a merge")
            if on_conflict not in ON_CONFLICT:
                raise InputError(str(self.path), f"--on-conflict {on_conflict!r}: expected one of "
                                 f"{', '.join(ON_CONFLICT)}")
            specs = [str(f) for f in files]
            if not specs:
                raise InputError(str(self.path), "nothing to merge: name the reviewers' exports")
            who, now = self._who(reviewer), now_iso()
            report = MergeReport(files=[], dry_run=dry_run)
            incoming: dict[tuple[str, str, str | None], tuple[dict, str]] = {}  # (q, d, reviewer|None=adj)
            declared: dict[str, str] = {}
            for spec in specs:
                path, name = _merge_spec(spec)
                report.files.append(path)
                rows, qids, notes = _read_reviewer_file(path, name, report)
                report.notes.extend(notes)
                for qid in qids:
                    declared.setdefault(qid, path)
                for (q, d, key), state, where in rows:
                    prev = incoming.get((q, d, key))
                    if prev is not None and (prev[0]["grade"], prev[0]["reason"]) != (state["grade"], state["reason"]):
                        whose = f"{key}'s judgment" if key is not None else "the adjudication"
                        raise InputError(where, f"{whose} of document {d!r} for query {q!r} is "
                                         f"{_describe_label(state)} here but {_describe_label(prev[0])} in "
                                         f"{prev[1]}; nothing was merged (fix one of the files)")
                    incoming[(q, d, key)] = (state, where)
                    if key is not None:
                        report.reviewers[key] = report.reviewers.get(key, 0) + 1
            ops: list = []
            events: list[dict] = []

            def event(kind, q, d, before, after, source, scope):
                events.append(self._event(kind, q, d, before, after, who, now, why or f"merge {source}", len(events),
                                          scope=scope))

            for qid, source in declared.items():
                if qid not in self._queries:
                    _check_id(qid, "query", source)
                    rec = _query_record(qid, {}, now, now)
                    ops.append(["query", rec])
                    event("query", qid, None, None, _query_state(rec), source, "")
                    report.queries_added += 1
            conflicts: list[Conflict] = []
            touched: set[tuple[str, str]] = set()
            for (qid, doc, key), (state, source) in incoming.items():
                src = source
                if key is None:
                    old = self._adj.get(qid, {}).get(doc)
                else:
                    old = self._labels.get(qid, {}).get(doc, {}).get(key)
                live = _label_state(old)
                whose = f"{key}'s judgment" if key is not None else "the adjudication"
                if old is None:
                    report.added += key is not None
                elif live is None:
                    conflicts.append(Conflict(qid, doc, f"{whose} removed on {old['removed']} (was "
                                              f"{_describe_label(old)})", _describe_label(state), src))
                    if on_conflict != "overwrite":
                        report.kept += 1
                        continue
                    report.changed += key is not None
                else:
                    differs = live["grade"] != state["grade"] or \
                        (state["reason"] and state["reason"] != live["reason"]) or \
                        (state["collection_version"] and state["collection_version"] != live["collection_version"])
                    if key is None:
                        differs = differs or live["reviewer"] != state["reviewer"]
                    if not differs:
                        report.unchanged += 1
                        continue
                    conflicts.append(Conflict(qid, doc, f"{whose}: {_describe_label(live)}", _describe_label(state),
                                              src))
                    if on_conflict != "overwrite":
                        report.kept += 1
                        continue
                    state = dict(state, reason=state["reason"] or live["reason"],
                                 collection_version=state["collection_version"] or live["collection_version"])
                    report.changed += key is not None
                rec = {"query": qid, "doc": doc, "grade": state["grade"], "reason": state["reason"],
                       "collection_version": state["collection_version"] or self.collection_version,
                       "reviewer": state["reviewer"], "created": old["created"] if live else now, "updated": now,
                       "removed": None}
                for flag in ("needs_review", "migrated_from"):
                    if state.get(flag):
                        rec[flag] = state[flag]
                if key is None:
                    report.adjudications += 1
                    ops.append(["adjudication", rec])
                    event("merge", qid, doc, live, _label_state(rec), src, "adjudication")
                else:
                    ops.append(["review", rec])
                    event("merge", qid, doc, live, _label_state(rec), src, "reviewer")
                touched.add((qid, doc))
            report.conflicts = conflicts
            if conflicts and on_conflict == "stop":
                raise MergeConflicts(str(self.path), conflicts)
            report.disagreements = self._open_disagreements_after(ops, touched)
            if dry_run or not events:
                return report
            self._commit(ops, events)
            return report

    def _open_disagreements_after(self, ops: list, touched: set[tuple[str, str]]) -> int:
        """How many pairs would have an open disagreement once `ops` (reviews, adjudications) apply."""
        count = 0
        for q, per in self._labels.items():
            adjq = self._adj.get(q, {})
            for d, revs in per.items():
                if (q, d) in touched or len(revs) < 2 or _standing(adjq.get(d)):
                    continue
                if len({r["grade"] for r in revs.values() if r.get("removed") is None}) > 1:
                    count += 1
        after: dict[tuple[str, str], list] = {}
        for q, d in touched:
            after[(q, d)] = [dict(self._labels.get(q, {}).get(d, {})), self._adj.get(q, {}).get(d)]
        for kind, rec in ops:
            slot = after.get((rec.get("query"), rec.get("doc")))
            if slot is None:
                continue
            if kind == "review":
                slot[0][rec["reviewer"]] = rec
            elif kind == "adjudication":
                slot[1] = rec
        for revs, adj in after.values():
            if not _standing(adj) and len({r["grade"] for r in revs.values() if r.get("removed") is None}) > 1:
                count += 1
        return count

    # ---------------------------------------------------------------- migration

    def migrate(self, idmap, *, version: str | None = None, before: str | None = None, drop_unmapped: bool = False,
                collection_version: str | None = None, reviewer: str | None = None, why: str = "",
                dry_run: bool = False) -> MigrationReport:
        """Carry judgments to new document IDs after rechunking, as a new version. All or nothing.

        `idmap`: a map file (OLD_ID<TAB>NEW_ID lines, core.migrate) or an `IdMap`.
        Every judgment (each reviewer's, and adjudications) of a mapped document
        is carried to each of its new IDs and marked `needs_review`; the judgment
        on the old ID is removed (history and the `before` version keep it).
        Judgments whose document is not in the map are reported in `unmapped`,
        and left as they are (or removed with `drop_unmapped`). The labels before
        are frozen as `before` (default `<version>-before`; no new freeze when
        the latest version already holds them), the labels after as `version`
        (default `migrated-<UTC time>`): one journal record does it all.
        `collection_version`: the new corpus's version, for labels set from now on.
        """
        from rankgate.core.migrate import IdMap, plan, read_map

        with self._mutex:
            self._check_writable()
            self._no_peeking("a migration")
            m = idmap if isinstance(idmap, IdMap) else read_map(idmap)
            who, now = self._who(reviewer), now_iso()
            version = version or "migrated-" + now[:19].replace("-", "").replace(":", "")
            self._check_version_name(version)
            digest = self.content_hash()
            latest = list(self._versions.values())[-1] if self._versions else None
            if before is None and latest is not None and latest["content_hash"] == digest:
                before_name, freeze_before = latest["name"], False
            else:
                before_name, freeze_before = before or f"{version}-before", True
                if before_name == version:
                    raise InputError(str(self.path), f"the versions before and after the migration need two names "
                                     f"(both are {version!r})")
                self._check_version_name(before_name)
            rows = []
            for q in self._queries:
                adjq = self._adj.get(q, {})
                for d, revs in self._labels.get(q, {}).items():
                    for name, r in revs.items():
                        if r.get("removed") is None:
                            rows.append((q, d, name, r))
                    if _standing(adjq.get(d)):
                        rows.append((q, d, None, adjq[d]))
            p = plan(rows, m, drop_unmapped=drop_unmapped)
            if not p:
                raise InputError(m.path, "none of its old IDs is a judged document; nothing was migrated (is it "
                                 "the map for this workspace?)")
            report = MigrationReport(m.path, version, before_name, dropped_unmapped=drop_unmapped, dry_run=dry_run)
            reason_of = why or f"migrate {Path(m.path).name}"
            ops: list = []
            events: list[dict] = []

            def event(kind, q, d, b, a, scope, note):
                events.append(self._event(kind, q, d, b, a, who, now, f"{reason_of}: {note}", len(events),
                                          scope=scope))

            if freeze_before:
                ops.append(["version", self._version_record(before_name, now, who, digest, self._live,
                                                            self._next_event, f"before {reason_of}")])
                events.append(self._event("freeze", None, None, None, {"version": before_name, "content_hash": digest,
                                          "labels": self._live}, who, now, f"before {reason_of}", 0))
            for q, old, key in p.retired:
                rec = self._labels[q][old][key] if key is not None else self._adj[q][old]
                targets = m.targets.get(old)
                note = f"{old} -> {', '.join(targets)}" if targets else f"{old} is not in the map (dropped)"
                ops.append(["review" if key is not None else "adjudication", dict(rec, updated=now, removed=now)])
                event("remove", q, old, _label_state(rec), None, "reviewer" if key is not None else "adjudication",
                      note)
            # Within a pair, the judgments land in the order they were made, so "the latest" stays the latest.
            for c in sorted(p.carried, key=lambda c: c.state.get("updated", "")):
                existing = (self._labels.get(c.query, {}).get(c.doc, {}).get(c.key) if c.key is not None
                            else self._adj.get(c.query, {}).get(c.doc))
                s = c.state
                rec = {"query": c.query, "doc": c.doc, "grade": s["grade"], "reason": s["reason"],
                       "collection_version": s["collection_version"], "reviewer": s["reviewer"],
                       "created": s.get("created") or now, "updated": now, "removed": None, "needs_review": True,
                       "migrated_from": list(c.sources)}
                if c.key is None and s.get("grades"):
                    rec["grades"] = dict(s["grades"])
                ops.append(["review" if c.key is not None else "adjudication", rec])
                event("migrate", c.query, c.doc, _label_state(existing), _label_state(rec),
                      "reviewer" if c.key is not None else "adjudication",
                      f"{', '.join(c.sources)} -> {c.doc}")
            by_pair: dict[tuple[str, str], dict] = {}
            for c in p.carried:
                item = by_pair.setdefault((c.query, c.doc), {"query": c.query, "doc": c.doc, "from": [],
                                                             "reviewers": []})
                for src in c.sources:
                    if src not in item["from"]:
                        item["from"].append(src)
                item["reviewers"].append(c.key if c.key is not None else f"adjudication ({c.state['reviewer']})")
            report.carried = list(by_pair.values())
            report.merged = [item for item in report.carried if len(item["from"]) > 1]
            unmapped: dict[tuple[str, str], dict] = {}
            for q, d, key in p.unmapped:
                item = unmapped.setdefault((q, d), {"query": q, "doc": d, "reviewers": []})
                item["reviewers"].append(key if key is not None else "adjudication")
            report.unmapped = list(unmapped.values())
            report.retired = len(p.retired)
            if collection_version is not None:
                ops.append(["meta", {"collection_version": collection_version}])
            # The version after: its hash and counts are those of the labels once the ops apply.
            labels, adj = self._simulate(ops)
            finals = _finals_of(labels, adj)
            after_hash = content_hash((q, d, s["grade"]) for q, per in finals.items() for d, s in per.items())
            count = sum(len(per) for per in finals.values())
            note = f"after {reason_of}"
            ops.append(["version", self._version_record(version, now, who, after_hash, count,
                                                        self._next_event + len(events), note)])
            events.append(self._event("freeze", None, None, None, {"version": version, "content_hash": after_hash,
                                      "labels": count}, who, now, note, len(events)))
            if not dry_run:
                self._commit(ops, events)
            return report

    def _simulate(self, ops: list) -> tuple[dict, dict]:
        """The judgments and adjudications as they would be once `ops` (reviews, adjudications) apply."""
        labels = {q: {d: dict(revs) for d, revs in per.items()} for q, per in self._labels.items()}
        adj = {q: dict(per) for q, per in self._adj.items()}
        for kind, rec in ops:
            if kind == "review":
                _put_review(labels.setdefault(rec["query"], {}).setdefault(rec["doc"], {}), rec)
            elif kind == "adjudication":
                adj.setdefault(rec["query"], {})[rec["doc"]] = rec
                labels.setdefault(rec["query"], {}).setdefault(rec["doc"], {})
        return labels, adj

    # ---------------------------------------------------------------- versions

    def diff(self, old: str, new: str | None = None) -> Diff:
        """The changelog from version `old` to version `new` (None: the current labels)."""
        with self._mutex:
            self._check_open()
            _, a = self._label_set(old)
            _, b = self._label_set(new)
            out = Diff(old, new or "current")
            for q in sorted(set(a) | set(b)):
                pa, pb = a.get(q, {}), b.get(q, {})
                for d in sorted(set(pa) | set(pb)):
                    sa, sb = pa.get(d), pb.get(d)
                    if sa is None:
                        out.added.append({"query": q, "doc": d, "grade": sb["grade"]})
                    elif sb is None:
                        out.removed.append({"query": q, "doc": d, "grade": sa["grade"]})
                    elif sa["grade"] != sb["grade"]:
                        out.regraded.append({"query": q, "doc": d, "before": sa["grade"], "after": sb["grade"]})
            return out

    # ---------------------------------------------------------------- export

    def export(self, fmt: str = "trec", path: str | os.PathLike | None = None, *, plain: bool = False,
               version: str | None = None, require_adjudication: bool = False, judged_by: str | None = None,
               all_reviewers: bool = False) -> Export:
        """Qrels that `read_qrels` reads back, with version, content hash and export time alongside.

        Formats: `trec` (`# key: value` header lines), `json` (binary: each query's
        documents with grade >= 1), `json-graded`, `jsonl` (one judgment a line, with
        reason, collection version and reviewer, and how the grade was reached
        when not by a single reviewer). `plain` leaves the header out.
        The header's content_hash is the hash of the labels the file holds (for
        binary json: the listed documents at grade 1), so a second round trip
        reproduces it; `version` names the frozen version the labels are, if any;
        `reviewer` is there when one reviewer judged every exported label (what
        `labels merge` reads from TREC and JSON); `unresolved`, `adjudicated` and
        `needs_review` count the labels reached those ways (when there are any).
        Written atomically to `path` when given; the text is returned either way.
        Queries in workspace order, documents in the order they were first judged;
        removed labels are not exported.

        The grade of a pair is its label (docs/reviewers.md). `require_adjudication`:
        refuse when reviewers disagree about a pair nobody adjudicated.
        `judged_by=NAME`: NAME's own judgments only (a reviewer's export, to
        exchange; a workspace open for blind review exports its reviewer's).
        `all_reviewers` (jsonl only): every reviewer's judgment and every
        adjudication, one a line: for `labels merge` into another workspace,
        not for the gate (a pair appears once per reviewer).
        """
        with self._mutex:
            self._check_open()
            if fmt not in EXPORT_FORMATS:
                raise InputError(str(path or self.path), f"unknown export format {fmt!r}, expected one of "
                                 f"{', '.join(EXPORT_FORMATS)}")
            if self.blind and judged_by is None:
                judged_by = self.reviewer
            if all_reviewers:
                self._no_peeking("an export of every reviewer's judgments")
                if fmt != "jsonl" or judged_by is not None or version is not None:
                    raise InputError(str(path or self.path), "every reviewer's judgments export as jsonl only, of "
                                     "the current labels, and not with --judged-by")
            else:
                self._view(judged_by, True)  # in blind review, only the reviewer's own
            queries, labels = self._label_set(version, judged_by)
            rows = [(q, d, s) for q in queries for d, s in labels.get(q, {}).items()]
            unresolved = [(q, d, s) for q, d, s in rows if _reached(s) in UNRESOLVED]
            if require_adjudication and unresolved and judged_by is None:
                q, d, s = unresolved[0]
                n = len(unresolved)
                raise InputError(str(path or self.path), f"{n} disagreement{'s' if n != 1 else ''} not adjudicated "
                                 f"(first: query {q!r} document {d!r}, reviewers {', '.join(s['reviewers'])}); "
                                 "nothing was exported (rankgate labels adjudicate, or export without "
                                 "--require-adjudication)")
            digest = full = content_hash((q, d, s["grade"]) for q, d, s in rows)
            name = self._version_name(version, digest)
            if fmt == "json":  # the hash describes what the file holds: listed documents, grade 1
                labels = {q: {d: dict(s, grade=1) for d, s in per.items() if s["grade"] >= 1}
                          for q, per in labels.items()}
                digest = content_hash((q, d, 1) for q, per in labels.items() for d in per)
            notes = []
            if version is not None and judged_by is None and full != self._versions[version]["content_hash"]:
                notes.append(f"version {version!r}: its labels rebuilt from history no longer match its recorded "
                             "content hash (purged since?)")
            header: dict = {"version": name, "content_hash": digest, "exported_at": export_time()}
            cvs = {s["collection_version"] for _, _, s in rows}
            if len(cvs) == 1 and "" not in cvs:
                header["collection_version"] = cvs.pop()
            elif len(cvs) > 1 and fmt != "jsonl":
                notes.append("the labels have several collection versions; only jsonl keeps them per label")
            adjudicated = sum(1 for _, _, s in rows if _reached(s) == "adjudicated")
            needs = sum(1 for _, _, s in rows if s.get("needs_review"))
            if judged_by is not None:
                header["reviewer"] = judged_by
            else:
                names = {r for _, _, s in rows for r in s.get("reviewers", (s["reviewer"],))}
                if len(names) == 1 and not adjudicated and not all_reviewers:
                    header["reviewer"] = names.pop()
            for key, n in (("unresolved", len(unresolved)), ("adjudicated", adjudicated), ("needs_review", needs)):
                if n:
                    header[key] = n
            if unresolved and judged_by is None:
                notes.append(f"{len(unresolved)} disagreement{'s' if len(unresolved) != 1 else ''} not adjudicated: "
                             "exported with the most recent judgment's grade; `rankgate labels disagreements` lists "
                             "them, --require-adjudication refuses")
            if needs:
                notes.append(f"{needs} label{'s' if needs != 1 else ''} carried by a migration still need review "
                             "(`rankgate labels list` marks them)")
            left_out = 0
            if fmt == "trec":
                from rankgate.core.formats.trec import format_trec_qrels

                bad = next(((q, d) for q, d, _ in rows if len(q.split()) != 1 or len(d.split()) != 1
                            or q.startswith("#")), None)
                if bad:
                    raise InputError(str(path or self.path), f"query {bad[0]!r} / document {bad[1]!r}: TREC qrels "
                                     "cannot hold IDs with spaces, nor a query ID that starts with '#' (a comment "
                                     "line); export json-graded or jsonl")
                text = format_trec_qrels(((q, d, s["grade"]) for q, d, s in rows), None if plain else header)
            elif fmt in ("json", "json-graded"):
                body: dict = {}
                for q in queries:
                    per = labels.get(q, {})
                    if fmt == "json":
                        body[q] = list(per)
                    else:
                        body[q] = {d: s["grade"] for d, s in per.items()}
                if fmt == "json":
                    left_out = len(rows) - sum(len(per) for per in labels.values())
                obj = body if plain else {"meta": header, "qrels": body}
                text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
                if left_out:
                    notes.append(f"binary json lists documents with grade >= 1 only: {left_out} judgments with a "
                                 "lower grade are left out (json-graded keeps them)")
                above = sum(1 for _, _, s in rows if s["grade"] > 1)
                if fmt == "json" and above:
                    notes.append(f"binary json: {above} judgments graded above 1 are listed as relevant (1)")
            else:
                lines = [] if plain else [json.dumps({"meta": header}, ensure_ascii=False)]
                if all_reviewers:
                    states = self._every_judgment()
                else:
                    states = [(q, d, s, judged_by is None) for q, d, s in rows]
                for q, d, s, label in states:
                    obj = {"query": q, "doc": d, "grade": s["grade"]}
                    for k in ("reason", "collection_version", "reviewer"):
                        if s[k]:
                            obj[k] = s[k]
                    reached = _reached(s) if label else ""
                    if reached and reached != "single":
                        obj["reached"] = reached
                    if label and len(s.get("reviewers", ())) > 1:
                        obj["reviewers"] = list(s["reviewers"])
                    if s.get("needs_review"):
                        obj["needs_review"] = True
                    if s.get("migrated_from"):
                        obj["migrated_from"] = list(s["migrated_from"])
                    lines.append(json.dumps(obj, ensure_ascii=False))
                text = "".join(line + "\n" for line in lines)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(str(path or self.path), "an ID or reason is not valid Unicode text (a lone "
                                 "surrogate); cannot write it as UTF-8") from None
            if path is not None:
                atomic_write(path, data)
            return Export(text, fmt, name, digest, len(rows) - left_out, left_out, notes, len(unresolved),
                          adjudicated, needs)

    def _every_judgment(self) -> list[tuple[str, str, dict, bool]]:
        """(query, doc, state, is_label) of every standing reviewer judgment, then the pair's adjudication
        (as a label reached "adjudicated")."""
        out = []
        for q in self._queries:
            adjq = self._adj.get(q, {})
            for d, revs in self._labels.get(q, {}).items():
                for r in revs.values():
                    if r.get("removed") is None:
                        out.append((q, d, r, False))
                adj = adjq.get(d)
                if _standing(adj):
                    out.append((q, d, dict(adj, reached="adjudicated"), True))
        return out

    # ---------------------------------------------------------------- recovery

    @classmethod
    def recover(cls, path: str | os.PathLike) -> dict:
        """Rebuild a damaged workspace from what can be read; never deletes a file.

        Uses the snapshot (or, when it is damaged, `<db>.bak`), the history (or
        `<db>.history.bak`), then replays `<db>.journal.prev` and `<db>.journal` up to
        the first damaged or missing edit. Damaged files are renamed aside
        (`<file>.damaged-<time>`). Returns what it did.
        """
        path = Path(path)
        if not path.exists() and not sidecar(path, BACKUP).exists():
            raise InputError(str(path), "no label store here, and no backup of one: nothing to recover")
        ws = cls(path, readonly=False, reviewer=None, fold_every=FOLD_EDITS)
        ws._lock.acquire()
        try:
            return ws._recover()
        finally:
            ws._release()

    def _recover(self) -> dict:
        report: dict = {"path": str(self.path), "snapshot": "", "history": "", "replayed": 0, "lost": None,
                        "moved_aside": []}
        aside = []

        def load_tables(p: Path) -> dict | None:
            raw = SnapshotStorage(p, "r").read_bytes()
            if not raw:
                return None
            try:
                tables = parse_tables(p, raw)
                self._load_tables(tables)
                return tables
            except DamagedFile:
                return None

        if load_tables(self.path) is not None:
            report["snapshot"] = "intact"
        elif load_tables(self._file(BACKUP)) is not None:
            report["snapshot"] = f"restored from {self._file(BACKUP).name}"
            aside.append(self.path)
        else:
            raise InputError(str(self.path), "neither the snapshot nor its backup (.bak) can be read; nothing to "
                             "recover from")
        # history: the file or its backup; its watermark is the journal edit of its last event
        events = None
        for p, label in ((self._file(HISTORY), "intact"), (self._file(HISTORY + BACKUP), "restored from backup")):
            raw = SnapshotStorage(p, "r").read_bytes()
            try:
                table = parse_tables(p, raw).get("history") if raw else None
            except DamagedFile:
                table = None
            if isinstance(table, dict) and all(isinstance(e, dict) and "jseq" in e for e in table.values()):
                events, report["history"] = list(table.values()), label
                break
            if p == self._file(HISTORY) and p.exists():
                aside.append(p)
        if events is None:
            events, report["history"] = [], "lost (neither the history nor its backup can be read)"
        hist_mark = events[-1]["jseq"] if events else 0
        # journals: every intact record, by edit number
        records: dict[int, dict] = {}
        damaged_journal = False
        for p in (self._file(JOURNAL_PREV), self._file(JOURNAL)):
            try:
                jc = read_journal(p)
            except DamagedFile:
                aside.append(p)
                continue
            if jc is None:
                continue
            if jc.workspace_id != self._meta["workspace_id"]:
                aside.append(p)  # another workspace's journal: not ours to replay, nor to delete
                continue
            for r in jc.records:
                records.setdefault(r["seq"], r)
            if jc.damage and p == self._file(JOURNAL):
                aside.append(p)
                damaged_journal = True
        snap_mark = self._seq
        seq = snap_mark  # labels: the snapshot, then every edit after it that the journals hold
        while seq + 1 in records:
            self._apply(records[seq + 1])
            seq += 1
        hseq = hist_mark  # history: the same, from its own mark
        while hseq + 1 in records:
            self._apply_history(events, records[hseq + 1])
            hseq += 1
        report["replayed"] = seq - snap_mark
        if any(s > seq for s in records) or hseq < seq or damaged_journal:
            report["lost"] = (f"the labels are recovered up to edit {seq} and the history up to edit {hseq}; "
                              "later edits could not be read")
        self._seq = max(seq, hseq)
        self._next_event = max([self._next_event] + [e["id"] + 1 for e in events])
        for p in aside:
            moved = move_aside(p, "damaged")
            if moved:
                report["moved_aside"].append(str(moved))
        size = atomic_write(self._file(HISTORY), _history_bytes(events))
        meta = dict(self._meta, journal_seq=self._seq, history_seq=self._seq, history_bytes=size,
                    next_event=self._next_event)
        SnapshotStorage(self.path).write(self._tables(meta))
        # The rebuilt files are now the last good copies; the old journals are folded into them.
        keep_copy(self.path, self._file(BACKUP), link=False)
        keep_copy(self._file(HISTORY), self._file(HISTORY + BACKUP), link=False)
        if self._file(JOURNAL).exists() and self._file(JOURNAL) not in aside:
            keep_copy(self._file(JOURNAL), self._file(JOURNAL_PREV))
        Journal.create(self._file(JOURNAL), self._seq, self._meta["workspace_id"])
        report["judgments"] = self._live
        report["events"] = len(events)
        return report

