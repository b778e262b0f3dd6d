"""A team on one server, in real browsers: `rankgate review --serve --reviewers FILE --public-url URL`.

Two reviewers open the served sample in two headless Chromium windows (each with its own cookies), each
with their own token; neither is asked a name. ana grades the highlighted document; kofi's screen shows
it within a second or so; kofi grades the same pair (his own judgment beside hers); ana is told she was
overruled; ana grades a second document and exports from the page: the file, written into the
benchmark's exports folder, credits kofi for the first pair and ana for the second, and the workspace's
history keeps both grades of the first. Skipped with the reason where textual-serve, Playwright or
Chromium is missing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from tests.web.test_browser import ARGS, CHROMIUM, ROOT, free_port, pytestmark as browser_marks, settle

pytestmark = [*browser_marks, pytest.mark.slow]

# Counts the server's messages and keeps the text they carry, so the test can read what the screen says.
SPY = """(() => { const W = window.WebSocket; window.__msgs = 0; window.__last = 0; window.__text = '';
  const dec = new TextDecoder();
  window.WebSocket = function (...a) { const ws = new W(...a);
    ws.addEventListener('message', (e) => { window.__msgs++; window.__last = performance.now();
      const t = typeof e.data === 'string' ? e.data : dec.decode(e.data);
      window.__text = (window.__text + t).slice(-400000); }); return ws; };
  window.WebSocket.prototype = W.prototype; })();"""
TOKENS = {"ana": "ana-secret-token-0001", "kofi": "kofi-secret-token-0002", "lead": "lead-viewer-token-003"}


@pytest.fixture
def team(tmp_path):
    """The ops-handbook sample (a copy) served to a team on 127.0.0.1, its public URL http://localhost:PORT."""
    import shutil

    bench = tmp_path / "ops-handbook"
    shutil.copytree(ROOT / "sample_benchmarks" / "ops-handbook", bench)
    people = tmp_path / "team.toml"
    people.write_text("[reviewers]\n" + "".join(f'{n} = "{TOKENS[n]}"\n' for n in ("ana", "kofi")) +
                      f'[viewers]\nlead = "{TOKENS["lead"]}"\n', encoding="utf-8")
    port = free_port()
    public = f"http://localhost:{port}"
    # Text boxes' cursors still: a blink is a message to the browser every 0.5 s, and `settle` waits for quiet
    env = dict(os.environ, RANKGATE_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT / "src"), RANKGATE_CURSOR_BLINK="0")
    env.pop("RANKGATE_REVIEWER", None)
    log = open(tmp_path / "server.log", "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "rankgate", "review", str(bench), "--serve", "--port", str(port),
                             "--reviewers", str(people), "--public-url", public], env=env, cwd=tmp_path,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        import socket

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("the server did not start: " + (tmp_path / "server.log").read_text(errors="replace"))
        yield public, bench, env, tmp_path / "server.log"
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)
        log.close()


def open_as(browser, public: str, person: str):
    context = browser.new_context(viewport={"width": 1400, "height": 900})  # cookies of its own
    page = context.new_page()
    page.add_init_script(SPY)
    page.goto(f"{public}/?token={TOKENS[person]}")
    assert page.url == f"{public}/"  # the token went into a cookie, out of the address bar
    page.wait_for_function("window.__msgs > 5", timeout=30000)
    settle(page, quiet_ms=1200, timeout_s=40)
    # The terminal takes the keys once clicked: on the baseline's list (the left half of the Rankings pane, at
    # 157 columns as at 160), on the highlighted document; ArrowDown then moves to the next one, unjudged.
    page.mouse.click(560, 448)
    return page


def wait_for_text(page, pattern: str, since: float, timeout: float = 20) -> float:
    """Seconds from `since` (time.monotonic) until `pattern` (a regex over the screen's text stream) shows."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if re.search(pattern, page.evaluate("window.__text")):
            return time.monotonic() - since
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} did not show within {timeout} s")


def history(env, bench) -> str:
    return subprocess.run([sys.executable, "-m", "rankgate", "labels", "history", "-b", str(bench)], env=env,
                          capture_output=True, text=True, timeout=60).stdout


def test_two_reviewers_grade_one_benchmark_at_once_and_the_export_credits_each(team, tmp_path):
    from playwright.sync_api import sync_playwright

    public, bench, env, log = team
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            ana = open_as(browser, public, "ana")
            kofi = open_as(browser, public, "kofi")
            graded = time.monotonic()
            ana.keyboard.press("2")  # grade 2 on the highlighted document
            seen = wait_for_text(kofi, r"ana graded", graded)  # on kofi's screen, without a key from him
            settle(ana, quiet_ms=600)
            ana.keyboard.type("names the leaked key rotation", delay=40)
            settle(ana, quiet_ms=1000)
            ana.keyboard.press("Enter")
            settle(kofi, quiet_ms=600)
            kofi.keyboard.press("1")  # the same pair: "Correct theirs" is offered first (ana is told either way)
            settle(kofi, quiet_ms=800)
            graded = time.monotonic()
            kofi.keyboard.press("Enter")
            # ana is told on her notice line "overruled: your grade 2 of <pair> was corrected: kofi graded it 1"
            # (was: "kofi graded <pair> 1", said after it in the same batch, replaced it)
            told = wait_for_text(ana, r"was corrected: kofi graded it 1", graded)
            settle(kofi, quiet_ms=800)
            kofi.keyboard.press("Escape")  # no reason
            settle(ana, quiet_ms=800)
            ana.keyboard.press("ArrowDown")
            settle(ana, quiet_ms=600)
            ana.keyboard.press("3")
            settle(ana, quiet_ms=1000)
            ana.keyboard.type("second pair", delay=40)
            settle(ana, quiet_ms=1000)
            ana.keyboard.press("Enter")
            settle(ana, quiet_ms=1000)
            ana.keyboard.press("e")  # export: the server offers a name in its exports folder
            settle(ana, quiet_ms=800)
            ana.keyboard.press("Enter")
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not list((bench / "exports").glob("*.jsonl")):
                time.sleep(0.2)
            ana.screenshot(path=str(tmp_path / "team.png"))
        finally:
            if os.environ.get("RANKGATE_TEST_SHOTS"):  # where a failing run leaves both screens
                for name, page in (("ana", locals().get("ana")), ("kofi", locals().get("kofi"))):
                    if page is not None:
                        page.screenshot(path=os.path.join(os.environ["RANKGATE_TEST_SHOTS"], f"{name}.png"))
            browser.close()
    exports = list((bench / "exports").glob("*.jsonl"))
    assert len(exports) == 1 and exports[0].name.startswith("ops-handbook-ana-"), \
        (exports, log.read_text(errors="replace")[-3000:])
    rows = [json.loads(line) for line in exports[0].read_text(encoding="utf-8").splitlines() if line.strip()]
    label = {f"{r['query']} {r['doc']}": (r["reviewer"], r["grade"]) for r in rows if "query" in r}
    hist = history(env, bench)
    sets = re.findall(r"^#\d+ \S+ (\S+) set (.+?): (\S+ -> \S+)", hist, re.M)
    assert [(who, change) for who, _, change in sets] == [("ana", "- -> 2"), ("kofi", "- -> 1"), ("ana", "- -> 3")], \
        hist  # both grades of the first pair kept, in order
    first, second = sets[0][1], sets[2][1]
    assert sets[1][1] == first and second != first
    assert label[first] == ("kofi", 1) and label[second] == ("ana", 3)  # the export credits each; later wins
    assert "names the leaked key rotation" in hist
    print(f"\nana's grade on kofi's screen after {seen:.2f} s; ana told she was overruled after {told:.2f} s")
    # About a second on a quiet machine (the sessions read each other's edits every 0.4 s); 3.4 s and 5.9 s
    # were measured at a load average of 16 on 2 cores: the bound leaves room for such a machine.
    assert seen < 10 and told < 10
