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
    if not is_loopback(args.host):
        print(f"warning: serving on {visible(args.host)}:{args.port}: anyone who can reach this address can "
              "open the app and label under any name (the app has no login of its own)", file=sys.stderr)
    server_class = offline_server(Server)
    title = f"rankgate review {os.path.basename(os.path.abspath(args.path or args.qrels or args.queries))}"
    server = server_class(shlex.join(session_command(args)), host=args.host, port=args.port, title=visible(title))
    server.serve()
    return 0
