"""store.storage.publish_new: a browser session's export placed in the export folder as a new file, through
a handle on the folder (never through a link put there, never over a file)."""

from __future__ import annotations

import os

import pytest

from rankgate.core.errors import InputError
from rankgate.store.storage import publish_new


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "private.jsonl"
    p.write_bytes(b'{"query": "q1", "doc": "d1", "grade": 2}\n' * 50_000)  # several 1 MiB reads
    return p


def test_the_copy_is_placed_whole_with_the_usual_mode_and_no_temporary_left(tmp_path, src):
    folder = tmp_path / "exports"
    folder.mkdir()
    old = os.umask(0o027)
    try:
        path = publish_new(folder, "ana.jsonl", src)
    finally:
        os.umask(old)
    assert path == folder.resolve() / "ana.jsonl" and path.read_bytes() == src.read_bytes()
    assert os.stat(path).st_mode & 0o777 == 0o640 and os.listdir(folder) == ["ana.jsonl"]


def test_a_file_of_that_name_is_never_replaced(tmp_path, src):
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "ana.jsonl").write_text("theirs\n")
    with pytest.raises(InputError, match="never replaces a file"):
        publish_new(folder, "ana.jsonl", src)
    assert (folder / "ana.jsonl").read_text() == "theirs\n" and os.listdir(folder) == ["ana.jsonl"]


def test_a_link_of_that_name_is_not_followed(tmp_path, src):
    folder, target = tmp_path / "exports", tmp_path / "target"
    folder.mkdir()
    (folder / "ana.jsonl").symlink_to(target)  # dangling: os.open(O_CREAT) would make its target
    with pytest.raises(InputError):
        publish_new(folder, "ana.jsonl", src)
    assert not target.exists() and os.listdir(folder) == ["ana.jsonl"]


def test_a_folder_that_is_a_link_is_refused(tmp_path, src):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "exports").symlink_to(real)
    with pytest.raises(InputError, match="is a link or not a folder"):
        publish_new(tmp_path / "exports", "ana.jsonl", src)
    assert os.listdir(real) == []
