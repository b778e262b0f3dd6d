"""A label workspace: one benchmark's queries, judgments, history and versions.

    with Workspace.open(path, reviewer="ana") as ws:
        ws.set_judgment("q-backup", "doc-a", 2, reason="states the retention period")
        ws.freeze("v1")
        qrels = ws.to_qrels()

Files, all beside the workspace file `<db>` and readable by their owner only:

    <db>                TinyDB snapshot: tables meta, queries, judgments, versions
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
FORMAT_VERSION = 1
FOLD_EDITS = 1000  # fold the journal into the snapshot after this many edits ...
FOLD_BYTES = 8 << 20  # ... or this many journal bytes (a large import folds at once)
FOLD_ON_CLOSE = 100  # on close, fold when the journal holds at least this many edits
EMPTY_HISTORY = b'{"history":{}}'
ON_CONFLICT = ("stop", "keep", "overwrite")
EXPORT_FORMATS = ("trec", "json", "json-graded", "jsonl")
GRADE_MIN, GRADE_MAX = -(2**63), 2**63 - 1
LABEL_KINDS = ("set", "regrade", "reason", "import")
QUERY_FIELDS = ("text", "notes", "tags", "must_pass", "held_out", "weight", "no_answer")
QUERY_DEFAULTS = {"text": "", "notes": "", "tags": [], "must_pass": False, "held_out": False, "weight": 1.0,
                  "no_answer": False}


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Judgment:
    """A stored judgment. `removed` is the time it was removed (None while it stands)."""

    query: str
    doc: str
    grade: int
    reason: str = ""
    collection_version: str = ""
    reviewer: str = ""
    created: str = ""
    updated: str = ""
    removed: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


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

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """One line for people: `#12 2025-06-01T12:00:00.000Z ana regrade q1 d7: 1 -> 2 "reason"`."""
        target = " ".join(x for x in (self.query, self.doc) if x)
        b, a = self.before or {}, self.after or {}
        if self.kind in LABEL_KINDS or self.kind == "remove":
            change = f"{b.get('grade', '-')} -> {a.get('grade', '-')}" if self.before or self.after else ""
            if a.get("reason"):
                change += f" {json.dumps(a['reason'], ensure_ascii=False)}"
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


class ImportConflicts(InputError):
    """The import stopped on conflicts; nothing was imported."""

    def __init__(self, db: str, conflicts: list[Conflict]):
        self.conflicts = conflicts
        n = len(conflicts)
        super().__init__(db, f"{n} conflict{'s' if n != 1 else ''} with labels in the store; nothing was imported "
                             "(choose with --on-conflict keep|overwrite)")


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
    if j is None or j.get("removed") is not None:
        return None
    return {"grade": j["grade"], "reason": j["reason"], "collection_version": j["collection_version"],
            "reviewer": j["reviewer"]}


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


def _judgment(j: dict) -> Judgment:
    return Judgment(j["query"], j["doc"], j["grade"], j["reason"], j["collection_version"], j["reviewer"],
                    j["created"], j["updated"], j.get("removed"))


def _describe_label(state: dict) -> str:
    out = f"grade {state['grade']}"
    if state.get("reason"):
        out += f" ({json.dumps(state['reason'], ensure_ascii=False)})"
    if state.get("collection_version"):
        out += f" [collection {state['collection_version']}]"
    return out


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
    """

    def __init__(self, path: Path, *, readonly: bool, reviewer: str | None, fold_every: int) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self.fold_every = max(1, int(fold_every))
        self._reviewer = reviewer
        self._resolved_reviewer: str | None = None
        self._mutex = threading.RLock()
        self._lock = WriterLock(sidecar(self.path, LOCK), self.path)
        self._journal: Journal | None = None
        self._closed = False
        self._meta: dict = {}
        self._queries: dict[str, dict] = {}
        self._labels: dict[str, dict[str, dict]] = {}
        self._live = 0
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
             create: bool = True, fold_every: int = FOLD_EDITS) -> "Workspace":
        """Open (or create) a workspace file; default: the `default` workspace in the data folder."""
        path = Path(path) if path is not None else paths.workspace_path(create=not readonly)
        if path.is_dir():
            from rankgate.core.benchmark import is_benchmark

            hint = "; for a benchmark folder use -b/--benchmark" if is_benchmark(path) else ""
            raise InputError(str(path), f"is a folder, expected a label store file (--db names a file){hint}")
        ws = cls(path, readonly=readonly, reviewer=reviewer, fold_every=fold_every)
        if not readonly:
            if not path.parent.exists():
                paths.make_private_dir(path.parent)
            ws._lock.acquire()
        try:
            ws._load(create=create and not readonly)
        except BaseException:
            ws._release()
            raise
        return ws

    @classmethod
    def open_benchmark(cls, benchmark, *, readonly: bool = False, reviewer: str | None = None,
                       path: str | os.PathLike | None = None, fold_every: int = FOLD_EDITS,
                       on_conflict: str = "stop") -> "Workspace":
        """The workspace of a benchmark folder (or its `Manifest`), found by the benchmark's name.

        The first open imports the folder's qrels (and queries file); later opens use the store.
        """
        from rankgate.core.benchmark import Manifest, load_manifest

        manifest = benchmark if isinstance(benchmark, Manifest) else load_manifest(benchmark)
        db = Path(path) if path is not None else paths.workspace_path(manifest.name, create=not readonly)
        if readonly and not db.exists():
            raise InputError(str(db), f"no workspace yet for benchmark {manifest.name!r}; open it for writing once "
                             "(e.g. `rankgate labels import -b FOLDER`) to import its labels")
        ws = cls.open(db, readonly=readonly, reviewer=reviewer, fold_every=fold_every)
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
        labels: dict[str, dict[str, dict]] = {}
        live = 0
        for doc in tables.get("judgments", {}).values():
            try:
                q, d, g = doc["query"], doc["doc"], doc["grade"]
            except (KeyError, TypeError):
                raise DamagedFile(path, "a judgment without query, doc or grade") from None
            if type(g) is not int or q not in queries or type(d) is not str:
                raise DamagedFile(path, f"a malformed judgment: {json.dumps(doc)[:200]}")
            per = labels.get(q)
            if per is None:
                per = labels[q] = {}
            per[d] = doc
            if doc.get("removed") is None:
                live += 1
        versions = {}
        for doc in tables.get("versions", {}).values():
            if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                raise DamagedFile(path, "a version without a name")
            versions[doc["name"]] = doc
        self._meta, self._queries, self._labels, self._live, self._versions = meta, queries, labels, live, versions
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

    def _apply(self, record: dict) -> None:
        for kind, value in record["ops"]:
            if kind == "judgment":
                q, d = value["query"], value["doc"]
                per = self._labels.get(q)
                if per is None:
                    per = self._labels[q] = {}
                old = per.get(d)
                self._live += (value.get("removed") is None) - (old is not None and old.get("removed") is None)
                per[d] = value
            elif kind == "query":
                self._queries[value["id"]] = value
            elif kind == "version":
                self._versions[value["name"]] = value
            elif kind == "meta":
                self._meta = dict(self._meta, **value)
            elif kind == "purge":
                q, d = value["query"], value.get("doc")
                per = self._labels.get(q, {})
                gone = [per.pop(d)] if d is not None and d in per else list(per.values()) if d is None else []
                self._live -= sum(1 for j in gone if j.get("removed") is None)
                if d is None:
                    self._labels.pop(q, None)
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

    def _event(self, kind: str, query, doc, before, after, who: str, when: str, why: str, offset: int) -> dict:
        return {"id": self._next_event + offset, "jseq": self._seq + 1, "kind": kind, "query": query, "doc": doc,
                "before": before, "after": after, "who": who, "when": when, "why": why or ""}

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
        for q in self._queries:
            for j in self._labels.get(q, {}).values():
                n += 1
                judgments[str(n)] = j
        return {"meta": {"1": meta}, "queries": {str(i): q for i, q in enumerate(self._queries.values(), 1)},
                "judgments": judgments, "versions": {str(i): v for i, v in enumerate(self._versions.values(), 1)}}

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

    def judgments(self, qid: str | None = None, *, include_removed: bool = False) -> list[Judgment]:
        """Standing judgments (of one query, or all), queries in workspace order, documents in judged order."""
        with self._mutex:
            self._check_open()
            qids = [qid] if qid is not None else list(self._queries)
            out = []
            for q in qids:
                for j in self._labels.get(q, {}).values():
                    if include_removed or j.get("removed") is None:
                        out.append(_judgment(j))
            return out

    def judgment(self, qid: str, doc: str) -> Judgment | None:
        j = self._labels.get(qid, {}).get(doc)
        return _judgment(j) if j is not None and j.get("removed") is None else None

    def grades(self, qid: str) -> dict[str, int]:
        return {d: j["grade"] for d, j in self._labels.get(qid, {}).items() if j.get("removed") is None}

    def history(self, qid: str | None = None, doc: str | None = None, *, limit: int | None = None) -> list[Event]:
        """Events, oldest first: all, one query's, or one judgment's. `limit` keeps the newest."""
        with self._mutex:
            self._check_open()
            events = self._load_history()
            if qid is not None:
                events = [e for e in events if e["query"] == qid and (doc is None or e["doc"] == doc)]
            if limit is not None:
                events = events[-limit:] if limit > 0 else []
            return [Event(e["id"], e["kind"], e["query"], e["doc"], e["before"], e["after"], e["who"], e["when"],
                          e.get("why", "")) for e in events]

    def versions(self) -> list[Version]:
        with self._mutex:
            self._check_open()
            return [self._version(v) for v in self._versions.values()]

    @staticmethod
    def _version(v: dict) -> Version:
        return Version(v["name"], v["created"], v["who"], v["content_hash"], v["labels"], v["queries"],
                       v["history_id"], v.get("note", ""))

    def stats(self) -> dict:
        removed = sum(1 for per in self._labels.values() for j in per.values() if j.get("removed") is not None)
        return {"path": str(self.path), "name": self.name, "queries": len(self._queries), "judgments": self._live,
                "removed": removed, "versions": len(self._versions), "last_event": self._next_event - 1,
                "journal_edits": self._journal.count if self._journal else None,
                "collection_version": self.collection_version, "benchmark": self._meta.get("benchmark"),
                "readonly": self.readonly}

    def _unknown_query(self, qid: str) -> InputError:
        close = difflib.get_close_matches(qid, list(self._queries), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        return InputError(str(self.path), f"unknown query {qid!r}{hint}; import its queries or qrels first, or "
                          "add it with --add-query")

    # ---------------------------------------------------------------- labels at a version

    def _label_set(self, version: str | None) -> tuple[dict[str, dict], dict[str, dict[str, dict]]]:
        """(queries, {qid: {doc: state}}) of the current labels, or of a version rebuilt from history."""
        if version is None:
            labels = {q: {d: j for d, j in per.items() if j.get("removed") is None}
                      for q, per in self._labels.items()}
            return self._queries, labels
        v = self._versions.get(version)
        if v is None:
            names = ", ".join(self._versions) or "none yet"
            raise InputError(str(self.path), f"no version {version!r} (versions: {names})")
        queries: dict[str, dict] = {}
        labels: dict[str, dict[str, dict | None]] = {}
        for e in self._load_history():
            if e["id"] >= v["history_id"]:
                break
            kind = e["kind"]
            if kind == "query":
                queries[e["query"]] = dict(e["after"], id=e["query"])
            elif kind in LABEL_KINDS:
                labels.setdefault(e["query"], {})[e["doc"]] = e["after"]
            elif kind == "remove":
                labels.setdefault(e["query"], {})[e["doc"]] = None
        return queries, {q: {d: s for d, s in per.items() if s is not None} for q, per in labels.items()}

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

    def to_qrels(self, catalog=None, version: str | None = None):
        """The labels as core `Qrels` (columnar arrays), with reasons as details; every query declared."""
        import numpy as np

        from rankgate.core.model import Catalog, JudgmentDetail, Qrels

        with self._mutex:
            self._check_open()
            queries, labels = self._label_set(version)
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
        """Set a grade (new label, regrade, or a new reason). None when nothing changed.

        `reason`/`collection_version` None keep the stored ones (or, for a new label,
        empty / the workspace's collection version). An unknown query is refused
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
            old = self._labels.get(qid, {}).get(doc)
            live = _label_state(old)
            if reason is None:
                reason = live["reason"] if live else ""
            if collection_version is None:
                collection_version = live["collection_version"] if live else self.collection_version
            if live and live["grade"] == grade and live["reason"] == reason \
                    and live["collection_version"] == collection_version:
                return None
            kind = "set" if live is None else "regrade" if live["grade"] != grade else "reason"
            new = {"query": qid, "doc": doc, "grade": grade, "reason": reason,
                   "collection_version": collection_version, "reviewer": who,
                   "created": old["created"] if live else now, "updated": now, "removed": None}
            ops.append(["judgment", new])
            events.append(self._event(kind, qid, doc, live, _label_state(new), who, now, why, len(events)))
            self._commit(ops, events)
            e = events[-1]
            return Event(e["id"], kind, qid, doc, live, e["after"], who, now, e["why"])

    def remove_judgment(self, qid: str, doc: str, *, why: str = "", reviewer: str | None = None) -> Event:
        """Remove a label. History keeps it, and the store keeps a tombstone (until a purge)."""
        with self._mutex:
            self._check_writable()
            old = self._labels.get(qid, {}).get(doc)
            live = _label_state(old)
            if live is None:
                what = "was removed already" if old is not None else "does not exist"
                raise InputError(str(self.path), f"no label to remove: document {doc!r} for query {qid!r} {what}")
            who, now = self._who(reviewer), now_iso()
            new = dict(old, updated=now, removed=now)
            event = self._event("remove", qid, doc, live, None, who, now, why, 0)
            self._commit([["judgment", new]], [event])
            return Event(event["id"], "remove", qid, doc, live, None, who, now, event["why"])

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
            who, now = self._who(reviewer), now_iso()
            digest = self.content_hash()
            rec = {"name": name, "created": now, "who": who, "content_hash": digest, "labels": self._live,
                   "queries": len(self._queries), "history_id": self._next_event, "note": note or ""}
            event = self._event("freeze", None, None, None, {"version": name, "content_hash": digest,
                                                             "labels": self._live}, who, now, note, 0)
            self._commit([["version", rec]], [event])
            return self._version(rec)

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
                for qid in qrels.query_ids:
                    declared.setdefault(qid, (dict(QUERY_DEFAULTS), source, False))
                for qid, doc, grade, detail in qrels.judgments():
                    state = {"grade": int(grade), "reason": detail.reason,
                             "collection_version": detail.collection_version or file_cv,
                             "reviewer": detail.reviewer or who}
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
                old = self._labels.get(qid, {}).get(doc)
                live = _label_state(old)
                if old is None:
                    report.added += 1
                elif live is None:  # removed by a reviewer: bringing it back is a decision
                    conflicts.append(Conflict(qid, doc, f"it removed on {old['removed']} (was "
                                              f"{_describe_label(old)})", _describe_label(state), source))
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
                rec = {"query": qid, "doc": doc, "grade": state["grade"], "reason": state["reason"],
                       "collection_version": state["collection_version"], "reviewer": state["reviewer"],
                       "created": old["created"] if live else now, "updated": now, "removed": None}
                ops.append(["judgment", rec])
                event("import", qid, doc, live, _label_state(rec), source)
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
               version: str | None = None) -> Export:
        """Qrels that `read_qrels` reads back, with version, content hash and export time alongside.

        Formats: `trec` (`# key: value` header lines), `json` (binary: each query's
        documents with grade >= 1), `json-graded`, `jsonl` (one judgment a line, with
        reason, collection version and reviewer). `plain` leaves the header out.
        The header's content_hash is the hash of the labels the file holds (for
        binary json: the listed documents at grade 1), so a second round trip
        reproduces it; `version` names the frozen version the labels are, if any.
        Written atomically to `path` when given; the text is returned either way.
        Queries in workspace order, documents in the order they were first judged;
        removed labels are not exported.
        """
        with self._mutex:
            self._check_open()
            if fmt not in EXPORT_FORMATS:
                raise InputError(str(path or self.path), f"unknown export format {fmt!r}, expected one of "
                                 f"{', '.join(EXPORT_FORMATS)}")
            queries, labels = self._label_set(version)
            rows = [(q, d, s) for q in queries for d, s in labels.get(q, {}).items()]
            digest = full = content_hash((q, d, s["grade"]) for q, d, s in rows)
            name = self._version_name(version, digest)
            if fmt == "json":  # the hash describes what the file holds: listed documents, grade 1
                labels = {q: {d: dict(s, grade=1) for d, s in per.items() if s["grade"] >= 1}
                          for q, per in labels.items()}
                digest = content_hash((q, d, 1) for q, per in labels.items() for d in per)
            notes = []
            if version is not None and full != self._versions[version]["content_hash"]:
                notes.append(f"version {version!r}: its labels rebuilt from history no longer match its recorded "
                             "content hash (purged since?)")
            header: dict = {"version": name, "content_hash": digest, "exported_at": export_time()}
            cvs = {s["collection_version"] for _, _, s in rows}
            if len(cvs) == 1 and "" not in cvs:
                header["collection_version"] = cvs.pop()
            elif len(cvs) > 1 and fmt != "jsonl":
                notes.append("the labels have several collection versions; only jsonl keeps them per label")
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
                for q, d, s in rows:
                    obj = {"query": q, "doc": d, "grade": s["grade"]}
                    for k in ("reason", "collection_version", "reviewer"):
                        if s[k]:
                            obj[k] = s[k]
                    lines.append(json.dumps(obj, ensure_ascii=False))
                text = "".join(line + "\n" for line in lines)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                raise InputError(str(path or self.path), "an ID or reason is not valid Unicode text (a lone "
                                 "surrogate); cannot write it as UTF-8") from None
            if path is not None:
                atomic_write(path, data)
            return Export(text, fmt, name, digest, len(rows) - left_out, left_out, notes)

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

