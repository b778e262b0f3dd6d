"""`rankgate review --serve`: the same app in web browsers, through textual-serve (the `web` extra).

textual-serve starts one `rankgate review ... --ask-reviewer` process per browser session: that
session asks its reviewer's name first and labels in a workspace of its own
(store/paths.reviewer_workspace_path), so several experts label one benchmark at once; the lead brings
their workspaces together with `rankgate labels merge`. Nothing here is a second implementation: the
screens and keys are the terminal app's.
"""

from __future__ import annotations

import ipaddress
import re
import os
import shlex
import sys

from rankgate.core.errors import InputError
from rankgate.core.formats import split_run_spec
from rankgate.core.text import visible

LOOPBACK = {"localhost"}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def session_command(args) -> list[str]:
    """The command each browser session runs: this review, with paths made absolute, asking the reviewer."""
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
    if getattr(args, "allow_snapshot_mismatch", False):
        cmd.append("--allow-snapshot-mismatch")
    if args.blind:
        cmd.append("--blind")
    return cmd + ["--ask-reviewer"]


FONT_LINK = re.compile(rb'<link[^>]*href="https://fonts\.googleapis\.com[^"]*"[^>]*>', re.S)


def offline_server(Server):
    """textual-serve's Server whose page fetches nothing from other hosts (its page links a web font; the
    font ships in its static folder, so the page loses nothing)."""
    from aiohttp import web

    @web.middleware
    async def local_only(request, handler):
        response = await handler(request)
        body = getattr(response, "body", None)
        if isinstance(body, bytes) and (response.content_type or "").startswith("text/html"):
            response.body = FONT_LINK.sub(b"", body)
        return response

    class OfflineServer(Server):
        async def _make_app(self):
            app = await super()._make_app()
            app.middlewares.append(local_only)
            return app

    return OfflineServer


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
    if args.db or args.reviewer:
        raise InputError("--serve", "each browser session names its reviewer and gets a workspace of its own: "
                         "leave out --db and --reviewer")
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
    check_address(args.host, args.port)
    if not is_loopback(args.host):
        print(f"warning: serving on {visible(args.host)}:{args.port}: anyone who can reach this address can "
              "open the app and label under any name (the app has no login of its own)", file=sys.stderr)
    server_class = offline_server(Server)
    title = f"rankgate review {os.path.basename(os.path.abspath(args.path or args.qrels or args.queries))}"
    server = server_class(shlex.join(session_command(args)), host=args.host, port=args.port, title=visible(title))
    try:
        server.serve()
    except OSError as e:  # lost the port between the check and the start
        raise InputError("--port", f"cannot listen on {visible(args.host)}:{args.port}: {e.strerror or e}") from None
    return 0
