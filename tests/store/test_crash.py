"""Kill a writer at random points (and at each step of a fold): every acknowledged edit is there.

A writer subprocess makes planned edits and prints `ack I` after each call
returns. We SIGKILL it at a random moment, then check that the store opens
(read-only and for writing), that its labels, versions and history equal the
plan's state after exactly the acknowledged edits or one more (the edit in
flight may have reached the disk before its acknowledgement), and that history
ids run without gaps or duplicates.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rankgate.store.workspace import Workspace

from .crash_writer import base_labels, model, plan

WRITER = Path(__file__).with_name("crash_writer.py")
GROUPS = 4  # the kills are spread over the xdist workers
# 40 random kills in CI; RANKGATE_CRASH_TRIALS=1000 for the longer run before a release (CONTRIBUTING.md)
TRIALS_PER_GROUP = max(1, int(os.environ.get("RANKGATE_CRASH_TRIALS", "40")) // GROUPS)
COUNT = 3000  # planned edits: more than a writer makes before it is killed


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A workspace holding the base labels, folded into its snapshot; copied for each trial."""
    folder = tmp_path_factory.mktemp("template")
    qrels = folder / "base.trec"
    # the writer's own labels (its header names it): its removals never touch another reviewer's judgment
    qrels.write_text("# reviewer: crash\n" + "".join(f"{q} 0 {d} {g}\n" for q, d, g in base_labels()))
    db = folder / "ws" / "labels.json"
    with Workspace.open(db, reviewer="setup") as ws:
        ws.import_files([qrels])
        ws.checkpoint()
    return db.parent


def _trial_db(template: Path, tmp_path: Path, n: int) -> Path:
    folder = tmp_path / f"trial{n}"
    shutil.copytree(template, folder)
    return folder / "labels.json"


def _spawn(db: Path, seed: int, fold_every: int, crashpoint: str | None = None) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("RANKGATE_CRASHPOINT", None)
    if crashpoint:
        env["RANKGATE_CRASHPOINT"] = crashpoint
    return subprocess.Popen([sys.executable, str(WRITER), str(db), str(seed), str(COUNT), str(fold_every)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _acks(out: str) -> int:
    return sum(1 for line in out.splitlines() if line.startswith("ack "))


def _state(db: Path, readonly: bool = True):
    with Workspace.open(db, readonly=readonly) as ws:
        labels = {(j.query, j.doc): (j.grade, j.reason) for j in ws.judgments()}
        versions = {v.name for v in ws.versions()}
        ids = [e.id for e in ws.history()]
    assert ids == list(range(1, len(ids) + 1)), "history ids must run 1..n without gaps or duplicates"
    return labels, versions, len(ids)


def _check(db: Path, seed: int, acked: int, exact: bool = False) -> int:
    """The store equals the plan after `acked` edits (or `acked + 1`); returns which."""
    edits = plan(seed, COUNT)
    got = _state(db)
    for k in ([acked] if exact else [acked, acked + 1]):
        if k <= COUNT and got == model(edits[:k]):
            break
    else:
        want = model(edits[:acked])
        missing = {key: v for key, v in want[0].items() if got[0].get(key) != v}
        raise AssertionError(f"store after kill differs from the {acked} acknowledged edits: labels differing "
                             f"{list(missing.items())[:5]}, versions {got[1] ^ want[1]}, events {got[2]} vs {want[2]}")
    assert _state(db, readonly=False) == got  # the writer's open (torn-tail repair, replay) changes nothing
    assert not [p.name for p in db.parent.iterdir() if ".tmp-" in p.name]  # nor leaves half-written files
    with Workspace.open(db, reviewer="after") as ws:  # and the store takes new edits
        ws.set_judgment("q0", "d0", 7, reason="after the crash")
        ws.checkpoint()
    with Workspace.open(db, readonly=True) as ws:
        assert ws.judgment("q0", "d0").grade == 7
    return k


@pytest.mark.slow
@pytest.mark.parametrize("group", range(GROUPS))
def test_random_kills_lose_no_acknowledged_edit(template, tmp_path, group):
    rng = random.Random(1000 + group)
    killed_mid_run = 0
    for n in range(TRIALS_PER_GROUP):
        seed = rng.randrange(10**6)
        fold_every = rng.choice([2, 3, 5, 13, 1000])
        db = _trial_db(template, tmp_path, n)
        proc = _spawn(db, seed, fold_every)
        try:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
            time.sleep(rng.uniform(0.005, 0.25))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
        out, err = proc.stdout.read(), proc.stderr.read()
        assert "Traceback" not in err, err
        killed_mid_run += "done" not in out
        _check(db, seed, _acks(out))
    assert killed_mid_run >= TRIALS_PER_GROUP // 2  # the kills landed while it was writing


@pytest.mark.slow
@pytest.mark.parametrize("point", ["fold-history", "fold-snapshot", "fold-journal"])
def test_a_kill_at_each_step_of_a_fold(template, tmp_path, point):
    db = _trial_db(template, tmp_path, 0)
    proc = _spawn(db, seed=42, fold_every=4, crashpoint=point)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    acked = _acks(out)
    assert acked == 3  # killed inside the fold of the 4th edit, before its acknowledgement
    assert _check(db, 42, acked) == 4  # the 4th edit was journaled before the fold began: it is there


@pytest.mark.slow
def test_a_torn_journal_record_is_dropped(template, tmp_path):
    db = _trial_db(template, tmp_path, 0)
    proc = _spawn(db, seed=7, fold_every=1000, crashpoint="journal-torn")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    assert _acks(out) == 0
    journal = db.with_name(db.name + ".journal")
    torn = journal.read_bytes()
    assert not torn.endswith(b"\n")  # half a record on disk
    assert _state(db) == model([])  # a reader ignores it
    assert journal.read_bytes() == torn  # and leaves it
    Workspace.open(db).close()  # the writer's open cuts it away
    assert journal.read_bytes() == torn[: torn.rindex(b"\n") + 1]
    _check(db, 7, 0, exact=True)
