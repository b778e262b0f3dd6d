"""The command group: `rankgate validate | score | compare | gate | receipt | labels | review ...`.

One package for every command face: the parser and entry point (here), the
evaluation commands (evaluate), the labels commands (labels), the review app's
command (review), plain-text tables (tables), the progress line (progress), and
the exit codes and usage helper they share (base). Never imports textual at
module level: the CI path (validate, score, gate) starts fast and stays
headless. The app is imported inside `review`.
"""

from __future__ import annotations

import gc
import os
import sys

from rankgate.core.version import __version__
from rankgate.cli.base import EXIT_INVALID, EXIT_OK, UsageError, check_text, output_failed, say_error
from rankgate.core.errors import InputError, ValidationError

TYPE_CHECKING = False  # (typing.TYPE_CHECKING without importing typing: 10M instructions of `rankgate --help`)
if TYPE_CHECKING:  # argparse is loaded only when it reads the words (cli/fastargs.py)
    import argparse

__all__ = ["main", "build_parser"]


# Which module registers each command (its `register(sub)`), and the command's one line in
# `rankgate --help`. A command's flags are defined once, in its module; a run of one command imports
# only that module (and `rankgate --help` none of them: numpy is not loaded for it).
# tests/cli/test_startup.py checks this table against the modules.
COMMANDS = {
    "validate": ("evaluate", "check qrels and runs; exit 2 listing every problem"),
    "score": ("evaluate", "score runs: the release-gate JSON, trec_eval's lines, or a table"),
    "compare": ("evaluate", "per-query deltas, wins/losses, newly failed/fixed, slices, significance, rank movement: "
                "candidates against one baseline"),
    "gate": ("evaluate", "accept (exit 0) or reject (exit 3) a candidate run against a baseline"),
    "receipt": ("evaluate", "check a gate's receipt"),
    "trec_eval": ("trec_eval", "trec_eval 10's command line and output, line for line"),
    "init": ("init", "make a benchmark folder (benchmark.toml) from qrels, runs, queries and a corpus"),
    "labels": ("labels", "import, edit, freeze and export reviewed labels"),
    "review": ("review", "open the review app on a benchmark folder or on qrels and runs"),
    "funnel": ("funnel", "each relevant document's path through a pipeline's stages (retrieve, rerank, "
               "context): recall and losses per stage"),
    "samples": ("samples", "the bundled sample benchmarks: list them, copy them to a folder"),
    "docs": ("docs", "read the documentation offline: list the topics, or print one"),
}
MODULES = ("evaluate", "trec_eval", "init", "labels", "review", "funnel", "samples", "docs")  # in the order `rankgate --help` lists their commands
NUMPY_MODULES = ("evaluate", "funnel", "review")  # their commands all compute with numpy (trec_eval 10 does not)

# numpy's OpenBLAS starts one thread per core when it loads: about half the CPU time of `import numpy`, and
# rankgate's matrix products are small. Its own process loads numpy with one thread unless the user set one.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    from rankgate.cli.parser import Parser

    parser = Parser(prog="rankgate", description="Score retrieval runs against reviewed labels; gate releases.")
    parser.add_argument("--version", action="version", version=f"rankgate {__version__}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)


def build_parser(modules: tuple[str, ...] = MODULES, command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command of `modules` (default: all of them); with `command`, only that one's
    flags (a module's other commands are not built: evaluate's five hold a hundred flags)."""
    from importlib import import_module

    parser, sub = _parser()
    for name in modules:
        import_module(f"rankgate.cli.{name}").register(_OneCommand(sub, command) if command else sub)
    return parser


class _OneCommand:
    """What a module's `register(sub)` sees when one of its commands runs: that command's parser is built,
    the others are skipped (whatever register does to them does nothing)."""

    def __init__(self, sub, command: str):
        self._sub, self._command = sub, command

    def add_parser(self, name: str, **kwargs):
        return self._sub.add_parser(name, **kwargs) if name == self._command else _Skipped()

    def __getattr__(self, name: str):
        return getattr(self._sub, name)


class _Skipped:
    def __getattr__(self, name: str):
        return lambda *args, **kwargs: self


def _overview() -> argparse.ArgumentParser:
    """`rankgate` and `rankgate --help`: the commands and their one lines, no module imported."""
    parser, sub = _parser()
    for name, (_, line) in COMMANDS.items():
        sub.add_parser(name, help=line)
    return parser


def _parser_for(argv: list[str]) -> argparse.ArgumentParser:
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in COMMANDS:
        return build_parser((COMMANDS[command][0],), command)
    if command is None:
        return _overview()
    return build_parser()  # an unknown word: argparse names the choices


def _plain_args(argv: list[str]):
    """The command's namespace read without argparse (its import and the command's parser), as argparse would
    give it, when its words are plain; None otherwise (cli/fastargs.py)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    from rankgate.cli.fastargs import plain_args

    return plain_args(argv, COMMANDS[argv[0]][0])


def _numpy_one_thread() -> None:
    """Load numpy with a single OpenBLAS thread (the setting is read once, when OpenBLAS loads), then take the
    setting out again, so what rankgate starts (a judge command) gets the user's own environment."""
    import os

    if "numpy" in sys.modules or any(os.environ.get(name) for name in BLAS_THREADS):
        return
    before = os.environ.get("OPENBLAS_NUM_THREADS")  # unset, or set but empty (OpenBLAS's default)
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        if before is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = before


def _numpy_for(argv: list[str]) -> None:
    """A command that computes loads numpy with one BLAS thread and ordinary pages, before anything imports it."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command in COMMANDS and COMMANDS[command][0] in NUMPY_MODULES:
        _numpy_one_thread()
        from rankgate.core.pages import small_pages

        small_pages()  # (core/pages.py: huge pages cost `score` of a large run up to a CPU second)


class _ClosedOutput:
    """sys.stdout when the process started with it closed: a write fails as writing a closed descriptor does
    (OSError EBADF, which main reports in one line, exit 2: `output: cannot write (Bad file descriptor)`); a
    command that writes nothing to it runs as before."""

    def write(self, text: str) -> int:
        if text:
            import errno

            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        return 0

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def main(argv: list[str] | None = None) -> int:
    """The `rankgate` command. Without `argv` it is the process's own entry point (the `rankgate` script,
    `python -m rankgate`): it reads sys.argv, may load numpy with one BLAS thread, and keeps the garbage
    collector off while it imports (then freezes what was loaded): about 5% of `gate` on a small benchmark."""
    code = _run(argv)
    if argv is None and code == EXIT_INVALID and "pyarrow" in sys.modules:
        _end_now(code)
    return code


def _end_now(code: int) -> None:
    """End a process whose input was refused while Arrow's threads may still be at work (a run parsed ahead, a
    refused qrels file read by the fast reader first): its output flushed and its at-exit work done, without
    the interpreter's teardown, where Arrow's threads were torn down mid-task and the process aborted after
    its error line (exit 134, "terminate called without an active exception": 1 run in 40 under load)."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # (a closed or full output: already reported)
            pass
    atexit._run_exitfuncs()
    os._exit(code)


def _run(argv: list[str] | None) -> int:
    from rankgate.core.outfile import forget_inputs

    forget_inputs()
    from rankgate.cli import base

    base.decided_exit = None
    entry = argv is None
    if entry:
        argv = sys.argv[1:]
        if sys.stdout is None:  # started with standard output closed (`>&-`): Python gives None, and the first
            sys.stdout = _ClosedOutput()  # write was an AttributeError's traceback; now one line, exit 2
        gc.disable()  # start-up: imports allocate tens of thousands of objects and free almost none
    argv = list(argv)
    args = _plain_args(argv)  # plain words are read without argparse (cli/fastargs.py)
    parser = _parser_for(argv) if args is None else None  # imports the command's module
    try:
        try:
            if args is None:
                args = parser.parse_args(argv)
            check_text(args)
            if entry and getattr(args, "func", None):  # the words checked: usage, help, a group load no numpy
                _numpy_for(argv)
        finally:
            if entry:
                gc.freeze()  # what start-up loaded lives as long as the process: collections need not walk it again
                gc.enable()
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_INVALID
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed output is reported here, not at exit
        return code
    except UsageError as e:
        say_error(e)
        return EXIT_INVALID
    except InputError as e:
        say_error(e)
        return EXIT_INVALID
    except ValidationError as e:
        for p in e.problems:
            say_error(p)
        return EXIT_INVALID
    except MemoryError:  # the last guard: every reader bounds its memory, but a cap can be below what is kept
        gc.collect()
        from rankgate.core.text import visible

        from rankgate.cli import base

        command = next((a for a in argv if not a.startswith("-")), "rankgate")
        done = ("the JSON on standard output stops part-way: discard it" if base.stdout_cut else
                "nothing was written")
        print(f"error: out of memory in `rankgate {visible(command)}`: its inputs need more memory than this "
              f"process may use; {done}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader closed the pipe (`| head`): quiet, and a decided reject stays a reject
        from rankgate.cli import base

        try:  # what is still buffered for stdout goes nowhere, so Python's flush at exit does not fail again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_OK if base.decided_exit is None else base.decided_exit
    except OSError as e:  # writing the output failed: a full disk (ENOSPC), an I/O error
        return output_failed(e)
