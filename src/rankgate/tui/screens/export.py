"""Export the reviewed labels for CI: where to write them."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rankgate.core.text import visible
from rankgate.tui.screens import apply_cursor_blink
from rankgate.tui.screens.prompts import EarlyKeys


class ExportDialog(EarlyKeys, ModalScreen[str | None]):
    BINDINGS = [("escape", "dismiss(None)", "Cancel")]

    def __init__(self, default: str, folder: str | None = None) -> None:
        super().__init__()
        self.default = default
        self.folder = folder  # a browser session: a file name in this folder, nothing else
        self._wait_for_keys()  # the keys typed in one burst with `e` (prompts.EarlyKeys)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text("Export reviewed qrels", style="bold"))
            yield Input(self.default, placeholder="file to write (.jsonl with reasons, or .trec)", id="export-path")
            if self.folder is not None:
                yield Static(Text(f"a file name (no folder) in the server's export folder {visible(self.folder)}",
                                  style="dim"))
            yield Static(Text("The name's extension chooses the format: the qrels file's own keeps its lines "
                              "(a diff shows only the changes; a TREC file gets a version and time header only if "
                              "it had one); .jsonl keeps reasons and reviewers. Enter writes · Escape cancels",
                              style="dim"))

    def on_mount(self) -> None:
        self.set_focus(self.query_one(Input))
        apply_cursor_blink(self)
        self._keys_ready()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value:
            self.dismiss(value)


def raw_qrels(screen) -> str | None:
    """The qrels file the app was opened on when it is no benchmark folder's (`rankgate review QRELS --runs
    ...`): what an export follows (its format and layout) and never replaces. None otherwise."""
    import os

    state = getattr(screen.app, "sync", None)
    if state is not None:
        return str(state.manifest.qrels) if state.raw else None
    loaded = getattr(screen, "loaded", None)
    if loaded is not None and loaded.manifest is not None:
        return None
    path = getattr(screen.model, "labels_file", "")
    return path if path and os.path.isfile(path) else None


def export_folder(screen) -> str | None:
    """A browser session's export folder (tui/serve.py): its exports are plain names written there only."""
    return getattr(getattr(screen.app, "inputs", None), "export_dir", None)


def default_export_path(screen) -> str:
    """A benchmark folder: its own qrels file (a copy in the folder when that file is outside it: never
    replaced from the app). Raw files: `<stem>.reviewed<ext>` beside the qrels file (store.sync.reviewed_path).
    Labels with no qrels file: `<name>-reviewed-qrels.jsonl` in the current folder. Once this session exported
    raw files' labels, the file it wrote. A browser session: a name in the server's export folder."""
    from rankgate.store.sync import reviewed_path

    if export_folder(screen) is not None:
        from rankgate.tui.web_rules import export_name

        return export_name(screen.model.name, screen.model.labels.reviewer)
    state = getattr(screen.app, "sync", None)
    if state is not None and not state.raw:
        return str(state.copy_path or state.manifest.qrels)
    if getattr(screen, "exported_to", None) is not None:  # raw files: where this session exported last (a
        return str(screen.exported_to)  # reference folder can be read-only: the expert named another file)
    qrels = raw_qrels(screen)
    if qrels is not None:
        return str(reviewed_path(qrels))
    name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in screen.model.name) or "labels"
    return str(Path.cwd() / f"{name}-reviewed-qrels.jsonl")


def elsewhere_if_read_only(path: str) -> str | None:
    """The same file name in the current folder when `path` could not be written (its file or folder has no write
    bit: a shared data folder); None when it can be. What `e` proposes and quitting exports to then."""
    import os

    from rankgate.tui.screens.sync import read_only_place

    return os.path.join(os.getcwd(), os.path.basename(path)) if read_only_place(path) else None


def export_to(screen, path: str):
    """Write the reviewed labels (ReviewScreen.export_to); returns what was written (tui.labels.Exported) or
    None, having said why in a notice."""
    folder = export_folder(screen)
    if folder is not None:  # a browser session: a plain file name in the server's export folder, nothing else
        from rankgate.core.errors import InputError
        from rankgate.tui.web_rules import export_target

        try:
            path = str(export_target(folder, path))
        except InputError as e:
            screen.notify(f"export refused: {e.what}", severity="error", markup=False, timeout=10)
            return None
        return _say_exported(screen, _export_into(screen, folder, Path(path).name))
    return _say_exported(screen, _export(screen, path))


def _export_into(screen, folder: str, name: str):
    """A browser session's export: written in a private folder first, then placed in the export folder as a
    new file through a handle on that folder (store.storage.publish_new), so a folder swapped for a link after
    export_target checked it is refused, not written through. None, having said why, when it fails."""
    import dataclasses
    import os
    import tempfile

    from rankgate.core.errors import InputError
    from rankgate.store.storage import publish_new

    from rankgate.store.transfer.export import notes_path

    with tempfile.TemporaryDirectory(prefix="rankgate-export-") as private:
        done = _export(screen, os.path.join(private, name))
        if done is None:
            return None
        try:
            placed = publish_new(folder, name, Path(done.path))
        except InputError as e:
            screen.notify(f"export refused: {visible(str(e))}", severity="error", markup=False, timeout=10)
            return None
        moved = getattr(screen.model.labels.backend, "export_moved", None)
        if moved is not None:  # the record of the last export names the placed file (the reminder counts from it)
            moved(Path(done.path), placed)
        sidecar = notes_path(done.path)
        notes = list(done.notes)
        if sidecar.is_file():  # the queries' notes written beside the export (store.sync.export_reviewed): placed too
            try:
                publish_new(folder, sidecar.name, sidecar)
            except InputError as e:
                notes = [n for n in notes if sidecar.name not in n]
                notes.append(f"the queries' notes were not placed beside it: {visible(str(e))}")
        for here in dict.fromkeys((private, os.path.realpath(private))):  # the notes name the placed files
            notes = [n.replace(here + os.sep, str(placed.parent) + os.sep) for n in notes]
        return dataclasses.replace(done, path=placed, notes=notes)


def _export(screen, path: str):
    """Write the labels to `path` (see export_to); what was written, or None having said why."""
    from rankgate.tui.labels import Exported

    fmt = "trec" if Path(path).suffix in (".trec", ".txt", ".qrels") else "jsonl"
    state = getattr(screen.app, "sync", None)
    target = Path(path).expanduser().resolve()
    try:
        if state is not None and not state.raw and target == Path(state.manifest.qrels).resolve():
            out = state.export()  # back to the folder's qrels file, in its own format, for `rankgate gate`
            done = Exported(Path(state.manifest.qrels).resolve(), out.labels, out.format, list(out.notes))
            screen.refresh_top()
        elif state is not None and state.copy_path is not None and not state.raw and \
                target == state.copy_path.resolve():
            out, copy = state.export_copy()  # in the outside file's own format
            done = Exported(copy.resolve(), out.labels, out.format, list(out.notes) + [
                f"a copy: `rankgate gate` reads {state.manifest.qrels} until benchmark.toml names {copy.name}"])
        else:  # raw files: the qrels file's own format and layout, never the file itself
            done = screen.model.labels.export(Path(path).expanduser(), fmt, like=raw_qrels(screen))
    except Exception as e:  # say where to name another file: the notice is all the expert sees
        screen.notify(f"export failed: {e}; e on the panes (Escape from the judging screen) exports to a file "
                      "you name", severity="error", markup=False, timeout=12)
        return None
    return done


def _say_exported(screen, done):
    if done is None:
        return None
    screen.exported_to = done.path
    note = "".join(f"\nnote: {n}" for n in done.notes)
    screen.notify(f"wrote {done.labels} label{'' if done.labels == 1 else 's'} "
                  f"({done.format}) to {done.path}{note}", title="exported", markup=False, timeout=10)
    return done
