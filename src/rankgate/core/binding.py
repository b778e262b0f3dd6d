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
    if versions:
        unversioned = len(qrels) - sum(versions.values())
        header = str(qrels.meta.get("collection_version") or "")
        if unversioned > 0 and header:
            versions[header] += unversioned
        return versions
    fallback = str(qrels.meta.get("collection_version") or "") or manifest_version
    return Counter({fallback: len(qrels)}) if fallback else Counter()


def run_snapshot(run: Run) -> str:
    v = run.meta.get(SNAPSHOT_KEY) if isinstance(run.meta, dict) else None
    return str(v) if v not in (None, "") else ""


def check_binding(qrels: Qrels, runs: list[Run], *, allow: bool = False, manifest_version: str = "") -> dict:
    """The binding of these runs to the labels; raises InputError on a mismatch unless `allow`."""
    labels = label_versions(qrels, manifest_version)
    snaps = {r.name: run_snapshot(r) for r in runs}
    out = {"labels_collection_version": sorted(labels), "runs_corpus_snapshot": snaps, "status": "bound",
           "problems": []}
    problems: list[tuple[str, str]] = []
    carried = {n: s for n, s in snaps.items() if s}
    distinct = sorted(set(carried.values()))
    if len(distinct) > 1:
        listed = ", ".join(f"{n} {s!r}" for n, s in carried.items())
        problems.append((runs[0].path, f"the runs were made on different corpus snapshots ({listed})"))
    if labels and carried:
        for run in runs:
            snap = snaps[run.name]
            if not snap:
                continue
            other = {v: c for v, c in labels.items() if v != snap}
            if other:
                v, c = max(other.items(), key=lambda kv: (kv[1], kv[0]))
                what = (f"the judgments' collection_version is {v!r}" if len(labels) == 1 else
                        f"{sum(other.values())} judgments carry another collection_version ({v!r}: {c})")
                problems.append((run.path, f"run {run.name!r} has corpus_snapshot {snap!r} but {what}"))
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
            path, what = problems[0]
            raise InputError(path, f"{what}; {HOW_TO_ALLOW}")
        out["status"] = "mismatch_allowed"
        out["problems"] = [what for _, what in problems]
    return out
