"""`rankgate review --serve` attacked over HTTP and websockets (tui/webguard.py), on 127.0.0.1 only.

The server runs in the test's event loop (aiohttp's TestServer) with a recorder in place of the app's
process, except where a real process must end. Refused: no token, a wrong token, a foreign Host (DNS
rebinding), a foreign Origin, a terminal larger than 500x200, more sessions than allowed, an idle session.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("textual_serve") is None,
                                reason="textual-serve is not installed (pip install 'rankgate[web]')")

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """Stands for textual-serve's AppService: records the sizes and keys a session's app would get."""

    made: list["Recorder"] = []

    def __init__(self, command, **_):
        self.command, self.sizes, self.keys, self.stopped = command, [], [], False
        Recorder.made.append(self)

    async def start(self, width, height):
        self.sizes.append((width, height))

    async def set_terminal_size(self, width, height):
        self.sizes.append((width, height))

    async def send_bytes(self, data):
        self.keys.append(data)

    async def blur(self):
        pass

    async def focus(self):
        pass

    async def stop(self):
        self.stopped = True


def make_server(*, host="127.0.0.1", port=None, public_url=None, access=None, service=Recorder, **limits):
    from textual_serve.server import Server

    from rankgate.tui import webguard

    port = port or free_port()
    access = access or webguard.Access({TOKEN: webguard.Person("")})
    cls = webguard.guarded_server(Server, service)
    commands = []

    def command(person):
        commands.append(person)
        return f"{sys.executable} -c 'import time; time.sleep(60)'"

    server = cls(command, place=webguard.Place(host, port, public_url), access=access,
                 limits=webguard.Limits(**limits), title="rankgate review test")
    server.commands_given = commands
    return server, port


def run(scenario, **server_options):
    """Serve on 127.0.0.1 and run `scenario(session, base URL, server)` against it."""
    import aiohttp
    from aiohttp import web

    async def main():
        Recorder.made = []
        server, port = make_server(**server_options)
        runner = web.AppRunner(await server._make_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
                return await scenario(session, f"http://127.0.0.1:{port}", server)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


AUTH = {"Authorization": f"token {TOKEN}"}


def test_no_token_or_a_wrong_one_is_refused_with_403_and_one_log_line(capsys):
    async def scenario(s, base, server):
        got = []
        for url, headers in ((base + "/", {}), (base + "/?token=wrong-token-0123456789", {}),
                             (base + "/static/js/textual.js", {}), (base + "/ws", {}),
                             (base + "/", {"Authorization": "token wrong-token-0123456789"})):
            async with s.get(url, headers=headers, allow_redirects=False) as r:
                got.append((r.status, "Forbidden" in await r.text()))
        return got

    assert run(scenario) == [(403, True)] * 5
    log = capsys.readouterr().err.splitlines()
    assert len([line for line in log if "refused" in line]) == 5
    assert any("refused GET /ws from 127.0.0.1: no token" in line for line in log), log
    assert not any(TOKEN in line or "wrong-token" in line for line in log)  # no secret in the log


def test_the_token_in_the_link_sets_a_cookie_and_the_page_loads_without_it():
    async def scenario(s, base, server):
        async with s.get(base + "/?token=" + TOKEN + "&fontsize=14", allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == base + "/?fontsize=14"
            cookie = r.cookies[f"rankgate-token-{server.place.port}"]
            assert cookie.value and cookie["httponly"] and cookie["samesite"] == "Strict"
        async with s.get(base + "/") as r:  # the cookie jar sends it
            page = await r.text()
        async with s.get(base + "/static/js/textual.js") as r:
            static = r.status
        return page, static

    page, static = run(scenario)
    assert 'data-session-websocket-url="ws://127.0.0.1:' in page and static == 200
    assert "fonts.googleapis.com" not in page  # the page fetches nothing from other hosts


def test_a_foreign_host_is_refused_an_ip_literal_on_every_address_is_not():
    async def scenario(s, base, server):
        got = {}
        for host in ("evil.example:%d", "localhost:%d", "127.0.0.1:%d", "127.0.0.1:1", "10.1.2.3:%d", ""):
            headers = dict(AUTH, Host=host.replace("%d", str(server.place.port)))
            async with s.get(base + "/", headers=headers) as r:
                got[host] = r.status
        return got

    assert run(scenario) == {"evil.example:%d": 403, "localhost:%d": 200, "127.0.0.1:%d": 200,
                             "127.0.0.1:1": 403, "10.1.2.3:%d": 403, "": 403}
    # on every address (0.0.0.0): any IP literal of the port, never a DNS name pointed at us (rebinding)
    got = run(scenario, host="0.0.0.0")
    assert got["10.1.2.3:%d"] == 200 and got["evil.example:%d"] == 403 and got["127.0.0.1:1"] == 403


def test_the_page_follows_the_checked_host_or_the_public_url():
    async def page_for(host_header):
        async def scenario(s, base, server):
            async with s.get(base + "/", headers=dict(AUTH, Host=host_header.replace("PORT", str(server.place.port)))) \
                    as r:
                return r.status, await r.text()
        return scenario

    status, page = run(asyncio.run(page_for("192.168.7.7:PORT")), host="0.0.0.0")
    assert status == 200 and 'data-session-websocket-url="ws://192.168.7.7:' in page
    assert 'href="http://192.168.7.7:' in page  # the static files too: not 0.0.0.0
    status, page = run(asyncio.run(page_for("labels.example.org")), public_url="https://labels.example.org")
    assert status == 200 and 'data-session-websocket-url="wss://labels.example.org/ws"' in page
    assert 'href="https://labels.example.org/static/css/xterm.css"' in page
    status, _ = run(asyncio.run(page_for("labels.example.org:8443")), public_url="https://labels.example.org")
    assert status == 403


def test_a_websocket_from_a_foreign_origin_is_refused_the_pages_own_is_served():
    import aiohttp

    async def scenario(s, base, server):
        ws_url = base.replace("http:", "ws:") + "/ws?width=80&height=24"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await s.ws_connect(ws_url, headers=dict(AUTH, Origin="http://evil.example"))
        async with s.ws_connect(ws_url, headers=dict(AUTH, Origin=base)) as ws:
            await ws.send_json(["stdin", "2"])
            await ws.send_json(["ping", "x"])
            pong = await ws.receive_json(timeout=5)
        return refused.value.status, pong

    status, pong = run(scenario)
    assert status == 403 and pong == ["pong", "x"]
    assert Recorder.made[0].keys == [b"2"] and Recorder.made[0].stopped


def test_a_huge_terminal_is_capped_and_junk_messages_are_ignored():
    async def scenario(s, base, server):
        ws_url = base.replace("http:", "ws:") + "/ws?width=100000&height=100000"
        async with s.ws_connect(ws_url, headers=AUTH) as ws:
            await ws.send_json(["resize", {"width": 10 ** 9, "height": -5}])
            await ws.send_str("not json")
            await ws.send_json({"type": "resize"})
            await ws.send_json(["resize", {"width": "wide", "height": 30}])
            await ws.send_json(["ping", 1])
            await ws.receive_json(timeout=5)

    run(scenario)
    assert Recorder.made[0].sizes == [(500, 200), (500, 1), (80, 30)]


def test_sessions_beyond_the_limit_get_a_readable_page_and_a_closed_socket():
    async def scenario(s, base, server):
        ws_url = base.replace("http:", "ws:") + "/ws"
        async with s.ws_connect(ws_url, headers=AUTH):
            for _ in range(50):
                if server.sessions:
                    break
                await asyncio.sleep(0.02)
            async with s.get(base + "/", headers=AUTH) as r:
                page = (r.status, await r.text())
            async with s.ws_connect(ws_url, headers=AUTH) as second:
                msg = await second.receive(timeout=5)
        return page, msg

    (status, text), msg = run(scenario, max_sessions=1)
    assert status == 503 and "at most 1 sessions at once" in text
    assert msg.type.name == "CLOSE" and msg.data == 1013


def test_one_person_holds_at_most_their_share_of_the_sessions_and_gets_a_readable_page(capsys):
    """Was: one reviewer token could open every one of --max-sessions (16) and lock the team out."""
    from rankgate.tui import webguard

    people = {"ana-token-0123456789": webguard.Person("ana"), "kofi-token-0123456789": webguard.Person("kofi")}

    async def scenario(s, base, server):
        ws_url = base.replace("http:", "ws:") + "/ws"
        ana = {"Authorization": "token ana-token-0123456789"}
        async with s.ws_connect(ws_url, headers=ana), s.ws_connect(ws_url, headers=ana):
            for _ in range(100):
                if len(server.sessions) == 2:
                    break
                await asyncio.sleep(0.02)
            async with s.get(base + "/", headers=ana) as r:
                page = (r.status, await r.text())
            async with s.ws_connect(ws_url, headers=ana) as third:
                refused = await third.receive(timeout=5)
            async with s.ws_connect(ws_url, headers={"Authorization": "token kofi-token-0123456789"}) as kofi:
                await kofi.send_json(["ping", 1])
                kofi_got = await kofi.receive_json(timeout=5)
        return page, refused, kofi_got

    (status, text), refused, kofi_got = run(scenario, access=webguard.Access(people), per_reviewer=2)
    assert status == 429 and "ana has 2 sessions open on this server, the most one person may hold at once" in text
    assert "Close one of them" in text
    assert refused.type.name == "CLOSE" and refused.data == 1013
    assert kofi_got == ["pong", 1]  # another person still gets a session
    log = capsys.readouterr().err
    assert "refused a session for ana from 127.0.0.1: 2 of theirs open (--max-sessions-per-reviewer)" in log


def test_the_single_token_of_a_server_without_reviewers_is_the_teams_and_not_capped_per_person():
    async def scenario(s, base, server):
        ws_url = base.replace("http:", "ws:") + "/ws"
        async with s.ws_connect(ws_url, headers=AUTH), s.ws_connect(ws_url, headers=AUTH):
            for _ in range(100):
                if len(server.sessions) == 2:
                    break
                await asyncio.sleep(0.02)
            async with s.get(base + "/", headers=AUTH) as r:
                return r.status, len(server.sessions)

    assert run(scenario, per_reviewer=1) == (200, 2)


def test_an_idle_session_is_closed():
    async def scenario(s, base, server):
        async with s.ws_connect(base.replace("http:", "ws:") + "/ws", headers=AUTH) as ws:
            started = time.monotonic()
            msg = await ws.receive(timeout=10)
            return msg.type.name, time.monotonic() - started

    kind, took = run(scenario, idle_timeout=0.5)
    assert kind == "CLOSE" and took < 5


@pytest.mark.slow
def test_a_sessions_process_ends_within_5_seconds_of_its_client_leaving():
    """The real textual-serve AppService, with a process that never answers the quit it is sent."""
    from textual_serve.app_service import AppService

    pids = []

    class Watched(AppService):
        async def start(self, width, height):
            await super().start(width, height)
            pids.append(self._process.pid)

    async def scenario(s, base, server):
        async with s.ws_connect(base.replace("http:", "ws:") + "/ws", headers=AUTH):
            for _ in range(100):
                if pids:
                    break
                await asyncio.sleep(0.05)
        left = time.monotonic()  # the client has gone
        while time.monotonic() - left < 5:
            if not server.sessions:
                break
            await asyncio.sleep(0.05)
        return time.monotonic() - left

    took = run(scenario, service=Watched)
    assert pids and took < 5
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)


def test_reviewers_file_tokens_name_people_and_viewers(tmp_path):
    from rankgate.core.errors import InputError
    from rankgate.tui.webguard import Person, read_reviewers

    f = tmp_path / "team.toml"
    f.write_text('[reviewers]\nana = "ana-token-0123456789"\ntomas = "tomas-token-0123456789"\n\n'
                 '[viewers]\nlead = "lead-token-0123456789"\n', encoding="utf-8")
    access = read_reviewers(str(f))
    assert access.who("ana-token-0123456789") == Person("ana")
    assert access.who("lead-token-0123456789") == Person("lead", viewer=True)
    assert access.who("ana-token-012345678") is None and access.who("") is None
    f.write_text('[reviewers]\nana = "ana-token-0123456789"\ntomas = "short"\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_reviewers(str(f))
    assert e.value.line == 3 and "16 to 256 characters" in e.value.what
    f.write_text('[reviewers]\nana = "same-token-0123456789"\ntomas = "same-token-0123456789"\n', encoding="utf-8")
    with pytest.raises(InputError, match="the same token as ana"):
        read_reviewers(str(f))


def test_a_persons_token_opens_a_session_as_that_person(tmp_path):
    from rankgate.tui import webguard
    from rankgate.tui.serve import session_command

    access = webguard.Access({"ana-token-0123456789": webguard.Person("ana"),
                              "lead-token-0123456789": webguard.Person("lead", viewer=True)})

    async def scenario(s, base, server):
        for token in ("ana-token-0123456789", "lead-token-0123456789"):
            async with s.ws_connect(base.replace("http:", "ws:") + "/ws",
                                    headers={"Authorization": f"token {token}"}) as ws:
                await ws.send_json(["ping", 0])
                await ws.receive_json(timeout=5)
        return server.commands_given

    assert run(scenario, access=access) == [webguard.Person("ana"), webguard.Person("lead", viewer=True)]

    class Args:  # what `rankgate review BENCH --serve` parsed
        path, qrels, runs, queries, corpus, policy, k, rel_level, measure, db = "b", None, [], None, None, None, \
            None, None, [], None
        blind = False

    ana = session_command(Args, webguard.Person("ana"), str(tmp_path / "exports"))
    assert ana[-1] == "--reviewer=ana" and "--ask-reviewer" not in ana and "--export-dir" in ana
    assert session_command(Args, webguard.Person("lead", viewer=True), "x")[-1] == "--viewer=lead"
    assert session_command(Args, webguard.Person(""), "x")[-1] == "--ask-reviewer"


@pytest.mark.parametrize("name", ["../escape.jsonl", "/etc/passwd.jsonl", "sub/x.jsonl", ".hidden.jsonl",
                                  "x.sh", "a..b.jsonl", "x\\y.jsonl", "", "name with space.jsonl"])
def test_export_from_the_browser_never_leaves_the_export_folder(tmp_path, name):
    from rankgate.core.errors import InputError
    from rankgate.tui.serve import export_target

    with pytest.raises(InputError):
        export_target(str(tmp_path / "exports"), name)
    assert not (tmp_path / "escape.jsonl").exists()


def test_export_takes_a_plain_name_in_the_folder_and_no_link(tmp_path):
    from rankgate.core.errors import InputError
    from rankgate.tui.serve import export_name, export_target

    folder = tmp_path / "exports"
    assert export_target(str(folder), "ana-round-2.jsonl") == folder / "ana-round-2.jsonl"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    (folder / "link.trec").symlink_to(victim)
    with pytest.raises(InputError, match="link"):
        export_target(str(folder), "link.trec")
    assert victim.read_text(encoding="utf-8") == "keep me"
    offered = export_name("ops handbook", "Ana María")
    assert export_target(str(folder), offered).parent == folder and offered.startswith("ops-handbook-Ana-Mar")


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "rankgate", *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "src"), **(env or {})))


@pytest.mark.slow
def test_bad_serve_options_say_one_line_and_exit_2(tmp_path):
    bench = str(ROOT / "sample_benchmarks" / "ops-handbook")
    bad = tmp_path / "team.toml"
    bad.write_text('[reviewers]\nana = "short"\n', encoding="utf-8")
    short = tmp_path / "token"
    short.write_text("abc\n", encoding="utf-8")
    for args, says in (([bench, "--serve", "--reviewers", str(bad)], "team.toml:2"),
                       ([bench, "--serve", "--token-file", str(short)], "token:1"),
                       ([bench, "--serve", "--public-url", "ftp://x"], "--public-url"),
                       ([bench, "--serve", "--max-sessions", "0"], "--max-sessions"),
                       ([bench, "--serve", "--max-sessions-per-reviewer", "0"], "--max-sessions-per-reviewer"),
                       ([bench, "--serve", "--reviewer", "ana"], "--reviewer")):
        out = cli("review", *args, "--port", str(free_port()))
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_an_export_folder_that_is_a_link_is_refused_and_nothing_is_written_where_it_points(tmp_path):
    """An `exports` link planted in the benchmark folder after the server started: the session refuses it (was:
    followed, the file written wherever the link points)."""
    from rankgate.core.errors import InputError
    from rankgate.tui.serve import export_target

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "exports"
    folder.symlink_to(elsewhere)
    with pytest.raises(InputError, match="the export folder is a symbolic link") as caught:
        export_target(str(folder), "ana-round-2.jsonl")
    assert caught.value.path == str(folder) and str(elsewhere) in caught.value.what
    assert list(elsewhere.iterdir()) == []
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")  # a link to nothing: not made into a folder
    with pytest.raises(InputError, match="symbolic link"):
        export_target(str(tmp_path / "dangling"), "x.jsonl")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.slow
def test_serving_a_benchmark_whose_exports_folder_is_a_link_says_one_line_and_exit_2(tmp_path):
    import shutil

    bench = tmp_path / "ops-handbook"
    shutil.copytree(ROOT / "sample_benchmarks" / "ops-handbook", bench)
    (tmp_path / "elsewhere").mkdir()
    (bench / "exports").symlink_to(tmp_path / "elsewhere")
    out = cli("review", str(bench), "--serve", "--port", str(free_port()))
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert lines[0] == (f"error: {bench / 'exports'}: the export folder is a symbolic link "
                        f"(to {tmp_path / 'elsewhere'}): exports from the browser go only into a real folder; "
                        "remove the link, or name a folder with --export-dir")
    real = tmp_path / "real-exports"  # the operator's --export-dir, a link: followed once, at start
    (tmp_path / "chosen").symlink_to(real, target_is_directory=True)
    from rankgate.tui.serve import export_folder

    class Args:
        export_dir, path, qrels, queries = str(tmp_path / "chosen"), str(bench), None, None

    assert export_folder(Args) == str(real)
