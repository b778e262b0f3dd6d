"""`rankgate review` without a terminal (a script, CI, a pipe): one line and exit 2, never an app drawing
into a file and waiting for keys forever. The app itself still runs headless under Textual's pilot (the
tui tests) and on pipes with textual-serve's web driver (`--serve`, tests/web)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rankgate.cli import main
from rankgate.cli.review import NO_TERMINAL, has_terminal

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_benchmarks" / "seed-lab"


def test_review_from_a_script_exits_2_at_once_with_one_line(tmp_path):
    env = dict(os.environ, RANKGATE_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT / "src"))
    env.pop("TEXTUAL_DRIVER", None)
    try:
        done = subprocess.run([sys.executable, "-m", "rankgate", "review", str(SAMPLE)], env=env, cwd=tmp_path,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("rankgate review without a terminal was still running after 60 s") from None
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"error: {NO_TERMINAL}\n"
    assert not (tmp_path / "home").exists()  # nothing opened, nothing written


def test_a_missing_file_is_still_named_first(tmp_path, capsys):
    assert main(["review", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing: no such file or folder" in err and "terminal" not in err


def test_a_textual_driver_of_its_own_needs_no_terminal(monkeypatch):
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert not has_terminal()  # pytest captures stdout: no terminal here
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.web_driver:WebDriver")  # what textual-serve sets
    assert has_terminal()
