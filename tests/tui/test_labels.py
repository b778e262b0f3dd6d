"""LabelBook without the app: the undo stack, own judgments only, session counts (memory and store)."""

from __future__ import annotations

import pytest

from rankgate.tui.labels import Refused
from rankgate.tui.loader import Inputs, load


@pytest.mark.slow
@pytest.mark.parametrize("memory", [True, False])
def test_undo_redo_and_own_judgments(tiny, memory):
    m = load(Inputs(str(tiny), memory=memory)).model
    book = m.labels
    try:
        assert book.reviewer == "tester"
        # Another reviewer's label: not mine, and remove refuses it, naming whose it is.
        assert book.others("q-restore", "d-snap").reviewer == "seed"
        with pytest.raises(Refused, match="judged by seed"):
            book.remove("q-restore", "d-snap")
        assert book.grades("q-restore")["d-snap"] == 0
        # A grade whose reason follows is one step.
        book.set("q-restore", "d-rpo", 2, open=True)
        book.set("q-restore", "d-rpo", 2, "states the RPO", merge=True)
        book.set_version("q-restore", "d-rpo", "tiny-2")
        with pytest.raises(Refused, match="cannot be empty"):
            book.set_version("q-restore", "d-rpo", " ")
        assert [e.what for e in book.done] == ["grade 2", "collection version tiny-2"]
        assert book.judged_session() == {("q-restore", "d-rpo")}
        book.undo()
        assert book.labels("q-restore")["d-rpo"].collection_version == "tiny-1"
        book.undo()
        assert "d-rpo" not in book.labels("q-restore") and book.judged_session() == set()
        assert book.undo() is None
        book.redo()
        lab = book.labels("q-restore")["d-rpo"]
        assert (lab.grade, lab.reason) == (2, "states the RPO")
        # Adding my own judgment beside another reviewer's, then removing it: theirs stays.
        book.set("q-restore", "d-snap", 1)
        assert book.others("q-restore", "d-snap") is None and book.mine("q-restore", "d-snap").grade == 1
        removed = book.remove("q-restore", "d-snap")
        assert removed.grade == 1 and book.grades("q-restore")["d-snap"] == 0
        book.undo()
        assert book.mine("q-restore", "d-snap").grade == 1
        assert book.undone and book.set("q-dns", "d-ttl", 2) and not book.undone  # a new edit clears redo
        assert book.judged_today() >= 2
    finally:
        book.close()


def test_the_store_records_undo_and_redo(tiny):
    m = load(Inputs(str(tiny))).model
    book = m.labels
    ws = book.backend.ws
    try:
        book.set("q-restore", "d-rpo", 3, "r")
        book.undo()
        book.redo()
        events = ws.history("q-restore", "d-rpo")
        causes = [getattr(e, "cause", "") or e.why for e in events]
        assert len(events) == 3 and "undo" in causes[1] and "redo" in causes[2]
    finally:
        book.close()
