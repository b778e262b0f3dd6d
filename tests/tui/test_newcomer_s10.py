"""Newcomer s10, judging the DL19 files at 80x24: a refused export names the key for another file, undo on the
judging screen keeps the unexported count right, and the reason prompt is whole."""

from __future__ import annotations

import os

from rankgate.tui.screens.sync import QuitScreen
from tests.tui.conftest import ready
from tests.tui.test_raw_files import raw_files
from tests.tui.test_raw_quit import SIZE, raw_app


async def test_a_refused_export_on_quit_names_the_key_for_another_file(tmp_path, monkeypatch):
    """On the DL19 reference files (a read-only folder, the app started in it) the quit dialog's `e` said
    "nothing was written (choose another file)" and not how; the app stays open, the edits in the workspace."""
    (tmp_path / "reference").mkdir()
    d = raw_files(tmp_path / "reference")
    monkeypatch.chdir(d)  # the current folder, the fallback beside a read-only file, is read-only too
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    os.chmod(d, 0o555)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            assert app.review.edit("101", "p5", 3, "direct answer")
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert isinstance(app.screen, QuitScreen)
            await pilot.press("e")  # (s11) the folder is read-only: the export dialog asks where
            await pilot.pause()
            from rankgate.tui.screens.export import ExportDialog

            assert isinstance(app.screen, ExportDialog)
            await pilot.press("enter")  # the current folder, read-only too: refused, said, the app stays
            await pilot.pause()
            said = [n.message for n in app._notifications if "export failed" in n.message]
            assert len(said) == 1 and "read-only" in said[0], said
            assert "e on the panes (Escape from the judging screen) exports to a file you name" in said[0]
            assert app.is_running
    finally:
        os.chmod(d, 0o755)
    assert sorted(p.name for p in d.iterdir()) == ["a.trec", "b.trec", "passages.jsonl", "qrels.txt", "topics.tsv"]


async def test_undo_on_the_judging_screen_leaves_the_unexported_count(tmp_path):
    """Newcomer s10: 20 grades and one `u` on the judging screen, and the quit dialog said "20 label edits not
    exported" while the export differed from the file by 19 lines: the undo was not counted."""
    from tests.tui.test_raw_quit import dialog_text

    d = raw_files(tmp_path)
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("l")
        await pilot.pause()
        for key in "10u":  # two judgments, the second undone
            await pilot.press(key)
            await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        assert "1 label edit not exported" in dialog_text(app)


async def test_the_reason_prompt_is_whole_at_80x24(tmp_path):
    """Newcomer s10: at 80x24 the reason box showed "why this grade? (Enter saves, Escape", cut off."""
    from textual.widgets import Input

    d = raw_files(tmp_path)
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("2")
        await pilot.pause()
        box = app.screen.query_one("#reason-input", Input)
        assert box.has_focus and len(box.placeholder) <= box.content_region.width, box.content_region


async def test_after_an_export_to_a_file_of_your_own_quit_offers_that_file(tmp_path, monkeypatch):
    """Newcomer s10: the reference folder is read-only, the expert exported to a file of their own with `e`,
    corrected one more label, and the quit dialog offered the read-only default again (which fails)."""
    from tests.tui.test_raw_quit import dialog_text

    (tmp_path / "reference").mkdir()
    d = raw_files(tmp_path / "reference")
    monkeypatch.chdir(d)
    mine = tmp_path / "mine.reviewed.txt"
    app = raw_app(d, db=str(tmp_path / "labels.db"))
    os.chmod(d, 0o555)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            assert app.review.edit("101", "p5", 3, "direct answer")
            assert app.review.export_to(str(mine)) is not None
            assert app.review.edit("102", "p6", 1, "partly")
            await pilot.pause()
            await pilot.press("q")
            await pilot.pause()
            assert "1 label edit not exported" in dialog_text(app)
            assert str(mine) in dialog_text(app).replace("\n", "").replace(" ", "")
            await pilot.press("e")
            await pilot.pause()
        assert app.return_code == 0
    finally:
        os.chmod(d, 0o755)
    assert "102 0 p6 1\n" in mine.read_text(encoding="utf-8")
