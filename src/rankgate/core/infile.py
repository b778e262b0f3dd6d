"""Opening an input file: regular files only (never a pipe, a device or a folder), gunzipped when gzip.

Its own small module, outside core/formats, so that a reader that needs nothing else
(`rankgate trec_eval`) opens files without importing every format (core/formats/__init__.py).
"""

from __future__ import annotations

import gzip
import os
import stat
from pathlib import Path

from rankgate.core.errors import InputError


def _special(mode: int) -> str | None:
    """What a file that is not a regular file is, in a user's words (None for a regular file)."""
    if stat.S_ISDIR(mode):
        return "is a folder, expected a file"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return ("is a pipe, which rankgate does not read (it could wait forever or hold no end); "
                "expected a regular file (save what <(...) gives to a file first)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, expected a regular file"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


def open_input(path: str | Path):
    """The file for reading bytes, gunzipped when it is gzip; a missing or unreadable file is an InputError.

    Only regular files are read: a folder, a pipe (a FIFO, process substitution), a socket or a device
    (/dev/zero, /dev/urandom) is refused before anything is read, and a FIFO is never waited on."""
    p = Path(path)
    try:
        why = _special(os.stat(p).st_mode)
        if why is not None:
            raise InputError(str(path), why)
        # O_NONBLOCK: should the name become a FIFO after the stat, opening it does not wait for a writer.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        why = _special(st.st_mode)
        if why is not None:
            os.close(fd)
            raise InputError(str(path), why)
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a folder, expected a file") from None
    except NotADirectoryError:
        raise InputError(str(path), "cannot be opened (a part of the path is a file, not a folder)") from None
    except PermissionError:
        raise InputError(str(path), "cannot be read (permission denied)") from None
    except (OSError, ValueError) as e:  # a symlink loop, a name too long, a NUL byte in the name ...
        raise InputError(str(path), f"cannot be opened ({getattr(e, 'strerror', None) or e})") from None
    from rankgate.core.outfile import note_input

    note_input(st)
    magic = f.read(2)
    f.seek(0)
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=f, mode="rb")
    return f
