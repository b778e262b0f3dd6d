"""A browser session of `rankgate review --serve` (tui/others.py): the benchmark's one workspace, shared.

The app runs as ana's session; kofi, another session, is a second writer of the same workspace in the
test. ana's screen follows kofi's grade without a key, ana is told when kofi's later grade overrules hers,
both grades stay in the history, and an export from the session goes only into the export folder.
"""

from __future__ import annotations

import pytest

from rankgate.store.workspace import Workspace
from rankgate.tui.app import ReviewApp
from rankgate.tui.loader import Inputs
from tests.tui.conftest import SIZE, ready


def session(path, tmp_path, reviewer="ana"):
    inputs = Inputs(str(path), reviewer=reviewer)
    inputs.export_dir, inputs.shared = str(tmp_path / "exports"), True
    return ReviewApp(inputs, cursor_blink=False, read_corpus=False)


def notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def wait_until(pilot, check, rounds=40):
    for _ in range(rounds):
        if check():
            return True
        await pilot.pause(0.1)
    return check()


@pytest.mark.slow
async def test_a_session_follows_anothers_grade_and_is_told_when_overruled(tiny, tmp_path):
    app = session(tiny, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.review
        qid, doc = screen.qid, screen.doc
        assert app.review.edit(qid, doc, 2, "ana's reason")
        await pilot.pause()
        ws_path = app.loaded.model.labels.backend.ws.path
        kofi = Workspace.open(ws_path, reviewer="kofi")  # the lock is free between ana's edits
        kofi.share()
        with kofi.turn():
            kofi.set_judgment(qid, doc, 1, reason="kofi's reason")
        assert await wait_until(pilot, lambda: any("overruled" in n or "kofi graded" in n for n in notes(app)))
        said = [n for n in notes(app) if "kofi graded" in n]
        assert said and "after your 2" in said[0] and "the later grade counts" in said[0]
        label = app.loaded.model.labels.labels(qid)[doc]
        assert (label.grade, label.reviewer) == (1, "kofi")  # on ana's screen: the later grade wins
        other = "d-new"  # a document no run ranks: it joins ana's view too
        with kofi.turn():
            kofi.set_judgment(qid, other, 3)
        assert await wait_until(pilot, lambda: other in app.loaded.model.labels.labels(qid))
        assert any(f"kofi graded {qid} {other} 3" in n for n in notes(app))
        kofi.close()
        await pilot.press("q")
    with Workspace.open(ws_path, readonly=True) as ws:
        sets = [(e.who, e.after["grade"]) for e in ws.history(qid, doc) if e.kind == "set"]
        assert sets == [("ana", 2), ("kofi", 1)]


@pytest.mark.slow
async def test_a_session_whose_grade_another_corrects_keeps_the_overruled_notice_on_screen(tiny, tmp_path):
    """kofi answers "Correct theirs" on ana's label: ana's notice line says overruled (was: "kofi graded ..."
    came in the same batch and replaced it, in the terminal as in the browser)."""
    from rankgate.tui.widgets.notice_line import NoticeLine

    app = session(tiny, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.review
        qid, doc = screen.qid, screen.doc
        assert app.review.edit(qid, doc, 2, "ana's reason")
        await pilot.pause()
        kofi = Workspace.open(app.loaded.model.labels.backend.ws.path, reviewer="kofi")
        kofi.share()
        with kofi.turn():
            kofi.set_judgment(qid, doc, 1, corrects=True)
        kofi.close()
        line = app.screen.query_one(NoticeLine)
        assert await wait_until(pilot, lambda: "corrected" in line.message)
        await pilot.pause(0.5)
        assert line.message.startswith("overruled: your grade 2 of ") and "kofi graded it 1" in line.message
        assert app.loaded.model.labels.labels(qid)[doc].grade == 1
        await pilot.press("q")


@pytest.mark.slow
async def test_export_from_a_session_writes_only_into_the_export_folder(tiny, tmp_path):
    app = session(tiny, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        outside = tmp_path / "outside.jsonl"
        assert app.review.export_to(str(outside)) is None
        assert app.review.export_to("../outside.jsonl") is None
        assert not outside.exists()
        await pilot.pause()
        assert any("export refused" in n for n in notes(app))
        offered = app.review.default_export_path()
        assert "/" not in offered and offered.endswith(".jsonl") and "-ana-" in offered
        done = app.review.export_to(offered)
        assert done is not None and done.path == (tmp_path / "exports" / offered).resolve()
        await pilot.press("q")


@pytest.mark.slow
async def test_a_viewers_session_shows_the_labels_follows_them_and_refuses_edits(tiny, tmp_path):
    app = session(tiny, tmp_path)  # a reviewer's session first: it makes the workspace
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit(app.review.qid, app.review.doc, 2, "ana's")
        qid, doc = app.review.qid, app.review.doc
        viewer = session(tiny, tmp_path, reviewer="lead")
        viewer.inputs.viewer = True
        async with viewer.run_test(size=SIZE) as pilot2:
            await ready(pilot2)
            book = viewer.loaded.model.labels
            assert book.labels(qid)[doc].grade == 2 and "viewer" in book.backend.read_only
            assert not viewer.review.edit(qid, doc, 0, "not mine to change")
            assert app.review.edit(qid, doc, 3, "ana again")  # the viewer's screen follows
            assert await wait_until(pilot2, lambda: book.labels(qid)[doc].grade == 3)
            await pilot2.press("q")
        await pilot.press("q")


@pytest.mark.slow
async def test_a_session_whose_server_died_ends_instead_of_running_on(tiny, tmp_path, monkeypatch):
    import os

    app = session(tiny, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit(app.review.qid, app.review.doc, 2, "before the server died")
        await pilot.pause(1.2)
        assert app.return_code is None  # the server (here: pytest) is alive: the session runs on
        server = os.getppid()
        monkeypatch.setattr(os, "getppid", lambda: 1 if server != 1 else 2)  # reparented: the server is gone
        assert await wait_until(pilot, lambda: app.return_code is not None, rounds=30)  # was: ran on forever
    assert app.return_code == 0


@pytest.mark.slow
async def test_an_export_folder_swapped_for_a_link_after_the_check_is_not_written_through(tiny, tmp_path,
                                                                                          monkeypatch):
    from rankgate.tui.screens import export

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "exports"
    write = export._export

    def swap_then_write(screen, path):  # between export_target's check and the file's placing
        done = write(screen, path)
        folder.rename(tmp_path / "exports-was")
        folder.symlink_to(elsewhere)
        return done

    app = session(tiny, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        folder.mkdir()
        monkeypatch.setattr(export, "_export", swap_then_write)
        assert app.review.export_to(app.review.default_export_path()) is None
        await pilot.pause()
        assert list(elsewhere.iterdir()) == [] and list((tmp_path / "exports-was").iterdir()) == []
        assert any("export refused" in n and "is a link or not a folder" in n for n in notes(app))
        await pilot.press("q")
