"""What the judging screen shows next: a cursor over the documents that need a judgment (textual-free).

With runs, a document needs a judgment when nobody has judged it and it sits in a run's top k: the rest
of the current query first (in the order `ReviewModel.unjudged_items` gives: the candidate's, the
baseline's, then the other runs'), then the review queue's next query (`core/queue.py`, most decisive
first; queries in the benchmark's order when there is no queue). With no runs (a qrels file reviewed with
its texts), every label of the file is to be looked at once: a document needs a judgment while the
reviewer has no judgment of their own on it, in the order the query's labels were listed when first
shown (those with a text first, then highest grade first), then the next query.
"""

from __future__ import annotations


from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)


@dataclass(frozen=True)
class Place:
    """One document of one query, on the judging screen."""

    qid: str
    doc: str


class JudgingCursor:
    """The document being judged, the next one, and the way back (undo)."""

    def __init__(self, model, *, labels_only: bool, has_text=None) -> None:
        self.model = model
        self.has_text = has_text or (lambda doc: True)  # labels only: documents with a text come first
        self.labels_only = labels_only
        self.at: Place | None = None
        self.trail: list[Place] = []  # the documents graded on this screen, oldest first (undo walks back)
        self._listed: dict[str, list[str]] = {}  # labels only: a query's labels, in order, when first shown

    # ---- what needs a judgment ------------------------------------------------------------------------

    def docs(self, qid: str) -> list[str]:
        """The query's documents in the order they are judged."""
        m = self.model
        if self.labels_only:
            got = self._listed.get(qid)
            if got is None:
                labels = m.labels.labels(qid).values()
                order = sorted(labels, key=lambda lab: (not self.has_text(lab.doc), -lab.grade, lab.doc))
                got = self._listed[qid] = [lab.doc for lab in order]
            return got
        return [d for _, _, d in m.unjudged_items(m.qindex[qid])]

    def texts_known(self) -> None:
        """The corpus has been read: the queries' orders again (documents with a text first)."""
        self._listed.clear()

    def needs(self, qid: str, doc: str) -> bool:
        book = self.model.labels
        if self.labels_only:  # (the query's labels say who judged each: cheaper than asking the store each time)
            lab = book.labels(qid).get(doc)
            return lab is None or not lab.judged_by(book.reviewer)
        return doc not in book.grades(qid)

    def left_in(self, qid: str) -> int:
        return sum(1 for d in self.docs(qid) if self.needs(qid, d))

    def _in_query(self, qid: str, after: str | None) -> str | None:
        """The query's next document needing a judgment after `after` (then from its start)."""
        docs = self.docs(qid)
        start = docs.index(after) + 1 if after in docs else 0
        for d in docs[start:] + docs[:start]:
            if d != after and self.needs(qid, d):
                return d
        return None

    def _next_query(self, qid: str | None) -> Place | None:
        m = self.model
        if not self.labels_only:
            try:  # the review queue: the most decisive unjudged document of any query
                item = m.next_to_review(None)
            except Exception:  # no queue for these runs (the core refused): the benchmark's order below
                item = None
            if item is not None and item.query != qid:
                return Place(item.query, item.doc)
        start = m.qindex[qid] + 1 if qid in m.qindex else 0
        for i in list(range(start, m.nq)) + list(range(0, start)):
            q = m.qids[i]
            if q == qid:
                continue
            d = self._in_query(q, None)
            if d is not None:
                return Place(q, d)
        return None

    def next(self, after: Place | None = None) -> Place | None:
        """The next document needing a judgment after `after`: in its query, then in the next query."""
        after = after or self.at
        if after is not None:
            d = self._in_query(after.qid, after.doc)
            if d is not None:
                return Place(after.qid, d)
        return self._next_query(after.qid if after else None)

    def start(self, qid: str | None, doc: str | None) -> Place | None:
        """Where to begin: the given document when it needs a judgment, else the next one."""
        if qid is not None and doc is not None and qid in self.model.qindex and self.needs(qid, doc):
            self.at = Place(qid, doc)
        elif qid is not None and qid in self.model.qindex:
            d = self._in_query(qid, None)
            self.at = Place(qid, d) if d is not None else self._next_query(qid)
        else:
            self.at = self.next(None)
        return self.at

    # ---- moving --------------------------------------------------------------------------------------

    def graded(self) -> Place | None:
        """The current document was graded: remember it (undo comes back to it) and move on."""
        if self.at is not None:
            self.trail.append(self.at)
        self.at = self.next(self.at)  # None: nothing left (a grade key held down past the end regrades nothing)
        return self.at

    def back(self) -> Place | None:
        """Undo's way back: the document graded last (None when none was graded here)."""
        if not self.trail:
            return None
        self.at = self.trail.pop()
        return self.at

    def ranks(self, place: Place) -> list[tuple[str, int | None, bool]]:
        """(run, 1-based rank or None, inside the top k) of the document in every loaded run."""
        m = self.model
        if self.labels_only:  # no runs
            return []
        qi = m.qindex[place.qid]
        out = []
        for name in m.run_names:
            names = m.runs[name].visible_names(qi)
            try:
                r = names.index(place.doc) + 1
            except ValueError:
                r = None
            out.append((name, r, r is not None and r <= m.k))
        return out
