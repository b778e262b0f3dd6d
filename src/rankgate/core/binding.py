"""Binding: runs and labels must describe the same corpus.

The labels' collection version comes from the judgments (`collection_version`
per judgment in JSONL, or the qrels file's `meta`), else from the benchmark
manifest. A run's corpus snapshot is `meta.corpus_snapshot`. When both sides
carry a version, they must agree, and the runs compared must agree with each
other; otherwise `check_binding` refuses (an InputError: exit 2) unless told
to allow it. When a side carries nothing, the binding is "unchecked" and the
report says so.
"""

from __future__ import annotations

from collections import Counter

from rankgate.core.errors import InputError
from rankgate.core.model import Qrels, Run

SNAPSHOT_KEY = "corpus_snapshot"
HOW_TO_ALLOW = "pass --allow-snapshot-mismatch or set allow_snapshot_mismatch = true in the policy to compare anyway"


def label_versions(qrels: Qrels, manifest_version: str = "") -> Counter:
    """How many judgments carry each collection version (the header's or the manifest's as a fallback)."""
    versions = Counter(d.collection_version for d in qrels.details.values() if d.collection_version)
    return count_versions(versions, len(qrels), str(qrels.meta.get("collection_version") or ""), manifest_version)


def count_versions(versioned: Counter, total: int, header: str = "", manifest_version: str = "") -> Counter:
    """How many of `total` judgments carry each version, from those that name one (`versioned`): the others
    take the header's version; with none named, all take the header's, else the manifest's."""
    versions = Counter({v: c for v, c in versioned.items() if c > 0})
    if versions:
        unversioned = total - sum(versions.values())
        if unversioned > 0 and header:
            versions[header] += unversioned
        return versions
    fallback = header or manifest_version
    return Counter({fallback: total}) if fallback and total else Counter()


def run_snapshot(run: Run) -> str:
    v = run.meta.get(SNAPSHOT_KEY) if isinstance(run.meta, dict) else None
    return str(v) if v not in (None, "") else ""


def binding_problems(labels: Counter, snaps: dict[str, str], paths: dict[str, str]) -> list[tuple[str, str, str]]:
    """(file, what, the other version) of each way the runs (name -> corpus snapshot, name -> file) and the
    labels (collection version -> judgments) disagree; [] when they agree or a side carries nothing. The
    review app calls it on its store's labels, `check_binding` on a qrels file's."""
    problems: list[tuple[str, str, str]] = []
    carried = {n: s for n, s in snaps.items() if s}
    distinct = sorted(set(carried.values()))
    if len(distinct) > 1:
        listed = ", ".join(f"{n} {s!r}" for n, s in carried.items())
        problems.append((next(iter(paths.values()), ""), f"the runs were made on different corpus snapshots "
                         f"({listed})", ""))
    if labels and carried:
        for name, snap in snaps.items():
            if not snap:
                continue
            other = {v: c for v, c in labels.items() if v != snap}
            if other:
                v, c = max(other.items(), key=lambda kv: (kv[1], kv[0]))
                n = sum(other.values())
                what = (f"the judgments' collection_version is {v!r}" if len(labels) == 1 else
                        f"{n} judgment{' carries' if n == 1 else 's carry'} another collection_version ({v!r}: {c})")
                problems.append((paths[name], f"run {name!r} has corpus_snapshot {snap!r} but {what}", v))
    return problems


def carrier(qrels: Qrels, version: str) -> str:
    """Where a judgment with this collection version is: "query 'q1', document 'd3' (judgments.jsonl:12)",
    or the file's header, or "" (the manifest's version)."""
    for q, d, _, detail in qrels.judgments():
        if detail.collection_version == version:
            line = _line_of(qrels.path, q, d, version)
            return f"query {q!r}, document {d!r} ({qrels.path}{f':{line}' if line else ''})"
    if str(qrels.meta.get("collection_version") or "") == version:
        return f"the header of {qrels.path}"
    return ""


def _line_of(path: str, query: str, doc: str, version: str) -> int | None:
    """The line of a JSONL judgment naming this query, document and version (read only on the error path)."""
    import gzip
    import json

    try:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8-sig", errors="replace") as f:
            for i, line in enumerate(f, 1):
                if version not in line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                values = {str(v) for v in obj.values()} if isinstance(obj, dict) else set()
                if {query, doc, version} <= values:
                    return i
    except (OSError, EOFError):
        return None
    return None


def check_binding(qrels: Qrels, runs: list[Run], *, allow: bool = False, manifest_version: str = "") -> dict:
    """The binding of these runs to the labels; raises InputError on a mismatch unless `allow`."""
    labels = label_versions(qrels, manifest_version)
    snaps = {r.name: run_snapshot(r) for r in runs}
    out = {"labels_collection_version": sorted(labels), "runs_corpus_snapshot": snaps, "status": "bound",
           "problems": []}
    problems = binding_problems(labels, snaps, {r.name: r.path for r in runs})
    carried = {n: s for n, s in snaps.items() if s}
    if not labels or not carried:
        out["status"] = "unchecked"
        missing = [] if labels else ["the judgments carry no collection_version"]
        missing += [] if carried else ["no run carries meta.corpus_snapshot"]
        out["why"] = "; ".join(missing)
    elif len(carried) < len(snaps):
        out["status"] = "partial"
        out["why"] = "runs without a corpus_snapshot: " + ", ".join(n for n, s in snaps.items() if not s)
    if problems:
        if not allow:
            path, what, version = problems[0]
            where = carrier(qrels, version) if version else ""
            raise InputError(path, f"{what}{f', e.g. {where}' if where else ''}; {HOW_TO_ALLOW}")
        out["status"] = "mismatch_allowed"
        out["problems"] = [what for _, what, _ in problems]
    return out
