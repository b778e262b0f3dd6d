"""Red team on the morning's merges (journal v3, FIFO outputs refused, mixed-whitespace qrels, the store's
new checks). Each test names what happened before its fix."""

import json
import os
import stat
import subprocess
import sys

import pytest

from tests.hardening.test_red_input import evil_bench

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/fd"),
                                reason="no named pipes or /dev/fd here")


def _gate(b, *extra):
    return [sys.executable, "-m", "rankgate", "gate", "--k", "2", "--qrels", str(b / "qrels.jsonl"),
            "--runs", str(b / "base.jsonl"), "--runs", str(b / "cand.jsonl"), "--baseline", "base",
            "--candidate", "cand", "--quiet", *extra]


@pytest.mark.parametrize("flag", ["-o", "--junit"])
def test_an_output_to_dev_stdout_piped_to_a_reader_is_written_again(tmp_path, flag):
    """Before: `rankgate gate -o /dev/stdout | jq` (a CI habit) failed with "/dev/stdout: is a named pipe
    (FIFO)", exit 2, since outputs refused every pipe. A shell's pipe (no name in any folder) has its reader
    already: it is written into, as before; a named pipe made by mkfifo is still refused."""
    b = evil_bench(tmp_path)
    p = subprocess.run(_gate(b, flag, "/dev/stdout"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    assert p.returncode in (0, 3) and "error" not in p.stderr, p.stderr
    if flag == "-o":
        assert json.loads(p.stdout)["baseline"] == "base"
    else:
        assert p.stdout.startswith("<?xml")
    fifo = tmp_path / "named.fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    for path in (fifo, tmp_path / "link"):
        p = subprocess.run(_gate(b, flag, str(path)), capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "is a named pipe (FIFO)" in p.stderr and p.stdout == "", p.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_the_store_never_takes_a_shell_pipe_for_its_own_file(tmp_path):
    """The store's own files (not outputs) refuse every pipe, the shell's too."""
    from rankgate.core.errors import InputError
    from rankgate.store.storage import atomic_write

    r, w = os.pipe()
    try:
        with pytest.raises(InputError, match="named pipe"):
            atomic_write(f"/dev/fd/{w}", b"x")
    finally:
        os.close(r)
        os.close(w)
