"""A benchmark folder: `benchmark.toml` naming the qrels, queries, corpus and runs.

    name = "seed-lab"
    k = 3
    collection_version = "lab-1"
    qrels = "qrels.json"
    queries = "queries.jsonl"      # optional
    corpus = "corpus.jsonl"        # optional
    runs = ["runs.json"]           # each entry a path, or "NAME=path"
    rel_level = 1                  # optional
    no_answer = ["q-..."]          # optional: queries that have no relevant document
    [gate]
    baseline = "baseline"
    candidate = "candidate_bad"
    must_pass = ["q-recovery"]
    policy = "policy.toml"         # optional; or the rules inline in this table
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rankgate.core.errors import InputError

MANIFEST = "benchmark.toml"


@dataclass
class Manifest:
    name: str
    folder: Path
    path: Path
    k: int
    qrels: Path
    runs: list[str]  # "NAME=path" or path, resolved against the folder
    collection_version: str = ""
    queries: Path | None = None
    corpus: Path | None = None
    rel_level: int = 1
    no_answer: list[str] = field(default_factory=list)
    gate: dict = field(default_factory=dict)
    description: str = ""


def load_toml(path: str | Path) -> dict:
    path = Path(path)
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except tomllib.TOMLDecodeError as e:
        import re

        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        line = int(m.group(1)) if m else None
        msg = str(e).split(" (at line")[0]
        raise InputError(str(path), f"invalid TOML: {msg}", line=line) from None
    except UnicodeDecodeError:
        raise InputError(str(path), "invalid UTF-8 text (expected a TOML file)") from None


def is_benchmark(path: str | Path) -> bool:
    p = Path(path)
    return (p.is_dir() and (p / MANIFEST).is_file()) or (p.is_file() and p.name == MANIFEST)


def _expect(data: dict, key: str, kind, path: Path, required: bool = True, where: str = ""):
    if key not in data:
        if required:
            raise InputError(str(path), f"missing key {where}{key!r}")
        return None
    value = data[key]
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InputError(str(path), f"key {where}{key!r} must be a {names}, found {type(value).__name__}")
    return value


KNOWN = {"name", "description", "k", "collection_version", "qrels", "queries", "corpus", "runs",
         "rel_level", "no_answer", "gate"}


def load_manifest(path: str | Path) -> Manifest:
    p = Path(path)
    mpath = p / MANIFEST if p.is_dir() else p
    folder = mpath.parent
    data = load_toml(mpath)
    unknown = sorted(set(data) - KNOWN)
    if unknown:
        raise InputError(str(mpath), f"unknown key {unknown[0]!r} (expected one of {', '.join(sorted(KNOWN))})")
    name = _expect(data, "name", str, mpath)
    k = _expect(data, "k", int, mpath)
    if k < 1:
        raise InputError(str(mpath), "key 'k' must be at least 1")
    runs = _expect(data, "runs", list, mpath)
    if not runs or not all(isinstance(r, str) for r in runs):
        raise InputError(str(mpath), "key 'runs' must be a non-empty list of file names")
    resolved = []
    for r in runs:
        n, sep, rel = r.partition("=")
        resolved.append(f"{n}={folder / rel}" if sep and "/" not in n and not (folder / r).exists()
                        else str(folder / r))
    gate = _expect(data, "gate", dict, mpath, required=False) or {}

    def _place(v: str) -> Path:  # a file beside the manifest; an ir_datasets name (irds:ID) as it is
        return Path(v) if v.startswith("irds:") else folder / v

    no_answer = _expect(data, "no_answer", list, mpath, required=False) or []

    def opt_path(key):
        v = _expect(data, key, str, mpath, required=False)
        return _place(v) if v else None

    return Manifest(
        name=name, folder=folder, path=mpath, k=k, qrels=_place(_expect(data, "qrels", str, mpath)), runs=resolved,
        collection_version=_expect(data, "collection_version", str, mpath, required=False) or "",
        queries=opt_path("queries"), corpus=opt_path("corpus"),
        rel_level=_level if (_level := _expect(data, "rel_level", int, mpath, required=False)) is not None else 1,
        no_answer=[str(x) for x in no_answer], gate=gate,
        description=_expect(data, "description", str, mpath, required=False) or "",
    )
