"""Suggested grades in the app: the judge's grade and reason beside the document, and accepting one.

The suggestions live beside the workspace (store/suggestions.py, written by `rankgate labels suggest`);
the app reads them again when that file changes. Accepting one (`A`) writes it as the reviewer's own
judgment through the usual edit path (undo, history) and records the acceptance beside the suggestion,
which stays in its history. Any grade key overrides it, as for any label.
"""

from __future__ import annotations

import os

from rich.text import Text

from rankgate.store.suggestions import Suggestion, SuggestionBook, path_beside
from rankgate.tui.safe import literal


class Suggested:
    """The suggestions beside one workspace (none for labels that are not in a workspace)."""

    def __init__(self, where: str | None):
        self.path = path_beside(where) if where and not where.startswith("(") else None
        self._book: SuggestionBook | None = None
        self._stamp: tuple | None = None
        self._blind: set[tuple[str, str]] = set()  # the overlap's pairs: their suggestion is not shown

    def book(self) -> SuggestionBook | None:
        if self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        if self._book is None or stamp != self._stamp:
            self._book, self._stamp = SuggestionBook(self.path), stamp
            self._blind = set(self._book.overlap()[0])
        return self._book

    def get(self, qid: str | None, doc: str | None) -> Suggestion | None:
        """The pair's suggestion; None for a pair of the judge's overlap, which experts judge blind
        (core/judge_vote.py: the expert does not see what the judge said)."""
        book = self.book() if qid is not None and doc is not None else None
        if book is None or (qid, doc) in self._blind:
            return None
        return book.get(qid, doc)


def suggestion_text(s: Suggestion | None, grades: dict[int, str]) -> Text | None:
    """"suggested 2 (relevant) by lexical: REASON" for the document pane (None: no suggestion)."""
    if s is None:
        return None
    t = Text("suggested ", style="dim", end="")
    t.append(f"{s.grade}", style="bold magenta")
    if s.grade in grades:
        t.append_text(literal(f" ({grades[s.grade]})", style="magenta"))
    t.append(" by ", style="dim")
    t.append_text(literal(s.judge or "a judge", style="magenta"))
    if s.confidence is not None:
        t.append(f", confidence {s.confidence:.2f}", style="dim")
    if s.reason:
        t.append(": ", style="dim")
        t.append_text(literal(s.reason))
    t.append("  (A accepts)", style="dim italic")
    return t


def suggestion_of(screen) -> Suggestion | None:
    """The highlighted document's suggestion on a review screen."""
    found = getattr(screen, "_suggested", None)
    if found is None:
        found = screen._suggested = Suggested(screen.model.labels.where)
    return found.get(screen.qid, screen.doc)


def suggestion_book(screen) -> SuggestionBook | None:
    """Every suggestion beside a review screen's workspace (None: none stored, or no workspace)."""
    found = getattr(screen, "_suggested", None)
    if found is None:
        found = screen._suggested = Suggested(screen.model.labels.where)
    return found.book()


def accept(screen) -> None:
    """Take the highlighted document's suggestion as the reviewer's judgment (A)."""
    qid, doc = screen.qid, screen.doc
    s = suggestion_of(screen)
    if s is None:
        from rankgate.tui.queue_order import suggest_command

        screen.notify(f"no suggested grade for this document ({suggest_command(screen.model)} asks a judge)",
                      severity="warning", markup=False)
        return
    reason = f"accepted {s.judge or 'the judge'}'s suggestion" + (f": {s.reason}" if s.reason else "")
    if screen.edit(qid, doc, s.grade, reason):
        try:
            book = screen._suggested.book()
            if book is None:
                raise OSError(f"{screen._suggested.path} is gone")
            book.accept(qid, doc, screen.model.labels.reviewer)
        except (OSError, KeyError) as e:  # the label is saved; only the note of acceptance is missing
            screen.notify(f"saved, but the acceptance was not recorded: {e}", severity="warning", markup=False)
        screen.notify(f"{qid} {doc}: {s.grade}, as suggested", title="accepted", markup=False)


# ---- asking the judge from the app (S): a worker with progress, cancelled by S again ---------------

def ask_judge(screen) -> None:
    """S: ask the benchmark's judge about the highlighted query's unjudged documents in the runs' top k,
    in a worker (the app stays responsive; each answer is stored as it comes, progress in notifications).
    S again while it runs cancels it after the answer in hand."""
    running = getattr(screen, "_judge_stop", None)
    if running is not None and not running.is_set():
        running.set()
        screen.notify("cancelling the judge after the answer in hand…", markup=False)
        return
    from rankgate.core.errors import InputError
    from rankgate.core.judge import judge_config

    loaded, m = getattr(screen, "loaded", None), screen.model
    manifest = loaded.manifest if loaded else None
    where = m.labels.where if m is not None else None
    if manifest is None or not where or where.startswith("("):
        screen.notify("asking a judge needs a benchmark folder opened with its workspace", severity="warning",
                      markup=False)
        return
    try:
        config = judge_config(manifest.judge, str(manifest.path), str(manifest.folder))
    except InputError as e:
        screen.notify(str(e), severity="error", markup=False, timeout=8)
        return
    if config is None:
        screen.notify("no [judge] in benchmark.toml (docs/reviewers.md)", severity="warning", markup=False)
        return
    from rankgate.store.trust import is_trusted

    if not is_trusted(manifest.folder, config.trust_token()):  # the app never trusts a folder's judge itself
        from rankgate.core.judge import untrusted_why

        screen.notify(untrusted_why(config), severity="warning", markup=False, timeout=12)
        return
    if screen.qi is None:
        screen.notify("highlight a query first", severity="warning", markup=False)
        return
    qid, query = m.qids[screen.qi], m.query(screen.qi)
    judged = m.labels.labels(qid)
    docs = list(dict.fromkeys(d for r in m.runs.values() for d in r.names(screen.qi)[: m.k] if d not in judged))
    if not docs:
        screen.notify("every document in this query's top k is judged", markup=False)
        return
    from rankgate.tui.widgets.doc_view import DocView

    corpus = screen.query_one(DocView).corpus or {}
    texts = {d: (f"{x.title}\n{x.text}" if x.title else x.text) for d in docs if (x := corpus.get(d))}
    stop = screen._judge_stop = __import__("threading").Event()
    screen.notify(f"asking {config.label()} about {len(docs)} documents of {qid} (S again cancels)", markup=False)
    screen.run_worker(lambda: _ask_in_worker(screen, config, qid, query, docs, texts, screen.grades, where, stop),
                      thread=True, exclusive=True, group="judge")


def _ask_in_worker(screen, config, qid, query, docs, texts, grades, where, stop) -> None:
    from rankgate.core.errors import InputError
    from rankgate.core.judge import Cancelled, JudgeRequest, ask

    app, book, info = screen.app, SuggestionBook(path_beside(where)), config.describe()
    reqs = [JudgeRequest(qid, d, query.text, query.notes, texts.get(d, "")) for d in docs]
    stored = failed = 0
    try:
        for a in ask(config, reqs, grades, cancelled=stop.is_set):
            if a.ok:
                book.add([Suggestion(a.query, a.doc, a.grade, a.reason, a.confidence, info["name"], info["model"],
                                     info["prompt_hash"])])
                stored += 1
            else:
                failed += 1
                app.call_from_thread(screen.notify, f"{a.doc}: {a.error}", severity="warning", markup=False)
        note = f"{config.label()}: {stored} suggestions stored, {failed} failed"
    except Cancelled:
        note = f"{config.label()} cancelled: {stored} suggestions stored, {failed} failed"
    except InputError as e:
        note = str(e)
    finally:
        stop.set()
    app.call_from_thread(screen.notify, note, markup=False)
    app.call_from_thread(screen._show_doc)
