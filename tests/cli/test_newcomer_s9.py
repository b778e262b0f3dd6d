"""Items from the s9 newcomer walk-through (N3, N8, N6, N20, N12, ...): what a user sees on the command line."""

from __future__ import annotations

import json
import os
import shutil
import stat

import pytest

from tests.cli.test_init import init_args, raw_files
from tests.conftest import SAMPLES


@pytest.fixture
def umask():
    """Run under a chosen umask, restored after."""
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---- N3: files for users to share honour the umask -------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_init_writes_its_files_as_cp_would_under_the_umask(cli, tmp_path, umask, mask):
    """`rankgate init` wrote benchmark.toml and every --copy file 0600 whatever the umask (mkstemp)."""
    src = raw_files(tmp_path)
    umask(mask)
    code, _, err = cli(*init_args(src, tmp_path / "linked"))
    assert code == 0, err
    code, _, err = cli(*init_args(src, tmp_path / "copied", "--copy"))
    assert code == 0, err
    made = [tmp_path / "linked" / "benchmark.toml"] + [p for p in (tmp_path / "copied").rglob("*") if p.is_file()]
    assert len(made) == 7  # the linked benchmark.toml; the copied one, qrels, two runs, queries, corpus
    assert {p.name: oct(mode(p)) for p in made} == {p.name: oct(0o666 & ~mask) for p in made}


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_gate_outputs_follow_the_umask_and_a_kept_file_keeps_its_mode(cli, tmp_path, umask, mask):
    umask(mask)
    outs = {flag: tmp_path / f"out{flag}" for flag in ("-o", "--receipt", "--markdown", "--junit")}
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o640)
    argv = ["gate", SAMPLES / "seed-lab", "--quiet"] + [x for flag, p in outs.items() for x in (flag, p)]
    code, _, err = cli(*argv)
    assert code in (0, 3), err
    assert {f: oct(mode(p)) for f, p in outs.items()} == {f: oct(0o666 & ~mask) for f in outs}
    code, _, err = cli("gate", SAMPLES / "seed-lab", "--quiet", "--receipt", kept)
    assert code in (0, 3) and json.loads(kept.read_text()) and oct(mode(kept)) == "0o640"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_signing_key_stays_private_whatever_the_umask(cli, tmp_path, umask):
    umask(0o002)
    code, _, err = cli("receipt", "keygen", tmp_path / "gate.key")
    assert code == 0, err
    assert oct(mode(tmp_path / "gate.key")) == "0o600"
