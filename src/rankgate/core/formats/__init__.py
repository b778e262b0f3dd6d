"""Read qrels and runs in every supported format; the format is detected or forced."""

from __future__ import annotations

import os

from rankgate.core.errors import InputError
from rankgate.core.formats.beir import read_beir_qrels
from rankgate.core.formats.jsonfmt import (
    load_json,
    qrels_from_json,
    qrels_from_jsonl,
    run_from_jsonl,
    runs_from_json,
)
from rankgate.core.formats.sniff import detect_format, detect_kind
from rankgate.core.formats.textio import read_text
from rankgate.core.formats.trec import read_trec_qrels, read_trec_run
from rankgate.core.model import Catalog, Qrels, Run

QRELS_FORMATS = ("auto", "trec", "json", "jsonl", "beir")
RUN_FORMATS = ("auto", "trec", "json", "jsonl")


def read_qrels(path: str | os.PathLike, fmt: str = "auto", catalog: Catalog | None = None) -> Qrels:
    path = str(path)
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "empty":
        raise InputError(path, "empty file, expected qrels")
    if kind == "trec":
        qrels = read_trec_qrels(path, catalog)
    elif kind == "beir":
        qrels = read_beir_qrels(path, catalog)
    elif kind == "json":
        qrels = qrels_from_json(path, load_json(path), catalog)
    elif kind == "jsonl":
        qrels = qrels_from_jsonl(path, read_text(path), catalog)
    else:
        raise InputError(path, f"unknown qrels format {fmt!r}, expected one of {', '.join(QRELS_FORMATS)}")
    if not qrels.query_codes:
        raise InputError(path, "no judgments found (expected at least one query)")
    return qrels


def split_run_spec(spec: str) -> tuple[str | None, str]:
    """`NAME=PATH` names a run; a bare path is named by the file's stem."""
    name, sep, path = spec.partition("=")
    if sep and name and not os.path.exists(spec) and "/" not in name:
        return name, path
    return None, spec


def read_runs(spec: str | os.PathLike, fmt: str = "auto", catalog: Catalog | None = None,
              progress=None) -> list[Run]:
    """All runs in one file: the release-gate JSON holds several; TREC and JSONL hold one.

    `progress(done, total)` reports a long TREC (bytes) or JSONL (characters) read as it goes.
    """
    name, path = split_run_spec(str(spec))
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "empty":
        raise InputError(path, "empty file, expected a run")
    if kind == "trec":
        runs = [read_trec_run(path, name, catalog, progress)]
    elif kind == "json":
        runs = runs_from_json(path, load_json(path), catalog)
        if name is not None:
            if len(runs) != 1:
                raise InputError(path, f"NAME= renames a file with one run; this file holds {len(runs)}")
            runs[0].name = name
    elif kind == "jsonl":
        runs = [run_from_jsonl(path, read_text(path), name, catalog, progress)]
    else:
        raise InputError(path, f"unknown run format {fmt!r}, expected one of {', '.join(RUN_FORMATS)}")
    if not runs or all(len(r.query_codes) == 0 for r in runs):
        raise InputError(path, "no rankings found (expected at least one query)")
    return runs


__all__ = ["read_qrels", "read_runs", "split_run_spec", "detect_format", "detect_kind"]
