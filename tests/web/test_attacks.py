"""Red-team findings on `rankgate review --serve` (issue 34): each test failed before its fix."""

from __future__ import annotations

import importlib.util

import pytest

from tests.web.test_guard import AUTH, TOKEN, Recorder, run

pytestmark = pytest.mark.skipif(importlib.util.find_spec("textual_serve") is None,
                                reason="textual-serve is not installed (pip install 'rankgate[web]')")


def test_a_message_of_thousands_of_nested_brackets_is_ignored_and_the_session_lives():
    from rankgate.tui.webguard import parse_message

    deep = '["ping", ' + "[" * 20000 + "]" * 20000 + "]"  # under the 64 KiB message limit
    assert parse_message(deep) is None  # was: RecursionError, a traceback in the log, the session gone

    async def scenario(s, base, server):
        async with s.ws_connect(base.replace("http:", "ws:") + "/ws", headers=AUTH) as ws:
            await ws.send_str(deep)
            await ws.send_json(["ping", "still here"])
            return await ws.receive_json(timeout=5)

    assert run(scenario) == ["pong", "still here"]


@pytest.mark.parametrize("given,used", [
    ("HTTPS://Labels.Example.ORG/Team/", "https://labels.example.org/Team"),
    (" https://labels.example.org:8443 ", "https://labels.example.org:8443"),
    ("https://[::1]:8443/x", "https://[::1]:8443/x"),
])
def test_a_public_url_is_used_in_lower_case_scheme_and_host(given, used):
    from rankgate.tui.webguard import check_public_url

    assert check_public_url(given) == used


@pytest.mark.parametrize("url", ["https://user:secret@labels.example.org", "https://labels.example.org:0",
                                 "https://labels.example.org/a b", 'https://labels.example.org/"x'])
def test_a_public_url_with_a_user_a_zero_port_or_a_space_is_refused(url):
    from rankgate.core.errors import InputError
    from rankgate.tui.webguard import check_public_url

    with pytest.raises(InputError, match="--public-url"):
        check_public_url(url)


def test_an_upper_case_https_public_url_gives_a_secure_websocket_and_cookie():
    from rankgate.tui.webguard import check_public_url

    public = check_public_url("HTTPS://Labels.Example.ORG")

    async def scenario(s, base, server):
        async with s.get(base + f"/?token={TOKEN}", allow_redirects=False) as r:
            cookie = r.headers["Set-Cookie"]
        async with s.get(base + "/", headers={**AUTH, "Host": "labels.example.org:443"}) as r:
            return cookie, await r.text()

    cookie, page = run(scenario, public_url=public)
    assert "Secure" in cookie  # was: no Secure flag, and
    assert 'data-session-websocket-url="wss://labels.example.org/ws"' in page  # ws:, blocked on an https page


def test_the_page_urls_are_rebuilt_from_the_checked_host_not_copied_from_the_header():
    async def scenario(s, base, server):
        port = base.rsplit(":", 1)[1]
        host = f'127.0.0.1:{port}/x?"><b>'  # names this server (host and port), with a tail
        async with s.get(base + "/", headers={**AUTH, "Host": host}) as r:
            return port, r.status, await r.text()

    port, status, page = run(scenario)
    assert status == 200
    assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
    assert "/x?" not in page and "&lt;b&gt;" not in page


@pytest.mark.parametrize("name", ["-bob", "--blind"])
def test_a_reviewer_named_like_an_option_gets_a_session_as_that_reviewer(tmp_path, name):
    from rankgate.cli import build_parser
    from rankgate.tui import webguard
    from rankgate.tui.serve import session_command

    class Args:
        path, qrels, runs, queries, corpus, policy, k, rel_level, measure, db = "b", None, [], None, None, None, \
            None, None, [], None
        blind = False

    for person, field in ((webguard.Person(name), "reviewer"), (webguard.Person(name, viewer=True), "viewer")):
        argv = session_command(Args, person, str(tmp_path))[3:]  # after `python -m rankgate`
        parsed = build_parser().parse_args(argv)  # was: "argument --reviewer: expected one argument"
        assert getattr(parsed, field) == name and not parsed.blind


def test_an_export_from_the_browser_never_replaces_a_file_in_the_export_folder(tmp_path):
    from rankgate.core.errors import InputError
    from rankgate.tui.serve import export_target

    folder = tmp_path / "exports"
    folder.mkdir()
    theirs = folder / "ops-handbook-ana-20261207-101500.jsonl"
    theirs.write_text("ana's export\n", encoding="utf-8")
    with pytest.raises(InputError, match="already exists"):  # was: bob (or a viewer) typed ana's file's name
        export_target(str(folder), theirs.name)
    assert theirs.read_text(encoding="utf-8") == "ana's export\n"
    assert export_target(str(folder), "bob-round-1.jsonl") == folder / "bob-round-1.jsonl"


def test_a_reviewers_file_name_with_a_control_character_is_shown_escaped_once(tmp_path):
    from rankgate.core.errors import InputError
    from rankgate.tui.webguard import read_reviewers

    f = tmp_path / "team.toml"
    f.write_text('[reviewers]\n"eve\\u001b[31m" = "eve-token-0123456789"\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_reviewers(str(f))
    assert "'eve\\x1b[31m'" in e.value.what and "\x1b" not in e.value.what  # was: 'eve\\\\x1b[31m'


def test_the_cookie_holds_a_key_for_this_run_not_the_token():
    """Browsers send a cookie to every port of its host: a program on another port may read it. It was the
    token itself (a reviewer's, valid for weeks); now a key that this run of the server alone accepts."""
    async def scenario(s, base, server):
        name = f"rankgate-token-{server.place.port}"
        async with s.get(base + f"/?token={TOKEN}", allow_redirects=False) as r:
            key = r.cookies[name].value
        s.cookie_jar.clear()  # each request below sends only the cookie it names
        async with s.get(base + "/", headers={"Cookie": f"{name}={key}"}) as r:
            with_key = r.status
        async with s.get(base + "/", headers={"Cookie": f"{name}={TOKEN}"}) as r:
            with_token = r.status
        return key, with_key, with_token

    key, with_key, with_token = run(scenario)
    assert TOKEN not in key and with_key == 200 and with_token == 403
    again, *_ = run(scenario)  # the server started again: a new key, the old one worthless
    assert again != key


@pytest.mark.skipif(__import__("os").name != "posix", reason="file modes are POSIX")
def test_a_reviewers_file_other_users_can_read_is_warned_about(tmp_path):
    from rankgate.tui.webguard import open_to_others

    f = tmp_path / "team.toml"
    f.write_text('[reviewers]\nana = "ana-token-0123456789"\n', encoding="utf-8")
    f.chmod(0o644)
    said = open_to_others(str(f))
    assert "other users" in said and f"chmod 600 {f}" in said  # was: nothing said, the tokens open to all
    f.chmod(0o600)
    assert open_to_others(str(f)) == ""


@pytest.mark.parametrize("host,link", [("127.0.0.2", "127.0.0.2:8123"), ("0:0:0:0:0:0:0:1", "[::1]:8123"),
                                       ("LOCALHOST", "localhost:8123")])
def test_the_host_a_server_listens_on_is_a_name_of_that_server(host, link):
    from rankgate.tui.webguard import Place

    place = Place(host, 8123)
    assert place.host_ok(link)  # was: the link printed at start got 403 (Host does not name this server)
    assert not place.host_ok("evil.example:8123") and not place.host_ok(link.replace("8123", "8124"))


def test_the_page_says_why_a_session_may_have_ended():
    """Tabs opened at once all get the page; the one past --max-sessions has its socket closed: its page said
    only "Session ended." (was: no hint that every session was in use)."""
    async def scenario(s, base, server):
        async with s.get(base + "/", headers=AUTH) as r:
            return await r.text()

    page = run(scenario)
    assert "Session ended: idle too long, the server stopped, or every session was in use" in page


def test_no_other_page_may_frame_the_app():
    """A page on another port of 127.0.0.1 is the same site: the cookie went with its iframe and the live app,
    logged in, showed inside the foreign page (was: no frame-ancestors, no X-Frame-Options)."""
    async def scenario(s, base, server):
        got = []
        for path in ("/", "/static/js/textual.js"):
            async with s.get(base + path, headers=AUTH) as r:
                got.append((r.status, r.headers.get("Content-Security-Policy"), r.headers.get("X-Frame-Options")))
        return got

    assert run(scenario) == [(200, "frame-ancestors 'none'", "DENY")] * 2


@pytest.mark.slow
@pytest.mark.parametrize("minutes", ["nan", "inf", "-1"])
def test_an_idle_timeout_that_is_not_a_positive_number_is_refused(tmp_path, minutes):
    from tests.web.test_guard import ROOT, cli, free_port

    out = cli("review", str(ROOT / "sample_benchmarks" / "ops-handbook"), "--serve", "--port", str(free_port()),
              "--idle-timeout", minutes)  # was: nan and inf served, and no session ever idled out
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        f"error: --idle-timeout: {float(minutes)}: minutes, a number more than 0"]


def test_the_token_from_the_environment_is_not_passed_on_to_sessions(monkeypatch):
    import os

    from rankgate.tui.webguard import TOKEN_ENV, single_token

    monkeypatch.setenv(TOKEN_ENV, "env-token-0123456789")
    assert single_token(None) == ("env-token-0123456789", "env")
    assert TOKEN_ENV not in os.environ  # was: every session (and the judge program it runs) inherited it


def test_a_link_from_another_page_does_not_sign_the_browser_in_as_someone_else():
    """A page elsewhere (another port of the host is the same site) that knows bob's token sent ana's browser to
    /?token=BOB: her cookie became bob's and her next grades were credited to him."""
    from rankgate.tui import webguard

    ana, bob = "ana-token-0123456789", "bob-token-0123456789"
    access = webguard.Access({ana: webguard.Person("ana"), bob: webguard.Person("bob")})

    async def scenario(s, base, server):
        async with s.get(base + f"/?token={ana}") as r:  # ana signs in: her cookie
            assert r.status == 200
        got = []
        for site in ("same-site", "cross-site", "none"):
            async with s.get(base + f"/?token={bob}", headers={"Sec-Fetch-Site": site}, allow_redirects=False) as r:
                got.append((site, r.status, "paste the link" in await r.text()))
        return got

    assert run(scenario, access=access) == [("same-site", 403, True), ("cross-site", 403, True),
                                            ("none", 302, False)]  # typed or pasted: switches as asked
