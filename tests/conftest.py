import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_benchmarks"
CONFORMANCE = ROOT.parent / "shared" / "conformance"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """Nothing in the suite touches the real data folder."""
    home = tmp_path_factory.mktemp("rankgate-home")
    monkeypatch.setenv("RANKGATE_HOME", str(home))
    monkeypatch.setenv("RANKGATE_REVIEWER", "tester")
    yield home


@pytest.fixture
def samples() -> Path:
    return SAMPLES


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
