"""The judging screen: one query, one passage, the grade keys; one key per judgment.

The query's text and the document's text (query terms marked) fill the screen; a strip says where the
document sits in each run and what its label is now; a grade key stores the grade through the label
book (the store: durable, in history, undoable) and shows the next document that needs a judgment
(tui/judging.py picks it). A grade the benchmark asks a reason for (`reason_required` in benchmark.toml)
opens the reason box first and is stored with its reason. The review screen's model and store are
shared; its panes catch up when this screen closes (Escape).
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen

from rankgate.core.text import visible
from rankgate.tui.commands import JUDGING_COMMANDS, judging_bindings, grade_key
from rankgate.tui.judging import JudgingCursor, Place
from rankgate.tui.labels import Refused
from rankgate.tui.safe import id_excerpt, literal
from rankgate.tui.screens.editing import collect_if_due
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.widgets.grade_keys import GradeKeys
from rankgate.tui.widgets.notice_line import NoticeLine
from rankgate.tui.widgets.rank_strip import RankStrip
from rankgate.tui.widgets.reason_bar import ReasonBar
from rankgate.tui.widgets.text_static import TextStatic


class JudgingScreen(Screen):
    """Opened over the review screen (`review`), whose model, grade scale and corpus it uses."""

    BINDINGS = judging_bindings()
    COMMAND_LIST = JUDGING_COMMANDS
    AUTO_FOCUS = ""

    def __init__(self, review) -> None:
        super().__init__()
        self.review = review
        self.model = review.model
        self.grades = review.grades
        manifest = review.loaded.manifest if review.loaded is not None else None
        self.needs_reason: frozenset[int] = getattr(manifest, "reason_required", frozenset()) or frozenset()
        self.cursor = JudgingCursor(self.model, labels_only=review.labels_only, has_text=self._has_text)
        self.edited: set[str] = set()  # queries edited here: the review screen's panes catch up on close
        self.unscored: set[str] = set()  # queries edited and not scored again yet (score(), after the frame)
        self.pending: tuple[Place, int] | None = None  # a grade waiting for its required reason
        self.judged = 0  # grades given on this screen
        self.last_key_at = 0.0  # perf_counter of the last grade key
        self.last_drawn_s = 0.0  # from that key to the next document drawn on screen
        self.drawn_at = 0.0  # perf_counter when the last document was drawn
        self.corpus = review.query_one(DocView).corpus  # the passages' texts (None while they are read)
        self.shown = False  # the first document is drawn (_first_show)

    def compose(self) -> ComposeResult:
        yield TextStatic(id="judge-top")
        yield DocView(id="judge-doc")
        yield RankStrip(id="judge-ranks")
        yield ReasonBar(id="judge-reason")
        yield GradeKeys(id="judge-keys")
        yield NoticeLine(id="notice")

    def on_mount(self) -> None:
        self.query_one(ReasonBar).display = False
        self.cursor.start(self.review.qid, self.review.doc)
        self.call_after_refresh(self._first_show)  # once the panes' own children are there

    def _first_show(self) -> None:
        source = self.review.query_one(DocView)
        doc = self.query_one(DocView)
        doc.set_corpus(self.corpus, source.has_corpus, missing=source.missing, error=source.error)
        doc.border_title = "Query and document"
        self.query_one(GradeKeys).show_keys(self.grades, self.needs_reason)
        self.shown = True
        self.show_place()

    def _has_text(self, doc: str) -> bool:
        return self.corpus is None or doc in self.corpus

    def on_resize(self) -> None:
        if self.shown:
            self.show_place()  # the strip and the top line follow the width

    def corpus_loaded(self, corpus, error: str = "") -> None:
        self.corpus = corpus
        if not self.shown:
            return  # (_first_show takes it)
        self.query_one(DocView).set_corpus(corpus, True, error=error)
        self.cursor.texts_known()
        at = self.cursor.at
        if not self.cursor.trail and at is not None and corpus and at.doc not in corpus:  # nothing graded yet
            self.cursor.start(at.qid, None)  # the first document with a text
            self.show_place()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "grade" and parameters:
            return int(parameters[0]) in self.grades
        return True

    # ---- showing ---------------------------------------------------------------------------------------

    def show_place(self) -> None:
        at, m = self.cursor.at, self.model
        doc = self.query_one(DocView)
        strip = self.query_one(RankStrip)
        if at is None:
            doc.show(None, "", qid="")
            strip.show(Text("every document that needs a judgment has one: Escape goes back to the panes (l returns)",
                            style="bold green"))
        else:
            q = m.query(m.qindex[at.qid])
            doc.show(at.doc, q.text or "", qid=at.qid if q.text else f"{at.qid} (no query text)")
            book = m.labels
            strip.show_place(self.cursor.ranks(at), book.labels(at.qid).get(at.doc), book.mine(at.qid, at.doc),
                             self.grades, k=m.k, blind=self.review.blind)
        self.refresh_top()
        self.call_after_refresh(self._drawn)

    def _drawn(self) -> None:
        self.drawn_at = time.perf_counter()
        if self.last_key_at:
            self.last_drawn_s = self.drawn_at - self.last_key_at
        collect_if_due()

    def refresh_top(self) -> None:
        """`JUDGE  q 1124210 · 3 left in this query · judged 5 here, 12 this session · queue 40`."""
        at, m, book = self.cursor.at, self.model, self.model.labels
        width = self.app.size.width - 2
        t = Text(" JUDGE ", style="bold reverse", end="")
        if at is not None:
            t.append(" query ", style="dim")
            t.append_text(literal(id_excerpt(at.qid, 20), style="bold cyan"))
            t.append(" · ", style="dim")
            t.append(f"{self.cursor.left_in(at.qid)}", style="bold magenta")
            t.append(" left in it", style="dim")
        t.append(" · judged ", style="dim")
        t.append(f"{self.judged}", style="bold")
        t.append(" here", style="dim")
        more = Text(f", {len(book.judged_session())} this session", style="dim", end="")
        if len(t.plain) + len(more.plain) <= width:
            t.append_text(more)
        if not book.saved and len(t.plain) + 20 <= width:
            t.append(" · NOT saved (no store)", style="bold red")
        self.query_one("#judge-top", TextStatic).show(t)

    def notify(self, message, *, title: str = "", severity: str = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Notices go to the notice line at the foot (it covers nothing), not over the passage."""
        self.query_one(NoticeLine).say(str(message), title=title, severity=severity, timeout=timeout, markup=markup)

    # ---- grading -----------------------------------------------------------------------------------------

    def action_grade(self, grade: int) -> None:
        self.last_key_at = time.perf_counter()
        at = self.cursor.at
        if at is None:
            self.notify("nothing left to judge: Escape goes back to the panes (l returns)")
            return
        if grade not in self.grades:
            return
        if grade in self.needs_reason:  # the reason first; the grade is stored with it
            def ask() -> None:
                self.pending = (at, grade)
                self.query_one(ReasonBar).ask(at.qid, at.doc, grade, "")
                self.notify(f"grade {grade} needs a reason: type it, Enter stores both (Escape: nothing stored)")

            self.whose_then(at, ask)
            return
        self.whose_then(at, lambda: self.store(at, grade, None) and self.advance())

    # The answers on this screen hold for the session (one key per judgment): the review screen keeps them.
    WHOSE = (("correct-session", "Correct theirs: yours replaces each of their labels this session "
                                 "(no disagreement; history keeps theirs)"),
             ("mine-session", "Add mine beside theirs, for every label this session (a disagreement each)"),
             ("cancel", "Cancel"))

    def whose_then(self, at: Place, then) -> None:
        """A grade on a label only other reviewers judged (a qrels file's, an import's): corrected or added
        beside, as chosen once for the session (asked here the first time; the review screen's answer holds
        too). Otherwise `then()` at once."""
        review = self.review
        other = self.model.labels.others(at.qid, at.doc) if getattr(review, "ask_whose", False) else None
        if other is None or getattr(review, "whose_for_session", None) is not None:
            then()
            return
        from rich.text import Text

        from rankgate.store.records import credit
        from rankgate.tui.screens.prompts import Choice

        who = ", ".join(credit(r) for r in (other.reviewers or (other.reviewer,)))
        title = Text(end="")
        title.append(id_excerpt(at.doc, 30), style="bold cyan")
        title.append(" is ", style="bold")
        title.append_text(literal(who, style="bold"))
        title.append(f"'s label (grade {other.grade})", style="bold")
        body = literal("How should your judgments of labels others made be recorded, this session?")

        def chosen(answer: str | None) -> None:
            if answer in (None, "cancel"):
                return
            review.whose_for_session = answer[: -len("-session")]
            then()

        self.app.push_screen(Choice(title, body, list(self.WHOSE)), chosen)

    def store(self, at: Place, grade: int, reason: str | None, *, merge: bool = False) -> bool:
        """The grade (and reason) to the store through the label book, the query re-scored; a label only
        others judged is corrected when the session said so (`whose_then`)."""
        book = self.model.labels
        corrects = getattr(self.review, "whose_for_session", None) == "correct" and \
            book.others(at.qid, at.doc) is not None
        try:
            book.set(at.qid, at.doc, grade, reason, merge=merge, corrects=corrects)
        except Refused as e:
            self.notify(str(e), severity="warning", markup=False, timeout=8)
            return False
        except Exception as e:  # the store refused: nothing changed
            self.notify(f"label not saved: {e}", severity="error", markup=False, timeout=8)
            return False
        self.edited.add(at.qid)
        notice = self.query_one(NoticeLine)
        if notice.message:  # it spoke of the passage before (e.g. "undone: ..."): the next one is shown now
            notice.clear()
        # The query's measures and the count of edits not in the folder's qrels file yet, after the frame that
        # shows the next document: this screen shows neither (the review screen's panes catch up on Escape).
        self.unscored.add(at.qid)
        self.call_after_refresh(self.score)
        if hasattr(self.app, "edited"):
            self.call_after_refresh(self.app.edited, at.qid)
        return True

    def score(self) -> None:
        """The edited queries' measures again (after the frame; before the review screen shows them)."""
        while self.unscored:
            self.model.apply_edit(self.unscored.pop())

    def advance(self) -> None:
        self.judged += 1
        if self.cursor.graded() is None:
            self.notify("every document that needs a judgment has one", timeout=8)
        self.show_place()

    @on(ReasonBar.Submitted)
    def _reason(self, event: ReasonBar.Submitted) -> None:
        reason = event.reason.strip()
        if self.pending is not None:
            at, grade = self.pending
            if not reason:
                return  # (Closed says nothing was stored)
            self.pending = None
            if self.store(at, grade, reason):
                self.advance()
        else:  # r: the reason of the document graded last joins its grade
            place = Place(event.qid, event.doc)
            if self.store(place, event.grade, reason, merge=True):
                self.notify(f"reason saved for {id_excerpt(event.doc, 40)}", markup=False, timeout=3)
                self.show_place()

    @on(ReasonBar.Closed)
    def _reason_closed(self) -> None:
        if self.pending is not None:
            at, grade = self.pending
            self.pending = None
            self.notify(f"nothing stored: grade {grade} needs a reason (press {grade_key(grade)} again to write it)",
                        severity="warning", markup=False)
        self.model.labels.close_edit()
        self.set_focus(None)

    def action_edit_reason(self) -> None:
        """r: a reason for the document graded last (its grade stays)."""
        book = self.model.labels
        last = self.cursor.trail[-1] if self.cursor.trail else None
        mine = book.mine(last.qid, last.doc) if last else None
        if mine is None:
            self.notify("grade a document first: r then writes the reason of the one graded last")
            return
        self.query_one(ReasonBar).ask(last.qid, last.doc, mine.grade, mine.reason)

    def action_undo(self) -> None:
        """u / ctrl+z: the last edit undone (to the store, in history); back to its document."""
        bar = self.query_one(ReasonBar)
        if bar.is_open:
            bar.close()
        book = self.model.labels
        if not book.done:
            self.notify("nothing to undo in this session", timeout=3)
            return
        edit = book.done[-1]
        try:
            book.undo()
        except Exception as e:
            self.notify(f"undo failed: {e}", severity="error", markup=False, timeout=8)
            return
        self.model.apply_edit(edit.qid)
        self.edited.add(edit.qid)
        if hasattr(self.app, "edited"):  # the count of unexported edits, as after a grade
            self.app.edited(edit.qid)
        place = Place(edit.qid, edit.doc)
        if self.cursor.trail and self.cursor.trail[-1] == place:
            self.cursor.back()
            self.judged = max(self.judged - 1, 0)
        else:
            self.cursor.at = place
        self.notify(f"undone: {visible(edit.what, lines='space')} of {id_excerpt(edit.doc, 40)}", markup=False,
                    timeout=3)
        self.show_place()

    def action_skip(self) -> None:
        """s: the next document that needs a judgment, this one left as it is."""
        nxt = self.cursor.next()
        if nxt is None:
            self.notify("no other document needs a judgment")
            return
        self.cursor.at = nxt
        self.show_place()

    def action_show_ids(self) -> None:
        at = self.cursor.at
        if at is not None:
            self.notify(f"query {visible(at.qid)} · document {visible(at.doc)}", title="whole IDs", markup=False,
                        timeout=10)

    def action_help(self) -> None:
        from rankgate.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.grades, JUDGING_COMMANDS))

    def action_quit(self) -> None:
        self.app.leave()

    def action_close(self) -> None:
        """Escape: back to the review screen's panes, on the document shown here."""
        self.score()
        self.app.pop_screen()
        review, at = self.review, self.cursor.at
        m = review.model
        for qid in sorted(self.edited):  # the query list's rows, then the gate once (ReviewScreen.after_edit)
            review.queries.rebuild(keep=review.qi, changed=m.qindex[qid])
        if self.edited:
            review.refresh_gate()
        review.refresh_status()
        if at is not None:
            review.go_to(at.qid, at.doc)


def open_judging(review) -> None:
    """l on the review screen (and where labels are what the session is for, at once)."""
    if review.model is None:
        return
    review.app.push_screen(JudgingScreen(review))


def show_ids(screen) -> None:
    """i on the review screen: the highlighted query's and document's whole IDs, on the notice line."""
    if screen.qi is None:
        return
    doc = f" · document {visible(screen.doc)}" if screen.doc else ""
    screen.notify(f"query {visible(screen.qid)}{doc}", title="whole IDs", markup=False, timeout=10)
