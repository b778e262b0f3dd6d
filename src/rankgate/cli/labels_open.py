"""How a `rankgate labels` command finds and opens its workspace: a benchmark folder (made or not yet made), a
--db file, or a qrels file named where a folder goes. Shared by cli/labels.py and cli/suggest.py."""

from __future__ import annotations

import os

from rankgate.cli.base import say, shell
from rankgate.core.errors import InputError


def _open(args, readonly: bool, on_conflict: str = "stop", blind: bool = False, make: bool = False, texts=None):
    """The workspace the arguments name. A read-only command on a benchmark folder with no workspace yet
    reads the folder's labels and makes nothing, unless `make` (it writes beside the workspace: an export
    back records the sync, `labels suggest` keeps suggestions). `texts`: for a benchmark's first import
    (Workspace.open_benchmark)."""
    from rankgate.store import Workspace, sync

    if args.benchmark:
        _refuse_qrels_file(args.benchmark, getattr(args, "labels_command", None))
        if readonly:
            from rankgate.core.benchmark import load_manifest

            manifest = load_manifest(args.benchmark)
            located = sync.locate(manifest, create=False) if not args.db else None
            if args.db is None and located.adopt_from is None and not _exists(located.path) and not make:
                ws = _unmade_workspace(manifest, args, blind)  # read from the folder's qrels; nothing is made
                ws.located = located.note
                args.workspace_path = str(located.path)
                if ws.located:
                    _note(ws.located)
                return ws
            if args.db is None and (located.adopt_from is not None or not _exists(located.path)):
                # a moved folder's workspace is adopted (renamed to the folder's key), or made: that one writes
                Workspace.open_benchmark(manifest, reviewer=args.reviewer, path=args.db).close()
            elif args.db and not _exists(args.db):
                Workspace.open_benchmark(manifest, reviewer=args.reviewer, path=args.db).close()
            ws = Workspace.open_benchmark(manifest, readonly=True, reviewer=args.reviewer, path=args.db,
                                          blind=blind)
            if args.db is None and _import_unfinished(ws):  # never compared or exported as holding no label
                ws.close()
                if not make:  # read as a folder with no workspace yet: the next open for writing imports again
                    _note("the workspace's first import never finished (the process that made it was stopped): "
                          f"the next `rankgate review {shell(manifest.folder)}` imports the folder's labels again; "
                          "shown here as that import will hold them")
                    ws = _unmade_workspace(manifest, args, blind)
                    args.workspace_path = str(located.path)
                    return ws
                Workspace.open_benchmark(manifest, reviewer=args.reviewer).close()  # the import, finished now
                ws = Workspace.open_benchmark(manifest, readonly=True, reviewer=args.reviewer, blind=blind)
            if located is not None and located.note:
                ws.located = located.note
        else:
            ws = Workspace.open_benchmark(args.benchmark, reviewer=args.reviewer, path=args.db,
                                          on_conflict=on_conflict, blind=blind, texts=texts)
        if ws.located:
            _note(ws.located)
        args.workspace_path = str(ws.path)  # its errors name it; _in_user_words names the command instead
        return ws
    return Workspace.open(args.db, readonly=readonly, reviewer=args.reviewer, blind=blind)


def _import_unfinished(ws) -> bool:
    """A benchmark's workspace whose files were made but whose first import was never journaled (a process
    stopped between the two): no benchmark named, no event. Compared with the folder's file, all its labels
    would look removed, and an export would write none of them."""
    return not ws._meta.get("benchmark") and ws._next_event == 1 and not ws._pending


def _unmade_workspace(manifest, args, blind: bool):
    """A read-only command on a benchmark folder that has no workspace yet: the folder's labels, imported into a
    workspace in a temporary folder that is removed when it closes, so the command shows what the first open
    would hold and creates nothing (`unmade` is where the workspace will be)."""
    import shutil
    import tempfile
    from pathlib import Path

    from rankgate.store import Workspace, paths

    scratch = Path(tempfile.mkdtemp(prefix="rankgate-read-"))
    try:
        path = scratch / paths.benchmark_workspace_path(manifest.name, manifest.folder, create=False).name
        Workspace.open_benchmark(manifest, reviewer=args.reviewer, path=path).close()
        ws = Workspace.open_benchmark(manifest, readonly=True, reviewer=args.reviewer, path=path, blind=blind)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    close = ws.close

    def close_and_remove() -> None:
        try:
            close()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    ws.close = close_and_remove
    ws.unmade = paths.benchmark_workspace_path(manifest.name, manifest.folder, create=False)
    return ws


def _qrels_file(path) -> bool:
    """A qrels file named where a benchmark folder goes (a file that is not TOML and holds judgments)."""
    from rankgate.core.formats.sniff import holds_judgments

    return os.path.isfile(path) and not str(path).lower().endswith(".toml") and holds_judgments(path)


def _app_workspace_line(path) -> str:
    """Where the app keeps the labels of a qrels file, and how `labels` commands reach them."""
    from shlex import quote


    ws = _qrels_workspace(path)
    if ws is not None:
        return (f"the app's workspace for it (`rankgate review {quote(str(path))} --runs ...`) is {ws}: pass "
                f"--db {quote(str(ws))}")
    return (f"`rankgate review {quote(str(path))} --runs ...` has made no workspace for it yet; to keep its labels "
            f"in a store, `rankgate labels import --db WORK.json {quote(str(path))}`, then pass --db WORK.json")


def _qrels_workspace(path):
    """The workspace `rankgate review QRELS` opens for a qrels file: its own, or the benchmark folder's whose
    qrels it is (store.sync.benchmark_workspace_of); None: none yet."""
    from rankgate.store import paths, sync

    own = paths.qrels_workspace_path(path, create=False)
    return own if own.exists() else sync.benchmark_workspace_of(path)


def _refuse_qrels_file(path, command: str | None = None) -> None:
    """A qrels file or a label store named where a benchmark folder goes: one line saying what to pass."""
    if _qrels_file(path):
        raise InputError(str(path), f"is a qrels file, not a benchmark folder; {_app_workspace_line(path)}")
    if _label_store(path):
        raise InputError(str(path), f"is a label store, not a benchmark folder: give it with --db, as in "
                         f"`rankgate labels {command or 'SUBCOMMAND'} --db {shell(path)}`")


def _label_store(path) -> bool:
    """A file that starts as rankgate's label store (its snapshot) does."""
    from rankgate.store.transfer.export import STORE_HEADS

    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as f:
            return f.read(64).startswith(STORE_HEADS[:2])  # a snapshot, sealed (format 5) or not
    except OSError:
        return False


def _exists(path) -> bool:
    import os

    return os.path.exists(path)


def _note(text: str) -> None:
    say(f"note: {text}", err=True)


def _bench_positional(args) -> None:
    if getattr(args, "bench", None):
        if args.benchmark and args.benchmark != args.bench:
            raise InputError("labels", "name the benchmark folder once (BENCH or -b FOLDER)")
        args.benchmark = args.bench
