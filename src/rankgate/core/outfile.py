"""Where an output file really goes: a symlink's target, with the mode the file has now.

Every atomic writer (receipts, reports, label exports, the workspace's own files) asks here first, so
a path that exists and is not a regular file (a named pipe, a socket, a folder, a block device) is refused
with one line instead of being replaced by a new file. A named pipe is refused too: a reader that stops
reading (or holds it open and never reads) would leave the command waiting forever, after it had written
its other outputs. A file for the user (an output, an export) may be a character device (`-o /dev/null`,
a terminal) or the pipe a shell made (`-o /dev/stdout | jq`, `>(...)`: a pipe with no name, which a program
already reads): it is written into, as a shell's `>` would."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rankgate.core.errors import InputError


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in a user's words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def is_stream(path: str | os.PathLike) -> bool:
    """`path` (links followed) is a character device (`/dev/null`, `/dev/stdout` on a terminal), a shell's
    pipe (`/dev/stdout` piped into jq) or names an output this process was given open (`/dev/stdout`,
    `/dev/fd/N` whatever they are: `-o /dev/stdout >> ci.log` appends to the log, as `>>` would, and never
    replaces it): an output written straight into it, never replaced by a rename. (A named pipe is not:
    outputs refuse it, `refuse_special`.)"""
    if open_descriptor(path) is not None:
        return True
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(st.st_mode) or is_shell_pipe(st)


def open_descriptor(path: str | os.PathLike) -> int | None:
    """N when `path`, its links followed one by one, names this process's open file descriptor N
    (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: what a shell's redirection gave it, a file
    too), else None. Written through the descriptor itself, its offset and append mode are the shell's."""
    import re

    fd_path = re.compile(rf"/(?:proc/(?:self|thread-self|{os.getpid()})/fd|dev/fd)/(\d+)")
    try:
        p = os.path.abspath(os.fspath(path))
        for _ in range(40):  # (the kernel's own limit of links in a path)
            m = fd_path.fullmatch(p)
            if m:
                n = int(m.group(1))
                return n if not stat.S_ISDIR(os.fstat(n).st_mode) else None
            p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
    except (OSError, ValueError, TypeError):  # not a link (any more), or no such descriptor
        return None
    return None


_PIPE_DEVICE: list[int] = []  # the device number of the pipes with no name (Linux's pipefs), once known


def is_shell_pipe(st: os.stat_result) -> bool:
    """A pipe with no name in any folder (a shell's `|` or `>(...)`, reached as /dev/stdout or /dev/fd/N): the
    shell started its reader with us. A named pipe (mkfifo) lives in a folder's file system, another device."""
    if not stat.S_ISFIFO(st.st_mode):
        return False
    if not _PIPE_DEVICE:
        r, w = os.pipe()
        try:
            _PIPE_DEVICE.append(os.fstat(r).st_dev)
        finally:
            os.close(r)
            os.close(w)
    return st.st_dev == _PIPE_DEVICE[0]


def write_stream(path: str | os.PathLike, chunks) -> int:
    """Write `chunks` (bytes, or an iterable of them) into a stream (`is_stream`); returns the size.
    An error is one line naming the path."""
    size = 0
    given = open_descriptor(path)
    try:
        if given is not None:  # the shell's own descriptor (`>> ci.log`: appended at its end, not at byte 0)
            import sys

            for stream in (sys.stdout, sys.stderr):  # what was printed before comes first
                if stream is not None:
                    stream.flush()
            fd = os.dup(given)
        else:  # O_NONBLOCK: a named pipe no program reads fails at once (ENXIO) instead of waiting forever
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            if given is None:
                os.set_blocking(fd, True)
            for chunk in [chunks] if isinstance(chunks, (bytes, bytearray)) else chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view):]
                size += len(chunk)
        finally:
            os.close(fd)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise InputError(str(path), "is a named pipe that no program is reading; nothing was written there (start the "
                             "reader first, or choose a file path)") from None
        if e.errno == errno.EPIPE:  # the reader left (`| head`): the command's decided exit code stands (cli)
            raise BrokenPipeError(e.errno, e.strerror, str(path)) from None
        raise InputError(str(path), f"cannot write there: {e.strerror or e}") from None
    return size


def refuse_special(path: str | os.PathLike, stream_ok: bool = False) -> os.stat_result | None:
    """The stat of `path` (following links) when it is a regular file, None when it does not exist;
    an InputError when it exists and is anything else (`stream_ok`: but a character device or a shell's pipe,
    which `write_stream` writes into: the caller asks `is_stream`). A named pipe is always refused."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:  # a link leading back to itself: a write would replace the link
            raise InputError(str(path), f"cannot be opened ({e.strerror}: a symbolic link that leads back to "
                             "itself); nothing was written (choose a file path)") from None
        return None  # cannot look (permission): the write itself says why
    if stream_ok and (stat.S_ISCHR(st.st_mode) or is_shell_pipe(st) or open_descriptor(path) is not None):
        return None
    if stat.S_ISFIFO(st.st_mode):
        raise InputError(str(path), "is a named pipe (FIFO); an output is written to a regular file only (a pipe "
                         "whose reader stops reading would leave the command waiting forever): nothing was written "
                         "(choose a file path)")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(str(path), f"is {file_kind(st.st_mode)}, expected a regular file to write; nothing was written "
                         "(choose a file path)")
    return st


def new_temp(folder: str | os.PathLike, name: str, private: bool = False) -> tuple[int, Path]:
    """A new, empty temporary file beside `name` in `folder`, open for writing: (fd, path).

    Unlike `tempfile.mkstemp` (always 0600), a file for users to share gets the mode `open` would give
    it (0666 less the umask, as `cp` or a shell's `>` would), so a benchmark folder or a report made on a
    shared machine opens for a teammate or a CI job running as another user. `private`: owner only."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = Path(folder) / f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o600 if private else 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(Path(folder) / name))


def output_target(path: str | os.PathLike) -> tuple[Path, int | None]:
    """The file to replace for `path` (symlinks resolved, so the link stays a link and its target gets the
    new contents) and that file's permission bits when it exists (None for a new file)."""
    st = refuse_special(path)
    real = Path(os.path.realpath(path)) if os.path.islink(path) or st is not None else Path(path)
    refuse_read_only(path, real, st)
    return real, (stat.S_IMODE(st.st_mode) if st is not None else None)


def refuse_read_only(path, real: Path, st: os.stat_result | None) -> None:
    """A file, or the folder it is replaced in, with no write bit in its mode is not written, even by root
    (whom permissions let through) or its owner (a rename replaces a 0444 file): a reference file kept
    read-only on purpose stays as it is."""
    which = no_write_bit(real, st)
    if which is real:
        raise InputError(str(path), "cannot write here (read-only: the file has no write permission); nothing was "
                         "written (choose another file)")
    if which is not None:
        raise InputError(str(path), f"cannot write here (read-only: its folder {real.parent} has no write "
                         "permission); nothing was written (choose another file)")


def no_write_bit(real: Path, st: os.stat_result | None = None) -> Path | None:
    """`real` (a file, `st` its stat if known) or its folder when its mode has no write bit at all, else None."""
    if st is None:
        try:
            st = os.stat(real)
        except OSError:
            st = None  # not there yet: its folder decides
    if st is not None and not st.st_mode & 0o222:
        return real
    return real.parent if no_write_bit_folder(real.parent) else None


def no_write_bit_folder(folder) -> bool:
    """The folder's mode has no write bit at all (False when it cannot be read: the write itself says why)."""
    try:
        return not os.stat(folder).st_mode & 0o222
    except OSError:
        return False


# Every file an input reader opened in this process (device, inode): an output must not replace one.
_INPUTS: set[tuple[int, int]] = set()


def note_input(st: os.stat_result) -> None:
    """Remember a file that was read as an input (textio.open_input calls this)."""
    _INPUTS.add((st.st_dev, st.st_ino))


def forget_inputs() -> None:
    """Start a new command: no file has been read yet."""
    _INPUTS.clear()


def refuse_inputs(*paths, inputs=()) -> None:
    """An InputError when any of `paths` (an output: --receipt, --markdown, --junit, -o) is a file this
    command read as an input (the same file, through any name or link): one opened by the readers, or one
    of `inputs` (paths). None entries are skipped."""
    known = set(_INPUTS)
    for path in inputs:
        try:
            st = os.stat(path)
            known.add((st.st_dev, st.st_ino))
        except (OSError, ValueError):
            pass
    for path in paths:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue  # does not exist yet (or cannot be looked at): the write says why
        if (st.st_dev, st.st_ino) in known:
            raise InputError(str(path), "is one of this command's input files; writing there would replace it "
                             "(nothing was written; choose another file)")


def refuse_outputs(outputs, inputs) -> None:
    """An InputError when an output path (a flag and its path; None when not given) is one of the files the
    command reads (role, path), through a symlink or another name too: writing it would replace an input
    (the qrels, a run, the ACL) with a report. Also refuses, for every output, what write_atomic would (a pipe,
a device, a folder, a missing folder), so that one bad path leaves none of the others written. Checked before
anything is written."""
    outputs = [(flag, out) for flag, out in outputs if out]
    for flag, out in outputs:  # every output's place first: one bad path must not leave the others written
        refuse_special(out, stream_ok=True)
        if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
            raise InputError(str(out), f"cannot write {flag}: the folder does not exist; nothing was written")
    for flag, out in outputs:
        if not os.path.exists(out):
            continue
        for role, path in inputs:
            try:
                same = os.path.samefile(out, path)
            except OSError:
                continue
            if same:
                raise InputError(str(out), f"is one of this command's input files, the {role} file this command "
                                 f"reads ({path}); {flag} would replace it: nothing was written (choose another "
                                 "path)")
