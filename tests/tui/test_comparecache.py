"""The app's cache of the comparison between a benchmark's qrels file and its workspace (tui/runcache.py
`compare_cached`): a re-open with nothing changed takes the last comparison (and reads the file's labels and
the last sync's only when the unexported count needs them); a change of any input compares again."""

from __future__ import annotations

import json
import shutil

import pytest

from rankgate.core.bundle import find_manifest
from rankgate.core.errors import InputError
from rankgate.store import sync
from rankgate.store.workspace import Workspace
from rankgate.tui.runcache import compare_cached
from tests.conftest import SAMPLES


def _open(folder):
    manifest, _ = find_manifest(None, str(folder))
    return Workspace.open_benchmark(manifest, reviewer="tester"), manifest


def _fresh(ws, manifest):
    return sync.compare(ws, manifest)


def _same(a: sync.Comparison, b: sync.Comparison) -> None:
    assert [vars(d) for d in a.differences] == [vars(d) for d in b.differences]
    assert (a.file_labels, a.workspace_labels, a.synced, a.last_sync_unknown) == \
        (b.file_labels, b.workspace_labels, b.synced, b.last_sync_unknown)


def _compare(ws, manifest, cache, reads):
    def read(m):
        reads.append(1)
        return sync.read_file_labels(m)

    return compare_cached(ws, manifest, read, folder=cache)


def test_each_input_changed_compares_again(tmp_path):
    folder = tmp_path / "seed-lab"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    cache = tmp_path / "cache"
    cache.mkdir()
    ws, manifest = _open(folder)
    reads: list = []
    first, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is not None and not reads  # the first open's: the labels its import read, the file not again
    _same(first, _fresh(ws, manifest))
    tracker = sync.Unexported(first, inputs)
    tracker.ready()
    assert tracker.count == 0 and not reads
    again, inputs = _compare(ws, manifest, cache, reads)  # (once: the next comparison is not the import's)
    assert inputs is not None and not reads  # nothing changed: the last comparison, no file read
    ws.close()
    ws, manifest = _open(folder)
    again, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is not None and not reads  # nothing changed: the last comparison, no file read
    _same(again, first)
    tracker, full = sync.Unexported(again, inputs), sync.Unexported(_fresh(ws, manifest))
    qid, doc = next(iter(full.file))
    ws.set_judgment(qid, doc, 3, reason="edited")  # the workspace changes ...
    grades = sync.query_grades(ws, qid)
    tracker.touch(qid, grades)  # ... the lazily read labels count it as the full tracker does
    full.touch(qid, grades)
    assert tracker.count == full.count == 1
    now, inputs = _compare(ws, manifest, cache, reads)  # the journal changed: compared again
    assert inputs is None and reads
    _same(now, _fresh(ws, manifest))
    assert now.unexported == 1

    reads.clear()
    path = manifest.qrels  # the qrels file changes
    qrels = json.loads(path.read_text())
    body = qrels.get("qrels", qrels)
    body[next(iter(body))] = ["doc-added-in-the-file"]
    path.write_text(json.dumps(qrels))
    now, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is None and reads and now.file_changed
    _same(now, _fresh(ws, manifest))

    reads.clear()
    sync.keep_workspace(ws, manifest)  # the sync record changes (the workspace kept as it is)
    now, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is None and reads
    _same(now, _fresh(ws, manifest))
    assert not now.file_changed
    ws.close()


def test_no_sync_record_is_remembered_as_unknown(tmp_path):
    folder = tmp_path / "seed-lab"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    cache = tmp_path / "cache"
    cache.mkdir()
    ws, manifest = _open(folder)
    from rankgate.store import paths

    paths.sidecar(ws.path, paths.SYNC).unlink()
    reads: list = []
    first, _ = _compare(ws, manifest, cache, reads)
    again, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is not None and first.last_sync_unknown and again.last_sync_unknown
    _same(again, first)
    ws.close()


def test_an_edit_after_the_first_import_is_compared(tmp_path):
    """The first open's comparison takes the import's labels only while the workspace is as imported."""
    folder = tmp_path / "seed-lab"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    cache = tmp_path / "cache"
    cache.mkdir()
    ws, manifest = _open(folder)
    qid, doc = next(iter(sync.workspace_grades(ws)))
    ws.set_judgment(qid, doc, 3, reason="edited")
    reads: list = []
    now, inputs = _compare(ws, manifest, cache, reads)
    assert inputs is None and reads and now.unexported == 1
    _same(now, _fresh(ws, manifest))
    ws.close()


def _backend(folder):
    from rankgate.tui.loader import Inputs
    from rankgate.tui.store_backend import StoreBackend

    manifest, _ = find_manifest(None, str(folder))
    return StoreBackend.open(Inputs(str(folder)), manifest, str(manifest.qrels), "tester"), manifest


def test_the_apps_first_import_is_folded_after_the_first_frame(tmp_path):
    """The app's first open leaves a large import in the journal (safe there) and folds it after its first
    frame: the labels are the same, the journal empty, the sync record's count holds, and the comparison made
    at open is found by the next open. Closed before that, the store folds it on close."""
    from rankgate.store import paths

    for close_first in (False, True):
        folder = tmp_path / f"ops-{close_first}"
        shutil.copytree(SAMPLES / "ops-handbook", folder)
        cache = tmp_path / f"cache-{close_first}"
        cache.mkdir()
        backend, manifest = _backend(folder)
        ws = backend.ws
        grades = sync.workspace_grades(ws)
        assert ws.fold_later is not None and ws._unwritten is not None  # not folded, not even written yet
        assert ws._journal is None and not ws.path.exists()
        first, inputs = _compare(ws, manifest, cache, [])
        assert inputs is not None and first.in_sync
        if not close_first:
            backend.fold_import()
            assert ws.fold_later is None and ws._journal.count == 0
        backend.close()
        again = Workspace.open_benchmark(manifest, reviewer="tester")
        assert again._journal.count == 0 and sync.workspace_grades(again) == grades  # folded, nothing lost
        assert sync.read_summary(again.path)["stamp"] == sync._stamp(again.path)  # the count on file holds
        reads: list = []
        now, inputs = _compare(again, manifest, cache, reads)
        assert inputs is not None and not reads and now.in_sync  # the comparison kept, no file read
        again.close()
        assert paths.sidecar(again.path, paths.HISTORY).exists()


def test_a_session_whose_first_import_cannot_be_written_lets_the_workspace_go(tmp_path, monkeypatch):
    """A browser session (`review --serve`, shared) writes the first import's files when it shares the
    workspace; when the disk refuses them, the open fails and lets the lock go, so that another session
    (or this one, once there is room) opens the workspace for writing and imports it (red16b: the failed
    session held the lock, and every other session was refused)."""
    from rankgate.store import storage
    from rankgate.tui.loader import Inputs
    from rankgate.tui.store_backend import StoreBackend

    folder = tmp_path / "ops"
    shutil.copytree(SAMPLES / "ops-handbook", folder)
    manifest, _ = find_manifest(None, str(folder))
    real = storage._write_all

    def full(fd, data):
        if len(data) > 10_000:  # the import's record, not the store's small files
            raise OSError(28, "No space left on device")
        real(fd, data)

    inputs = Inputs(str(folder))
    inputs.shared = True
    monkeypatch.setattr(storage, "_write_all", full)
    with pytest.raises(InputError, match="disk is full"):
        StoreBackend.open(inputs, manifest, str(manifest.qrels), "ana")
    monkeypatch.setattr(storage, "_write_all", real)
    ws = Workspace.open_benchmark(manifest, reviewer="kofi")  # not Locked: the failed session let it go
    assert len(ws) == 279
    ws.close()
