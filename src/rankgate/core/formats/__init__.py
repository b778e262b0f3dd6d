"""Read qrels and runs in every supported format; the format is detected or forced."""

from __future__ import annotations

import os

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import naming_ids
from rankgate.core.formats.beir import read_beir_qrels
from rankgate.core.formats.jsonfmt import (
    load_json,
    qrels_from_json,
    qrels_from_jsonl,
    run_from_jsonl,
    runs_from_json,
)
from rankgate.core.formats.irds import is_irds
from rankgate.core.formats.sniff import detect_format, detect_kind
from rankgate.core.formats.textio import iter_lines
from rankgate.core.model import Catalog, Qrels, Run

def _json_qrels(path: str, catalog: Catalog | None) -> Qrels:
    return qrels_from_json(path, load_json(path), catalog)


def _jsonl_qrels(path: str, catalog: Catalog | None) -> Qrels:
    """Large plain JSONL qrels through pyarrow (jsonl_fast), any other file through the general reader."""
    if os.environ.get("RANKGATE_FAST", "1") != "0":
        from rankgate.core.formats.jsonl_fast import read_jsonl_qrels_fast

        if (fast := read_jsonl_qrels_fast(path, catalog)) is not None:
            return fast
    return qrels_from_jsonl(path, iter_lines(path), catalog)


def _trec_runs(path: str, name: str | None, catalog: Catalog | None, progress) -> list[Run]:
    from rankgate.core.formats.trec import read_trec_run  # (imported for a TREC file only)

    return [read_trec_run(path, name, catalog, progress)]


def _json_runs(path: str, name: str | None, catalog: Catalog | None, progress) -> list[Run]:
    runs = runs_from_json(path, load_json(path), catalog)
    if name is not None:
        if len(runs) != 1:
            raise InputError(path, f"NAME= renames a file with one run; this file holds {len(runs)}")
        runs[0].name = name
    return runs


def _jsonl_runs(path: str, name: str | None, catalog: Catalog | None, progress) -> list[Run]:
    return [run_from_jsonl(path, iter_lines(path, progress), name, catalog)]


def _trec_qrels(path: str, catalog: Catalog | None) -> Qrels:
    """Large plain TREC qrels through pyarrow (trec_fast), any other file through the general reader."""
    if os.environ.get("RANKGATE_FAST", "1") != "0":
        from rankgate.core.formats.trec_fast import read_trec_qrels_fast

        if (fast := read_trec_qrels_fast(path, catalog)) is not None:
            return fast
    from rankgate.core.formats.trec import read_trec_qrels

    return read_trec_qrels(path, catalog)


# A format is one entry here (its reader) and, to be detected, a rule in sniff.detect_format.
QRELS_READERS = {"trec": _trec_qrels, "json": _json_qrels, "jsonl": _jsonl_qrels, "beir": read_beir_qrels}
RUN_READERS = {"trec": _trec_runs, "json": _json_runs, "jsonl": _jsonl_runs}
QRELS_FORMATS = ("auto", *QRELS_READERS)
RUN_FORMATS = ("auto", *RUN_READERS)


def read_qrels(path: str | os.PathLike, fmt: str = "auto", catalog: Catalog | None = None) -> Qrels:
    path = str(path)
    if is_irds(path):  # irds:DATASET-ID (the optional ir_datasets extra)
        from rankgate.core.formats.irds import read_irds_qrels

        return read_irds_qrels(path, catalog)
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "empty":
        raise InputError(path, "empty file, expected qrels")
    reader = QRELS_READERS.get(kind)
    if reader is None:
        raise InputError(path, f"unknown qrels format {fmt!r}, expected one of {', '.join(QRELS_FORMATS)}")
    with naming_ids(path):
        qrels = reader(path, catalog)
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

    `progress(done, total)` reports a long TREC or JSONL read as it goes (bytes of the file).
    """
    name, path = split_run_spec(str(spec))
    kind = detect_format(path) if fmt == "auto" else fmt
    if kind == "empty":
        raise InputError(path, "empty file, expected a run")
    reader = RUN_READERS.get(kind)
    if reader is None:
        raise InputError(path, f"unknown run format {fmt!r}, expected one of {', '.join(RUN_FORMATS)}")
    with naming_ids(path):
        runs = reader(path, name, catalog, progress)
    if not runs or all(len(r.query_codes) == 0 for r in runs):
        raise InputError(path, "no rankings found (expected at least one query)")
    return runs


__all__ = ["read_qrels", "read_runs", "split_run_spec", "detect_format", "detect_kind"]
