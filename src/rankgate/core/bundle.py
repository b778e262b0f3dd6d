"""Everything one evaluation reads: qrels, runs, queries, and the manifest if any."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rankgate.core.benchmark import Manifest, is_benchmark, load_manifest
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, read_runs, split_run_spec
from rankgate.core.formats.corpus import read_queries
from rankgate.core.model import Catalog, Qrels, Query, Run


@dataclass
class Bundle:
    qrels: Qrels
    runs: dict[str, Run]
    queries: dict[str, Query] = field(default_factory=dict)
    manifest: Manifest | None = None
    no_answer: set[str] = field(default_factory=set)
    files: list[tuple[str, str]] = field(default_factory=list)  # (role, path) of every input read

    def run(self, name: str) -> Run:
        if name not in self.runs:
            raise InputError("runs", f"unknown run {name!r} (loaded: {', '.join(sorted(self.runs)) or 'none'})")
        return self.runs[name]

    @property
    def must_pass(self) -> list[str]:
        return [q.id for q in self.queries.values() if q.must_pass]


def load_bundle(qrels: str | None = None, runs: list[str] | None = None, *, benchmark: str | None = None,
                queries: str | None = None, qrels_format: str = "auto", run_format: str = "auto",
                progress=None, run_reader=None) -> Bundle:
    """Read the inputs. A benchmark folder supplies whatever the flags leave out.

    `progress(path)` returns a byte-progress callback for a run file, or None.
    `run_reader(path, name, qrels, progress)` may read a run another way (the fast path); None = the usual reader.
    """
    manifest = load_manifest(benchmark) if benchmark else None
    if manifest is None and qrels and is_benchmark(qrels):
        manifest, qrels = load_manifest(qrels), None
    catalog = Catalog()
    files: list[tuple[str, str]] = []
    if manifest is not None:
        files.append(("manifest", str(manifest.path)))
    qrels_path = qrels or (str(manifest.qrels) if manifest else None)
    if not qrels_path:
        raise InputError("qrels", "no qrels given (expected --qrels FILE or a benchmark folder)")
    q = read_qrels(qrels_path, qrels_format, catalog)
    files.append(("qrels", qrels_path))
    specs = list(runs or []) or (list(manifest.runs) if manifest else [])
    if not specs:
        raise InputError("runs", "no runs given (expected --runs FILE, repeatable, or a benchmark folder)")
    loaded: dict[str, Run] = {}
    for spec in specs:
        name, path = split_run_spec(spec)
        report = progress(path) if progress else None
        other = run_reader(path, name, q, report) if run_reader and run_format in ("auto", "trec") else None
        for run in other or read_runs(spec, run_format, catalog, report):
            if run.name in loaded:
                raise InputError(path, f"a second run named {run.name!r} (first from {loaded[run.name].path}); "
                                 "name runs with NAME=FILE")
            loaded[run.name] = run
        files.append(("run", path))
    qpath = queries or (str(manifest.queries) if manifest and manifest.queries else None)
    qs: dict[str, Query] = {}
    if qpath:
        qs = read_queries(qpath)
        files.append(("queries", qpath))
    no_answer = {qid for qid, query in qs.items() if query.no_answer}
    if manifest:
        no_answer |= set(manifest.no_answer)
    return Bundle(q, loaded, qs, manifest, no_answer, files)


def sha256_file(path: str | Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
