"""The query pane: its text and notes, and its labels with grade, reason, version, reviewer and time."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message

from rankgate.tui.labels import Label
from rankgate.tui.model import ReviewModel
from rankgate.tui.safe import excerpt, id_cell, literal, text_cell
from rankgate.tui.widgets.line_list import LineList
from rankgate.tui.widgets.marks import MUST
from rankgate.tui.widgets.text_static import TextStatic


def short_version(version: str, current: str, width: int = 12) -> str:
    """A label's collection version beside the benchmark's current one, in at most `width` cells: whole when
    it fits, else from the word where it differs ("…2026.12")."""
    if not version:
        return "no version"
    if len(version) <= width:
        return version
    common = next((i for i, (a, b) in enumerate(zip(version, current)) if a != b), min(len(version), len(current)))
    cut = max(version.rfind(sep, 0, common) for sep in "-_/ ")
    return "…" + excerpt(version[cut + 1:] if cut >= 0 else version[common:], width - 1)


def restricted_marks(model: ReviewModel, qi: int | None, docs: list[str]) -> dict[str, str]:
    """With an ACL: "restricted: visible to security only" for each document the query's user may not see."""
    if qi is None or getattr(model, "access", None) is None:
        return {}
    out = {}
    for d in docs:
        groups = model.restricted(qi, d)
        if groups is not None:
            out[d] = f"restricted: visible to {', '.join(groups)} only" if groups else "restricted: visible to nobody"
    return out


class LabelList(LineList):
    CURSOR_WHEN_BLURRED = False

    def __init__(self, **kwargs) -> None:
        super().__init__(header=True, **kwargs)
        self.rows: list[Label] = []
        self.current_doc: str | None = None
        self.level = 1
        self.version = ""  # the benchmark's current collection version: a label of another one says so
        self.keys = "0-3"  # the grade keys, for the hint of an empty list
        self.restricted: dict[str, str] = {}  # with an ACL: documents the query's user may not see -> the mark
        self.model_stale = lambda lab: False  # the model's is_stale once shown (core/staleness.py)

    WIDE = 100  # from this width (a zoomed pane) the list shows version, reviewer and time too
    SLIM = 36  # below this width (the pane at 120-159 columns) the document column is 12 wide: room for the reason

    def doc_width(self, width: int) -> int:
        return 24 if width >= self.WIDE else 18 if width >= self.SLIM else 12

    def render_header(self, width: int) -> Text:
        if width >= self.WIDE:
            return Text(f"   g ! {'document':<24} {'version':<20} {'reviewer':<12} {'time':<24} reason", end="")
        return Text(f"   g ! {'document':<{self.doc_width(width)}} reason", end="")

    def row_key(self, index: int):
        lab = self.rows[index]
        return lab, lab.doc == self.current_doc, self.level, self.restricted.get(lab.doc), self.model_stale(lab)

    def render_row(self, index: int, width: int) -> Text:
        lab = self.rows[index]
        wide = width >= self.WIDE
        docw = self.doc_width(width)
        t = Text(end="")
        t.append("▸ " if lab.doc == self.current_doc else "  ", style="bold")
        t.append(f"{lab.grade:>2}", style="bold green" if lab.grade >= self.level else "red")
        t.append(" ")
        stale = self.model_stale(lab)
        t.append("!" if lab.unsure else "~" if stale else " ", style="bold yellow")  # unsure; ~ stale
        t.append(" ")
        t.append_text(literal(id_cell(lab.doc, docw)))
        t.append(" ")
        if not wide and lab.collection_version != self.version and self.version:
            t.append_text(literal(f"@{short_version(lab.collection_version, self.version)} ", style="yellow"))
        if wide:
            t.append_text(literal(text_cell(lab.collection_version, 20), style="dim"))
            t.append(" ")
            t.append_text(literal(text_cell(lab.reviewer, 12), style="cyan"))
            t.append(" ")
            t.append_text(literal(text_cell(lab.time or "", 24), style="dim"))
            t.append(" ")
        if lab.doc in self.restricted:  # never counts as found for this query (core/acl.py); the detail says why
            t.append_text(literal(f"{self.restricted[lab.doc] if wide else 'restricted'} · ", style="bold red"))
        if wide and lab.unsure:
            t.append_text(literal(f"unsure: {lab.unsure} · ", style="yellow"))
        if stale:  # judged on a text the corpus has changed since
            t.append_text(literal("stale · " if not wide else "stale: text changed since judged · ",
                                  style="bold yellow"))
        t.append_text(literal(excerpt(lab.reason, max(width - len(t), 0)), style="dim"))
        return t

    def empty_text(self) -> Text:
        return Text(f"no labels yet: grade a document with {self.keys} (g: by name), or add one with a",
                    style="dim italic", end="")


class LabelEditor(Vertical):
    ALLOW_MAXIMIZE = True

    class DocHighlighted(Message):
        def __init__(self, doc: str) -> None:
            super().__init__()
            self.doc = doc

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model: ReviewModel | None = None
        self.qi: int | None = None

    def compose(self) -> ComposeResult:
        yield TextStatic(id="query-head")
        yield LabelList(id="label-list")
        yield TextStatic(id="label-detail")

    def on_mount(self) -> None:
        self.border_title = "Query"

    def bind(self, model: ReviewModel, keys: str = "0-3") -> None:
        self.model = model
        self.keys = keys
        lst = self.query_one(LabelList)
        lst.level, lst.version, lst.keys = model.level, model.collection_version, keys

    @property
    def list(self) -> LabelList:
        return self.query_one(LabelList)

    def show(self, qi: int | None, current_doc: str | None, keep_cursor: bool = False) -> None:
        m = self.model
        self.qi = qi
        old = self.list.rows
        head = Text(end="")
        lst = self.list
        if qi is None:
            head.append("no query", style="dim")
            lst.rows = []
        else:
            q = m.query(qi)
            if m.must[qi]:
                head.append(f"{MUST[0]} must-pass  ", style=MUST[1])
            head.append_text(literal(q.id, style="bold"))
            if q.tags:
                head.append("  ")
                head.append_text(literal(" ".join(f"#{t}" for t in q.tags), style="cyan"))
            if q.id in m.no_answer:
                head.append("  no-answer", style="dim")
            head.append("\n")
            head.append_text(literal(q.text or "(no query text)", style="" if q.text else "dim italic"))
            if q.notes:
                head.append("\n")
                head.append("notes: ", style="bold dim")
                head.append_text(literal(q.notes, style="dim italic"))
            labels = m.labels.labels(q.id).values()
            lst.rows = sorted(labels, key=lambda lab: (not m.is_stale(lab), -lab.grade, lab.doc))  # stale first
        lst.restricted = restricted_marks(m, qi, [lab.doc for lab in lst.rows])
        lst.model_stale = m.is_stale
        self.query_one("#query-head", TextStatic).show(head)
        cursor = next((i for i, lab in enumerate(lst.rows) if lab.doc == current_doc), None if keep_cursor else 0)
        if keep_cursor and lst.current_doc == current_doc and (cursor is not None or len(old) == len(lst.rows)):
            # After an edit: only the rows from the first change on are drawn again (a label added or
            # removed shifts the rows after it); a full repaint of the list doubled an edit's frame.
            first = next((i for i, (a, b) in enumerate(zip(old, lst.rows)) if a != b), min(len(old), len(lst.rows)))
            lst.update_rows(len(lst.rows), first, lst.cursor if cursor is None else cursor)
        else:
            lst.current_doc = current_doc
            lst.set_count(len(lst.rows), cursor, notify=False)
        self.show_detail(current_doc)

    def show_detail(self, doc: str | None) -> None:
        m = self.model
        t = Text(end="")
        if self.qi is not None and doc is not None:
            lab = m.labels.labels(m.qids[self.qi]).get(doc)
            t.append_text(literal(doc, style="bold"))
            if lab is None:
                t.append("  unjudged", style="bold magenta")
                t.append(f" · press {self.keys} to grade it", style="dim")
            else:
                t.append(f"  grade {lab.grade}", style="bold green" if lab.grade >= m.level else "bold red")
                # One item a line, so that each is whole in the 40 columns the pane has at 80 (the reviewer's
                # name of an imported file is long): who, then the collection version and when.
                if lab.how or lab.reviewer:
                    t.append("\nby ", style="dim")
                    t.append_text(literal(lab.how or lab.reviewer, style="cyan"))
                t.append("\ncollection ", style="dim")
                t.append_text(literal(lab.collection_version or "none",
                                      style="yellow" if lab.collection_version != m.collection_version else ""))
                if lab.time:
                    t.append_text(literal(f" · {lab.time[:16].replace('T', ' ')}", style="dim"))
                if lab.unsure:
                    t.append("  unsure: ", style="bold yellow")
                    t.append_text(literal(lab.unsure, style="yellow"))
                if m.is_stale(lab):
                    t.append("  stale: judged on an older text; grade it again", style="bold yellow")
                t.append("\n")
                t.append_text(literal(lab.reason or "(no reason)", style="" if lab.reason else "dim italic"))
            mark = restricted_marks(m, self.qi, [doc]).get(doc)
            if mark:
                t.append("\n")
                t.append_text(literal(mark, style="bold red"))
                t.append(": this query's user may not see it, so it never counts as found", style="red")
        self.query_one("#label-detail", TextStatic).show(t)

    def set_current(self, doc: str | None) -> None:
        lst = self.list
        if lst.current_doc != doc:
            rows = [i for i, lab in enumerate(lst.rows) if lab.doc in (doc, lst.current_doc)]
            lst.current_doc = doc
            lst.refresh_rows(*rows)
        self.show_detail(doc)

    @on(LineList.Highlighted, "#label-list")
    def _highlighted(self, event: LineList.Highlighted) -> None:
        event.stop()
        rows = self.list.rows
        if self.list.has_focus and rows and 0 <= event.index < len(rows):  # the user's move only (ranking.py)
            self.post_message(self.DocHighlighted(rows[event.index].doc))
