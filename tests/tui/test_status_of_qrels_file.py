"""`rankgate labels status QRELS_FILE` (newcomer s8: it parsed the qrels file as TOML, "invalid TOML"):
a qrels file finds the workspace the app made for it (`rankgate review QRELS --runs ...`), named as the app
names it; with none yet, one line says what to pass instead. Other `labels` commands given a qrels file
where a benchmark folder goes name the `--db` that reaches the app's workspace."""

from __future__ import annotations

import pytest

from rankgate.cli import main
from rankgate.store import paths
from tests.tui.conftest import ready
from tests.tui.test_raw_files import raw_files
from tests.tui.test_raw_quit import raw_app


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.slow
async def test_status_of_a_qrels_file_finds_the_apps_workspace(tmp_path, capsys, monkeypatch):
    d = raw_files(tmp_path)
    app = raw_app(d)  # no --db: the workspace named after the qrels file
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        assert app.review.edit("101", "p5", 3, "direct answer")
        where = app.review.model.labels.backend.where
    assert where == str(paths.qrels_workspace_path(d / "qrels.txt", create=False))
    monkeypatch.chdir(d)
    code, out, err = cli(capsys, "labels", "status", "qrels.txt")  # a relative name, as the user types it
    assert code == 0, err
    assert "invalid TOML" not in err
    assert f"path: {where}" in out and "judgments: 5" in out
    assert f"--db {where}" in out  # what reaches it for the other labels commands
    code, out, err = cli(capsys, "labels", "disagreements", "-b", "qrels.txt")  # reads it, as status does
    assert code == 0 and out == "", err  # one reviewer: no disagreement
    code, out, err = cli(capsys, "labels", "history", "-b", "qrels.txt")
    assert code == 2 and err.count("\n") == 1 and f"--db {where}" in err and "TOML" not in err


def test_a_qrels_file_without_a_workspace_says_what_to_pass(tmp_path, capsys, monkeypatch):
    d = raw_files(tmp_path)
    monkeypatch.chdir(d)
    code, out, err = cli(capsys, "labels", "status", "qrels.txt")
    assert code == 2 and err.count("\n") == 1 and "TOML" not in err
    assert "qrels.txt" in err and "rankgate review qrels.txt" in err and "--db" in err
    assert not paths.qrels_workspace_path(d / "qrels.txt", create=False).exists()  # nothing made


def test_a_broken_benchmark_toml_is_still_named_as_one(tmp_path, capsys):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "benchmark.toml").write_text("name = \n")
    code, _, err = cli(capsys, "labels", "status", tmp_path / "b")
    assert code == 2 and "benchmark.toml:1" in err
