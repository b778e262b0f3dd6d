"""The review screen's editing actions: grade, reason, remove, collection version, unsure, undo and redo,
add, notes, guidelines. A mixin of `ReviewScreen` (screens/review.py), which gives it the model, the
panes and `after_edit`; every edit goes through `_write` (store, re-score, every pane, timings)."""

from __future__ import annotations

import gc
import time

from rich.text import Text
from textual import events
from textual.widgets import Input

from rankgate.core.text import visible
from rankgate.store.records import credit
from rankgate.tui.labels import Refused
from rankgate.tui.messages import LabelsEdited
from rankgate.tui.safe import excerpt, literal
from rankgate.tui.suggested import accept as accept_suggestion, ask_judge
from rankgate.tui.typeahead import type_key
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.widgets.label_editor import LabelEditor, LabelList
from rankgate.tui.widgets.ranking import RankingList
from rankgate.tui.widgets.reason_bar import ReasonBar


GC_DUE = 6  # young collections (of Python's 10) after which an edit's frame is followed by a full one
# Objects allocated between two young collections while reviewing (Python's default: 700). A key allocates
# tens of thousands (Textual's strips and styles): at 700 it ran dozens of young collections, about 1.5 ms
# of a key's 25 ms CPU at 10k queries (bench/bench_app.py, interleaved runs); the garbage they free waits a
# little longer.
YOUNG_GC = 20_000
IDLE_FOLD_S = 3.0  # a pause after an edit this long folds the store's journal (`_fold_when_idle`) ...
IDLE_FOLD_EDITS = 200  # ... when it holds this many edits


def review_collections() -> tuple[int, int, int]:
    """Young collections less often while reviewing; returns the thresholds to put back (`gc.set_threshold`)."""
    before = gc.get_threshold()
    gc.set_threshold(max(YOUNG_GC, before[0]), *before[1:])
    return before


def collect_if_due() -> None:
    """A full collection now, after an edit's frame, when Python's own is near. Each frame leaves cyclic
    garbage (Textual's strips cache themselves) that only a full collection frees; done by Python it fell
    on a key every few edits and cost 50-150 ms there. Here it costs the same, while the person reads."""
    if gc.isenabled() and gc.get_count()[2] >= GC_DUE:
        gc.collect()


class EditingActions:
    """Grade, reason, remove, version, unsure, undo/redo, add, notes: each writes through `_write`."""

    def _bar(self) -> ReasonBar:
        bar = getattr(self, "_reason_bar", None)
        if bar is None:  # looked up once: this runs on every key
            bar = self._reason_bar = self.query_one(ReasonBar)
        return bar

    def reason_bar_typing(self) -> ReasonBar | None:
        """The reason bar when it is open and its field has the focus (ReviewApp.on_event types into it)."""
        bar = self._bar()
        return bar if bar.is_open and self.focused is bar.field else None

    def take_early_key(self, event: events.Key) -> None:
        """A key typed in one burst with the key that opened a prompt (a paste ending in Enter, tmux
        send-keys, a fast typist) is read before the prompt opens: it went to the list focused then and
        reaches the app (ReviewApp.on_key) after the prompt opened. It belongs to the prompt: handed over in
        order, rather than run as this screen's binding (a letter is an action here) or lost. A key read after
        the prompt opened goes where the focus is."""
        top = self.app.screen
        bar = self._bar()
        prompt = (bar if bar.is_open else None) if top is self else top
        if (prompt is not None and hasattr(prompt, "take_key") and event.time < prompt.opened_at
                and prompt.take_key(event)):
            event.stop()
            event.prevent_default()
        elif top is self and event.time < self.filter_opened_at and self._filter_key(event):
            event.stop()
            event.prevent_default()

    def _filter_key(self, event: events.Key) -> bool:
        """A key typed in one burst with `/`, into the query filter: text, Backspace, Enter (Escape and
        other keys act as typed now)."""
        inp = self.focused
        if not isinstance(inp, Input) or inp.id != "query-filter":
            return False

        def enter() -> None:
            self.set_focus(self.queries.list)  # now, as the filter's Enter does: the keys after it are the list's
            self.filter_opened_at = 0.0
            inp.post_message(Input.Submitted(inp, inp.value))

        return type_key(event, insert=inp.insert_text_at_cursor, delete_left=inp.action_delete_left, enter=enter)

    def _write(self, qid: str, doc: str, write) -> bool:
        """Run one edit of the store (`write()`), re-score its query, update every pane. A refused edit (the
        app's own check, or the store's) says why and changes nothing."""
        t0 = time.perf_counter()
        try:
            write()
        except Refused as e:
            self.notify(str(e), severity="warning", markup=False, timeout=8)
            return False
        except Exception as e:  # the store refused: nothing changed
            self.notify(f"label not saved: {e}", severity="error", markup=False, timeout=8)
            return False
        self.last_store_s = time.perf_counter() - t0  # the store's write (journal append and fsync)
        self.model.apply_edit(qid)
        self.after_edit(qid, doc)
        self.last_edit_s = time.perf_counter() - t0
        self._fold_when_idle()
        self.app.call_after_refresh(self._painted, t0)
        self.post_message(LabelsEdited(qid, doc, self.last_edit_s))
        return True

    def edit(self, qid: str, doc: str, grade: int | None, reason: str | None = None, *,
             version: str | None = None, merge: bool = False, open: bool = False) -> bool:
        """Write the reviewer's judgment (grade None: remove it) to the store, re-score its query, update
        every pane."""
        book = self.model.labels
        if grade is None:
            removed: list = []

            def remove():
                removed.append(book.remove(qid, doc))
                if removed[0] is None:
                    raise Refused("this document has no label to remove")

            if not self._write(qid, doc, remove):
                return False
            lab = removed[0]
            where = visible(f"{qid} {doc}", lines="space")
            self.notify(f"removed {where}: {lab.grade} (ctrl+z to undo)", title="removed", markup=False)
            return True
        mine = book.mine(qid, doc)
        what = None  # the undo step's name: "grade 2" unless only the reason changed (`r`)
        if reason is not None and mine is not None and mine.grade == grade and reason != mine.reason:
            what = f'reason "{excerpt(reason, 30)}"' if reason else "reason (emptied)"
        corrects = (qid, doc) in self._correcting()  # "correct theirs" was chosen for this pair (`_whose`)
        return self._write(qid, doc, lambda: book.set(qid, doc, grade, reason, version, what=what, merge=merge,
                                                      open=open, corrects=corrects))

    def _correcting(self) -> set:
        """The pairs whose other reviewers' judgments the reviewer chose to correct (`_whose`)."""
        pairs = getattr(self, "_correct_pairs", None)
        if pairs is None:
            pairs = self._correct_pairs = set()
        return pairs

    def _fold_when_idle(self) -> None:
        """The store folds its journal into its snapshot every thousand edits, on the edit that reaches it
        (0.2 s of CPU at 10k queries: the one key an expert would notice). Here it folds instead once the
        reviewer has paused for `IDLE_FOLD_S` after an edit, when the journal holds `IDLE_FOLD_EDITS`."""
        timer = getattr(self, "_idle_fold", None)
        if timer is not None:
            timer.stop()
        self._idle_fold = self.set_timer(IDLE_FOLD_S, self._fold_if_due)

    def _fold_if_due(self) -> None:
        if self.model is not None:  # (None while the benchmark opens again: ctrl+r, a sync's b)
            self.model.labels.fold_if_due(IDLE_FOLD_EDITS)

    def _painted(self, t0: float) -> None:
        self.last_painted_at = time.perf_counter()
        self.last_painted_cpu = time.process_time()  # the app's CPU time then (bench/bench_app.py)
        self.last_paint_s = self.last_painted_at - t0
        if not self._fresh_busy:  # else once the fresh gate is shown (_decided)
            collect_if_due()

    def _follow_focus(self) -> None:
        """The focused list's highlighted document is the current one, now: a key typed right after a
        cursor move acts on the row it moved to (the highlight's own message may still be on its way). The
        same for the query: a grade typed in one burst after `/dns` Enter grades a document of the query
        the filter moved to, not of the one shown before (QueryPane.catch_up)."""
        qi = self.queries.catch_up()
        if qi != self._list_at:  # the list moved since the query shown was picked
            self.show_query(qi)
        focused = self.focused
        if isinstance(focused, (RankingList, LabelList)) and 0 <= focused.cursor < len(focused.rows) \
                and self._pointed_at != (focused, focused.cursor):  # (not where u or n left it: NavigationActions)
            self.set_doc(focused.rows[focused.cursor].doc)

    def _need_doc(self) -> bool:
        self._follow_focus()
        if self.qi is None or self.doc is None:
            self.notify("highlight a document first (in the rankings or the labels)", severity="warning")
            return False
        return True

    # The answers to "whose judgment is this edit?" (`_whose`); the `-session` ones are not asked again.
    # One line each at 80 columns.
    WHOSE = {"correct": "Correct theirs: yours replaces it, no disagreement",
             "correct-session": "Correct theirs, and every label of theirs this session",
             "mine": "Add mine beside theirs: a disagreement, adjudicated later",
             "mine-session": "Add mine beside theirs, for every label this session"}

    def _whose(self, what: str, then, adjudicate=None) -> None:
        """Editing a label only other reviewers judged is explicit: correct theirs (the store removes theirs in
        the same edit, history keeps it: no disagreement), add mine beside theirs (a disagreement until
        adjudicated), adjudicate (when they disagree and `adjudicate` is given), or cancel; the first two can
        hold for the rest of the session (`whose_for_session`: not asked again). Text typed ahead of the
        question (a reason) goes to what opens after the answer. Otherwise `then()` at once."""
        qid, doc = self.qid, self.doc
        other = self.model.labels.others(qid, doc) if self.ask_whose else None
        if other is None:
            then()
            return
        session = getattr(self, "whose_for_session", None)
        if session is not None:
            self._answer_whose(session, qid, doc, then, adjudicate, [])
            return
        who = ", ".join(credit(r) for r in (other.reviewers or (other.reviewer,)))
        title = Text(end="")
        title.append_text(literal(f"{doc}", style="bold cyan"))
        title.append(" is ", style="bold")
        title.append_text(literal(who, style="bold"))
        title.append("'s label", style="bold")
        body = Text(f"grade {other.grade}", end="")
        if other.how:
            body.append("  ")
            body.append_text(literal(other.how, style="dim"))
        body.append("\n")
        body.append_text(literal(f"You ({self.model.labels.reviewer}) have not judged it. How should {what} be "
                                 "recorded?"))
        options = list(self.WHOSE.items())
        if who.startswith("file "):  # a qrels file's labels: the session's answer in the file's words
            options[1] = ("correct-session", "Correct the file's labels, all of them, this session")
        if adjudicate is not None and other.disputed:
            options.append(("adjudicate", "Adjudicate: record the final grade, with a reason"))
        options.append(("cancel", "Cancel"))
        from rankgate.tui.screens.prompts import Choice

        choice = Choice(title, body, options, keep_text=True)

        def chosen(answer: str | None) -> None:
            self._answer_whose(answer, qid, doc, then, adjudicate, choice.kept)

        self.app.push_screen(choice, chosen)

    def _answer_whose(self, answer: str | None, qid: str, doc: str, then, adjudicate, kept: list) -> None:
        if answer is None:
            return
        if answer.endswith("-session"):
            answer = self.whose_for_session = answer[: -len("-session")]
            self.notify(f"{'correcting' if answer == 'correct' else 'adding yours beside'} other reviewers' labels "
                        "for the rest of this session", timeout=4)
        if answer == "adjudicate":
            adjudicate()
            return
        if answer == "correct":
            self._correcting().add((qid, doc))
        then()
        self._hand_over(qid, doc, kept)

    def _hand_over(self, qid: str, doc: str, kept: list) -> None:
        """Text typed ahead of the whose-question, to what opened after it: the reason bar (opened for the
        label when nothing else did), or a prompt."""
        if not kept:
            return
        top, bar = self.app.screen, self._bar()
        if top is self and not bar.is_open:
            mine = self.model.labels.mine(qid, doc)
            if mine is None:
                return
            bar.ask(qid, doc, mine.grade, mine.reason, return_to=self.focused)
        target = bar if top is self else top
        for event in kept:
            if hasattr(target, "take_key"):
                target.take_key(event)

    def action_grade(self, grade: int) -> None:
        if self._negative_until and grade >= 0:
            grade = -grade if time.monotonic() < self._negative_until else grade
        self._negative_until = 0.0
        if grade not in self.grades:
            from rankgate.tui.screens.label_form import scale_text

            self.notify(f"grade {grade} is not on this benchmark's scale ({scale_text(self.grades)})",
                        severity="warning", markup=False)
            return
        if not self._need_doc():
            return
        qid, doc = self.qid, self.doc
        self._whose(f"grade {grade}", lambda: self._grade(qid, doc, grade),
                    lambda: self._adjudicate_pair(qid, doc, grade))

    def _grade(self, qid: str, doc: str, grade: int) -> None:
        after = self._label_after(doc) if getattr(self, "labels_only", False) else None
        if not self.edit(qid, doc, grade, open=True):
            return
        if after is not None:  # labels only: the grade key moves on to the next label, as the list showed it
            self._highlight_label(after)
        if self.ask_reason:
            lab = self.model.labels.mine(qid, doc)
            self.query_one(ReasonBar).ask(qid, doc, grade, lab.reason if lab else "", return_to=self.focused)

    def _label_after(self, doc: str) -> str | None:
        """The label listed after `doc` in the labels pane (None: it is the last, or not listed)."""
        rows = self.query_one(LabelEditor).list.rows
        at = next((i for i, lab in enumerate(rows) if lab.doc == doc), None)
        return rows[at + 1].doc if at is not None and at + 1 < len(rows) else None

    def _highlight_label(self, doc: str) -> None:
        lst = self.query_one(LabelEditor).list
        at = next((i for i, lab in enumerate(lst.rows) if lab.doc == doc), None)
        if at is not None:
            lst.cursor = at
            self.set_doc(doc)

    def _adjudicate_pair(self, qid: str, doc: str, grade: int | None) -> None:
        """The final grade of a disputed pair, with a reason (required), by this reviewer."""
        lab = self.model.labels.labels(qid).get(doc)
        grade = lab.grade if grade is None and lab is not None else grade

        def check(value: str) -> str:
            return "" if value.strip() else "an adjudication needs a reason"

        def done(reason: str | None) -> None:
            if reason:
                if self._write(qid, doc, lambda: self.model.labels.adjudicate(qid, doc, grade, reason.strip())):
                    self.notify(f"{visible(qid + ' ' + doc, lines='space')}: final grade {grade}",
                                title="adjudicated", markup=False)

        title = Text(f"Adjudicate: final grade {grade} of ", style="bold", end="")
        title.append_text(literal(doc, style="bold cyan"))
        from rankgate.tui.screens.prompts import TextPrompt

        self.app.push_screen(TextPrompt(title, "", placeholder="reason for the final grade (required)",
                                        check=check, id_="adjudicate-reason"), done)

    def action_accept_suggestion(self) -> None:
        """A: the judge's suggested grade and reason as my judgment (tui/suggested.py)."""
        if self._need_doc():
            accept_suggestion(self)
            self._show_doc()

    def action_ask_judge(self) -> None:
        """S: the judge's suggestions for this query's unjudged documents, in a worker (tui/suggested.py)."""
        ask_judge(self)

    def action_negative_grade(self) -> None:
        """`-` then a digit: a negative grade (scales such as -2..4)."""
        if not any(g < 0 for g in self.grades):
            from rankgate.tui.screens.label_form import scale_text

            self.notify(f"this benchmark's scale has no negative grade ({scale_text(self.grades)})",
                        severity="warning", markup=False)
            return
        self._negative_until = time.monotonic() + 3.0
        self.notify("negative grade: press a digit", timeout=3)

    def action_pick_grade(self) -> None:
        if not self._need_doc():
            return
        qid, doc = self.qid, self.doc
        lab = self.model.labels.labels(qid).get(doc)

        def done(grade: int | None) -> None:
            if grade is not None and (self.qid, self.doc) == (qid, doc):
                self._negative_until = 0.0  # the picked grade as it is
                self.action_grade(grade)

        from rankgate.tui.screens.prompts import GradePicker

        self.app.push_screen(GradePicker(self.grades, lab.grade if lab else None, doc), done)

    def action_edit_reason(self) -> None:
        if not self._need_doc():
            return
        qid, doc = self.qid, self.doc
        lab = self.model.labels.labels(qid).get(doc)
        if lab is None:  # a reason sits on a judgment: the grade first (the picker), as `!` does, then the reason
            def graded(grade: int | None) -> None:
                if grade is not None and self.edit(qid, doc, grade, open=True):
                    self.query_one(ReasonBar).ask(qid, doc, grade, "", return_to=self.focused)

            self.notify("not judged yet: pick a grade, then type the reason", timeout=5)
            from rankgate.tui.screens.prompts import GradePicker

            self.app.push_screen(GradePicker(self.grades, None, doc), graded)
            return

        def ask() -> None:
            mine = self.model.labels.mine(qid, doc)
            self.query_one(ReasonBar).ask(qid, doc, (mine or lab).grade, mine.reason if mine else "",
                                          return_to=self.focused)

        self._whose("your reason", ask, lambda: self._adjudicate_pair(qid, doc, None))

    def action_remove_label(self) -> None:
        if not self._need_doc():
            return
        self.edit(self.qid, self.doc, None)

    def _labelled(self, hint: str):
        """(query, document, the label book, its label) of the highlighted document; None, saying so, when it
        has no label yet."""
        if not self._need_doc():
            return None
        qid, doc, book = self.qid, self.doc, self.model.labels
        lab = book.labels(qid).get(doc)
        if lab is None:
            self.notify(f"this document has no label yet: {hint}", severity="warning")
            return None
        return qid, doc, book, lab

    def action_set_version(self) -> None:
        """The collection version the reviewer inspected, for the highlighted label (default: the benchmark's)."""
        found = self._labelled("grade it first")
        if found is None:
            return
        qid, doc, book, lab = found
        mine = book.mine(qid, doc)
        current = self.model.collection_version or (mine.collection_version if mine else lab.collection_version)

        def check(value: str) -> str:
            return "" if value.strip() else "the collection version cannot be empty: nothing changed"

        def done(value: str | None) -> None:
            if value is not None:
                if self._write(qid, doc, lambda: book.set_version(qid, doc, value)):
                    self.notify(f"collection version {visible(value.strip(), lines='space')} for "
                                f"{visible(doc, lines='space')}", timeout=4, markup=False)

        def ask() -> None:
            title = Text("Collection version of ", style="bold", end="")
            title.append_text(literal(doc, style="bold cyan"))
            title.append("  (now: ", style="dim")
            title.append_text(literal((mine or lab).collection_version or "none", style="dim"))
            title.append(")", style="dim")
            from rankgate.tui.screens.prompts import TextPrompt

            self.app.push_screen(TextPrompt(
                title, current, placeholder="the collection version you inspected",
                help="the benchmark's current version is filled in · Enter saves · Escape cancels", check=check,
                id_="version-input", warn=self.model.snapshot_warning), done)

        self._whose("your collection version", ask)

    def action_toggle_unsure(self) -> None:
        """Mark the highlighted label unsure, with a note (modal); on a label marked unsure, clear the mark.
        An unjudged document is graded first (the grade picker), as a mark sits on a judgment."""
        if not self._need_doc():
            return
        qid, doc, book = self.qid, self.doc, self.model.labels
        lab = book.labels(qid).get(doc)
        if lab is None:
            def graded(grade: int | None) -> None:
                if grade is not None and self.edit(qid, doc, grade):
                    self._ask_unsure(qid, doc)

            self.notify("not judged yet: pick a grade (your best guess), then say what is unsure", timeout=5)
            from rankgate.tui.screens.prompts import GradePicker

            self.app.push_screen(GradePicker(self.grades, None, doc), graded)
            return
        if lab.unsure:
            if self._write(qid, doc, lambda: book.clear_unsure(qid, doc)):
                self.notify("unsure mark cleared (ctrl+z to undo)", timeout=4)
            return
        self._ask_unsure(qid, doc)

    def _ask_unsure(self, qid: str, doc: str) -> None:
        book = self.model.labels

        def done(note: str | None) -> None:
            if note is not None:
                self._write(qid, doc, lambda: book.mark_unsure(qid, doc, note.strip() or "unsure"))

        title = Text("Unsure about ", style="bold", end="")
        title.append_text(literal(doc, style="bold cyan"))
        from rankgate.tui.screens.prompts import TextPrompt

        self.app.push_screen(TextPrompt(title, "", placeholder="what needs discussion? (a note)",
                                        help="Enter marks it unsure · Escape cancels · ! again clears the mark",
                                        id_="unsure-note"), done)

    def action_undo(self) -> None:
        self._undo_redo("undo")

    def action_redo(self) -> None:
        self._undo_redo("redo")

    def _undo_redo(self, which: str) -> None:
        book = self.model.labels
        if self.query_one(ReasonBar).is_open:
            self.query_one(ReasonBar).close()
        if not (book.done if which == "undo" else book.undone):
            self.notify(f"nothing to {which} in this session", timeout=3)
            return
        got: list = []
        edit = (book.done if which == "undo" else book.undone)[-1]
        if not self._write(edit.qid, edit.doc, lambda: got.append(getattr(book, which)())):
            return
        where = visible(f"{edit.qid} {edit.doc}", lines="space")
        done = "undone" if which == "undo" else "redone"  # the title: a narrow screen shows "undone: grade 1 of ..."
        self.notify(f"{visible(edit.what, lines='space')} of {where}", title=done, markup=False, timeout=4)
        if self.qid != edit.qid or self.doc != edit.doc:
            self.go_to(edit.qid, edit.doc)

    def action_add_label(self) -> None:
        if self.qi is None:
            return
        qid, qi = self.qid, self.qi
        m = self.model
        corpus = self.query_one(DocView).corpus

        def known(doc: str) -> bool:
            if doc in m.labels.labels(qid) or (corpus and doc in corpus):
                return True
            return any(doc in ri.names(qi) for ri in m.runs.values())

        def done(result) -> None:
            if result:
                doc, grade, reason, version = result
                if self.edit(qid, doc, grade, reason, version=version or None):
                    self.set_doc(doc)

        from rankgate.tui.screens.label_form import LabelForm

        self.app.push_screen(LabelForm(qid, scale=self.grades, version=m.collection_version, known=known), done)

    def action_edit_notes(self) -> None:
        if self.qi is None:
            return
        m = self.model
        q = m.query(self.qi)

        def done(notes: str | None) -> None:
            if notes is None or notes == q.notes:
                return
            try:
                new = m.labels.set_notes(q, notes)
            except Exception as e:
                self.notify(f"notes not saved: {e}", severity="error", markup=False, timeout=8)
                return
            m.queries[q.id] = new
            m.version += 1
            if self.qid == q.id:
                self.query_one(LabelEditor).show(self.qi, self.doc, keep_cursor=True)
            self.notify("notes saved", timeout=3)

        from rankgate.tui.screens.prompts import NotesEditor

        self.app.push_screen(NotesEditor(q.id, q.notes), done)

    def action_guidelines(self) -> None:
        from rankgate.tui.screens.guidelines import GuidelinesScreen  # (Markdown: imported when first shown)

        manifest = self.loaded.manifest if self.loaded else None
        self.app.push_screen(GuidelinesScreen(manifest.guidelines if manifest else None,
                                              manifest.folder if manifest else None))
