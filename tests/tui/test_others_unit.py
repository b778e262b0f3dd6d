"""tui/others.py without a screen: what a session shows when other reviewers' edits are read in (the quick
tier's test of it; tests/tui/test_team_sessions.py drives real sessions)."""

from __future__ import annotations

from types import SimpleNamespace

from rankgate.core.errors import InputError
from rankgate.tui.others import show_others_edits


class Backend:
    reviewer = "ana"

    def __init__(self, answer):
        self.answer = answer

    def catch_up(self):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def fixture(answer, mine=None):
    notes, applied, redrawn = [], [], []
    labels = SimpleNamespace(backend=Backend(answer), _cache={"q1": "stale"}, labels=lambda q: [],
                             mine=lambda q, d: mine)
    model = SimpleNamespace(labels=labels, qindex={"q1": 0, "q2": 1}, qids=["q1", "q2"], apply_edit=applied.append)
    screen = SimpleNamespace(model=model, qi=0, doc="d1", after_edit=lambda q, d: redrawn.append(q))
    app = SimpleNamespace(notify=lambda text, **kw: notes.append((text, kw.get("title"))))
    return app, model, screen, notes, applied, redrawn


def test_another_reviewers_later_grade_overrules_mine_and_i_am_told():
    review = {"reviewer": "kofi", "query": "q1", "doc": "d1", "grade": 0, "removed": None}
    app, model, screen, notes, applied, redrawn = fixture(({"q1"}, [review]), mine=SimpleNamespace(grade=2))
    show_others_edits(app, model, screen)
    assert applied == ["q1"] and redrawn == ["q1"] and "q1" not in model.labels._cache
    assert notes == [("kofi graded q1 d1 0 after your 2: the later grade counts (both are kept in the history)",
                      "overruled")]


def test_a_grade_on_the_query_shown_is_said_and_my_own_edits_are_not():
    others = {"reviewer": "kofi", "query": "q1", "doc": "d2\x1b", "grade": 3, "removed": None}
    mine = {"reviewer": "ana", "query": "q1", "doc": "d3", "grade": 1, "removed": None}
    app, model, screen, notes, applied, _ = fixture(({"q1"}, [others, mine]))
    show_others_edits(app, model, screen)
    assert notes == [("kofi graded q1 d2\\x1b 3", None)]  # the ID escaped, ana's own edit not echoed


def test_a_fold_by_another_session_rescores_every_query_and_a_busy_lock_only_warns():
    app, model, screen, notes, applied, _ = fixture((None, []))
    show_others_edits(app, model, screen)
    assert sorted(applied) == ["q1", "q2"] and notes == []
    app, model, screen, notes, applied, _ = fixture(InputError("w.json", "locked"))
    show_others_edits(app, model, screen)
    assert applied == [] and "could not read the other reviewers' edits" in notes[0][0]


def test_a_correction_of_my_grade_by_another_session_tells_me():
    mine_removed = {"reviewer": "ana", "query": "q1", "doc": "d1", "grade": 2, "removed": "2026-12-07T04:00:00Z"}
    theirs = {"reviewer": "kofi", "query": "q1", "doc": "d1", "grade": 1, "removed": None}
    app, model, screen, notes, applied, _ = fixture(({"q1"}, [mine_removed, theirs]))
    show_others_edits(app, model, screen)
    assert ("your grade 2 of q1 d1 was corrected: kofi graded it 1 (both are kept in the history)",
            "overruled") in notes


def test_a_correction_of_my_grade_is_the_last_notice_not_replaced_by_their_grade():
    """The notice line shows one notice: served, ana saw "kofi graded q1 d1 1" in place of "overruled"."""
    mine_removed = {"reviewer": "ana", "query": "q1", "doc": "d1", "grade": 2, "removed": "2026-12-07T04:00:00Z"}
    theirs = {"reviewer": "kofi", "query": "q1", "doc": "d1", "grade": 1, "removed": None}
    another = {"reviewer": "kofi", "query": "q1", "doc": "d2", "grade": 3, "removed": None}
    app, model, screen, notes, _, _ = fixture(({"q1"}, [mine_removed, theirs, another]))
    show_others_edits(app, model, screen)
    assert notes == [("your grade 2 of q1 d1 was corrected: kofi graded it 1 (both are kept in the history)",
                      "overruled")]
