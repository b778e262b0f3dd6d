"""Import qrels (every core format) and query files into a workspace, all or nothing; and read the
reviewers' exports that a merge brings together."""

from __future__ import annotations

import json
import os
from itertools import repeat
from pathlib import Path
from typing import Iterable, Mapping

from rankgate.core.errors import InputError
from rankgate.store.columns import MORE, LazyLabels, new_columns, packed
from rankgate.store.durable import FOLD_ON_CLOSE, Batch
from rankgate.store.labels import (
    describe_label,
    differs,
    hash_mismatch,
    label_state,
    pair_label,
    pair_state,
    standing,
    tombstone,
    with_stored_details,
)
from rankgate.store.records import (
    QUERY_DEFAULTS,
    QUERY_FIELDS,
    FILE_SOURCE,
    Conflict,
    ImportConflicts,
    ImportReport,
    check_id,
    check_on_conflict,
    query_fields,
    query_record,
    query_state,
)


def import_files(ws, files: Iterable[str | os.PathLike], *, queries: Iterable[str | os.PathLike] = (),
                 on_conflict: str = "stop", collection_version: str | None = None, reviewer: str | None = None,
                 why: str | None = None, dry_run: bool = False, texts: Mapping[str, str] | None = None
                 ) -> ImportReport:
    """Import qrels (every core format) and query files, all or nothing.

    `texts`: {document ID: text hash} of the corpus the labels were judged on (core/staleness.py): each
    imported label of such a document records its hash (an unchanged label too).

    A file is read as queries when it looks like one (JSONL with id/text, or
    `qid<TAB>text`), or when passed in `queries`. Any unreadable file imports
    nothing. Labels that disagree with the store (another grade, another reason
    or collection version, or a label that was removed) are conflicts:
    `on_conflict="stop"` raises `ImportConflicts` listing them, "keep" keeps the
    store's, "overwrite" takes the file's. Import adds and changes; it never removes.

    Provenance: an imported judgment is the reviewer's its line or the file's
    header names, else the file's own (reviewer "file:NAME", NAME the file's name):
    never the importer's. History records who imported it (`Event.who`) apart.
    """
    from rankgate.core.formats.corpus import read_queries

    files, query_files = [str(f) for f in files], [str(f) for f in queries]
    qrels_list, query_list = [], []
    for f in files:
        kind, read = read_labels_or_queries(f)
        if kind == "queries":
            query_list.append((f, read))
        else:
            qrels_list.append(read)
    for f in query_files:
        query_list.append((f, read_queries(f)))
    return _import(ws, qrels_list, query_list, files=files + query_files, on_conflict=on_conflict,
                   collection_version=collection_version, reviewer=reviewer, why=why, dry_run=dry_run,
                   texts=texts, columns=trec_columns([q.path for q in qrels_list]))


def read_labels_or_queries(path: str) -> tuple[str, object]:
    """("queries", its queries) or ("qrels", its Qrels): a file is read as it looks (`detect_kind`). One taken for
    `qid<TAB>text` that does not read as queries, whose first line has trec_eval's iteration column (`1<TAB>0 d1 1`,
    a grade that is no number, a line of 3 or 5 fields) is qrels after all: read as trec_eval reads it, or
    refused as qrels (file:line, 4 fields expected), not as a queries file."""
    from rankgate.core.formats import detect_kind, read_qrels
    from rankgate.core.formats.corpus import read_queries

    if detect_kind(path) != "queries":
        return "qrels", read_qrels(path)
    try:
        return "queries", read_queries(path)
    except InputError:
        if not _iteration_column(path):
            raise
    return "qrels", read_qrels(path)


def _iteration_column(path: str) -> bool:
    """The file's first line has trec_eval's iteration column (`0` or `Q0`) as its second field."""
    from rankgate.core.formats.textio import open_input

    try:
        with open_input(path) as f:
            head = f.read(4096).decode("utf-8", "replace").lstrip("\ufeff")
    except (OSError, InputError):
        return False
    first = next((ln.split() for ln in head.split("\n") if ln.strip() and not ln.startswith("#")), [])
    return len(first) >= 3 and first[1] in ("0", "Q0")


def import_benchmark(ws, manifest, on_conflict: str = "stop", *, fold: bool = True, texts=None) -> ImportReport:
    """The first open of a benchmark's workspace: its qrels and queries, its collection version. `fold=False`:
    a large import stays in the journal (safe there), for the caller to fold (`ws.fold_later`). `texts`: a
    function giving {document ID: text hash} of the corpus (`labels import -b`: the benchmark's), called only
    when there is something to import; each label records its document's hash, as `import_files` does."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats.corpus import read_queries

    qrels = read_qrels(manifest.qrels)
    query_list = [(str(manifest.queries), read_queries(manifest.queries))] if manifest.queries else []
    cv = manifest.collection_version or None
    meta = {"benchmark": {"name": manifest.name, "folder": str(Path(manifest.folder).resolve()),
                          "qrels": str(Path(manifest.qrels).resolve()),
                          "imported": ws._clock()},
            "collection_version": manifest.collection_version or ws.collection_version}
    report = _import(ws, [qrels], query_list, files=[str(manifest.qrels)] + [q for q, _ in query_list],
                     on_conflict=on_conflict, collection_version=cv, reviewer=None,
                     why=f"import benchmark {manifest.name}", dry_run=False, meta=meta,
                     no_answer=manifest.no_answer, fold=fold, columns=trec_columns([str(manifest.qrels)]),
                     texts=texts(qrels) if texts is not None else None)
    report.file_labels = len(qrels.q)  # (not a field: not in the report's dict) the file's rows, as read
    return report


def adopt_qrels_workspace(ws, manifest) -> ImportReport:
    """A benchmark folder's first open takes over the workspace the app made for its qrels file (`rankgate
    review QRELS` before the folder existed): its labels stay as they are (the file's and the edits made
    since; nothing is imported again over them), the folder's queries file and collection version come in,
    and the workspace is the folder's from now on."""
    from rankgate.core.formats.corpus import read_queries

    query_list = [(str(manifest.queries), read_queries(manifest.queries))] if manifest.queries else []
    meta = {"benchmark": {"name": manifest.name, "folder": str(Path(manifest.folder).resolve()),
                          "qrels": str(Path(manifest.qrels).resolve()), "imported": ws._clock()},
            "collection_version": manifest.collection_version or ws.collection_version}
    return _import(ws, [], query_list, files=[q for q, _ in query_list], on_conflict="keep",
                   collection_version=manifest.collection_version or None, reviewer=None,
                   why=f"benchmark {manifest.name} takes over the workspace of {manifest.qrels}", dry_run=False,
                   meta=meta, no_answer=manifest.no_answer)


def _import(ws, qrels_list: list, query_list: list, *, files: list[str], on_conflict: str,
            collection_version: str | None, reviewer: str | None, why: str | None, dry_run: bool,
            meta: dict | None = None, no_answer: Iterable[str] = (), fold: bool = True,
            texts: Mapping[str, str] | None = None, columns: dict | None = None) -> ImportReport:
    with ws._mutex:
        ws._check_writable()
        if meta is None:  # a benchmark's first open imports its labels, blind or not
            ws._no_peeking("an import (its conflicts)")
        check_on_conflict(on_conflict, str(ws.path))
        who, now = ws._stamp(reviewer)
        report = ImportReport(files=files, dry_run=dry_run)
        # 1. Everything the files say, checked against each other.
        incoming, declared = _read_files(qrels_list, query_list, no_answer, collection_version, report)
        # 2. Against the store.
        batch = Batch(ws, who, now)
        conflicts: list[Conflict] = []
        _import_queries(ws, batch, declared, on_conflict, why, conflicts, report)
        _import_labels(ws, batch, incoming, on_conflict, why, conflicts, report, texts or {})
        report.conflicts = conflicts
        if conflicts and on_conflict == "stop":
            raise ImportConflicts(str(ws.path), conflicts)
        if columns and not ws._meta.get(TREC_COLUMNS):  # the store's TREC exports write them from now on
            batch.ops.append(["meta", {TREC_COLUMNS: columns}])
        if meta:
            batch.ops.append(["meta", meta])
            if not batch.events:
                batch.event("benchmark", None, None, None, dict(meta),
                            why or f"import {', '.join(files) or 'benchmark'}")
        if dry_run or not batch.events:
            return report
        later = not fold and batch.ids >= FOLD_ON_CLOSE
        if later:  # not folded by the commit either (a large journal is due)
            ws._retry_at = max(ws._retry_at, (ws._journal.count if ws._journal is not None else 0) + 2)
        # a new store's large import, folded later: its files are written after the app's first frame too
        ws._commit(batch.ops, batch.events, unwritten=later and meta is not None)
        if batch.ids >= FOLD_ON_CLOSE and (ws._unwritten is not None or ws._journal is not None and ws._journal.count):
            if fold:
                ws._fold_quietly()  # a large import ends folded into the snapshot: no open replays it
            else:  # the caller folds it (the app: after its first frame, at the latest when it closes the store)
                ws.fold_later = ws._seq
        return report


TREC_COLUMNS = "trec_columns"  # the store's meta: the iteration column and separator its TREC exports write


def trec_columns(paths: list[str]) -> dict | None:
    """The iteration column and separator of the first TREC qrels file (`{"column": "Q0", "sep": " "}`, as most
    of its lines have them), for the store's TREC exports to write what its input had; None: no TREC file (an
    export then writes trec_eval's own `0`)."""
    from collections import Counter
    from itertools import islice

    from rankgate.core.formats import detect_format
    from rankgate.store.sync import _open_text

    for path in paths:
        try:
            if detect_format(path) != "trec":
                continue
            with _open_text(path) as f:  # its first thousand judgment lines say it (as trec_layout counts)
                lines = (ln.rstrip("\r\n") for ln in f if ln.strip() and not ln.startswith("#"))
                kinds = Counter((ln.split()[1], "\t" if ln.count("\t") == 3 else " ")
                                for ln in islice(lines, 1000) if len(ln.split()) == 4)
        except (OSError, InputError):
            continue
        if kinds:
            column, sep = kinds.most_common(1)[0][0]
            return {"column": column, "sep": sep}
    return None


def _read_files(qrels_list: list, query_list: list, no_answer: Iterable[str], collection_version: str | None,
                report: ImportReport) -> tuple[dict, dict]:
    """({(qid, doc): ((grade, reason, collection version, reviewer), source)}, {qid: (fields, source,
    explicit)}) of every file; two files that disagree about a label or a query's description are an error."""
    incoming: dict[tuple[str, str], tuple[tuple, str]] = {}
    declared: dict[str, tuple[dict, str, bool]] = {}  # qid -> (fields, source, explicit)
    for qrels in qrels_list:
        source = qrels.path
        file_cv = collection_version if collection_version is not None else \
            str(qrels.meta.get("collection_version", "") or "")
        qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
        qids = [qn[c] for c in qrels.q.tolist()]
        docs = [dn[c] for c in qrels.doc.tolist()]
        grades = qrels.grade.tolist()
        note = hash_mismatch(qrels.path, qrels.meta.get("content_hash"), zip(qids, docs, grades))
        if note:
            report.notes.append(note)
        file_reviewer = header_reviewer(qrels) or file_source(qrels.path)
        for qid in qrels.query_ids:
            declared.setdefault(qid, (dict(QUERY_DEFAULTS), source, False))
        details = qrels.details
        plain = ("", file_cv, file_reviewer)  # a judgment with no details of its own
        pairs = list(zip(qids, docs))
        if details:  # (comprehensions, not a loop a label: a first open imports 80,000 of them)
            states = [(grade, detail.reason, detail.collection_version or file_cv, detail.reviewer or file_reviewer)
                      if (detail := details.get(pair)) is not None else (grade,) + plain
                      for pair, grade in zip(pairs, grades)]
        else:
            states = [(grade,) + plain for grade in grades]
        if not incoming:  # the first file: each pair once (readers refuse a pair given twice), taken whole
            incoming.update(zip(pairs, zip(states, repeat(source))))
            if len(incoming) == len(pairs):
                continue
            incoming.clear()  # (a pair given twice after all: one by one, as below)
        for (qid, doc), state in zip(pairs, states):
            prev = incoming.get((qid, doc))
            if prev is not None and prev[0][:2] != state[:2]:
                raise InputError(source, f"document {doc!r} of query {qid!r} is judged "
                                 f"{describe_label(_state(state))} here but {describe_label(_state(prev[0]))} in "
                                 f"{prev[1]}; nothing was imported (fix one of the files)")
            incoming[(qid, doc)] = (state, source)
    for source, qmap in query_list:
        for qid, query in qmap.items():
            fields = query_fields(query)
            prev = declared.get(qid)
            if prev is not None and prev[2] and prev[0] != fields:
                raise InputError(source, f"query {qid!r} is described differently in {prev[1]}; nothing was "
                                 "imported (fix one of the files)")
            declared[qid] = (fields, source, True)
    for qid in no_answer:
        fields, source, explicit = declared.get(qid, (dict(QUERY_DEFAULTS), "the manifest", False))
        declared[qid] = (dict(fields, no_answer=True), source, True)
    for qid in dict.fromkeys(q for q, _ in incoming):
        declared.setdefault(qid, (dict(QUERY_DEFAULTS), "", False))
    return incoming, declared


def _state(t: tuple) -> dict:
    """A file's judgment (grade, reason, collection version, reviewer) as the store's state."""
    return {"grade": t[0], "reason": t[1], "collection_version": t[2], "reviewer": t[3]}


def _import_queries(ws, batch: Batch, declared: dict, on_conflict: str, why: str | None,
                    conflicts: list[Conflict], report: ImportReport) -> None:
    """New queries are added; a file's description fills the stored one's defaults (a clash of two
    descriptions is a conflict)."""
    now = batch.now
    for qid, (fields, source, explicit) in declared.items():
        old = ws._queries.get(qid)
        if old is None:
            rec = query_record(qid, fields, now, now)
            batch.ops.append(["query", rec])
            batch.event("query", qid, None, None, query_state(rec), why or f"import {source}")
            report.queries_added += 1
            continue
        if not explicit:
            continue
        stored = query_state(old)
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
            batch.ops.append(["query", query_record(qid, merged, old["created"], now)])
            batch.event("query", qid, None, stored, merged, why or f"import {source}")
            report.queries_updated += 1


def _import_labels(ws, batch: Batch, incoming: dict, on_conflict: str, why: str | None,
                   conflicts: list[Conflict], report: ImportReport, texts: Mapping[str, str]) -> None:
    """Each file label against the pair's label in the store. A query with no judgment stored yet takes
    its labels as columns: one op and one history document, no record per judgment (store/columns.py)."""
    by_query: dict[str, list] = {}
    for item in incoming.items():  # ((qid, doc), (state, source)), grouped by query
        rows = by_query.get(item[0][0])
        if rows is None:
            rows = by_query[item[0][0]] = []
        rows.append(item)
    for qid, items in by_query.items():
        if _no_labels(ws, qid):
            pairs, values = zip(*items)  # (columns by zip: no loop a label)
            docs = [pair[1] for pair in pairs]
            states, sources = zip(*values)
            grades, reasons, versions, reviewers = map(list, zip(*states))
            whys = [why] * len(items) if why else [f"import {source}" for source in sources]
            cols = new_columns(qid, docs, grades, reasons, versions, reviewers, batch.now)
            if texts and any(d in texts for d in docs):  # the texts they were judged on (core/staleness.py)
                cols[MORE] = [{"text_hash": texts[d]} if d in texts else None for d in docs]
            batch.new_columns("import", cols, packed(whys))
            report.added += len(items)
            continue
        for (_, doc), (state, source) in items:
            _import_label(ws, batch, qid, doc, _state(state), source, on_conflict, why, conflicts, report,
                          texts.get(doc, ""))


def _no_labels(ws, qid: str) -> bool:
    """No judgment nor adjudication of the query is stored (removed ones included)."""
    labels = ws._labels
    if isinstance(labels, LazyLabels):
        if qid in labels.raw or dict.get(labels, qid):
            return False
    elif labels.get(qid):
        return False
    return not ws._adj.get(qid)


def _import_label(ws, batch: Batch, qid: str, doc: str, state: dict, source: str, on_conflict: str,
                  why: str | None, conflicts: list[Conflict], report: ImportReport, text: str = "") -> None:
    now = batch.now
    revs = ws._labels.get(qid, {}).get(doc, {})
    adj = ws._adj.get(qid, {}).get(doc)
    final = pair_label(revs, adj)
    live = label_state(final)
    if not revs and adj is None:
        report.added += 1
    elif live is None:  # removed by a reviewer: bringing it back is a decision
        tomb = tombstone(revs, adj, None) or {}
        conflicts.append(Conflict(qid, doc, f"it removed on {tomb.get('removed')} (was "
                                  f"{describe_label(tomb)})", describe_label(state), source))
        if on_conflict != "overwrite":
            report.kept += 1
            return
        report.changed += 1
    else:
        if not differs(live, state):
            report.unchanged += 1
            own = revs.get(final.get("reviewer", "")) if final else None
            if text and own is not None and own.get("text_hash") != text and own.get("removed") is None:
                rec = dict(own, text_hash=text)  # now known: the text it stands on (a confirm in history)
                batch.ops.append(["review", rec])
                batch.event("confirm", qid, doc, label_state(own), label_state(rec),
                            why or f"import {source}: the text it was judged on", scope="reviewer")
            return
        conflicts.append(Conflict(qid, doc, describe_label(live), describe_label(state), source))
        if on_conflict != "overwrite":
            report.kept += 1
            return
        state = with_stored_details(state, live)
        report.changed += 1
    # The pair holds exactly the file's judgment afterwards (as a store with one judgment per
    # pair did): other reviewers' judgments and an adjudication are retired, history keeps them.
    for r in revs.values():
        if r.get("removed") is None and r["reviewer"] != state["reviewer"]:
            batch.ops.append(["review", dict(r, updated=now, removed=now)])
    if standing(adj):
        batch.ops.append(["adjudication", dict(adj, updated=now, removed=now)])
    rec = {"query": qid, "doc": doc, "grade": state["grade"], "reason": state["reason"],
           "collection_version": state["collection_version"], "reviewer": state["reviewer"],
           "created": final.get("created") or now if final else now, "updated": now, "removed": None}
    if text:
        rec["text_hash"] = text
    batch.ops.append(["review", rec])
    batch.event("import", qid, doc, pair_state(revs, adj, final), label_state(rec), why or f"import {source}")


# --------------------------------------------------------------------------- reviewers' exports


def file_source(path: str) -> str:
    """Whose an imported judgment is when its file names no reviewer: the file's (`file:qrels.trec`)."""
    return FILE_SOURCE + os.path.basename(str(path).rstrip("/\\")) if path else FILE_SOURCE + "unnamed"


def header_reviewer(qrels) -> str:
    """The reviewer an export names in its header (`# reviewer: NAME`, `"meta": {"reviewer": NAME}`), if any."""
    name = qrels.meta.get("reviewer")
    return name.strip() if isinstance(name, str) and name.strip() and not any(ord(c) < 32 for c in name) else ""


def read_reviewer_file(path: str, name: str | None) -> tuple[list, list[str], list[str]]:
    """A reviewer's export: ([((query, doc, reviewer or None for an adjudication), state, where)], declared
    queries, notes). JSONL may hold several reviewers per pair; other formats one reviewer, named in their
    header or by NAME=FILE."""
    from rankgate.core.formats import detect_format, read_qrels

    kind = detect_format(path) if os.path.exists(path) else "missing"
    if kind == "missing":
        raise InputError(path, "no such file")
    if kind == "jsonl":
        return _read_reviewer_jsonl(path, name)
    qrels = read_qrels(path)
    header = header_reviewer(qrels) or name
    rows = []
    cv = str(qrels.meta.get("collection_version", "") or "")
    for qid, doc, grade, detail in qrels.judgments():
        who = detail.reviewer or header
        if not who:
            raise InputError(path, "names no reviewer (no reviewer in its lines or its header): write it as "
                             "NAME=FILE, or export it with `rankgate labels export --judged-by NAME`")
        check_id(qid, "query", path)
        check_id(doc, "document", path)
        rows.append(((qid, doc, who), {"grade": int(grade), "reason": detail.reason,
                                       "collection_version": detail.collection_version or cv,
                                       "reviewer": who}, path))
    note = hash_mismatch(path, qrels.meta.get("content_hash"), ((q, d, s["grade"]) for (q, d, _), s, _ in rows))
    return rows, qrels.query_ids, [note] if note else []


def _read_reviewer_jsonl(path: str, name: str | None) -> tuple[list, list[str], list[str]]:
    from rankgate.core.formats.jsonfmt import judgment_detail, jsonl_judgments
    from rankgate.core.formats.textio import iter_lines

    header: dict = {}
    rows = []
    qids: dict[str, None] = {}
    seen: dict[tuple, int] = {}
    labels_only = False
    for lineno, obj in jsonl_judgments(path, iter_lines(path), header):
        detail = judgment_detail(obj, path, lineno)
        if obj.get("reached") is not None and not isinstance(obj["reached"], str):
            raise InputError(path, "field 'reached' must be a string", line=lineno)
        try:
            check_id(obj["query"], "query", path)
            check_id(obj["doc"], "document", path)
        except InputError as e:
            raise InputError(path, e.what, line=lineno) from None
        named = header.get("reviewer") if isinstance(header.get("reviewer"), str) else ""
        who = detail.reviewer or named or name
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
        file_cv = header.get("collection_version") if isinstance(header.get("collection_version"), str) else ""
        state = {"grade": obj["grade"], "reason": detail.reason,
                 "collection_version": detail.collection_version or file_cv or "", "reviewer": who}
        if obj.get("needs_review") is True:
            state["needs_review"] = True
        if isinstance(obj.get("migrated_from"), list):
            state["migrated_from"] = [str(x) for x in obj["migrated_from"]]
        if isinstance(obj.get("unsure"), str) and obj["unsure"].strip():
            state["unsure"] = obj["unsure"].strip()
        rows.append((key, state, f"{path}:{lineno}"))
        qids[obj["query"]] = None
    if not rows:
        raise InputError(path, "no judgments found (expected JSONL judgments with a reviewer)")
    notes = []
    if labels_only:
        notes.append(f"{path} holds labels (one a pair), not every reviewer's judgments: for pairs several "
                     "reviewers judged, only the reviewer named on the line is merged (export with "
                     "--all-reviewers to exchange them all)")
    pairs = {(k[0], k[1]) for k, _, _ in rows}
    if len(pairs) == len(rows):  # one judgment a pair: the labels the header's hash is of
        note = hash_mismatch(path, header.get("content_hash"), ((k[0], k[1], s["grade"]) for k, s, _ in rows))
        if note:
            notes.append(note)
    return rows, list(qids), notes
