"""Damage on disk: flipped bits, cut files, zeroed 4 KiB pages and deleted files, in the journal, the previous
journal, the snapshot, the history file and their .bak. Recovery keeps every acknowledged edit the damaged bytes did not hold, and
names exactly the ones it lost (docs/labels.md, "What recovery guarantees").

The loop runs DAMAGE_TRIALS trials (1,000 by default, a few seconds: small stores, fsync off since power loss
is not what it tests); RANKGATE_DAMAGE_TRIALS=20000 for the longer run before a release.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from pathlib import Path

import pytest

from rankgate.core.errors import InputError
from rankgate.store import storage
from rankgate.store.storage import DamagedFile, read_journal, scan_journal
from rankgate.store.workspace import Workspace

from .conftest import labels_of

DAMAGE_TRIALS = int(os.environ.get("RANKGATE_DAMAGE_TRIALS", "1000"))
QUERIES = ["q0", "q1", "q2"]
DOCS = [f"d{i}" for i in range(8)]
FILES = ["labels.json", "labels.json.bak", "labels.json.journal", "labels.json.journal.prev", "labels.json.history",
         "labels.json.history.bak"]
PAGE = 4096


def side(db: Path, suffix: str) -> Path:
    return db.with_name(db.name + suffix)


# --------------------------------------------------------------------------- one store, its edits


def _plan(rng: random.Random, count: int) -> list[tuple]:
    """Edits, each valid in order: ("set", q, d, grade, reason) | ("remove", q, d) | ("freeze", name)."""
    live: set = set()
    out = []
    for i in range(count):
        r = rng.random()
        if r < 0.06:
            out.append(("freeze", f"v{i}"))
        elif r < 0.2 and live:
            q, d = rng.choice(sorted(live))
            live.discard((q, d))
            out.append(("remove", q, d))
        else:
            q, d = rng.choice(QUERIES), rng.choice(DOCS)
            live.add((q, d))
            out.append(("set", q, d, rng.randint(0, 3), f"edit {i}" + " long" * rng.randint(0, 30)))
    return out


def _model(edits) -> tuple[dict, set]:
    labels: dict = {}
    versions: set = set()
    for e in edits:
        if e[0] == "set":
            labels[(e[1], e[2])] = (e[3], e[4])
        elif e[0] == "remove":
            labels.pop((e[1], e[2]), None)
        else:
            versions.add(e[1])
    return labels, versions


def _state(db: Path) -> tuple[dict, set]:
    with Workspace.open(db, readonly=True) as ws:
        return ({(j.query, j.doc): (j.grade, j.reason) for j in ws.judgments()}, {v.name for v in ws.versions()})


def _build(folder: Path, seed: int, count: int, fold_every: int) -> dict:
    """A store made by `count` planned edits: its files' bytes, each acknowledged edit by its number, and
    where each edit's record lies in each journal."""
    db = folder / "labels.json"
    edits = {}
    with Workspace.open(db, reviewer="w", fold_every=fold_every) as ws:
        for e in _plan(random.Random(seed), count):
            before = ws.edit_seq
            if e[0] == "set":
                ws.set_judgment(e[1], e[2], e[3], reason=e[4], create_query=True)
            elif e[0] == "remove":
                ws.remove_judgment(e[1], e[2])
            else:
                ws.freeze(e[1])
            if ws.edit_seq != before:  # acknowledged: the call returned
                edits[ws.edit_seq] = e
    files = {name: (folder / name).read_bytes() for name in FILES if (folder / name).exists()}
    others = {p.name: p.read_bytes() for p in folder.iterdir() if p.name not in files and not p.name.endswith(".lock")}
    spans = {}
    for name in ("labels.json.journal", "labels.json.journal.prev"):
        if name in files:
            jc = read_journal(folder / name)
            assert not jc.damage
            good, _, _ = scan_journal(files[name], storage._header(files[name])[2], jc.version)
            spans[name] = {r["seq"]: (start, end) for r, start, end in good}
    return {"files": files, "others": others, "edits": edits, "spans": spans}


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> list[dict]:
    """Small stores of several shapes: folded twice or more (.bak, .journal.prev), folded once, never folded."""
    out = []
    for seed, count, fold_every in ((1, 40, 9), (2, 30, 7), (3, 14, 1000), (4, 25, 12), (5, 60, 25)):
        out.append(_build(tmp_path_factory.mktemp(f"store{seed}"), seed, count, fold_every))
    assert any("labels.json.bak" not in s["files"] for s in out) and any("labels.json.bak" in s["files"] for s in out)
    return out


# --------------------------------------------------------------------------- damage


def _damage(rng: random.Random, data: bytes) -> tuple[str, bytes | None, list[int] | int]:
    """(kind, the damaged bytes or None for a deleted file, the byte offsets hit or, for a cut, where)."""
    kind = rng.choice(["flip", "cut", "zero", "delete"])
    if kind == "delete" or not data:
        return "delete", None, 0
    if kind == "cut":
        at = rng.randrange(len(data))
        return kind, data[:at], at
    out = bytearray(data)
    if kind == "flip":
        hit = sorted({rng.randrange(len(data)) for _ in range(rng.randint(1, 3))})
        for i in hit:
            out[i] ^= 1 << rng.randrange(8)
        return kind, bytes(out), hit
    page = rng.randrange((len(data) + PAGE - 1) // PAGE)
    lo, hi = page * PAGE, min(len(data), (page + 1) * PAGE)
    out[lo:hi] = bytes(hi - lo)
    return kind, bytes(out), [lo, hi - 1]  # (the first and last byte: the ends are what a record's span is tested by)


def _held_by_damaged_bytes(store: dict, damage: list[tuple]) -> tuple[set, set]:
    """(edits whose every copy was hit: their journal record, and the snapshot or .bak that folded them in,
    when one did; edits a cut or deleted current journal took with no trace left)."""
    edits = set(store["edits"])
    hit_files = {name for name, *_ in damage}
    hit_records: dict[str, set] = {}
    silent = set()
    for name, kind, _, where in damage:
        spans = store["spans"].get(name, {})
        if kind == "delete":
            gone = set(spans)
        elif kind == "cut":
            gone = {s for s, (a, b) in spans.items() if b > where}
        else:
            lo, hi = (where[0], where[-1]) if kind == "zero" else (None, None)
            gone = {s for s, (a, b) in spans.items()
                    if (lo is not None and a <= hi and lo < b) or any(a <= i < b for i in where)}
        hit_records.setdefault(name, set()).update(gone)
        if name == "labels.json.journal" and kind in ("cut", "delete"):
            silent |= gone
    folded = {name: json.loads(store["files"][name])["meta"]["1"]["journal_seq"]
              for name in ("labels.json", "labels.json.bak") if name in store["files"]}
    for name in ("labels.json.history", "labels.json.history.bak"):  # an edit's event: its label too
        data = store["files"].get(name)
        events = list(json.loads(data)["history"].values()) if data else []
        folded[name] = max((e["jseq"] for e in events), default=0)
    held = set()
    for seq in edits:
        in_journal = [n for n, sp in store["spans"].items() if seq in sp]
        copies_ok = [n for n in in_journal if seq not in hit_records.get(n, set())]
        copies_ok += [n for n, upto in folded.items() if seq <= upto and n not in hit_files]
        if not copies_ok:
            held.add(seq)
    return held, silent


def _trial(store: dict, folder: Path, rng: random.Random) -> str:
    """Damage a copy of `store`, recover it, check the promise; returns what happened (for the tally)."""
    folder.mkdir()
    for name, data in {**store["files"], **store["others"]}.items():
        (folder / name).write_bytes(data)
    db = folder / "labels.json"
    damage = []
    for name in rng.sample(sorted(store["files"]), k=rng.choice([1, 1, 1, 2])):
        kind, data, where = _damage(rng, store["files"][name])
        if data is None:
            (folder / name).unlink()
        else:
            (folder / name).write_bytes(data)
        damage.append((name, kind, data, where))
    held, silent = _held_by_damaged_bytes(store, damage)
    acked = store["edits"]
    try:  # before recovery, a reader either refuses with one clear error or reads the labels right
        before = _state(db)
    except InputError:
        pass
    else:
        assert before == _model(acked[s] for s in sorted(acked) if s not in silent), damage
    try:
        report = Workspace.recover(db)
    except InputError as e:  # refused: only when no file left holds any edit (the damaged bytes held them all)
        assert "nothing to recover" in str(e) and set(acked) <= held | silent, (damage, e)
        return "refused"
    lost = set(report["lost_edits"])
    after = report["lost_after"]
    lost_tail = {s for s in acked if after is not None and s > after}
    kept = {s: e for s, e in acked.items() if s not in lost | lost_tail | silent}
    context = (damage and [(n, k, w if isinstance(w, int) else w[:3]) for n, k, _, w in damage], report)
    assert _state(db) == _model(kept[s] for s in sorted(kept)), context
    assert lost <= held and lost_tail <= held | silent, context  # lost: only what the damaged bytes held
    return "lost" if lost or lost_tail or silent & set(acked) else "whole"


@pytest.fixture
def no_fsync(monkeypatch):
    """Power loss is not what the damage loop tests: fsync off, so 1,000 trials take seconds."""
    monkeypatch.setattr(storage, "_sync", lambda fd: None)
    monkeypatch.setattr(storage, "fsync_dir", lambda path: None)
    monkeypatch.setattr("rankgate.store.durable.fsync_dir", lambda path: None)
    monkeypatch.setattr("rankgate.store.durable_fold.fsync_dir", lambda path: None)


@pytest.fixture
def scratch(tmp_path):
    """A folder in memory where there is one (/dev/shm): a trial's dozen file operations cost microseconds,
    not a loaded disk's milliseconds."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="rankgate-damage-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_the_damage_loop(stores, scratch, no_fsync):
    rng = random.Random(35)
    tally: dict[str, int] = {}
    for n in range(DAMAGE_TRIALS):
        folder = scratch / f"t{n}"
        outcome = _trial(stores[n % len(stores)], folder, rng)
        tally[outcome] = tally.get(outcome, 0) + 1
        shutil.rmtree(folder)
    print(f"damage loop: {DAMAGE_TRIALS} trials, {tally}")
    assert tally.get("whole", 0) > DAMAGE_TRIALS // 4 and tally.get("lost", 0) > DAMAGE_TRIALS // 20, tally


# --------------------------------------------------------------------------- named cases


def test_a_damaged_snapshot_with_no_backup_is_rebuilt_from_the_journal(db, cli):
    """#35: a damaged snapshot with no .bak beside it said "nothing to recover", although the journal held
    every edit. Now the open says recover can rebuild it, and recover does, losing nothing."""
    with Workspace.open(db, reviewer="ana") as ws:
        for i in range(6):
            ws.set_judgment(f"q{i % 2}", f"d{i}", i % 3, reason=f"r{i}", create_query=True)
        ws.freeze("v1")
        expected = labels_of(ws)
    assert not side(db, ".bak").exists()
    db.write_bytes(db.read_bytes()[:40])
    with pytest.raises(DamagedFile, match="the journal holds every edit since the store was made: `rankgate labels "
                       "recover"):
        Workspace.open(db, readonly=True)
    code, out, err = cli("labels", "recover", "--db", db)
    assert code == 0, err
    assert "snapshot rebuilt from the journals" in out and "lost: nothing" in out
    with Workspace.open(db) as ws:
        assert labels_of(ws) == expected and [v.name for v in ws.versions()] == ["v1"]
        assert [e.kind for e in ws.history()][-1] == "freeze"
        ws.set_judgment("q0", "d9", 1, reason="after")


def test_a_flipped_digit_in_the_snapshot_is_found_by_its_checksum(db):
    """A bit flip that still parses (a grade 1 read as 3) was taken as a label; the snapshot's seal finds it."""
    with Workspace.open(db, fold_every=3) as ws:
        for i in range(7):
            ws.set_judgment("q1", f"d{i}", 1 + i % 2, reason=f"r{i}", create_query=True)
        expected = labels_of(ws)
    data = db.read_bytes()
    i = data.index(b'"grade":[1') + len(b'"grade":[')
    db.write_bytes(data[:i] + b"3" + data[i + 1:])  # one bit: "1" is 0x31, "3" is 0x33
    with pytest.raises(DamagedFile, match="checksum does not match its contents"):
        Workspace.open(db, readonly=True)
    report = Workspace.recover(db)
    assert report["snapshot"] == "restored from labels.json.bak" and report["lost"] is None
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected


def test_an_old_journal_is_read_as_it_is_and_rewritten_on_the_first_edit(db):
    """A journal written before records carried their length (version 1) opens; a reader leaves it as it is;
    the first edit rewrites it in the current framing, keeping every record."""
    from .test_trust import _to_journal_v1

    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(4):
            ws.set_judgment("q1", f"d{i}", i % 3, reason="old", create_query=True)
        expected = labels_of(ws)
    journal = side(db, ".journal")
    _to_journal_v1(journal)
    old = journal.read_bytes()
    assert read_journal(journal).version == 1
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected
    with Workspace.open(db) as ws:
        assert labels_of(ws) == expected
        assert journal.read_bytes() == old  # opening writes nothing
        ws.set_judgment("q1", "d9", 2, reason="new")
        expected[("q1", "d9")] = 2
    jc = read_journal(journal)
    assert jc.version == storage.JOURNAL_VERSION and len(jc.records) == 5 and not jc.damage
    assert {r["ws"] for r in jc.records} == {jc.workspace_id}  # each record names its workspace now
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected
    lines = old.split(b"\n")  # and an old journal damaged in the middle is recovered the same way
    lines[2] = lines[2].replace(b'"old"', b'"OLD"')
    _to_journal_v1(journal)
    journal.write_bytes(b"\n".join(journal.read_bytes().split(b"\n")[:2] + [lines[2]] +
                                   journal.read_bytes().split(b"\n")[3:]))
    report = Workspace.recover(db)
    assert report["lost_edits"] == [2] and report["replayed"] == 4


def _to_journal_v2(journal: Path) -> None:
    """The journal as rankgate wrote it before records named their workspace (journal version 2)."""
    jc = read_journal(journal)
    header = {"journal": "rankgate-journal", "version": 2, "base": jc.base, "workspace": jc.workspace_id,
              "gen": jc.gen}
    journal.write_bytes(b"".join(storage.encode_record({k: v for k, v in r.items() if k != "ws"})
                                 for r in [header] + jc.records))


def test_a_version_2_journal_opens_and_its_first_edit_binds_every_record_to_the_workspace(db):
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(3):
            ws.set_judgment("q1", f"d{i}", 1, reason="v2", create_query=True)
        expected = labels_of(ws)
    journal = side(db, ".journal")
    _to_journal_v2(journal)
    old = journal.read_bytes()
    with Workspace.open(db) as ws:
        assert labels_of(ws) == expected and journal.read_bytes() == old  # read as it is
        ws.set_judgment("q1", "d9", 2, reason="new")
        expected[("q1", "d9")] = 2
    jc = read_journal(journal)
    assert jc.version == 3 and [r["seq"] for r in jc.records] == [1, 2, 3, 4]
    assert {r["ws"] for r in jc.records} == {jc.workspace_id} and not jc.damage
    # a version 2 record (naming no workspace) put into this journal is not ours: refused, skipped by recover
    journal.write_bytes(journal.read_bytes() + old.splitlines(keepends=True)[1])
    with pytest.raises(DamagedFile, match="line 6 holds edit 1 of another workspace's journal"):
        Workspace.open(db, readonly=True)
    report = Workspace.recover(db)
    assert report["foreign"] == ["line 6 of labels.json.journal holds edit 1 of another workspace's journal (a "
                                 "journal whose records name no workspace): skipped, not replayed"]
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == expected


def test_a_cut_journal_is_said_and_a_missing_one_too(db):
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(5):
            ws.set_judgment("q1", f"d{i}", 1, reason="r", create_query=True)
    journal = side(db, ".journal")
    data = journal.read_bytes()
    journal.write_bytes(data[:-20])
    report = Workspace.recover(db)
    assert report["torn"] and "cut short after edit 4" in report["lost"]
    journal.unlink()
    report = Workspace.recover(db)
    assert report["lost_after"] == 4 and "the journal is missing" in report["lost"]


def test_a_flipped_digit_in_the_history_is_found_by_its_checksum(db):
    """The history file's checksum is kept in the snapshot: damage that still parses is found when the history
    is read, and recovery takes its .bak and the journals instead."""
    with Workspace.open(db, fold_every=3) as ws:
        for i in range(7):
            ws.set_judgment("q1", f"d{i}", 1 + i % 2, reason=f"r{i}", create_query=True)
        kinds = [(e.id, e.kind, e.after) for e in ws.history()]
    hist = side(db, ".history")
    data = hist.read_bytes()
    i = data.index(b'"grade":1') + len(b'"grade":')
    hist.write_bytes(data[:i] + b"3" + data[i + 1:])
    with Workspace.open(db, readonly=True) as ws:
        with pytest.raises(DamagedFile, match="labels.json.history: its checksum does not match"):
            ws.history()
    report = Workspace.recover(db)
    assert report["history"] == "restored from backup" and report["lost"] is None
    with Workspace.open(db, readonly=True) as ws:
        assert [(e.id, e.kind, e.after) for e in ws.history()] == kinds
