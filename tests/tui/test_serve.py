"""The browser face's own parts, without a browser: the per-session command, the reviewer's name first,
a workspace per reviewer, refusals and the warning for an address others can reach."""

from __future__ import annotations

import argparse
import os
import re
import sys
import types

import pytest

from rankgate.cli import build_parser
from rankgate.tui.screens.prompts import TextPrompt
from rankgate.tui.screens.review import ReviewScreen
from rankgate.tui.serve import is_loopback, serve, session_command
from tests.tui.conftest import SIZE, make_app, ready


def parse(*argv) -> argparse.Namespace:
    return build_parser().parse_args(["review", *argv])


def test_session_command_makes_paths_absolute_and_asks_the_reviewer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r.trec").write_text("")
    args = parse("q.trec", "--runs", "bm25=r.trec", "--runs", "r.trec", "--queries", "t.tsv", "--k", "10",
                 "-m", "nDCG@10", "--blind", "--serve")
    cmd = session_command(args)
    assert cmd[:4] == [sys.executable, "-m", "rankgate", "review"]
    assert cmd[4] == str(tmp_path / "q.trec")
    assert cmd[cmd.index("--queries") + 1] == str(tmp_path / "t.tsv")
    runs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--runs"]
    assert runs == [f"bm25={tmp_path / 'r.trec'}", str(tmp_path / "r.trec")]
    assert cmd[cmd.index("--k") + 1] == "10" and "nDCG@10" in cmd and "--blind" in cmd
    assert cmd[-1] == "--ask-reviewer" and "--serve" not in cmd


def test_session_command_passes_the_gates_input_options(tmp_path, monkeypatch):
    """Each browser session decides as the gate would with the same options (NO DECISION where it refuses)."""
    monkeypatch.chdir(tmp_path)
    args = parse("q.trec", "--runs", "r.trec", "--missing-queries", "zero", "--short-rankings", "allow",
                 "--allow-snapshot-mismatch", "--serve")
    cmd = session_command(args)
    assert cmd[cmd.index("--missing-queries") + 1] == "zero" and cmd[cmd.index("--short-rankings") + 1] == "allow"
    assert "--allow-snapshot-mismatch" in cmd


@pytest.mark.parametrize("host,local", [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                        ("127.0.0.2", True), ("0.0.0.0", False), ("192.0.2.7", False),
                                        ("example.org", False)])
def test_loopback(host, local):
    assert is_loopback(host) is local


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fake_textual_serve(monkeypatch, started: list):
    server_mod = types.ModuleType("textual_serve.server")

    class Server:
        def __init__(self, command, host="localhost", port=8000, title=None, **kw):
            started.append((command, host, port, title))

        async def _make_app(self):  # the offline subclass wraps it
            raise AssertionError("not called in this test")

        def serve(self, debug=False):
            return None

    server_mod.Server = Server
    service_mod = types.ModuleType("textual_serve.app_service")
    service_mod.AppService = object
    monkeypatch.setitem(sys.modules, "textual_serve", types.ModuleType("textual_serve"))
    monkeypatch.setitem(sys.modules, "textual_serve.server", server_mod)
    monkeypatch.setitem(sys.modules, "textual_serve.app_service", service_mod)


def test_serving_elsewhere_than_loopback_warns_and_every_start_prints_the_link_with_its_token(monkeypatch, capsys,
                                                                                             tmp_path):
    started = []
    fake_textual_serve(monkeypatch, started)
    monkeypatch.delenv("RANKGATE_TOKEN", raising=False)
    port = free_port()
    assert serve(parse(str(tmp_path), "--serve", "--host", "0.0.0.0", "--port", str(port))) == 0
    out, err = capsys.readouterr()
    assert f"warning: serving on 0.0.0.0:{port} over plain http" in err and "--public-url" in err
    assert started[0][1:3] == ("0.0.0.0", port)
    token = re.search(rf"open http://127.0.0.1:{port}/\?token=(\S+)", out).group(1)
    assert len(token) >= 24
    started.clear()
    monkeypatch.setenv("RANKGATE_TOKEN", "from-the-environment-01")
    port = free_port()
    assert serve(parse(str(tmp_path), "--serve", "--port", str(port))) == 0
    out, err = capsys.readouterr()
    assert err == "" and started[0][1] == "127.0.0.1"
    assert f"open http://127.0.0.1:{port}/?token=from-the-environment-01" in out
    monkeypatch.setenv("RANKGATE_TOKEN", "from-the-environment-01")  # taken out of the environment once read
    assert serve(parse(str(tmp_path), "--serve", "--port", str(port), "--public-url",
                       "https://labels.example.org/")) == 0
    out, err = capsys.readouterr()
    assert "open https://labels.example.org/?token=from-the-environment-01" in out and err == ""


@pytest.mark.parametrize("extra,says", [(["--reviewer", "ana"], "leave out --reviewer"),
                                        (["--port", "70000"], "is not a port")])
def test_serve_refuses_a_fixed_reviewer_and_bad_ports(extra, says, tmp_path, capsys):
    from rankgate.cli import main

    assert main(["review", str(tmp_path), "--serve", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0]


def test_serve_without_the_extra_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    from rankgate.cli import main

    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["review", str(tmp_path), "--serve"]) == 2
    assert "pip install 'rankgate[web]'" in capsys.readouterr().err


@pytest.mark.slow
async def test_a_served_session_asks_the_reviewer_first_and_opens_their_own_workspace(tiny):
    app = make_app(tiny, ask_reviewer=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt) and app.inputs.reviewer is None
        await pilot.press("enter")  # an empty name is refused, the prompt stays
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        for ch in "ana":
            await pilot.press(ch)
        await pilot.press("enter")
        await ready(pilot)
        assert isinstance(app.screen, ReviewScreen) and app.screen.model is not None
        assert app.inputs.reviewer == "ana"
        db = app.inputs.db
        assert os.path.basename(db).startswith("web-ana-") and db.startswith(os.environ["RANKGATE_HOME"])
    other = make_app(tiny, ask_reviewer=True)
    async with other.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for ch in "tomas":
            await pilot.press(ch)
        await pilot.press("enter")
        await ready(pilot)
        assert other.inputs.db != db and os.path.basename(other.inputs.db).startswith("web-tomas-")


@pytest.mark.slow
async def test_a_second_session_under_a_name_in_use_is_asked_for_another_name(tiny):
    """Two browser sessions typing the same name: the second is told so at the prompt, not opened read-only."""
    first = make_app(tiny, ask_reviewer=True)
    async with first.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for ch in "ana":
            await pilot.press(ch)
        await pilot.press("enter")
        await ready(pilot)
        second = make_app(tiny, ask_reviewer=True)
        async with second.run_test(size=SIZE) as pilot2:
            await pilot2.pause()
            for ch in "ana":
                await pilot2.press(ch)
            await pilot2.press("enter")
            await pilot2.pause()
            assert isinstance(second.screen, TextPrompt) and second.inputs.reviewer is None
            help_text = str(second.screen.query_one("#prompt-help").render())
            assert "ana is labelling this benchmark in another session" in help_text
            for ch in "2":
                await pilot2.press(ch)
            await pilot2.press("enter")
            await ready(pilot2)
            assert second.inputs.reviewer == "ana2" and second.inputs.db != first.inputs.db


def test_the_browser_faces_options_are_refused_without_serve(tmp_path, capsys):
    from rankgate.cli import main

    for flag, value in (("--reviewers", "team.toml"), ("--public-url", "https://x.example"),
                        ("--token-file", "t")):
        assert main(["review", str(tmp_path), flag, value]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"error: {flag}: only with --serve (the browser face)"]
