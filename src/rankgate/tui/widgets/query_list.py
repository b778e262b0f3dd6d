"""The queries pane: a filter, and every query with its marks and its baseline/candidate figures."""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from rankgate.tui.model import ReviewModel, SORTS
from rankgate.tui.safe import excerpt, id_cell, literal, text_cell
from rankgate.tui.widgets.line_list import LineList
from rankgate.tui.widgets.marks import MUST, delta_text, hit_cell
from rankgate.tui.widgets.text_static import TextStatic

FILTER_HELP = "filter: words, #slice, is:review is:must is:miss is:lost is:changed"
FILTER_HELP_NO_RUNS = "filter: words, #slice, is:review is:must"  # is:miss, is:lost, is:changed compare runs


class QueryList(LineList):
    """The visible slice of the filtered, sorted queries (drawn row by row)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.model: ReviewModel | None = None
        self.order = np.zeros(0, np.int64)
        self.blind = False  # blind review: the runs' figures (hits, RR, R, their change) are hidden
        self.hidden = "blind: measures hidden"  # what the header says when they are
        self.labels_only = False  # no runs: no figures at all, the query text takes their width

    def _longest_id(self) -> int:
        m = self.model
        if m is None:
            return 0
        if getattr(self, "_longest", (None, 0))[0] is not m:
            self._longest = (m, max((len(q) for q in m.qids), default=0))
        return self._longest[1]

    # What follows the text and slice columns, as render_row draws it.
    HEAD_TAIL = f"{'rel':>3} B C  {'RR b→c':<9}  {'R b→c':<9}  {'ΔR+RR':>5} {'?':>2}"
    TAIL = len(HEAD_TAIL)
    LABELS_TAIL = 3  # labels only: the count of relevant labels ("rel")

    def _layout(self, width: int) -> tuple[int, int, int]:
        """(ID, slice, text) widths for a row of this width; the text gives way first, then the slice."""
        idw = 18 if width >= 70 else 12
        if width >= 90:  # room for longer IDs whole (up to 32 cells; longer ones are cut in the middle)
            idw = min(max(idw, self._longest_id()), 32)
        slicew = 12 if width >= 80 else 0
        tail = self.LABELS_TAIL if self.labels_only else self.TAIL
        textw = width - 3 - (idw + 1) - (slicew + 1 if slicew else 0) - tail - 1
        if textw < 8:
            textw = 0
        return idw, slicew, textw

    def render_header(self, width: int) -> Text:
        idw, slicew, textw = self._layout(width)
        t = Text(end="")
        t.append("   ")
        t.append(f"{'query':<{idw}} ")
        if textw:
            t.append(f"{'text':<{textw}} ")
        if slicew:
            t.append(f"{'slice':<{slicew}} ")
        if self.labels_only:
            t.append(f"{'rel':>3}")
            return t
        t.append(f"{'rel':>3} {'(' + self.hidden + ')':<{self.TAIL - 7}} {'?':>2}" if self.blind else self.HEAD_TAIL)
        return t

    def row_key(self, index: int):
        qi = int(self.order[index])
        return qi, int(self.model.qversion[qi]), self.model.pair_version, self.blind, self.labels_only

    def render_row(self, index: int, width: int) -> Text:
        m = self.model
        qi = int(self.order[index])
        idw, slicew, textw = self._layout(width)
        q = m.query(qi)
        b, c = m.values[m.baseline], m.values[m.candidate]
        ev = bool(m.evaluated[qi])
        t = Text(end="")
        t.append("▸" if index == self.cursor else " ", style="bold")  # the query shown: seen without colour too
        t.append(MUST[0] if m.must[qi] else " ", style=MUST[1])
        t.append(" ")
        t.append_text(literal(id_cell(q.id, idw)))
        t.append(" ")
        if textw:
            t.append_text(literal(text_cell(q.text, textw), style="dim"))
            t.append(" ")
        if slicew:
            t.append_text(literal(text_cell(",".join(q.tags), slicew), style="cyan"))
            t.append(" ")
        t.append(f"{int(m.num_rel[qi]):>3}")
        if self.labels_only:
            return t
        t.append(" ")
        if self.blind:
            t.append(" " * (self.TAIL - 6))
            n = int(m.unjudged[qi])
            t.append(f"{n:>2}" if n else "  ", style="bold magenta")
            return t
        t.append_text(hit_cell(ev, b[m.hit_m][qi]))
        t.append(" ")
        t.append_text(hit_cell(ev, c[m.hit_m][qi]))
        t.append("  ")
        for meas in (m.rr_m, m.r_m):
            bv, cv = b[meas][qi], c[meas][qi]
            if ev:
                t.append(f"{bv:.2f}→")
                t.append(f"{cv:.2f}", style="green" if cv > bv else "bold red" if cv < bv else "")
            else:
                t.append("  —  →  — ", style="dim")
            t.append("  ")
        d = (c[m.r_m][qi] - b[m.r_m][qi]) + (c[m.rr_m][qi] - b[m.rr_m][qi])
        t.append_text(delta_text(d))
        t.append(" ")
        n = int(m.unjudged[qi])
        t.append(f"{n:>2}" if n else "  ", style="bold magenta")
        return t

    def empty_text(self) -> Text:
        return Text("no query matches the filter", style="dim italic", end="")


class QueryPane(Vertical):
    """Filter box, the list, and a line that says what is shown."""

    ALLOW_MAXIMIZE = True

    class QueryHighlighted(Message):
        """The query under the cursor changed (None: the filter hides every query)."""

        def __init__(self, qi: int | None) -> None:
            super().__init__()
            self.qi = qi

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ReviewModel | None = None
        self.sort = "change"
        self.filter_text = ""
        self.stale = False  # edits since the last sort would move some queries (s sorts again)

    def compose(self) -> ComposeResult:
        yield Input(placeholder=FILTER_HELP, id="query-filter")
        yield QueryList(id="query-list")
        yield TextStatic(id="query-status")

    def on_mount(self) -> None:
        self.border_title = "Queries"

    def bind(self, model: ReviewModel) -> None:
        self.model = model
        self.query_one(QueryList).model = model
        self.rebuild(keep=None)

    @property
    def list(self) -> QueryList:
        return self.query_one(QueryList)

    @property
    def current(self) -> int | None:
        lst = self.list
        return int(lst.order[lst.cursor]) if lst.count else None

    def rebuild(self, keep: int | None = None, changed: int | None = None) -> None:
        """Filter and sort again; the cursor stays on query `keep` if it is still listed.

        `changed`: only this query's figures changed (a label edit). Then the list keeps its order and
        only that row is drawn again: the edited query does not jump away under the cursor, and the key
        costs one row, not a screen (a re-sort moved and redrew the whole list: 20-40 ms on a busy
        machine). When the edit would move it, the status line says the order is from before the edits
        (`stale`) until the sort or the filter changes, or `s` sorts again. The query under the cursor
        stays listed even if it no longer matches the filter (grading the last unjudged document under
        `is:review` does not move you away).
        When the query under the cursor changes, say so (QueryHighlighted).
        """
        lst = self.list
        old = lst.order
        order = self.model.order(self.filter_text, self.sort)
        if changed is not None and len(old) and lst.count == len(old):
            if not np.array_equal(old, order):
                self.stale = True
            lst.refresh_rows(*np.flatnonzero(old == changed).tolist())
            self._status()
            return
        self.stale = False
        lst.order = order
        if changed is not None and keep is not None and keep in old and keep not in lst.order:
            lst.order = old  # the edited query no longer matches the filter: it stays until the filter changes
        pos = 0
        if keep is not None:
            hit = np.flatnonzero(lst.order == keep)
            pos = int(hit[0]) if len(hit) else 0
        lst.set_count(len(lst.order), pos, notify=False)
        self._status()
        if self.current != keep or keep is None:
            self.post_message(self.QueryHighlighted(self.current))

    def _status(self) -> None:
        """What is listed; each piece whole and only while it fits the pane (most wanted first)."""
        m = self.model
        lst = self.list
        count = Text(f"{lst.count} of {m.nq} queries", style="bold")
        sort = Text(f"sort: {self.sort}", style="dim")
        stale = Text("order before your edits: s re-sorts", style="yellow") if self.stale else Text("")
        need = Text(f"{int((m.unjudged > 0).sum())} need review", style="magenta")
        must = Text(f"{int(m.must.sum())} must-pass", style="yellow")
        filt = Text("filter: ", style="dim") if self.filter_text else Text("")
        if self.filter_text:
            filt.append_text(literal(excerpt(self.filter_text, 30)))
        status = self.query_one("#query-status", TextStatic)
        room = status.content_size.width or 10**6  # not laid out yet: everything (on_resize fits it)
        used, kept = len(count.plain), set()
        for piece in (filt, stale, need, must, sort):  # by priority
            if piece.plain and used + 3 + len(piece.plain) <= room:
                used += 3 + len(piece.plain)
                kept.add(id(piece))
        t = Text(end="")
        t.append_text(count)
        for piece in (sort, stale, need, must, filt):  # in this order on screen
            if id(piece) in kept:
                t.append(" · ", style="dim")
                t.append_text(piece)
        status.show(t)

    def on_resize(self) -> None:
        if self.model is not None:
            self._status()

    def redraw(self) -> None:
        self.list.refresh()
        self._status()

    def cycle_sort(self) -> str:
        """The next sort; when edits left the order stale, first the same sort again."""
        if not self.stale:
            self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.rebuild(keep=self.current)
        return self.sort

    def catch_up(self) -> int | None:
        """The filter as typed, applied now (its Changed message may still be on its way: keys typed in one
        burst); the query under the cursor then."""
        value = self.query_one(Input).value
        if value != self.filter_text and self.model is not None:
            self.filter_text = value
            self.rebuild(keep=self.current)
        return self.current

    def set_filter(self, text: str) -> None:
        self.query_one(Input).value = text  # the Changed handler rebuilds

    def select(self, qi: int) -> bool:
        """Move the cursor to a query (clearing the filter when it hides it)."""
        lst = self.list
        hit = np.flatnonzero(lst.order == qi)
        if not len(hit):
            if self.filter_text:
                self.filter_text = ""
                with self.prevent(Input.Changed):
                    self.query_one(Input).value = ""
                self.rebuild(keep=qi)
                return True
            return False
        lst.cursor = int(hit[0])
        return True

    def next_needing_review(self, step: int = 1) -> int | None:
        lst = self.list
        if not lst.count:
            return None
        need = self.model.unjudged[lst.order] > 0
        n = len(need)
        start = lst.cursor
        idx = [(start + step * i) % n for i in range(1, n + 1)]
        hits = np.flatnonzero(need[idx])
        if not len(hits):
            return None
        pos = idx[int(hits[0])]
        lst.cursor = pos
        return int(lst.order[pos])

    @on(Input.Changed, "#query-filter")
    def _filter(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if self.model is not None:
            self.rebuild(keep=self.current)

    @on(Input.Submitted, "#query-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self.list.focus()

    @on(LineList.Highlighted, "#query-list")
    def _highlighted(self, event: LineList.Highlighted) -> None:
        event.stop()
        if self.list.count:
            self.post_message(self.QueryHighlighted(int(self.list.order[event.index])))
