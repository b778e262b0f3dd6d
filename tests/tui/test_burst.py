"""Keys typed in one burst (a paste ending in a newline, tmux send-keys, a fast typist) land where they were
meant: the reason typed right after a grade key, the text typed right after a key that opens a prompt.

`pilot.press` waits for the app to be idle after each key; `burst` sends them all at once, as a terminal
does, so each key is read before the previous one has been acted on."""

from __future__ import annotations

import pytest

from textual import events
from textual.keys import _character_to_key

from textual.widgets import Input

from rankgate.tui.screens.prompts import NotesEditor, TextPrompt

from rankgate.tui.widgets.reason_bar import ReasonBar
from tests.tui.conftest import SIZE, make_app, ready


async def burst(pilot, *keys: str) -> None:
    """Every key sent to the app before it has handled the first (as from a terminal), then wait."""
    app = pilot.app
    for key in keys:
        char = key if len(key) == 1 else {"enter": "\r"}.get(key)
        if len(key) == 1 and not key.isalnum():
            key = _character_to_key(key)  # "!" is "exclamation_mark", " " is "space"
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)
    for _ in range(3):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.slow
async def test_a_reason_typed_in_one_burst_after_the_grade_is_saved(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await burst(pilot, "2", *"same", "enter")  # as tmux send-keys "2same" Enter
        lab = screen.model.labels.labels(qid)[doc]
        assert (lab.grade, lab.reason) == (2, "same")
        assert not screen.query_one(ReasonBar).is_open
        assert app.screen is screen and (screen.qid, screen.doc) == (qid, doc)  # no letter acted as a key


@pytest.mark.slow
async def test_a_reason_changed_with_r_in_one_burst_replaces_the_old_one(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await pilot.press("1", *"outdated", "enter")  # typed at a human pace
        await pilot.pause()
        assert screen.model.labels.labels(qid)[doc].reason == "outdated"
        await burst(pilot, "r", "ctrl+u", *"burst four", "enter")  # ctrl+u: not text, it empties the Input
        lab = screen.model.labels.labels(qid)[doc]
        assert (lab.grade, lab.reason) == (1, "burst four")
        assert not screen.query_one(ReasonBar).is_open and app.screen is screen


@pytest.mark.slow
async def test_the_text_of_a_prompt_typed_in_one_burst_with_its_key_goes_into_it(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        book = screen.model.labels
        await pilot.press("2", "escape")
        await pilot.pause()
        await burst(pilot, "V", *"v9", "enter")  # the version prompt's filled-in value is selected: v9 replaces it
        assert book.labels(qid)[doc].collection_version == "v9"
        assert not isinstance(app.screen, TextPrompt)
        await burst(pilot, "V", "ctrl+u", *"v10", "enter")  # ctrl+u empties it first
        assert book.labels(qid)[doc].collection_version == "v10"
        await burst(pilot, "!", *"ask ana", "enter")
        lab = book.labels(qid)[doc]
        assert lab.unsure and "ask ana" in str(lab.unsure)
        await burst(pilot, "o", *"hi there", "ctrl+s")
        assert not isinstance(app.screen, NotesEditor)
        assert screen.model.query(screen.qi).notes.endswith("hi there")
        assert app.screen is screen and (screen.qid, screen.doc) == (qid, doc)  # no letter acted as a key


@pytest.mark.slow
async def test_the_add_form_typed_in_one_burst_with_a_adds_the_label(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid = screen.qid
        await burst(pilot, "a", *"d-snap", "enter", "3", "enter", "enter", *"by hand", "enter")
        lab = screen.model.labels.mine(qid, "d-snap")
        assert lab is not None and (lab.grade, lab.reason) == (3, "by hand")
        assert app.screen is screen


@pytest.mark.slow
async def test_export_and_quit_with_keys_typed_after_e_exits_cleanly(tmp_path):
    import shutil

    from rankgate.tui.screens.sync import QuitScreen
    from tests.conftest import SAMPLES

    folder = tmp_path / "mybench"
    shutil.copytree(SAMPLES / "seed-lab", folder)
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.review.edit("q-recovery", "doc-rpo", 2, "states the RPO")
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, QuitScreen)
        await burst(pilot, "e", *"/tmp/x .venv/bin/rankgate review sample_benchmarks/seed-lab")
    assert app._exception is None
    assert app.return_code == 0
    assert '"doc-rpo"' in (folder / "qrels.json").read_text()


@pytest.mark.slow
async def test_history_shows_a_later_reason_as_its_own_row(tiny):
    """Issue #13: one row per edit. The reason typed right after the grade is that edit's; each `r` is another."""
    from rankgate.tui.screens.history import HistoryScreen

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        doc = screen.doc
        await pilot.press("1", *"outdated", "enter")
        await burst(pilot, "r", "ctrl+u", *"burstfour", "enter")
        await burst(pilot, "r", "ctrl+u", *"again", "enter")
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HistoryScreen)
        rows = [(c.action, c.grade, c.reason) for c in app.screen.changes if c.doc == doc]  # oldest first
        assert rows[-3:] == [("set", 1, "outdated"), ("reason", 1, "burstfour"), ("reason", 1, "again")]


@pytest.mark.slow
async def test_undoing_a_reason_says_it_undid_the_reason(tiny):
    from tests.tui.test_app import collect_notes

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        notes = collect_notes(app)
        await pilot.press("1", *"outdated", "enter")
        await pilot.press("r", "ctrl+u", *"newer", "enter")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert screen.model.labels.labels(qid)[doc].reason == "outdated"
        assert notes[-1].startswith('reason "newer" of '), notes[-1]
        await pilot.press("ctrl+z")  # the grade and its reason: one edit
        await pilot.pause()
        assert notes[-1].startswith("grade 1 of "), notes[-1]
        assert doc not in screen.model.labels.labels(qid)


@pytest.mark.slow
async def test_a_filter_typed_in_one_burst_with_slash_filters(tiny):
    from tests.tui.test_app import collect_notes

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        notes = collect_notes(app)
        await burst(pilot, "slash", *"dns", "enter", "0", "escape")  # s is "cycle sort" on the review screen
        assert screen.query_one("#query-filter").value == "dns"
        assert screen.qid == "q-dns"
        assert [e.what for e in screen.model.labels.done] == ["grade 0"]  # the 0 after Enter graded
        assert screen.focused is screen.query_one("#query-list")  # Enter took the filter, as typed slowly
        assert not any("sorted by" in n for n in notes)


@pytest.mark.slow
async def test_an_export_path_typed_in_one_burst_with_e_is_written(tiny, tmp_path):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("2", "escape")
        await pilot.pause()
        out = tmp_path / "out.jsonl"
        await burst(pilot, "e", "ctrl+u", *str(out), "enter")
        assert out.exists() and "d-rpo" in out.read_text()
        assert app.screen is app.review


@pytest.mark.slow
async def test_a_prompt_keeps_early_keys_until_it_is_mounted_then_types_them_in_order(tiny):
    from rich.text import Text

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        got = []
        prompt = TextPrompt(Text("a value"), "old")
        app.push_screen(prompt, got.append)  # not yet mounted: the keys wait
        for key, char in [("ctrl+u", None), ("n", "n"), ("e", "e"), ("x", "x"), ("backspace", None),
                          ("w", "w"), ("enter", "\r"), ("q", "q")]:
            assert prompt.take_key(events.Key(key, char))
        assert prompt._early and not got
        await pilot.pause()
        await pilot.pause()
        assert got == ["new"]  # ctrl+u emptied "old"; the q after Enter is dropped (the prompt had closed)
        assert app.screen is app.review


@pytest.mark.slow
async def test_the_grade_picker_and_the_reason_after_it_take_one_burst(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await burst(pilot, "g", "3", *"why", "enter")  # the picker's grade key, then the reason
        lab = screen.model.labels.labels(qid)[doc]
        assert (lab.grade, lab.reason) == (3, "why")
        assert app.screen is screen and not screen.query_one(ReasonBar).is_open


@pytest.mark.slow
async def test_a_grade_typed_in_one_burst_after_a_filter_grades_the_document_shown_after_it(tiny):
    """`/dns` Enter `0` typed at once: the filter moves the list to q-dns, and the 0 grades q-dns's current
    document, the one shown as current once every earlier key has taken effect (not q-restore's, current
    before the filter moved the list)."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert screen.qid == "q-restore"
        await burst(pilot, "slash", *"dns", "enter", "0", "escape")
        assert (screen.qid, screen.queries.current) == ("q-dns", screen.model.qindex["q-dns"])
        edits = [(e.what, e.qid, e.doc) for e in screen.model.labels.done]
        assert edits == [("grade 0", "q-dns", screen.doc)], edits
        assert screen.model.labels.labels("q-dns")[screen.doc].grade == 0


@pytest.mark.slow
async def test_a_grade_typed_in_one_burst_after_moving_down_the_queries_grades_the_next_query(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        assert screen.focused is screen.queries.list
        first = screen.qid
        await burst(pilot, "down", "1", "escape")
        assert screen.qid != first
        edits = [(e.what, e.qid, e.doc) for e in screen.model.labels.done]
        assert edits == [("grade 1", screen.qid, screen.doc)], edits


@pytest.mark.slow
async def test_a_reason_typed_in_one_burst_into_the_open_bar_is_saved_whole(tiny):
    """The bar already open (the grade key read and acted on), then a burst ending in Enter, as a paste or
    tmux send-keys: Enter is a priority binding, so with the characters left in the field's queue it saved
    the reason without its last ones ("drill notes mention the key rota")."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        await pilot.press("2")
        await pilot.pause()
        assert screen.query_one(ReasonBar).is_open
        text = "drill notes mention the key rotation"
        await burst(pilot, *text, "enter")
        lab = screen.model.labels.labels(qid)[doc]
        assert (lab.grade, lab.reason) == (2, text)
        assert not screen.query_one(ReasonBar).is_open and app.screen is screen


@pytest.mark.slow
async def test_the_idle_fold_timer_waits_out_a_reopen(tiny):
    """The journal's idle fold is timed after an edit; when it fires while the benchmark opens again (ctrl+r,
    a sync's b: no model then) it does nothing. It raised AttributeError in the timer (a CI run saw it)."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        model, screen.model = screen.model, None
        screen._fold_if_due()  # as the timer would, mid-reopen
        screen.model = model
        screen._fold_if_due()


@pytest.mark.slow
async def test_the_version_prompt_gives_the_same_value_typed_in_a_burst_or_slowly(tiny):
    """Newcomer s9, N2: `V` then text in one burst was appended to the filled-in version; with the prompt open,
    ctrl+u and a new version in one burst left the field empty (ctrl+u's binding ran after the characters)."""
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        qid, doc = screen.qid, screen.doc
        book = screen.model.labels
        await pilot.press("2", "escape")
        await pilot.pause()
        await pilot.press("V", *"slow")  # at a human pace: the selected value is replaced
        assert app.screen.query_one(Input).value == "slow"
        await pilot.press("escape")
        await pilot.pause()
        await burst(pilot, "V", *"fast")
        assert app.screen.query_one(Input).value == "fast"
        await burst(pilot, "ctrl+u", *"handbook-2026.15")  # the prompt open: ctrl+u, then the new value
        assert app.screen.query_one(Input).value == "handbook-2026.15"
        await burst(pilot, "ctrl+u", *"handbook-2026.13", "enter")
        assert book.labels(qid)[doc].collection_version == "handbook-2026.13"
        assert app.screen is screen
