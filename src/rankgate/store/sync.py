"""A benchmark's qrels file and its workspace: like a commit and a working tree.

The benchmark folder's qrels file is what is committed and what CI reads; the
workspace is the working copy the experts edit. This module keeps the two
apart and explicit:

* **Which workspace.** A benchmark folder's workspace is keyed by the
  benchmark's name and the folder's resolved path
  (`<data>/workspaces/<name>-<8 hex>.json`, store/paths.py), so copies and
  clones never share one. When a folder has none yet, a workspace of the same
  name whose folder no longer exists (the folder moved), or the old name-only
  workspace of this very folder, is adopted: its files are renamed, and the
  caller is told (`Located.note`). A workspace of the same name whose folder
  still exists (a copy) is left to it.
* **The last sync.** Every import of the folder's qrels and every export back
  to it is recorded beside the workspace in `<db>.sync`: line 1 a small JSON
  summary (the file's sha256, the labels' content hash, when, how, and the
  number of unexported edits with the workspace files' size and time it was
  counted at); line 2 the labels as they were at that point, keyed by a hash
  of (query, document) rather than the IDs (a purge erases IDs; this file does
  not hold them).
* **Comparing.** `compare()` reads the file and the workspace and sorts every
  label that differs: changed in the file since the last sync, changed in the
  workspace since (an unexported edit), or changed on both sides (a conflict).
* **CI.** `unexported_note()` (store/unexported.py) is what `rankgate gate`
  prints: it reads line 1 of `<db>.sync` only (no TinyDB), and opens the
  workspace read-only only when its files changed since the count was taken.

Nothing here changes a label except `bring_in` (the file's changes, as edits
with the file's reviewer); an export back is written atomically or not at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from dataclasses import field
from pathlib import Path
from typing import NamedTuple

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.core.errors import InputError
from rankgate.store import paths
from rankgate.store.records import FILE_SOURCE
from rankgate.store.sync_record import (  # noqa: F401 (their home: store/sync_record.py)
    SYNC_FORMAT, QrelsFile, _resolved, defer as _defer, flush_pending, label_key, open_sidecar, pending_summary, restamp_pending,
    read_exported, read_summary, record_export, stamp as _stamp,
)

RECOUNT_ABOVE = 20_000  # a writer that touched more pairs counts its unexported edits again from every label


# --------------------------------------------------------------------------- small pieces


def file_sha256(path: str | os.PathLike) -> str | None:
    try:
        with open(path, "rb") as f:
            return "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


# --------------------------------------------------------------------------- which workspace


@dataclass
class Located:
    """A benchmark folder's workspace file; `adopt_from`: a workspace to move there first (see `locate`)."""

    path: Path
    note: str = ""
    adopt_from: Path | None = None
    from_qrels: bool = False  # adopt_from is the app's workspace of the folder's qrels file


def qrels_workspace_for(manifest) -> Path | None:
    """The workspace the app made for the benchmark's qrels file on its own (`rankgate review QRELS`), when
    there is one: a folder opened for the first time takes it over (one qrels file, one workspace)."""
    raw = paths.qrels_workspace_path(manifest.qrels, create=False)
    summary = read_summary(raw) if raw.exists() else None
    if not summary or summary.get("qrels") != _resolved(manifest.qrels):
        return None
    return raw if summary.get("folder") == str(Path(_resolved(manifest.qrels)).parent) else None


def locate(manifest, *, create: bool) -> Located:
    """The workspace of a benchmark folder: its own keyed file; else one to adopt (found by name), else a
    new keyed file. Nothing is moved here: `adopt()` does that (for a writer)."""
    keyed = paths.benchmark_workspace_path(manifest.name, manifest.folder, create=create)
    if keyed.exists():
        return Located(keyed)
    raw = qrels_workspace_for(manifest)
    if raw is not None:
        return Located(keyed, f"this folder took over the labels of {Path(manifest.qrels).name} opened alone "
                       f"(`rankgate review QRELS --runs ...`), their unexported edits with them: one qrels file, one "
                       f"workspace ({raw.name}, now {keyed.name})", raw, from_qrels=True)
    folder = _resolved(manifest.folder)
    wdir = keyed.parent
    if not wdir.is_dir():
        return Located(keyed)
    stem = paths.workspace_file_name(manifest.name)[: -len(".json")]
    pattern = re.compile(re.escape(stem) + r"(-[0-9a-f]{8})?\.json")
    others = []
    for name in sorted(os.listdir(wdir)):
        if pattern.fullmatch(name) and name != keyed.name:
            others.append(wdir / name)
    keep_apart = []
    for other in others:
        was = recorded_folder(other)
        legacy = other.name == stem + ".json"
        if was == folder and legacy:
            return Located(keyed, f"workspace {other.name} (this benchmark's, by name) now lives at {keyed.name}, "
                           "keyed by the folder's path too", other)
        if was is not None and was != folder and not os.path.exists(was):
            return Located(keyed, f"the benchmark {manifest.name!r} was at {was}, which no longer exists: its "
                           f"workspace ({other.name}) is adopted by this folder, as {keyed.name}", other)
        if was is None and legacy:
            return Located(keyed, f"workspace {other.name} (found by the benchmark's name, its folder unknown) "
                           f"is adopted by this folder, as {keyed.name}", other)
        keep_apart.append((other, was))
    if keep_apart:
        other, was = keep_apart[0]
        where = f" at {was}" if was else ""
        return Located(keyed, f"a new workspace for this folder ({keyed.name}); the benchmark {manifest.name!r}"
                       f"{where} keeps its own ({other.name})")
    return Located(keyed)


def recorded_folder(db: Path) -> str | None:
    """The benchmark folder a workspace was opened for: from its sync record, else its snapshot's meta."""
    summary = read_summary(db)
    if summary and summary.get("folder"):
        return summary["folder"]
    from rankgate.store.durable import FOLD_EDITS, DurableIndex  # below the workspace: no circle through it

    try:
        with DurableIndex(db, readonly=True, fold_every=FOLD_EDITS) as ix:
            ix._open_files(create=False)
            bench = ix._meta.get("benchmark") or {}
        return bench.get("folder") or None
    except (InputError, OSError, AttributeError):
        return None


def adopt(located: Located) -> None:
    """Move an adopted workspace's files to the keyed name, holding its lock (a writer elsewhere refuses)."""
    from rankgate.store.storage import WriterLock, fsync_dir

    old, new = located.adopt_from, located.path
    if old is None:
        return
    lock = WriterLock(paths.sidecar(old, paths.LOCK), old)
    lock.acquire()  # raises Locked (naming the holder) when it is open for writing
    try:
        prefix = old.name + "."
        moved = [old] + [old.parent / n for n in sorted(os.listdir(old.parent))
                         if n.startswith(prefix) and n != old.name + paths.LOCK]
        for p in moved:
            if p.exists():
                os.replace(p, new.with_name(new.name + p.name[len(old.name):]))
        fsync_dir(new.parent)
    finally:
        lock.release(remove=True)  # removed while still held: a writer that opened it meanwhile opens it again
    located.adopt_from = None


# --------------------------------------------------------------------------- the sync record


def read_record(db: str | os.PathLike, labels: bool = True) -> tuple[dict, dict[str, int]] | None:
    """(summary, {label_key: grade} at the last sync), or None: no record, or one that cannot be used (empty,
    cut short, not JSON), so the last sync is unknown. `labels=False`: the labels are not parsed (None in
    their place; 80,000 labels cost 0.05 s), only checked to be all there."""
    flush_pending(db)
    try:
        with open_sidecar(paths.sidecar(db, paths.SYNC)) as f:
            summary = json.loads(f.readline())
            line2 = f.readline()
            if not line2.endswith(b"\n"):  # cut short: the labels at the last sync are not all there
                return None
            if not labels:
                ok = isinstance(summary, dict) and summary.get("format") == SYNC_FORMAT and line2.startswith(b"{") \
                    and line2.rstrip().endswith(b"}")
                return (summary, None) if ok else None
            base = json.loads(line2)
        if (isinstance(summary, dict) and summary.get("format") == SYNC_FORMAT and isinstance(base, dict)
                and all(isinstance(g, int) and not isinstance(g, bool) for g in base.values())):
            return summary, base
    except (OSError, ValueError):
        pass
    return None


def _write_record(db: Path, summary: dict, base: dict[str, int]) -> None:
    from rankgate.store.storage import atomic_write

    flush_pending(db, or_drop=True)  # (a record left for later is older: written first, then this one over it)
    data = (json.dumps(summary, ensure_ascii=False) + "\n" + json.dumps(base, separators=(",", ":")) + "\n")
    atomic_write(paths.sidecar(db, paths.SYNC), data.encode("utf-8", "surrogatepass"))


def _write_summary(db: Path, summary: dict) -> None:
    """Line 1 again, line 2 as it is. Not fsynced: the count is advice; after a crash the gate finds it
    stale (its stamp) and counts again."""
    from rankgate.store.storage import atomic_write

    flush_pending(db)
    path = paths.sidecar(db, paths.SYNC)
    rest = path.read_bytes().partition(b"\n")[2]
    atomic_write(path, json.dumps(summary, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n" + rest,
                 sync=False)


def workspace_grades(ws) -> dict[tuple[str, str], int]:
    """{(query, doc): grade} of the workspace's current labels (every reviewer's, as exported)."""
    from rankgate.store.labels import label_grades

    return label_grades(ws._labels, ws._adj)


def query_grades(ws, qid: str) -> dict[str, int]:
    """{doc: grade} of one query's labels (every reviewer's, as exported)."""
    from rankgate.store.labels import pair_labels

    labels = pair_labels({qid: ws._labels.get(qid, {})}, {qid: ws._adj.get(qid, {})})
    return {d: int(s["grade"]) for d, s in labels.get(qid, {}).items()}


def record_sync(ws, manifest, how: str, grades: dict[tuple[str, str], int], *, version: str = "",
                sha: str | None = None, now: dict | None = None, later: bool = False) -> None:
    """The folder's qrels file and the workspace agree on `grades` now (an import, an export, a merge).
    `now`: the workspace's grades, when the caller has them (`workspace_grades`). `later`: with `now` equal
    to `grades` (an import's), the labels' hashes are computed and the record written by the next
    `flush_pending` (the app's first open: after its first frame), its summary as it is now."""
    from rankgate.store.labels import content_hash

    flush_pending(ws.path)
    summary = {"format": SYNC_FORMAT, "benchmark": manifest.name, "folder": _resolved(manifest.folder),
               "qrels": _resolved(manifest.qrels), "file_sha256": sha if sha is not None else
               file_sha256(manifest.qrels), "labels_hash": None, "how": how, "at": ws._clock(), "version": version}

    def write(base=None) -> None:
        summary["labels_hash"] = content_hash((q, d, g) for (q, d), g in grades.items())
        _write_record(ws.path, summary, base if base is not None else keyed(grades))

    if later and now is grades:  # (an import's: the same labels, nothing unexported)
        summary.update(unexported=0, stamp=_stamp(ws.path))
        _defer(ws.path, summary, write, held=lambda: ws._unwritten is not None)  # (not before the import is)
    else:
        base = keyed(grades)
        now = workspace_grades(ws) if now is None else now
        unexported = 0 if now == grades else count_unexported(base, now)  # (an import's: the same labels)
        summary.update(unexported=unexported, stamp=_stamp(ws.path))
        write(base)
    _start_session(ws, summary, True)


def keyed(grades: dict[tuple[str, str], int]) -> dict[str, int]:
    """{label_key: grade}, as the sync record keeps labels."""
    return {label_key(q, d): g for (q, d), g in grades.items()}


# A writer's session: the pairs its edits touched (with their grade before), so that closing counts the
# unexported edits again from those pairs only, not from every label (0.45 s at 100k labels).

def _start_session(ws, summary: dict | None, valid: bool) -> None:
    ws._sync_session = {"at": (summary or {}).get("at"), "valid": valid, "before": {}, "full": False}


def before_commit(ws, ops: list) -> None:
    """A writer is about to commit `ops`: note each touched pair's grade before its first edit."""
    session = getattr(ws, "_sync_session", None)
    if session is None:
        return
    before = session["before"]
    grades: dict[str, dict[str, int]] = {}
    for kind, value in ops:
        if kind in ("judgment", "review", "adjudication"):
            key = (value["query"], value["doc"])
            if key not in before:
                per = grades.get(key[0])
                if per is None:
                    per = grades[key[0]] = query_grades(ws, key[0])
                before[key] = per.get(key[1])
        elif kind in ("purge", "columns"):  # many pairs at once: count them all again
            session["full"] = True
    if len(before) > RECOUNT_ABOVE:  # many pairs: counting every label again is as cheap
        session["full"] = True
        before.clear()


def count_unexported(base: dict[str, int], grades: dict[tuple[str, str], int]) -> int:
    seen = 0
    n = 0
    for (q, d), g in grades.items():
        b = base.get(label_key(q, d))
        if b is None:
            n += 1
        else:
            seen += 1
            if b != g:
                n += 1
    return n + (len(base) - seen)  # labels removed from the workspace since


def after_open(ws, manifest, *, later: bool = False) -> None:
    """A writer opened a benchmark's workspace: a first import is the first sync; a workspace from before
    sync records gets one rebuilt from its history (its labels as the benchmark's import left them).
    `later`: a first import's record is written by the next `flush_pending` (record_sync)."""
    if ws.benchmark_import is not None:
        grades = workspace_grades(ws)
        record_sync(ws, manifest, "import", grades, now=grades, later=later)
        ws.import_grades = (ws._seq, grades)  # as recorded (the app's first comparison: tui/runcache.py)
        return
    record = read_record(ws.path, labels=False)
    if record is not None:
        summary, _ = record
        moved = summary.get("folder") != _resolved(manifest.folder)
        if moved and not (isinstance(manifest, QrelsFile) and summary.get("qrels") == _resolved(manifest.qrels)):
            # adopted: the folder moved (a benchmark's workspace opened on its qrels file alone keeps its folder)
            summary.update(folder=_resolved(manifest.folder), qrels=_resolved(manifest.qrels))
            _write_record(ws.path, summary, read_record(ws.path)[1])
        # the count on file holds for the labels as opened when the files are as it was counted at
        _start_session(ws, summary, summary.get("stamp") == _stamp(ws.path))
        return
    from rankgate.store.labels import labels_at

    why = f"import benchmark {manifest.name}"
    history = ws._load_history()
    first = FIRST_REVIEW if isinstance(manifest, QrelsFile) else why  # a qrels file's own workspace: its import
    ids = [e["id"] for e in history if e.get("why") == why or e.get("kind") == "benchmark"
           or str(e.get("why", "")).startswith(first)]
    if not ids:
        return
    _, labels = labels_at(history, max(ids) + 1)
    grades = {(q, d): int(s["grade"]) for q, per in labels.items() for d, s in per.items()}
    record_sync(ws, manifest, "import", grades, sha="")


def remember(ws) -> None:
    """After a writer closed a benchmark's workspace: count its unexported edits again for `rankgate gate`
    (from the pairs this session touched when the count it opened with holds; else from every label)."""
    session = getattr(ws, "_sync_session", None)
    if session is not None and not session["before"] and not session["full"] and session["valid"]:
        summary = read_summary(ws.path)
        if summary is not None and summary.get("at") == session["at"]:
            if summary.get("stamp") != _stamp(ws.path):  # a fold without edits: the count still holds
                summary["stamp"] = _stamp(ws.path)
                _write_summary(ws.path, summary)
            return  # no edits: nothing to count
    record = read_record(ws.path)
    if record is None:
        return
    summary, base = record
    quick = (session is not None and session["valid"] and not session["full"] and summary.get("at") == session["at"]
             and isinstance(summary.get("unexported"), int))
    if quick:
        n = summary["unexported"]
        grades: dict[str, dict[str, int]] = {}
        for (q, d), was in session["before"].items():
            b = base.get(label_key(q, d))
            per = grades.get(q)
            if per is None:
                per = grades[q] = query_grades(ws, q)
            n += (per.get(d) != b) - (was != b)
    else:
        n = count_unexported(base, workspace_grades(ws))
    summary.update(unexported=n, stamp=_stamp(ws.path))
    _write_summary(ws.path, summary)


# --------------------------------------------------------------------------- a qrels file on its own

FIRST_REVIEW = "first review of "  # the `why` of the import that made a qrels file's workspace (tui/store_backend.py)


def benchmark_workspace_of(qrels: str | os.PathLike) -> Path | None:
    """The workspace of a benchmark folder whose qrels file is `qrels` (its benchmark.toml points at it, as
    `rankgate init` without --copy writes), found by the sync records in the workspace folder: the app opened
    on the file itself uses it, so one qrels file has one workspace however it is opened. None: none (or
    several folders share the file: then the file's own)."""
    wdir = paths.workspace_dir(create=False)
    if not wdir.is_dir():
        return None
    real, found = _resolved(qrels), []
    for name in sorted(os.listdir(wdir)):
        if not name.endswith(".json" + paths.SYNC):
            continue
        db = wdir / name[: -len(paths.SYNC)]
        summary = read_summary(db)
        if summary and summary.get("qrels") == real and summary.get("folder") != str(Path(real).parent) \
                and os.path.isfile(os.path.join(summary.get("folder") or "", "benchmark.toml")) and db.exists():
            found.append(db)
    return found[0] if len(found) == 1 else None


def follow_file(ws, qrels: str | os.PathLike, *, imported=None, own: bool) -> None:
    """Compare the workspace with the qrels file it was opened on, as a benchmark's with its folder's file
    (`ws.manifest` becomes a QrelsFile). `imported`: what this open just imported from the file (its
    ImportReport: the first sync, recorded as a benchmark's first import is, by `after_open`).
    `own`: the workspace is the file's own (named after it); one given with --db follows the file only when
    it was imported from it, or its sync record names it (a workspace of other labels is never compared)."""
    path = Path(_resolved(qrels))
    raw = QrelsFile(path, path.name, path.parent)
    if imported is None and not own:
        summary = read_summary(ws.path)
        if not summary or summary.get("qrels") != str(path):
            return
    ws.manifest = raw
    if ws.readonly:
        return
    if imported is not None:
        ws.benchmark_import = imported
    after_open(ws, raw)


# --------------------------------------------------------------------------- comparing


@dataclass
class Difference:
    query: str
    doc: str
    base: int | None  # the grade at the last sync (None: no label)
    file: int | None
    workspace: int | None
    side: str  # "file", "workspace" or "both" (a conflict)

    @property
    def kind(self) -> str:
        """added / changed / removed, on its side, since the last sync (a conflict: against the base)."""
        new = self.file if self.side == "file" else self.workspace
        if self.base is None:
            return "added"
        if new is None:
            return "removed"
        return "changed"


@dataclass
class Comparison:
    workspace: Path
    qrels: Path
    differences: list[Difference] = field(default_factory=list)
    file_labels: int = 0
    workspace_labels: int = 0
    synced: dict | None = None  # the sync record's summary (None: none yet)
    file_details: dict = field(default_factory=dict)  # (query, doc) -> (reason, collection_version, reviewer)
    file_grades: dict = field(default_factory=dict)  # (query, doc) -> grade, in the file
    base: dict | None = None  # label_key -> grade at the last sync (None: no record)

    @property
    def last_sync_unknown(self) -> bool:
        """No usable sync record: every difference may be the file's (each is listed as a conflict)."""
        return self.base is None

    @property
    def in_sync(self) -> bool:
        return not self.differences

    def counts(self, side: str) -> dict[str, int]:
        out = {"added": 0, "changed": 0, "removed": 0}
        for d in self.differences:
            if d.side == side:
                out[d.kind] += 1
        return out

    @property
    def conflicts(self) -> list[Difference]:
        return [d for d in self.differences if d.side == "both"]

    @property
    def file_changed(self) -> bool:
        """The file holds changes the workspace has not seen (or conflicting ones)."""
        return any(d.side != "workspace" for d in self.differences)

    @property
    def unexported(self) -> int:
        return sum(1 for d in self.differences if d.side != "file")

    def describe(self) -> list[str]:
        """Lines for people: where, then the counts both ways."""
        def fig(c: dict) -> str:
            return f"{c['added']} added, {c['changed']} changed, {c['removed']} removed"

        lines = []
        if self.last_sync_unknown:
            lines.append("the last sync is unknown (no usable record of the last import or export)")
            if self.in_sync:
                lines.append(f"in sync: the qrels file and the workspace hold the same {self.file_labels} labels")
            else:
                n = len(self.differences)
                lines.append(f"{n} label{'s differ' if n != 1 else ' differs'} between the qrels file and the "
                             "workspace, and which side changed them cannot be told: the file may hold labels "
                             "the workspace has not seen (an export back needs --overwrite)")
            return lines
        if self.synced is not None and self.synced.get("at"):
            lines.append(f"last sync: {self.synced.get('how', '?')} at {self.synced['at']}")
        if self.in_sync:
            lines.append(f"in sync: the qrels file and the workspace hold the same {self.file_labels} labels")
            return lines
        lines.append(f"in the qrels file since then: {fig(self.counts('file'))}")
        lines.append(f"in the workspace since then (not exported): {fig(self.counts('workspace'))}")
        if self.conflicts:
            lines.append(f"changed on both sides (conflicts): {len(self.conflicts)}")
        return lines


def read_file_labels(manifest) -> tuple[dict[tuple[str, str], int], dict]:
    """{(query, doc): grade} of the folder's qrels file, and each label's details; a file that no longer
    parses raises InputError with file:line."""
    from rankgate.core.formats import read_qrels

    qrels = read_qrels(manifest.qrels)
    grades, details = {}, {}
    reviewer = str(qrels.meta.get("reviewer", "") or "")
    for q, d, g, detail in qrels.judgments():
        grades[(q, d)] = int(g)
        details[(q, d)] = (detail.reason or "", detail.collection_version or "", detail.reviewer or reviewer)
    return grades, details


def read_file_grades(manifest) -> tuple[dict[tuple[str, str], int], dict]:
    """`read_file_labels` without the details ({} in their place): what the app's comparison keeps."""
    from rankgate.core.formats import read_qrels

    qrels = read_qrels(manifest.qrels)
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    qs, ds = [qn[q] for q in qrels.q.tolist()], [dn[d] for d in qrels.doc.tolist()]
    return dict(zip(zip(qs, ds), map(int, qrels.grade.tolist()))), {}


def compare(ws, manifest, file_grades: dict | None = None, details: dict | None = None) -> Comparison:
    """Every label that differs between the folder's qrels file and the workspace, by side."""
    if file_grades is None:
        file_grades, details = read_file_labels(manifest)
    grades = workspace_grades(ws)
    record = read_record(ws.path)
    summary, base = record if record is not None else (None, None)
    out = Comparison(Path(ws.path), Path(manifest.qrels), file_labels=len(file_grades),
                     workspace_labels=len(grades), synced=summary, file_details=details or {},
                     file_grades=file_grades, base=base)
    order = list(file_grades) + [k for k in grades if k not in file_grades]
    for key in order:
        f, w = file_grades.get(key), grades.get(key)
        if f == w:
            continue
        if base is None:  # the last sync is unknown: which side changed the label cannot be told
            out.differences.append(Difference(key[0], key[1], None, f, w, "both"))
            continue
        b = base.get(label_key(*key))
        side = "file" if w == b else "workspace" if f == b else "both"
        out.differences.append(Difference(key[0], key[1], b, f, w, side))
    return out


class Unexported:
    """The number of unexported edits, kept current edit by edit (the app's header): a pair counts when
    the workspace's label differs from the file's and from the last sync's."""

    def __init__(self, comparison: Comparison, inputs=None) -> None:
        """`inputs`: when the comparison came without the file's labels and the last sync's (the app's cache of
        it, tui/runcache.py), a function giving (file grades, base) as `compare` reads them: called by
        `ready()`, at the latest on the first `touch`."""
        import threading

        self._lock = threading.Lock()
        self._inputs = inputs
        if inputs is None:
            self._take(comparison.file_grades, comparison.base)
        self.dirty: dict[str, set[str]] = {}
        for d in comparison.differences:
            if d.side != "file":
                self.dirty.setdefault(d.query, set()).add(d.doc)

    def _take(self, file: dict, base: dict | None) -> None:
        self.file, self.base = file, base
        self.file_docs: dict[str, set[str]] = {}
        for q, d in self.file:
            self.file_docs.setdefault(q, set()).add(d)

    def ready(self) -> None:
        """The file's labels and the last sync's, read now if they were left for later."""
        with self._lock:
            if self._inputs is not None:
                try:
                    self._take(*self._inputs())
                except Exception:  # the file no longer reads: the count stays as it was at open
                    self._take({}, {})
                    self.touch = lambda qid, grades: None
                self._inputs = None

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.dirty.values())

    def touch(self, qid: str, grades: dict[str, int]) -> None:
        """Query `qid`'s labels are now `grades` ({doc: grade})."""
        self.ready()
        out = set()
        for doc in self.file_docs.get(qid, set()) | set(grades):
            f, w = self.file.get((qid, doc)), grades.get(doc)
            b = self.base.get(label_key(qid, doc)) if self.base is not None else f
            if f != w and w != b:
                out.add(doc)
        if out:
            self.dirty[qid] = out
        else:
            self.dirty.pop(qid, None)


# --------------------------------------------------------------------------- export back, merge


def file_format(path: str | os.PathLike) -> str:
    """The export format that writes `path`'s own format: trec, json (binary), json-graded or jsonl."""
    from rankgate.core.formats.sniff import detect_format

    p = str(path)
    if p.endswith(".gz"):
        raise InputError(p, "a gzip-compressed qrels file cannot be written back; export elsewhere with -o FILE")
    kind = detect_format(p)
    if kind == "beir":
        raise InputError(p, "BEIR TSV qrels cannot be written back (no export format); export elsewhere with "
                         "-o FILE --format trec|jsonl")
    if kind == "json":
        try:
            obj = json.loads(Path(p).read_bytes())
        except (OSError, ValueError):
            return "json-graded"
        body = obj.get("qrels", obj) if isinstance(obj, dict) else {}
        if isinstance(body, dict) and body and all(isinstance(v, list) for v in body.values()):
            return "json"
        return "json-graded"
    if kind in ("trec", "jsonl"):
        return kind
    return "trec"


def export_back(ws, manifest, fmt: str | None = None, *, overwrite: bool = False, outside_folder: bool = False,
                bring_in: str | None = None):
    """Write the workspace's labels to the benchmark's own qrels file (its own format, atomically, with the
    version and hash header; a TREC file only if it had one, and it keeps its own iteration column, e.g. `Q0`)
    and record the sync.
    Refused, nothing changed: a qrels file outside the benchmark folder (`rankgate init` without --copy
    points at one), unless `outside_folder`; a file or folder that cannot be written (no write bit in its
    mode counts, even for root); a file with changes the workspace has not seen (or that no longer
    parses), unless `overwrite`; `bring_in`: what to do then, in the words of the face that asked (the app's
    keys; by default the commands). Returns the store's Export."""
    target = Path(manifest.qrels)
    if ws.blind:
        raise InputError(str(target), "blind review shows your own labels only; leave blind review to export the "
                         "benchmark's labels")
    if not outside_folder and is_outside_folder(manifest):
        raise InputError(str(target), outside_message(manifest))
    if not overwrite and target.exists():
        c = compare(ws, manifest)  # a file that no longer parses: its file:line, nothing written
        if c.last_sync_unknown and not c.in_sync:
            n = len(c.differences)
            how = (f": {bring_in}" if bring_in else " (`rankgate labels status` lists them; bring them in with "
                   "`rankgate review`, or overwrite the file with --overwrite)")
            raise InputError(str(target), f"the last sync with the workspace is unknown (no usable sync record) "
                             f"and {n} label{'s differ' if n != 1 else ' differs'}: the file may hold labels the "
                             f"workspace has not seen; nothing was written{how}")
        if c.file_changed:
            n = sum(1 for d in c.differences if d.side != "workspace")
            if bring_in:
                raise InputError(str(target), f"changed since the last import or export ({n} label"
                                 f"{'s' if n != 1 else ''} the workspace has not seen); nothing was written: "
                                 f"{bring_in}")
            raise InputError(str(target), f"changed since the last import or export ({n} label"
                             f"{'s' if n != 1 else ''} the workspace has not seen; `rankgate labels status` "
                             "lists them); nothing was written: bring them in first (`rankgate review` offers "
                             "it), or overwrite them with --overwrite")
    fmt, notes = _own_format(ws, target, fmt)
    if read_only(target):
        raise InputError(str(target), "cannot write here (read-only); nothing was changed, neither the file nor "
                         "the workspace (export elsewhere with -o FILE)")
    grades = workspace_grades(ws)
    out = _write_like(ws, fmt, target, target)
    out.notes[:0] = notes
    record_sync(ws, manifest, "export", grades, version=out.version)
    return out


def is_outside_folder(manifest) -> bool:
    """The qrels file written back is outside the benchmark folder: benchmark.toml names one (`../x`, an
    absolute path: what `rankgate init` without --copy writes), or a link in the folder points at one (the
    link's target is what a write-back replaces). A link to a file in the folder is inside."""
    real = os.path.realpath(manifest.qrels)
    root = os.path.realpath(manifest.folder)
    return not real.startswith(root.rstrip(os.sep) + os.sep)


def is_outside_folder_as_named(manifest) -> bool:
    """benchmark.toml's qrels path itself leads outside the folder (before any link in the folder is followed)."""
    parent = os.path.realpath(Path(manifest.qrels).parent)
    root = os.path.realpath(manifest.folder)
    return parent != root and not parent.startswith(root.rstrip(os.sep) + os.sep)


def benchmark_inputs(manifest) -> set[str]:
    """Every file the benchmark reads (benchmark.toml, the qrels, the runs, queries, corpus, guidelines, ACL),
    each as its resolved path: what a copy written into the folder must never replace."""
    paths = [manifest.path, manifest.qrels, manifest.queries, manifest.corpus, manifest.guidelines]
    if manifest.acl and manifest.acl != "corpus":
        paths.append(manifest.acl)
    for run in manifest.runs:  # "NAME=path" or a path (which may hold "=" itself): both
        paths += [run, run.partition("=")[2]]
    return {os.path.realpath(p) for p in paths if p}


def folder_copy_path(manifest) -> Path:
    """Where an export of a qrels file outside the folder goes instead: the same name in the folder, else
    STEM.labels.EXT, STEM.labels-2.EXT, ...: the first that is not one of the benchmark's inputs (a run named
    like the outside file, or a link in the folder to it) and is either absent or holds judgments only (the
    previous copy, which is replaced)."""
    from rankgate.core.formats.sniff import holds_judgments

    folder, name = Path(manifest.folder), Path(manifest.qrels).name
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    inputs = benchmark_inputs(manifest)
    for n in range(1, 100):
        copy = folder / (name if n == 1 else f"{stem}.labels{'' if n == 2 else f'-{n - 1}'}{dot}{ext}")
        if os.path.realpath(copy) in inputs or (os.path.lexists(copy) and not holds_judgments(copy)):
            continue
        return copy
    return folder / name  # a folder with 99 such files: export_copy refuses it with its reason


def outside_message(manifest) -> str:
    """Why an export back to a qrels file outside the folder was refused, and the two ways on."""
    from shlex import quote

    copy = folder_copy_path(manifest)
    fmt = file_format(manifest.qrels)
    as_fmt = "" if fmt == "trec" else f" --format {fmt}"
    linked = os.path.islink(manifest.qrels) and not is_outside_folder_as_named(manifest)
    why = (f"it is a link to {os.path.realpath(manifest.qrels)}" if linked
           else "its benchmark.toml points at it; `rankgate init` without --copy does that")
    return (f"is outside the benchmark folder {manifest.folder} ({why}); nothing was written: write a copy into "
            "the folder with `rankgate labels "
            f"export {quote(str(manifest.folder))} -o {quote(str(copy))}{as_fmt}` and set qrels = \"{copy.name}\" "
            f"in {manifest.path}, or replace that file itself with --outside-folder")


def read_only(path: str | os.PathLike) -> bool:
    """The file, or the folder it is replaced in, cannot be written: no write bit in its mode (refused even
    for root, whom `os.access` lets through: a 0444 reference file in a 0555 folder), or no access."""
    from rankgate.core.outfile import no_write_bit

    real = Path(os.path.realpath(path))  # a symlinked qrels file: its target is written, the link stays
    if no_write_bit(real) is not None:
        return True
    return not os.access(real.parent, os.W_OK) or (os.path.exists(real) and not os.access(real, os.W_OK))


def export_copy(ws, manifest) -> tuple:
    """The workspace's labels to a copy of the benchmark's qrels file inside its folder (its own format and
    iteration column): the safe export when benchmark.toml points outside the folder. Not a sync (the
    gate reads the file benchmark.toml names until it names the copy). Returns (Export, the copy's path)."""
    from rankgate.core.formats.sniff import holds_judgments

    copy = folder_copy_path(manifest)
    if ws.blind:
        raise InputError(str(copy), "blind review shows your own labels only; leave blind review to export the "
                         "benchmark's labels")
    if os.path.realpath(copy) in benchmark_inputs(manifest):
        raise InputError(str(copy), "is one of the benchmark's inputs; nothing was written (export elsewhere with "
                         f"`rankgate labels export {shlex.quote(str(manifest.folder))} -o FILE`)")
    if os.path.lexists(copy) and not holds_judgments(copy):
        raise InputError(str(copy), "exists and holds no judgments (it is not an earlier export or qrels file); "
                         "nothing was written (export elsewhere with `rankgate labels export "
                         f"{manifest.folder} -o FILE`)")
    fmt, notes = _own_format(ws, Path(manifest.qrels), None)
    if read_only(copy):
        raise InputError(str(copy), "cannot write here (read-only); nothing was changed (export elsewhere with "
                         "-o FILE)")
    out = _write_like(ws, fmt, copy, Path(manifest.qrels))
    out.notes[:0] = notes
    return out, copy


def _own_format(ws, target: Path, fmt: str | None) -> tuple[str, list[str]]:
    """The export format that keeps `target`'s own (binary JSON becomes graded when a grade is not 1)."""
    notes = []
    if fmt is None:
        fmt = file_format(target)
        if fmt == "json":
            grades = workspace_grades(ws)
            off = sum(1 for g in grades.values() if g != 1)
            if off:
                fmt = "json-graded"
                notes.append(f"{target.name} was binary JSON; written as graded JSON to keep {off} grade"
                             f"{'s' if off != 1 else ''} other than 1")
    return fmt, notes


def _write_like(ws, fmt: str, path: Path, like: Path, **options):
    """ws.export(fmt, **options) to `path`; TREC keeps `like`'s own layout (trec_layout), so a diff of the file
    shows the changed labels only: each pair the file holds keeps its line's iteration column and separator
    (`Q0`, a tab), a new pair takes the file's most common ones, every line the file's line ending (CRLF);
    and it is written without the `#` header when `like` has none (trec_eval, the C tool, stops at a run of
    comment lines)."""
    if fmt != "trec":
        return ws.export(fmt, path, **options)
    layout = trec_layout(like)
    if options.get("header") is None:  # --header / --plain choose; else the file's own way
        options["header"] = layout.header
    own = _own_comments(like) if layout.header else []
    if (layout.column, layout.sep, layout.newline) == ("0", " ", "\n") and not layout.lines and not own \
            and not layout.order:
        return ws.export(fmt, path, **options)
    from rankgate.store.transfer.export import refuse_store_target, write_export

    refuse_store_target(ws, path)
    out = ws.export(fmt, None, **options)  # the text only: written below in the file's own layout
    lines, labels, nl = [], [], layout.newline
    for line in out.text.splitlines():
        if line.startswith("#"):
            lines.append(line + nl)
            continue
        q, _, d, g = line.split()  # `query 0 document grade`: IDs hold no whitespace (the export checks)
        labels.append(((q, d), _line_like(layout, q, d, g) + nl))
    lines += in_file_order(labels, layout.order, [(at, line + nl) for at, line in layout.between])
    own = [line[:-1] + nl for line in own]
    out.text = "".join(own + lines)  # the file's own comments first, then rankgate's header and the labels
    if layout.open_end and out.text.endswith(nl):  # the file's last line had no line ending
        out.text = out.text[: -len(nl)]
    if layout.bom:
        out.text = "\ufeff" + out.text
    data, out.unchanged = write_export(path, out.text.encode("utf-8"))
    out.text = data.decode("utf-8")
    return out


def _line_like(layout, q: str, d: str, grade: str) -> str:
    """A label's line: as the file wrote it when its grade is the same (spacing, `01`), else in the file's
    iteration column and separator (its own line's, or the file's most common)."""
    was = layout.written.get((q, d))
    if was is not None:
        try:
            if int(was[1]) == int(grade):
                return was[0]
        except ValueError:
            pass
    column, sep = layout.lines.get((q, d), (layout.column, layout.sep))
    return sep.join((q, column, d, grade))


def export_like_qrels(ws, manifest, fmt: str, path, **options):
    """`labels export BENCH -o FILE`: TREC written with the benchmark's own iteration column (a copy of an
    outside qrels file diffs against it line by line); other formats as ws.export writes them."""
    return _write_like(ws, fmt, Path(path), Path(manifest.qrels), **options)


REVIEWED = ".reviewed"  # a qrels file opened on its own is exported beside it as STEM.reviewed.EXT


def reviewed_path(qrels: str | os.PathLike) -> Path:
    """Where the labels of a qrels file opened on its own (`rankgate review QRELS --runs ...`) are exported by
    default: `<stem>.reviewed<ext>` beside the file (`qrels.dl19-passage.txt` -> `qrels.dl19-passage.reviewed.txt`;
    a `.gz` file's name loses its `.gz`: the export is not compressed); in the current folder when the file's
    folder cannot be written. Never the input itself."""
    p = Path(qrels)
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    out = f"{stem}{REVIEWED}{dot}{ext}"
    folder = Path(os.path.realpath(p)).parent
    return (p.parent / out) if os.access(folder, os.W_OK) else Path.cwd() / out


def reviewed_format(ws, qrels: str | os.PathLike, path: str | os.PathLike) -> tuple[str, list[str]]:
    """The export format of a qrels file opened on its own: the file's own (TREC stays TREC, JSON stays
    JSON) when `path` has the file's extension; else what `path`'s name says (.jsonl, .json, .trec/.txt)."""
    from rankgate.core.formats.sniff import detect_format

    same = Path(str(path)).suffix == Path(str(qrels)[:-3] if str(qrels).endswith(".gz") else str(qrels)).suffix
    if same:
        try:
            return _own_format(ws, Path(qrels), None)
        except InputError:  # gzip or BEIR: not written back as such
            kind = detect_format(str(qrels))
            return ("jsonl" if kind == "jsonl" else "trec"), []
    suffix = Path(str(path)).suffix.lower()
    return {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json-graded"}.get(suffix, "trec"), []


def raw_qrels_of(ws) -> Path | None:
    """The qrels file a workspace of no benchmark folder follows (the app's workspace of a qrels file, or a
    --db store the app opened on one): its sync record names it. None: a benchmark's workspace, or none."""
    if ws._meta.get("benchmark"):
        return None
    summary = read_summary(ws.path)
    qrels = summary.get("qrels") if summary else None
    return Path(qrels) if isinstance(qrels, str) and os.path.isfile(qrels) else None


def raw_unexported(ws, qrels: str | os.PathLike) -> int:
    """The workspace of a qrels file opened on its own: its label edits that neither the file (as its last sync
    left it) nor the workspace's last export to a file holds, as the app's quit dialog counts them
    (tui/screens/sync.py); a file that no longer parses raises InputError with file:line."""
    path = Path(_resolved(qrels))
    comparison = compare(ws, QrelsFile(path, path.name, path.parent))
    pairs = [(d.query, d.doc) for d in comparison.differences if d.side != "file"]
    exported = read_exported(ws.path)
    if exported is None or not pairs:
        return len(pairs)
    grades = workspace_grades(ws)
    return sum(1 for q, d in pairs if grades.get((q, d)) != exported.get(label_key(q, d)))


def export_reviewed(ws, qrels: str | os.PathLike, path: str | os.PathLike | None = None, fmt: str | None = None,
                    *, query_texts: dict[str, str] | None = None, **options):
    """The workspace's labels for a qrels file opened on its own, written to `path` (default `reviewed_path`)
    in the file's own format and layout: its line order, iteration column (`Q0` stays `Q0`), separator and
    line ending, so `diff QRELS EXPORT` shows the changed lines only; a new label is written with its query,
    after that query's other labels (a new query: at the end). The input is never replaced (refused, nothing
    written). The queries' notes go to a sidecar (`write_query_notes`; `query_texts`: the texts of --queries,
    for the queries the store holds without one). Returns (Export, path, notes path)."""
    from rankgate.store.transfer.export import write_query_notes

    qrels = Path(qrels)
    target = Path(path).expanduser() if path is not None else reviewed_path(qrels)
    if os.path.realpath(target) == os.path.realpath(qrels):
        raise InputError(str(target), f"is the input qrels file, which an export never replaces; nothing was "
                         f"written (the default is {reviewed_path(qrels).name}, beside it)")
    if target.is_symlink() and target.absolute() == reviewed_path(qrels).absolute():
        raise InputError(str(target), f"is a link to {os.path.realpath(target)}, not a file of its own: the reviewed "
                         "export is never written through a link left beside the input; nothing was written "
                         "(remove the link, or choose another name)")
    from rankgate.core.outfile import is_stream, refuse_special
    from rankgate.store.transfer.export import notes_path

    fmt, notes = (fmt, []) if fmt else reviewed_format(ws, qrels, target)
    noted = sum(1 for q in ws.queries() if q.notes.strip())
    if noted and is_stream(target):  # /dev/null, a pipe: no folder for the sidecar (it went into /dev before)
        notes.append(f"the notes of {noted} quer{'y' if noted == 1 else 'ies'} not written: the export goes to "
                     f"{target}, not a file; export to a file to write them beside it")
    elif noted:  # its sidecar's place too, before anything is written
        refuse_special(notes_path(target))
    out = _write_like(ws, fmt, target, qrels, **options)
    out.notes[:0] = notes
    if fmt == "trec" and not options.get("version") and not options.get("judged_by"):  # (others: ws.export)
        record_export(ws, workspace_grades(ws), target)
    return out, target, write_query_notes(ws, target, query_texts)


# the `# key:` lines an export writes (store/transfer/export.py _header): any other comment is the user's
HEADER_KEYS = ("version", "content_hash", "exported_at", "collection_version", "reviewer", "unresolved",
               "adjudicated", "needs_review")


def _open_text(path: str | os.PathLike):
    """A qrels file's text, line endings as written (gunzipped when it is gzip: `qrels.txt.gz`)."""
    import io

    from rankgate.core.infile import open_input

    try:
        return io.TextIOWrapper(open_input(path), encoding="utf-8", errors="replace", newline="")
    except InputError as e:  # (not a regular file: read as an unreadable one)
        raise OSError(str(e)) from e


def _own_comments(path: str | os.PathLike) -> list[str]:
    """The comment lines at the head of a TREC qrels file that are not rankgate's header (a line the user
    wrote there, e.g. what the file is): a write-back keeps them."""
    own = []
    try:
        with _open_text(path) as f:
            for line in f:
                if not line.startswith("#"):
                    break
                key = line[1:].strip().partition(":")[0]
                if key not in HEADER_KEYS:
                    own.append(line.rstrip("\r\n") + "\n")
    except OSError:
        return []
    return own


def in_file_order(labels: list, order: dict, between: list = ()) -> list[str]:
    """The export's lines [((query, doc), line)] in the file's own line order (`order`: each pair's line
    number there): a label the file lacks goes right after its query's last line in the file (in the order
    the export has them), a query the file lacks at the end. `between`: [(position, line)], the file's
    comment and blank lines, each before the label line at its position."""
    if not order:
        return [line for _, line in labels]
    last: dict[str, int] = {}
    for (q, _), at in order.items():
        last[q] = max(last.get(q, -1), at)
    end = len(order)
    keyed = [(order[pair] if pair in order else last.get(pair[0], end) + 0.5, i, line)
             for i, (pair, line) in enumerate(labels)]
    keyed += [(at - 0.25, -1, line) for at, line in between]
    return [line for _, _, line in sorted(keyed)]


class TrecLayout(NamedTuple):
    column: str  # the iteration column most judgment lines have ("Q0"), else "0"
    sep: str  # " " or "\t", the one most lines have
    header: bool  # the file has `#` lines: an export writes its header
    newline: str = "\n"  # "\r\n" when most lines end so
    lines: dict = {}  # {(query, doc): (column, separator)} of the lines that differ from the two above
    order: dict = {}  # {(query, doc): its line's position among the judgment lines} (a diff keeps the order)
    written: dict = {}  # {(query, doc): (its line as written, no line ending; its grade as written)}
    bom: bool = False  # the file starts with a byte-order mark
    open_end: bool = False  # its last line has no line ending
    between: tuple = ()  # ((position, line as written), ...): comments and blank lines after the first label


def trec_layout(path: str | os.PathLike) -> TrecLayout:
    """How a TREC qrels file's lines look: the iteration column and separator most of its judgment lines have
    (e.g. "Q0", " "; the first seen of a tie), and each line's own where it differs; its line ending; whether it
    has a header. An unreadable file: what an export writes ("0", " ", "\n")."""
    from collections import Counter

    kinds, endings, comments, per_line, order, written = Counter(), Counter(), False, {}, {}, {}
    bom = open_end = False
    between = []
    try:
        with _open_text(path) as f:
            for line in f:
                if not order and not endings and line.startswith("\ufeff"):
                    bom, line = True, line[1:]
                open_end = not line.endswith("\n")
                if line.startswith("#"):
                    comments = True
                if line.endswith("\n"):
                    endings["\r\n" if line.endswith("\r\n") else "\n"] += 1
                if not line.strip() or line.startswith("#"):
                    if order:  # (the head's comments: _own_comments)
                        between.append((len(order), line.rstrip("\r\n")))
                    continue
                parts = line.split()
                if len(parts) != 4:
                    continue  # not a judgment line (the reader says so)
                column = "0" if parts[1].startswith("#") else parts[1]
                kind = (column, "\t" if line.rstrip("\r\n").count("\t") == 3 else " ")
                kinds[kind] += 1
                per_line[(parts[0], parts[2])] = kind
                order.setdefault((parts[0], parts[2]), len(order))
                written[(parts[0], parts[2])] = (line.rstrip("\r\n"), parts[3])
    except OSError:
        return TrecLayout("0", " ", False)
    header = comments  # a missing or empty file gets plain qrels, as any TREC export (trec_eval reads them)
    column, sep = kinds.most_common(1)[0][0] if kinds else ("0", " ")
    newline = "\r\n" if endings["\r\n"] > endings["\n"] else "\n"
    lines = {key: kind for key, kind in per_line.items() if kind != (column, sep)} if len(kinds) > 1 else {}
    return TrecLayout(column, sep, header, newline, lines, order, written, bom, open_end, tuple(between))


@dataclass
class Merged:
    brought_in: int = 0
    conflicts: list[Difference] = field(default_factory=list)


def bring_in(ws, manifest) -> Merged:
    """The file's changes since the last sync into the workspace, each label by the file's reviewer
    (its JSONL line's, its header's, else the file itself: "file:NAME", as an import credits it); conflicts keep the workspace's label and are
    listed. Then the file is the last sync: what differs now is the workspace's own (unexported). With no
    usable sync record, the file's labels the workspace lacks come in and differing grades are conflicts."""
    file_grades, details = read_file_labels(manifest)  # as it is now: it may have changed since `comparison`
    comparison = compare(ws, manifest, file_grades, details)
    merged = Merged()
    known = {q.id for q in ws.queries()}
    name = Path(manifest.qrels).name
    source, why = FILE_SOURCE + name, f"brought in from {name}"  # a label the file names nobody for is the file's
    unknown = comparison.last_sync_unknown  # then: the file's labels the workspace lacks come in; labels only
    for d in comparison.differences:        # the workspace holds stay its own; differing grades are conflicts
        if unknown and d.file is None:
            continue
        if d.side == "both" and not (unknown and d.workspace is None):
            merged.conflicts.append(d)
            continue
        if d.side != "file" and not unknown:
            continue
        if d.file is None:  # the file dropped the pair: every judgment that made its label goes
            for j in ws.reviews(d.query, d.doc):
                ws.remove_judgment(d.query, d.doc, why=why, reviewer=source, of_reviewer=j.reviewer)
        else:
            reason, cv, who = details.get((d.query, d.doc), ("", "", ""))
            ws.set_judgment(d.query, d.doc, d.file, reason=reason or f"from {name}",
                            collection_version=cv or None, reviewer=who or source,
                            why=why, create_query=d.query not in known)
            known.add(d.query)
        merged.brought_in += 1
    record_sync(ws, manifest, "merge", file_grades)
    return merged


def keep_workspace(ws, manifest) -> None:
    """The workspace stays as it is: the file as it is now becomes the last sync, so every difference is
    the workspace's (an export writes it back)."""
    file_grades, _ = read_file_labels(manifest)
    record_sync(ws, manifest, "keep", file_grades)
