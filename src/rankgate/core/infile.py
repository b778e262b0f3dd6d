"""Opening an input file: regular files only (never a pipe, a device or a folder), gunzipped under a bound.

Its own small module, outside core/formats, so that a reader that needs nothing else
(`rankgate trec_eval`) opens files without importing every format (core/formats/__init__.py).
"""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

from rankgate.core.errors import InputError

_BLOCK = 8 << 20  # a large gunzip read is counted block by block

# gzip input (as urllib3 2.x bounds a decompressed answer): at most MAX_GUNZIP bytes out, and past the first
# GUNZIP_FREE bytes out, at most MAX_RATIO bytes out per byte in (text compresses 3-15x; a bomb of blank lines
# or one repeated line 1000x)
MAX_GUNZIP = 16 << 30
MAX_RATIO = 100
GUNZIP_FREE = 16 << 20
_MIB = 1 << 20
MAX_LINE = 32 << 20  # the longest line any reader takes (bytes); docs/formats.md "Limits"


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


def open_regular(path: str | Path):
    """The file for reading raw bytes; a missing or unreadable file is an InputError.

    Only regular files are read: a folder, a pipe (a FIFO, process substitution), a socket or a device
    (/dev/zero, /dev/urandom) is refused before anything is read, and a FIFO is never waited on. Every
    reader (and every hash of an input, core/bundle.py sha256_file) opens files here."""
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
        return os.fdopen(fd, "rb")
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


_BOUNDED_GZIP = None


def bounded_gzip():
    """The class BoundedGzip, made on first use: gzip is imported for a gzip file only."""
    global _BOUNDED_GZIP
    if _BOUNDED_GZIP is None:
        import gzip

        class BoundedGzip(gzip.GzipFile):
            """gzip decompressed under a bound: more than MAX_GUNZIP bytes out, or (past GUNZIP_FREE) more than
            MAX_RATIO bytes out per compressed byte read, is refused as a decompression bomb, not read on."""

            def __init__(self, raw, path: str):
                super().__init__(fileobj=raw, mode="rb")
                self.path, self.out = str(path), 0

            def _count(self, n: int) -> None:
                self.out += n
                if self.out > MAX_GUNZIP or (self.out > GUNZIP_FREE and self.out > MAX_RATIO * max(self.fileobj.tell(), 1)):
                    raise InputError(self.path, f"gzip that decompresses to {self.out // _MIB} MiB from "
                                     f"{self.fileobj.tell() // 1024} KiB read (over {MAX_RATIO} times its size, or past "
                                     f"{MAX_GUNZIP >> 30} GiB): refused as a decompression bomb (docs/formats.md, Limits)")

            def read(self, size=-1):
                if size is None or size < 0:
                    size = MAX_GUNZIP + 1
                if size <= _BLOCK:
                    data = super().read(size)
                    self._count(len(data))
                    return data
                parts, left = [], size  # a large read in blocks, each one counted: a bomb stops early
                while left > 0 and (chunk := self.read(min(left, _BLOCK))):
                    parts.append(chunk)
                    left -= len(chunk)
                return b"".join(parts)

            def read1(self, size=-1):
                data = super().read1(size)
                self._count(len(data))
                return data

            def readinto(self, b):
                data = super().read(len(b))
                b[:len(data)] = data
                self._count(len(data))
                return len(data)

            def readline(self, size=-1):
                data = super().readline(size)
                self._count(len(data))
                return data

        BoundedGzip.__qualname__ = "BoundedGzip"
        _BOUNDED_GZIP = BoundedGzip
    return _BOUNDED_GZIP


def __getattr__(name: str):  # infile.BoundedGzip, as before
    if name == "BoundedGzip":
        return bounded_gzip()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_input(path: str | Path):
    """The file for reading bytes (open_regular), gunzipped under a bound (BoundedGzip) when it is gzip."""
    f = open_regular(path)
    from rankgate.core.outfile import note_input

    note_input(os.fstat(f.fileno()))
    magic = f.read(2)
    f.seek(0)
    if magic == b"\x1f\x8b":
        return bounded_gzip()(f, str(path))
    return f


def cr_only(head: bytes | str) -> bool:
    """Whether a file's first block ends its lines with CR alone (classic Mac): a CR and no LF."""
    return ("\r" in head and "\n" not in head) if isinstance(head, str) else (b"\r" in head and b"\n" not in head)


def read_whole_latin1(path: str | Path) -> str:
    """The whole file (gunzipped under the bound) as latin-1 text, as trec_eval reads bytes: without a
    byte-order mark, CR-only line ends made LF."""
    path = str(path)
    with open_input(path) as f:
        try:
            head = f.read(MAX_LINE + 1)
            if len(head) > MAX_LINE and b"\n" not in head and b"\r" not in head:  # before reading it all
                raise InputError(path, f"a line longer than {MAX_LINE // _MIB} MiB (the longest line rankgate "
                                 "reads; docs/formats.md, Limits)", line=1)
            rest = f.read()
            data = head + rest if rest else head
            del head, rest
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(path, f"cannot read it: {e}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if cr_only(data[:_BLOCK]):
        data = data.replace(b"\r", b"\n")
    return data.decode("latin-1")
