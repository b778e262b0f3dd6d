"""One wheel per test run: built from a copy of the sources, unpacked, and run as a pip user would.

`python -m build --wheel` builds it (the command issue #37 asks to stay warning-free; its output is kept
for tests/unit/test_packaging.py). Under xdist the workers share one build: the first to ask builds it
under a file lock in the run's shared temporary folder, the others read it (each build cost ~2.5 CPU s)."""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Wheel:
    names: list[str]  # every file the wheel carries, as zip names ("rankgate/samples/...")
    unpacked: Path    # the wheel unpacked: put it on PYTHONPATH to run rankgate from it alone
    build_output: str  # what `python -m build` printed (stdout and stderr)

    def run(self, *argv, cwd: Path) -> subprocess.CompletedProcess:
        env = {"PYTHONPATH": str(self.unpacked), "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, "-m", "rankgate", *map(str, argv)], env=env, capture_output=True,
                              text=True, cwd=cwd)


def shared_folder(tmp_path_factory) -> Path:
    """The run's temporary folder all xdist workers share (each worker's own is below it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_wheel(top: Path) -> tuple[Wheel | None, str]:
    """The wheel built in `top` once per run (a lock keeps the other workers waiting for it), or None and
    why it cannot be built here. A failed build raises AssertionError with what the build printed."""
    top.mkdir(exist_ok=True)
    with open(top / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = top / "done.json"
        if not done.exists():
            done.write_text(json.dumps(_build(top)), encoding="utf-8")
    result = json.loads(done.read_text(encoding="utf-8"))
    if result["skip"]:
        return None, result["skip"]
    assert not result.get("failed"), "python -m build failed:\n" + result["output"][-3000:]
    return Wheel(result["names"], top / "unpacked", result["output"]), ""


def _build(top: Path) -> dict:
    if importlib.util.find_spec("build") is None:
        return {"skip": "the `build` package is not installed"}
    src = top / "src-copy"  # links followed, caches left out: the source tree is not written to
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its own notice, not ours
    built = subprocess.run([sys.executable, "-m", "build", "--wheel", "-o", str(top / "wheel"), str(src)],
                           capture_output=True, text=True, env=env, timeout=600)
    output = built.stdout + built.stderr
    if built.returncode != 0 and "Could not find a version" in output:
        return {"skip": "no package index reachable for the isolated build environment"}
    if built.returncode != 0:
        return {"skip": "", "names": [], "output": output, "failed": True}
    (wheel,) = (top / "wheel").glob("rankgate-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(top / "unpacked")
    return {"skip": "", "names": names, "output": output}
