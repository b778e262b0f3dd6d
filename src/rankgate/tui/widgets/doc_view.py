"""The document pane: the highlighted document's text with the query's terms marked.

The query (its ID and text, at most two lines) stays at the top of the pane at every width, above the
scrolling text: a passage is never read without its question (at 80 or 100 columns the Query pane and the
Document pane are not on screen together).
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from rankgate.core.formats.corpus import Document
from rankgate.core.text import visible
from rankgate.tui.safe import id_excerpt, literal
from rankgate.tui.widgets.text_static import TextStatic

STOPWORDS = frozenset("""a an and are as at be by can do does for from how i if in is it its me my of on or our
so that the this to was we what when where which who why will with you your""".split())
WORD = re.compile(r"[\w][\w.+-]*\w|\w", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The words of a query worth marking in a document (no stopwords, no single letters)."""
    seen: dict[str, None] = {}
    for w in WORD.findall(text.lower()):
        if len(w) > 1 and w not in STOPWORDS:
            seen[w] = None
    return list(seen)


def marked(text: str, terms: list[str], style: str = "bold black on yellow") -> Text:
    """The text, literal, with every whole-word occurrence of the terms styled."""
    out = literal(text, one_line=False)
    if terms:
        pattern = r"(?<!\w)(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")(?!\w)"
        out.highlight_regex(re.compile(pattern, re.IGNORECASE), style=style)
    return out


class DocView(VerticalScroll):
    ALLOW_MAXIMIZE = True

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.corpus: dict[str, Document] | None = None  # None: still loading (or no corpus at all)
        self.has_corpus = False
        self.missing = ""  # what to say when there is no corpus (the mode's words: manifest or flags)
        self.error = ""  # the corpus could not be read: said on every document, not only in a notification
        self.percent: int | None = None  # how far the corpus is read, while it is
        self.doc: str | None = None
        self.terms: list[str] = []
        self.suggested: Text | None = None  # a judge's suggested grade and reason (tui/suggested.py)
        self.qid = ""
        self.query_text = ""

    def compose(self) -> ComposeResult:
        yield TextStatic(id="doc-query")  # docked at the top (app.tcss): does not scroll with the text
        yield TextStatic(id="doc-body")

    def on_mount(self) -> None:
        self.border_title = "Document"

    def set_corpus(self, corpus: dict[str, Document] | None, has_corpus: bool, *, missing: str | None = None,
                   error: str = "") -> None:
        self.corpus = corpus
        self.has_corpus = has_corpus
        self.error = error
        if missing is not None:
            self.missing = missing
        self._draw()

    def reading(self, percent: int) -> None:
        """The corpus is being read: say how far (on the highlighted document's pane)."""
        self.percent = percent
        if self.corpus is None and self.has_corpus:
            self._draw()

    def show(self, doc: str | None, query_text: str, suggested: Text | None = None, *, qid: str = "") -> None:
        if (qid, query_text) != (self.qid, self.query_text):
            self.qid, self.query_text = qid, query_text
            self._draw_query()
        if doc == self.doc and query_terms(query_text) == self.terms and suggested == self.suggested:
            return
        self.suggested = suggested
        self.doc = doc
        self.terms = query_terms(query_text)
        self.scroll_home(animate=False)
        self._draw()

    def _draw_query(self) -> None:
        """`q-id  the query's text` (escaped, cut to two lines by the style's max-height)."""
        t = Text(end="")
        if self.qid:
            t.append_text(literal(id_excerpt(self.qid, max(self._id_width() // 3, 12)), style="bold cyan"))
            if self.query_text:
                t.append("  ")
                t.append_text(literal(self.query_text, style="italic"))
        bar = self.query_one("#doc-query", TextStatic)
        bar.display = bool(self.qid)
        bar.show(t)

    def _id_width(self) -> int:
        """The cells a document ID takes on its line: a long one is cut in the middle (i shows it whole)."""
        return max(self.size.width - 4, 20) if self.size.width else 76

    def _draw(self) -> None:
        t = Text(end="")
        doc_id = id_excerpt(self.doc, self._id_width()) if self.doc is not None else None
        if self.doc is None:
            t.append("no document highlighted", style="dim italic")
        elif not self.has_corpus:
            t.append_text(literal(doc_id, style="bold"))
            t.append("\n\n" + (self.missing or "no corpus given: --corpus FILE"), style="dim italic")
        elif self.error:
            t.append_text(literal(doc_id, style="bold"))
            t.append("\n\n")
            t.append_text(literal(f"could not read the corpus: {self.error}", style="bold red", one_line=False))
        elif self.corpus is None:
            t.append_text(literal(doc_id, style="bold"))
            more = f" {self.percent}%" if self.percent is not None else ""
            t.append(f"\n\nreading the corpus…{more}", style="dim italic")
        else:
            d = self.corpus.get(self.doc)
            t.append_text(literal(doc_id, style="bold"))
            if self.suggested is not None:
                t.append("\n")
                t.append_text(self.suggested)
            if d is None:
                t.append("\n\nnot in the corpus", style="dim italic")
            else:
                if d.title:
                    t.append("\n")
                    title = visible(d.title, lines="space")
                    t.append_text(marked(title, self.terms, "bold black on yellow"))
                    t.stylize("bold", len(t) - len(title))
                t.append("\n\n")
                t.append_text(marked(d.text, self.terms))
        self.query_one("#doc-body", TextStatic).show(t)
