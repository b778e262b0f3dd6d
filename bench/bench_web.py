"""The browser face's figures: page open to first screen, and key to repaint, in headless Chromium.

    python bench/bench_web.py [--rounds 5] [--keys 20]

Serves a copy of the ops-handbook sample (`rankgate review --serve`) on a free local port, opens it in
Debian's Chromium through Playwright (as tests/web/test_browser.py does, whose helpers it uses), names a
reviewer, then times key presses that move the highlight (`j`/`k`) and grade keys. Prints medians and
p95 in milliseconds, and the load average. Needs the `web` and `dev` extras and /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.web.test_browser import ARGS, CHROMIUM, SPY, free_port, key_to_repaint, settle  # noqa: E402


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="page opens to time")
    ap.add_argument("--keys", type=int, default=20, help="key presses to time per kind")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp())
    bench = tmp / "ops-handbook"
    shutil.copytree(ROOT / "sample_benchmarks" / "ops-handbook", bench)
    port = free_port()
    env = dict(os.environ, RANKGATE_HOME=str(tmp / "home"), PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "rankgate", "review", str(bench), "--serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    time.sleep(2)
    opens, moves, grades = [], [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for r in range(a.rounds):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.add_init_script(SPY)
                t0 = time.monotonic()
                page.goto(url)
                page.wait_for_function("window.__msgs > 5", timeout=30000)
                opens.append((time.monotonic() - t0) * 1000)
                if r == a.rounds - 1:  # the last session reviews
                    time.sleep(1)
                    page.mouse.click(700, 448)
                    page.keyboard.type("bench")
                    page.keyboard.press("Enter")
                    settle(page, quiet_ms=1500, timeout_s=60)
                    for i in range(a.keys):
                        moves.append(key_to_repaint(page, "j" if i % 2 == 0 else "k"))
                    for i in range(a.keys):
                        grades.append(key_to_repaint(page, "1" if i % 2 == 0 else "0"))
                        page.keyboard.press("Escape")  # no reason
                page.close()
            browser.close()
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"page open to first screen: median {statistics.median(opens):.0f} ms, max {max(opens):.0f} ms "
          f"({len(opens)} opens)")
    for name, xs in (("move (j/k)", moves), ("grade (1/0)", grades)):
        print(f"key to repaint, {name}: median {statistics.median(xs):.0f} ms, p95 {p95(xs):.0f} ms ({len(xs)} keys)")


if __name__ == "__main__":
    main()
