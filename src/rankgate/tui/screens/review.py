"""The review screen: queries, gate, query and labels, rankings, document; all consistent after every edit.

Layout, showing, moving between queries and documents, runs, and the other screens are here; the
editing actions (grade, reason, remove, version, unsure, undo/redo, add, notes) are in editing.py."""

from __future__ import annotations

import gc
import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual._time import get_time  # the clock of `Message.time` (monotonic)
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Input

from rankgate.tui import commands
from rankgate.core.benchmark import DEFAULT_GRADES
from rankgate.core.errors import InputError
from rankgate.core.text import visible
from rankgate.tui.loader import NO_RUNS, Loaded
from rankgate.tui.messages import GateDecided, LabelsEdited
from rankgate.tui.model import ReviewModel
from rankgate.tui.safe import excerpt, id_excerpt, literal
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.adjudicate import AdjudicateScreen
from rankgate.tui.screens.editing import EditingActions, collect_if_due, review_collections
from rankgate.tui.screens import export
from rankgate.tui.screens.export import ExportDialog
from rankgate.tui.screens.help import HelpScreen
from rankgate.tui.screens.history import HistoryScreen
from rankgate.tui.screens.missing import MissingScreen
from rankgate.tui.screens.funnel import show_funnel
from rankgate.tui.screens.judging import open_judging, show_ids
from rankgate.tui.screens.run_picker import RunPicker, same_run_refusal
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.queue_order import ORDER_WORDS, QueueOrder, empty_order_note, next_order, order_note
from rankgate.tui.suggested import suggestion_book, suggestion_of, suggestion_text
from rankgate.tui.widgets.footer import FittingFooter
from rankgate.tui.widgets.gate_panel import GatePanel, decision_text, refusal_line, unread_line
from rankgate.tui.widgets.gate_reasons import one_line_reason
from rankgate.tui.widgets.label_editor import LabelEditor
from rankgate.tui.widgets.load_panel import LoadPanel
from rankgate.tui.widgets.notice_line import NoticeLine
from rankgate.tui.widgets.query_list import QueryPane
from rankgate.tui.widgets.ranking import RankingPane
from rankgate.tui.widgets.reason_bar import ReasonBar
from rankgate.tui.widgets.text_static import TextStatic


class ReviewScreen(EditingActions, Screen):
    """Composed as the app starts (the load panel covers the panes); `bind()` gives it the model."""

    BINDINGS = commands.bindings()
    # Below 120 columns the bottom row shows one pane at a time (p switches; app.tcss `.-narrow`).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    AUTO_FOCUS = ""  # nothing to focus while loading; bind() focuses the query list
    WHILE_LOADING = {"quit", "help", "reload"}  # the commands that work before the benchmark is loaded
    # Commands about runs: hidden and refused in a labels-only review (no runs).
    NEED_RUNS = {"pick_run", "set_run", "swap_runs", "compare", "show_missing", "show_funnel", "next_queued",
                 "cycle_sort", "toggle_blind", "cycle_queue_order", "set_queue_order"}
    RUN_FILTERS = {"is:miss", "is:lost", "is:changed"}
    QUEUE_INLINE = 2000  # up to this many queries the review queue is built at once, on the key

    def __init__(self, what: str = "") -> None:
        super().__init__()
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
        self._fresh_busy = False  # a worker is deciding the gate afresh (significance tests)
        self.last_queued = None  # the review queue's item the `u` key went to last
        self.queue_order = QueueOrder()  # the order `u` walks (U switches; tui/queue_order.py)
        self.restore: tuple[str | None, str | None] | None = None  # (query, doc) to show after a re-open
        self._picked: tuple[int | None, str | None] = (None, None)  # the query and document show_query opened on
        self._gc_before: tuple[int, int, int] | None = None  # the collector's thresholds before the review

    # ---- layout ---------------------------------------------------------------------------------------

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

    def watch_focused(self, focused) -> None:
        for wid, title in self.PANE_TITLES.items():
            pane = next(iter(self.query(f"#{wid}")), None)
            if pane is None:
                continue
            here = focused is not None and (focused is pane or pane in focused.ancestors)
            want = f"{title} {self.KEYS_HERE}" if here else title
            if pane.border_title != want:
                pane.border_title = want

    # ---- showing ----------------------------------------------------------------------------------------

    def refresh_top(self) -> None:
        """The decision and its reason (or the mode) lead; then the benchmark, its size, k, the runs and the
        collection version, each whole and only while it fits (never cut mid-word)."""
        m = self.model
        view = self._gate
        t = Text(end="")
        items: list[Text] = [literal(excerpt(m.name, 30), style="bold cyan"), Text(f"{m.nq} queries", style="dim")]
        if self.labels_only:  # no runs: no decision, no measures
            t.append(" LABELS ", style="bold reverse")
            t.append(" labels only: no runs given (--runs FILE adds rankings and the gate)", style="bold")
            items.append(Text(f"{int(m.num_labels.sum())} labels", style="dim"))
        elif self.blind:  # no decision, no run names: B shows them again
            t.append(" BLIND ", style="bold reverse")
            t.append(" runs, decision and measures hidden (B shows them)", style="bold")
            items.append(Text(f"k={m.k}", style="dim"))
        else:
            unread = self.query_one(GatePanel).unread  # a run of the pair left out: no decision
            t.append_text(decision_text(view, unread))  # the decision and its one-line reason lead, on any width
            t.append(" ")
            reason = unread_line(unread) if unread else refusal_line(view.refused) if view.refused else \
                one_line_reason(view.check_details, view.k)
            t.append_text(literal(reason, style="bold"))
            items.append(Text(f"k={m.k}", style="dim"))
            for role, name, style in (("baseline", m.baseline, "bold"), ("candidate", m.candidate, "bold cyan")):
                if role in unread:  # named in the lead as left out: not the run standing in for it
                    continue
                item = Text(f"{role} ", style="dim")
                item.append_text(literal(id_excerpt(name, 24), style=style))
                items.append(item)
        if not m.labels.saved:  # before the rest: it must be seen
            items.insert(0, Text("labels NOT saved (no store)", style="bold red"))
        if m.collection_version:
            item = Text("collection ", style="dim")
            item.append_text(literal(excerpt(m.collection_version, 24), style="bold"))
            items.append(item)
        if self.blind:
            items.append(Text("your labels only, ranks hidden", style="dim"))
        room = self.app.size.width - 2  # the bar's padding
        # Kept by priority (what is saved, the runs, the collection version, k, the name, the size), shown in
        # order; one that does not fit is left out whole.
        used, kept = len(t.plain), set()
        first = ("labels NOT", "k=", "baseline ", "candidate ", "collection ")
        for item in sorted(items, key=lambda i: (not i.plain.startswith(first), items.index(i))):
            if used + 3 + len(item.plain) <= room:
                used += 3 + len(item.plain)
                kept.add(id(item))
        for item in items:
            if id(item) in kept:
                t.append(" · ", style="dim")
                t.append_text(item)
        self.query_one("#top-bar", TextStatic).show(t)
        self.refresh_status()

    def on_resize(self) -> None:
        if self.model is not None and getattr(self, "_gate", None) is not None:
            self.refresh_top()  # what fits follows the width (and refresh_status's wording)

    def refresh_status(self) -> None:
        """Progress: judged this session and today, unjudged left in the gate's runs' top k, the review
        queue's length, and what ctrl+z would undo."""
        m = self.model
        if m is None:
            return
        book = m.labels
        t = Text(end="")
        t.append("judged ", style="dim")
        session = book.judged_session()
        t.append(f"{len(session)}", style="bold")
        t.append(" this session, ", style="dim")
        t.append(f"{book.judged_today(session)}", style="bold")
        t.append(" today · ", style="dim")
        t = t[:-3] if t.plain.endswith(" · ") else t  # the pieces below bring their own separators
        unexported = getattr(self.app, "unexported", 0)  # not yet in the folder's qrels file (screens/sync.py)
        if unexported:  # early in the line: seen at 80 columns
            t.append(" · ", style="dim")
            t.append(f"{unexported} unexported", style="bold yellow")
        room = self.app.size.width - 2  # the bar's padding
        who = literal(excerpt(self.loaded.reviewer, 16), style="bold") if self.loaded else Text("")
        if room < 98:  # below 100 columns the progress and the queue take the line
            who = Text("")
        last = Text(end="")
        if book.done:
            e = book.done[-1]
            last.append("^z: ", style="dim")
            last.append_text(literal(excerpt(f"{e.what} {e.doc}", 40), style="dim italic"))
        if self.labels_only:
            forms = [[Text(f"{int((m.num_labels > 0).sum())} of {m.nq} queries have labels", style="dim")]]
        else:  # long words when all fit, else short ones (the queue's runs stay in view)
            forms = [self._queue_words(narrow=False), self._queue_words(narrow=True)]
        certain = Text("") if self.labels_only else (self._certain_words(narrow=True) or Text(""))
        for form in forms:  # pieces by priority: the progress, who judges, the queue, what ctrl+z undoes,
            pieces = [form[0], who, *form[1:], last, certain]  # judgments left to a certain decision
            used = len(t.plain)
            kept = []
            for piece in pieces:
                extra = len(piece.plain) + (1 if piece is who else 3)
                if piece.plain and used + extra <= room:
                    kept.append(piece)
                    used += extra
            if all(p in kept for p in form) or form is forms[-1]:
                break
        out = Text(end="")
        if who in kept:
            out.append_text(who)
            out.append(" ")
        out.append_text(t)
        for piece in pieces:
            if piece in kept and piece is not who:
                out.append(" · ", style="dim")
                out.append_text(piece)
        self.query_one("#status-bar", TextStatic).show(out)

    SHORT_ORDER = {"suggested": "suggested first", "disagreement": "disagreements"}

    def _queue_words(self, narrow: bool) -> list[Text]:
        """The unjudged documents in the gate's top k and the review queue, in long or short words."""
        m = self.model
        left = m.unjudged_in_pair()
        unjudged = Text(f"{left}", style="bold magenta" if left else "bold green", end="")
        unjudged.append(f" unjudged{',' if narrow else ' in the'} gate's top {m.k}", style="dim")
        queued = m.queue_left()
        t = Text("queue ", style="dim", end="")
        t.append("?" if queued is None else f"{queued}" if narrow else f"{queued} left", style="bold")
        n = len(m.runs)  # u walks every loaded run's top k; the gate's report counts only its two runs'
        runs = f"{n} run{'s' if n != 1 else ''}"
        t.append((f", {runs}" if narrow else f" in {runs}") + (" (u builds it)" if queued is None else ""),
                 style="dim")
        order = self.queue_order.order
        if order != "decisive":  # U chose another order for u
            t.append(f" ({self.SHORT_ORDER[order] if narrow else ORDER_WORDS[order]})", style="dim")
        return [unjudged, t]

    def _certain_words(self, narrow: bool) -> Text | None:
        """How many more judgments make the gate's decision certain (core/bounds.py, core/budget.py), from the
        review queue's last look; None before it has looked, and once the decision is certain (the gate pane
        says "labels: stable")."""
        got = self.model.stability() if not self.labels_only else None
        if got is None or got[0].stable:
            return None
        st, _ = got
        left = [(q, d) for q, d in st.to_judge if d not in self.model.labels.grades(q)]
        if not st.to_judge:
            return Text("no judgment makes it certain" if narrow else "no judgments can make the decision certain",
                        style="yellow", end="")
        t = Text(f"{len(left)}", style="bold yellow", end="")
        t.append(" more to certain" if narrow else " more judgments make the decision certain", style="dim")
        return t

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
                and (last.doc not in m.labels.grades(last.query) or self.queue_order.order == "disagreement"):
            after = (last.query, last.doc)
        if not m.queue_fresh() and m.nq > self.QUEUE_INLINE:  # a large benchmark: build it aside
            if not any(w.group == "queue" and w.is_running for w in self.app.workers):
                self.notify("building the review queue…", timeout=4)
                self._build_queue(m.queue_job())
            return
        try:
            item = self.queue_order.next_item(m, suggestion_book(self), after)  # in the order U chose
        except Exception as e:  # the core refused (e.g. runs from another catalog): say so, change nothing
            self.notify(f"review queue unavailable: {e}", severity="error", markup=False, timeout=8)
            return
        if item is None:
            self.notify(empty_order_note(self.queue_order.order, self.model))
            return
        self.go_to(item.query, item.doc, item.ranks)
        if item.doc != self.doc and self.qid == item.query:  # judged, outside the rankings' top: show it anyway
            self.set_doc(item.doc)
            self._show_doc()
            self.bring_doc_pane()
        self.last_queued = item
        self.notify(f"{item.query} · {item.doc}: {self.queue_order.why(item, suggestion_book(self))}",
                    title="next to review", markup=False)

    def action_cycle_queue_order(self) -> None:
        """U: the order `u` walks: the most decisive first, suggested relevant first, judge and label disagree."""
        self.action_set_queue_order(next_order(self.queue_order.order))

    def action_set_queue_order(self, order: str) -> None:
        self.queue_order.order = order
        self.last_queued = None  # from the top of the new order
        self.notify(order_note(order, self.model, suggestion_book(self)), markup=False, timeout=5)
        self.refresh_status()

    @work(thread=True, exclusive=True, group="queue", description="build_queue")
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
        shown = self.bring_doc_pane()
        self.notify(f"{doc} is unjudged in run {rname}'s top {m.k}" + (" (shown in the Document pane; p: the "
                    "other panes)" if shown else ""), markup=False)

    def bring_doc_pane(self) -> bool:
        """The highlighted document is on no ranking shown: on a narrow screen, where the bottom row shows one
        pane, show the Document pane, so that what a grade key grades is on screen. True when it switched."""
        doc = self.query_one(DocView)
        if not self.has_class("-narrow") or self.labels_only or doc.has_class("-shown"):
            return False
        for w in self.query_one("#row-bottom").children:
            w.set_class(w is doc, "-shown")
        if self.focused is not None and doc not in self.focused.ancestors_with_self:
            target = doc if doc.focusable else next((w for w in doc.query("*") if w.focusable), None)
            if target is not None:
                self.call_after_refresh(target.focus)
        return True

    def action_prev_review(self) -> None:
        self.action_next_review(-1)

    def action_focus_filter(self) -> None:
        self.set_focus(self.query_one("#query-filter", Input))  # now, and the keys typed with `/` are its
        self.filter_opened_at = get_time()  # (take_early_key, screens/editing.py)

    def _blind_refuses(self, what: str) -> bool:
        """In blind review, what would show a run's name or how it does is refused, with the way out."""
        if self.blind:
            self.notify(f"blind review hides {what}: B turns it off", severity="warning", timeout=4)
        return self.blind

    def action_filter(self, text: str) -> None:
        if any(w in text for w in ("is:miss", "is:lost", "is:changed")) and self._blind_refuses("how the runs do"):
            return
        self.queries.set_filter(text)
        if not text and isinstance(self.focused, Input) and self.focused.id == "query-filter":
            self.query_one("#query-list").focus()

    def action_cycle_sort(self) -> None:
        if self._blind_refuses("the runs' changes (sorting by change would show them)"):
            return
        sort = self.queries.cycle_sort()
        self.notify(f"sorted by {sort}", timeout=2)

    # ---- runs ---------------------------------------------------------------------------------------------------

    def action_pick_run(self, role: str) -> None:
        if self._blind_refuses("the runs' names"):
            return
        m = self.model
        current, other = (m.baseline, m.candidate) if role == "baseline" else (m.candidate, m.baseline)

        def done(name: str | None) -> None:
            if name:
                self.action_set_run(role, name)

        self.app.push_screen(RunPicker(role, m.run_names, current, other), done)

    def action_set_run(self, role: str, name: str) -> None:
        if self._blind_refuses("the runs' names"):
            return
        m = self.model
        if name == (m.candidate if role == "baseline" else m.baseline):  # the palette's way in: refused too
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

    def _count_queue(self) -> None:
        """Up to QUEUE_INLINE queries, the review queue is built aside at once, for its length in the status
        line; above that `u` builds it (the status line says so)."""
        m = self.model
        if m is not None and m.nq <= self.QUEUE_INLINE and not m.queue_fresh():
            self._build_queue_quiet(m.queue_job())

    @work(thread=True, exclusive=True, group="queue", description="build_queue_quiet")
    def _build_queue_quiet(self, job) -> None:
        model = self.model
        try:
            job()
        except Exception:  # `u` says why when pressed
            return
        if model is self.model:
            self.app.call_from_thread(self.refresh_status)
            self.app.call_from_thread(lambda: self._gate and self.query_one(GatePanel).show(self._gate))  # stability

    def _runs_changed(self) -> None:
        self._count_queue()
        self.queries.rebuild(keep=self.qi)
        self.queries.redraw()
        if self.qi is not None:
            self.query_one(LabelEditor).show(self.qi, self.doc, keep_cursor=True)
            self.query_one(RankingPane).show(self.qi, self.doc)
        self.refresh_gate()

    # ---- the rest --------------------------------------------------------------------------------------------------

    def default_export_path(self) -> str:
        return export.default_export_path(self)

    def action_export(self) -> None:
        def done(path: str | None) -> None:
            if path:
                self.export_to(path)

        folder = getattr(getattr(self.app, "inputs", None), "export_dir", None)
        self.app.push_screen(ExportDialog(self.default_export_path(), folder), done)

    def export_to(self, path: str):
        """Write the reviewed labels; returns what was written (tui.labels.Exported) or None (screens/export.py)."""
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

        self.app.push_screen(AdjudicateScreen(self.model.labels, self.model.queries, doc_view.corpus,
                                              doc_view.has_corpus, recorded, self.grades))

    def action_toggle_blind(self) -> None:
        """Blind review on or off: the benchmark is opened again with the store's blind view (every grade,
        and the gate, from your own judgments only) and the rankings without ranks or movement."""
        if not self.model.labels.saved:
            self.notify("blind review needs the label store (these labels are in memory only)", severity="warning")
            return
        self.app.reopen(blind=not self.app.inputs.blind)

    action_show_funnel = show_funnel  # key F: the stage funnel of the two runs (tui/screens/funnel.py)
    action_judge = open_judging  # key l: one passage and the grade keys (tui/screens/judging.py)
    action_show_ids = show_ids  # key i: the whole IDs, on the notice line

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

        self.app.push_screen(MissingScreen(qid, m.k, missing), done)

    def action_history(self) -> None:
        if self.qi is None:
            return
        try:
            changes = self.model.labels.history(self.qid)
        except Exception as e:
            self.notify(f"cannot read the history: {e}", severity="error", markup=False, timeout=8)
            return
        self.app.push_screen(HistoryScreen(self.qid, changes))

    def action_next_pane(self) -> None:
        """The next of Query, Rankings, Document: shown in the bottom row on a narrow screen, and focused."""
        panes = [w for w in self.query_one("#row-bottom").children if not (self.labels_only and w.id == "rankings")]
        now = next((i for i, w in enumerate(panes) if w.has_class("-shown")), 0)
        pane = panes[(now + 1) % len(panes)]
        for w in panes:
            w.set_class(w is pane, "-shown")
        if self.maximized is not None:
            self.minimize()

        def focus() -> None:
            target = pane if pane.focusable else next((w for w in pane.query("*") if w.focusable), None)
            if target is not None:
                target.focus()

        self.call_after_refresh(focus)

    def action_zoom(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            self.maximize(self.focused)

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(self.grades))

    def action_quit(self) -> None:
        self.app.leave()

    def action_reload(self) -> None:
        self.app.reload()

    def failed(self, error: BaseException) -> None:
        """The benchmark could not be opened: say why on the load panel, and how to go on."""
        self.query_one(LoadPanel).failed(str(error))
