"""`rankgate review`: open the review app (textual is imported only when it runs)."""

from __future__ import annotations

import argparse
import os
import sys


RAW_K = 10  # k for raw files (no benchmark folder, no policy file): what `rankgate init` writes


def register(sub) -> None:
    review = sub.add_parser("review", help="open the review app on a benchmark folder or on qrels and runs")
    review.add_argument("path", nargs="?", help="a benchmark folder (with benchmark.toml) or a qrels file")
    review.add_argument("--qrels", help="the qrels file (instead of PATH)")
    review.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE",
                        help="run file (repeatable): TREC, the release-gate JSON, or JSONL")
    review.add_argument("--queries", metavar="FILE",
                        help="query texts: JSONL, id<TAB>text TSV, TREC topics or BEIR queries.jsonl (.gz ok)")
    review.add_argument("--corpus", metavar="FILE",
                        help="document texts: JSONL (docid/_id/id, title, text/contents), TSV, TREC <DOC> or "
                        "BEIR corpus.jsonl (.gz ok)")
    review.add_argument("--k", type=int, help=f"the cutoff k (default: policy, manifest; for raw files {RAW_K}, "
                        "as `rankgate init` writes)")
    review.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (default: manifest, else 1)")
    review.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                        help="extra measures for the gate: nDCG@10, AP, RR@10, P(rel=2)@10 ... (repeatable)")
    review.add_argument("--policy", metavar="FILE", help="policy file (TOML): docs/policy.md")
    # The gate's input options, as `rankgate gate` takes them: the app shows NO DECISION where the gate refuses.
    review.add_argument("--missing-queries", choices=("error", "zero"),
                        help="a judged query a run does not rank, or a ranked query nobody judged: no decision "
                        "(error, the gate's default) or scored 0 / left out (zero)")
    review.add_argument("--short-rankings", choices=("error", "allow"),
                        help="a ranking shorter than k: no decision (error, the gate's default) or allow")
    review.add_argument("--allow-snapshot-mismatch", action="store_true",
                        help="decide although the runs' corpus_snapshot differs from the labels' collection_version")
    review.add_argument("--db", help="the label workspace file (default: the user's data folder); its .journal, "
                        ".history and .lock beside it belong to it: a backup copies them all")
    review.add_argument("--reviewer", help="your name in the label history")
    review.add_argument("--judge", action="store_true",
                        help="open on the judging screen: the query, one passage, the grade keys (l on the panes)")
    review.add_argument("--blind", action="store_true",
                        help="blind review: see only your own grades, runs' documents without ranks (B toggles)")
    web = review.add_argument_group("the browser face (pip install 'rankgate[web]')")
    web.add_argument("--serve", action="store_true",
                     help="serve the app to web browsers (a secret token in the printed URL opens it); every "
                     "session labels in the benchmark's one workspace, each edit under its reviewer's name")
    web.add_argument("--host", default="127.0.0.1",
                     help="address to serve on (default 127.0.0.1; 0.0.0.0: every address of this machine)")
    web.add_argument("--port", type=int, default=8000, help="port to serve on (default 8000)")
    web.add_argument("--public-url", metavar="URL",
                     help="the address people open, e.g. https://labels.example.org behind a TLS proxy: every "
                     "link and websocket URL derives from it, and requests must name it")
    web.add_argument("--token-file", metavar="FILE",
                     help="the secret token (its first line; else $RANKGATE_TOKEN, else a new one is printed)")
    web.add_argument("--reviewers", metavar="FILE",
                     help="TOML: [reviewers] name = \"token\" (each labels as themself), [viewers] (read-only)")
    web.add_argument("--max-sessions", type=int, default=16, metavar="N", help="browser sessions at once (default 16)")
    web.add_argument("--max-sessions-per-reviewer", type=int, default=4, metavar="N",
                     help="sessions one person of --reviewers may hold at once (default 4)")
    web.add_argument("--idle-timeout", type=float, default=30, metavar="MINUTES",
                     help="close a session after this long without a key (default 30)")
    web.add_argument("--export-dir", metavar="DIR",
                     help="where exports from the browser are written (default: exports/ in the benchmark folder)")
    review.add_argument("--ask-reviewer", action="store_true", help=argparse.SUPPRESS)  # a served session
    review.add_argument("--viewer", help=argparse.SUPPRESS)  # a served session opened with a viewer's token
    review.set_defaults(func=run, usage=review)


def raw_defaults(args) -> None:
    """Raw files open at the k a benchmark folder made from them by `rankgate init` would have."""
    from rankgate.core.benchmark import is_benchmark

    path = args.path or args.qrels
    if args.k is None and not args.policy and not (path and is_benchmark(path)):
        args.k = RAW_K


NO_TERMINAL = "rankgate review needs a terminal; use --serve for a browser, or rankgate gate/score in scripts"


def has_terminal() -> bool:
    """The app reads keys from stdin and draws on stdout/stderr: without a terminal on all three it would
    draw into a file or a pipe and wait for keys forever. A Textual driver named in TEXTUAL_DRIVER (each
    `--serve` browser session runs with textual-serve's web driver, on pipes) needs none."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return True
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout, sys.stderr))


def run(args) -> int:
    from rankgate.cli.base import EXIT_INVALID

    if not (args.path or args.qrels or args.queries or args.serve):  # nothing to review: say how, and where
        args.usage.print_usage(sys.stderr)
        print("rankgate review: name a benchmark folder or a qrels file; to try it on a sample:\n"
              "  rankgate samples copy samples && rankgate review samples/ops-handbook", file=sys.stderr)
        return EXIT_INVALID
    served_only = [flag for flag, value in (("--public-url", args.public_url), ("--token-file", args.token_file),
                                            ("--reviewers", args.reviewers)) if value]
    if served_only and not args.serve:
        print(f"error: {served_only[0]}: only with --serve (the browser face)", file=sys.stderr)
        return EXIT_INVALID
    if args.serve:
        from rankgate.tui.serve import serve

        return serve(args)
    raw_defaults(args)
    if not has_terminal():  # checked here, not in the app: tests drive the app headless (App.run_test)
        from rankgate.core.errors import InputError
        from rankgate.tui.loader import Inputs, check_inputs

        try:
            check_inputs(Inputs.from_args(args))  # a missing file is said first, as with a terminal
        except InputError as e:
            from rankgate.cli.base import say_error

            say_error(e)  # escaped: a file name may hold a newline (a forged CI annotation)
            return EXIT_INVALID
        print(f"error: {NO_TERMINAL}", file=sys.stderr)
        return EXIT_INVALID
    from rankgate.tui.loader import Inputs, read_ahead  # (numpy and the core, which the app imports anyway)

    ahead = read_ahead(Inputs.from_args(args))  # a first open's run files parsed while Textual is imported
    from rankgate.tui.app import run_review  # textual is imported only here

    return run_review(args, ahead)
