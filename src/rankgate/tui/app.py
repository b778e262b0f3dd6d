"""`rankgate review`: the Textual app for label review and regression triage.

The app shows the review screen at once, covered by a progress bar, while a
worker thread reads and scores the benchmark (the app stays responsive, and
the panes mount meanwhile); then the panes are bound to the model and shown.
The corpus is read afterwards in a second worker.
"""

from __future__ import annotations

import gc
import os
import sys

# The app's imports (Textual, numpy, the core) make hundreds of thousands of objects: the cyclic collector
# paused meanwhile (a full pass fell in the middle of them, about 40 ms of every start), and what they made
# frozen out of its view at the end of this module, so later full passes do not scan it again.
_collecting = gc.isenabled()
gc.disable()

from textual import events, on, work
from textual._time import get_time  # the clock of `Message.time` (monotonic)
from textual.app import App
from textual.worker import get_current_worker

from rankgate.tui.commands import ReviewCommands
from rankgate.tui.web_rules import reviewer_problem  # noqa: F401 (its home: tui/web_rules.py)
from rankgate.core.errors import InputError
from rankgate.core.text import visible
from rankgate.tui.loader import Cancelled, Inputs, Loaded, check_inputs, load, load_corpus, read_ahead
from rankgate.tui.messages import CorpusLoaded, CorpusProgress, LoadFailed, Loaded as LoadedMessage, LoadProgress
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.screens.sync import QuitScreen, RawQuitScreen, Sync, SyncScreen
from rankgate.tui.widgets.doc_view import DocView
from rankgate.tui.widgets.notice_line import NoticeLine


class ReviewApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "rankgate review"
    COMMANDS = App.COMMANDS | {ReviewCommands}
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, inputs: Inputs, *, read_corpus: bool = True, cursor_blink: bool = True,
                 ask_reviewer: bool = False) -> None:
        super().__init__()
        self._on_line: set[str] = set()  # the kept notices a notice line showed (no toast for them: notify)
        self.inputs = inputs
        if inputs.ahead is None and not ask_reviewer:  # run files parsed while the app starts (not on a prompt)
            inputs.ahead = read_ahead(inputs)
        self.ask_reviewer = ask_reviewer  # the browser face: each session names its reviewer first
        self.cursor_blink = cursor_blink
        self.read_corpus = read_corpus
        self.loaded: Loaded | None = None
        self.error: BaseException | None = None
        self.sync: Sync | None = None  # the benchmark's qrels file against its workspace (screens/sync.py)
        self._sync_check: Sync | str | None = None
        self._leaving = False  # the quit dialog's choice was to leave: keys from then on are dropped
        self._quit_chosen_at = 0.0  # when a choice was made in the quit dialog (on_key)
        self._reopening = False  # the benchmark is being opened again (ctrl+r, after a sync): the store is closed
        self._quit_when_open = False  # `q` came during it: the way out waits for the benchmark (leave)
        self._watching = None  # the timer reading other browser sessions' edits (a served session)
        self.goodbye = ""  # a line `rankgate review` prints once the screen is gone (paths whole, not wrapped)

    def on_mount(self) -> None:
        if self.inputs.export_dir is not None:  # a browser session: it ends with its server (tui/serve.py)
            self._server = os.getppid()
            self.set_interval(1.0, self._end_if_server_gone)
        if self.ask_reviewer:
            self._ask_reviewer()
            return
        self.push_screen(ReviewScreen(self.inputs.path or "labels"))  # composed while the load runs
        self.call_after_refresh(self.check_size)
        self.load()

    def _end_if_server_gone(self) -> None:
        """A browser session whose server was killed or crashed: no browser reaches it again, so it ends
        rather than run on as an orphan (every acknowledged edit is in the workspace's journal already)."""
        if os.getppid() != self._server:
            self.exit(return_code=0)

    def _ask_reviewer(self) -> None:
        from rich.text import Text

        from rankgate.tui.screens.prompts import TextPrompt

        self.push_screen(TextPrompt(Text("Your name, as the label history should show it", style="bold"),
                                    placeholder="e.g. ana", check=self._reviewer_check, id_="reviewer-name",
                                    help="Enter opens the benchmark with a workspace of your own"),
                         self._reviewer_chosen)

    def _reviewer_db(self, name: str) -> str | None:
        """The reviewer's own workspace (None when the inputs name one or keep labels in memory)."""
        import os

        from rankgate.store import paths

        if self.inputs.db or self.inputs.memory or self.inputs.shared:  # served: the one shared workspace
            return None
        source = os.path.abspath(self.inputs.path or self.inputs.queries or ".")
        return str(paths.reviewer_workspace_path(source, name.strip()))

    def _reviewer_check(self, name: str) -> str:
        """reviewer_problem, and a name another browser session labels under right now (its workspace is
        locked: this session would open it read-only)."""
        why = reviewer_problem(name)
        db = None if why else self._reviewer_db(name)
        if db is None:
            return why
        from pathlib import Path

        from rankgate.store.paths import sidecar
        from rankgate.store.storage import Locked, WriterLock

        lock = WriterLock(sidecar(db, ".lock"), Path(db))
        try:
            lock.acquire()
        except Locked:
            return (f"{visible(name.strip())} is labelling this benchmark in another session now: type another "
                    "name, or close that session first")
        except InputError:
            return ""  # the load says what is wrong with the workspace
        lock.release()
        return ""

    def _reviewer_chosen(self, name: str | None) -> None:
        if not name or reviewer_problem(name):
            self._ask_reviewer()  # no way around it: every label needs its reviewer
            return
        name = name.strip()
        self.inputs.reviewer = name
        self.inputs.db = self._reviewer_db(name) or self.inputs.db
        self.ask_reviewer = False
        self.on_mount()

    @work(thread=True, exclusive=True, group="load", description="load")
    def load(self) -> None:
        worker = get_current_worker()

        def progress(what: str, done: int, total: int) -> None:
            if worker.is_cancelled:  # the app is leaving: stop after the step that is running
                raise Cancelled()
            self.post_message(LoadProgress(what, done, total))

        try:
            loaded = load(self.inputs, progress, defer_caches=True)
        except Cancelled:
            return
        except Exception as e:  # shown on the way out (exit 2), as the CLI shows bad input
            self.post_message(LoadFailed(e))
            return
        if worker.is_cancelled:
            loaded.model.labels.close()
            return
        try:
            if getattr(loaded.manifest, "qrels", None):
                self.post_message(LoadProgress("comparing the workspace with the folder's qrels file", 1, 1))
            self._sync_check = Sync.check(loaded)  # read here, off the main thread
        except Exception as e:  # the comparison is advice: the review goes on without it
            self._sync_check = f"could not compare the folder's qrels with the workspace: {e}"
        self.post_message(LoadedMessage(loaded))

    @work(thread=True, exclusive=True, group="corpus", description="read_documents")
    def read_documents(self, path, wanted=None) -> None:
        shown = [-1]

        def reading(done: int, total: int) -> None:
            pct = 100 * done // max(total, 1)
            if pct != shown[0]:  # a message per percent, not per block
                shown[0] = pct
                self.post_message(CorpusProgress(pct))

        try:
            corpus = load_corpus(path, wanted, reading)
        except Exception as e:
            self.post_message(CorpusLoaded({}, str(e)))
            return
        self.post_message(CorpusLoaded(corpus))

    def reopen(self, *, blind: bool) -> None:
        """Open the benchmark again (for blind review, or out of it): the store is let go first (it holds a
        writer lock), the review screen shows the load panel, and the panes come back on the same query."""
        review = self.review
        if self.loaded is None or review is None:
            return
        old, self.loaded = self.loaded, None
        review.unbind()
        old.model.labels.close()
        self.inputs.blind = blind
        self._reopening = True
        self.load()

    @property
    def review(self) -> ReviewScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, ReviewScreen)), None)

    @on(LoadProgress)
    def _progress(self, event: LoadProgress) -> None:
        if self.review is not None:
            self.review.progress(event.what, event.done, event.total)

    @on(LoadedMessage)
    def _loaded(self, event: LoadedMessage) -> None:
        self.loaded = event.loaded
        self._reopening = False
        check, self._sync_check = self._sync_check, None
        self.sync = check if isinstance(check, Sync) else None
        if self.inputs.export_dir is not None:  # a browser session writes no file outside its export folder:
            check = self.sync = None  # the folder's qrels file is the lead's to export back (a terminal)
            if self._watching is None:  # every session labels the one workspace: the others' edits, shown
                self._watching = self.set_interval(0.4, self._others_edits)
        self.review.bind(event.loaded)
        if self.inputs.judge or self.review.labels_only:  # labels are what the session is for: judging first
            from rankgate.tui.screens.judging import open_judging

            self.check_size(hide=True)
            open_judging(self.review)
            self.call_after_refresh(self.check_size)
        if self.sync is not None and self.sync.located:  # paths and names: escaped (core.text.visible)
            self.notify(visible(self.sync.located), title="workspace", timeout=15, markup=False)
        if isinstance(check, str):
            self.notify(visible(check), title="qrels file", severity="error", timeout=20, markup=False)
        elif self.sync is not None and self.sync.comparison.file_changed:  # said before anything else
            self.push_screen(SyncScreen(self.sync), self._sync_chosen)
        if self.read_corpus and event.loaded.corpus_path:  # after the panes' first frame: not beside it
            self.call_after_refresh(self.read_documents, event.loaded.corpus_path, event.loaded.wanted_docs)
        if self.sync is not None:  # the labels the unexported count follows edits with, if left for later
            self.call_after_refresh(self._sync_ready, self.sync)
        if event.loaded.later:  # new parsed-run cache entries, the first import's fold: after the first frame
            self.call_after_refresh(self._write_caches, event.loaded.later)
        if self._quit_when_open:  # `q` during the reload: now the edits can be counted and offered
            self._quit_when_open = False
            self.call_after_refresh(self.leave)

    def _others_edits(self) -> None:
        """Other browser sessions' edits of the shared workspace (tui/serve.py): every pane follows, and a
        reviewer whose grade another's later grade overrules is told."""
        from rankgate.tui.others import show_others_edits

        if self.loaded is not None and not self._reopening and self.review is not None:
            show_others_edits(self, self.loaded.model, self.review)

    @work(thread=True, group="caches", description="write_caches")
    def _write_caches(self, writes: list) -> None:
        while writes:
            writes.pop(0)()
        backend = getattr(getattr(self.loaded, "model", None), "labels", None)
        unwritten = getattr(getattr(backend, "backend", None), "import_unwritten", lambda: None)()
        if unwritten:  # the first import's write failed: said now, not first at the next edit
            self.call_from_thread(self.notify, visible(
                f"the benchmark's labels could not be written to the workspace ({unwritten}); they are still in "
                "its qrels file, and the next edit tries again"), severity="warning", timeout=20, markup=False)

    @work(thread=True, group="sync", description="sync_ready")
    def _sync_ready(self, state: Sync) -> None:
        state.tracker.ready()  # (the first edit waits for it, if it comes first)

    @on(LoadFailed)
    def _failed(self, event: LoadFailed) -> None:
        """Shown in place: the user can fix the file and open it again (ctrl+r), or quit (exit 2)."""
        self.error = event.error
        self._reopening = False
        if self.review is not None:
            self.review.failed(event.error)
        if self._quit_when_open:  # `q` during the reload: leave as from any failed open (exit 2, the error said)
            self._quit_when_open = False
            self.leave()

    def reload(self) -> None:
        """Open the benchmark again, after a file was fixed: from a failed load, or over a loaded one."""
        if self.loaded is not None:
            self.reopen(blind=self.inputs.blind)
        elif self.error is not None and self.review is not None:
            self.error = None
            self.review.progress("opening the benchmark again", 0, 1)
            self.load()

    def leave(self) -> None:
        """Quit: exit 2 when the benchmark could not be opened (as the CLI does on bad input); with label
        edits not yet in the folder's qrels file, offer to export them first. Opened on raw files: the same,
        for edits neither the qrels file nor the last export holds (they stay in the app's workspace). While the
        benchmark opens again (its store closed), the way out waits for it; `q` again leaves at once."""
        if self.loaded is None and self._reopening and not self._quit_when_open:
            self._quit_when_open = True
            self.notify("quitting once the benchmark is open again, to offer the export of label edits; "
                        "q again quits now", title="quit", timeout=10)
            return
        if self.loaded is not None and self.unexported:
            self.push_screen(QuitScreen(self.unexported, self.sync.manifest.qrels, self.sync.copy_path),
                             self._quit_chosen)
            return
        raw = self._raw_unexported()
        if raw:
            n, workspace = raw
            self.push_screen(RawQuitScreen(n, self.inputs.path, workspace, self.review.default_export_path()),
                             self._raw_quit_chosen)
            return
        self.exit(return_code=2 if self.loaded is None and self.error is not None else 0)

    def get_system_commands(self, screen):
        """Textual's palette entries, its Quit in our words: it offers the export first (action_quit)."""
        from rankgate.tui.commands import QUIT_HELP

        for command in super().get_system_commands(screen):
            yield command._replace(help=QUIT_HELP) if command.title == "Quit" else command

    async def action_quit(self) -> None:
        """ctrl+q (Textual's own key) and the palette's Quit: the way out `q` takes, export offer included;
        ctrl+q in the quit dialog is its `q`."""
        if isinstance(self.screen, QuitScreen):
            self.screen.dismiss("quit")
        elif not self._leaving:
            self.leave()

    @on(CorpusProgress)
    def _corpus_progress(self, event: CorpusProgress) -> None:
        panes = self.review.query(DocView) if self.review is not None else None
        if panes:  # (none once the app is leaving)
            panes.first().reading(event.percent)

    # ---- the folder's qrels file and the workspace (screens/sync.py) ---------------------------------

    @property
    def unexported(self) -> int:
        """Label edits in the workspace that the benchmark folder's qrels file does not hold (0: none, or
        not a benchmark's store)."""
        if self.sync is None or self.sync.raw:  # a qrels file opened on its own: its changes are offered on open
            return 0  # (screens/sync.py), its export stays the `e` key's choice of file, no count nor quit offer
        return self.sync.unexported

    def edited(self, qid: str) -> None:
        if self.sync is not None:
            self.sync.edited(qid)

    def _sync_chosen(self, choice: str | None) -> None:
        from rankgate.store import sync as store_sync

        state = self.sync
        if state is None or choice is None:
            return
        try:
            if choice == "merge":
                merged = store_sync.bring_in(state.ws, state.manifest)
                lines = [f"brought in {merged.brought_in} label change{'s' if merged.brought_in != 1 else ''} "
                         f"from {state.manifest.qrels}"]
                if merged.conflicts:
                    lines.append(f"{len(merged.conflicts)} conflict{'s' if len(merged.conflicts) != 1 else ''} "
                                 "kept the workspace's label:")
                    lines += [f"  {c.query} {c.doc}: file {c.file}, workspace {c.workspace}"
                              for c in merged.conflicts[:10]]
                self.notify("\n".join(visible(line) for line in lines), title="qrels file", timeout=15,
                            markup=False)
                self.reload()  # every pane from the merged labels
            elif choice == "keep":
                store_sync.keep_workspace(state.ws, state.manifest)
                state.again()
                n = state.unexported
                self.notify(visible(f"kept the workspace: {n} label edit{'s' if n != 1 else ''} to export to "
                                    f"{state.manifest.qrels}"), title="qrels file", timeout=10, markup=False)
                if self.review is not None and self.review.model is not None:
                    self.review.refresh_top()
        except InputError as e:
            self.notify(visible(f"nothing changed: {e}"), severity="error", timeout=15, markup=False)

    def _raw_unexported(self) -> tuple[int, str] | None:
        """(edits not exported, the workspace holding them) of the app on raw files with a label store; None
        for a benchmark folder, labels in memory, a read-only workspace, or no such edit. Counted against the
        qrels file and the last export (Sync.raw_unexported), as the folder's against its file: an edit left
        unexported by an earlier session counts; a workspace that does not follow the file (--db of other
        labels) counts this session's edits."""
        from rankgate.tui.store_backend import StoreBackend

        model = self.review.model if self.loaded is not None and self.review is not None else None
        backend = getattr(getattr(model, "labels", None), "backend", None)
        folder = self.sync is not None and not self.sync.raw  # a raw file's sync only follows the file's changes
        if folder or not isinstance(backend, StoreBackend) or backend.read_only:
            return None
        try:
            n = self.sync.raw_unexported() if self.sync is not None else model.labels.unexported()
        except Exception:  # a count for a reminder: never in the way of quitting
            return None
        return (n, backend.where) if n else None

    def _raw_quit_chosen(self, choice: str | None) -> None:
        from shlex import quote

        if choice is not None:
            self._quit_chosen_at = get_time()  # the keys read before this came with the choice (on_key)
            self._leaving = choice == "quit"
        _, workspace = self._raw_unexported() or (0, "")
        if choice == "export":
            target = self.review.default_export_path()
            from rankgate.tui.screens.export import elsewhere_if_read_only

            elsewhere = elsewhere_if_read_only(target)  # the data's folder: the export dialog, the current folder
            if elsewhere is not None:
                self._export_elsewhere_then_quit(elsewhere)
                return
            self._exported_then_quit(self.review.export_to(target))  # a failure is said in the app
        elif choice == "quit":
            self.goodbye = visible(
                f"label edits not exported: they are in the workspace {workspace}; `rankgate labels export --db "
                f"{quote(workspace)} -o FILE` writes them out")
            self.exit(return_code=0)

    def _exported_then_quit(self, done) -> None:
        """Quit saying where the labels went (done: tui.labels.Exported), or stay when the export failed (None)."""
        from shlex import quote

        if done is None:
            return
        self._leaving = True
        self.goodbye = visible(
            f"wrote {done.labels} label{'' if done.labels == 1 else 's'} ({done.format}) to {done.path}; "
            f"`rankgate gate --qrels {quote(str(done.path))} ...` reads them")
        self.exit(return_code=0)

    def _export_elsewhere_then_quit(self, default: str) -> None:
        """The quit dialog's export when the qrels file's folder is read-only: the export dialog, then quit."""
        from rankgate.tui.screens.export import ExportDialog

        def chosen(path: str | None) -> None:
            if path:
                self._exported_then_quit(self.review.export_to(path))

        self.push_screen(ExportDialog(default, getattr(self.inputs, "export_dir", None)), chosen)

    def _quit_chosen(self, choice: str | None) -> None:
        if choice is not None:
            self._quit_chosen_at = get_time()  # the keys read before this came with the choice (on_key)
            self._leaving = choice == "quit"
        if choice == "export":
            try:
                message = self.sync.quit_export()  # to a copy when the file is outside the folder
            except InputError as e:
                self.notify(visible(f"export failed, nothing changed: {e}"), severity="error", timeout=15,
                            markup=False)
                return
            self._leaving = True
            self.exit(return_code=0, message=message)
        elif choice == "quit":
            self.exit(return_code=0)

    def notify(self, message, *, title: str = "", severity: str = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Kept as Textual keeps them; shown on the screen's notice line (it covers no pane row), or, over a
        dialog, on the line of the screen beneath it (a toast would cover the dialog's text); a toast only when
        no screen has one."""
        line = next((found for screen in reversed(self.screen_stack)
                     for found in screen.query(NoticeLine)), None)
        if line is None:
            super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)
            return
        from textual.notifications import Notification

        # Kept with the app's notifications (as Textual keeps them), shown on the line only: no toast.
        note = Notification(message, title, severity, timeout or self.NOTIFICATION_TIMEOUT, markup=markup)
        self._notifications.add(note)
        self._on_line.add(note.identity)
        line.say(str(message), title=title, severity=severity, timeout=timeout, markup=markup)

    def _refresh_notifications(self) -> None:
        """Textual's, showing as toasts only the notices no line showed: it shows every kept notice on each
        screen that comes up, so a notice said on the review screen's line came back over the next dialog."""
        from textual.notifications import Notifications
        from textual.widgets._toast import ToastRack

        try:
            rack = self.screen.get_child_by_type(ToastRack)
        except Exception:  # no screen yet, or one without toasts
            return
        toasts = Notifications()
        for note in self._notifications:
            if note.identity not in self._on_line:
                toasts.add(note)
        self._on_line.intersection_update(note.identity for note in self._notifications)  # (expired: let go)
        self.call_later(rack.show, toasts)

    def on_resize(self, event: events.Resize) -> None:
        self.check_size(event.size)

    def check_size(self, size=None, *, hide: bool = False) -> None:
        """Below the smallest usable size, a screen that says which size is needed (the panes would be empty).
        `hide`: take it away for now (a screen is pushed; check_size again afterwards)."""
        from rankgate.tui.screens.too_small import TooSmallScreen, too_small

        if self.review is None:  # the reviewer's name is asked first (the browser face)
            return
        size = size or self.size  # (a resize's new size: `self.size` follows a moment later)
        small = too_small(size.width, size.height) and not hide
        shown = isinstance(self.screen, TooSmallScreen)
        if small and not shown:
            self.push_screen(TooSmallScreen())
        elif not small and shown:
            self.pop_screen()

    @on(CorpusLoaded)
    def _corpus(self, event: CorpusLoaded) -> None:
        judging = sys.modules.get("rankgate.tui.screens.judging")  # (imported when the judging screen first opens)
        for screen in (s for s in self.screen_stack if judging is not None and isinstance(s, judging.JudgingScreen)):
            screen.corpus_loaded(event.corpus, event.error)
        panes = self.review.query(DocView) if self.review is not None else None
        if self.loaded is not None and event.corpus:
            self.loaded.model.set_texts(event.corpus)  # stale labels (core/staleness.py)
        if panes:  # (none once the app is leaving)
            panes.first().set_corpus(event.corpus, True, error=event.error)
            self.review.corpus_loaded()
        if event.error:
            self.notify(f"could not read the corpus: {event.error}", severity="warning", markup=False)

    async def on_event(self, event: events.Event) -> None:
        """A character (or Backspace) typed while the reason bar has the focus goes into it now, in key order,
        not through the field's own queue: Enter is a priority binding run here when its key is read, so
        with the characters still queued a burst (a paste, tmux send-keys) lost its last ones ("...key rota")."""
        if (isinstance(event, events.Key) and not event.is_forwarded and event.key not in ("enter", "escape")
                and self.review is not None and self.screen is self.review):
            bar = self.review.reason_bar_typing()
            if bar is not None and bar.take_key(event):
                return
        # The same for a one-line prompt (V's collection version ...): a burst such as ctrl+u and a new value
        # lost the value (ctrl+u's binding ran after the characters behind it). Enter saves in key order too.
        prompts = sys.modules.get("rankgate.tui.screens.prompts")  # (imported when a prompt first opens)
        if (isinstance(event, events.Key) and not event.is_forwarded and event.key != "escape"
                and prompts is not None and isinstance(self.screen, prompts.TextPrompt) and self.screen.typing_now()
                and self.screen.early_key(event)):
            return
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """A key typed in one burst with a prompt's key belongs to that prompt (screens/editing.py). Keys
        typed after the quit dialog's choice (in the same burst) are dropped: once leaving, a letter would
        act on the review screen (x removes a label, e opens the export dialog) while the app closes."""
        if self._leaving or event.time < self._quit_chosen_at:
            event.stop()
            event.prevent_default()
        elif self.review is not None and self.review.model is not None:
            self.review.take_early_key(event)

    def on_unmount(self) -> None:
        if self.inputs.ahead is not None:  # left before any load took it: what is parsed ahead is dropped
            self.inputs.ahead.close()
            self.inputs.ahead = None
        if self.loaded is not None:
            try:
                self.loaded.model.labels.close()
            except Exception:
                pass


def run_review(args, ahead=None) -> int:
    """The `rankgate review` command: run the app; exit 0, or 2 when the inputs cannot be opened. `ahead`:
    its run files parsed since the command started (loader.read_ahead)."""
    inputs = Inputs.from_args(args)
    try:
        check_inputs(inputs)  # the mistakes found without reading anything: before the screen opens
    except InputError as e:
        if ahead is not None:
            ahead.close()
        print(f"error: {e}", file=sys.stderr)
        return 2
    inputs.ahead = ahead
    app = ReviewApp(inputs, ask_reviewer=bool(getattr(args, "ask_reviewer", False)), cursor_blink=cursor_blink_wanted())
    app.run()
    if app.goodbye:
        print(app.goodbye, file=sys.stderr)
    if app.error is not None:
        print(f"error: {app.error}", file=sys.stderr)
        return 2
    return int(app.return_code or 0)


def cursor_blink_wanted(environ=os.environ) -> bool:
    """Text boxes' cursors blink unless RANKGATE_CURSOR_BLINK is 0/no/off/false (docs/review.md): for people who
    find blinking hard to read beside, and for a served team, where each blink is a message to the browser."""
    return environ.get("RANKGATE_CURSOR_BLINK", "1").strip().lower() not in ("0", "no", "off", "false")


gc.freeze()  # what the imports made (see the top of this module), out of the collector's view
if _collecting:
    gc.enable()
