"""The command group: `rankgate validate | score | compare | gate | receipt | labels | review ...`.

One package for every command face: the parser and entry point (here), the
evaluation commands (evaluate), the labels commands (labels), the review app's
command (review), plain-text tables (tables), the progress line (progress), and
the exit codes and usage helper they share (base). Never imports textual at
module level: the CI path (validate, score, gate) starts fast and stays
headless. The app is imported inside `review`.
"""

from __future__ import annotations

import argparse
import sys

from rankgate import __version__
from rankgate.cli.base import EXIT_INVALID, EXIT_OK, Parser, UsageError, check_text, output_failed, say_error
from rankgate.core.errors import InputError, ValidationError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    from rankgate.cli import evaluate, funnel, init, labels, review

    parser = Parser(prog="rankgate", description="Score retrieval runs against reviewed labels; gate releases.")
    parser.add_argument("--version", action="version", version=f"rankgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    evaluate.register(sub)
    init.register(sub)
    labels.register(sub)
    review.register(sub)
    funnel.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from rankgate.core.outfile import forget_inputs

    forget_inputs()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        check_text(args)
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
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # writing the output failed: a full disk (ENOSPC), an I/O error
        return output_failed(e)
