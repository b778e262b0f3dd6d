"""Newcomer s10: `rankgate labels queue QRELS` (a qrels file where the benchmark folder goes) said only "not a
benchmark folder; name files with --qrels and --runs", and --qrels reads the file, not the labels the expert
graded on it in the app. It now names both ways, the app's workspace by its --db."""

from __future__ import annotations

import shutil

from rankgate.cli import main
from rankgate.store import paths
from tests.conftest import SAMPLES

THREE = SAMPLES / "three-questions"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_queue_on_a_qrels_file_names_the_file_flag_and_the_apps_workspace(tmp_path, capsys, monkeypatch):
    shutil.copy(THREE / "qrels.trec", tmp_path / "qrels.trec")
    shutil.copy(THREE / "run.trec", tmp_path / "run.trec")
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(capsys, "labels", "queue", "qrels.trec", "--runs", "run.trec")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "is a qrels file, not a benchmark folder: --qrels qrels.trec --runs FILE reads the file" in err
    assert "has made no workspace for it yet" in err  # the app never opened it
    db = paths.qrels_workspace_path(tmp_path / "qrels.trec")  # as `rankgate review qrels.trec --runs ...` does
    assert cli(capsys, "labels", "import", "--db", db, "qrels.trec")[0] == 0
    code, out, err = cli(capsys, "labels", "queue", "qrels.trec", "--runs", "run.trec")
    assert code == 2 and f"--db {db}" in err and err.count("\n") == 1
    code, out, err = cli(capsys, "labels", "queue", "--db", db, "--runs", "run.trec", "--k", "3")  # as it says
    assert code == 0 and out, err


def test_queue_on_a_missing_folder_still_says_not_a_benchmark(tmp_path, capsys):
    code, out, err = cli(capsys, "labels", "queue", tmp_path / "nothing-here")
    assert code == 2 and "not a benchmark folder (no benchmark.toml)" in err


def test_a_write_into_a_missing_folder_names_the_folder(tmp_path):
    """The app's export to /tmp/nc-export/x.txt said "cannot write (No such file or directory)": which of the
    file and its folder was missing was left to guess."""
    import pytest

    from rankgate.core.errors import InputError
    from rankgate.store.storage import atomic_write

    target = tmp_path / "no-such-folder" / "qrels.reviewed.txt"
    for output in (False, True):
        with pytest.raises(InputError) as got:
            atomic_write(target, b"q 0 d 1\n", output=output)
        assert f"its folder {target.parent} does not exist" in str(got.value)
    assert not target.parent.exists()
