"""Benchmark of the review app on 10,000 queries x 3 runs x 100 documents.

    python bench/bench_app.py                  # make bench/data/review-10k/ if missing, then measure
    python bench/bench_app.py --edits 300 --starts 7
    python bench/bench_app.py --queries 1000   # a smaller variant, for trying things

Prints:

- cold start, first open: a new process on a benchmark never opened before
  (run files parsed by the core reader, labels imported into a fresh store)
  until the review screen shows every pane consistent;
- cold start, re-open: the same in new processes once the store and the
  parsed-run cache exist (p50 and p95 over --starts processes);
- an edit, key to consistent panes (p50 and p95 over --edits grades of a
  document on random queries): "handler" is the app's own time from the key's
  action to every pane updated (store write, re-score of that query, macros,
  gate, panes); "repainted" adds the screen's next frame; "round trip" is what
  a Pilot sees from sending the key until the whole process is idle again
  (Textual's wait_for_idle polls in 20 ms steps, so it overstates); the store's
  write and the re-score are shown apart.

The data folder and the store (RANKGATE_HOME) live under bench/data/ and
bench/.cache/ (both ignored by git). Inputs are generated deterministically
(seeded numpy): TREC runs, graded JSONL judgments with reasons (about 8 per
query, a third of them relevant), queries with texts, tags and must-pass
marks, and a corpus of the judged documents.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CACHE = HERE / ".cache"
WORDS = ("backup restore postgres wal snapshot dns record ttl resolver gpu memory cache token vram "
         "firewall certificate bastion incident pager severity rollback latency quota disk").split()


def generate(folder: Path, queries: int, runs: int, depth: int, docs: int, seed: int = 11) -> None:
    import numpy as np

    params = dict(queries=queries, runs=runs, depth=depth, docs=docs, seed=seed, format=1)
    stamp = folder / "params.json"
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        return
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    pool_size = depth + depth // 2
    pools = rng.integers(0, docs, size=(queries, pool_size * 2))
    qids = [f"q{i:05d}" for i in range(queries)]
    judged_docs: set[int] = set()
    with open(folder / "judgments.jsonl", "w") as f:
        for i, qid in enumerate(qids):
            pool = list(dict.fromkeys(pools[i].tolist()))[:pool_size]
            pools_i = pool
            grades = rng.choice([0, 0, 1, 2, 3], size=8)
            for d, g in zip(pools_i[:8], grades.tolist()):
                judged_docs.add(d)
                f.write(json.dumps({"query": qid, "doc": f"d{d:07d}", "grade": g, "reason": f"bench grade {g}",
                                    "collection_version": "bench-1", "reviewer": "bench"}) + "\n")
    with open(folder / "queries.jsonl", "w") as f:
        for i, qid in enumerate(qids):
            words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(6)]
            f.write(json.dumps({"id": qid, "text": " ".join(words), "tags": [f"slice-{i % 7}"],
                                "must_pass": i % 997 == 0}) + "\n")
    names = []
    for r in range(runs):
        name = f"run{r}"
        names.append(f"runs/{name}.trec")
        (folder / "runs").mkdir(exist_ok=True)
        lines = []
        for i, qid in enumerate(qids):
            pool = list(dict.fromkeys(pools[i].tolist()))[:pool_size]
            perm = rng.permutation(len(pool))[:depth]
            scores = np.sort(rng.random(len(perm)))[::-1] * 100
            for rank, (p, s) in enumerate(zip(perm.tolist(), scores.tolist())):
                lines.append(f"{qid} Q0 d{pool[p]:07d} {rank + 1} {s:.4f} {name}\n")
        (folder / names[-1]).write_text("".join(lines))
    with open(folder / "corpus.jsonl", "w") as f:
        for d in sorted(judged_docs):
            words = " ".join(WORDS[(d + j) % len(WORDS)] for j in range(40))
            f.write(json.dumps({"id": f"d{d:07d}", "title": f"document {d}", "text": words}) + "\n")
    (folder / "benchmark.toml").write_text(
        'name = "review-bench"\nk = 10\ncollection_version = "bench-1"\nqrels = "judgments.jsonl"\n'
        'queries = "queries.jsonl"\ncorpus = "corpus.jsonl"\n'
        f"runs = {json.dumps(names)}\n\n[gate]\nbaseline = \"run0\"\ncandidate = \"run1\"\n")
    stamp.write_text(json.dumps(params))
    print(f"generated {folder} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


# ---- one process: start, measure, leave ------------------------------------------------------------------

CHILD = r"""
import asyncio, json, sys, time
t0 = time.perf_counter()
from rankgate.tui.app import ReviewApp
from rankgate.tui.loader import Inputs
from rankgate.tui.screens.review import ReviewScreen

async def main():
    app = ReviewApp(Inputs(sys.argv[1]), cursor_blink=False)
    async with app.run_test(size=(160, 48)) as pilot:
        while not isinstance(app.screen, ReviewScreen) or app.screen.first_frame_at is None:
            if app.error is not None:
                raise SystemExit(f"error: {app.error}")
            await asyncio.sleep(0.001)
        ready = app.screen.first_frame_at - t0  # the review screen's first frame is drawn
        print(json.dumps({"ready": ready, "hits": app.loaded.cache_hits}), flush=True)
        app.exit()

asyncio.run(main())
"""


def cold_start(folder: Path, env: dict) -> tuple[float, float]:
    """(seconds from spawning the process to the first frame of consistent panes, the same from the
    first line of the program). Python's own start-up is the difference."""
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(folder)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    wall = time.perf_counter() - t
    _, err = proc.communicate()
    if proc.returncode != 0 or not line.startswith("{"):
        raise SystemExit(err[-2000:])
    inside = json.loads(line)["ready"]
    return wall, inside


async def edits(folder: Path, n: int, seed: int = 5) -> tuple[list[float], list[float], list[float]]:
    import random

    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs
    from rankgate.tui.screens.review import ReviewScreen
    from rankgate.tui.widgets.query_list import QueryPane

    app = ReviewApp(Inputs(str(folder)), cursor_blink=False)
    handler, painted, round_trip, model_only, store = [], [], [], [], []
    async with app.run_test(size=(160, 48)) as pilot:
        while not isinstance(app.screen, ReviewScreen) or app.screen.model is None:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()  # the corpus too
        await pilot.pause()
        screen = app.screen
        screen.ask_reason = False
        screen.ask_whose = False  # a grade is the bench reviewer's own judgment (no question about others')
        m = screen.model
        rng = random.Random(seed)
        pane = screen.query_one(QueryPane)
        for i in range(n):
            qi = rng.randrange(m.nq)
            pane.select(qi)
            await pilot.pause()
            names = m.runs[m.candidate].names(qi)
            screen.set_doc(names[rng.randrange(min(m.k, len(names)))])
            grade = (m.labels.grades(m.qids[qi]).get(screen.doc, -1) + 1) % 4  # always a change
            t = time.perf_counter()
            await pilot.press(str(grade))
            await pilot.pause()
            round_trip.append(time.perf_counter() - t)
            handler.append(screen.last_edit_s)
            painted.append(screen.last_paint_s)
            model_only.append(m.last_edit_s)
            store.append(screen.last_store_s)
        app.exit()
    return handler, painted, round_trip, model_only, store


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--docs", type=int, default=200_000, help="size of the document ID space")
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--starts", type=int, default=5, help="re-open processes to time")
    ap.add_argument("--keep-store", action="store_true", help="skip the first-open measurement")
    args = ap.parse_args()

    folder = DATA / f"review-{args.queries // 1000}k" if args.queries >= 1000 else DATA / f"review-{args.queries}"
    generate(folder, args.queries, args.runs, args.depth, args.docs)
    home = CACHE / f"home-{folder.name}"
    env = dict(os.environ, RANKGATE_HOME=str(home), RANKGATE_REVIEWER="bench")
    print(f"benchmark: {args.queries} queries x {args.runs} runs x {args.depth} documents ({folder})")
    if not args.keep_store:
        shutil.rmtree(home, ignore_errors=True)
        wall, inside = cold_start(folder, env)
        print(f"cold start, first open (parse runs, import labels): {wall:.2f} s to consistent panes "
              f"({inside:.2f} s inside the process)")
    walls, insides = [], []
    for _ in range(args.starts):
        wall, inside = cold_start(folder, env)
        walls.append(wall)
        insides.append(inside)
    print(f"cold start, re-open: p50 {pct(walls, 50):.2f} s, p95 {pct(walls, 95):.2f} s to consistent panes "
          f"(process start included; inside the process p50 {pct(insides, 50):.2f} s)")

    import asyncio

    os.environ.update(RANKGATE_HOME=str(home), RANKGATE_REVIEWER="bench")
    handler, painted, trip, model, store = asyncio.run(edits(folder, args.edits))
    ms = lambda xs, p: pct(xs, p) * 1000  # noqa: E731
    print(f"edit (grade a document), {len(handler)} edits on random queries:")
    print(f"  key to consistent panes (handler): p50 {ms(handler, 50):.1f} ms, p95 {ms(handler, 95):.1f} ms")
    print(f"  key to the screen repainted:       p50 {ms(painted, 50):.1f} ms, p95 {ms(painted, 95):.1f} ms")
    print(f"  Pilot round trip (waits for idle): p50 {ms(trip, 50):.1f} ms, p95 {ms(trip, 95):.1f} ms")
    print(f"  of which the store's write (fsync): p50 {ms(store, 50):.2f} ms, p95 {ms(store, 95):.2f} ms")
    print(f"  of which the re-score of one query: p50 {ms(model, 50):.2f} ms, p95 {ms(model, 95):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
