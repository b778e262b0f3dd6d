"""The label store's format: its name and version, when the journal is folded, and the snapshot and history
files' layout (store/durable.py)."""

from __future__ import annotations

from pathlib import Path

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
