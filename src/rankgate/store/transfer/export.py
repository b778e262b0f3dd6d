"""Export a workspace's labels as qrels that `read_qrels` reads back, with version, content hash and
export time alongside."""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store.labels import content_hash, reached, standing
from rankgate.store.records import EXPORT_FORMATS, UNRESOLVED, Export
from rankgate.store.storage import atomic_write


def export(ws, fmt: str = "trec", path: str | os.PathLike | None = None, *, plain: bool = False,
           header: bool | None = None, version: str | None = None, require_adjudication: bool = False,
           judged_by: str | None = None, all_reviewers: bool = False) -> Export:
    """Qrels that `read_qrels` reads back, with version, content hash and export time alongside.

    Formats: `trec` (`# key: value` header lines), `json` (binary: each query's
    documents with grade >= 1), `json-graded`, `jsonl` (one judgment a line, with
    reason, collection version and reviewer, and how the grade was reached
    when not by a single reviewer). `header`: write the header; by default
    (None) JSON and JSONL have it (their `meta`) and TREC does not, so
    trec_eval and pytrec_eval read a TREC export as it is (the Export returned
    carries the version and hash either way). `plain` leaves it out.
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
    with ws._mutex:
        ws._check_open()
        where = str(path or ws.path)
        judged_by = _checked_request(ws, fmt, path, where, version, judged_by, all_reviewers)
        queries, labels = ws._label_set(version, judged_by)
        rows = [(q, d, s) for q in queries for d, s in labels.get(q, {}).items()]
        unresolved = [(q, d, s) for q, d, s in rows if reached(s) in UNRESOLVED]
        if require_adjudication and unresolved and judged_by is None:
            _refuse_unresolved(where, unresolved)
        digest = full = content_hash((q, d, s["grade"]) for q, d, s in rows)
        name = ws._version_name(version, digest)
        if fmt == "json":  # the hash describes what the file holds: listed documents, grade 1
            labels = {q: {d: dict(s, grade=1) for d, s in per.items() if s["grade"] >= 1}
                      for q, per in labels.items()}
            digest = content_hash((q, d, 1) for q, per in labels.items() for d in per)
        notes = []
        if version is not None and judged_by is None and full != ws._versions[version]["content_hash"]:
            notes.append(f"version {version!r}: its labels rebuilt from history no longer match its recorded "
                         "content hash (purged since?)")
        meta, counts = _header(fmt, rows, name, digest, judged_by, all_reviewers, len(unresolved), notes,
                               _reach(ws))
        if plain or not (fmt != "trec" if header is None else header):
            meta = None
            if fmt == "trec" and judged_by is not None:
                notes.append(f"a TREC file without its header does not name its reviewer: merge it with "
                             f"`rankgate labels merge --db DB {shlex.quote(judged_by + '=FILE')}`, or export with "
                             "--header")
        text, left_out = _text(ws, fmt, where, queries, labels, rows, meta, notes, judged_by, all_reviewers)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(where, "an ID or reason is not valid Unicode text (a lone surrogate); cannot write it "
                             "as UTF-8") from None
        unchanged = False
        if path is not None:
            data, unchanged = write_export(path, data)
            text = data.decode("utf-8")
            if version is None and judged_by is None and not all_reviewers:  # the labels as they are now
                from rankgate.store.sync_record import record_export

                note = record_export(ws, {(q, d): s["grade"] for q, per in labels.items() for d, s in per.items()},
                                     path)
                if note:
                    notes.append(note)
        return Export(text, fmt, name, digest, len(rows) - left_out, left_out, notes, len(unresolved), *counts,
                      unchanged=unchanged)


# An export's time in its header: `"exported_at": "..."` (JSON, JSONL) or `# exported_at: ...` (TREC).
_STAMP = re.compile(rb'exported_at"?: ?"?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)')


def _checked_request(ws, fmt: str, path, where: str, version: str | None, judged_by: str | None,
                     all_reviewers: bool) -> str | None:
    """Refuse an export the workspace cannot give (a store file as the target, an unknown format, another
    reviewer's judgments in blind review); whose judgments it exports (None: the labels)."""
    if path is not None:
        refuse_store_target(ws, path)
    if fmt not in EXPORT_FORMATS:
        raise InputError(where, f"unknown export format {fmt!r}, expected one of {', '.join(EXPORT_FORMATS)}")
    if ws.blind and judged_by is None:
        judged_by = ws.reviewer
    if all_reviewers:
        ws._no_peeking("an export of every reviewer's judgments")
        if fmt != "jsonl" or judged_by is not None or version is not None:
            raise InputError(where, "every reviewer's judgments export as jsonl only, of the current labels, "
                             "and not with --judged-by")
    else:
        ws._view(judged_by, True)  # in blind review, only the reviewer's own
    return judged_by


def _refuse_unresolved(where: str, unresolved: list) -> None:
    q, d, s = unresolved[0]
    n = len(unresolved)
    raise InputError(where, f"{n} disagreement{'s' if n != 1 else ''} not adjudicated "
                     f"(first: query {q!r} document {d!r}, reviewers {', '.join(s['reviewers'])}); "
                     "nothing was exported (rankgate labels adjudicate, or export without "
                     "--require-adjudication)")


def _text(ws, fmt: str, where: str, queries: dict, labels: dict, rows: list, meta: dict | None, notes: list[str],
          judged_by: str | None, all_reviewers: bool) -> tuple[str, int]:
    """(the file's text in `fmt`, how many labels it leaves out: binary json lists grade >= 1 only)."""
    if fmt == "trec":
        return _trec(where, rows, meta, ws._meta.get("trec_columns")), 0
    if fmt in ("json", "json-graded"):
        return _json(fmt, queries, labels, rows, meta, notes)
    states = _every_judgment(ws) if all_reviewers else [(q, d, s, judged_by is None) for q, d, s in rows]
    return _jsonl(states, meta), 0


def write_export(path, data: bytes) -> tuple[bytes, bool]:
    """Write an export to `path`, unless the file there already holds it, save for its `exported_at`: then the
    file is left as it was (an export with no label change makes no diff to commit). Returns the bytes the
    file holds and whether it was left unchanged."""
    from rankgate.core.outfile import is_stream, output_target

    if not is_stream(path):
        output_target(path)  # what the write would refuse (a read-only file or folder) is refused all the same
        same = _same_but_time(path, data)
        if same is not None:
            return same, True
    atomic_write(path, data, output=True)
    return data, False


def _same_but_time(path, data: bytes) -> bytes | None:
    """The file's bytes when they are `data` with an older export time (or exactly `data`), else None."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) != len(data):
            return None  # the two times have the same length: another size is another content
        with open(path, "rb") as f:
            old = f.read()
    except OSError:
        return None
    if old == data:
        return old
    new, was = _STAMP.search(data, 0, 1 << 16), _STAMP.search(old, 0, 1 << 16)
    if new is None or was is None or new.start(1) != was.start(1):
        return None
    return old if data[:new.start(1)] + was.group(1) + data[new.end(1):] == old else None


STORE_HEADS = (b'{"meta":{"1":{"format":"rankgate-labels"', b'{"meta":{"1":{"checksum":"', b'{"history":{')


def refuse_store_target(ws, path: str | os.PathLike) -> None:
    """An export never replaces the store it reads, nor any of the store's own files (journal, lock,
    backups ...), nor another label store: checked before anything is written."""
    from rankgate.store.paths import is_store_file

    if is_store_file(ws.path, path):
        raise InputError(str(path), f"is the label store {ws.path} or one of its own files; an export never "
                         "replaces it (choose another output file)")
    other = _store_of(path)
    if other is not None:
        raise InputError(str(path), f"is one of the files of the label store {other} (its lock, journal, history, "
                         "backup or sync record); an export never replaces it (choose another output file)")
    head = b""
    if os.path.isfile(path):  # never opens a FIFO or a device (the write refuses those)
        try:
            with open(path, "rb") as f:
                head = f.read(64)
        except OSError:
            pass
    if head.startswith(STORE_HEADS) or any(head[n:].startswith(b'{"journal":"rankgate-journal"') for n in (9, 18)):
        raise InputError(str(path), "holds a rankgate label store; an export never replaces one (choose another "
                         "output file)")


def _store_of(path: str | os.PathLike) -> str | None:
    """The label store whose own file `path` is: anything in rankgate's workspaces folder, or a sidecar
    (`.lock`, `.journal` ...) beside a store file (`--db`); None for any other file."""
    from rankgate.store.paths import STORE_SUFFIXES, workspace_dir

    real = Path(os.path.realpath(path))
    home = Path(os.path.realpath(workspace_dir(create=False)))
    if real.parent == home or home in real.parents:
        return str(home)
    for suffix in STORE_SUFFIXES:
        base, sep, _ = real.name.partition(suffix)
        if sep and base and real.with_name(base).is_file():
            try:
                with open(real.with_name(base), "rb") as f:
                    if f.read(64).startswith(STORE_HEADS):
                        return str(real.with_name(base))
            except OSError:
                pass
    return None


NOTES_SUFFIX = ".notes.jsonl"


def notes_path(export_path: str | os.PathLike) -> Path:
    """The sidecar of an export that holds the queries' notes: `labels.reviewed.txt` -> `labels.reviewed.notes.jsonl`."""
    p = Path(export_path)
    stem = p.name.rpartition(".")[0] if "." in p.name.lstrip(".") else p.name
    return p.with_name(stem + NOTES_SUFFIX)


def write_query_notes(ws, export_path: str | os.PathLike, texts: dict[str, str] | None = None) -> Path | None:
    """The notes typed for queries (in the app, `n`), beside an export: a queries file in JSONL, one query a line
    (`{"id", "text", "notes"}`), which `--queries` and `labels import --queries` read back. Only queries with
    notes; none: nothing written (an earlier sidecar stays). `texts`: {query ID: text} (the app's --queries)
    for the queries the store holds by ID only. Returns its path, or None."""
    from rankgate.core.outfile import is_stream

    texts = texts or {}
    rows = [{"id": q.id, "text": q.text or texts.get(q.id, ""), "notes": q.notes} for q in ws.queries()
            if q.notes.strip()]
    if not rows or is_stream(export_path):  # (/dev/null, a pipe: no folder to put a sidecar in; the caller says)
        return None
    target = notes_path(export_path)
    refuse_store_target(ws, target)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    write_export(target, text.encode("utf-8", "surrogatepass"))
    return target


def export_time() -> str:
    """Now, in whole seconds UTC; SOURCE_DATE_EPOCH fixes it for reproducible exports."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.strip().isdigit():
        t = _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc)
    else:
        t = _dt.datetime.now(_dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _reach(ws) -> str:
    """What `rankgate labels` commands take to reach this workspace (a note's hint works as printed, also
    for the app's workspace of a qrels file, whose name the user never typed)."""
    from shlex import quote

    from rankgate.store.sync_record import QrelsFile

    manifest = getattr(ws, "manifest", None)
    if manifest is None or isinstance(manifest, QrelsFile):  # a qrels file's workspace has no folder to name
        return f"--db {quote(str(ws.path))}"
    return f"-b {quote(str(manifest.folder))}"


def _header(fmt: str, rows: list, name: str, digest: str, judged_by: str | None, all_reviewers: bool,
            unresolved: int, notes: list[str], reach: str = "") -> tuple[dict, tuple[int, int]]:
    """The export's header, and (adjudicated, needs review) counts; notes for people go into `notes`
    (`reach`: the workspace's `-b FOLDER` or `--db FILE`, for their commands)."""
    header: dict = {"version": name, "content_hash": digest, "exported_at": export_time()}
    cvs = {s["collection_version"] for _, _, s in rows}
    if len(cvs) == 1 and "" not in cvs:
        header["collection_version"] = cvs.pop()
    elif len(cvs) > 1 and fmt != "jsonl":
        notes.append("the labels have several collection versions; only jsonl keeps them per label")
    adjudicated = sum(1 for _, _, s in rows if reached(s) == "adjudicated")
    needs = sum(1 for _, _, s in rows if s.get("needs_review"))
    if judged_by is not None:
        header["reviewer"] = judged_by
    else:
        names = {r for _, _, s in rows for r in s.get("reviewers", (s["reviewer"],))}
        if len(names) == 1 and not adjudicated and not all_reviewers:
            header["reviewer"] = names.pop()
    for key, n in (("unresolved", unresolved), ("adjudicated", adjudicated), ("needs_review", needs)):
        if n:
            header[key] = n
    if unresolved and judged_by is None:
        command = f"rankgate labels disagreements {reach}".strip()
        notes.append(f"{unresolved} disagreement{'s' if unresolved != 1 else ''} not adjudicated: "
                     f"exported with the most recent judgment's grade; `{command}` lists them, "
                     "--require-adjudication refuses")
    if needs:
        notes.append(f"{needs} label{'s' if needs != 1 else ''} carried by a migration still need review "
                     "(`rankgate labels list` marks them)")
    return header, (adjudicated, needs)


def _trec(where: str, rows: list, header: dict | None, columns: dict | None = None) -> str:
    """`columns`: the iteration column and separator the store's TREC input had (`Q0`, a tab), recorded by its
    import; else trec_eval's `0` and a space."""
    from rankgate.core.formats.trec import format_trec_qrels

    bad = next(((q, d) for q, d, _ in rows if len(q.split()) != 1 or len(d.split()) != 1 or q.startswith("#")),
               None)
    if bad:
        raise InputError(where, f"query {bad[0]!r} / document {bad[1]!r}: TREC qrels cannot hold IDs with spaces, "
                         "nor a query ID that starts with '#' (a comment line); export json-graded or jsonl")
    column, sep = _columns(columns)
    if (column, sep) == ("0", " "):
        return format_trec_qrels(((q, d, s["grade"]) for q, d, s in rows), header)
    return format_trec_qrels((), header) + "".join(f"{sep.join((q, column, d, str(s['grade'])))}\n"
                                                   for q, d, s in rows)


def _columns(columns) -> tuple[str, str]:
    """A recorded (column, separator) when it is one a TREC line can hold, else ("0", " "): a short printable
    word (trec_eval never reads it; an input's terminal escape or 3,000-character column is not copied onto
    every exported line)."""
    if isinstance(columns, dict):
        column, sep = columns.get("column"), columns.get("sep")
        if isinstance(column, str) and column and len(column.split()) == 1 and column == column.strip() \
                and not column.startswith("#") and sep in (" ", "\t") and len(column) <= 32 and column.isprintable():
            return column, sep
    return "0", " "


def _json(fmt: str, queries: dict, labels: dict, rows: list, header: dict | None, notes: list[str]
          ) -> tuple[str, int]:
    """(text, judgments left out) of `json` (binary: the documents graded >= 1) or `json-graded`."""
    body: dict = {}
    for q in queries:
        per = labels.get(q, {})
        if fmt == "json":
            body[q] = list(per)
        else:
            body[q] = {d: s["grade"] for d, s in per.items()}
    left_out = 0
    if fmt == "json":
        left_out = len(rows) - sum(len(per) for per in labels.values())
    obj = body if header is None else {"meta": header, "qrels": body}
    text = json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    if left_out:
        notes.append(f"binary json lists documents with grade >= 1 only: {left_out} judgments with a "
                     "lower grade are left out (json-graded keeps them)")
    above = sum(1 for _, _, s in rows if s["grade"] > 1)
    if fmt == "json" and above:
        notes.append(f"binary json: {above} judgments graded above 1 are listed as relevant (1)")
    return text, left_out


def _jsonl(states: list[tuple[str, str, dict, bool]], header: dict | None) -> str:
    """One judgment a line: (query, doc, state, is it a pair's label) each."""
    lines = [] if header is None else [json.dumps({"meta": header}, ensure_ascii=False)]
    for q, d, s, label in states:
        obj = {"query": q, "doc": d, "grade": s["grade"]}
        for k in ("reason", "collection_version", "reviewer"):
            if s[k]:
                obj[k] = s[k]
        how = reached(s) if label else ""
        if how and how != "single":
            obj["reached"] = how
        if label and len(s.get("reviewers", ())) > 1:
            obj["reviewers"] = list(s["reviewers"])
        if s.get("needs_review"):
            obj["needs_review"] = True
        if s.get("migrated_from"):
            obj["migrated_from"] = list(s["migrated_from"])
        if s.get("unsure"):
            obj["unsure"] = s["unsure"]
        lines.append(json.dumps(obj, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _every_judgment(ws) -> list[tuple[str, str, dict, bool]]:
    """(query, doc, state, is_label) of every standing reviewer judgment, then the pair's adjudication
    (as a label reached "adjudicated")."""
    out = []
    for q in ws._queries:
        adjq = ws._adj.get(q, {})
        for d, revs in ws._labels.get(q, {}).items():
            for r in revs.values():
                if r.get("removed") is None:
                    out.append((q, d, r, False))
            adj = adjq.get(d)
            if standing(adj):
                out.append((q, d, dict(adj, reached="adjudicated"), True))
    return out
