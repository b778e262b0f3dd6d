"""Stale labels: a label judged on a document's text that a later corpus changed.

A label records `text_hash(title, text)` of the document it was judged on
whenever that text is known (the review app with a corpus, `labels set
--corpus`, `labels import --corpus`). A later corpus that gives the same
document ID another text (after normalising) makes the label stale.

What counts as a change (docs/labels.md, "Stale labels"): the title and the
text, each put in Unicode NFC, every run of whitespace (any Unicode space,
tab or line break) made one space, and stripped at both ends. So re-wrapping,
re-indenting, a composed vs decomposed accent or a trailing newline is not a
change; any other character (case, punctuation, a word) is.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Mapping

STALE_CHOICES = ("refuse", "warn", "allow")  # the policy's stale_labels: what the gate does with them
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Unicode NFC, whitespace runs made one space, stripped."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text or "")).strip()


def text_hash(title: str, text: str = "") -> str:
    """The hash a label records of its document's text: sha256 of the normalised title and text
    (16 hex digits are enough to tell versions of one document apart)."""
    joined = normalise(title) + "\n" + normalise(text)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def hash_of(doc) -> str:
    """`text_hash` of a corpus Document (anything with .title and .text)."""
    return text_hash(getattr(doc, "title", ""), getattr(doc, "text", ""))


def corpus_hashes(docs: Mapping[str, object]) -> dict[str, str]:
    """{document ID: text hash} of the documents read from a corpus."""
    return {d: hash_of(doc) for d, doc in docs.items()}


@dataclass
class StaleLabels:
    """Which labels a corpus makes stale. `pairs`: (query, doc) whose recorded hash differs from the
    corpus's; `checked`: labels with a recorded hash whose document the corpus has; `unknown`: labels
    with no recorded hash (judged without the text: never stale, never fresh)."""

    pairs: list[tuple[str, str]] = field(default_factory=list)
    checked: int = 0
    unknown: int = 0
    corpus: str = ""

    def __len__(self) -> int:
        return len(self.pairs)

    def as_dict(self) -> dict:
        return {"count": len(self.pairs), "checked": self.checked, "without_text_hash": self.unknown,
                "corpus": self.corpus, "pairs": [list(p) for p in self.pairs]}


def stale_labels(recorded: Iterable[tuple[str, str, str]], current: Mapping[str, str],
                 corpus: str = "") -> StaleLabels:
    """Labels (query, doc, recorded hash; "" when none) against the corpus's {doc: hash}."""
    out = StaleLabels(corpus=corpus)
    for qid, doc, h in recorded:
        if not h:
            out.unknown += 1
            continue
        now = current.get(doc)
        if now is None:
            continue
        out.checked += 1
        if now != h:
            out.pairs.append((qid, doc))
    out.pairs.sort()
    return out
