"""The benchmark folder's qrels file and the workspace (store/sync.py), in the app.

On open, when the folder's qrels changed since the last import or export,
`SyncScreen` says so before anything else and offers: bring the file's changes
in (a merge keeping each label's reviewer; conflicts keep the workspace's label
and are listed), keep the workspace as it is, or show the differences. The
header counts the edits not yet exported (`Sync.unexported`); quitting with
some, `QuitScreen` offers to export them to the folder's qrels file first.
"""

from __future__ import annotations

import os


from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rankgate.core.errors import InputError
from rankgate.core.text import visible
from rankgate.store import sync
from rankgate.tui.safe import id_excerpt, literal
from rankgate.tui.screens import apply_cursor_blink

SHOW_AT_MOST = 500  # differences listed in the dialog


@dataclass
class Sync:
    """A benchmark's workspace against its folder's qrels file, for the app."""

    ws: object  # store.workspace.Workspace (open for writing, or read-only when another process writes)
    manifest: object
    comparison: sync.Comparison
    tracker: sync.Unexported
    writable: bool
    located: str = ""  # how the workspace was found, when that needs saying (a moved folder's, a copy's)

    @classmethod
    def check(cls, loaded) -> "Sync | str | None":
        """The comparison of a loaded benchmark (None: not a benchmark's store; a str: why the folder's
        qrels could not be read, with file:line; the workspace is untouched)."""
        backend = getattr(loaded.model.labels, "backend", None)
        ws = getattr(backend, "ws", None)
        manifest = getattr(ws, "manifest", None)
        if manifest is None or ws.blind:  # blind review: other reviewers' labels stay out of sight
            return None
        from rankgate.tui.runcache import compare_cached

        try:  # as the last open compared them while nothing changed since, else the file's labels from the
            # parsed-file cache while the file is unchanged (tui/runcache.py)
            comparison, inputs = compare_cached(ws, manifest, sync.read_file_grades)
        except InputError as e:
            whose = "the" if isinstance(manifest, sync.QrelsFile) else "the folder's"
            return f"{whose} qrels file no longer reads: {e}; the workspace is left as it is"
        return cls(ws, manifest, comparison, sync.Unexported(comparison, inputs), not backend.read_only,
                   ws.located)

    @property
    def unexported(self) -> int:
        return self.tracker.count

    def raw_unexported(self) -> int:
        """A qrels file opened on its own: the label edits that neither the file (as its last sync left it)
        nor the workspace's last export to a file holds (store.sync.record_export), whichever session made
        them; what the quit dialog counts."""
        exported = sync.read_exported(self.ws.path)
        self.tracker.ready()
        n = 0
        for qid, docs in list(self.tracker.dirty.items()):
            if exported is None:
                n += len(docs)
                continue
            grades = sync.query_grades(self.ws, qid)
            n += sum(1 for d in docs if grades.get(d) != exported.get(sync.label_key(qid, d)))
        return n

    @property
    def raw(self) -> bool:
        """A qrels file opened on its own (no benchmark folder): store.sync.QrelsFile."""
        return isinstance(self.manifest, sync.QrelsFile)

    def edited(self, qid: str) -> None:
        """Query `qid`'s labels changed: count its unexported edits again."""
        self.tracker.touch(qid, sync.query_grades(self.ws, qid))

    def again(self) -> None:
        """Compare again (after an export, a merge, or keeping the workspace)."""
        self.comparison = sync.compare(self.ws, self.manifest)
        self.tracker = sync.Unexported(self.comparison)

    def export(self):
        """The workspace's labels to the folder's qrels file (store.sync.export_back); refused when the file
        changed since the last sync, with what to do in the app."""
        out = sync.export_back(self.ws, self.manifest, bring_in=BRING_IN)
        self.again()
        return out

    @property
    def copy_path(self):
        """Where the quit dialog's export writes when benchmark.toml names a qrels file outside the folder
        (`rankgate init` without --copy): a copy in the folder; None when the file is inside."""
        return sync.folder_copy_path(self.manifest) if sync.is_outside_folder(self.manifest) else None

    def export_copy(self):
        """The labels to a copy of the outside qrels file in the folder: (Export, its path)."""
        return sync.export_copy(self.ws, self.manifest)

    def quit_export(self) -> str:
        """The quit dialog's `e`: the labels back to the folder's qrels file, or to a copy in the folder when
        that file is outside it (never replaced from the app); returns the line to print on the way out."""
        copy = self.copy_path
        if copy is None:
            out = self.export()
            return f"wrote {out.labels} label{'' if out.labels == 1 else 's'} to {visible(str(self.manifest.qrels))}"
        out, copy = sync.export_copy(self.ws, self.manifest)
        name = visible(copy.name)
        return (f"wrote {out.labels} label{'' if out.labels == 1 else 's'} to {visible(str(copy))}, a copy: "
                f"`rankgate gate` still reads {visible(str(self.manifest.qrels))}; set qrels = \"{name}\" in "
                f"{visible(str(self.manifest.path))} to gate on them")


# what a refused export back says to do, in the app (the commands' words name `rankgate review`: this app)
BRING_IN = ("press ctrl+r: the app reads the file again and offers to bring its changes in (b) or to keep the "
            "workspace's labels (k); then export again")


def difference_lines(comparison: sync.Comparison, limit: int = SHOW_AT_MOST) -> Text:
    """One line a label: query, document, and its grade at the last sync, in the file, in the workspace."""
    def g(x):
        return "-" if x is None else str(x)

    side_words = {"file": "file changed", "workspace": "not exported", "both": "CONFLICT"}
    t = Text(end="")
    t.append(f"{'':14}{'last sync':>10} {'file':>5} {'workspace':>10}\n", style="dim")
    for d in comparison.differences[:limit]:
        style = "bold red" if d.side == "both" else "yellow" if d.side == "file" else "cyan"
        t.append_text(literal(f"{id_excerpt(d.query, 24)} {id_excerpt(d.doc, 32)}", style="bold"))
        t.append(f"\n{side_words[d.side]:14}{g(d.base):>10} {g(d.file):>5} {g(d.workspace):>10}\n", style=style)
    if len(comparison.differences) > limit:
        t.append(f"... and {len(comparison.differences) - limit} more (rankgate labels status)\n", style="dim")
    return t


class SyncScreen(ModalScreen[str | None]):
    """The folder's qrels file changed: bring its changes in (`merge`), keep the workspace (`keep`), or see
    the differences; escape decides later (asked again on the next open)."""

    BINDINGS = [("b", "choose('merge')", "Bring the file's changes in"), ("k", "choose('keep')", "Keep the workspace"),
                ("d", "differences", "Show the differences"), ("escape", "dismiss(None)", "Later")]

    def __init__(self, state: Sync) -> None:
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        c = self.state.comparison
        with Vertical(classes="dialog", id="sync-dialog"):
            whose = "The" if self.state.raw else "The benchmark's"
            yield Static(Text(f"{whose} qrels file changed since the last import or export", style="bold"))
            body = Text(end="")
            body.append_text(literal(str(c.qrels)))
            body.append("\n")
            for line in c.describe():
                body.append(line + "\n")
            yield Static(body, id="sync-summary")
            with VerticalScroll(id="sync-differences"):
                yield Static(difference_lines(c), id="sync-lines")
            keys = Text(end="", style="dim")
            if self.state.writable:
                keys.append("b", style="bold")
                keys.append(": bring the file's changes in (each label keeps its reviewer; a conflict keeps "
                            "the workspace's) · ")
                keys.append("k", style="bold")
                keys.append(": keep the workspace as it is (an export writes it to the file) · " if not self.state.raw
                            else ": keep the workspace's labels (`rankgate gate` reads the file as it is) · ")
            else:
                keys.append("read-only (another process writes these labels): nothing can be brought in now · ")
            keys.append("d", style="bold")
            keys.append(": show the differences · ")
            keys.append("escape", style="bold")
            keys.append(": later")
            yield Static(keys)

    def on_mount(self) -> None:
        self.query_one("#sync-differences").display = False
        apply_cursor_blink(self)

    def action_choose(self, what: str) -> None:
        if self.state.writable:
            self.dismiss(what)

    def action_differences(self) -> None:
        box = self.query_one("#sync-differences")
        box.display = not box.display


def read_only_place(path: str) -> bool:
    """The file, or the folder it would be written in, has no write bit (the app never writes there)."""
    from pathlib import Path

    from rankgate.core.outfile import no_write_bit

    return no_write_bit(Path(os.path.abspath(path))) is not None


class QuitScreen(ModalScreen[str | None]):
    """Quitting with unexported edits: export them to the folder's qrels file and quit (`export`), quit
    anyway (`quit`), or stay (escape). When benchmark.toml names a qrels file outside the folder (`copy`:
    where a copy goes), the dialog says so and `e` writes that copy instead: the app never replaces a
    file outside the benchmark folder (docs/review.md)."""

    BINDINGS = [("e", "dismiss('export')", "Export and quit"), ("q", "dismiss('quit')", "Quit without exporting"),
                ("escape", "dismiss(None)", "Stay")]

    def __init__(self, n: int, qrels, copy=None) -> None:
        super().__init__()
        self.n, self.qrels, self.copy = n, qrels, copy

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="quit-dialog"):
            head = Text(f"{self.n} label edit{'s' if self.n != 1 else ''} not exported", style="bold")
            yield Static(head)
            body = Text("`rankgate gate` reads ", end="")
            body.append_text(literal(str(self.qrels)))
            if self.copy is None:
                body.append(", which does not hold them yet.")
                export = "export to that file and quit"
            else:
                why = "a link in the folder to a file outside it" if os.path.islink(self.qrels) else \
                    "outside the benchmark folder (init without --copy points at it)"
                body.append(f", {why}, which does not hold them yet. The app does not replace a file outside the "
                            "folder.")
                export = f"write a copy into the folder ({visible(str(self.copy))}) and quit; then point "
                export += "benchmark.toml's qrels at it"
            yield Static(body)
            keys = Text(end="", style="dim")
            for key, what in (("e", export), ("q", "quit without exporting (they stay in the workspace)"),
                              ("escape", "stay")):
                keys.append(key, style="bold")
                keys.append(f": {what}   ")
            yield Static(keys)

    def on_mount(self) -> None:
        apply_cursor_blink(self)


class RawQuitScreen(QuitScreen):
    """Quitting the app opened on raw files (`rankgate review QRELS --runs ...`) with label edits not exported:
    they are in the app's workspace for QRELS (`workspace`), which `rankgate gate` never reads. `e` exports them
    to `target` (the export dialog's default) and quits; `q` quits and they stay in the workspace; escape
    stays. The same keys as a benchmark folder's dialog."""

    def __init__(self, n: int, qrels: str | None, workspace: str, target: str) -> None:
        super().__init__(n, qrels)
        self.workspace, self.target = workspace, target

    def status_target(self) -> str:
        """What `rankgate labels status` takes to find the workspace: the qrels file when the app named the
        workspace after it (store/paths.py qrels_workspace_path), else --db and the workspace."""
        from shlex import quote

        from rankgate.store.paths import qrels_workspace_path

        if self.qrels and os.path.abspath(self.workspace) == str(qrels_workspace_path(self.qrels, create=False)):
            return quote(os.path.relpath(self.qrels) if not os.path.isabs(self.qrels) else self.qrels)
        return f"--db {quote(self.workspace)}"

    def compose(self) -> ComposeResult:
        them = "them" if self.n != 1 else "it"
        with Vertical(classes="dialog", id="quit-dialog"):
            yield Static(Text(f"{self.n} label edit{'s' if self.n != 1 else ''} not exported", style="bold"))
            body = Text(end="")
            if self.qrels:
                body.append("`rankgate gate` reads ")
                body.append_text(literal(str(self.qrels)))
                body.append(f", which does not hold {them}: ")
            body.append(f"{'they are' if self.n != 1 else 'it is'} in the workspace ")
            body.append_text(literal(self.workspace))
            body.append(" (`rankgate labels status ")
            body.append_text(literal(self.status_target()))
            body.append("` shows it).")
            yield Static(body)
            keys = Text(end="", style="dim")
            export = f"export to {visible(self.target)} and quit"
            if read_only_place(self.target):
                export = f"choose where to export ({visible(os.path.dirname(self.target) or '.')} is read-only), then quit"
            for key, what in (("e", export),
                              ("q", f"quit without exporting ({'it stays' if self.n == 1 else 'they stay'} in the "
                                    "workspace)"), ("escape", "stay")):
                keys.append(key, style="bold")
                keys.append(f": {what}   ")
            yield Static(keys)
