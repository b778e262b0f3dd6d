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


@pytest.fixture
def cli(capsys):
    """Run `rankgate ...` in-process: (exit code, stdout, stderr)."""
    from rankgate.cli import main

    def run(*argv):
        code = main([str(a) for a in argv])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return run


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path
