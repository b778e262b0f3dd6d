"""Rebuild a damaged workspace from what can be read; never deletes a file.

Starts from the snapshot, or when it is damaged from `<db>.bak`, or when both
are from an empty store if the journals reach back to the first edit; then
replays every good record of `<db>.journal.prev` and `<db>.journal` after it,
in order, skipping a damaged record and naming it (its place in the file, and
what it held when its bytes still show it). The history comes from
`<db>.history` (or its `.bak`) and the same records. Damaged files are renamed
aside (`<file>.damaged-<time>`). What recovery guarantees: docs/labels.md.
"""

from __future__ import annotations

import os
import secrets
import shlex
import zlib
from itertools import islice
from pathlib import Path

from rankgate.core.errors import InputError
from rankgate.core.model import Query
from rankgate.store.columns import expand_events
from rankgate.store.durable import FOLD_EDITS, NO_BASE, DurableIndex, check_edit, history_bytes, parse_snapshot
from rankgate.store.paths import BACKUP, HISTORY, JOURNAL, JOURNAL_PREV, sidecar
from rankgate.store.labels import history_state
from rankgate.store.records import query_fields, query_record
from rankgate.store.storage import (
    OWNER,
    DamagedFile,
    Foreign,
    Journal,
    NewerFormat,
    JournalContents,
    SnapshotStorage,
    atomic_write,
    crashpoint,
    history_matches,
    is_foreign,
    keep_copy,
    move_aside,
    parse_tables,
    read_journal,
)


def recover(path: str | os.PathLike) -> dict:
    """Rebuild the workspace at `path` (taking its lock); returns what it did."""
    path = Path(path)
    if not any(sidecar(path, s).exists() for s in ("", BACKUP, JOURNAL, JOURNAL_PREV, HISTORY)):
        raise InputError(str(path), "no label store here, and no backup of one: nothing to recover")
    index = DurableIndex(path, readonly=False, fold_every=FOLD_EDITS)
    index._lock.acquire()
    try:
        return _recover(index)
    finally:
        index._release()


def _recover(ix: DurableIndex) -> dict:
    """The report: snapshot and history (what was used), replayed (edits), lost (a sentence or None),
    lost_edits (their numbers), damaged (each damaged stretch of a journal), foreign (each record of another
    workspace's journal found in one, skipped), moved_aside, judgments, events."""
    report: dict = {"path": str(ix.path), "snapshot": "", "history": "", "replayed": 0, "lost": None,
                    "lost_edits": [], "lost_after": None, "torn": 0, "damaged": [], "foreign": [], "moved_aside": []}
    aside: list[Path] = []
    journals = _read_journals(ix, aside)
    current = next((jc for p, jc in journals if p == ix._file(JOURNAL)), None)
    missing = current is None  # no journal, or none that reads (a link to a device, a version it cannot read)
    events, report["history"] = _read_history(ix, aside)
    report["snapshot"] = _load_snapshot(ix, aside, journals, events)
    hist_mark = events[-1]["jseq"] if events else 0
    records, damage, tail = _journal_records(ix, journals, aside, report)
    report["damaged"] = damage
    snap_mark = ix._seq
    gen = ix._meta.get("journal_gen")  # the journal the snapshot (or .bak) continues in: gone, when none has it
    prior = ix._meta.pop("recovery", None)  # a recovery killed after its snapshot, before its new journal
    prior = prior if isinstance(prior, dict) and current is not None and current.gen in (prior.get("gens") or ()) \
        else None
    replaced = gen is not None and current is not None and not any(  # (after a killed recovery too: its
        # journal and an older copy put in place of the new one look alike, so the loss is said either way)
        jc.gen == gen or jc.header_damaged for _, jc in journals)
    lost, seq, replayed = [], snap_mark, 0  # labels: the base, then every good edit after it the journals hold
    for s in sorted(k for k in records if k > snap_mark):
        if s > seq + 1:
            lost.append((seq + 1, s - 1))  # a run of edit numbers no good record holds (kept as a run: a
        ix._apply(records[s])  # forged edit number of 10**15 must not make a list that long)
        seq, replayed = s, replayed + 1
    hseq = hist_mark  # history: the same, from its own mark (a missing event leaves a gap in its numbers)
    history_gaps = []
    for s in sorted(k for k in records if k > hist_mark):
        if s > hseq + 1:
            history_gaps.append((hseq + 1, s - 1))
        ix._apply_history(events, records[s])
        hseq = s
    report["replayed"] = replayed
    report["lost_edits"] = list(islice((k for a, b in lost for k in range(a, b + 1)), LISTED))
    placeholders = _keep_orphans(ix)
    report["torn"] = current.torn if current is not None else 0
    if tail or missing or replaced:
        report["lost_after"] = seq
    report["lost"] = _lost_sentence(lost, tail, missing, report["torn"], seq, hseq, history_gaps, placeholders)
    if replaced:  # (another workspace's journal, or an older copy, put in its place)
        report["lost"] = "; ".join(filter(None, [report["lost"], "the journal is not the one the snapshot expects "
                                                 f"(replaced by another copy): any edit after edit {seq} is lost"]))
    if prior is not None and prior.get("lost"):  # what it lost was never printed: said now
        report["lost"] = "; ".join(filter(None, [f"an interrupted recovery lost: {prior['lost']}", report["lost"]]))
    ix._meta["recovery"] = {"gens": [jc.gen for _, jc in journals if jc.gen], "lost": report["lost"]}
    lost_seq, lost_id = getattr(ix, "_damaged_ids", (0, 0))
    if lost_id and report["lost"]:
        report["lost"] += f" (the damaged records' event numbers, up to #{lost_id}, are not given again)"
    ix._seq = max(seq, hseq, lost_seq)  # a damaged record's edit and event ids are never given again
    ix._next_event = max([ix._next_event, lost_id + 1] + [e["id"] + 1 for e in events])
    journals_aside = [p for p in dict.fromkeys(aside) if p in (ix._file(JOURNAL), ix._file(JOURNAL_PREV))]
    for p in dict.fromkeys(aside):  # what gave nothing goes aside now; a journal's good records only once
        if p not in journals_aside:  # the snapshot holding them is written (a kill between loses none)
            _aside(p, report)
    crashpoint("recover-moved")
    _write(ix, events, aside, lambda: [_aside(p, report) for p in journals_aside])
    report["judgments"] = ix._live
    report["events"] = len(events)
    return report


def _lost_sentence(lost: list[tuple[int, int]], tail: bool | str, missing: bool, torn: int, seq: int, hseq: int,
                   history_gaps: list[tuple[int, int]], placeholders: list[str]) -> str | None:
    """What recovery could not keep, in words (None: nothing)."""
    said = []
    if lost:
        said.append(f"{_edits(lost)} could not be read (damaged), every other edit was replayed")
    if tail == "foreign":
        said.append(f"after edit {seq} the journal holds another workspace's records only: any edit of this "
                    f"workspace after edit {seq} that they took the place of is lost")
    elif tail:
        said.append(f"the journal is damaged after edit {seq}: any edit after it is lost")
    if missing:
        said.append(f"the journal is missing (or not one that can be read): any edit after edit {seq} is lost")
    if torn:
        said.append(f"the journal ends in {torn} bytes of a record cut short after edit {seq}, dropped (a crash "
                    "while it was written, so never acknowledged; or the file was cut, and edits after it are lost)")
    if history_gaps and history_gaps != lost:
        said.append(f"the history lacks the events of {_edits(history_gaps)}")
    elif hseq < seq:
        said.append(f"the history is recovered up to edit {hseq} only, the labels up to edit {seq}")
    if placeholders:
        said.append(f"quer{'ies' if len(placeholders) > 1 else 'y'} {', '.join(placeholders)} kept by ID only "
                    "(the edit that held the text was lost)")
    return "; ".join(said) or None


def _edits(runs: list[tuple[int, int]]) -> str:
    """"edit 5", "edits 5-7", "edits 3, 5-7"."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
    return f"edit{'s' if len(runs) > 1 or runs[0][0] != runs[0][1] else ''} {text}"


def _keep_orphans(ix: DurableIndex) -> list[str]:
    """Labels of a query whose creating edit was lost: the query is kept by its ID (so are the labels)."""
    named = set(ix._queries)
    orphans = [q for q in list(ix._labels.raw) + list(dict.keys(ix._labels)) + list(ix._adj) if q not in named]
    for q in dict.fromkeys(orphans):
        ix._queries[q] = {"id": q, **query_fields(Query(q))}
    return list(dict.fromkeys(orphans))


def _read_journals(ix: DurableIndex, aside: list[Path]) -> list[tuple[Path, JournalContents]]:
    """Both journals, read with salvage (a damaged header still gives the records after it)."""
    out = []
    for p in (ix._file(JOURNAL_PREV), ix._file(JOURNAL)):
        try:
            jc = read_journal(p, salvage=True)
        except NewerFormat:
            raise
        except InputError:  # damaged, or not a regular file (a link to a device): moved aside, never read
            aside.append(p)
            continue
        if jc is not None:
            out.append((p, jc))
    return out


def _load_snapshot(ix: DurableIndex, aside: list[Path], journals: list[tuple[Path, JournalContents]],
                   events: list[dict]) -> str:
    """Load the snapshot; when it cannot be read, the base that loses the fewest edits (those the journals
    do not hold after it): its backup, an empty store (the journals from the first edit), or the labels the
    history file's events add up to; what was used."""

    def tables_of(p: Path) -> dict | None:
        try:
            raw = SnapshotStorage(p, "r").read_bytes()
            return parse_snapshot(p, raw) if raw else None
        except NewerFormat:
            raise
        except InputError:  # damaged, or not a regular file
            return None

    def loads(tables: dict | None) -> bool:
        try:
            if tables is not None:
                ix._load_tables(tables)
                return True
        except NewerFormat:
            raise
        except DamagedFile:
            pass
        return False

    if loads(tables_of(ix.path)):
        return "intact"
    if ix.path.exists():
        aside.append(ix.path)
    bak = tables_of(ix._file(BACKUP))
    seqs = {r["seq"] for _, jc in journals for r in jc.records}
    top = max(seqs, default=0)
    options = []  # (what, the edit it holds the store at), in order of preference on a tie
    if bak is not None and isinstance(bak.get("meta", {}).get("1"), dict) and loads(bak):
        options.append(("bak", ix._seq))
    elif ix._file(BACKUP).exists():
        aside.append(ix._file(BACKUP))
    if events:
        options.append(("history", events[-1]["jseq"]))
    if seqs:
        options.append(("journals", 0))
    if not options:
        raise InputError(str(ix.path), "neither the snapshot nor its backup (.bak) can be read, and neither the "
                         "journals nor the history hold an edit; nothing to recover from: "
                         + NO_BASE.split(": ", 1)[1].format(db=shlex.quote(str(ix.path))))
    # the base that loses the fewest edits: those after it up to the last one no journal holds
    what, base = min(options, key=lambda o: max(0, top - o[1]) - sum(1 for k in seqs if k > o[1]))
    if what == "bak":  # (loaded above)
        return f"restored from {ix._file(BACKUP).name}"
    owner = next((jc.workspace_id for _, jc in journals if not jc.header_damaged and jc.workspace_id), None) \
        or _named_owner(journals)
    settings = dict(bak["meta"]["1"]) if bak is not None and what == "history" else {}
    if what == "history":
        _state_from_history(ix, events, owner, settings)
        return (f"rebuilt from the history file up to edit {ix._seq} (the snapshot could not be read"
                + (", and its backup is older" if bak is not None else ", nor its backup")
                + "; when each judgment was first made is taken as its last change)")
    _empty(ix)
    if owner:  # (else a journal with its header damaged: the rebuilt store gets a new workspace id)
        ix._meta["workspace_id"] = owner
    return "rebuilt from the journals (neither the snapshot nor its backup could be read)"


def _named_owner(journals: list[tuple[Path, JournalContents]]) -> str | None:
    """The workspace most records name, when no journal's header can be read (None: they name none)."""
    from collections import Counter

    named = Counter(r.get(OWNER) for _, jc in journals for r in jc.records if r.get(OWNER))
    return named.most_common(1)[0][0] if named else None


def _empty(ix: DurableIndex) -> None:
    """An empty store in memory (what a .bak loaded before is dropped), to rebuild on."""
    ix._create()
    ix._unborn = False
    ix._queries, ix._adj, ix._versions, ix._live, ix._seq, ix._next_event = {}, {}, {}, 0, 0, 1


LISTED = 100_000  # the lost edits' numbers a report lists (its sentence names them all, as runs)
KEPT_SETTINGS = ("workspace_id", "created", "collection_version", "benchmark")  # taken from an older .bak


def _state_from_history(ix: DurableIndex, events: list[dict], owner: str | None, settings: dict) -> None:
    """The store as the history's events leave it (queries, every reviewer's standing judgment, adjudications,
    versions), with the settings of an older .bak when there is one: the base when the snapshot is lost."""
    queries, pairs = history_state(events)
    _empty(ix)
    ix._meta.update({k: settings[k] for k in KEPT_SETTINGS if k in settings})
    if owner:
        ix._meta["workspace_id"] = owner
    for q, state in queries.items():
        ix._queries[q] = {**query_record(q, {**query_fields(Query(q)), **state}, "", ""), "id": q}
    seq = 0
    for per in pairs.values():
        for revs, adj in per.values():
            for state in [s for s in revs.values() if s is not None] + ([adj] if adj is not None else []):
                rec = {"created": state["updated"], "removed": None, **state}
                ix._apply({"seq": seq, "ops": [["adjudication" if state is adj else "review", rec]], "events": []})
    n = 0
    for e in events:
        n += e["kind"] == "query" and e["before"] is None
        if e["kind"] == "freeze" and isinstance(e.get("after"), dict) and e["after"].get("version"):
            name = e["after"]["version"]
            ix._versions[name] = {"name": name, "created": e["when"], "who": e["who"],
                                  "content_hash": e["after"].get("content_hash", ""),
                                  "labels": e["after"].get("labels", 0), "queries": n, "history_id": e["id"],
                                  "note": e.get("why", "")}
    ix._seq = events[-1]["jseq"]
    ix._next_event = events[-1]["id"] + 1


def _read_history(ix: DurableIndex, aside: list[Path]) -> tuple[list[dict], str]:
    """The history file or its backup (its watermark is the journal edit of its last event), each checked
    against the checksum its snapshot (the snapshot, the .bak) records; what was used."""
    for p, label, ref in ((ix._file(HISTORY), "intact", ix.path),
                          (ix._file(HISTORY + BACKUP), "restored from backup", ix._file(BACKUP))):
        try:
            raw = SnapshotStorage(p, "r").read_bytes()
            table = parse_tables(p, raw).get("history") if raw and history_matches(raw, _meta_of(ref)) else None
        except InputError:  # damaged, or not a regular file
            table = None
        if isinstance(table, dict):
            try:
                return expand_events(str(p), table.values()), label
            except DamagedFile:
                pass
        if p == ix._file(HISTORY) and p.exists():
            aside.append(p)
    return [], "lost (neither the history nor its backup can be read)"


def _meta_of(snapshot: Path) -> dict | None:
    """A snapshot's meta when it reads (its seal checked), else None."""
    try:
        raw = SnapshotStorage(snapshot, "r").read_bytes()
        meta = parse_snapshot(snapshot, raw).get("meta", {}).get("1") if raw else None
    except InputError:
        return None
    return meta if isinstance(meta, dict) else None


def _journal_records(ix: DurableIndex, journals: list[tuple[Path, JournalContents]], aside: list[Path],
                     report: dict) -> tuple[dict[int, dict], list[str], bool | str]:
    """Every good record of the journals, by edit number; each damaged stretch, described; and whether the
    current journal is damaged after its last good record (edits after it may be lost, how many is unknown;
    "foreign": another workspace's records stand there). A record copied in from another workspace's journal
    is skipped and named in `report["foreign"]`."""
    records: dict[int, dict] = {}
    damage: list[str] = []
    tail = False
    owner = ix._meta["workspace_id"]
    for p, jc in journals:
        if not jc.header_damaged and jc.workspace_id != owner:
            aside.append(p)  # another workspace's journal: not ours to replay, nor to delete
            continue
        foreign = list(jc.foreign or ())  # records copied in from another workspace's journal: named, skipped
        for r in jc.records:
            if jc.header_damaged and is_foreign(r, owner, 2):  # (its header unread: the store's id decides)
                foreign.append(Foreign(0, r["seq"], r.get(OWNER, "")))
                continue
            try:
                check_edit(p, r)
            except DamagedFile as e:  # a checksummed record that is no edit: skipped and named, like damage
                aside.append(p)
                damage.append(f"{p.name}: {e.what}")
                continue
            records.setdefault(r["seq"], r)
        if foreign:
            aside.append(p)
            report["foreign"] += [f.describe(p) if f.line else f"{p.name}: {f.what}: skipped, not replayed"
                                  for f in foreign]
            # past our last record it may stand where an edit of ours was: said as damage at the end is
            if p == ix._file(JOURNAL) and max(f.seq for f in foreign) > max((r["seq"] for r in jc.records),
                                                                            default=jc.base):
                tail = tail or "foreign"
        if jc.damaged:
            aside.append(p)
            damage += [d.describe(p) for d in jc.damaged]
            ids = getattr(ix, "_damaged_ids", (0, 0))
            ix._damaged_ids = (max(ids[0], jc.damaged_ids[0]), max(ids[1], jc.damaged_ids[1]))
            tail = (p == ix._file(JOURNAL) and jc.tail_damaged) or tail
    return records, damage, tail


def _aside(p: Path, report: dict) -> None:
    moved = move_aside(p, "damaged")
    if moved:
        report["moved_aside"].append(str(moved))


def _write(ix: DurableIndex, events: list[dict], aside: list[Path], journals_aside) -> None:
    """The rebuilt files, now the last good copies; the old journals are folded into them, and the damaged
    ones (`journals_aside`) moved aside once the snapshot holds their good records."""
    data = history_bytes(events)
    size = atomic_write(ix._file(HISTORY), data)
    gen = secrets.token_hex(8)
    meta = dict(ix._meta, journal_seq=ix._seq, history_seq=ix._seq, history_bytes=size,
                history_crc=zlib.crc32(data[:-2]), next_event=ix._next_event, journal_gen=gen)
    SnapshotStorage(ix.path).write(ix._tables(meta))
    keep_copy(ix.path, ix._file(BACKUP), link=False)
    keep_copy(ix._file(HISTORY), ix._file(HISTORY + BACKUP), link=False)
    crashpoint("recover-snapshot")
    journals_aside()
    if ix._file(JOURNAL).exists() and ix._file(JOURNAL) not in aside:
        keep_copy(ix._file(JOURNAL), ix._file(JOURNAL_PREV))
    Journal.create(ix._file(JOURNAL), ix._seq, ix._meta["workspace_id"], gen=gen)
