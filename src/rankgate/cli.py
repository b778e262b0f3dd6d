"""The command group: `rankgate validate | score | compare | gate | labels | review ...`.

Never imports textual at module level: the CI path (validate, score, gate)
starts fast and stays headless. The app is imported inside `review`.
"""

from __future__ import annotations

import argparse
import sys

from rankgate import __version__
from rankgate.core.errors import InputError, ValidationError

EXIT_OK, EXIT_INVALID, EXIT_REJECTED = 0, 2, 3


class UsageError(Exception):
    """Wrong words on the command line (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as for any bad input
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rankgate", description="Score retrieval runs against reviewed labels; gate releases.")
    parser.add_argument("--version", action="version", version=f"rankgate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    from rankgate import commands

    commands.register(sub)
    from rankgate.store import commands as label_commands

    label_commands.register(sub)
    review = sub.add_parser("review", help="open the review app on a benchmark folder or on qrels and runs")
    review.add_argument("path", nargs="?", help="a benchmark folder (with benchmark.toml) or a qrels file")
    review.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE")
    review.add_argument("--db", help="the label workspace file (default: the user's data folder)")
    review.add_argument("--reviewer", help="your name in the label history")
    review.add_argument("--blind", action="store_true",
                        help="blind review: see only your own grades, runs' documents without ranks (B toggles)")
    review.set_defaults(func=_review)
    return parser


def _review(args) -> int:
    from rankgate.tui.app import run_review  # textual is imported only here

    return run_review(args)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_INVALID
        return int(args.func(args) or 0)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INVALID
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INVALID
    except ValidationError as e:
        for p in e.problems:
            print(f"error: {p}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
