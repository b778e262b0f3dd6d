"""Faults the store must survive: a full disk, a read-only file system, a refused permission.

Each gives one clear InputError, and the last good state is kept: every label
acknowledged before the fault is there when the workspace is opened again.
(Tests run as root in CI, where chmod does not stop writes, so the errors are
injected at the system-call boundary instead.)
"""

from __future__ import annotations

import errno
import os

import pytest

from rankgate.core.errors import InputError
from rankgate.store.workspace import Workspace

from .conftest import labels_of


def _fail_writes(monkeypatch, err: int):
    real_write = os.write

    def write(fd, data):
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(os, "write", write)
    return real_write


@pytest.mark.parametrize("err,said", [(errno.ENOSPC, "the disk is full"), (errno.EROFS, "read-only"),
                                      (errno.EACCES, "permission denied")])
def test_a_failed_write_is_refused_clearly_and_loses_nothing(tmp_path, monkeypatch, err, said):
    db = tmp_path / "ws.json"
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d1", 2, reason="kept", create_query=True)
        before = labels_of(ws)
        with monkeypatch.context() as m:
            _fail_writes(m, err)
            with pytest.raises(InputError) as e:
                ws.set_judgment("q1", "d2", 1, reason="lost to the fault", create_query=True)
        assert said in str(e.value)
        assert labels_of(ws) == before  # the refused edit is not half-applied in memory
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == before


def test_a_fault_during_a_fold_keeps_the_snapshot_and_the_journal(tmp_path, monkeypatch):
    db = tmp_path / "ws.json"
    with Workspace.open(db, fold_every=1000) as ws:
        for i in range(5):
            ws.set_judgment("q1", f"d{i}", i % 3, create_query=True)
        before = labels_of(ws)
        real_replace = os.replace

        def replace(src, dst):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "replace", replace)
        with pytest.raises(InputError, match="disk is full"):
            ws.checkpoint()
        monkeypatch.setattr(os, "replace", real_replace)
    with Workspace.open(db, readonly=True) as ws:
        assert labels_of(ws) == before
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_a_killed_writers_temporary_files_are_cleared_by_the_next_writer(tmp_path):
    db = tmp_path / "ws.json"
    with Workspace.open(db) as ws:
        ws.set_judgment("q1", "d1", 2, create_query=True)
        before = labels_of(ws)
    stale = [tmp_path / f".{db.name}.tmp-99999-deadbeef", tmp_path / f".{db.name}.bak.tmp-99999-cafe0000"]
    for p in stale:
        p.write_bytes(b"half a snapshot")
    other = tmp_path / ".notes.txt.tmp-1-2"  # not the workspace's: left alone
    other.write_text("x")
    with Workspace.open(db, readonly=True) as ws:  # a reader never deletes
        assert labels_of(ws) == before
    assert all(p.exists() for p in stale)
    with Workspace.open(db) as ws:
        assert labels_of(ws) == before
    assert not any(p.exists() for p in stale) and other.exists()
