"""Moving through a review: the next unjudged document, the review queue (u, U), going to a query and
document, the filter and sort of the query list, the panes (p, zoom). A mixin of ReviewScreen
(tui/screens/review.py)."""

from __future__ import annotations

from textual import work
from textual._time import get_time  # the clock of `Message.time` (monotonic)
from textual.widgets import Input

from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.queue_order import empty_order_note, next_order, order_note
from rankgate.tui.suggested import suggestion_book
from rankgate.tui.widgets.gate_panel import GatePanel
from rankgate.tui.widgets.ranking import RankingList, RankingPane


class NavigationActions:
    """The review screen's keys that move the cursor, the query shown or the pane shown."""

    _pointed_at: tuple | None = None  # (the focused widget, its cursor) when u or n last pointed at a document

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
            self._keys_to(None)
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
                self._keys_to(role)
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
                self._keys_to(role)
                return
        self._keys_to(None)
        shown = self.bring_doc_pane()
        self.notify(f"{doc} is unjudged in run {rname}'s top {m.k}" + (" (shown in the Document pane; p: the "
                    "other panes)" if shown else ""), markup=False)

    def _keys_to(self, role: str | None) -> None:
        """u or n pointed `role`'s ranking (None: none shows the document) at the current document, marked ▸:
        the grade keys grade it. With the other run's list focused, `role`'s list takes the focus (Down goes
        on from the marked row); any list left focused (the labels, a list without the document) no longer
        decides what a key grades until its cursor moves (EditingActions._follow_focus). Before, a grade key
        graded that list's highlighted row, another document than the one marked."""
        lists = self.query_one(RankingPane).lists()
        if role is not None and isinstance(self.focused, RankingList) and self.focused is not lists[role] \
                and self.focused in lists.values():
            self.set_focus(lists[role], scroll_visible=False)
        self._pointed_at = (self.focused, getattr(self.focused, "cursor", None))

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
