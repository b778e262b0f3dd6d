"""Every path of the label store in one place.

The data folder is `platformdirs.user_data_path("rankgate")`; the environment
variable `RANKGATE_HOME` moves it (the test suite points it at a temporary
folder, so nothing touches the real home). Folders the store creates are
readable by their owner only (0700); so are its files (0600).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

ENV_HOME = "RANKGATE_HOME"
DIR_MODE = 0o700
FILE_MODE = 0o600
DEFAULT_WORKSPACE = "default"

# Files that live beside a workspace file `<db>`: `<db><suffix>`.
JOURNAL = ".journal"  # append-only edits since the last snapshot
JOURNAL_PREV = ".journal.prev"  # the journal folded into the snapshot before the current one
HISTORY = ".history"  # the history of changes (a TinyDB file of its own)
LOCK = ".lock"  # the writer's lock; holds the holder's pid, host and user
BACKUP = ".bak"  # the snapshot before the current one
SYNC = ".sync"  # the last import or export to the benchmark's qrels file (store/sync.py)
EXPORTED = ".sync-exported"  # the labels the last export to a file of a store of no benchmark wrote (store/sync.py)


def data_dir(create: bool = True) -> Path:
    """The folder that holds rankgate's own data."""
    home = os.environ.get(ENV_HOME)
    if home:
        path = Path(home).expanduser()
    else:
        path = _xdg_data_dir()
        if path is None:
            import platformdirs

            path = Path(platformdirs.user_data_path("rankgate"))
    if create:
        make_private_dir(path)
    return path


def _xdg_data_dir() -> Path | None:
    """platformdirs.user_data_path("rankgate") on Linux where every version of platformdirs agrees on it (an
    absolute $XDG_DATA_HOME, else an absolute $HOME's ~/.local/share), found without importing platformdirs
    (with its tempfile, shutil and random: about 6% of `gate` on a small benchmark); None elsewhere (another
    system, Android, a relative or blank $XDG_DATA_HOME, no absolute $HOME), where platformdirs decides.
    tests/store/test_workspace.py compares the two."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in os.environ:
        return None
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if xdg:
        return Path(xdg, "rankgate") if xdg.startswith("/") else None
    if not os.environ.get("HOME", "").startswith("/"):
        return None
    return Path(os.path.expanduser("~/.local/share"), "rankgate")


def workspace_dir(create: bool = True) -> Path:
    path = data_dir(create) / "workspaces"
    if create:
        make_private_dir(path)
    return path


def trusted_judges_path(create: bool = True) -> Path:
    """The judges from benchmark folders the user agreed to run (store/trust.py)."""
    return data_dir(create) / "trusted-judges.json"


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def workspace_file_name(name: str) -> str:
    """A file name for a workspace name; names that need changing get a short hash to stay distinct."""
    slug = _SAFE.sub("-", name).strip(".-") or "workspace"
    if slug != name:
        slug += "-" + sha256_hex(name.encode("utf-8"))[:8]
    return slug + ".json"


def workspace_path(name: str = DEFAULT_WORKSPACE, create: bool = True) -> Path:
    """The workspace file of a benchmark (by its name) or the default workspace."""
    return workspace_dir(create) / workspace_file_name(name)


def qrels_workspace_path(qrels: str | os.PathLike, create: bool = True) -> Path:
    """The workspace of the app opened on a qrels file (`rankgate review QRELS --runs ...` without --db):
    named after the file's resolved path (a link, or a folder reached through one, leads to the same file and
    the same workspace), as tui/store_backend.py opens it. One named after the path as typed, by an older
    rankgate, is still found."""
    typed = os.path.abspath(os.fspath(qrels))
    real = workspace_path(os.path.realpath(typed), create)
    if real.exists() or typed == os.path.realpath(typed):
        return real
    old = workspace_path(typed, create=False)
    return old if old.exists() else real


def folder_key(folder: str | os.PathLike) -> str:
    """8 hex digits of the hash of a folder's resolved path: copies and clones of a benchmark differ."""
    resolved = os.path.realpath(os.path.abspath(os.fspath(folder)))
    return sha256_hex(resolved.encode("utf-8", "surrogateescape"))[:8]


def sha256_hex(data: bytes) -> str:
    """hashlib.sha256(data).hexdigest() from Python's own SHA-256 where it has one: hashlib starts OpenSSL's
    (about 2% of `gate` on a small benchmark, for the 8 digits of a path's key). The same digest either way."""
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:  # built without them: OpenSSL's
            from hashlib import sha256
    return sha256(data).hexdigest()


def benchmark_workspace_path(name: str, folder: str | os.PathLike, create: bool = True) -> Path:
    """The workspace file of a benchmark folder: `<name>-<folder_key>.json`, keyed by the benchmark's
    name and the folder's resolved path (store/sync.py finds a workspace again after the folder moved)."""
    stem = workspace_file_name(name)[: -len(".json")]
    return workspace_dir(create) / f"{stem}-{folder_key(folder)}.json"


def reviewer_workspace_path(source: str | os.PathLike, reviewer: str, create: bool = True) -> Path:
    """A reviewer's own workspace for a benchmark folder or qrels file (the browser face: one per reviewer,
    so experts label at once; `rankgate labels merge` brings them together)."""
    stem = workspace_file_name(f"web-{reviewer}")[: -len(".json")]
    return workspace_dir(create) / f"{stem}-{folder_key(source)}.json"


def sidecar(db: str | os.PathLike, suffix: str) -> Path:
    """A file beside the workspace file: `<db><suffix>`."""
    db = Path(db)
    return db.with_name(db.name + suffix)


STORE_SUFFIXES = (JOURNAL, HISTORY, LOCK, BACKUP, SYNC)  # every sidecar name starts with one of these


def is_store_file(db: str | os.PathLike, target: str | os.PathLike) -> bool:
    """Whether writing `target` would replace the store `db` itself or one of its own files (its journal,
    history, lock, backups, sync record, or a file set aside by a recovery). Both paths resolved."""
    real_db = Path(os.path.realpath(db))
    real = Path(os.path.realpath(target))
    if real == real_db:
        return True
    if real.parent != real_db.parent:
        return False
    if real.name.startswith(f".{real_db.name}") and ".tmp-" in real.name:  # a writer's temporary files
        return True
    return real.name.startswith(real_db.name) and any(real.name[len(real_db.name):].startswith(s)
                                                      for s in STORE_SUFFIXES)


def make_private_dir(path: Path) -> None:
    """Create a folder (and its parents) readable by its owner only; leave existing folders alone."""
    if path.is_dir():
        return
    parent = path.parent
    if parent != path and not parent.exists():
        make_private_dir(parent)
    try:
        path.mkdir(mode=DIR_MODE)
    except FileExistsError:
        return
    os.chmod(path, DIR_MODE)
