"""The store's plain records and constants: judgments, events, versions, diffs, conflicts and reports.

Also the checks every stored ID and grade passes, and a query's stored form.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, field

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.core.errors import InputError
from rankgate.core.model import Query, grade_problem

ON_CONFLICT = ("stop", "keep", "overwrite")
EXPORT_FORMATS = ("trec", "json", "json-graded", "jsonl")
LABEL_KINDS = ("set", "regrade", "reason", "import")
REVIEW_KINDS = LABEL_KINDS + ("merge", "migrate", "confirm", "adjudicate", "unsure")  # events that set a judgment
CAUSES = ("", "undo", "redo")  # why an edit was made: by hand, or undoing / redoing an earlier one
FILE_SOURCE = "file:"  # an imported judgment whose file names no reviewer is credited to "file:NAME"
REACHED = ("single", "unanimous", "latest", "adjudicated")  # how a pair's grade was reached
UNRESOLVED = ("latest",)  # reviewers disagree and nobody adjudicated: the most recent judgment counts
QUERY_FIELDS = ("text", "notes", "tags", "must_pass", "held_out", "weight", "no_answer")
QUERY_DEFAULTS = {"text": "", "notes": "", "tags": [], "must_pass": False, "held_out": False, "weight": 1.0,
                  "no_answer": False}


@dataclass(frozen=True)
class Judgment:
    """A stored judgment. `removed` is the time it was removed (None while it stands).

    As `judgments()` returns them, a judgment is a query-document pair's label:
    its grade is the one exports and the gate use, `reached` says how
    ("single", "unanimous", "latest", "adjudicated": see docs/reviewers.md),
    `reviewers` who judged the pair, and `reviewer` whose grade (or
    adjudication) it is. One reviewer's own judgment (`reviews()`,
    `for_reviewer=`) has `reached` "". `needs_review`: carried by a migration
    to a new document ID and not looked at since. `unsure`: "" or the note of
    the reviewer who marked it unsure (needs discussion; `Workspace.mark_unsure`).
    `text_hash`: the normalised text of the document it was judged on (core/staleness.py), "" when unknown.
    A judgment imported from a file that names no reviewer has reviewer
    "file:NAME" (the file is its source; `credit()` says it for people).
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
    unsure: str = ""
    text_hash: str = ""  # the document text it was judged on (core/staleness.py); "" when not known

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def source(self) -> str:
        """The file an imported judgment came from when that file named no reviewer; "" otherwise."""
        return self.reviewer[len(FILE_SOURCE):] if self.reviewer.startswith(FILE_SOURCE) else ""

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


def credit(reviewer: str) -> str:
    """Whose judgment it is, for people: `priya`, or `file qrels.trec` for a file that names no reviewer."""
    return f"file {reviewer[len(FILE_SOURCE):]}" if reviewer.startswith(FILE_SOURCE) else reviewer


@dataclass(frozen=True)
class Event:
    """One change, as history keeps it. `before`/`after` hold the state (None: absent).

    `who` made the change (for an import: who imported the file); whose judgment
    it is is `reviewer` (the after- or before-state's). `cause`: "" (an edit),
    "undo" or "redo" (undoing or redoing an earlier edit, `undoes` its event id
    when known).
    """

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
    cause: str = ""  # "", "undo", "redo"
    undoes: int | None = None  # the event an undo undoes (a redo: the undo it reverses)
    amends: int | None = None  # folded in: the last event this row's edit wrote (a reason after its grade)

    @classmethod
    def of(cls, e: dict) -> "Event":
        """The Event of a history record."""
        return cls(e["id"], e["kind"], e["query"], e["doc"], e["before"], e["after"], e["who"], e["when"],
                   e.get("why", ""), e.get("scope", ""), e.get("cause", ""), e.get("undoes"), e.get("amends"))

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
        if self.kind == "unsure":
            change = f"unsure {_quoted(a['unsure'])}" if a.get("unsure") else \
                f"unsure mark cleared (was {_quoted(b.get('unsure', ''))})"
            if self.reviewer and self.reviewer != self.who:
                change += f" [{credit(self.reviewer)}'s judgment]" if self.scope == "reviewer" else " [adjudication]"
        elif self.kind in REVIEW_KINDS or self.kind == "remove":
            change = f"{b.get('grade', '-')} -> {a.get('grade', '-')}" if self.before or self.after else ""
            if a.get("reason") and (self.kind != "confirm"):
                change += f" {json.dumps(a['reason'], ensure_ascii=False)}"
            if self.scope == "adjudication":
                change += " [adjudication]"
                if a.get("grades"):
                    change += " (" + ", ".join(f"{r} {g}" for r, g in a["grades"].items()) + ")"
            elif self.kind == "import" and self.reviewer:
                change += f" (imported by {self.who}, judged by {credit(self.reviewer)})"
            elif self.scope == "reviewer" and self.reviewer and self.reviewer != self.who:
                change += f" [{credit(self.reviewer)}'s judgment]"
            if a.get("needs_review"):
                change += " [needs review]"
            if a.get("migrated_from"):
                change += f" (from {', '.join(a['migrated_from'])})"
        elif self.kind == "freeze":
            change = f"version {a.get('version')} {a.get('content_hash', '')}"
        elif self.kind == "query":
            if self.before:
                keys = sorted(k for k in a if b.get(k, QUERY_DEFAULTS.get(k)) != a.get(k))
                change = ", ".join(f"{k}: {_quoted(b.get(k, ''))} -> {_quoted(a[k])}" if k in ("text", "notes")
                                   else k for k in keys)
            else:
                change = "new"
        elif self.kind == "purge":
            change = f"erased {b.get('judgments', 0)} judgments and {b.get('events', 0)} events ({a.get('target')})"
        else:
            change = ""
        why = f" (why: {self.why})" if self.why else ""
        if self.cause:
            why += f" ({self.cause} of event #{self.undoes})" if self.undoes is not None else f" ({self.cause})"
        return f"#{self.id} {self.when} {self.who} {self.kind} {target}{': ' if target and change else ''}{change}{why}"


def _quoted(text: str, width: int = 80) -> str:
    """Text in a history line: JSON-quoted, cut to `width` characters."""
    text = text if len(text) <= width else text[:width - 1] + "…"
    return json.dumps(text, ensure_ascii=False)


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

    @classmethod
    def of(cls, v: dict) -> "Version":
        """The Version of a stored version record."""
        return cls(v["name"], v["created"], v["who"], v["content_hash"], v["labels"], v["queries"], v["history_id"],
                   v.get("note", ""))

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
        return _with_conflicts(self)


def _with_conflicts(report) -> dict:
    """An import's or a merge's report as a dict, its conflicts too."""
    d = asdict(report)
    d["conflicts"] = [c.as_dict() for c in report.conflicts]
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
    unchanged: bool = False  # the file already held this export (its exported_at aside): left as it was


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
        return _with_conflicts(self)


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



# --------------------------------------------------------------------------- checks and stored forms


def typing_slip(value: str) -> bool:
    """A typed ID with surrounding spaces or a control character: a typing or paste slip."""
    return value != value.strip() or any(ord(c) < 32 for c in value)


def check_id(value, what: str, db: str, typed: bool = True) -> str:
    """A new ID: a non-empty string; a typed one (`typed`) without a typing slip. An ID read from a file
    is taken as the file's reader took it."""
    if not isinstance(value, str) or not value:
        raise InputError(db, f"{what} ID must be a non-empty string")
    if typed and typing_slip(value):
        raise InputError(db, f"{what} ID {value!r} has surrounding spaces or control characters")
    return value


def check_grade(grade, db: str) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int):
        if isinstance(grade, str) and re.fullmatch(r"[+-]?[0-9]{1,20}", grade.strip()):  # ASCII digits only
            grade = int(grade)
        else:
            raise InputError(db, f"grade {grade!r} is not an integer (expected a whole number such as 0, 1, 2 or -1)")
    if (why := grade_problem(grade)) is not None:
        raise InputError(db, why)
    return grade


def check_cause(cause: str, undoes, next_event: int, db: str) -> dict:
    """An edit's cause ("", "undo", "redo") and the event it undoes, checked: the fields its event gets."""
    if cause not in CAUSES:
        raise InputError(db, f"cause {cause!r}: expected one of undo, redo (or none)")
    if undoes is not None:
        if not cause:
            raise InputError(db, "undoes=N needs cause='undo' or 'redo'")
        if isinstance(undoes, bool) or not isinstance(undoes, int) or not 1 <= undoes < next_event:
            raise InputError(db, f"undoes={undoes!r}: no such event in the history")
    return {k: v for k, v in (("cause", cause), ("undoes", undoes)) if v}


def fold_amended(events: list[dict]) -> list[dict]:
    """History as people read it: an event that amends an earlier one of the same pair and reviewer (a reason
    typed right after its grade) is folded into it, one row per edit: the first one's kind, before and time, the
    amending one's after and id (`amends` names it). The journal keeps both."""
    out: list[dict] = []
    at: dict[int, int] = {}  # event id -> its position in out
    for e in events:
        i = at.get(e.get("amends"))
        if i is not None and (out[i]["query"], out[i]["doc"], out[i]["who"]) == (e["query"], e["doc"], e["who"]):
            first = out[i]
            out[i] = dict(first, after=e["after"], id=e["id"], amends=first["id"])
            at[e["id"]] = i
            continue
        at[e["id"]] = len(out)
        out.append(e)
    return out


def check_on_conflict(value: str, db: str) -> None:
    if value not in ON_CONFLICT:
        raise InputError(db, f"--on-conflict {value!r}: expected one of {', '.join(ON_CONFLICT)}")


def check_version_name(name, versions: dict[str, dict], db: str) -> None:
    if not isinstance(name, str) or not name.strip() or name != name.strip() \
            or any(ord(c) < 32 for c in name):
        raise InputError(db, f"version name {name!r} must be non-empty text without surrounding "
                         "spaces or control characters")
    if name == "unfrozen":
        raise InputError(db, "'unfrozen' is reserved for labels that are not a version")
    if name in versions:
        v = versions[name]
        raise InputError(db, f"version {name!r} exists already (frozen {v['created']} by "
                         f"{v['who']}); versions never change: choose another name")


def query_state(q: dict) -> dict:
    """What history keeps of a query: its fields."""
    return {k: q[k] for k in QUERY_FIELDS}


def query_record(qid: str, state: dict, created: str, updated: str) -> dict:
    rec = {"id": qid}
    rec.update({k: state.get(k, QUERY_DEFAULTS[k]) for k in QUERY_FIELDS})
    rec["tags"] = list(rec["tags"])
    rec["created"], rec["updated"] = created, updated
    return rec


def query_from_record(q: dict) -> Query:
    return Query(q["id"], q["text"], q["notes"], tuple(q["tags"]), q["must_pass"], q["held_out"], float(q["weight"]),
                 q["no_answer"])


def query_fields(query: Query) -> dict:
    return {"text": query.text, "notes": query.notes, "tags": list(query.tags), "must_pass": query.must_pass,
            "held_out": query.held_out, "weight": float(query.weight), "no_answer": query.no_answer}
