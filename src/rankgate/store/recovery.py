"""Rebuild a damaged workspace from what can be read; never deletes a file.

Uses the snapshot (or, when it is damaged, `<db>.bak`), the history (or
`<db>.history.bak`), then replays `<db>.journal.prev` and `<db>.journal` up to
the first damaged or missing edit. Damaged files are renamed aside
(`<file>.damaged-<time>`).
"""

from __future__ import annotations

import os
import secrets
import shlex
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.store.columns import expand_events
from rankgate.store.durable import FOLD_EDITS, NO_BASE, DurableIndex, history_bytes
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, sidecar
from rankgate.store.storage import (
    DamagedFile,
    Journal,
    SnapshotStorage,
    atomic_write,
    keep_copy,
    move_aside,
    parse_tables,
    read_journal,
)


def recover(path: str | os.PathLike) -> dict:
    """Rebuild the workspace at `path` (taking its lock); returns what it did."""
    path = Path(path)
    if not path.exists() and not sidecar(path, BACKUP).exists():
        raise InputError(str(path), "no label store here, and no backup of one: nothing to recover")
    index = DurableIndex(path, readonly=False, fold_every=FOLD_EDITS)
    index._lock.acquire()
    try:
        return _recover(index)
    finally:
        index._release()


def _recover(ix: DurableIndex) -> dict:
    report: dict = {"path": str(ix.path), "snapshot": "", "history": "", "replayed": 0, "lost": None,
                    "moved_aside": []}
    aside: list[Path] = []
    report["snapshot"] = _load_snapshot(ix, aside)
    events, report["history"] = _read_history(ix, aside)
    hist_mark = events[-1]["jseq"] if events else 0
    records, damaged_journal = _journal_records(ix, aside)
    snap_mark = ix._seq
    seq = snap_mark  # labels: the snapshot, then every edit after it that the journals hold
    while seq + 1 in records:
        ix._apply(records[seq + 1])
        seq += 1
    hseq = hist_mark  # history: the same, from its own mark
    while hseq + 1 in records:
        ix._apply_history(events, records[hseq + 1])
        hseq += 1
    report["replayed"] = seq - snap_mark
    if any(s > seq for s in records) or hseq < seq or damaged_journal:
        report["lost"] = (f"the labels are recovered up to edit {seq} and the history up to edit {hseq}; "
                          "later edits could not be read")
    lost_seq, lost_id = getattr(ix, "_damaged_ids", (0, 0))
    if lost_id:
        report["lost"] = (report["lost"] or "a damaged journal record could not be read") + \
            f" (the damaged record is kept in the file moved aside; its event numbers, up to #{lost_id}, are not " \
            "given again)"
    ix._seq = max(seq, hseq, lost_seq)  # a damaged record's edit and event ids are never given again
    ix._next_event = max([ix._next_event, lost_id + 1] + [e["id"] + 1 for e in events])
    for p in aside:
        moved = move_aside(p, "damaged")
        if moved:
            report["moved_aside"].append(str(moved))
    _write(ix, events, aside)
    report["judgments"] = ix._live
    report["events"] = len(events)
    return report


def _load_snapshot(ix: DurableIndex, aside: list[Path]) -> str:
    """Load the snapshot, or its backup; what was used."""

    def load_tables(p: Path) -> dict | None:
        raw = SnapshotStorage(p, "r").read_bytes()
        if not raw:
            return None
        try:
            tables = parse_tables(p, raw)
            ix._load_tables(tables)
            return tables
        except DamagedFile:
            return None

    if load_tables(ix.path) is not None:
        return "intact"
    if load_tables(ix._file(BACKUP)) is not None:
        aside.append(ix.path)
        return f"restored from {ix._file(BACKUP).name}"
    raise InputError(str(ix.path), "neither the snapshot nor its backup (.bak) can be read; nothing to "
                     "recover from: " + NO_BASE.split(": ", 1)[1].format(db=shlex.quote(str(ix.path))))


def _read_history(ix: DurableIndex, aside: list[Path]) -> tuple[list[dict], str]:
    """The history file or its backup (its watermark is the journal edit of its last event); what was used."""
    for p, label in ((ix._file(HISTORY), "intact"), (ix._file(HISTORY + BACKUP), "restored from backup")):
        raw = SnapshotStorage(p, "r").read_bytes()
        try:
            table = parse_tables(p, raw).get("history") if raw else None
        except DamagedFile:
            table = None
        if isinstance(table, dict):
            try:
                return expand_events(str(p), table.values()), label
            except DamagedFile:
                pass
        if p == ix._file(HISTORY) and p.exists():
            aside.append(p)
    return [], "lost (neither the history nor its backup can be read)"


def _journal_records(ix: DurableIndex, aside: list[Path]) -> tuple[dict[int, dict], bool]:
    """Every intact record of the journals, by edit number; and whether the journal is damaged."""
    records: dict[int, dict] = {}
    damaged_journal = False
    for p in (ix._file(JOURNAL_PREV), ix._file(JOURNAL)):
        try:
            jc = read_journal(p)
        except DamagedFile:
            aside.append(p)
            continue
        if jc is None:
            continue
        if jc.workspace_id != ix._meta["workspace_id"]:
            aside.append(p)  # another workspace's journal: not ours to replay, nor to delete
            continue
        for r in jc.records:
            records.setdefault(r["seq"], r)
        if jc.damage and p == ix._file(JOURNAL):
            aside.append(p)
            damaged_journal = True
            ix._damaged_ids = jc.damaged_ids
    return records, damaged_journal


def _write(ix: DurableIndex, events: list[dict], aside: list[Path]) -> None:
    """The rebuilt files, now the last good copies; the old journals are folded into them."""
    size = atomic_write(ix._file(HISTORY), history_bytes(events))
    gen = secrets.token_hex(8)
    meta = dict(ix._meta, journal_seq=ix._seq, history_seq=ix._seq, history_bytes=size,
                next_event=ix._next_event, journal_gen=gen)
    SnapshotStorage(ix.path).write(ix._tables(meta))
    keep_copy(ix.path, ix._file(BACKUP), link=False)
    keep_copy(ix._file(HISTORY), ix._file(HISTORY + BACKUP), link=False)
    if ix._file(JOURNAL).exists() and ix._file(JOURNAL) not in aside:
        keep_copy(ix._file(JOURNAL), ix._file(JOURNAL_PREV))
    Journal.create(ix._file(JOURNAL), ix._seq, ix._meta["workspace_id"], gen=gen)
