"""Fixtures of the label-store tests: a private data folder, small qrels in every format, the CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rankgate.store.workspace import Workspace

LABELS = {  # (query, doc) -> grade: graded, with a zero and a negative grade
    ("q-backup", "doc-backup-policy"): 2,
    ("q-backup", "doc-restore-test"): 1,
    ("q-backup", "doc-billing"): 0,
    ("q-dns", "doc-dns-negative-cache"): 3,
    ("q-dns", "doc-spam"): -1,
    ("q-gpu", "doc-gpu-memory"): 1,
}


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """Every test gets its own data folder and reviewer name; nothing reaches the real home."""
    home = tmp_path / "rankgate-home"
    monkeypatch.setenv("RANKGATE_HOME", str(home))
    monkeypatch.setenv("RANKGATE_REVIEWER", "tester")
    for name in ("SOURCE_DATE_EPOCH", "RANKGATE_CRASHPOINT"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "ws" / "labels.json"


@pytest.fixture
def ws(db):
    w = Workspace.open(db)
    yield w
    w.close()


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def qrels_files(folder: Path) -> dict[str, Path]:
    """The same graded labels in every qrels format the core reads (binary JSON: grade >= 1 only)."""
    rows = list(LABELS.items())
    files = {
        "trec": write(folder / "qrels.trec", "".join(f"{q} 0 {d} {g}\n" for (q, d), g in rows)),
        "trec-header": write(folder / "qrels-header.trec", "# collection_version: lab-1\n# note: reviewed\n"
                             + "".join(f"{q} Q0 {d} {g}\n" for (q, d), g in rows)),
        "beir": write(folder / "qrels.tsv", "query-id\tcorpus-id\tscore\n"
                      + "".join(f"{q}\t{d}\t{g}\n" for (q, d), g in rows)),
        "json-graded": write(folder / "graded.json", json.dumps(_graded(rows), indent=1)),
        "jsonl": write(folder / "judgments.jsonl", "".join(
            json.dumps({"query": q, "doc": d, "grade": g, "reason": f"why {d}", "collection_version": "lab-2",
                        "reviewer": "priya"}) + "\n" for (q, d), g in rows)),
        "export": write(folder / "export.json", json.dumps({"meta": {"version": "v0", "collection_version": "lab-1"},
                                                            "qrels": _graded(rows)})),
    }
    files["trec-gz"] = write(folder / "qrels.trec.gz", gzip.compress(files["trec"].read_bytes()))
    return files


def _graded(rows):
    out: dict = {}
    for (q, d), g in rows:
        out.setdefault(q, {})[d] = g
    return out


def seed_json(folder: Path) -> Path:
    """Seed (binary) JSON, with a declared query that has no relevant document."""
    return write(folder / "seed.json", json.dumps({"q-backup": ["doc-backup-policy", "doc-restore-test"],
                                                   "q-dns": ["doc-dns-negative-cache"], "q-empty": []}))


def labels_of(ws: Workspace) -> dict[tuple[str, str], int]:
    return {(j.query, j.doc): j.grade for j in ws.judgments()}
