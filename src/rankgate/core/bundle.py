"""Everything one evaluation reads: qrels, runs, queries, and the manifest if any.

The one place a benchmark folder (its manifest) and the flags become qrels, runs and
queries: the CLI reads through `load_bundle`; the review app, which reads runs through
its cache and leaves a bad run out, through its parts (find_manifest, run_specs,
read_run_files, Bundle.of)."""

from __future__ import annotations

import os
from dataclasses import field
from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)
from pathlib import Path
from typing import Callable, Iterable

from rankgate.core.benchmark import Manifest, is_benchmark, load_manifest
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, read_runs, split_run_spec
from rankgate.core.model import Catalog, Qrels, Query, Run


@dataclass
class Bundle:
    qrels: Qrels
    runs: dict[str, Run]
    queries: dict[str, Query] = field(default_factory=dict)
    manifest: Manifest | None = None
    no_answer: set[str] = field(default_factory=set)
    files: list[tuple[str, str]] = field(default_factory=list)  # (role, path) of every input read
    access: object = None  # core.acl.Access: who may see which document, when an ACL is declared

    def run(self, name: str) -> Run:
        if name not in self.runs:
            raise InputError("runs", f"unknown run {name!r} (loaded: {', '.join(sorted(self.runs)) or 'none'})")
        return self.runs[name]

    @property
    def must_pass(self) -> list[str]:
        return [q.id for q in self.queries.values() if q.must_pass]


    @classmethod
    def of(cls, qrels: Qrels, runs: dict[str, Run], queries: dict[str, Query], manifest: Manifest | None,
           files: list[tuple[str, str]] | None = None) -> "Bundle":
        """A bundle whose no-answer queries are the queries' and the manifest's."""
        no_answer = {qid for qid, query in queries.items() if query.no_answer}
        if manifest is not None:
            known = set(qrels.query_ids) | set(queries)
            stray = [qid for qid in manifest.no_answer if qid not in known]
            if stray:  # a typo would leave a query with no relevant document scored as a failure
                from rankgate.core.formats.textio import shorten

                raise InputError(str(manifest.path), f"no_answer: query {shorten(stray[0])} is neither in the qrels nor "
                                 "in the queries file (expected the IDs of queries that have no relevant document)")
            no_answer |= set(manifest.no_answer)
        return cls(qrels, runs, queries, manifest, no_answer, files or [])


def find_manifest(benchmark: str | Manifest | None, qrels: str | None) -> tuple[Manifest | None, str | None]:
    """The manifest of the benchmark folder named by `benchmark` (or that manifest itself), or by `qrels`
    when that is a benchmark folder (then no qrels file is named); and the qrels file named."""
    if isinstance(benchmark, Manifest):
        return benchmark, qrels
    if benchmark:
        return load_manifest(benchmark), qrels
    if qrels and is_benchmark(qrels):
        return load_manifest(qrels), None
    return None, qrels


def run_specs(runs: list[str] | None, manifest: Manifest | None) -> list[str]:
    """The run files to read ([NAME=]FILE): those named, else the manifest's."""
    specs = list(runs or []) or (list(manifest.runs) if manifest else [])
    if not specs:
        raise InputError("runs", "no runs given (expected --runs FILE, repeatable, or a benchmark folder)")
    return specs


class SecondRunName(InputError):
    """Two runs of one name (two files both called run.trec): not a broken file, a naming clash."""

    def __init__(self, path: str, name: str, first: str):
        same = " (the same file, given twice)" if os.path.abspath(str(path)) == os.path.abspath(str(first)) else ""
        super().__init__(path, f"a second run named {name!r} (first from {first}){same}; name runs with NAME=FILE, "
                         "e.g. base=a/run.trec and cand=b/run.trec")


def read_run_files(specs: list[str], read: Callable[[str, str | None, str], Iterable[Run]],
                   on_error: Callable[[str, Exception], None] | None = None) -> dict[str, Run]:
    """Every run of the run files `specs`, by name; `read(spec, name, path)` reads one file's runs.
    Two runs of one name are an error. With `on_error(path, error)`, a file that cannot be read
    (InputError, OSError) is handed to it and left out; without, the error is raised."""
    loaded: dict[str, Run] = {}
    for spec in specs:
        name, path = split_run_spec(spec)
        try:
            for run in read(spec, name, path):
                if run.name in loaded:
                    raise SecondRunName(path, run.name, loaded[run.name].path)
                loaded[run.name] = run
        except (InputError, OSError) as e:
            if on_error is None:
                raise
            on_error(path, e)
    return loaded


def load_bundle(qrels: str | None = None, runs: list[str] | None = None, *, benchmark: str | Manifest | None = None,
                queries: str | None = None, qrels_format: str = "auto", run_format: str = "auto",
                progress=None, run_reader=None, labels=None, acl: str | None = None,
                suggestions: str | None = None, on_run_error=None) -> Bundle:
    """Read the inputs. A benchmark folder supplies whatever the flags leave out.

    `progress(path)` returns a byte-progress callback for a run file, or None.
    `run_reader(path, name, qrels, progress)` may read a run another way (lean: jsonl_lean.lean_run_reader, which
    respects a forced --run-format); None = the usual reader.
    `labels(catalog)` may give the judgments and the queries they know (a label workspace's) instead of a
    qrels file; then the manifest's queries file is read only when they know none.
    `acl` names an ACL file (or "corpus") over the manifest's `acl` (core/acl.py); with one, runs are read whole.
    `suggestions`: a suggestions journal (store/suggestions.py) whose grades count for the pairs nobody
    judged (`--with-suggestions`); it is an input like the others.
    `on_run_error(path, error)`: a run file that cannot be read is handed to it and left out (validate lists
    every file's problem); without, its error is raised.
    """
    manifest, qrels = find_manifest(benchmark, qrels)
    has_acl = bool(acl or getattr(manifest, "acl", None))  # core/acl.py's acl_source; acl.py loads only with one
    if has_acl:
        run_reader = None  # a leak may sit anywhere in a ranking: keep every row
    catalog = Catalog()
    files: list[tuple[str, str]] = []
    if manifest is not None:
        files.append(("manifest", str(manifest.path)))
    known: dict[str, Query] = {}
    if labels is not None:
        q, known = labels(catalog)
    else:
        qrels_path = qrels or (str(manifest.qrels) if manifest else None)
        if not qrels_path:
            raise InputError("qrels", "no qrels given (expected --qrels FILE or a benchmark folder)")
        q = read_qrels(qrels_path, qrels_format, catalog)
        files.append(("qrels", qrels_path))

    if suggestions:
        q = with_suggestions(q, suggestions)
        files.append(("suggestions", str(suggestions)))

    def read(spec: str, name: str | None, path: str) -> Iterable[Run]:
        report = progress(path) if progress else None
        other = run_reader(path, name, q, report) if run_reader and run_format in ("auto", "trec", "jsonl") else None
        files.append(("run", path))
        return other or read_runs(spec, run_format, catalog, report)

    loaded = read_run_files(run_specs(runs, manifest), read, on_run_error)
    qpath = queries or (str(manifest.queries) if manifest and manifest.queries and not known else None)
    qs = dict(known)
    if qpath:
        from rankgate.core.formats.corpus import read_queries

        qs.update(read_queries(qpath))
        files.append(("queries", qpath))
    bundle = Bundle.of(q, loaded, qs, manifest, files)
    if labels is None and (has_acl or qpath):  # else load_access finds nothing to check
        from rankgate.core.acl import check_known, load_access

        corpus = str(manifest.corpus) if manifest is not None and manifest.corpus else None
        bundle.access = load_access(manifest, acl, qpath, corpus)
        if bundle.access is not None:
            check_known(bundle.access, catalog.docs.codes, corpus)
            bundle.files.append(("acl", bundle.access.source))  # with `acl = "corpus"` the corpus: a receipt hashes it
    return bundle


def with_suggestions(q: Qrels, path: str) -> Qrels:
    """The qrels plus the suggested grades of pairs they do not judge (of queries they know)."""
    import numpy as np

    from rankgate.core.judge import suggested_grades

    cat = q.catalog
    known = set(q.query_codes) | set(np.unique(q.q).tolist())
    have = set(zip(q.q.tolist(), q.doc.tolist()))
    add = []
    for (qid, doc), grade in suggested_grades(path).items():
        qc = cat.queries.get(qid)
        if qc is None or qc not in known:
            continue
        dc = cat.docs.code(doc)
        if (qc, dc) not in have:
            add.append((qc, dc, grade))
    meta = dict(q.meta, suggestions_counted=len(add))
    if not add:
        return Qrels(q.path, cat, q.q, q.doc, q.grade, q.query_codes, q.format, q.details, q.problems, meta)
    aq, ad, ag = (np.array(x) for x in zip(*add))
    return Qrels(q.path, cat, np.r_[q.q, aq].astype(q.q.dtype), np.r_[q.doc, ad].astype(q.doc.dtype),
                 np.r_[q.grade, ag].astype(q.grade.dtype), q.query_codes, q.format, q.details, q.problems, meta)


def sha256_file(path: str | Path) -> str:
    import hashlib

    from rankgate.core.formats.textio import open_regular

    h = hashlib.sha256()
    with open_regular(path) as f:  # a FIFO or a device (/dev/zero) is refused, never read for ever
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
