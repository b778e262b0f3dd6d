"""Durable storage under the workspace: atomic snapshots, an fsynced journal, a writer lock.

TinyDB's own JSONStorage rewrites its file in place (a crash mid-write leaves
an unreadable file) and re-serialises everything on every write. Here:

- `SnapshotStorage` is a TinyDB `Storage` that reads a TinyDB JSON file and
  writes it by atomic replace: temporary file, fsync, `os.replace`, fsync of
  the folder. A reader sees the old file or the new one, never half of one.
- `Journal` is an append-only file of edits, one checksummed line each,
  fsynced before the edit is acknowledged. A torn last record (no newline: the
  process died while writing it, so it was never acknowledged) is ignored; a
  complete line whose checksum fails is damage, reported. Its header names its
  generation, which the snapshot records.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from tinydb.storages import Storage

from rankgate.core.errors import InputError
from rankgate.core.outfile import file_kind
from rankgate.store.paths import FILE_MODE

JOURNAL_MAGIC = "rankgate-journal"
JOURNAL_VERSION = 1
CRASHPOINT_ENV = "RANKGATE_CRASHPOINT"


class DamagedFile(InputError):
    """A store file that cannot be read back: invalid JSON, cut short, or not ours."""


def crashpoint(name: str) -> None:
    """Kill this process at a named point, when a crash test asks for it (no-op otherwise)."""
    if os.environ.get(CRASHPOINT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


_ENCODER = json.JSONEncoder(separators=(",", ":"))


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
    A path that exists and is not a regular file is refused; with `output`, a character device or a named
    pipe (`-o /dev/null`) is written into instead (no rename).
    `output`: a file for the user (an export): a symlink's target is written (the link
    stays), an existing file keeps its mode, a new one gets the usual (umask) mode.
    """
    from rankgate.core.outfile import is_stream, output_target, refuse_special, write_stream

    mode: int | None = None
    if output and is_stream(path):  # an export to /dev/null or a named pipe: written into, not replaced
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
        if self.access_mode == "r":
            raise InputError(str(self.path), "opened read-only")
        self.size = atomic_write(self.path, dumps(data).encode("ascii"))

    def append_docs(self, table: str, docs: list[tuple[int, dict]], expected_size: int,
                    backup: Path | None = None) -> int | None:
        """Add documents at the end of a one-table file without parsing it; returns the new size.

        The file must be exactly as this storage last wrote it: `{"<table>":{...}}`
        of `expected_size` bytes. Otherwise returns None and the caller rewrites it whole.
        The new file replaces the old atomically; `backup` keeps the old one.
        """
        if self.access_mode == "r":
            raise InputError(str(self.path), "opened read-only")
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
        body = dumps({str(i): doc for i, doc in docs})[1:-1].encode("ascii")  # one encoder call, not one per doc
        if not body:
            return st.st_size
        if backup is not None:
            keep_copy(self.path, backup)
        tmp = _tmp_name(self.path)
        try:
            shutil.copyfile(self.path, tmp)
            os.chmod(tmp, FILE_MODE)
            with open(tmp, "r+b") as f:
                f.seek(-2, os.SEEK_END)
                f.write((b"" if whole_empty else b",") + body + b"}}")
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
        return size


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
class JournalContents:
    base: int  # the snapshot sequence number this journal continues from
    workspace_id: str
    records: list[dict]  # complete, checksummed records in order
    good_size: int  # bytes up to the end of the last good record
    torn: int  # bytes of a torn last record (0 when none)
    damage: str | None = None  # a damaged record (a complete line whose checksum fails): what and where
    damage_line: int | None = None
    gen: str | None = None  # the journal's generation (None: written before generations existed)
    damaged_ids: tuple[int, int] = (0, 0)  # the highest edit and event ids a damaged record seems to hold


def encode_record(record: dict) -> bytes:
    body = dumps(record).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _decode_line(line: bytes) -> dict | None:
    if len(line) < 10 or line[8:9] != b" ":
        return None
    body = line[9:]
    try:
        crc = int(line[:8], 16)
    except ValueError:
        return None
    if zlib.crc32(body) != crc:
        return None
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


_SEQ_RE = re.compile(rb'"(?:j?seq)":\s*(\d{1,18})')
_ID_RE = re.compile(rb'"id":\s*(\d{1,18})')


def damaged_ids(data: bytes) -> tuple[int, int]:
    """(highest edit number, highest event id) that damaged journal bytes still show: never to be reused."""
    seqs = [int(m) for m in _SEQ_RE.findall(data)]
    ids = [int(m) for m in _ID_RE.findall(data)]
    return max(seqs, default=0), max(ids, default=0)


def read_journal(path: Path) -> JournalContents | None:
    """Every complete record; a torn last record is reported in `torn`, damage before it in `damage`."""
    data = read_regular(path)
    if data is None:
        return None
    lines = data.split(b"\n")
    tail = lines.pop()  # bytes after the last newline: a torn record, or b""
    if not lines:
        raise DamagedFile(str(path), "the journal has no header line (expected a rankgate journal)", line=1)
    header = _decode_line(lines[0])
    if not header or header.get("journal") != JOURNAL_MAGIC or not isinstance(header.get("base"), int):
        raise DamagedFile(str(path), "not a rankgate journal (bad header line)", line=1)
    if header.get("version") != JOURNAL_VERSION:
        raise DamagedFile(str(path), f"journal version {header.get('version')!r}, expected {JOURNAL_VERSION}", line=1)
    gen = header.get("gen")
    out = JournalContents(header["base"], str(header.get("workspace", "")), [], len(lines[0]) + 1, len(tail),
                          gen=gen if isinstance(gen, str) else None)
    pos = out.good_size
    for i, line in enumerate(lines[1:], 2):
        rec = _decode_line(line)
        if rec is None or not isinstance(rec.get("seq"), int):
            # A record is written with its newline last, in one write: a line that ends in a newline was
            # complete, and maybe acknowledged. Only bytes after the last newline are a torn record.
            out.damage = f"journal record at line {i} is damaged (checksum mismatch)"
            out.damage_line = i
            out.damaged_ids = damaged_ids(b"\n".join(lines[i - 1:] + [tail]))
            break
        out.records.append(rec)
        pos += len(line) + 1
        out.good_size = pos
    return out


PREALLOCATE = 1 << 20  # journal space reserved ahead of the end (Linux), so an append allocates no block


def _fallocate_keep_size():
    """libc's fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, len), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.fallocate
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

    def __init__(self, path: Path, size: int, count: int) -> None:
        self.path = path
        self.size = size  # bytes, header included
        self.count = count  # records after the header
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
        line = encode_record(record)
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
