"""review --serve on raw qrels: an export placed in the export folder brings its notes sidecar and its record along."""

from __future__ import annotations

import json

import pytest

from rankgate.core.model import Query
from rankgate.store import paths
from rankgate.tui.app import ReviewApp
from rankgate.tui.loader import Inputs
from tests.tui.conftest import SIZE, ready


@pytest.mark.slow
async def test_a_browser_export_on_raw_qrels_places_the_notes_sidecar_and_records_the_placed_file(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {r} {9 - r} r\n" for q in ("q1", "q2")
                           for r, d in enumerate(["d1", "d2", "d3", "d4"], 1)))
    inputs = Inputs(str(qrels), [str(run)], reviewer="ana")
    inputs.export_dir, inputs.shared = str(tmp_path / "exports"), True
    app = ReviewApp(inputs, cursor_blink=False, read_corpus=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        backend = app.loaded.model.labels.backend
        backend.set_notes(Query("q1"), "is d2 current?")
        offered = app.review.default_export_path()
        done = app.review.export_to(offered)
        assert done is not None
        placed = tmp_path / "exports" / offered
        assert done.path == placed.resolve() and placed.is_file()
        notes = [n for n in done.notes if "query notes in" in n]
        assert notes, done.notes
        sidecar = notes[0].split("query notes in ", 1)[1]
        assert sidecar.startswith(str((tmp_path / "exports").resolve())), sidecar  # was: a deleted temp folder
        assert (tmp_path / "exports").joinpath(sidecar.rsplit("/", 1)[1]).is_file()
        record = paths.sidecar(backend.ws.path, paths.EXPORTED)
        summary = json.loads(record.read_text().splitlines()[0])  # the reminder of unexported edits counts from it
        assert summary["path"] == str(placed.resolve()), summary  # was: the deleted temp folder's file
        await pilot.press("q")


@pytest.mark.slow
async def test_a_browser_export_whose_notes_sidecar_name_is_taken_is_placed_and_says_so(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 9 r\nq1 Q0 d2 2 8 r\n")
    inputs = Inputs(str(qrels), [str(run)], reviewer="ana")
    inputs.export_dir, inputs.shared = str(tmp_path / "exports"), True
    app = ReviewApp(inputs, cursor_blink=False, read_corpus=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.loaded.model.labels.backend.set_notes(Query("q1"), "check d2")
        (tmp_path / "exports").mkdir(exist_ok=True)
        (tmp_path / "exports" / "mine.notes.jsonl").write_text("theirs\n")
        done = app.review.export_to("mine.trec")
        assert done is not None and (tmp_path / "exports" / "mine.trec").is_file()
        assert (tmp_path / "exports" / "mine.notes.jsonl").read_text() == "theirs\n"  # never replaced
        assert any("notes were not placed" in n for n in done.notes), done.notes
        assert not any("rankgate-export-" in n for n in done.notes), done.notes
        await pilot.press("q")
