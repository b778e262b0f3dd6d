"""One wheel per test session: built from a copy of the sources, unpacked, and run as a pip user would."""

import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT


@dataclass(frozen=True)
class Wheel:
    names: list[str]  # every file the wheel carries, as zip names ("rankgate/samples/...")
    unpacked: Path    # the wheel unpacked: put it on PYTHONPATH to run rankgate from it alone

    def run(self, *argv, cwd: Path) -> subprocess.CompletedProcess:
        env = {"PYTHONPATH": str(self.unpacked), "PATH": "/usr/bin:/bin"}
        return subprocess.run([sys.executable, "-m", "rankgate", *map(str, argv)], env=env, capture_output=True,
                              text=True, cwd=cwd)


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory) -> Wheel:
    """`pip wheel` on a copy of the sources (links followed, caches left out); skips where pip cannot build."""
    top = tmp_path_factory.mktemp("wheel")
    src = top / "src-copy"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w",
                            str(top / "wheel")], capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here (pip wheel needs setuptools from an index): {built.stderr[-200:]}")
    (wheel,) = (top / "wheel").glob("rankgate-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        z.extractall(top / "unpacked")
    return Wheel(names, top / "unpacked")
