"""Pilot tests of an expert's grading flow (issue 13): collection version, undo and redo, others' labels,
the benchmark's grade scale, unsure marks, guidelines and notes, progress, and history provenance."""

from __future__ import annotations

import pytest

import re

from textual import events

from rich.console import Console

from rankgate.tui.commands import ReviewCommands
from rankgate.tui.screens.guidelines import GuidelinesScreen
from rankgate.tui.screens.help import HelpScreen
from rankgate.tui.screens.history import HistoryScreen
from rankgate.tui.screens.label_form import LabelForm
from rankgate.tui.screens.prompts import Choice, GradePicker, NotesEditor, TextPrompt
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.widgets.label_editor import LabelEditor
from tests.tui.conftest import SIZE, make_app, ready
from tests.tui.test_app import collect_notes, plain

SCALE = {-2: "junk", -1: "spam", 0: "off topic", 1: "related", 2: "good", 3: "great", 4: "perfect"}


def rendered(renderable, width: int = 160) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text()


def label_rows(screen) -> list[str]:
    lst = screen.query_one(LabelEditor).list
    return [lst.render_row(i, 40).plain for i in range(len(lst.rows))]


async def choose(pilot, option: str) -> None:
    """Pick an option of the Choice modal on screen."""
    modal = pilot.app.screen
    assert isinstance(modal, Choice)
    keys = [key for key, _ in modal.options]
    await pilot.press(*["down"] * keys.index(option), "enter")
    await pilot.pause()


@pytest.mark.slow
async def test_collection_version_key_sets_it_and_refuses_an_empty_one(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        assert "collection tiny-1" in plain(screen.query_one("#top-bar"))
        await pilot.press("2", "escape")  # d-rpo: my own judgment
        await pilot.press("V")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, TextPrompt)
        field = prompt.query_one("#version-input")
        assert field.value == "tiny-1"  # prefilled with the benchmark's current version
        field.value = "tiny-2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        lab = m.labels.labels("q-restore")["d-rpo"]
        assert (lab.grade, lab.collection_version) == (2, "tiny-2")
        assert m.labels.backend.ws.judgment("q-restore", "d-rpo").collection_version == "tiny-2"  # stored
        assert any("d-rpo" in row and "@tiny-2" in row for row in label_rows(screen))  # shown in the list
        assert "collection tiny-2" in plain(screen.query_one("#label-detail"))
        # Empty: refused in the modal with the reason, nothing changed.
        await pilot.press("V")
        await pilot.pause()
        prompt = app.screen
        prompt.query_one("#version-input").value = "  "
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and "cannot be empty" in plain(prompt.query_one("#prompt-help"))
        await pilot.press("escape")
        await pilot.pause()
        assert m.labels.labels("q-restore")["d-rpo"].collection_version == "tiny-2"
        # From the palette too.
        assert "set_version" in {action for _, action, _ in ReviewCommands(screen)._entries()}


@pytest.mark.slow
async def test_undo_and_redo_of_grade_reason_remove_and_version(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        notes = collect_notes(app)
        m = screen.model
        ws = m.labels.backend.ws
        assert screen.query_one("#query-list").has_focus
        await pilot.press("2", *"states the RPO", "enter")  # grade and reason: one edit
        await pilot.pause()
        assert m.gate().accepted
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "d-rpo" not in m.labels.labels("q-restore")  # the grade and its reason, in one step
        assert not m.gate().accepted and m.unjudged[m.qindex["q-restore"]] > 0
        assert notes[-1].startswith("grade 2 of ")
        await pilot.press("ctrl+y")
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-rpo"]
        assert (lab.grade, lab.reason) == (2, "states the RPO") and m.gate().accepted
        # Remove, undone.
        await pilot.press("x")
        await pilot.pause()
        assert "d-rpo" not in m.labels.labels("q-restore")
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert m.labels.labels("q-restore")["d-rpo"].reason == "states the RPO"
        # A regrade, undone: the earlier grade comes back.
        await pilot.press("3", "escape")
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 3
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 2
        # Each undo and redo went to the store as what it is.
        events = ws.history("q-restore", "d-rpo")
        kinds = [(e.kind, getattr(e, "cause", "") or e.why) for e in events]
        assert len(events) >= 7 and sum("undo" in str(c) for _, c in kinds) == 3
        assert sum("redo" in str(c) for _, c in kinds) == 1
        # Nothing left to redo after a new edit; the undo stack empties and says so.
        for _ in range(10):
            await pilot.press("ctrl+z")
            await pilot.pause()
        assert notes[-1] == "nothing to undo in this session"
        assert "d-rpo" not in m.labels.labels("q-restore")
        assert "undo" in {action for _, action, _ in ReviewCommands(screen)._entries()}


@pytest.mark.slow
async def test_undo_of_a_version_change_and_of_an_edit_elsewhere_goes_back_there(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        await pilot.press("1", "escape")
        await pilot.press("V")
        await pilot.pause()
        app.screen.query_one("#version-input").value = "tiny-9"
        await pilot.press("enter")
        await pilot.pause()
        screen.go_to("q-gpu")
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert (screen.qid, screen.doc) == ("q-restore", "d-rpo")  # the undo shows where it acted
        assert m.labels.labels("q-restore")["d-rpo"].collection_version == "tiny-1"


@pytest.mark.slow
async def test_editing_another_reviewers_label_asks_first(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        ws = m.labels.backend.ws
        screen.set_doc("d-snap")  # seed's 0
        await pilot.press("2")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, Choice)
        assert [k for k, _ in modal.options] == ["correct", "correct-session", "mine", "mine-session", "cancel"]
        # (no disagreement yet: no adjudication)
        assert "seed" in modal.title_text.plain
        await choose(pilot, "cancel")
        assert app.screen is screen
        assert {j.reviewer for j in ws.reviews("q-restore", "d-snap")} == {"seed"}
        # `r` asks too; "add my own judgment" keeps theirs and adds mine.
        await pilot.press("r")
        await pilot.pause()
        await choose(pilot, "mine")
        assert screen.query_one("#reason").is_open
        await pilot.press(*"no restore steps", "enter")
        await pilot.pause()
        revs = {j.reviewer: (j.grade, j.reason) for j in ws.reviews("q-restore", "d-snap")}
        assert revs == {"seed": (0, "Lists snapshots; no restore steps."), "tester": (0, "no restore steps")}
        # Now mine: a grade goes straight to my judgment.
        await pilot.press("1", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen)
        assert {j.reviewer: j.grade for j in ws.reviews("q-restore", "d-snap")} == {"seed": 0, "tester": 1}


@pytest.mark.slow
async def test_a_disputed_label_of_others_can_be_adjudicated(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        ws = m.labels.backend.ws
        ws.set_judgment("q-restore", "d-price", 2, reason="prices matter", reviewer="ana")
        m.labels._cache.pop("q-restore", None)
        m.apply_edit("q-restore")
        screen.go_to("q-restore", "d-price")
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        assert [k for k, _ in app.screen.options] == ["correct", "correct-session", "mine", "mine-session",
                                                      "adjudicate", "cancel"]
        await choose(pilot, "adjudicate")
        prompt = app.screen
        assert isinstance(prompt, TextPrompt)
        await pilot.press("enter")  # a reason is required
        await pilot.pause()
        assert app.screen is prompt and "needs a reason" in plain(prompt.query_one("#prompt-help"))
        await pilot.press(*"partly about cost", "enter")
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-price"]
        assert (lab.grade, lab.how) == (1, "adjudicated by tester")
        assert {j.reviewer: j.grade for j in ws.reviews("q-restore", "d-price")} == {"seed": 0, "ana": 2}


@pytest.mark.slow
async def test_the_grade_keys_follow_the_benchmarks_scale(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        # The default scale: the help lists each grade's key, not "0-3".
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = rendered(app.screen.query_one("#help-keys").content)
        for g, name in ((0, "not relevant"), (1, "partly relevant"), (2, "relevant"), (3, "the answer")):
            assert re.search(rf"^ {g} +Grade {g}: {name} ", help_text, re.M)
        assert "0-3" not in help_text
        await pilot.press("escape")
        await pilot.pause()
        # A scale of -2..4 (benchmark.toml `grades`).
        screen.grades = dict(SCALE)
        await pilot.press("7")  # not on the scale: not a grade key
        await pilot.pause()
        assert "d-rpo" not in m.labels.labels("q-restore")
        await pilot.press("minus", "2", "escape")  # `-` then a digit: -2
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == -2
        await pilot.press("4", "escape")
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 4
        # The picker lists the scale by name.
        await pilot.press("g")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, GradePicker) and picker.grades == sorted(SCALE)
        assert picker.query_one("#grade-options").highlighted == sorted(SCALE).index(4)  # the grade now
        await pilot.press("up", "up", "enter", "escape")  # 4 -> 2
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 2
        await pilot.press("minus", "g")  # a pending `-` does not turn a picked grade negative
        await pilot.pause()
        await pilot.press("down", "enter", "escape")  # 2 -> 3
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 3
        await pilot.press("g", "1", "escape")  # a grade's key in the picker grades at once
        await pilot.pause()
        assert m.labels.grades("q-restore")["d-rpo"] == 1 and isinstance(app.screen, ReviewScreen)
        await pilot.press("3", "escape")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        help_text = rendered(app.screen.query_one("#help-keys").content)
        assert re.search(r"^ -2 +Grade -2: junk  \(- then the digit\)", help_text, re.M)
        assert re.search(r"^ 4 +Grade 4: perfect", help_text, re.M)
        await pilot.press("escape")
        await pilot.pause()
        entries = {title for title, _, _ in ReviewCommands(screen)._entries()}
        assert "Grade -1: spam" in entries and "Grade 4: perfect" in entries and "Grade 0: not relevant" not in entries


@pytest.mark.slow
async def test_the_add_form_refuses_a_grade_off_the_scale_and_asks_about_an_unknown_document(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        before = dict(m.labels.grades("q-restore"))
        await pilot.press("a")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LabelForm)
        await pilot.press(*"d-policy", "enter", "7", "enter", "enter", "enter")
        await pilot.pause()
        assert app.screen is form
        assert "grade 7 is not on this benchmark's scale (0 not relevant, 1 partly relevant" in \
            plain(form.query_one("#form-help"))
        assert form.focused is form.query_one("#form-grade")
        form.query_one("#form-grade").value = "relevant"  # a grade's name works too
        form.query_one("#form-version").value = ""
        form.query_one("#form-reason").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert "collection version cannot be empty" in plain(form.query_one("#form-help"))
        assert m.labels.grades("q-restore") == before  # nothing changed
        form.query_one("#form-version").value = "tiny-0"
        form.query_one("#form-reason").focus()
        await pilot.press("enter")  # d-policy is in the runs: no question
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-policy"]
        assert (lab.grade, lab.collection_version) == (2, "tiny-0")


@pytest.mark.slow
async def test_unsure_in_memory_and_on_an_unjudged_document_it_grades_it_first(tiny):
    """One app session (a start costs ~0.7 CPU s): unsure set, cleared, undone; then on an unjudged document."""
    app = make_app(tiny, memory=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        await pilot.press("exclamation_mark")  # d-rpo has no label: its grade first (the picker) ...
        await pilot.pause()
        assert isinstance(app.screen, GradePicker)
        await pilot.press("escape")  # ... cancelled: nothing changes
        await pilot.pause()
        assert isinstance(app.screen, ReviewScreen) and "d-rpo" not in m.labels.labels("q-restore")
        await pilot.press("1", "escape", "exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        await pilot.press(*"is RPO [b]enough[/b]?", "enter")
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-rpo"]
        assert lab.unsure == "is RPO [b]enough[/b]?"
        assert any("d-rpo" in row and " ! " in row for row in label_rows(screen))
        assert "unsure: is RPO [b]enough[/b]?" in plain(screen.query_one("#label-detail"))  # literal
        assert [m.qids[i] for i in m.order("is:unsure")] == ["q-restore"]  # the filter surfaces it
        await pilot.press("exclamation_mark")  # again: cleared
        await pilot.pause()
        assert m.labels.labels("q-restore")["d-rpo"].unsure == ""
        assert list(m.order("is:unsure")) == []
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert m.labels.labels("q-restore")["d-rpo"].unsure == "is RPO [b]enough[/b]?"
        await pilot.press("ctrl+z", "ctrl+z")
        await pilot.pause()
        assert "d-rpo" not in m.labels.labels("q-restore")
        # Unsure on the unjudged document, through the picker this time: the grade's key, then the note.
        assert screen.doc == "d-rpo"
        await pilot.press("exclamation_mark")
        await pilot.pause()
        assert isinstance(app.screen, GradePicker)
        await pilot.press("1")  # the grade's key in the picker
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)  # then the note
        await pilot.press(*"RPO or RTO?", "enter")
        await pilot.pause()
        lab = m.labels.labels("q-restore")["d-rpo"]
        assert (lab.grade, lab.unsure) == (1, "RPO or RTO?")


@pytest.mark.slow
async def test_unsure_with_the_store(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        await pilot.press("1", "escape", "exclamation_mark")
        await pilot.pause()
        await pilot.press(*"ask lena", "enter")
        await pilot.pause()
        assert m.labels.backend.ws.judgment("q-restore", "d-rpo").unsure == "ask lena"
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not m.labels.labels("q-restore")["d-rpo"].unsure


@pytest.mark.slow
async def test_guidelines_screen(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        manifest = screen.loaded.manifest
        await pilot.press("G")
        await pilot.pause()
        shown = app.screen
        assert isinstance(shown, GuidelinesScreen)
        assert 'add guidelines = "GUIDELINES.md" to benchmark.toml' in plain(shown.query_one("#guidelines-problem"))
        await pilot.press("escape")
        await pilot.pause()
        # A file: rendered as Markdown; its name (markup and an escape) shown literally.
        path = tiny / "[red]guide[red]\x1b.md"
        path.write_text("# Grading\n\n- **3**: the answer\n- 0: off topic \x1b[2J\n", encoding="utf-8")
        object.__setattr__(manifest, "guidelines", path)
        await pilot.press("G")
        await pilot.pause()
        await pilot.pause()
        shown = app.screen
        assert "[red]guide[red]\\x1b.md" in plain(shown.query_one("#guidelines-title"))
        assert shown.text is not None and "\\x1b[2J" in shown.text and "\x1b" not in shown.text
        assert shown.query_one("#guidelines-md")
        await pilot.press("escape")
        await pilot.pause()
        # Unreadable: said in place; the app goes on.
        path.write_bytes(b"\xff\xfe not utf-8")
        await pilot.press("G")
        await pilot.pause()
        assert "not UTF-8" in plain(app.screen.query_one("#guidelines-problem"))
        await pilot.press("escape")
        await pilot.pause()
        object.__setattr__(manifest, "guidelines", tiny)  # a folder
        await pilot.press("G")
        await pilot.pause()
        assert "is a folder" in plain(app.screen.query_one("#guidelines-problem"))
        await pilot.press("escape", "2", "escape")
        await pilot.pause()
        assert screen.model.labels.grades("q-restore")["d-rpo"] == 2


@pytest.mark.slow
async def test_query_notes_are_edited_in_the_app_and_kept_with_history(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        await pilot.press("o")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, NotesEditor)
        area = editor.query_one("#notes-text")
        assert area.text == "Point-in-time recovery from the base backup and WAL."
        area.text = "PITR; RPO is 5 minutes."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen
        assert m.queries["q-restore"].notes == "PITR; RPO is 5 minutes."
        assert "notes: PITR; RPO is 5 minutes." in plain(screen.query_one("#query-head"))
        ws = m.labels.backend.ws
        assert ws.query("q-restore").notes == "PITR; RPO is 5 minutes."
        assert ws.query("q-restore").text == "restore the postgres database after a dropped table"
        await pilot.press("h")
        await pilot.pause()
        rows = app.screen.query_one("#history-list").changes
        assert rows[0].action == "notes" and rows[0].reason == "PITR; RPO is 5 minutes."
        await pilot.press("escape")
    # kept: a second open shows them
    app2 = make_app(tiny)
    async with app2.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app2.screen.model.queries["q-restore"].notes == "PITR; RPO is 5 minutes."


@pytest.mark.slow
async def test_progress_in_the_status_line(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model

        def brute() -> int:
            n = 0
            for qi, q in enumerate(m.qids):
                top = set(m.runs[m.baseline].names(qi)[: m.k]) | set(m.runs[m.candidate].names(qi)[: m.k])
                n += len(top - m.labels.grades(q).keys())
            return n

        status = plain(screen.query_one("#status-bar"))
        left = brute()
        assert "judged 0 this session, 0 today" in status
        assert f"{left} unjudged in the gate's top 3" in status
        queue = len(m.review_queue())
        assert f"queue {queue} left" in status
        await pilot.press("2", "escape", "n")
        await pilot.pause()
        await pilot.press("0", "escape")
        await pilot.pause()
        status = plain(screen.query_one("#status-bar"))
        assert m.unjudged_in_pair() == brute() == left - 2
        assert "judged 2 this session, 2 today" in status and f"{left - 2} unjudged" in status
        assert f"queue {m.queue_left()} left" in status and m.queue_left() <= queue - 1
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "judged 1 this session" in plain(screen.query_one("#status-bar"))
        await pilot.press("w")  # the pair changes: counted again
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert m.unjudged_in_pair() == brute()


@pytest.mark.slow
async def test_history_says_whose_judgment_and_who_imported_it(tiny):
    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        await pilot.press("2", *"states the RPO", "enter")  # a grade and its reason: one row
        await pilot.pause()
        await pilot.press("V")
        await pilot.pause()
        app.screen.query_one("#version-input").value = "tiny-2"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("h")
        await pilot.pause()
        shown = app.screen
        assert isinstance(shown, HistoryScreen)
        lst = shown.query_one("#history-list")
        rows = {(c.doc, c.action): lst.render_row(i, 160).plain for i, c in enumerate(lst.changes)}
        assert [c.action for c in lst.changes if c.doc == "d-rpo"] == ["version", "set"]  # newest first
        assert "collection version tiny-1 → tiny-2" in rows[("d-rpo", "version")]
        assert "states the RPO" in rows[("d-rpo", "set")] and "tester" in rows[("d-rpo", "set")]
        imported = rows[("d-snap", "import")]
        assert "seed" in imported and "imported by tester" in imported  # whose judgment, and apart, who imported
        assert "imported by" not in rows[("d-rpo", "set")]
        await pilot.press("escape")


@pytest.mark.slow
async def test_fast_typing_grades_the_documents_the_keys_meant(tiny):
    """`1 Esc Down 0 Esc Down 2 Esc` typed at once: three documents graded, each with its own key."""
    from rankgate.tui.widgets.ranking import RankingPane

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        m = screen.model
        screen.ask_whose = False  # seed's labels: add my own judgment without asking
        screen.show_query(m.qindex["q-gpu"])
        await pilot.pause()
        cand = screen.query_one(RankingPane).lists()["candidate"]
        cand.focus()
        await pilot.pause()
        docs = [r.doc for r in cand.rows[:3]]
        before = {d: lab.grade for d, lab in m.labels.labels("q-gpu").items()}
        cand.cursor = 0
        await pilot.pause()
        for key in ("1", "escape", "down", "0", "escape", "down", "2", "escape"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        for _ in range(20):
            await pilot.pause()
        after = {d: lab.grade for d, lab in m.labels.labels("q-gpu").items()}
        assert [after.get(d) for d in docs] == [1, 0, 2], (docs, before, after)


@pytest.mark.slow
async def test_a_grade_and_its_reason_are_one_history_row_in_the_store_too(tiny):
    """Grade, then the reason typed right after it: one row in `labels history` and in the app's history."""
    from rankgate.store.workspace import Workspace

    app = make_app(tiny)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.set_doc("d-rpo")
        await pilot.pause()
        await pilot.press("2", *"states the RPO", "enter")
        await pilot.pause()
        rows = [c for c in screen.model.labels.history("q-restore", "d-rpo") if c.reviewer == "tester"]
        assert [(c.action, c.grade, c.reason) for c in rows] == [("set", 2, "states the RPO")]
        db = screen.model.labels.backend.ws.path
    with Workspace.open(db, readonly=True) as ws:
        mine = [e for e in ws.history("q-restore", "d-rpo") if e.who == "tester"]
    assert len(mine) == 1 and mine[0].kind == "set" and mine[0].after["reason"] == "states the RPO"
    assert mine[0].before is None and mine[0].amends is not None  # the journal keeps both events


@pytest.mark.slow
async def test_history_shows_the_highlighted_change_whole(tiny):
    """The list's columns cut a long reason and a long reviewer name; the line under it shows them in full."""
    app = make_app(tiny, memory=True, reviewer="a-reviewer-with-a-rather-long-name")
    reason = "the runbook states the RPO and the whole procedure, but its screenshots show the old console " * 2
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        screen = app.screen
        screen.edit("q-restore", "d-rpo", 2, reason.strip())
        await pilot.press("h")
        await pilot.pause()
        shown = app.screen
        assert isinstance(shown, HistoryScreen)
        whole = plain(shown.query_one("#history-detail"))
        assert reason.strip() in whole.replace("\n", " ") or reason.strip() in whole
        assert "a-reviewer-with-a-rather-long-name" in whole
        assert shown.query_one("#history-detail").region.height >= 3  # wrapped, on screen
