"""Who may open `rankgate review --serve`, from where, and how much a session may take.

textual-serve (the `web` extra) serves a Textual app with no login. This wraps its aiohttp server:

* **Access.** Every request carries a secret: `?token=T` once (the server sets a cookie, a key made from T
  for this run of the server, and sends the browser on to the same page without T, as Jupyter does), the
  cookie after that, or an
  `Authorization: token T` header for scripts. Anything else gets 403 and one log line.
* **Origin and Host.** A request's Host must name this server (the served address, the `--public-url`, or,
  when serving on every address, an IP literal or this machine's name: a DNS name pointed at us by a foreign
  page, i.e. DNS rebinding, is refused), and an Origin, when sent, must be the page's own.
* **People.** With `--reviewers FILE` each token belongs to a person: a session opened with it labels
  as that person (no name asked, none to change), a viewer's token opens read-only.
* **URLs.** Every link, static and websocket URL derives from `--public-url` (TLS ends at the proxy), else
  from the request's checked Host, so a colleague's browser works with `--host 0.0.0.0`.
* **Bounds.** Terminal size capped, at most `max_sessions` at once and `per_reviewer` of them for one person
  of the reviewers file (a refused page says so), an idle timeout, and a session's process ends within
  seconds of its client leaving.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from rankgate.core.errors import InputError
from rankgate.core.text import visible

MAX_WIDTH, MAX_HEIGHT = 500, 200  # the largest terminal a browser may ask for
TOKEN_ENV = "RANKGATE_TOKEN"
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~-]{16,256}")  # URL-safe, long enough not to be guessed
QUIT_GRACE = 2.0  # seconds a session's app has to quit by itself before it is terminated (then killed)


@dataclass(frozen=True)
class Person:
    name: str  # "" for the single token of a server without --reviewers: the session asks the name
    viewer: bool = False


@dataclass
class Access:
    """The tokens this server accepts, each naming who opens a session with it."""

    tokens: dict[str, Person] = field(default_factory=dict)

    def who(self, token: str | None) -> Person | None:
        if not token:
            return None
        found = None
        for known, person in self.tokens.items():  # compared in constant time, every token every time
            if hmac.compare_digest(known.encode(), token.encode()):
                found = person
        return found


def check_token(token: str, where: str, line: int | None = None) -> str:
    token = token.strip()
    if not TOKEN_SHAPE.fullmatch(token):
        raise InputError(where, "a token is 16 to 256 characters of letters, digits and . _ ~ - "
                         "(e.g. python3 -c 'import secrets; print(secrets.token_urlsafe(24))')", line=line)
    return token


def open_to_others(path: str) -> str:
    """A warning when the file of tokens may be read by other users of this machine ("" when not)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    if os.name != "posix" or not mode & 0o044:
        return ""
    return (f"warning: {visible(path)} can be read by other users of this machine, and its tokens open the "
            f"server: chmod 600 {visible(path)}")


def single_token(token_file: str | None) -> tuple[str, str]:
    """The one token of a server without --reviewers, and where it came from: --token-file (its first
    line), $RANKGATE_TOKEN, else a new random one."""
    if token_file:
        from rankgate.core.formats.textio import read_text

        text = read_text(token_file, limit=4096, what="a token file")
        first = text.splitlines()[0] if text.strip() else ""
        return check_token(first, token_file, line=1), "file"
    if os.environ.get(TOKEN_ENV):  # taken out: no session, nor a judge program one starts, inherits it
        return check_token(os.environ.pop(TOKEN_ENV), f"${TOKEN_ENV}"), "env"
    return secrets.token_urlsafe(24), "new"


def read_reviewers(path: str) -> Access:
    """`--reviewers FILE`: TOML with `[reviewers]` (name = "token") and `[viewers]` (name = "token")."""
    from rankgate.core.benchmark import load_toml, toml_key_line
    from rankgate.tui.web_rules import reviewer_problem

    data = load_toml(path)
    unknown = sorted(set(data) - {"reviewers", "viewers"})
    if unknown:
        raise InputError(path, f"unknown table or key {visible(unknown[0])!r}: expected [reviewers] and [viewers] "
                         "tables of name = \"token\"", line=toml_key_line(path, "", unknown[0]))
    access = Access()
    for table in ("reviewers", "viewers"):
        people = data.get(table, {})
        if not isinstance(people, dict):
            raise InputError(path, f"{table} must be a table ([{table}]) of name = \"token\"")
        for name, token in people.items():
            line = toml_key_line(path, table, name)
            if not isinstance(token, str):
                raise InputError(path, f"[{table}] {visible(name)}: the token must be a string", line=line)
            if why := reviewer_problem(name):
                raise InputError(path, f"[{table}] '{visible(name)}': {why}", line=line)
            token = check_token(token, path, line)
            if token in access.tokens:
                raise InputError(path, f"[{table}] {visible(name)}: the same token as "
                                 f"{visible(access.tokens[token].name)}; every person needs their own", line=line)
            access.tokens[token] = Person(name.strip(), viewer=table == "viewers")
    if not any(not p.viewer for p in access.tokens.values()):
        raise InputError(path, "no reviewers: add a [reviewers] table of name = \"token\" (viewers only read)")
    return access


# --------------------------------------------------------------------------- Host and Origin


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def host_name(host: str) -> str:
    """A host as compared: lower case, an IP address in its one short form ('0:0::1' -> '::1')."""
    host = host.strip("[]").lower()
    try:
        return ipaddress.ip_address(host).compressed
    except ValueError:
        return host


def split_host(value: str) -> tuple[str, int | None]:
    """'example.org:8443' -> ('example.org', 8443); '[::1]:80' -> ('::1', 80); bad -> ('', None)."""
    try:
        parts = urlsplit("//" + value)
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return "", None


@dataclass
class Place:
    """Where this server is reached: the bound address and port, and the public URL when there is one."""

    host: str
    port: int
    public_url: str | None = None

    def __post_init__(self) -> None:
        own = host_name(self.host)  # the address served names it too (127.0.0.2, ::1 written out in full)
        self.names = {"localhost", "127.0.0.1", "::1", own} if _loopback(own) else {own}
        self.everywhere = self.host in ("0.0.0.0", "::", "")
        if self.everywhere:
            self.names |= {socket.gethostname().lower(), socket.getfqdn().lower(), "localhost"}
        self.public = urlsplit(self.public_url) if self.public_url else None

    def host_ok(self, value: str | None) -> bool:
        """A Host header naming this server (a foreign name is a rebinding attempt, or a mistake)."""
        if not value:
            return False
        name, port = split_host(value)
        if not name:
            return False
        name = host_name(name)
        if self.public is not None and name == (self.public.hostname or "").lower() and \
                (port or _default_port(self.public.scheme)) == (self.public.port or _default_port(self.public.scheme)):
            return True
        if (port or 80) != self.port:
            return False
        return name in self.names or (self.everywhere and is_ip(name))

    def base_url(self, request_host: str) -> str:
        """The URL every link, static file and websocket of a page derives from."""
        if self.public_url:
            return self.public_url.rstrip("/")
        name, port = split_host(request_host)  # rebuilt from the checked parts: no path or quote of the header's
        return f"http://{f'[{name}]' if ':' in name else name}" + (f":{port}" if port else "")

    def origin_ok(self, origin: str | None, request_host: str) -> bool:
        """The page's own origin (an absent Origin is a script, not a page: its token decides)."""
        if origin is None:
            return True
        base = urlsplit(self.base_url(request_host))
        return origin.rstrip("/").lower() == f"{base.scheme}://{base.netloc}".lower()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _loopback(host: str) -> bool:
    from rankgate.tui.web_rules import is_loopback

    return is_loopback(host)


def check_public_url(url: str) -> str:
    """The URL as every page derives from it: scheme and host in lower case (an `HTTPS://` URL still gets
    wss: and a Secure cookie), no user or password (a browser's Origin never carries them)."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.query or parts.fragment \
            or "@" in parts.netloc or any(ch.isspace() or ch in '"<>\\' for ch in url.strip()):
        raise InputError("--public-url", f"{visible(url)} is not a URL such as https://labels.example.org "
                         "(http or https, a host, an optional path; no user, query or spaces)")
    try:
        port = parts.port
    except ValueError:
        raise InputError("--public-url", f"{visible(url)}: the port is not a number") from None
    if port == 0:
        raise InputError("--public-url", f"{visible(url)}: the port is not a number from 1 to 65535")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host + (f":{port}" if port is not None else "")
    return f"{parts.scheme.lower()}://{netloc}{parts.path}".rstrip("/")


# --------------------------------------------------------------------------- pages

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto"><h1>{title}</h1><p>{text}</p></body></html>
"""


def page(status: int, title: str, text: str):
    from aiohttp import web
    import html

    return web.Response(status=status, content_type="text/html",
                        text=PAGE.format(title=html.escape(title), text=html.escape(text)))


def clamp_size(width, height) -> tuple[int, int]:
    """A terminal size from a browser: numbers, at least 1x1, at most MAX_WIDTH x MAX_HEIGHT."""
    def number(value, default: int, top: int) -> int:
        try:
            n = int(value)
        except (TypeError, ValueError, OverflowError):
            return default
        return max(1, min(n, top))

    return number(width, 80, MAX_WIDTH), number(height, 24, MAX_HEIGHT)


def log(line: str) -> None:
    stamp = time.strftime("%H:%M:%S")
    print(f"[{stamp}] {line}", file=sys.stderr, flush=True)


def parse_message(data: str):
    """A browser message as textual-serve's page sends it (["stdin", "..."], ["resize", {...}] ...), or None."""
    try:
        envelope = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: a message of thousands of nested brackets
        return None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None
    return envelope


async def stop_service(service) -> None:
    """Ask the session's app to quit; terminate it after QUIT_GRACE, kill it a second later."""
    process = getattr(service, "_process", None)
    try:
        await asyncio.wait_for(asyncio.shield(service.stop()), QUIT_GRACE)
    except (asyncio.TimeoutError, Exception):
        pass
    if process is None or process.returncode is not None:
        return
    for signal_it in (process.terminate, process.kill):
        try:
            signal_it()
            await asyncio.wait_for(process.wait(), 1.0)
            return
        except (ProcessLookupError, asyncio.TimeoutError):
            continue


# --------------------------------------------------------------------------- the server

# textual-serve's page says only "Session ended." when the socket closes: say why it may have
SESSION_ENDED = b'<div class="message">Session ended.</div>'
SESSION_ENDED_WHY = (b'<div class="message">Session ended: idle too long, the server stopped, or every session '
                     b'was in use (all of them, or all one person may hold). Restart opens a new one.</div>')
NOT_FRAMED = {"Content-Security-Policy": "frame-ancestors 'none'", "X-Frame-Options": "DENY",
              "Referrer-Policy": "no-referrer"}
COOKIE = "rankgate-token-{port}"  # cookies are not kept apart by port: the name is


@dataclass
class Limits:
    max_sessions: int = 16
    idle_timeout: float = 30 * 60.0  # seconds without a key from the browser
    # A client that closes its tab closes its socket: its session ends at once. One whose network is gone is
    # noticed by the heartbeat, within 1.5x this; its pong may take half of it (a loaded machine's browser).
    heartbeat: float = 8.0
    # Sessions one person (a token of --reviewers) may hold at once: one token no longer takes every slot.
    # The single token of a server without --reviewers is the whole team's: it is not a person, not capped.
    per_reviewer: int = 4


class Guard:
    """Mixed into textual-serve's Server (`guarded_server`): the checks, the pages and the bounded sessions."""

    service_class = None  # textual-serve's AppService; tests put a recorder here

    def __init__(self, commands, *, place: Place, access: Access, limits: Limits, title: str) -> None:
        super().__init__("rankgate review", host=place.host, port=place.port, title=title,
                         public_url=place.public_url)
        self.commands = commands  # Person -> the command of that person's session
        self.place, self.access, self.limits = place, access, limits
        self.cookie = COOKIE.format(port=place.port)
        # The cookie holds a key made from the token for this run of the server, not the token: browsers send
        # a cookie to every port of its host, so a program on another port may see it; the person's token
        # (in the reviewers file for weeks) stays out of it, and a restart makes every such key worthless.
        self.run_secret = secrets.token_bytes(32)
        self.cookies = Access({self.cookie_key(t): p for t, p in access.tokens.items()})
        self.sessions: dict = {}  # each open session (textual-serve's AppService) -> the Person it runs as

    def cookie_key(self, token: str) -> str:
        return hmac.new(self.run_secret, token.encode(), "sha256").hexdigest()

    def initialize_logging(self) -> None:  # one line per refusal or session, ours (no banner)
        pass

    async def on_startup(self, app) -> None:
        pass

    async def _make_app(self):
        import aiohttp_jinja2
        import jinja2
        from aiohttp import web

        app = web.Application(middlewares=[self.guard, self.local_only])
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.static("/static", self.statics_path, name="static"),
        ])
        return app

    def refuse(self, request, why: str):
        log(f"refused {request.method} {visible(request.path)} from {request.remote}: {why}")
        return page(403, "Forbidden", f"{why}.")

    def switch_refused(self, request, person: Person) -> str:
        """Why a link from another page may not sign this browser in as someone else ("" when it may): a page
        elsewhere that knows a teammate's token would have the next grades made in this browser credited to
        them. A link typed or pasted into the address bar (Sec-Fetch-Site: none) switches as asked."""
        now = self.cookies.who(request.cookies.get(self.cookie))
        if now is None or now == person or request.headers.get("Sec-Fetch-Site", "none") in ("none", "same-origin"):
            return ""
        return (f"a link from another page would sign this browser in as {visible(person.name) or 'someone'} "
                f"instead of {visible(now.name) or 'its person'}; paste the link into the address bar to switch")

    async def guard(self, request, handler):
        from aiohttp import web

        host = request.headers.get("Host")
        if not self.place.host_ok(host):
            return self.refuse(request, f"Host {visible(host or '(none)')!r} does not name this server")
        if not self.place.origin_ok(request.headers.get("Origin"), host):
            return self.refuse(request, f"Origin {visible(request.headers['Origin'])!r} is not this server's")
        given = request.query.get("token")
        if given is not None:  # from the printed link: a cookie, and the same page without the token
            person = self.access.who(given)
            if person is None:
                return self.refuse(request, "wrong token")
            if (why := self.switch_refused(request, person)):
                return self.refuse(request, why)
            query = {k: v for k, v in request.query.items() if k != "token"}
            target = request.rel_url.with_query(query)
            response = web.HTTPFound(self.place.base_url(host) + str(target))
            response.set_cookie(self.cookie, self.cookie_key(given), httponly=True, samesite="Strict",
                                secure=self.place.base_url(host).startswith("https:"), path="/")
            raise response
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("token "):
            token = header[6:].strip()
            person = self.access.who(token)
        else:
            token = request.cookies.get(self.cookie)
            person = self.cookies.who(token)
        if person is None:
            return self.refuse(request, "no token" if not token else "wrong token")
        request[person_key()] = person
        return await handler(request)

    guard.__middleware_version__ = 1  # aiohttp's new-style middleware (what @web.middleware marks)

    async def local_only(self, request, handler):  # the page fetches nothing from other hosts
        from rankgate.tui.web_rules import FONT_LINK

        response = await handler(request)
        if not response.prepared:  # no other page may frame this one (a page on another port of this host
            response.headers.update(NOT_FRAMED)  # is the same site: the cookie goes with it) or see its URL
        body = getattr(response, "body", None)
        if isinstance(body, bytes) and (response.content_type or "").startswith("text/html"):
            response.body = FONT_LINK.sub(b"", body).replace(SESSION_ENDED, SESSION_ENDED_WHY)
        return response

    local_only.__middleware_version__ = 1

    async def handle_index(self, request):
        import aiohttp_jinja2

        if (refused := self.over_limit(request, request[person_key()])) is not None:
            return refused
        base = self.place.base_url(request.headers["Host"])
        ws = ("wss:" if base.startswith("https:") else "ws:") + base.split(":", 1)[1] + "/ws"
        context = {"font_size": 16, "app_websocket_url": ws,
                   "config": {"static": {"url": base + "/static/"}}, "application": {"name": self.title}}
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    def over_limit(self, request, person: Person):
        """The page refusing a new session when the server, or this person, holds all it may (else None)."""
        if len(self.sessions) >= self.limits.max_sessions:
            log(f"refused a session from {request.remote}: {len(self.sessions)} sessions open (--max-sessions)")
            return page(503, "All sessions are in use",
                        f"This server runs at most {self.limits.max_sessions} sessions at once and all are open. "
                        "Close another tab or try again in a few minutes.")
        held = sum(1 for p in self.sessions.values() if p == person)
        if not person.name or held < self.limits.per_reviewer:
            return None
        log(f"refused a session for {visible(person.name)} from {request.remote}: {held} of theirs open "
            "(--max-sessions-per-reviewer)")
        minutes = f"{round(self.limits.idle_timeout / 60, 2):g}"  # (--idle-timeout 0.5 said "after 0 minutes")
        return page(429, "Too many sessions of yours",
                    f"{visible(person.name)} has {held} session{'s' if held != 1 else ''} open on this server, "
                    "the most one person may hold at once. Close one of them (a tab or a window left open "
                    f"elsewhere too) and reload this page; a session without a key ends by itself after {minutes} "
                    f"minute{'' if minutes == '1' else 's'}.")

    async def handle_websocket(self, request):
        from aiohttp import web

        person = request[person_key()]
        websocket = web.WebSocketResponse(heartbeat=self.limits.heartbeat, max_msg_size=1 << 16)
        await websocket.prepare(request)
        if self.over_limit(request, person) is not None:
            await websocket.close(code=1013, message=b"all sessions are in use")
            return websocket
        width, height = clamp_size(request.query.get("width"), request.query.get("height"))
        service = self.service_class("exec " + self.commands(person), write_bytes=websocket.send_bytes,
                                     write_str=websocket.send_str, close=websocket.close,
                                     download_manager=self.download_manager, debug=False)
        self.sessions[service] = person
        who = visible(person.name) or "(asks a name)"
        log(f"session for {who}{' (viewer)' if person.viewer else ''} from {request.remote}: "
            f"{len(self.sessions)} open")
        try:
            await service.start(width, height)
            await self.pump(websocket, service)
        except asyncio.CancelledError:
            pass
        finally:
            await stop_service(service)
            self.sessions.pop(service, None)
            if not websocket.closed:
                await websocket.close()
            why = f" (code {websocket.close_code})" if websocket.close_code not in (None, 1000, 1001) else ""
            log(f"session for {who} ended{why}: {len(self.sessions)} open")
        return websocket

    async def pump(self, websocket, service) -> None:
        """The browser's messages to the app, until the browser leaves or idles past the timeout."""
        from aiohttp import WSMsgType

        idle = self.limits.idle_timeout
        last_key = time.monotonic()
        while True:
            left = idle - (time.monotonic() - last_key)
            try:
                if left <= 0:
                    raise asyncio.TimeoutError
                message = await websocket.receive(timeout=left)
            except asyncio.TimeoutError:
                await websocket.close(code=1000, message=b"idle timeout")
                log(f"session closed: no key for {idle:.0f} s (--idle-timeout)")
                return
            if message.type != WSMsgType.TEXT:
                if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                    return
                continue
            envelope = parse_message(message.data)
            if envelope is None:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                last_key = time.monotonic()
                await service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(*clamp_size(data.get("width"), data.get("height")))
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()



@functools.cache
def person_key():
    """The request's key for who opened it."""
    from aiohttp import web

    return web.RequestKey("person", Person) if hasattr(web, "RequestKey") else "person"


def guarded_server(Server, AppService):
    """textual-serve's Server behind the token, Host and Origin checks, with its sessions bounded."""

    class GuardedServer(Guard, Server):
        service_class = AppService

    return GuardedServer
