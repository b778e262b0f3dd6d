"""The app's quit dialog when benchmark.toml names a qrels file outside the folder (`rankgate init` without
--copy): it says so, and `e` writes a copy into the folder, never the file outside (screens/sync.py)."""

from __future__ import annotations

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
