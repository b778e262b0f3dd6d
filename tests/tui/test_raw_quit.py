"""Quitting the app opened on raw files (`rankgate review QRELS --runs A --runs B`) with label edits not
exported (newcomer s8): the same dialog as a benchmark folder's, naming the workspace that holds them and the
`labels` command that reaches it; `e` exports them to the export dialog's default file and quits."""

from __future__ import annotations

import pytest

from rankgate.store import paths
from rankgate.tui.app import ReviewApp
from rankgate.tui.loader import Inputs
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.screens.sync import QuitScreen
from tests.tui.conftest import ready
from tests.tui.test_raw_files import raw_files

SIZE = (80, 24)


def raw_app(d, db=None) -> ReviewApp:
    return ReviewApp(Inputs(str(d / "qrels.txt"), [str(d / "a.trec"), str(d / "b.trec")], db, None),
                     cursor_blink=False)


def dialog_text(app) -> str:
    from textual.widgets import Static

    return " ".join(str(s.render()) for s in app.screen.query(Static))


async def grade_then_q(pilot, app) -> None:
    """The app ready, one label graded (101 p5: 3), then `q`."""
    await ready(pilot)
    assert app.review.edit("101", "p5", 3, "direct answer")
    await pilot.pause()
    await pilot.press("q")
    await pilot.pause()


def exit_lines(app) -> str:
    """What `rankgate review` prints once the app is gone."""
    return app.goodbye


@pytest.mark.slow
async def test_quit_with_an_edit_names_the_workspace_and_q_leaves_it_there(tmp_path):
    d = raw_files(tmp_path)
    app = raw_app(d)
    workspace = paths.workspace_path(str(d / "qrels.txt"))
    async with app.run_test(size=SIZE) as pilot:
        await grade_then_q(pilot, app)
        assert isinstance(app.screen, QuitScreen) and app.is_running
        text = dialog_text(app)
        assert "1 label edit not exported" in text
        assert "qrels.txt" in text and "does not hold it" in text
        assert workspace.name in text.replace("\n", "") or str(workspace) in text
        assert f"rankgate labels status {d / 'qrels.txt'}" in text.replace("\n", " ")  # finds it (no --db)
        await pilot.press("q")  # quit without exporting
        await pilot.pause()
    assert app.return_code == 0
    said = exit_lines(app)
    assert str(workspace) in said and "rankgate labels export --db" in said
    assert "reviewed-qrels" not in " ".join(p.name for p in tmp_path.iterdir())  # nothing was written


@pytest.mark.slow
async def test_e_exports_to_the_default_file_and_quits(tmp_path):
    d = raw_files(tmp_path)
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        target = app.review.default_export_path()
        assert app.review.edit("101", "p5", 3, "direct answer")
        assert app.review.edit("102", "p6", 1, "partly")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert "2 label edits not exported" in dialog_text(app)
        assert "labels.db" in dialog_text(app)
        assert f"rankgate labels status --db {tmp_path / 'labels.db'}" in dialog_text(app).replace("\n", " ")
        await pilot.press("e")
        await pilot.pause()
    assert app.return_code == 0
    assert target == str(d / "qrels.reviewed.txt")  # <stem>.reviewed<ext> beside the input, in its format
    written = open(target, encoding="utf-8").read()
    assert "101 0 p5 3\n" in written and "102 0 p6 1\n" in written
    assert target in exit_lines(app)


@pytest.mark.slow
async def test_no_dialog_without_edits_after_an_export_or_after_undo(tmp_path):
    d = raw_files(tmp_path)
    for how in ("none", "exported", "undone"):
        app = raw_app(d, db=str(tmp_path / f"{how}.db"))
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            if how != "none":
                assert app.review.edit("101", "p5", 3, "direct answer")
            if how == "exported":
                assert app.review.export_to(str(tmp_path / "out.jsonl")) is not None
            if how == "undone":
                await pilot.press("ctrl+z")
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running, how


@pytest.mark.slow
async def test_escape_stays_and_an_edit_after_an_export_counts_again(tmp_path):
    d = raw_files(tmp_path)
    app = raw_app(d, db=str(tmp_path / "l.db"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit("101", "p5", 3, "direct answer")
        assert app.review.export_to(str(tmp_path / "out.jsonl")) is not None
        assert app.review.edit("101", "p5", 2, "on second thought")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert "1 label edit not exported" in dialog_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.is_running


@pytest.fixture
def read_only_raw(tmp_path, monkeypatch):
    """(the raw files' folder, made read-only; the current folder, empty; the app on those files)."""
    import os

    d = raw_files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    os.chmod(d, 0o555)
    yield d, out, app
    os.chmod(d, 0o755)


@pytest.mark.slow
async def test_e_in_a_read_only_data_folder_asks_where_then_exports_and_quits(read_only_raw):
    """Newcomer s11: DL19's folder is read-only; the dialog offered a file there, and `e` failed under it."""
    from rankgate.tui.screens.export import ExportDialog

    d, out, app = read_only_raw
    async with app.run_test(size=SIZE) as pilot:
        await grade_then_q(pilot, app)
        assert "is read-only" in dialog_text(app).replace("\n", " ")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog) and app.is_running  # asks, instead of failing
        await pilot.press("enter")  # the default: the same name in the current folder
        await pilot.pause()
    assert app.return_code == 0
    written = out / "qrels.reviewed.txt"
    assert "101" in written.read_text(encoding="utf-8") and str(written) in exit_lines(app)
    assert not (d / "qrels.reviewed.txt").exists()



async def test_e_on_the_panes_in_a_read_only_data_folder_proposes_the_current_folder(read_only_raw):
    """Newcomer s14: `e` on the panes proposed a file in DL19's read-only folder (and failed after Enter)
    while the quit dialog, in the same place, proposed the current folder; now both propose it."""
    from rankgate.tui.screens.export import ExportDialog

    d, out, app = read_only_raw
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit("101", "p5", 3, "direct answer")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportDialog)
        assert app.screen.default == str(out / "qrels.reviewed.txt")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and app.is_running
    written = out / "qrels.reviewed.txt"
    assert "101" in written.read_text(encoding="utf-8")
    assert not (d / "qrels.reviewed.txt").exists()
