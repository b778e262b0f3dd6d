"""Durable storage under the workspace: atomic snapshots, an fsynced journal, a writer lock.

TinyDB's own JSONStorage rewrites its file in place (a crash mid-write leaves
an unreadable file) and re-serialises everything on every write. Here:

- `SnapshotStorage` is a TinyDB `Storage` that reads a TinyDB JSON file and
  writes it by atomic replace: temporary file, fsync, `os.replace`, fsync of
  the folder. A reader sees the old file or the new one, never half of one.
- `Journal` is an append-only file of edits, one framed record a line (its
  CRC-32 and length, then its JSON), fsynced before the edit is acknowledged.
  A torn last record (fewer bytes than its length says and no newline: the
  process died while writing it, so it was never acknowledged) is ignored; a
  record whose checksum fails is damage, reported, and the records after it are
  found again by its length or the next newline (`scan_journal`). Its header
  names its generation, which the snapshot records, and each record its
  workspace (a record of another workspace's journal is named, never replayed).
- A snapshot carries a CRC-32 of its own bytes (`seal`, `check_seal`), so a
  flipped digit inside a grade is found, not read as a label.
- `WriterLock` is an exclusive `flock` on `<db>.lock` that names its holder,
  opened with O_NOFOLLOW (a symlinked lock is refused, its target untouched).
- `resolve_db` and `read_regular`: the store's files are regular files, found
  through symlinks to the real one; devices, FIFOs and sockets are refused.

Nothing here knows what a judgment is; `workspace.py` does.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import getpass
import json
import os
import re
import secrets
import stat
import shutil
import signal
import socket
import sys
import zlib
from pathlib import Path
from typing import Any, Iterable

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

from tinydb.storages import Storage

from rankgate.core.errors import InputError
from rankgate.core.outfile import file_kind
from rankgate.store.paths import FILE_MODE

JOURNAL_MAGIC = "rankgate-journal"
JOURNAL_VERSION = 3  # 3: each record names its workspace (`ws`: the workspace id), so one copied from another
# workspace's journal is never replayed as ours; 2: each record framed with its length (`encode_record`); 1: "crc32
# json" lines. 1 and 2 are still read, and rewritten as 3 by the first edit.
OWNER = "ws"  # a version 3 record's field: the id of the workspace whose journal it was written in
SEAL = b'{"meta":{"1":{"checksum":"'  # how a sealed snapshot starts; 8 hex digits of CRC-32 follow
UNSEALED = b"00000000"  # the checksum's digits while it is computed
CRASHPOINT_ENV = "RANKGATE_CRASHPOINT"


class DamagedFile(InputError):
    """A store file that cannot be read back: invalid JSON, cut short, or not ours."""


class NewerFormat(DamagedFile):
    """A store file written by a newer rankgate: not damage, so never moved aside or rebuilt from an older copy."""


def crashpoint(name: str) -> None:
    """Kill this process at a named point, when a crash test asks for it (no-op otherwise)."""
    if os.environ.get(CRASHPOINT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


# No check for circular containers: what the store writes is built by its own code (dicts, lists, strings,
# numbers), never circular; the check kept a dict of every container's id while encoding (about a quarter
# of the time: a first open's journal record of 80,000 labels, 12 MB, and every fold). The bytes are the same.
_ENCODER = json.JSONEncoder(separators=(",", ":"), check_circular=False)


def dumps(obj: Any) -> str:
    """Compact, ASCII-only JSON: any string (even a lone surrogate) writes and reads back."""
    return _ENCODER.encode(obj)


def now_iso() -> str:
    """UTC time with milliseconds, e.g. 2025-06-01T12:00:00.123Z."""
    t = _dt.datetime.now(_dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _sync(fd: int) -> None:
    if hasattr(fcntl, "F_FULLFSYNC"):  # macOS: fsync alone does not reach the platter
        try:
            fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
            return
        except OSError:
            pass
    if hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:
        os.fsync(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in `path` durable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _tmp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def remove_stale_temps(db: Path) -> None:
    """Temporary files a killed writer left beside the workspace (`.<db>*.tmp-*`).

    Only called while holding the writer lock: no live writer can own them, and the
    files they were to replace are intact (the rename never happened)."""
    prefix = f".{db.name}"
    for p in db.parent.glob(f"{glob_escape(prefix)}*.tmp-*"):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def glob_escape(text: str) -> str:
    import glob

    return glob.escape(text)


class Locked(InputError):
    """Another process holds the workspace's writer lock (readers can still open it)."""


def _io_error(path: Path, action: str, e: OSError) -> InputError:
    reason = e.strerror or str(e)
    if e.errno == errno.ENOSPC:
        reason = "the disk is full"
    elif e.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    elif e.errno == errno.EROFS:
        reason = "the file system is read-only"
    elif e.errno == errno.ENOENT and not path.parent.is_dir():  # a new file in a folder that is not there
        reason = f"its folder {path.parent} does not exist"
    return InputError(str(path), f"cannot {action} ({reason})")


def resolve_db(path: str | os.PathLike) -> Path:
    """The real file behind a store path: symlinks resolved (so that its journal and lock live beside the real
    file, and two writers through a link and the real path exclude each other). A path that exists and is not
    a regular file (a device such as /dev/null, a FIFO, a socket) is refused before anything is opened; a
    folder is left for the caller to explain."""
    real = Path(os.path.realpath(os.path.abspath(os.fspath(path))))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except NotADirectoryError:
        raise InputError(str(path), "goes through a file that is not a folder; expected a label store file "
                         "path") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(str(path), "is a loop of symbolic links; expected a label store file") from None
        raise _io_error(Path(path), "open the label store", e) from None
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        raise InputError(str(path), f"is {file_kind(st.st_mode)}, expected a label store file; nothing was opened or "
                         "written (name a regular file with --db)")
    return real


def read_regular(path: Path) -> bytes | None:
    """A store file's bytes (None when it does not exist), refusing anything but a regular file up front:
    a FIFO would block the read, a device would never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InputError(str(path), "is a folder, expected a label store file") from None
    except OSError as e:
        raise _io_error(path, "read", e) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(str(path), f"is {file_kind(mode)}, expected one of the label store's files")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        raise _io_error(path, "read", e) from None
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, chunks: bytes | Iterable[bytes], *, sync: bool = True,
                 output: bool = False) -> int:
    """Replace `path` with new contents, all or nothing; returns the size written.

    The new file is written beside the old one (owner-only permissions), fsynced,
    renamed over it, and the folder is fsynced so the rename survives a crash.
    A path that exists and is not a regular file is refused (a named pipe too); with `output`, a character
    device (`-o /dev/null`) is written into instead (no rename).
    `output`: a file for the user (an export): a symlink's target is written (the link
    stays), an existing file keeps its mode, a new one gets the usual (umask) mode.
    """
    from rankgate.core.outfile import is_stream, output_target, refuse_special, write_stream

    mode: int | None = None
    if output and is_stream(path):  # an export to /dev/null (a character device): written into, not replaced
        return write_stream(path, chunks)
    if output:
        path, mode = output_target(path)
    else:
        path = Path(path)
        refuse_special(path)
    tmp = _tmp_name(path)
    size = 0
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if output else FILE_MODE)
    except OSError as e:
        raise _io_error(path, "write", e) from None
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            for chunk in [chunks] if isinstance(chunks, (bytes, bytearray)) else chunks:
                _write_all(fd, chunk)
                size += len(chunk)
            if sync:
                _sync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        _unlink_quietly(tmp)
        raise _io_error(path, "write", e) from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    if sync:
        fsync_dir(path.parent)
    return size


def publish_new(folder: str | os.PathLike, name: str, src: Path) -> Path:
    """Place a copy of `src` in `folder` as the new file `name`, all or nothing, and return its path.

    The folder is opened once without following a link, and the file is made through that handle: a folder
    swapped for a link after it was checked is refused, not written through (the browser's exports). The
    copy is written under a temporary name, fsynced, then linked to `name`, which fails if anything of that
    name appeared meanwhile: a file is never replaced."""
    path = Path(os.path.realpath(folder)) / name
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise InputError(str(folder), "is a link or not a folder: exports go only into a real folder; "
                             "nothing was written") from None
        raise _io_error(path, "write", e) from None
    tmp = _tmp_name(Path(name)).name
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=dir_fd)
        except OSError as e:
            raise _io_error(path, "write", e) from None
        try:
            try:
                with open(src, "rb") as f:
                    while chunk := f.read(1 << 20):
                        _write_all(fd, chunk)
                _sync(fd)
            finally:
                os.close(fd)
            os.link(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            raise InputError(name, "appeared in the export folder meanwhile: an export never replaces a file; "
                             "choose another name") from None
        except OSError as e:
            raise _io_error(path, "write", e) from None
        finally:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def keep_copy(src: Path, dst: Path, *, link: bool = True) -> bool:
    """Make `dst` hold what `src` holds now, atomically: a hard link (a copy where links fail).

    Used just before `src` is replaced, so `dst` keeps the last good version
    (after the replace they are different files). When `src` stays in place,
    pass `link=False`: a copy, so that damage to one is not damage to both.
    Returns False when there is no `src` to keep.
    """
    if not src.exists():
        return False
    tmp = _tmp_name(dst)
    try:
        if not link:
            raise OSError("copy asked for")
        os.link(src, tmp)
    except OSError:
        try:
            shutil.copyfile(src, tmp)
            os.chmod(tmp, FILE_MODE)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                _sync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            _unlink_quietly(tmp)
            raise _io_error(dst, "keep a backup copy", e) from None
    try:
        os.replace(tmp, dst)
    except OSError as e:
        _unlink_quietly(tmp)
        raise _io_error(dst, "keep a backup copy", e) from None
    # When dst already was a link to src (a kill came between this and src's replace last time),
    # rename(2) of one link over another of the same file does nothing and leaves tmp behind.
    _unlink_quietly(tmp)
    return True


def move_aside(path: Path, label: str) -> Path | None:
    """Rename a damaged file out of the way (never delete it); returns the new name."""
    if not path.exists():
        return None
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    os.replace(path, target)
    fsync_dir(path.parent)
    return target


# --------------------------------------------------------------------------- snapshots


class SnapshotStorage(Storage):
    """A TinyDB storage for a JSON file, written by atomic replace (never in place).

    Usable on its own with TinyDB (`TinyDB(path, storage=SnapshotStorage)`); the
    workspace calls `read` once on open and `write` once per fold.
    """

    def __init__(self, path: str | os.PathLike, access_mode: str = "r+", **_ignored) -> None:
        super().__init__()
        self.path = Path(path)
        self.access_mode = access_mode
        self.size = 0  # bytes of the file last read or written
        self.open_crc: int | None = None  # after append_docs: CRC-32 of the file but its closing braces

    def read_bytes(self) -> bytes | None:
        data = read_regular(self.path)
        if data is None:
            return None
        self.size = len(data)
        return data

    def read(self) -> dict[str, dict[str, Any]] | None:
        data = self.read_bytes()
        if not data:
            return None
        return parse_tables(self.path, data)

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        """Write the file by atomic replace; a file with a meta document (a label store's snapshot) is sealed."""
        if self.access_mode == "r":
            raise InputError(str(self.path), "opened read-only")
        meta = data.get("meta", {}).get("1")
        if isinstance(meta, dict):
            data = dict(meta={"1": {"checksum": UNSEALED.decode(), **{k: v for k, v in meta.items()
                                                                      if k != "checksum"}}},
                        **{k: v for k, v in data.items() if k != "meta"})
            self.size = atomic_write(self.path, seal(dumps(data).encode("ascii")))
        else:
            self.size = atomic_write(self.path, dumps(data).encode("ascii"))

    def append_docs(self, table: str, docs: list[tuple[int, dict]], expected_size: int,
                    backup: Path | None = None, open_crc: int | None = None) -> int | None:
        """Add documents at the end of a one-table file without parsing it; returns the new size.

        The file must be exactly as this storage last wrote it: `{"<table>":{...}}`
        of `expected_size` bytes. Otherwise returns None and the caller rewrites it whole.
        The new file replaces the old atomically; `backup` keeps the old one.
        `open_crc`: the CRC-32 of the file but its closing braces, as last written (None: read it); the new
        file's is left in `self.open_crc`, without reading what was there.
        """
        if self.access_mode == "r":
            raise InputError(str(self.path), "opened read-only")
        self.open_crc = None
        empty = f'{{"{table}":{{}}}}'.encode("ascii")
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        if st.st_size != expected_size or expected_size < len(empty):
            return None
        with open(self.path, "rb") as f:
            head = f.read(len(empty) - 2)
            f.seek(-2, os.SEEK_END)
            tail = f.read(2)
            f.seek(0)
            whole_empty = st.st_size == len(empty) and f.read() == empty
        if head != empty[:-2] or tail != b"}}":
            return None
        if open_crc is None:
            open_crc = _file_crc(self.path, st.st_size - 2)
        self.open_crc = open_crc
        body = dumps({str(i): doc for i, doc in docs})[1:-1].encode("ascii")  # one encoder call, not one per doc
        if not body:
            return st.st_size
        if backup is not None:
            keep_copy(self.path, backup)
        tmp = _tmp_name(self.path)
        try:
            shutil.copyfile(self.path, tmp)
            os.chmod(tmp, FILE_MODE)
            added = (b"" if whole_empty else b",") + body
            with open(tmp, "r+b") as f:
                f.seek(-2, os.SEEK_END)
                f.write(added + b"}}")
                f.truncate()
                f.flush()
                _sync(f.fileno())
                size = f.tell()
            os.replace(tmp, self.path)
        except OSError as e:
            _unlink_quietly(tmp)
            raise _io_error(self.path, "write", e) from None
        fsync_dir(self.path.parent)
        self.size = size
        self.open_crc = zlib.crc32(added, open_crc)
        return size


def _file_crc(path: Path, length: int) -> int:
    """CRC-32 of a file's first `length` bytes, read in blocks."""
    crc = 0
    with open(path, "rb") as f:
        while length > 0:
            block = f.read(min(length, 1 << 20))
            if not block:
                break
            crc = zlib.crc32(block, crc)
            length -= len(block)
    return crc


def history_matches(raw: bytes, meta: dict | None) -> bool:
    """Whether a history file's bytes are what the snapshot's fold wrote (its meta's `history_crc`: CRC-32 of
    the file but its closing braces). A file of another size was rewritten or appended to since (a fold killed
    before its snapshot): not judged here (True)."""
    crc, n = (meta or {}).get("history_crc"), (meta or {}).get("history_bytes")
    if not isinstance(crc, int) or not isinstance(n, int) or n < 2 or len(raw) != n:
        return True
    return zlib.crc32(raw[:n - 2]) == crc


def _crc_unsealed(data: bytes) -> int:
    n = len(SEAL)
    return zlib.crc32(data[n + 8:], zlib.crc32(UNSEALED, zlib.crc32(data[:n])))


def seal(data: bytes) -> bytes:
    """A snapshot's bytes with its CRC-32 (computed with the digits as zeros) written into its meta."""
    assert data.startswith(SEAL + UNSEALED)
    n = len(SEAL)
    return data[:n] + b"%08x" % _crc_unsealed(data) + data[n + 8:]


def check_seal(path: Path, data: bytes) -> bool:
    """Whether the snapshot is sealed (False: written before seals); a seal that does not match its bytes
    is damage (a flipped bit that still parses: a grade, a reason, a count)."""
    n = len(SEAL)
    if not data.startswith(SEAL):
        return False
    try:
        want = int(data[n:n + 8], 16)
    except ValueError:
        want = -1
    if data[n + 8:n + 9] != b'"' or want != _crc_unsealed(data):
        raise DamagedFile(str(path), "its checksum does not match its contents (changed or damaged on disk)")
    return True


def parse_tables(path: Path, data: bytes) -> dict[str, dict[str, Any]]:
    """TinyDB's layout: {table: {doc_id: document}}; anything else is a damaged file."""
    try:
        tables = json.loads(data)
    except (ValueError, RecursionError) as e:
        where = ""
        if isinstance(e, json.JSONDecodeError):
            where = f" at line {e.lineno} column {e.colno}"
            if data.lstrip().startswith(b"{") and not data.rstrip().endswith(b"}"):
                raise DamagedFile(str(path), f"cut short after {len(data)} bytes (invalid JSON{where})") from None
        raise DamagedFile(str(path), f"invalid JSON{where}") from None
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        raise DamagedFile(str(path), "not a TinyDB file (expected an object of tables)")
    return tables


# --------------------------------------------------------------------------- journal


@dataclass
class Damage:
    """A stretch of a journal that holds no good record: where it is, and what it still shows."""
    offset: int  # bytes from the start of the file
    end: int
    line: int  # the line it starts on (1: the header)
    seqs: tuple[int, ...] = ()  # the edit numbers its bytes still show (unreliable: for the message)
    held: str = ""  # what it seems to have held, when its bytes are readable
    whole: bool = False  # its checksum holds, but it is no edit (a `ws` that is no text, ops of the wrong shape)

    def describe(self, path) -> str:
        what = f"bytes {self.offset}-{self.end} of {Path(path).name} (line {self.line}) are damaged"
        return what + (f": {self.held}" if self.held else "")


@dataclass
class JournalContents:
    base: int  # the snapshot sequence number this journal continues from
    workspace_id: str
    records: list[dict]  # the good (checksummed) records, in order, those after a damaged stretch too
    good_size: int  # bytes up to the end of the last good record before any damage
    torn: int  # bytes of a torn last record (0 when none)
    damage: str | None = None  # the first damaged stretch: what and where
    damage_line: int | None = None
    gen: str | None = None  # the journal's generation (None: written before generations existed)
    damaged_ids: tuple[int, int] = (0, 0)  # the highest edit and event ids a damaged record seems to hold
    version: int = JOURNAL_VERSION
    damaged: list[Damage] = None  # every damaged stretch
    header_damaged: bool = False  # (salvage only) the header could not be read: base, workspace, gen unknown
    tail_damaged: bool = False  # damage runs to the end of the file: edits after the last good record may be lost
    foreign: list[Foreign] = None  # good records of another workspace's journal (left out of `records`)


@dataclass
class Foreign:
    """A record whose checksum holds but that another workspace's journal wrote (copied in): never replayed."""
    line: int
    seq: int
    owner: str  # the workspace id it names ("" when it names none, in a journal whose records must)

    @property
    def what(self) -> str:
        whose = f"workspace {self.owner[:12]}" if self.owner else "a journal whose records name no workspace"
        return f"holds edit {self.seq} of another workspace's journal ({whose})"

    def describe(self, path) -> str:
        return f"line {self.line} of {Path(path).name} {self.what}: skipped, not replayed"


HEAD = 18  # b"crc32hex lengthhex " before a version 2 record's JSON


def encode_record(record: dict, version: int = JOURNAL_VERSION) -> bytes:
    """One journal line: CRC-32 of the JSON, its length (version 2), the JSON, a newline."""
    body = dumps(record).encode("ascii")
    if version == 1:
        return b"%08x %s\n" % (zlib.crc32(body), body)
    return b"%08x %08x %s\n" % (zlib.crc32(body), len(body), body)


def is_record(rec: dict | None) -> bool:
    """Whether a checksummed record has an edit's shape: a positive edit number, ops as [kind, value] pairs,
    events as objects. A record that checks out but is not one (written by hand, or by another program) is
    damage like a failed checksum, never replayed."""
    if rec is None:
        return False
    seq, ops, events = rec.get("seq"), rec.get("ops"), rec.get("events")
    return type(seq) is int and seq > 0 and isinstance(ops, list) and isinstance(events, list) \
        and type(rec.get(OWNER, "")) is str \
        and all(isinstance(op, list) and len(op) == 2 and isinstance(op[0], str) for op in ops) \
        and all(isinstance(e, dict) for e in events)


def _json_dict(body: bytes) -> dict | None:
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _frame_v2(data: bytes, pos: int) -> tuple[dict | None, int | None]:
    """(the record at `pos`, or None; where it ends by its length, or None when its header is unreadable)."""
    head = data[pos:pos + HEAD]
    if len(head) < HEAD or head[8:9] != b" " or head[17:18] != b" ":
        return None, None
    try:
        crc, n = int(head[:8], 16), int(head[9:17], 16)
    except ValueError:
        return None, None
    end = pos + HEAD + n + 1
    if end > len(data):
        return None, end
    body = data[pos + HEAD:end - 1]
    if zlib.crc32(body) != crc:
        return None, end
    # its newline may be the damaged byte: the record itself is whole (its checksum says so)
    return _json_dict(body), end


def _frame_v1(data: bytes, pos: int) -> tuple[dict | None, int | None]:
    nl = data.find(b"\n", pos)
    if nl < 0:
        return None, None
    line = data[pos:nl]
    if len(line) < 10 or line[8:9] != b" ":
        return None, nl + 1
    try:
        crc = int(line[:8], 16)
    except ValueError:
        return None, nl + 1
    if zlib.crc32(line[9:]) != crc:
        return None, nl + 1
    return _json_dict(line[9:]), nl + 1


def _decode_line(line: bytes) -> dict | None:
    """A version 1 line (without its newline): the record, or None."""
    return _frame_v1(line + b"\n", 0)[0]


_SEQ_RE = re.compile(rb'"(?:j?seq)":\s*(\d{1,18})')
_ID_RE = re.compile(rb'"id":\s*(\d{1,18})')
_EVENT_RE = re.compile(rb'"kind":"([a-z_-]{1,20})","query":("(?:[^"\\]|\\.){0,200}"|null),'
                       rb'"doc":("(?:[^"\\]|\\.){0,200}"|null)')


def damaged_ids(data: bytes) -> tuple[int, int]:
    """(highest edit number, highest event id) that damaged journal bytes still show: never to be reused."""
    seqs = [int(m) for m in _SEQ_RE.findall(data)]
    ids = [int(m) for m in _ID_RE.findall(data)]
    return max(seqs, default=0), max(ids, default=0)


def _held(data: bytes) -> tuple[tuple[int, ...], str]:
    """What damaged bytes still show: the edit numbers, and the first events' kinds, queries and docs."""
    seqs = tuple(sorted({int(m) for m in re.findall(rb'"seq":(\d{1,18})', data)}))
    shown = []
    for kind, q, d in _EVENT_RE.findall(data)[:3]:
        try:
            shown.append(" ".join([kind.decode()] + [json.loads(x) for x in (q, d) if x != b"null"]))
        except ValueError:
            continue
    parts = ([f"edit{'s' if len(seqs) > 1 else ''} {', '.join(map(str, seqs))}"] if seqs else []) + \
        ([f"({'; '.join(shown)})"] if shown else [])
    return seqs, " ".join(parts)


def scan_journal(data: bytes, pos: int, version: int) -> tuple[list[tuple[dict, int, int]], list[Damage], int]:
    """Every good record from `pos` on, with its offset and end; the damaged stretches between them (each
    ends where the next good record starts: found by the damaged record's length, else after a newline); and
    the bytes of a torn last record (a crash while appending it: fewer bytes than its length, no newline)."""
    frame = _frame_v2 if version >= 2 else _frame_v1
    good: list[tuple[dict, int, int]] = []
    damage: list[Damage] = []
    torn = 0
    size = len(data)
    counted, line = 0, 1  # newlines counted up to `counted`: each damaged stretch's line, without counting again
    while pos < size:
        rec, end = frame(data, pos)
        if is_record(rec):
            good.append((rec, pos, end))
            pos = end
            continue
        nxt = _resync(data, pos, end, frame)
        cut = version < 2 or (size - pos < HEAD if end is None else end > size)  # fewer bytes than it needs
        if nxt is None and cut and b"\n" not in data[pos:] and pos > 0:  # (a header is never torn: atomic_write)
            torn = size - pos  # a record cut short by a crash: its newline, written last, never came
            break
        stop = size if nxt is None else nxt
        seqs, held = _held(data[pos:stop])
        line += data.count(b"\n", counted, pos)
        counted = pos
        damage.append(Damage(pos, stop, line, seqs, held, whole=rec is not None))
        if nxt is None:
            break
        pos = nxt
    return good, damage, torn


def _resync(data: bytes, pos: int, end: int | None, frame) -> int | None:
    """Where the first good record after a damaged one at `pos` starts: at the end its length gives, or
    after a newline past `pos`, whichever comes first and reads."""
    if end is not None and not pos < end < len(data):
        end = None
    nl = data.find(b"\n", pos)
    while True:
        q = nl + 1 if nl >= 0 and nl + 1 < len(data) else None
        if end is not None and (q is None or end <= q):
            q, end = end, None  # the damaged record's own length, tried once, in its place
        elif q is not None:
            nl = data.find(b"\n", q)
        if q is None:
            return None
        rec, _ = frame(data, q)
        if is_record(rec):
            return q


def _header(data: bytes) -> tuple[dict | None, int, int]:
    """(the header record, its framing version, where the records start)."""
    for version, frame in ((2, _frame_v2), (1, _frame_v1)):
        rec, end = frame(data, 0)
        if rec is not None and rec.get("journal") == JOURNAL_MAGIC:
            return rec, version, end
    return None, JOURNAL_VERSION, 0


def read_journal(path: Path, salvage: bool = False) -> JournalContents | None:
    """Every good record, those after a damaged one too; a torn last record is reported in `torn`, damage in
    `damage` (the first) and `damaged` (all). `salvage` (recovery): a journal whose header cannot be read
    still gives its good records (with `header_damaged`) instead of an error."""
    data = read_regular(path)
    if data is None:
        return None
    header, version, pos = _header(data)
    if header is None:
        if not salvage:
            has_line = b"\n" in data and not data.startswith(b"\n")
            raise DamagedFile(str(path), "not a rankgate journal (bad header line)" if has_line else
                              "the journal has no header line (expected a rankgate journal)", line=1)
        version = 2 if re.match(rb"[0-9a-f]{8} [0-9a-f]{8} \{", data[data.find(b"\n") + 1:][:20]) else 1
        header = {"base": 0, "workspace": "", "version": version}
        pos = 0
    elif not isinstance(header.get("base"), int):
        raise DamagedFile(str(path), "not a rankgate journal (bad header line)", line=1)
    if isinstance(header.get("version"), int) and header["version"] > JOURNAL_VERSION:
        raise NewerFormat(str(path), f"written by a newer rankgate (journal version {header['version']}); open the "
                          "workspace with that version (nothing was changed)", line=1)
    if header.get("version") not in (1, 2, 3) or min(header["version"], 2) != version:
        raise DamagedFile(str(path), f"journal version {header.get('version')!r}, expected {JOURNAL_VERSION}", line=1)
    version = header["version"]
    gen = header.get("gen")
    good, damage, torn = scan_journal(data, pos, version)
    tail_damaged = any(d.end == len(data) for d in damage)
    owner = str(header.get("workspace", ""))
    # records of another workspace's journal (a header that cannot be read names no owner: recovery decides)
    theirs = set() if pos == 0 else {i for i, (r, _, _) in enumerate(good) if is_foreign(r, owner, version)}
    ours = [r for i, (r, _, _) in enumerate(good) if i not in theirs]
    out = JournalContents(header["base"], owner, ours, pos, torn,
                          gen=gen if isinstance(gen, str) else None, version=version, damaged=damage,
                          header_damaged=pos == 0, tail_damaged=tail_damaged)
    first = min(damage, key=lambda d: d.offset) if damage else None
    for rec, start, end in good:
        if first is not None and start > first.offset:
            break
        out.good_size = end
    if first is not None:
        why = "its checksum holds, but it is no edit record" if first.whole else "checksum mismatch"
        out.damage = (f"journal record at line {first.line} is damaged ({why})"
                      + (f"; it held {first.held}" if first.held else ""))
        out.damage_line = first.line
        out.damaged_ids = damaged_ids(data[first.offset:])
    out.foreign = [Foreign(_line_of(data, good[i][1]), good[i][0]["seq"], good[i][0].get(OWNER, ""))
                   for i in sorted(theirs)]
    if out.foreign and (first is None or out.foreign[0].line < first.line):
        out.damage = f"journal record at line {out.foreign[0].line} {out.foreign[0].what}, not replayed"
        out.damage_line = out.foreign[0].line
    return out


def is_foreign(rec: dict, owner: str, version: int) -> bool:
    """A record another workspace's journal wrote: it names another workspace, or none in a journal whose
    records must name theirs (version 3)."""
    named = rec.get(OWNER)
    return named != owner if named is not None else version >= 3


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


PREALLOCATE = 1 << 20  # journal space reserved ahead of the end (Linux), so an append allocates no block


def _fallocate_keep_size():
    """libc's fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, len), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util

        # the process's own symbols first, libc's among them: find_library runs ldconfig in a subprocess
        # (9 ms of every open of a workspace, in the app's load)
        fn = getattr(ctypes.CDLL(None, use_errno=True), "fallocate", None) or \
            ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).fallocate
        fn.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
        fn.restype = ctypes.c_int
        return lambda fd, offset, length: fn(fd, 1, offset, length) == 0
    except (OSError, AttributeError):
        return None


_fallocate = _fallocate_keep_size()


class Journal:
    """The writer's handle on the journal: append one record, fsync, acknowledge.

    On ext4 an fsync that must also allocate a block waits for the file system's
    journal commit (about 4 ms here, once every dozen appends: that was the p95).
    The journal therefore reserves space ahead of its end with
    fallocate(FALLOC_FL_KEEP_SIZE): the file's size, and so what a reader sees,
    is unchanged, and the append's fsync stays at a tenth of a millisecond.
    """

    def __init__(self, path: Path, size: int, count: int, version: int = JOURNAL_VERSION) -> None:
        self.path = path
        self.size = size  # bytes, header included
        self.count = count  # records after the header
        self.version = version  # the framing its records are written in (1: a journal from before lengths)
        self.broken: str | None = None
        self._reserved = 0  # bytes allocated on disk, from offset 0
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError(str(path), "is a symbolic link; the store never writes through a link beside it "
                                 "(remove the link)") from None
            raise _io_error(path, "open the journal", e) from None
        if not stat.S_ISREG(os.fstat(self._fd).st_mode):
            os.close(self._fd)
            raise InputError(str(path), "is not a regular file; expected the store's journal")

    def _reserve(self, need: int) -> None:
        if _fallocate is not None and self.size + need > self._reserved:
            length = max(PREALLOCATE, need)
            if _fallocate(self._fd, self.size, length):
                self._reserved = self.size + length

    @staticmethod
    def create(path: Path, base: int, workspace_id: str, gen: str | None = None) -> str:
        """A fresh journal holding only its header, put in place atomically; returns its generation (a
        random name the snapshot records, so that a journal deleted or swapped for another is noticed)."""
        gen = gen or secrets.token_hex(8)
        header = {"journal": JOURNAL_MAGIC, "version": JOURNAL_VERSION, "base": base, "workspace": workspace_id,
                  "gen": gen}
        atomic_write(path, encode_record(header))
        return gen

    def truncate_to(self, size: int) -> None:
        """Cut a torn last record away before appending after it."""
        try:
            os.ftruncate(self._fd, size)
            _sync(self._fd)
        except OSError as e:
            raise _io_error(self.path, "repair the journal", e) from None
        self.size = size

    def append(self, record: dict) -> None:
        if self.broken:
            raise InputError(str(self.path), f"edits are refused: {self.broken}")
        line = encode_record(record, self.version)
        self._reserve(len(line))
        try:
            if os.environ.get(CRASHPOINT_ENV) == "journal-torn":
                _write_all(self._fd, line[: len(line) // 2])
                crashpoint("journal-torn")
            _write_all(self._fd, line)
            _sync(self._fd)
        except OSError as e:
            try:  # leave no half record behind the next edit
                os.ftruncate(self._fd, self.size)
            except OSError:
                self.broken = f"a failed write could not be undone ({e.strerror}); reopen the workspace"
            raise _io_error(self.path, "save the edit", e) from None
        self.size += len(line)
        self.count += 1

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


# --------------------------------------------------------------------------- lock


def _holder_info() -> dict:
    try:
        user = getpass.getuser()
    except Exception:  # no login name in a container
        user = str(os.getuid())
    return {"pid": os.getpid(), "host": socket.gethostname(), "user": user, "since": now_iso()}


class WriterLock:
    """One writer per workspace: an exclusive flock on `<db>.lock`, which names its holder.

    The kernel drops the lock when the holder dies (even by SIGKILL), so a crash
    never leaves a stale lock behind; the file itself is left in place.
    """

    def __init__(self, path: Path, db: Path) -> None:
        self.path = path
        self.db = db
        self._fd = -1

    def acquire(self) -> None:
        """Take the lock, or raise Locked naming its holder. The lock file is never followed through a
        symbolic link (O_NOFOLLOW: a link is refused, its target never truncated), and a lock file that
        was removed while we waited for it is taken again, so two writers never hold two different files."""
        for _ in range(20):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                try:
                    holder = os.pread(fd, 4096, 0)
                finally:
                    os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise Locked(str(self.db), f"is open for writing by {describe_holder(holder)}; close it there "
                                 "first, or open the workspace read-only") from None
                raise _io_error(self.path, "lock the workspace", e) from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
            except OSError:
                same = False
            if not same:  # removed (or replaced) by the writer before us, after we opened it: open it again
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, (json.dumps(_holder_info()) + "\n").encode(), 0)
            except OSError:
                pass
            self._fd = fd
            return
        raise InputError(str(self.path), "the lock file keeps being replaced; is another program removing it?")

    def _open(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, FILE_MODE)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise InputError(str(self.path), "is a symbolic link; the lock file is never followed (its target "
                                 "would be overwritten): remove the link") from None
            raise _io_error(self.path, "create the lock file", e) from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(str(self.path), "is not a regular file; expected the store's lock file (remove it)")
        return fd

    def release(self, remove: bool = False) -> None:
        """Drop the lock; `remove`: delete the lock file too (a command that created no store leaves
        nothing behind). Removed while still held, so a writer that opened it meanwhile opens it again."""
        if self._fd < 0:
            return
        try:
            if remove:
                os.unlink(self.path)
            else:
                os.ftruncate(self._fd, 0)
        except OSError:
            pass
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = -1

    @property
    def held(self) -> bool:
        return self._fd >= 0


def describe_holder(raw: bytes) -> str:
    try:
        info = json.loads(raw.decode("utf-8"))
        return f"{info['user']} (pid {info['pid']} on {info['host']}, since {info['since']})"
    except Exception:
        return "another process"
