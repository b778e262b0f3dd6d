"""What every command shares: exit codes, the one-line parser, the usage helper, output."""

from __future__ import annotations

import json
import sys

from rankgate.core.text import no_workflow_commands, visible, visible_json

EXIT_OK, EXIT_INVALID, EXIT_REJECTED = 0, 2, 3

# The exit code a command has decided before it writes its outputs (the gate's accept or reject): a reader
# that closes the pipe early (`| head`) must not turn a reject into exit 0. main() resets it per call.
decided_exit: int | None = None
stdout_cut = False  # JsonOut wrote part of a JSON text and has not ended it: an error now leaves it cut short


def decide_exit(code: int) -> int:
    """Remember the command's decided exit code (see `decided_exit`); returns it."""
    global decided_exit
    decided_exit = code
    return code


BUILD_WIDTH = 1_000_000  # no line of a subcommand's prog is wrapped (tests/cli/test_startup.py: help unchanged)


class UsageError(Exception):
    """Wrong words on the command line (exit 2)."""


PATHS = {"qrels", "runs", "queries", "corpus", "policy", "db", "output", "receipt", "markdown", "junit", "benchmark",
         "bench", "files", "map", "path", "dir", "folder", "sign_key", "key"}


# File flags whose empty value is a mistake (`--runs "$RUN"` with RUN unset), said as such before any file is read.
EMPTY_REFUSED = {"qrels", "runs", "queries", "corpus", "policy", "db", "receipt", "markdown", "junit", "sign_key",
                 "benchmark"}


def check_text(args) -> None:
    """Every word of the command line is UTF-8 text: a stray byte (kept by Python as a lone surrogate)
    would be stored in labels that no export could write afterwards."""
    for key, value in vars(args).items():
        if key in EMPTY_REFUSED and any(item == "" for item in (value if isinstance(value, list) else [value])):
            name = "the benchmark folder" if key == "benchmark" else "--" + key.replace("_", "-")
            raise UsageError(f"{name}: an empty file name (an unset or empty shell variable?); nothing was done")
        if key in PATHS:
            continue  # a file name may hold any bytes the file system allows
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and any("\udc80" <= c <= "\udcff" for c in item):
                raise UsageError(f"--{key.replace('_', '-')}: {item!r} is not UTF-8 text (a byte the terminal "
                                 "could not decode); type it again as text")


def usage(parser) -> int:
    """A command group named without its subcommand: its help, exit 2."""
    parser.print_help()
    return EXIT_INVALID


def policy_overrides(args) -> dict:
    """The policy settings the command line gives, as core.policy.resolve takes them (`-m` is `measure`)."""
    from rankgate.core.policy import OVERRIDES

    overrides = {key: getattr(args, key, None) for key in OVERRIDES if key != "measures"}
    overrides["measures"] = getattr(args, "measure", None)
    if (overrides.get("seed") or 0) >= 2**63:  # the generator wraps at 2**64: a policy file's seed has this limit
        from rankgate.core.errors import InputError  # (here, not in resolve: older receipts with such a seed verify)

        raise InputError("--seed", "seed must be below 2**63")
    return overrides


def counted(n: int, one: str, many: str | None = None) -> str:
    """`1 judgment`, `2 judgments`: a count with its noun in the number it takes."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def emit(text: str) -> None:
    """A document on stdout (JSON, a table, trec_eval's lines): its lines and tabs kept, nothing else raw."""
    text = no_workflow_commands(visible(text, lines="keep"))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def emit_json(pieces) -> None:
    """JSON text from json's encoder with ensure_ascii, in pieces (core.jsontext.pieces), on stdout: what
    emit("".join(pieces)) writes, without joining them and without emit's two passes over the text (10,000 queries
    compared: 64 MB, a second). Such text is ASCII with every control character inside a string escaped, so
    `visible` has nothing to escape, and each line starts with spaces and then a quote, a bracket, a brace or a
    scalar, never a CI runner's command. Text that is not ASCII goes through emit() (see JsonOut)."""
    out = JsonOut()
    out += pieces
    out.close()


class JsonOut:
    """emit_json's writer, taking the pieces as they are made (`jsontext.pieces(obj, out=JsonOut())`): compare's
    64 MB of text is then never held whole. Pieces are written a megabyte at a time up to the last line end, while
    every piece is ASCII; from a piece that is not, the rest (from the start of its line) is kept and goes through
    emit() at close(), as emit_json sends text that is not ASCII. (json's encoder with ensure_ascii writes no such
    piece; text written before one is as emit() would write it when it is such JSON text.)"""

    AT_ONCE = 1 << 20  # characters kept before they are written

    def __init__(self):
        self.kept: list[str] = []
        self.size = 0
        self.last = None  # the last piece (emit_json ends the text with a newline unless it ends with one)
        self.rest = False  # a piece was not ASCII: the rest goes through emit()

    def append(self, piece: str) -> None:
        self.kept.append(piece)
        self.last = piece
        self.size += len(piece)
        if self.size >= self.AT_ONCE and not self.rest:
            self._write()

    def __iadd__(self, pieces):
        for piece in pieces:
            self.append(piece)
        return self

    def _write(self) -> None:
        """The kept pieces up to the last line end in them, when every one is ASCII."""
        kept = self.kept
        if not all(map(str.isascii, kept)):
            self.rest = True
            return
        for i in range(len(kept) - 1, -1, -1):
            end = kept[i].rfind("\n")
            if end >= 0:
                global stdout_cut
                stdout_cut = True
                sys.stdout.writelines(kept[:i])
                sys.stdout.write(kept[i][:end + 1])
                tail = kept[i][end + 1:]
                self.kept = ([tail] if tail else []) + kept[i + 1:]
                self.size = sum(map(len, self.kept))
                return

    def close(self) -> None:
        if self.rest or not all(map(str.isascii, self.kept)):
            emit("".join(self.kept))
        else:
            sys.stdout.writelines(self.kept)
            if self.last is None or not self.last.endswith("\n"):
                sys.stdout.write("\n")
        self.kept, self.size = [], 0
        global stdout_cut
        stdout_cut = False


def shell(path) -> str:
    """A path as a shell takes it, for a command printed to be copied: `'bench ü'` (shlex.quote); say() then
    escapes what a terminal must not see."""
    import shlex

    return shlex.quote(str(path))


def say(text: str = "", *, err: bool = False) -> None:
    """One line for a person; whatever it quotes from a file is escaped (core.text.visible)."""
    print(no_workflow_commands(visible(text)), file=sys.stderr if err else sys.stdout)


MAX_ERROR = 1000  # characters of one error line; a longer one (a 1 MB ID) is cut in the middle


def say_error(problem) -> None:
    """`error: ...` on stderr: one line, escaped, at most MAX_ERROR characters (its start and its end kept)."""
    text = visible(f"error: {problem}")  # one line, starting "error:": never a CI runner's command
    if len(text) > MAX_ERROR:
        cut = len(text) - MAX_ERROR + 40
        head = MAX_ERROR * 2 // 3
        text = f"{text[:head]} ... ({cut} characters left out) ... {text[head + cut:]}"
    print(text, file=sys.stderr)


def output_failed(e: OSError) -> int:
    """Writing stdout (or another output) failed: one line, exit 2, and no second complaint at exit."""
    import os

    where = e.filename if e.filename else "output"
    try:  # what is still buffered for stdout goes nowhere, so Python's flush at exit does not fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    say_error(f"{where}: cannot write ({e.strerror or e}); the output is incomplete")
    return EXIT_INVALID


def say_json(obj, indent: int | None = None) -> None:
    """One JSON value, non-ASCII text as it is, control and invisible characters as \\u escapes."""
    print(visible_json(json.dumps(obj, ensure_ascii=False, indent=indent)))
