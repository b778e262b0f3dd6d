"""The review screen: queries, gate, query and labels, rankings, document; all consistent after every edit."""

from __future__ import annotations

import gc
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input

from rankgate.tui import commands
from rankgate.tui.loader import Loaded
from rankgate.tui.messages import GateDecided, LabelsEdited
from rankgate.tui.model import ReviewModel
from rankgate.tui.safe import excerpt, literal
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.adjudicate import AdjudicateScreen
from rankgate.tui.screens.compare import CompareScreen
from rankgate.tui.screens.export import ExportDialog
from rankgate.tui.screens.help import HelpScreen
from rankgate.tui.screens.history import HistoryScreen
from rankgate.tui.screens.label_form import LabelForm
from rankgate.tui.screens.run_picker import RunPicker
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.widgets.gate_panel import GatePanel, decision_text
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.load_panel import LoadPanel
from rankgate.tui.widgets.query_list import QueryPane
from rankgate.tui.widgets.ranking import RankingPane
from rankgate.tui.widgets.reason_bar import ReasonBar
from rankgate.tui.widgets.text_static import TextStatic


GC_DUE = 6  # young collections (of Python's 10) after which an edit's frame is followed by a full one


def collect_if_due() -> None:
    """A full collection now, after an edit's frame, when Python's own is near. Each frame leaves cyclic
    garbage (Textual's strips cache themselves) that only a full collection frees; done by Python it fell
    on a key every few edits and cost 50-150 ms there. Here it costs the same, while the person reads."""
    if gc.isenabled() and gc.get_count()[2] >= GC_DUE:
        gc.collect()


class ReviewScreen(Screen):
    """Composed as the app starts (the load panel covers the panes); `bind()` gives it the model."""

    BINDINGS = commands.bindings()
    AUTO_FOCUS = ""  # nothing to focus while loading; bind() focuses the query list
    WHILE_LOADING = {"quit", "help", "reload"}  # the commands that work before the benchmark is loaded
    QUEUE_INLINE = 2000  # up to this many queries the review queue is built at once, on the key

    def __init__(self, what: str = "") -> None:
        super().__init__()
        self.what = what
        self.loaded: Loaded | None = None
        self.model: ReviewModel | None = None
        self.qi: int | None = None
        self.doc: str | None = None
        self.ask_reason = True
        self.last_edit_s = 0.0  # the last edit: from its key to every pane updated
        self.last_paint_s = 0.0  # ... and to the screen repainted with it
        self.last_store_s = 0.0  # ... of which the store's write
        self.last_painted_at = 0.0  # when (perf_counter) the screen was last repainted after an edit
        self.exported_to: Path | None = None
        self._return_focus = None
        self.first_frame_at: float | None = None
        self._fresh_busy = False  # a worker is deciding the gate afresh (significance tests)
        self.last_queued = None  # the review queue's item the `u` key went to last
        self.restore: tuple[str | None, str | None] | None = None  # (query, doc) to show after a re-open

    # ---- layout ---------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TextStatic(id="top-bar")
        with Vertical(id="panes"):
            with Horizontal(id="row-top"):
                yield QueryPane(id="queries")
                yield GatePanel(id="gate")
            with Horizontal(id="row-bottom"):
                yield LabelEditor(id="labels")
                yield RankingPane(id="rankings")
                yield DocView(id="doc")
        yield LoadPanel(self.what, id="loading")
        yield ReasonBar(id="reason")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one(ReasonBar).display = False
        self.query_one("#panes").display = False
        self.set_focus(None)
        apply_cursor_blink(self)

    def progress(self, what: str, done: int, total: int) -> None:
        if self.model is None:
            self.query_one(LoadPanel).progress(what, done, total)

    def bind(self, loaded: Loaded) -> None:
        """The benchmark is loaded: fill every pane, show them, focus the queries."""
        self.loaded = loaded
        m = self.model = loaded.model
        with self.app.batch_update():
            self.query_one(LoadPanel).display = False
            self.query_one("#panes").display = True
            self.query_one(DocView).set_corpus(None, bool(loaded.corpus_path))
            self.query_one(GatePanel).bind(m, loaded.problems)
            self.query_one(LabelEditor).bind(m)
            self.query_one(RankingPane).bind(m)
            self.query_one(QueryPane).bind(m)
            blind = bool(getattr(self.app, "inputs", None) and self.app.inputs.blind)
            self.query_one(RankingPane).blind = blind
            self.show_query(self.queries.current)  # now, not when its QueryHighlighted arrives
            self.refresh_gate()
            self.query_one("#query-list").focus()
            if self.restore is not None:
                qid, doc = self.restore
                self.restore = None
                if qid in m.qindex:  # after the lists' own first highlights, or they would take it back
                    self.call_after_refresh(self.go_to, qid, doc)
        self.refresh_bindings()
        self.app.call_after_refresh(self._first_frame)
        for problem in loaded.problems:  # also listed under the gate until fixed (ctrl+r reloads)
            self.notify(problem, title="left out", severity="error", timeout=15, markup=False)

    def unbind(self) -> None:
        """The model goes away (the benchmark is opened again): cover the panes with the load panel."""
        self.restore = (self.qid, self.doc) if self.model is not None and self.qi is not None else None
        self._fresh_busy = False  # a worker still deciding does not post for the old model
        self.model = None
        self.loaded = None
        self.qi = self.doc = None
        self.last_queued = None
        self.query_one("#panes").display = False
        panel = self.query_one(LoadPanel)
        panel.progress("opening the benchmark again", 0, 1)
        panel.display = True
        self.set_focus(None)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.model is None and action not in self.WHILE_LOADING:
            return False
        return True

    def _first_frame(self) -> None:
        self.first_frame_at = time.perf_counter()  # the panes are on screen (cold start ends here)

    @property
    def queries(self) -> QueryPane:
        return self.query_one(QueryPane)

    @property
    def qid(self) -> str | None:
        return None if self.qi is None else self.model.qids[self.qi]

    # ---- showing ----------------------------------------------------------------------------------------

    def refresh_top(self) -> None:
        m = self.model
        view = self._gate
        t = Text(end="")
        t.append("rankgate review ", style="bold")
        t.append_text(literal(excerpt(m.name, 30), style="bold cyan"))
        t.append(f" · {m.nq} queries · k={m.k} · ", style="dim")
        t.append("baseline ", style="dim")
        t.append_text(literal(excerpt(m.baseline, 24), style="bold"))
        t.append(" · candidate ", style="dim")
        t.append_text(literal(excerpt(m.candidate, 24), style="bold cyan"))
        t.append("  ")
        t.append_text(decision_text(view))
        t.append(" · reviewer ", style="dim")
        t.append_text(literal(excerpt(self.loaded.reviewer, 16)))
        if not m.labels.saved:
            t.append(" · labels NOT saved (no store)", style="bold red")
        if getattr(self.app, "inputs", None) is not None and self.app.inputs.blind:
            t.append("  BLIND", style="bold reverse")
            t.append(" your labels only, ranks hidden", style="dim")
        self.query_one("#top-bar", TextStatic).show(t)

    def refresh_gate(self) -> None:
        """The gate now; when its significance tests are from before the last edit, a fresh one follows."""
        m = self.model
        self._gate = m.gate(fresh=m.fresh_is_cheap())
        self.query_one(GatePanel).show(self._gate)
        self.refresh_top()
        if self._gate.stale:
            self._want_fresh_gate()

    def _want_fresh_gate(self) -> None:
        """Significance tests afresh, in a worker, started once the frame with the edit is drawn; one at a
        time: edits made while one runs are taken up by the next, as soon as it is done (`_decided`)."""
        if self._fresh_busy:
            return
        self._fresh_busy = True
        self.call_after_refresh(self._start_fresh_gate, self.model)

    def _start_fresh_gate(self, model: ReviewModel) -> None:
        if model is not self.model:  # re-opened meanwhile
            return
        self.fresh_gate(model, model.gate_inputs(fresh=True))

    @work(thread=True, exclusive=True, group="gate")
    def fresh_gate(self, model: ReviewModel, inputs) -> None:
        view = model.decide(inputs)  # reads only the inputs, taken on the main thread
        if model is self.model:  # not re-opened meanwhile
            self.post_message(GateDecided(view))

    @on(GateDecided)
    def _decided(self, event: GateDecided) -> None:
        view, m = event.view, self.model
        if m is None:
            return
        self._fresh_busy = False
        m.adopt(view)
        if view.version == m.version and (view.baseline, view.candidate) == (m.baseline, m.candidate):
            self._gate = view
            self.query_one(GatePanel).show(view)
            self.refresh_top()
            self.call_after_refresh(collect_if_due)
        else:  # edited meanwhile: decide again with these newer results (and afresh once more if need be)
            self.refresh_gate()

    def show_query(self, qi: int | None, doc: str | None = None) -> None:
        """Show a query; the current document is `doc`, else its first unjudged document in a top k,
        else the candidate's first."""
        m = self.model
        self.qi = qi
        if doc is None and qi is not None:
            first = m.first_unjudged(qi)
            if first is not None:
                doc = first[2]
            else:
                for rname in (m.candidate, m.baseline):
                    names = m.runs[rname].names(qi)
                    if names:
                        doc = names[0]
                        break
                else:
                    doc = next(iter(sorted(m.labels.labels(m.qids[qi]))), None)
        self.doc = doc
        self.query_one(LabelEditor).show(qi, doc)
        self.query_one(RankingPane).show(qi, doc)
        self._show_doc()

    def _show_doc(self) -> None:
        text = self.model.query(self.qi).text if self.qi is not None else ""
        self.query_one(DocView).show(self.doc, text)

    def set_doc(self, doc: str | None) -> None:
        if doc == self.doc:
            return
        self.doc = doc
        self.query_one(RankingPane).set_current(doc)
        self.query_one(LabelEditor).set_current(doc)
        self._show_doc()

    def after_edit(self, qid: str, doc: str) -> None:
        """Every pane again, for the one query that changed (and the macros and the gate)."""
        m = self.model
        qi = m.qindex[qid]
        self.queries.rebuild(keep=self.qi if self.qi is not None else qi, changed=qi)
        if qi == self.qi:
            labels = self.query_one(LabelEditor)
            labels.show(qi, doc, keep_cursor=True)
            self.query_one(RankingPane).show(qi, doc, keep_cursor=True)
        self.refresh_gate()

    # ---- events from the panes ------------------------------------------------------------------------

    @on(QueryPane.QueryHighlighted)
    def _query(self, event: QueryPane.QueryHighlighted) -> None:
        if event.qi != self.queries.current:  # stale: the cursor has moved on since (it says so again)
            return
        if event.qi != self.qi:
            self.show_query(event.qi)

    @on(RankingPane.DocHighlighted)
    def _ranked_doc(self, event: RankingPane.DocHighlighted) -> None:
        self.set_doc(event.doc)

    @on(LabelEditor.DocHighlighted)
    def _label_doc(self, event: LabelEditor.DocHighlighted) -> None:
        self.set_doc(event.doc)

    @on(ReasonBar.Submitted)
    def _reason(self, event: ReasonBar.Submitted) -> None:
        self.edit(event.qid, event.doc, event.grade, event.reason)

    @on(ReasonBar.Closed)
    def _reason_closed(self) -> None:
        target = self._return_focus
        self._return_focus = None
        if target is not None and target.is_attached:
            target.focus()

    # ---- editing ------------------------------------------------------------------------------------------

    def edit(self, qid: str, doc: str, grade: int | None, reason: str | None = None) -> bool:
        """Write one label (grade None: remove it) to the store, re-score its query, update every pane."""
        t0 = time.perf_counter()
        try:
            if grade is None:
                if not self.model.labels.remove(qid, doc):
                    return False
            else:
                self.model.labels.set(qid, doc, grade, reason)
        except Exception as e:  # the store refused: nothing changed
            self.notify(f"label not saved: {e}", severity="error", markup=False, timeout=8)
            return False
        self.last_store_s = time.perf_counter() - t0  # the store's write (journal append and fsync)
        self.model.apply_edit(qid)
        self.after_edit(qid, doc)
        self.last_edit_s = time.perf_counter() - t0
        self.app.call_after_refresh(self._painted, t0)
        self.post_message(LabelsEdited(qid, doc, self.last_edit_s))
        return True

    def _painted(self, t0: float) -> None:
        self.last_painted_at = time.perf_counter()
        self.last_paint_s = self.last_painted_at - t0
        if not self._fresh_busy:  # else once the fresh gate is shown (_decided)
            collect_if_due()

    def _need_doc(self) -> bool:
        if self.qi is None or self.doc is None:
            self.notify("highlight a document first (in the rankings or the labels)", severity="warning")
            return False
        return True

    def action_grade(self, grade: int) -> None:
        if not self._need_doc():
            return
        qid, doc = self.qid, self.doc
        if self.edit(qid, doc, grade) and self.ask_reason:
            self._return_focus = self.focused
            lab = self.model.labels.labels(qid).get(doc)
            self.query_one(ReasonBar).ask(qid, doc, grade, lab.reason if lab else "")

    def action_edit_reason(self) -> None:
        if not self._need_doc():
            return
        lab = self.model.labels.labels(self.qid).get(self.doc)
        if lab is None:
            self.notify("this document has no label yet: grade it with 0-3 first", severity="warning")
            return
        self._return_focus = self.focused
        self.query_one(ReasonBar).ask(self.qid, self.doc, lab.grade, lab.reason)

    def action_remove_label(self) -> None:
        if not self._need_doc():
            return
        if not self.edit(self.qid, self.doc, None):
            self.notify("this document has no label to remove", severity="warning")

    def action_add_label(self) -> None:
        if self.qi is None:
            return
        qid = self.qid

        def done(result) -> None:
            if result:
                doc, grade, reason = result
                if self.edit(qid, doc, grade, reason):
                    self.set_doc(doc)

        self.app.push_screen(LabelForm(qid), done)

    # ---- moving -----------------------------------------------------------------------------------------------

    def action_next_review(self, step: int = 1) -> None:
        """The next unjudged document in a top k: in this query after the current one, else in the
        next query that needs review (in the list's order)."""
        m = self.model
        if step > 0 and self.qi is not None:
            items = m.unjudged_items(self.qi)
            docs = [d for _, _, d in items]
            at = docs.index(self.doc) + 1 if self.doc in docs else 0
            if at < len(items):
                self._point(items[at])
                return
        qi = self.queries.next_needing_review(step)
        if qi is None:
            self.notify("no listed query needs review: every top-k document is judged")
            return
        self.show_query(qi)
        first = m.first_unjudged(qi)
        if first is not None:
            self._point(first)

    def action_next_queued(self) -> None:
        """The next item of the review queue (`rankgate.core.queue`, most decisive first): its query and
        document, highlighted for the grade keys, and why it is next."""
        m = self.model
        last = self.last_queued
        # From the top (the most decisive unjudged item), unless the highlighted document is the item this
        # key went to last and is still unjudged: then the one after it (pressing again skips an item).
        after = None
        if last is not None and (last.query, last.doc) == (self.qid, self.doc) \
                and last.doc not in m.labels.grades(last.query):
            after = (last.query, last.doc)
        if not m.queue_fresh() and m.nq > self.QUEUE_INLINE:  # a large benchmark: build it aside
            if not any(w.group == "queue" and w.is_running for w in self.app.workers):
                self.notify("building the review queue…", timeout=4)
                self._build_queue(m.queue_job())
            return
        try:
            item = m.next_to_review(after)
        except Exception as e:  # the core refused (e.g. runs from another catalog): say so, change nothing
            self.notify(f"review queue unavailable: {e}", severity="error", markup=False, timeout=8)
            return
        if item is None:
            self.notify("the review queue is empty: every document in a top k is judged")
            return
        self.go_to(item.query, item.doc, item.ranks)
        self.last_queued = item
        self.notify(f"{item.query} · {item.doc}: {item.why()}", title="next to review", markup=False)

    @work(thread=True, exclusive=True, group="queue")
    def _build_queue(self, job) -> None:
        """The review queue of a large benchmark, built off the main thread; then `u` goes on."""
        try:
            job()
        except Exception as e:  # the core refused: say so, change nothing
            self.app.call_from_thread(self.notify, f"review queue unavailable: {e}", severity="error",
                                      markup=False, timeout=8)
            return
        self.app.call_from_thread(self.action_next_queued)

    def go_to(self, qid: str, doc: str | None = None, ranks: dict[str, int] | None = None) -> None:
        """Show a query (clearing the filter when it hides it) with `doc` highlighted, pointing the rankings
        at it (candidate first, then baseline)."""
        m = self.model
        qi = m.qindex.get(qid)
        if qi is None:
            self.notify(f"query {qid} is not in this review", severity="warning", markup=False)
            return
        self.queries.select(qi)
        self.show_query(qi, doc)
        if doc is None:
            return
        for role, name in (("candidate", m.candidate), ("baseline", m.baseline)):
            if self.query_one(RankingPane).point_at_doc(role, doc):
                self.set_doc(doc)
                return
        if ranks:
            run, rank = next(iter(ranks.items()))
            self.notify(f"{doc} is at rank {rank} in run {run}", markup=False)

    def _point(self, item: tuple[str, int, str]) -> None:
        rname, index, doc = item
        m = self.model
        self.set_doc(doc)
        for role, name in (("candidate", m.candidate), ("baseline", m.baseline)):
            if name == rname and self.query_one(RankingPane).point_at_doc(role, doc):
                return
        self.notify(f"{doc} is unjudged in run {rname}'s top {m.k}", markup=False)

    def action_prev_review(self) -> None:
        self.action_next_review(-1)

    def action_focus_filter(self) -> None:
        self.query_one("#query-filter", Input).focus()

    def action_filter(self, text: str) -> None:
        self.queries.set_filter(text)
        if not text and isinstance(self.focused, Input) and self.focused.id == "query-filter":
            self.query_one("#query-list").focus()

    def action_cycle_sort(self) -> None:
        sort = self.queries.cycle_sort()
        self.notify(f"sorted by {sort}", timeout=2)

    # ---- runs ---------------------------------------------------------------------------------------------------

    def action_pick_run(self, role: str) -> None:
        m = self.model
        current, other = (m.baseline, m.candidate) if role == "baseline" else (m.candidate, m.baseline)

        def done(name: str | None) -> None:
            if name:
                self.action_set_run(role, name)

        self.app.push_screen(RunPicker(role, m.run_names, current, other), done)

    def action_set_run(self, role: str, name: str) -> None:
        m = self.model
        if role == "baseline":
            m.set_pair(baseline=name)
        else:
            m.set_pair(candidate=name)
        self._runs_changed()

    def action_swap_runs(self) -> None:
        m = self.model
        m.set_pair(baseline=m.candidate, candidate=m.baseline)
        self._runs_changed()

    def _runs_changed(self) -> None:
        self.queries.rebuild(keep=self.qi)
        self.queries.redraw()
        if self.qi is not None:
            self.query_one(LabelEditor).show(self.qi, self.doc, keep_cursor=True)
            self.query_one(RankingPane).show(self.qi, self.doc)
        self.refresh_gate()

    # ---- the rest --------------------------------------------------------------------------------------------------

    def default_export_path(self) -> str:
        name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in self.model.name) or "labels"
        return str(Path.cwd() / f"{name}-reviewed-qrels.jsonl")

    def action_export(self) -> None:
        def done(path: str | None) -> None:
            if path:
                self.export_to(path)

        self.app.push_screen(ExportDialog(self.default_export_path()), done)

    def export_to(self, path: str):
        """Write the reviewed labels; returns what was written (tui.labels.Exported) or None."""
        fmt = "trec" if Path(path).suffix in (".trec", ".txt", ".qrels") else "jsonl"
        try:
            done = self.model.labels.export(Path(path).expanduser(), fmt)
        except Exception as e:
            self.notify(f"export failed: {e}", severity="error", markup=False, timeout=8)
            return None
        self.exported_to = done.path
        note = "".join(f"\nnote: {n}" for n in done.notes)
        self.notify(f"wrote {done.labels} labels ({done.format}) to {done.path}{note}", title="exported",
                    markup=False, timeout=10)
        return done

    def action_compare(self) -> None:
        def done(qid: str | None) -> None:
            if qid:
                self.go_to(qid)

        self.app.push_screen(CompareScreen(self.model), done)

    def action_adjudicate(self) -> None:
        doc_view = self.query_one(DocView)

        def recorded(qid: str, doc: str) -> None:  # the pair's label changed: every pane follows
            self.model.apply_edit(qid)
            self.after_edit(qid, doc)
            self.post_message(LabelsEdited(qid, doc, 0.0))

        self.app.push_screen(AdjudicateScreen(self.model.labels, self.model.queries, doc_view.corpus,
                                              doc_view.has_corpus, recorded))

    def action_toggle_blind(self) -> None:
        """Blind review on or off: the benchmark is opened again with the store's blind view (every grade,
        and the gate, from your own judgments only) and the rankings without ranks or movement."""
        if not self.model.labels.saved:
            self.notify("blind review needs the label store (these labels are in memory only)", severity="warning")
            return
        self.app.reopen(blind=not self.app.inputs.blind)

    def action_history(self) -> None:
        if self.qi is None:
            return
        self.app.push_screen(HistoryScreen(self.qid, self.model.labels.history(self.qid)))

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.leave()

    def action_reload(self) -> None:
        self.app.reload()

    def failed(self, error: BaseException) -> None:
        """The benchmark could not be opened: say why on the load panel, and how to go on."""
        self.query_one(LoadPanel).failed(str(error))
