"""The raw-file quit reminder (`rankgate review QRELS --runs ...`) counted this session's edits only: an edit
left unexported in an earlier session did not bring it back (s8, "noticed, not fixed"). It now counts, as a
benchmark folder does against its qrels file, the label edits that neither the qrels file nor the workspace's
last export to a file holds, whichever session made them."""

from __future__ import annotations

import pytest

from rankgate.cli import main
from rankgate.store import paths
from tests.tui.conftest import ready
from tests.tui.test_raw_files import raw_files
from tests.tui.test_raw_quit import SIZE, dialog_text, raw_app


async def quit_offers(d, db=None, edit=None) -> str:
    """Open, make `edit` (query, doc, grade) if any, press q: the dialog's text ('' when the app just left)."""
    app = raw_app(d, db=db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        if edit:
            assert app.review.edit(*edit, "an edit")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        if not app.is_running:
            return ""
        text = dialog_text(app)
        await pilot.press("q")  # quit without exporting
        await pilot.pause()
    assert not app.is_running
    return text


@pytest.mark.slow
async def test_an_edit_left_unexported_brings_the_reminder_back_until_it_is_exported(tmp_path, capsys):
    d = raw_files(tmp_path)
    assert "1 label edit not exported" in await quit_offers(d, edit=("101", "p5", 3))
    assert "1 label edit not exported" in await quit_offers(d)  # the next session: no edit of its own
    assert "2 label edits not exported" in await quit_offers(d, edit=("102", "p6", 1))
    workspace = paths.qrels_workspace_path(d / "qrels.txt", create=False)
    out = tmp_path / "reviewed.jsonl"
    # what the reminder's last line says to run
    assert main(["labels", "export", "--db", str(workspace), "-o", str(out), "--format", "jsonl"]) == 0
    capsys.readouterr()
    assert await quit_offers(d) == ""  # exported: no reminder
    assert "1 label edit not exported" in await quit_offers(d, edit=("101", "p5", 2))  # a new edit counts
    assert "1 label edit not exported" in await quit_offers(d)


@pytest.mark.slow
async def test_an_edit_back_to_the_files_grade_is_not_counted(tmp_path):
    d = raw_files(tmp_path)
    assert "1 label edit not exported" in await quit_offers(d, edit=("101", "p1", 1))  # the file says 3
    assert await quit_offers(d, edit=("101", "p1", 3)) == ""


@pytest.mark.slow
async def test_a_db_store_of_the_files_labels_counts_across_sessions_too(tmp_path):
    d = raw_files(tmp_path)
    db = str(tmp_path / "labels.db")
    assert "1 label edit not exported" in await quit_offers(d, db=db, edit=("101", "p5", 3))
    assert "1 label edit not exported" in await quit_offers(d, db=db)
