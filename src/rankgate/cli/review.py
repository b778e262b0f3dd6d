"""`rankgate review`: open the review app (textual is imported only when it runs)."""

from __future__ import annotations


def register(sub) -> None:
    review = sub.add_parser("review", help="open the review app on a benchmark folder or on qrels and runs")
    review.add_argument("path", nargs="?", help="a benchmark folder (with benchmark.toml) or a qrels file")
    review.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE")
    review.add_argument("--db", help="the label workspace file (default: the user's data folder)")
    review.add_argument("--reviewer", help="your name in the label history")
    review.add_argument("--blind", action="store_true",
                        help="blind review: see only your own grades, runs' documents without ranks (B toggles)")
    review.set_defaults(func=run)


def run(args) -> int:
    from rankgate.tui.app import run_review  # textual is imported only here

    return run_review(args)
