"""The rankings pane: baseline and candidate side by side for the current query."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message

from rankgate.core.text import cut_list, more_tail, visible
from rankgate.tui.model import RankRow, ReviewModel
from rankgate.tui.safe import id_cell, id_excerpt, literal
from rankgate.tui.widgets.line_list import LineList
from rankgate.tui.widgets.marks import grade_cell, move_cell
from rankgate.tui.widgets.text_static import TextStatic


class RankingList(LineList):
    """One run's ranking: rank, grade state, document ID and movement; rows past k dimmed.

    `▸` marks the current document (in both lists); the cursor row shows while the list has focus.
    """

    CURSOR_WHEN_BLURRED = False

    def __init__(self, role: str, **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.role = role
        self.rows: list[RankRow] = []
        self.current_doc: str | None = None
        self.blind = False  # blind review: the top k by document ID, no ranks, no movement
        self.leaks: set[str] = set()  # documents this query's user may not see (with an ACL): shown in red

    def _scroll_to_cursor(self) -> None:
        """Keep the run's top k in view: a cursor the program sets (a query opened, the other list followed)
        scrolls this list no further than its top k allows; once the reader is in the list, it follows the
        cursor anywhere (ranks below k stay reachable)."""
        if self.has_focus or not self.count:
            super()._scroll_to_cursor()
            return
        height = self.scrollable_content_region.height - (1 if self.header else 0)
        if height <= 0:
            return
        top = int(self.scroll_offset.y)
        want = top
        if self.cursor < top:
            want = self.cursor
        elif self.cursor >= top + height:
            want = self.cursor - height + 1
        k = sum(1 for r in self.rows if r.in_top_k)
        want = max(0, min(want, k - height))
        if want != top:
            self.scroll_to(y=want, animate=False, immediate=True)

    def on_focus(self) -> None:  # (LineList.on_focus runs too; has_focus is not yet set) the reader is here
        LineList._scroll_to_cursor(self)

    def render_header(self, width: int) -> Text:
        if self.blind:
            return Text(f"  {'':>3} {'g':<2} {'document (top k, by ID)':<{max(width - 14, 8)}}", end="")
        return Text(f"  {'#':>3} {'g':<2} {'document':<{max(width - 14, 8)}} move", end="")

    def row_key(self, index: int):
        row = self.rows[index]
        return row, row.doc == self.current_doc, self.role, self.blind, row.doc in self.leaks

    def render_row(self, index: int, width: int) -> Text:
        row = self.rows[index]
        docw = max(width - 14, 8)
        t = Text(end="")
        t.append("▸ " if row.doc == self.current_doc else "  ", style="bold")
        t.append("    " if self.blind else f"{row.rank:>3} ")
        t.append_text(grade_cell(row.state, row.grade))
        t.append(" ")
        t.append_text(literal(id_cell(row.doc, docw)))
        if self.blind:
            return t
        t.append(" ")
        if row.doc in self.leaks:  # a permission leak: the asking user may not see this document
            t.stylize("bold red")
            t.append("leak", style="bold red reverse")
            return t
        t.append_text(move_cell(row.move, "new" if self.role == "candidate" else "gone"))
        if not row.in_top_k:
            t.stylize("dim")
        return t

    def empty_text(self) -> Text:
        return Text("no ranking for this query", style="dim italic", end="")


class RankingColumn(Vertical):
    def __init__(self, role: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.role = role

    def compose(self) -> ComposeResult:
        yield TextStatic(classes="ranking-title")
        yield RankingList(self.role, id=f"ranking-{self.role}")
        yield TextStatic(classes="ranking-missing")


class RankingPane(Horizontal):
    """Baseline | candidate. Under each list, the relevant IDs that run misses in its top k."""

    ALLOW_MAXIMIZE = True

    class DocHighlighted(Message):
        def __init__(self, doc: str, run: str) -> None:
            super().__init__()
            self.doc = doc
            self.run = run

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ReviewModel | None = None
        self.qi: int | None = None
        self.blind = False  # blind review: each run's top k by document ID, without ranks or movement

    def compose(self) -> ComposeResult:
        yield RankingColumn("baseline", id="column-baseline")
        yield RankingColumn("candidate", id="column-candidate")

    def on_mount(self) -> None:
        self.border_title = "Rankings"

    def on_resize(self) -> None:  # the titles' figures fit the new width (after the columns are laid out)
        def titles() -> None:
            if self.model is not None:
                for role in ("baseline", "candidate"):
                    self.show_title(role, self.query_one(f"#column-{role}", RankingColumn), self.run_of(role), self.qi)

        self.call_after_refresh(titles)

    def show_title(self, role: str, col: RankingColumn, rname: str, qi: int | None) -> None:
        """`B  bm25-plain  RR 1.00 · R 0.50`: each figure whole, or left out where the column is narrow (was cut
        to "RR 1.00 · R" at 120 columns)."""
        m = self.model
        title = Text(end="")
        if self.blind:  # neither the run's name nor which side it is on
            title.append(f"run {1 if role == 'baseline' else 2}", style="bold")
            title.append("  blind: names, ranks hidden", style="dim")
        else:
            title.append("B " if role == "baseline" else "C ", style="bold reverse")
            title.append(" ")
            title.append_text(literal(id_excerpt(rname, 20), style="bold" if role == "baseline" else "bold cyan"))
            if qi is not None and m.evaluated[qi]:
                figures = [f"RR {m.metric(rname, m.rr_m, qi):.2f}", f"R {m.metric(rname, m.r_m, qi):.2f}"]
                room = col.size.width - 2 - title.cell_len - 2 if col.size.width else 1 << 20
                while figures and len(" · ".join(figures)) > room:
                    figures.pop()
                if figures:
                    title.append("  " + " · ".join(figures), style="dim")
        col.query_one(".ranking-title", TextStatic).show(title)

    def bind(self, model: ReviewModel) -> None:
        self.model = model
        self.access = model.access  # the benchmark's ACL (core/acl.py, read by the loader): leaks show in red

    def lists(self) -> dict[str, RankingList]:
        return {"baseline": self.query_one("#ranking-baseline", RankingList),
                "candidate": self.query_one("#ranking-candidate", RankingList)}

    def run_of(self, role: str) -> str:
        return self.model.baseline if role == "baseline" else self.model.candidate

    def show(self, qi: int | None, current_doc: str | None, keep_cursor: bool = False) -> None:
        m = self.model
        self.qi = qi
        for role, lst in self.lists().items():
            col = self.query_one(f"#column-{role}", RankingColumn)
            rname = self.run_of(role)
            old = lst.rows
            lst.rows = m.ranking(qi, rname) if qi is not None else []
            access = getattr(self, "access", None)
            lst.leaks = {r.doc for r in lst.rows if not access.may_see(m.qids[qi], r.doc)} if access else set()
            if self.blind != lst.blind:
                lst.blind = self.blind
                keep_cursor = False
                lst.refresh()
            if self.blind:
                lst.rows = sorted((r for r in lst.rows if r.in_top_k), key=lambda r: r.doc)
            if keep_cursor and len(old) == len(lst.rows) and lst.current_doc == current_doc:
                lst.refresh_rows(*[i for i, (a, b) in enumerate(zip(old, lst.rows)) if a != b])
            else:
                lst.current_doc = current_doc
                if keep_cursor:
                    cursor = None
                else:  # on the current document where this run has it
                    cursor = next((i for i, r in enumerate(lst.rows) if r.doc == current_doc), 0)
                lst.set_count(len(lst.rows), cursor, notify=False)
            self.show_title(role, col, rname, qi)
            missing = m.missing(qi, rname) if qi is not None and not self.blind else []
            miss = Text(end="")
            if self.blind:
                miss.append("blind: what this run misses is hidden", style="dim")
            elif missing:
                head = f"{len(missing)} relevant not in the top {m.k}: "  # not "misses 59 in top 10" (59 of 10?)
                miss.append(head, style="bold red")
                # Two of the three lines' worth (words wrap), then "... and N more": a list of thousands of
                # IDs is never drawn whole.
                width = col.size.width - 2
                room = max(2 * width - len(head) - 15, 20) if width > 0 else 60  # 15: " (M lists them)"
                shown, _ = cut_list([visible(d, lines="space") for d in missing[:room]], room)
                more = len(missing) - len(shown)  # (only the first `room` IDs can fit: no more are escaped)
                miss.append_text(literal(", ".join(shown)))
                if more:
                    miss.append(more_tail(more) + " (M lists them)", style="dim")
            elif qi is not None and m.num_rel[qi]:
                miss.append(f"finds every relevant label in top {m.k}", style="green")
            elif qi is not None:
                miss.append("no relevant label for this query", style="dim")
            col.query_one(".ranking-missing", TextStatic).show(miss)

    def set_current(self, doc: str | None) -> None:
        for lst in self.lists().values():
            if lst.current_doc != doc:
                rows = [i for i, r in enumerate(lst.rows) if r.doc in (doc, lst.current_doc)]
                lst.current_doc = doc
                lst.refresh_rows(*rows)

    def point_at_doc(self, role: str, doc: str) -> bool:
        """Put a list's cursor on a document (False: that list does not show it)."""
        lst = self.lists()[role]
        for i, r in enumerate(lst.rows):
            if r.doc == doc:
                lst.cursor = i
                return True
        return False

    @on(LineList.Highlighted)
    def _highlighted(self, event: LineList.Highlighted) -> None:
        event.stop()
        lst = event.line_list
        # Only a list the user is in moves the current document: a cursor set by the program (a query
        # shown, a document pointed at) arrives later, from another widget, and must not take it back.
        if isinstance(lst, RankingList) and lst.has_focus and lst.rows and 0 <= event.index < len(lst.rows):
            self.post_message(self.DocHighlighted(lst.rows[event.index].doc, self.run_of(lst.role)))
