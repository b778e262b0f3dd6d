"""App-wide messages: loading progress and results from worker threads, and label edits.

Workers never touch widgets; they post these, and the app or screen acts on
them on the main thread.
"""

from __future__ import annotations

from textual.message import Message


class LoadProgress(Message):
    """A step of the load (a burst collapses to the newest)."""

    def __init__(self, what: str, done: int, total: int) -> None:
        super().__init__()
        self.what, self.done, self.total = what, done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, LoadProgress)


class Loaded(Message):
    """The benchmark is read and scored: `loaded` is a `tui.loader.Loaded`."""

    def __init__(self, loaded) -> None:
        super().__init__()
        self.loaded = loaded


class LoadFailed(Message):
    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class CorpusLoaded(Message):
    """The document texts (empty when the benchmark has none, or reading failed: see `error`)."""

    def __init__(self, corpus: dict, error: str = "") -> None:
        super().__init__()
        self.corpus, self.error = corpus, error


class CorpusProgress(Message):
    """How far the corpus is read: `percent` of the file (a burst collapses to the newest)."""

    def __init__(self, percent: int) -> None:
        super().__init__()
        self.percent = percent

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CorpusProgress)


class LabelsEdited(Message):
    """A label of query `qid` changed and every pane now shows it (for screens that follow edits)."""

    def __init__(self, qid: str, doc: str, seconds: float) -> None:
        super().__init__()
        self.qid, self.doc, self.seconds = qid, doc, seconds


class GateDecided(Message):
    """A fresh gate (significance tests recomputed) from a worker: `view` is a `tui.model.GateView`."""

    def __init__(self, view) -> None:
        super().__init__()
        self.view = view
