"""README.md's shell blocks, run in order in a copy of the repository, each command exiting as README says.

A command's expected exit is the `# exit N` of its comment (0 without one). A block not meant to run here
(an install, the app, the test suite itself) has `<!-- readme-test: skip (why) -->` on the line above it.
`rankgate` is this checkout's, through a small wrapper on PATH; labels live in a private RANKGATE_HOME.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"(?P<marker><!-- readme-test: skip[^>]*-->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
EXIT = re.compile(r"#\s*exit (\d+)\b")


def blocks(text: str) -> list[tuple[str, str, bool]]:
    """(language, body, skipped) of every fenced block."""
    return [(m["lang"], m["body"], bool(m["marker"])) for m in FENCE.finditer(text)]


def commands(body: str) -> list[tuple[str, int]]:
    """The block's commands (continued lines joined) with the exit each is said to give."""
    out, current = [], []
    for line in body.splitlines():
        if not line.strip() and not current:
            continue
        current.append(line)
        if not line.rstrip().endswith("\\"):
            text = "\n".join(current)
            found = EXIT.search(current[-1])
            out.append((text, int(found.group(1)) if found else 0))
            current = []
    assert not current, f"a command ends with a backslash: {current}"
    return out


def script(body: str) -> str:
    """The block as bash, stopping at the first command that does not exit as README says."""
    lines = []
    for i, (cmd, expect) in enumerate(commands(body)):
        first = cmd.splitlines()[0][:70].replace("'", "")
        lines.append(f"{cmd}\n__rc=$?\nif [ $__rc -ne {expect} ]; then echo 'README command {i + 1} "
                     f"({first}) exited '$__rc', README says {expect}' >&2; exit 99; fi")
    return "\n".join(lines) + "\n"


def test_the_opening_keeps_install_and_run_then_the_tests():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shell = [b for lang, b, _ in blocks(text) if lang == "sh"]
    assert "pip install" in shell[0] and re.search(r"rankgate (review|gate) sample_benchmarks/", shell[0])
    assert shell[1].strip() == ".venv/bin/python -m pytest -n 2 --dist worksteal"
    assert shell[1].strip().split("/", 2)[-1] in (ROOT / ".ci" / "run").read_text()  # CI runs that same command


def test_the_parser_reads_exits_and_continuations():
    body = "a --x \\\n  --y    # exit 3: why\nb  # a comment\n\nc # exit 1\n"
    assert commands(body) == [("a --x \\\n  --y    # exit 3: why", 3), ("b  # a comment", 0), ("c # exit 1", 1)]
    assert [s for _, _, s in blocks("<!-- readme-test: skip (x) -->\n```sh\nx\n```\n```sh\ny\n```")] == [True, False]


@pytest.mark.slow
def test_every_shell_block_runs_as_readme_says(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis", "bench", "tests",
        "dense-*"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "rankgate"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m rankgate \"$@\"\n")
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RANKGATE_"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(repo / "src"),
            "RANKGATE_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    text = (repo / "README.md").read_text(encoding="utf-8")
    ran = 0
    for lang, body, skipped in blocks(text):
        if lang != "sh" or skipped:
            continue
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script(body)], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, f"block:\n{body}\nstderr:\n{proc.stderr[-3000:]}"
        ran += len(commands(body))
    assert ran >= 20
