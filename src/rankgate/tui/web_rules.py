"""The browser face's rules that need no app and no server: which hosts are this machine, the web font link
the page drops, which reviewer names a session may type, and where a session's export may go. Kept apart so
that the server (tui/serve.py, tui/webguard.py), the app and its export dialog share them without importing
each other."""

from __future__ import annotations

import ipaddress
import re

from rankgate.core.errors import InputError
from rankgate.core.text import visible

LOOPBACK = {"localhost"}


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


FONT_LINK = re.compile(rb'<link[^>]*href="https://fonts\.googleapis\.com[^"]*"[^>]*>', re.S)


def reviewer_problem(name: str) -> str:
    """Why a reviewer name typed in the browser face is refused ("" when it is accepted)."""
    name = name.strip()
    if not name:
        return "type a name"
    if len(name) > 64:
        return "at most 64 characters"
    if visible(name) != name:
        return "letters, digits, spaces and punctuation only (no control characters)"
    return ""


EXPORT_SUFFIXES = (".jsonl", ".trec", ".txt", ".qrels")
EXPORT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def export_name(benchmark: str, reviewer: str) -> str:
    """The file name a browser session's export is offered under: benchmark, reviewer, time."""
    import time

    def part(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:40] or "x"

    return f"{part(benchmark)}-{part(reviewer)}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"


def check_export_folder(folder: str) -> None:
    """The export folder is a real folder (or not there yet): an `exports` that is a symbolic link (planted in
    the benchmark folder, say) would send the browser's files wherever it points. An InputError otherwise."""
    import os

    if os.path.islink(folder):
        raise InputError(visible(folder), f"the export folder is a symbolic link (to {visible(os.readlink(folder))}):"
                         " exports from the browser go only into a real folder; remove the link, or name a folder "
                         "with --export-dir")


def export_target(folder: str, name: str):
    """The file a browser session may write: `name` is a plain file name (no folder, no `..`, no hidden
    file) with a qrels suffix, in `folder`, and nothing there yet (no file, link or folder of that name).
    An InputError says why otherwise."""
    from pathlib import Path

    name = name.strip()
    if not EXPORT_NAME.fullmatch(name) or ".." in name:
        raise InputError(visible(name), "from the browser, export takes a file name only (letters, digits, "
                         ". _ -; no folder): it is written into the server's export folder")
    if not name.endswith(EXPORT_SUFFIXES):
        raise InputError(name, "a name ending in .jsonl (grades with reasons), .trec, .txt or .qrels")
    base = Path(folder)
    check_export_folder(str(base))  # a link put there after the server started: refused here too
    base.mkdir(parents=True, exist_ok=True)
    target = base / name
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise InputError(name, "is a link or not a regular file in the export folder; choose another name")
    if target.exists():  # another reviewer's export, or the lead's file when --export-dir is the benchmark
        raise InputError(name, "already exists in the export folder: an export from the browser never "
                         "replaces a file; choose another name")
    if target.resolve().parent != base.resolve():
        raise InputError(name, "would leave the export folder")
    return target
