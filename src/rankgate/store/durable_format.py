"""The label store's format: its name and version, when the journal is folded, and the snapshot and history
files' layout (store/durable.py)."""

from __future__ import annotations

from pathlib import Path

from rankgate.store.columns import OF_OP, check_columns
from rankgate.store.storage import DamagedFile, check_seal, dumps, parse_tables

FORMAT = "rankgate-labels"
FORMAT_VERSION = 5  # 5: the snapshot sealed with a CRC-32 of its bytes (storage.seal), journals framed with
# each record's length; 4: an import's new judgments journaled as columns, and their events kept in history as
# one document per query (store/columns.py, BULK); 3: judgments as columns, one document per query; 2: one
# judgment per reviewer per (query, document), adjudications; 1: one judgment a pair. Older formats are read
# as they are and written as 5 by the next fold.
FOLD_EDITS = 1000  # fold the journal into the snapshot after this many edits ...
FOLD_BYTES = 8 << 20  # ... or this many journal bytes (a large import folds at once)
FOLD_ON_CLOSE = 100  # on close, fold when the journal holds at least this many edits
EMPTY_HISTORY = b'{"history":{}}'
# A snapshot that cannot be read and has no backup (.bak): what to do, since `labels recover` starts from one of them.
NO_BASE = ("there is no backup copy (.bak) to recover from: move it aside (`mv {db} {db}.damaged`, with its .journal "
           "and .history) and import the labels again from your exported qrels (`rankgate labels import --db {db} "
           "QRELS`), or put back a copy of all its files")


def parse_snapshot(path: Path, raw: bytes) -> dict:
    """The snapshot's tables; its seal checked (a store of format 5 or later must have one)."""
    tables = parse_tables(path, raw)  # invalid JSON first: its message says where
    sealed = check_seal(path, raw)
    meta = tables.get("meta", {}).get("1")
    if not sealed and isinstance(meta, dict) and isinstance(meta.get("format_version"), int) \
            and 5 <= meta["format_version"] <= FORMAT_VERSION:
        raise DamagedFile(str(path), "its checksum is missing (changed or damaged on disk)")
    return tables


def history_bytes(events: list[dict]) -> bytes:
    """The history file: TinyDB's layout, one table keyed by event id."""
    return dumps({"history": {str(e["id"]): e for e in events}}).encode("ascii")


_PAIR_EDITS = ("judgment", "review", "adjudication")


def check_edit(path: Path, record: dict) -> None:
    """A journal record read from disk holds well-formed ops (its shape checked by `is_record`): a pair's
    judgment names a query and a doc and has an integer grade; the others name what they change. DamagedFile
    otherwise, before anything is applied (a valid checksum over a record no rankgate wrote)."""
    for kind, value in record["ops"]:
        if kind in _PAIR_EDITS:
            ok = isinstance(value, dict) and type(value.get("query")) is str and type(value.get("doc")) is str \
                and type(value.get("grade")) is int and type(value.get("reviewer", "")) is str
        elif kind in ("query", "version", "purge"):
            key = {"query": "id", "version": "name", "purge": "query"}[kind]
            ok = isinstance(value, dict) and type(value.get(key)) is str
        elif kind == "meta":
            ok = isinstance(value, dict)
        elif kind == "columns":
            check_columns(str(path), value)
            ok = True
        else:  # an unknown kind is refused by _apply (written by a newer rankgate)
            ok = True
        if not ok:
            raise DamagedFile(str(path), f"edit {record['seq']} holds a malformed {kind!r} op (not written by "
                              "rankgate)")
    for e in record["events"]:  # a bulk event names its columns op (columns.journal_form)
        i = e.get(OF_OP)
        if i is not None and not (type(i) is int and 0 <= i < len(record["ops"])
                                  and record["ops"][i][0] == "columns"):
            raise DamagedFile(str(path), f"edit {record['seq']} holds an event of no columns op (not written by "
                              "rankgate)")
