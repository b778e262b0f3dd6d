"""The review screen: queries, gate, query and labels, rankings, document; all consistent after every edit.

Layout, showing a query and a document, the panes' events, runs, and the other screens are here; mixed in:
the top and status bars (bars.py), moving between queries, documents and panes (navigation.py), and the
editing actions (grade, reason, remove, version, unsure, undo/redo, add, notes: editing.py)."""

from __future__ import annotations

import gc
import time
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input

from rankgate.tui import commands
from rankgate.core.benchmark import DEFAULT_GRADES
from rankgate.core.text import visible
from rankgate.tui.loader import NO_RUNS, Loaded
from rankgate.tui.messages import GateDecided, LabelsEdited
from rankgate.tui.model import ReviewModel
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.bars import TopAndStatusBars
from rankgate.tui.screens.editing import EditingActions, collect_if_due, review_collections
from rankgate.tui.screens.navigation import NavigationActions
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.queue_order import QueueOrder
from rankgate.tui.suggested import suggestion_of, suggestion_text
from rankgate.tui.widgets.footer import FittingFooter
from rankgate.tui.widgets.gate_panel import GatePanel
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.load_panel import LoadPanel
from rankgate.tui.widgets.notice_line import NoticeLine
from rankgate.tui.widgets.query_list import QueryPane
from rankgate.tui.widgets.ranking import RankingPane
from rankgate.tui.widgets.reason_bar import ReasonBar
from rankgate.tui.widgets.text_static import TextStatic


class ReviewScreen(TopAndStatusBars, NavigationActions, EditingActions, Screen):
    """Composed as the app starts (the load panel covers the panes); `bind()` gives it the model."""

    BINDINGS = commands.bindings()
    # Below 120 columns the bottom row shows one pane at a time (p switches; app.tcss `.-narrow`); up to 159 the
    # Rankings pane takes half of it (`-mid`), from 160 Query and Document have their full widths (`-wide`).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-mid"), (160, "-wide")]
    AUTO_FOCUS = ""  # nothing to focus while loading; bind() focuses the query list
    WHILE_LOADING = {"quit", "help", "reload"}  # the commands that work before the benchmark is loaded
    # Commands about runs: hidden and refused in a labels-only review (no runs).
    NEED_RUNS = {"pick_run", "set_run", "swap_runs", "compare", "show_missing", "show_funnel", "next_queued",
                 "cycle_sort", "toggle_blind", "cycle_queue_order", "set_queue_order"}
    RUN_FILTERS = {"is:miss", "is:lost", "is:changed"}
    QUEUE_INLINE = 2000  # up to this many queries the review queue is built at once, on the key

    def __init__(self, what: str = "") -> None:
        super().__init__(classes=self._width_class())
        self._resumed = False  # (the first ScreenResume: _on_screen_resume)
        self.what = what
        self.loaded: Loaded | None = None
        self.model: ReviewModel | None = None
        self.qi: int | None = None
        self.doc: str | None = None
        self._list_at: int | None = None  # the query list's query when the query shown was picked
        self.ask_reason = True
        self.ask_whose = True  # a grade on a label only others judged asks whether to add my own judgment
        self.grades: dict[int, str] = dict(DEFAULT_GRADES)  # the benchmark's grade scale
        self.filter_opened_at = 0.0  # `/` was pressed
        self._negative_until = 0.0  # `-` was pressed: a digit until then is a negative grade
        self.last_edit_s = 0.0  # the last edit: from its key to every pane updated
        self.last_paint_s = 0.0  # ... and to the screen repainted with it
        self.last_store_s = 0.0  # ... of which the store's write
        self.last_painted_at = 0.0  # when (perf_counter) the screen was last repainted after an edit
        self.last_painted_cpu = 0.0  # ... and the process's CPU time (process_time) at that moment
        self.exported_to: Path | None = None
        self.first_frame_at: float | None = None
        self.first_screen_at: float | None = None  # when the screen was first drawn (the load panel, loading)
        self._fresh_busy = False  # a worker is deciding the gate afresh (significance tests)
        self.last_queued = None  # the review queue's item the `u` key went to last
        self.queue_order = QueueOrder()  # the order `u` walks (U switches; tui/queue_order.py)
        self.restore: tuple[str | None, str | None] | None = None  # (query, doc) to show after a re-open
        self._picked: tuple[int | None, str | None] = (None, None)  # the query and document show_query opened on
        self._gc_before: tuple[int, int, int] | None = None  # the collector's thresholds before the review

    # ---- layout ---------------------------------------------------------------------------------------

    def _width_class(self) -> str:
        """The HORIZONTAL_BREAKPOINTS class of the app's width, given from the start: Textual adds it at the first
        resize otherwise, and a class added to the screen restyles every pane once more before the first frame."""
        try:
            width = self.app.size.width
        except Exception:  # (no running app: Textual sets it at the first resize)
            return ""
        return max(((w, name) for w, name in self.HORIZONTAL_BREAKPOINTS if width >= w), default=(0, ""))[1]

    def _on_screen_resume(self, event) -> None:
        """Textual restyles a screen's every widget when it is made active; the first time, as it is pushed, each was
        styled as it was mounted a moment before (nothing has changed since): Screen's own handler, which runs after
        this one, is told to skip it (about 60 widgets, 15-30 ms before the first frame)."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def compose(self) -> ComposeResult:
        yield TextStatic(id="top-bar")
        yield TextStatic(id="status-bar")
        with Vertical(id="panes"):
            with Horizontal(id="row-top"):
                yield QueryPane(id="queries")
                yield GatePanel(id="gate")
            with Horizontal(id="row-bottom"):
                yield LabelEditor(id="labels")
                yield RankingPane(id="rankings", classes="-shown")
                yield DocView(id="doc")
        yield LoadPanel(self.what, id="loading")
        yield ReasonBar(id="reason")
        yield FittingFooter(compact=True)
        yield NoticeLine(id="notice")  # notices, in the footer's place while shown (ReviewApp.notify)

    def on_mount(self) -> None:
        self.query_one(ReasonBar).display = False
        self.query_one("#panes").display = False
        self.set_focus(None)
        apply_cursor_blink(self)
        self.call_after_refresh(self._first_screen)

    def _first_screen(self) -> None:
        if self.first_screen_at is None:
            self.first_screen_at = time.perf_counter()  # the screen with its progress line is on screen

    def on_unmount(self) -> None:
        if self._gc_before is not None:
            gc.set_threshold(*self._gc_before)
            self._gc_before = None

    def progress(self, what: str, done: int, total: int) -> None:
        if self.model is None:
            self.query_one(LoadPanel).progress(what, done, total)

    def bind(self, loaded: Loaded) -> None:
        """The benchmark is loaded: fill every pane, show them, focus the queries."""
        self.loaded = loaded
        m = self.model = loaded.model
        if self._gc_before is None:
            self._gc_before = review_collections()
        self.grades = dict(loaded.manifest.grades if loaded.manifest else DEFAULT_GRADES)
        with self.app.batch_update():
            self.query_one(LoadPanel).display = False
            self.query_one("#panes").display = True
            self.query_one(DocView).set_corpus(None, bool(loaded.corpus_path), missing=loaded.corpus_missing)
            self.query_one(GatePanel).bind(m, loaded.problems, loaded.unread_pair)
            self.query_one(LabelEditor).bind(m, self.grade_keys())
            self.query_one(RankingPane).bind(m)
            self.query_one(QueryPane).bind(m)
            blind = self.blind
            self.query_one(RankingPane).blind = blind
            self.query_one(GatePanel).blind = blind
            self.queries.list.blind = blind or self.labels_only
            self.set_class(self.labels_only, "-labels-only")
            self.queries.list.labels_only = self.labels_only
            if self.labels_only:  # no runs: no measures to show or sort by, the labels and texts only
                from textual.widgets import Input

                from rankgate.tui.widgets.query_list import FILTER_HELP_NO_RUNS

                self.queries.query_one("#query-filter", Input).placeholder = FILTER_HELP_NO_RUNS
                self.query_one(RankingPane).remove_class("-shown")
                self.query_one(LabelEditor).add_class("-shown")
                if self.queries.sort != "benchmark":
                    self.queries.sort = "benchmark"
                    self.queries.rebuild(keep=None)
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
        self._count_queue()
        for problem in loaded.problems:  # also listed under the gate until fixed (ctrl+r reloads)
            self.notify(visible(str(problem)), title="left out", severity="error", timeout=15, markup=False)

    def grade_keys(self) -> str:
        """The grade keys of the scale, for hints: "0-3", "-2..4" ..."""
        lo, hi = min(self.grades), max(self.grades)
        return f"{lo}-{hi}" if lo >= 0 else f"{lo}..{hi}"

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
        if action in self.NEED_RUNS and self.labels_only:
            return False
        if action == "filter" and parameters and str(parameters[0]) in self.RUN_FILTERS and self.labels_only:
            return False
        if action == "grade" and parameters:  # a digit key: on the scale (after `-`, its negative)?
            g = int(parameters[0])
            if self._negative_until and time.monotonic() < self._negative_until and g >= 0:
                g = -g
            return g in self.grades
        return True

    def _first_frame(self) -> None:
        self.first_frame_at = time.perf_counter()  # the panes are on screen (cold start ends here)

    @property
    def blind(self) -> bool:
        """Blind review: run names, the decision and the measures that would reveal them are hidden."""
        return bool(getattr(self.app, "inputs", None) is not None and self.app.inputs.blind)

    @property
    def labels_only(self) -> bool:
        """A qrels file reviewed with its texts and no runs (loader.labels_only): run panes hidden."""
        return self.model is not None and list(self.model.runs) == [NO_RUNS]

    @property
    def queries(self) -> QueryPane:
        return self.query_one(QueryPane)

    @property
    def qid(self) -> str | None:
        return None if self.qi is None else self.model.qids[self.qi]

    # The panes' titles; the one the keys go to (arrows, Enter) says so, in words a plain capture shows too.
    PANE_TITLES = {"queries": "Queries", "gate": "Gate", "labels": "Query", "rankings": "Rankings", "doc": "Document"}
    KEYS_HERE = "◂ keys"
    TYPING_HERE = "◂ typing (esc: keys)"  # a text box has the focus: letters and digits are text, not commands

    def watch_focused(self, focused) -> None:
        mark = self.TYPING_HERE if isinstance(focused, Input) else self.KEYS_HERE
        for wid, title in self.PANE_TITLES.items():
            pane = next(iter(self.query(f"#{wid}")), None)
            if pane is None:
                continue
            here = focused is not None and (focused is pane or pane in focused.ancestors)
            want = f"{title} {mark}" if here else title
            if pane.border_title != want:
                pane.border_title = want

    # ---- showing (the top and status bars: screens/bars.py, TopAndStatusBars) ------------------------------

    def on_resize(self) -> None:
        if self.model is not None and getattr(self, "_gate", None) is not None:
            self.refresh_top()  # what fits follows the width (and refresh_status's wording)

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

    @work(thread=True, exclusive=True, group="gate", description="fresh_gate")
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
        else the candidate's first; with no runs, the first label listed that has a text (_first_label)."""
        m = self.model
        self.qi = qi
        self._list_at = self.queries.current  # where the query list was (EditingActions._follow_focus)
        picked = doc is None
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
                    doc = self._first_label(qi)
        self.doc = doc
        self._picked = (qi, doc) if picked else (None, None)  # the app's own pick (corpus_loaded may pick again)
        self.query_one(LabelEditor).show(qi, doc)
        self.query_one(RankingPane).show(qi, doc)
        self._show_doc()

    def _first_label(self, qi: int) -> str | None:
        """With no ranking to start from (labels only): the label list's first document (highest grade
        first, as listed) that has a text in the corpus; the first listed when none has (or the corpus is
        still being read: `corpus_loaded` looks again)."""
        rows = sorted(self.model.labels.labels(self.model.qids[qi]).values(), key=lambda lab: (-lab.grade, lab.doc))
        corpus = self.query_one(DocView).corpus
        with_text = [lab.doc for lab in rows if corpus and lab.doc in corpus] if corpus else []
        return (with_text or [lab.doc for lab in rows] or [None])[0]

    def corpus_loaded(self) -> None:
        """The corpus has been read: a first document picked without it and missing from it gives way to the
        first one with a text (labels only; a document the reviewer moved to stays). Stale labels show now."""
        if self.model is not None and self.model.text_hashes:
            self.query_one(LabelEditor).list.refresh()
        if self.model is None or self.qi is None or not self.labels_only:
            return
        corpus = self.query_one(DocView).corpus
        if corpus and self.doc is not None and self.doc not in corpus and self._picked == (self.qi, self.doc):
            self.show_query(self.qi)

    def _show_doc(self) -> None:
        text = self.model.query(self.qi).text if self.qi is not None else ""
        qid = self.model.qids[self.qi] if self.qi is not None else ""
        self.query_one(DocView).show(self.doc, text, suggestion_text(suggestion_of(self), self.grades), qid=qid)

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
        if hasattr(self.app, "edited"):
            self.app.edited(qid)  # the header's count of unexported edits
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
        """A reason typed after a grade joins that grade's edit (one undo step); typed after `r`, its own edit."""
        self.edit(event.qid, event.doc, event.grade, event.reason, merge=True)

    @on(ReasonBar.Closed)
    def _reason_closed(self) -> None:
        if self.model is not None:
            self.model.labels.close_edit()
            self.refresh_status()

    # ---- moving: screens/navigation.py (NavigationActions) --------------------------------------------------

    # ---- runs ---------------------------------------------------------------------------------------------------

    def action_pick_run(self, role: str) -> None:
        if self._blind_refuses("the runs' names"):
            return
        m = self.model
        current, other = (m.baseline, m.candidate) if role == "baseline" else (m.candidate, m.baseline)

        def done(name: str | None) -> None:
            if name:
                self.action_set_run(role, name)

        from rankgate.tui.screens.run_picker import RunPicker

        self.app.push_screen(RunPicker(role, m.run_names, current, other), done)

    def action_set_run(self, role: str, name: str) -> None:
        if self._blind_refuses("the runs' names"):
            return
        m = self.model
        if name == (m.candidate if role == "baseline" else m.baseline):  # the palette's way in: refused too
            from rankgate.tui.screens.run_picker import same_run_refusal

            self.notify(same_run_refusal(role, name), severity="warning", timeout=4)
            return
        if role == "baseline":
            m.set_pair(baseline=name)
        else:
            m.set_pair(candidate=name)
        self.query_one(GatePanel).unread.pop(role, None)  # a run picked in place of the one left out
        self._runs_changed()

    def action_swap_runs(self) -> None:
        m = self.model
        m.set_pair(baseline=m.candidate, candidate=m.baseline)
        gate = self.query_one(GatePanel)  # the run left out keeps its place in the pair's names: roles swap
        gate.unread = {("baseline" if role == "candidate" else "candidate"): w for role, w in gate.unread.items()}
        self._runs_changed()

    def _runs_changed(self) -> None:
        self._count_queue()
        self.queries.rebuild(keep=self.qi)
        self.queries.redraw()
        if self.qi is not None:
            self.query_one(LabelEditor).show(self.qi, self.doc, keep_cursor=True)
            self.query_one(RankingPane).show(self.qi, self.doc)
        self.refresh_gate()

    # ---- the rest --------------------------------------------------------------------------------------------------
    # (The screens and dialogs the keys open are imported when first opened, not before the first frame: compare,
    # export, adjudicate, funnel, judging, missing, history, help, the run picker; tui/screens/editing.py's prompts.)

    def default_export_path(self) -> str:
        from rankgate.tui.screens import export

        return export.default_export_path(self)

    def action_export(self) -> None:
        from rankgate.tui.screens import export
        from rankgate.tui.screens.export import ExportDialog

        def done(path: str | None) -> None:
            if path:
                self.export_to(path)

        folder = getattr(getattr(self.app, "inputs", None), "export_dir", None)
        path = self.default_export_path()
        if folder is None:  # a read-only data folder: the same name in the current folder, as quitting exports to
            path = export.elsewhere_if_read_only(path) or path
        self.app.push_screen(ExportDialog(path, folder), done)

    def export_to(self, path: str):
        """Write the reviewed labels; returns what was written (tui.labels.Exported) or None (screens/export.py)."""
        from rankgate.tui.screens import export

        return export.export_to(self, path)

    def action_compare(self) -> None:
        if self.blind:  # the compare screen is run names and measures
            self.notify("blind review hides the runs and their measures: B turns it off, then compare",
                        severity="warning")
            return

        def done(qid: str | None) -> None:
            if qid:
                self.go_to(qid)

        from rankgate.tui.screens.compare import CompareScreen  # (imported when first shown, not at start)

        self.app.push_screen(CompareScreen(self.model), done)

    def action_adjudicate(self) -> None:
        doc_view = self.query_one(DocView)

        def recorded(qid: str, doc: str) -> None:  # the pair's label changed: every pane follows
            self.model.apply_edit(qid)
            self.after_edit(qid, doc)
            self.post_message(LabelsEdited(qid, doc, 0.0))

        from rankgate.tui.screens.adjudicate import AdjudicateScreen

        self.app.push_screen(AdjudicateScreen(self.model.labels, self.model.queries, doc_view.corpus,
                                              doc_view.has_corpus, recorded, self.grades))

    def action_toggle_blind(self) -> None:
        """Blind review on or off: the benchmark is opened again with the store's blind view (every grade,
        and the gate, from your own judgments only) and the rankings without ranks or movement."""
        if not self.model.labels.saved:
            self.notify("blind review needs the label store (these labels are in memory only)", severity="warning")
            return
        self.app.reopen(blind=not self.app.inputs.blind)

    def action_show_funnel(self) -> None:
        """Key F: the stage funnel of the two runs (tui/screens/funnel.py)."""
        from rankgate.tui.screens.funnel import show_funnel

        show_funnel(self)

    def action_judge(self) -> None:
        """Key l: one passage and the grade keys (tui/screens/judging.py)."""
        from rankgate.tui.screens.judging import open_judging

        open_judging(self)

    def action_show_ids(self) -> None:
        """Key i: the whole IDs, on the notice line."""
        from rankgate.tui.screens.judging import show_ids

        show_ids(self)

    def action_show_missing(self) -> None:
        """The full lists the rankings' "N relevant not in the top k" lines cut: every relevant document each run
        misses in its top k, one a line; Enter goes to the document."""
        if self.qi is None:
            return
        if self.blind:  # what a run misses would reveal it
            self.notify("blind review hides what each run misses: B turns it off", severity="warning")
            return
        m, qid = self.model, self.qid
        missing = [(role, run, m.missing(self.qi, run)) for role, run in (("baseline", m.baseline),
                                                                        ("candidate", m.candidate))]

        def done(doc: str | None) -> None:
            if doc:
                self.go_to(qid, doc)

        from rankgate.tui.screens.missing import MissingScreen

        self.app.push_screen(MissingScreen(qid, m.k, missing), done)

    def action_history(self) -> None:
        if self.qi is None:
            return
        try:
            changes = self.model.labels.history(self.qid)
        except Exception as e:
            self.notify(f"cannot read the history: {e}", severity="error", markup=False, timeout=8)
            return
        from rankgate.tui.screens.history import HistoryScreen

        self.app.push_screen(HistoryScreen(self.qid, changes))

    def action_help(self) -> None:
        from rankgate.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.grades))

    def action_quit(self) -> None:
        self.app.leave()

    def action_reload(self) -> None:
        self.app.reload()

    def failed(self, error: BaseException) -> None:
        """The benchmark could not be opened: say why on the load panel, and how to go on."""
        self.query_one(LoadPanel).failed(str(error))
