"""The order the app's review queue (`u`) walks, switched with `U` or the palette.

- decisive: the review queue as built (core/queue.py): what could flip the gate first;
- suggested: the unjudged documents a judge suggested relevant first (highest grade first, then the
  queue's order), then the rest of the queue (`rankgate labels queue --order suggested`);
- disagreement: the judged pairs whose suggested grade differs from their label, those that disagree
  on relevant or not first (`rankgate labels queue --order disagreement`): what to look at again.

The suggestions are those beside the workspace (store/suggestions.py, `labels suggest` or `S`), read
again when their file changes. Textual-free: the screen calls `next_item` and shows what it returns.
"""

from __future__ import annotations

from dataclasses import field

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rankgate.core.queue import QUEUE_ORDERS, by_suggestion, suggestion_disagreements

ORDER_WORDS = {
    "decisive": "the most decisive first",
    "suggested": "suggested relevant (unjudged) first",
    "disagreement": "judge and label disagree",
}
assert tuple(ORDER_WORDS) == QUEUE_ORDERS


def next_order(order: str) -> str:
    """The order after `order` (U cycles decisive -> suggested -> disagreement -> decisive)."""
    i = QUEUE_ORDERS.index(order) if order in QUEUE_ORDERS else -1
    return QUEUE_ORDERS[(i + 1) % len(QUEUE_ORDERS)]


@dataclass(frozen=True)
class Disagreement:
    """A judged pair whose suggestion differs from its label (an item of the "disagreement" order)."""

    query: str
    doc: str
    suggested: int
    label: int
    judge: str
    ranks: dict = field(default_factory=dict)  # as a queue item's: none, the screen finds the document itself

    def why(self) -> str:
        return f"suggested {self.suggested} by {self.judge or 'a judge'}, label {self.label}"


def suggest_command(model, flags: str = "") -> str:
    """`rankgate labels suggest FOLDER ...` as it works on this workspace: the benchmark folder's, named;
    labels suggest reads a judge from a benchmark folder, so raw files (no folder) are told how to make one."""
    from shlex import quote

    ws = getattr(getattr(getattr(model, "labels", None), "backend", None), "ws", None)
    manifest = getattr(ws, "manifest", None)
    if manifest is not None and getattr(manifest, "path", None) is not None:  # (a qrels file's has no toml)
        return f"rankgate labels suggest {quote(str(manifest.folder))}{flags}"
    return f"`rankgate init` makes a benchmark folder of these files, then rankgate labels suggest FOLDER{flags}"


def empty_order_note(order: str, model=None) -> str:
    """What `u` says when the order has nothing left."""
    if order == "disagreement":
        return ("no judged pair where a judge's suggestion and the label disagree (" +
                suggest_command(model, " --judged") + " asks the judge about judged pairs)")
    return "the review queue is empty: every document in a top k is judged"


def order_note(order: str, model, book) -> str:
    """What `U` says on switching to `order`."""
    latest = _suggested(book)
    words = f"review queue (u): {ORDER_WORDS[order]}"
    if order == "decisive":
        return words
    if not latest:
        return words + f"; no suggestions yet (S asks the judge about this query; {suggest_command(model)})"
    if order == "suggested":
        level = model.policy.checks.rel_level
        n = sum(1 for (q, d), s in latest.items() if s.grade >= level and d not in model.labels.grades(q))
        return words + f": {n} unjudged documents suggested relevant"
    return words + f": {len(disagreements(model, latest, model.policy.checks.rel_level))} pairs"


def _suggested(book) -> dict:
    return {} if book is None else book.latest()


class QueueOrder:
    """The current order and the queue re-ordered by suggestions (kept while queue and suggestions stand)."""

    def __init__(self) -> None:
        self.order = "decisive"
        self._ordered = None  # (queue, book, its records then, level, the queue in "suggested" order)

    def suggested_queue(self, queue, book, level: int):
        """The queue, what `book` suggests relevant first; ordered again when the queue is rebuilt or the
        book is read again or grows (an S in the app, a labels suggest beside it)."""
        got = self._ordered
        if got is None or got[0] is not queue or got[1] is not book or got[2] != len(book.records if book else ())\
                or got[3] != level:
            grades = {k: s.grade for k, s in _suggested(book).items()}
            got = self._ordered = (queue, book, len(book.records if book else ()), level,
                                   by_suggestion(queue, grades, level))
        return got[4]

    def next_item(self, model, book, after: tuple[str, str] | None):
        """The next item in the current order after `after` (wrapping round); None when there is none.
        `model`: the app's ReviewModel; `book`: the SuggestionBook beside its workspace, or None."""
        if self.order == "decisive":
            return model.next_to_review(after)
        level = model.policy.checks.rel_level
        if self.order == "suggested":
            queue = self.suggested_queue(model.review_queue(), book, level)
            judged = lambda q, d: d in model.labels.grades(q)  # noqa: E731
            item = queue.next(after=after, judged=judged)
            return item if item is not None or after is None else queue.next(judged=judged)
        found = disagreements(model, _suggested(book), level)
        keys = [(d.query, d.doc) for d in found]
        start = keys.index(tuple(after)) + 1 if after is not None and tuple(after) in keys else 0
        rest = found[start:] + found[:start]
        return rest[0] if rest else None

    def why(self, item, book) -> str:
        """Why `u` went to `item`, in the current order: the suggestion first when the order follows them."""
        if self.order == "suggested":
            s = _suggested(book).get((item.query, item.doc))
            if s is not None:
                return f"suggested {s.grade} by {s.judge or 'a judge'}; {item.why()}"
        return item.why()

    def count(self, model, book) -> int:
        """How many items the "disagreement" order holds now (the others count the queue)."""
        return len(disagreements(model, _suggested(book), model.policy.checks.rel_level))


def disagreements(model, latest: dict, level: int) -> list[Disagreement]:
    """The judged pairs of the review whose newest suggestion differs from the label the app shows."""
    labels = {}
    for (q, d) in latest:
        if q in model.qindex:
            g = model.labels.grades(q).get(d)
            if g is not None:
                labels[(q, d)] = g
    suggested = {k: s.grade for k, s in latest.items() if k in labels}
    return [Disagreement(q, d, g, h, latest[(q, d)].judge)
            for q, d, g, h in suggestion_disagreements(suggested, labels, level)]
