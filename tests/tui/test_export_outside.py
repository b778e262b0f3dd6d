"""The app's quit dialog when benchmark.toml names a qrels file outside the folder (`rankgate init` without
--copy): it says so, and `e` writes a copy into the folder, never the file outside (screens/sync.py)."""

from __future__ import annotations

import pytest

import shutil

from rankgate.cli import main
from rankgate.tui.screens.sync import QuitScreen
from tests.conftest import SAMPLES
from tests.tui.conftest import SIZE, make_app
from tests.tui.test_sync import loaded, plain

QRELS = "q1 Q0 d1 1\nq1 Q0 d4 0\nq2 Q0 d5 1\nq3 Q0 d7 2\n"


def _pointing_outside(tmp_path, capsys):
    """A folder made by `rankgate init` without --copy: its benchmark.toml points at shared/qrels.trec."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "qrels.trec").write_text(QRELS)
    shutil.copy(SAMPLES / "three-questions" / "run.trec", shared / "run.trec")
    folder = tmp_path / "nb"
    assert main(["init", str(folder), "--qrels", str(shared / "qrels.trec"), "--runs", str(shared / "run.trec")]) == 0
    capsys.readouterr()
    return shared, folder


@pytest.mark.slow
async def test_quit_dialog_names_a_file_outside_the_folder_and_writes_a_copy(tmp_path, capsys):
    shared, folder = _pointing_outside(tmp_path, capsys)
    before = (shared / "qrels.trec").read_bytes()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q2", "d5", 0, "does not answer it")
        await pilot.pause()
        assert app.unexported == 1
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        text = " ".join(plain(s) for s in app.screen.query("Static"))
        assert "qrels.trec, outside the benchmark folder (init without --copy points at it)" in text
        assert f"e: write a copy into the folder ({folder / 'qrels.trec'}) and quit" in text
        await pilot.press("e")
        await pilot.pause()
    assert app.return_code == 0
    assert (shared / "qrels.trec").read_bytes() == before  # the file outside is untouched
    copy = (folder / "qrels.trec").read_text()
    assert [ln for ln in copy.splitlines() if not ln.startswith("#")] == QRELS.replace(
        "q2 Q0 d5 1", "q2 Q0 d5 0").splitlines()
    said = "".join(capsys.readouterr().err.splitlines())  # the line printed on the way out (wrapped)
    assert f"wrote 4 labels to {folder / 'qrels.trec'}, a copy" in said
    assert f'set qrels = "qrels.trec" in {folder / "benchmark.toml"}' in said


@pytest.mark.slow
async def test_the_export_dialog_offers_the_copy_and_never_the_file_outside(tmp_path, capsys):
    """`e` while reviewing: the suggested path is the copy in the folder; Enter writes it in the file's own
    layout (Q0, no header as the file had none) and leaves the file outside untouched."""
    shared, folder = _pointing_outside(tmp_path, capsys)
    before = (shared / "qrels.trec").read_bytes()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q2", "d5", 0, "does not answer it")
        await pilot.pause()
        assert app.review.default_export_path() == str(folder / "qrels.trec")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.review.exported_to == (folder / "qrels.trec").resolve()
    assert (shared / "qrels.trec").read_bytes() == before
    assert (folder / "qrels.trec").read_text() == QRELS.replace("q2 Q0 d5 1", "q2 Q0 d5 0")


@pytest.mark.slow
async def test_the_quit_dialog_never_offers_a_copy_onto_one_of_the_inputs(tmp_path, capsys):
    """The outside qrels file is named like the folder's run (run.trec): the copy the dialog offers is
    run.labels.trec, and `e` writes it; the run is untouched (it offered the run, then failed)."""
    folder = tmp_path / "c"
    shutil.copytree(SAMPLES / "three-questions", folder)
    (folder / "qrels.trec").write_text(QRELS)
    (tmp_path / "out").mkdir()
    shutil.move(folder / "qrels.trec", tmp_path / "out" / "run.trec")
    toml = folder / "benchmark.toml"
    toml.write_text(toml.read_text().replace('qrels = "qrels.trec"', 'qrels = "../out/run.trec"'))
    run = (folder / "run.trec").read_bytes()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q2", "d5", 0, "does not answer it")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        text = " ".join(plain(s) for s in app.screen.query("Static"))
        assert f"e: write a copy into the folder ({folder / 'run.labels.trec'}) and quit" in text, text
        await pilot.press("e")
        await pilot.pause()
    assert app.return_code == 0 and (folder / "run.trec").read_bytes() == run
    assert "q2 Q0 d5 0" in (folder / "run.labels.trec").read_text()
    assert 'set qrels = "run.labels.trec"' in "".join(capsys.readouterr().err.splitlines())


@pytest.mark.slow
async def test_a_link_in_the_folder_to_a_file_outside_is_never_written_from_the_app(tmp_path, capsys):
    folder = tmp_path / "c"
    shutil.copytree(SAMPLES / "three-questions", folder)
    outside = tmp_path / "shared" / "qrels.trec"
    outside.parent.mkdir()
    outside.write_text(QRELS)
    (folder / "qrels.trec").unlink()
    (folder / "qrels.trec").symlink_to(outside)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert app.review.edit("q2", "d5", 0, "does not answer it")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        text = " ".join(plain(s) for s in app.screen.query("Static"))
        assert "qrels.trec, a link in the folder to a file outside it, which does not hold them yet" in text, text
        assert f"e: write a copy into the folder ({folder / 'qrels.labels.trec'}) and quit" in text
        await pilot.press("e")
        await pilot.pause()
    assert app.return_code == 0 and outside.read_text() == QRELS and (folder / "qrels.trec").is_symlink()
    assert "q2 Q0 d5 0" in (folder / "qrels.labels.trec").read_text()
