"""Benchmark of the judging screen: the app driven headless through N judgments on the TREC DL 2019 files.

    python bench/bench_judging.py                       # 500 judgments, labels only (qrels, topics, passages)
    python bench/bench_judging.py --judgments 50 --json
    python bench/bench_judging.py --runs --judgments 50 # with the six runs (the rank strip), on --judge
    python bench/bench_judging.py --busy 2              # beside two CPU-busy processes

The app runs at 80x24 (Textual's pilot) on ../shared/conformance/trec-dl-2019-passage as it is, with a
fresh label store under a temporary RANKGATE_HOME. Each judgment is one grade key (0-3, in turn) on the
judging screen; the time runs from the key sent to the first frame drawn after the next document was
shown ("key to next document drawn"); the work left for after that frame (the query's measures) is done
before the next key, as while a person reads. Afterwards every judgment is looked up in the store and in an
export (JSON lines) of the labels. Prints keystrokes_per_judgment, p50_ms, p95_ms, stored and exported,
with the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent.parent / "shared" / "conformance" / "trec-dl-2019-passage"


class Busy:
    """`n` CPU-busy processes beside the app while the block runs (started and killed here)."""

    def __init__(self, n: int) -> None:
        self.n, self.procs = n, []

    def __enter__(self) -> "Busy":
        self.procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(self.n)]
        time.sleep(0.5 if self.n else 0)
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))] if s else float("nan")


def make_app(data: Path, with_runs: bool):
    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs

    inputs = Inputs(str(data / "qrels.dl19-passage.txt"), reviewer="bench")
    inputs.queries = str(data / "topics.dl19-passage.tsv")
    inputs.corpus = str(data / "passages.rankllm-top100-union.dl19.jsonl.gz")
    if with_runs:
        inputs.runs = [str(p) for p in sorted((data / "runs").glob("*.trec"))]
        inputs.judge = True
    return ReviewApp(inputs, cursor_blink=False)


def choice_open(app) -> bool:
    from rankgate.tui.screens.prompts import Choice

    return isinstance(app.screen, Choice)


async def judge(n: int, data: Path, with_runs: bool) -> dict:
    from rankgate.tui.screens.judging import JudgingScreen

    app = make_app(data, with_runs)
    times, keys, done = [], 0, []
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(600):  # the load, then the corpus (the passages' texts)
            await pilot.pause(0.05)
            screen = app.screen
            if isinstance(screen, JudgingScreen) and screen.corpus is not None and screen.drawn_at:
                break
        screen = app.screen
        if not isinstance(screen, JudgingScreen):
            raise SystemExit(f"the judging screen did not open (top screen: {type(screen).__name__})")
        for i in range(n):
            at = screen.cursor.at
            if at is None:
                break
            grade = i % 4
            drawn_before = screen.drawn_at
            t0 = time.perf_counter()
            await pilot.press(str(grade))
            keys += 1
            if choice_open(app):  # a label only others judged (a qrels file's): asked once a session
                await pilot.press("enter")  # its first answer: correct theirs, for the session
                keys += 1
            while screen.drawn_at == drawn_before:  # the next document's frame
                await asyncio.sleep(0.0005)
            times.append((screen.drawn_at - t0) * 1000)
            await pilot.pause()  # what runs after the frame (the query's measures) runs while the person reads
            done.append((at.qid, at.doc, grade))
            if screen.cursor.at == at:  # nothing left to judge
                break
        book = screen.model.labels
        stored = sum(1 for q, d, g in done if (lab := book.mine(q, d)) is not None and lab.grade == g)
        out = Path(tempfile.mkdtemp()) / "exported.jsonl"
        book.export(out, "jsonl")
        rows = {}
        for line in out.read_text().splitlines():
            r = json.loads(line)
            rows[(str(r.get("query")), str(r.get("doc")))] = r.get("grade")
        exported = sum(1 for q, d, g in done if rows.get((q, d)) == g)
        app.exit()
    return {"judgments": len(done), "keystrokes_per_judgment": round(keys / max(len(done), 1), 3),
            "p50_ms": round(pct(times, 50), 1), "p95_ms": round(pct(times, 95), 1),
            "max_ms": round(max(times), 1) if times else None, "stored": stored, "exported": exported}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judgments", type=int, default=500)
    ap.add_argument("--busy", type=int, default=0, help="CPU-busy processes beside the app")
    ap.add_argument("--runs", action="store_true", help="with the six runs (review --judge), not labels only")
    ap.add_argument("--data", type=Path, default=DL19)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (args.data / "qrels.dl19-passage.txt").exists():
        print(f"error: {args.data}: the TREC DL 2019 files are not there (--data FOLDER)", file=sys.stderr)
        return 2
    home = tempfile.mkdtemp(prefix="rankgate-bench-judging-")
    os.environ.update(RANKGATE_HOME=home, RANKGATE_REVIEWER="bench")
    before = os.getloadavg()
    with Busy(args.busy):
        got = asyncio.run(judge(args.judgments, args.data, args.runs))
    after = os.getloadavg()
    got.update(busy=args.busy, runs=args.runs, load_before=[round(x, 2) for x in before],
               load_after=[round(x, 2) for x in after])
    if args.json:
        print(json.dumps(got))
    else:
        for k, v in got.items():
            print(f"{k:>24}: {v}")
    ok = got["stored"] == got["exported"] == got["judgments"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
