"""`rankgate review --serve`: the same app in web browsers, through textual-serve (the `web` extra).

textual-serve starts one `rankgate review ...` process per browser session. Who may open one, from where,
and how much it may take: tui/webguard.py (a token, Host and Origin checks, per-person tokens, bounds).
Each session runs as its person (`--reviewer NAME`; `--viewer NAME` read-only; without --reviewers it asks
the name, `--ask-reviewer`), writes the benchmark's one workspace with the other sessions
(store/shared.py), shows their edits (tui/others.py), and exports only into the export folder
(`--export-dir`, `export_target`). Nothing here is a second implementation: the screens and keys are the
terminal app's.
"""

from __future__ import annotations

import os
import shlex
import sys

from rankgate.core.errors import InputError
from rankgate.core.formats import split_run_spec
from rankgate.core.text import visible
from rankgate.tui.web_rules import (  # noqa: F401 (their home: tui/web_rules.py)
    EXPORT_NAME, EXPORT_SUFFIXES, FONT_LINK, LOOPBACK, check_export_folder, export_name, export_target,
    is_loopback,
)

def session_command(args, person=None, export_dir: str | None = None) -> list[str]:
    """The command a browser session runs: this review, with paths made absolute, as `person`
    (webguard.Person: a named reviewer, a viewer, or none: the session asks the name)."""
    cmd = [sys.executable, "-m", "rankgate", "review"]
    path = args.path or args.qrels
    if path:
        cmd.append(os.path.abspath(path))
    for run in args.runs:
        name, file = split_run_spec(run)
        cmd += ["--runs", f"{name}={os.path.abspath(file)}" if name else os.path.abspath(file)]
    for flag, value in (("--queries", args.queries), ("--corpus", args.corpus), ("--policy", args.policy)):
        if value:
            cmd += [flag, os.path.abspath(value)]
    for flag, value in (("--k", args.k), ("--rel-level", args.rel_level)):
        if value is not None:
            cmd += [flag, str(value)]
    for m in args.measure:
        cmd += ["-m", m]
    for flag, value in (("--missing-queries", getattr(args, "missing_queries", None)),
                        ("--short-rankings", getattr(args, "short_rankings", None))):
        if value:  # the gate's input options: each session decides as the gate would
            cmd += [flag, value]
    if args.db:
        cmd += ["--db", os.path.abspath(args.db)]
    if getattr(args, "allow_snapshot_mismatch", False):
        cmd.append("--allow-snapshot-mismatch")
    if args.blind:
        cmd.append("--blind")
    if export_dir:
        cmd += ["--export-dir", export_dir]
    if person is not None and person.viewer:  # `--viewer=NAME`: a name such as "-bob" is not taken for an option
        return cmd + [f"--viewer={person.name}"]
    if person is not None and person.name:
        return cmd + [f"--reviewer={person.name}"]
    return cmd + ["--ask-reviewer"]


def check_address(host: str, port: int) -> None:
    """An InputError when the server could not listen on host:port (an unknown name, a port in use)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, ValueError):
        raise InputError("--host", f"{visible(host)} is not an address or a known host name "
                         "(e.g. 127.0.0.1)") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(address)
        except OSError as e:
            raise InputError("--port", f"cannot listen on {visible(host)}:{port}: {e.strerror or e} "
                             "(another program may use it: choose another --port)") from None


def _check_numbers(args) -> None:
    """--k, --rel-level and -m as every session would read them: refused once, before serving."""
    from rankgate.core.benchmark import MAX_K
    from rankgate.core.measures import parse_measures
    from rankgate.core.model import grade_problem

    if args.k is not None and not 1 <= args.k <= MAX_K:
        raise InputError("--k", f"k must be between 1 and {MAX_K}, found {args.k}")
    if args.rel_level is not None and (why := grade_problem(args.rel_level)) is not None:
        raise InputError("--rel-level", why)
    for m in args.measure:
        parse_measures(m)


def serve(args) -> int:
    if args.reviewer:
        raise InputError("--serve", "each browser session's reviewer comes from its token (--reviewers FILE) or "
                         "is asked in the page: leave out --reviewer")
    if not (args.path or args.qrels or args.queries):
        raise InputError("--serve", "name a benchmark folder or a qrels file to serve")
    if not 0 < args.port < 65536:
        raise InputError("--port", f"{args.port} is not a port (1-65535)")
    try:
        from textual_serve.server import Server
    except ImportError:
        raise InputError("--serve", "the browser face needs textual-serve: pip install 'rankgate[web]'") from None
    for flag, path in (("benchmark", args.path), ("--qrels", args.qrels), ("--queries", args.queries),
                       ("--corpus", args.corpus), ("--policy", args.policy),
                       *(("--runs", split_run_spec(r)[1]) for r in args.runs)):
        if path and not os.path.exists(path):  # else every browser session would fail on it
            raise InputError(path, f"no such file or folder ({flag})")
        if path and not (flag == "benchmark" and os.path.isdir(path)) and not path.startswith("irds:"):
            from rankgate.core.formats.textio import open_input

            open_input(path).close()  # a device, a pipe or a folder: refused here, not in every session
    _check_numbers(args)
    check_export_folder(export_folder(args))
    check_address(args.host, args.port)
    _serve(args)
    return 0


def export_folder(args) -> str:
    """Where exports from the browser go: --export-dir, else `exports` in the benchmark folder (beside the
    qrels file named instead)."""
    if args.export_dir:  # the operator's choice, links followed once here: the sessions get the real folder
        return os.path.realpath(args.export_dir)
    path = os.path.abspath(args.path or args.qrels or args.queries)
    return os.path.join(path if os.path.isdir(path) else os.path.dirname(path), "exports")


def _serve(args) -> None:
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    from rankgate.tui import webguard

    public = webguard.check_public_url(args.public_url) if args.public_url else None
    if args.max_sessions < 1:
        raise InputError("--max-sessions", f"{args.max_sessions}: at least 1")
    if args.max_sessions_per_reviewer < 1:
        raise InputError("--max-sessions-per-reviewer", f"{args.max_sessions_per_reviewer}: at least 1")
    if not 0 < args.idle_timeout < float("inf"):  # nan and inf too: a session would never idle out
        raise InputError("--idle-timeout", f"{args.idle_timeout}: minutes, a number more than 0")
    if args.reviewers:
        access, token = webguard.read_reviewers(args.reviewers), None
    else:
        token, _ = webguard.single_token(args.token_file)
        access = webguard.Access({token: webguard.Person("")})
    exports = export_folder(args)
    place = webguard.Place(args.host, args.port, public)
    base = public or f"http://{'127.0.0.1' if place.everywhere else args.host}:{args.port}"
    if ":" in args.host and not place.everywhere and not public:
        base = f"http://[{args.host}]:{args.port}"
    for secrets_file in (args.reviewers, args.token_file):
        if secrets_file and (warning := webguard.open_to_others(secrets_file)):
            print(warning, file=sys.stderr)
    if not is_loopback(args.host) and not (public or "").startswith("https:"):
        print(f"warning: serving on {visible(args.host)}:{args.port} over plain http: the token travels "
              "unencrypted; put a TLS proxy in front and give its address with --public-url", file=sys.stderr)
    title = f"rankgate review {os.path.basename(os.path.abspath(args.path or args.qrels or args.queries))}"
    server_class = webguard.guarded_server(Server, AppService)
    server = server_class(lambda person: shlex.join(session_command(args, person, exports)), place=place,
                          access=access, limits=webguard.Limits(args.max_sessions, args.idle_timeout * 60,
                                                                 per_reviewer=args.max_sessions_per_reviewer),
                          title=visible(title))
    elsewhere = " (from another machine: this machine's address for 127.0.0.1)" if place.everywhere and not public \
        else ""
    if token is not None:
        print(f"rankgate review: open {base}/?token={token}{elsewhere}", flush=True)
    else:
        people = sorted(p.name for p in access.tokens.values())
        print(f"rankgate review: each person opens {base}/?token=THEIR_TOKEN{elsewhere} (from "
              f"{visible(args.reviewers)}: {visible(', '.join(people))})", flush=True)
    print(f"exports from the browser go to {visible(exports)}; Ctrl+C stops the server", flush=True)
    try:
        server.serve()
    except OSError as e:  # lost the port between the check and the start
        raise InputError("--port", f"cannot listen on {visible(args.host)}:{args.port}: {e.strerror or e}") from None
