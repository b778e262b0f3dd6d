"""Benchmark of the review app on 10,000 queries x 3 runs x 100 documents, and on a sample with its policy.

    python bench/bench_app.py                  # make bench/data/review-10k/ if missing, then measure
    python bench/bench_app.py --edits 300 --starts 7
    python bench/bench_app.py --queries 1000   # a smaller variant, for trying things
    python bench/bench_app.py --starts 0 --busy 2 --edits 100   # the grade keys only, quiet and under load
    python bench/bench_app.py --cold-only --starts 5            # first open and re-open, quiet and beside 1 busy
    python bench/bench_app.py --keys-only --busy 2 --edits 100  # the same, no first open, no sample: 2-3 min
    python bench/bench_app.py --cold-only --starts 5 --baseline /tmp/main/src  # beside another tree, alternating
      (make it with `git archive main src | tar -x -C /tmp/main; python -m compileall -q /tmp/main/src`)

Prints:

- cold start, first open: `rankgate review FOLDER`, a new process in a terminal of its own (a
  pseudo-terminal of 160x48, drawn as a user's), on a benchmark never opened before
  (run files parsed by the core reader, labels imported into a fresh store)
  until the review screen shows every pane consistent;
- cold start, re-open: the same in new processes once the store and the
  parsed-run and score caches exist (p50 and p95 over --starts processes);
  both with the CPU seconds of the app's process and the load average, and
  again beside --cold-busy CPU-busy processes; and when the review screen was
  first drawn, its progress line showing, before the benchmark is loaded;
- the grade keys, key to consistent panes: --edits presses of `0` and as many
  of `1`, each on a random document of the candidate's top k (on a random
  query) whose grade it changes, p50 and p95 per grade; first with the machine
  as it is ("quiet"), then beside --busy CPU-busy processes (`python -c "while 1:
  pass"`, started and killed by the bench). "Key to consistent panes" runs from
  the moment the key is sent to the app until the first frame drawn after the
  key's handler has updated every pane (store write and fsync, re-score of the
  query, macros, gate, panes). When the policy has significance rules, that
  frame marks the gate pane "significance tests updating…" and a worker
  decides them afresh: "settled" runs until the frame that shows its result.
  "handler" is the key's action alone, the store's write and the re-score of
  one query are shown apart; "CPU of the app" is the process's CPU time from
  the key to that frame (the full garbage collection that may follow the
  frame is not in it: it runs while the person reads);
- the same grade keys on sample_benchmarks/ops-handbook, whose policy has a
  randomization test and bootstrap intervals with 10,000 resamples (--sample).

The machine the figures come from is shared: the load average before and
after each run is printed beside it.

The data folder and the store (RANKGATE_HOME) live under bench/data/ and
bench/.cache/ (both ignored by git). Inputs are generated deterministically
(seeded numpy): TREC runs, graded JSONL judgments with reasons (about 8 per
query, a third of them relevant), queries with texts, tags and must-pass
marks, and a corpus of the judged documents.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
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
import asyncio, importlib.machinery, json, os, resource, sys, time
t0 = time.perf_counter()
out = int(os.environ.pop("BENCH_APP_FD"))  # where the figures go (the terminal is the app's)


def measured(screen_class):
    first_frame = screen_class._first_frame

    def _first_frame(self):  # the first frame of consistent panes: the figures, then leave
        first_frame(self)
        use = resource.getrusage(resource.RUSAGE_SELF)
        app = self.app
        os.write(out, (json.dumps({"t0": t0, "ready": self.first_frame_at - t0, "hits": app.loaded.cache_hits,
                                   "cpu": use.ru_utime + use.ru_stime,
                                   "screen": None if self.first_screen_at is None else self.first_screen_at - t0})
                       + "\n").encode())

        async def leave():  # once a first open's cache entries are written (else every open is a first)
            await asyncio.sleep(0.1)
            for worker in [w for w in app.workers if w.group == "caches"]:
                await worker.wait()
            app.exit()

        app.call_later(leave)

    screen_class._first_frame = _first_frame


class Hook:  # patches the review screen when the command imports it (not before: Textual is imported late)
    def find_spec(self, name, path, target=None):
        if name != "rankgate.tui.screens.review":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            measured(module.ReviewScreen)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Hook())
from rankgate.cli import main

sys.exit(main(["review", sys.argv[1]]))
"""

SIZE = (48, 160)  # the terminal's rows and columns


def cold_start(folder: Path, env: dict, first: bool | None = None) -> tuple[float, float, float, float]:
    """`rankgate review FOLDER` as a process in a terminal of its own (a pseudo-terminal, SIZE): (seconds from
    spawning it to the first frame of consistent panes, the same from the first line of the program, the
    process's CPU seconds (user + system, every thread) by then, seconds from the first line to the first frame
    of the screen with its progress line (nan: not told)). Python's own start-up is the difference of the first
    two. The child runs with its bytecode cached, as an installed package does (PYTHONDONTWRITEBYTECODE would
    compile every module at every start); it is the command's own code (cli.main), with the review screen's
    first frame of panes patched to report and leave."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *SIZE, 0, 0))
    r, w = os.pipe()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(folder)], env=dict(env, BENCH_APP_FD=str(w),
                            TERM="xterm-256color"), stdin=slave, stdout=slave, stderr=slave, pass_fds=(w,),
                            start_new_session=True)
    os.close(slave)
    os.close(w)
    screen = bytearray()

    def drain() -> None:  # what the app draws, read (else it blocks on a full terminal)
        while True:
            try:
                got = os.read(master, 65536)
            except OSError:
                return
            if not got:
                return
            screen.extend(got[-4096:])
            del screen[:-8192]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with os.fdopen(r) as figures:
        line = figures.readline()
    wall = time.perf_counter() - t
    proc.wait()
    reader.join(5)
    os.close(master)
    if not line.startswith("{"):
        raise SystemExit(f"the app reported nothing (exit {proc.returncode}); its terminal ended with:\n"
                         + screen.decode(errors="replace")[-2000:])
    if proc.returncode != 0:  # measured, then failed on the way out: said, not hidden
        print(f"(the app failed after its first frame: exit {proc.returncode})", file=sys.stderr)
    got = json.loads(line)
    if first is False and not got["hits"]:  # a re-open that parsed its runs again measures a first open
        print("(a re-open read no run from the parsed-run cache: runs under 128 KB are not kept, or the first "
              "open did not leave its entries)", file=sys.stderr)
    return wall, got["ready"], got["cpu"], float("nan") if got.get("screen") is None else got["screen"]


def cold_starts(folder: Path, sides: list[tuple[str, dict, Path]], starts: int, first: bool, busy: int) -> None:
    """First open (a fresh store and run cache) and `starts` re-opens, each a new process; printed with the
    load average before and after and the CPU seconds of the app's process; beside `busy` CPU-busy
    processes when `busy`. `sides`: (label, environment, data folder) of each source tree compared (one,
    or two with --baseline): their first opens one after the other, their re-opens alternating."""
    where = f" beside {busy} CPU-busy process{'es' if busy != 1 else ''}" if busy else ""
    label = (lambda name: f" [{name}]") if len(sides) > 1 else (lambda name: "")
    if first:
        for name, env, home in sides:
            shutil.rmtree(home, ignore_errors=True)
            before = load_average()
            with Busy(busy):
                wall, inside, cpu, screen = cold_start(folder, env)
            print(f"cold start{where}{label(name)}, first open (parse runs, import labels): {wall:.2f} s to "
                  f"consistent panes ({inside:.2f} s inside the process; CPU {cpu:.2f} s; the screen with its "
                  f"progress line at {screen:.2f} s) (load average {before} -> {load_average()})")
    if not starts:
        return
    for _, env, _ in sides:
        cold_start(folder, env)  # the caches as the last open left them (a first open's entries are written)
    got = {name: ([], [], [], []) for name, _, _ in sides}
    before = load_average()
    with Busy(busy):
        for _ in range(starts):
            for name, env, _ in sides:
                for xs, x in zip(got[name], cold_start(folder, env, first=False)):
                    xs.append(x)
    after = load_average()
    for name, (walls, insides, cpus, screens) in got.items():
        print(f"cold start{where}{label(name)}, re-open: p50 {pct(walls, 50):.2f} s, p95 {pct(walls, 95):.2f} s to "
              f"consistent panes (process start included; inside the process p50 {pct(insides, 50):.2f} s; CPU p50 "
              f"{pct(cpus, 50):.2f} s, p95 {pct(cpus, 95):.2f} s; the screen with its progress line p50 "
              f"{pct(screens, 50):.2f} s; {starts} processes) (load average {before} -> {after})")


class Busy:
    """`n` CPU-busy processes beside the app while the block runs (started and killed here)."""

    def __init__(self, n: int) -> None:
        self.n, self.procs = n, []

    def __enter__(self) -> "Busy":
        self.procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(self.n)]
        time.sleep(0.5 if self.n else 0)  # let them reach the CPU
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


async def grade_keys(pilot, n: int, grades: tuple[int, ...], rng) -> dict:
    """`n` presses of each grade key, alternating, each on a random top-k document of the candidate on a
    random query whose grade it changes. Per grade: key to the first frame after the handler ("panes"),
    key to the frame with the gate decided afresh ("settled"), the handler, the store, the re-score."""
    from textual import events

    from rankgate.tui.widgets.query_list import QueryPane

    app = pilot.app
    screen = app.screen
    m = screen.model
    pane = screen.query_one(QueryPane)
    out = {g: {"panes": [], "cpu": [], "settled": [], "handler": [], "store": [], "model": []} for g in grades}
    stamped = asyncio.Event()
    fresh = [0]  # workers started to decide the gate afresh
    started = screen.fresh_gate

    def counted(*args):
        fresh[0] += 1
        return started(*args)

    screen.fresh_gate = counted
    for _ in range(n):
        for g in grades:
            for _ in range(100):
                qi = rng.randrange(m.nq)
                have = m.labels.grades(m.qids[qi])
                docs = [d for d in m.runs[m.candidate].names(qi)[:m.k] if have.get(d) != g]
                if docs:
                    break
            pane.select(qi)
            await pilot.pause()
            screen.set_doc(docs[rng.randrange(len(docs))])
            await pilot.pause()
            await asyncio.sleep(0.02)  # the key arrives at an idle app, as a person's does
            before, workers = screen.last_painted_at, fresh[0]
            key = events.Key(str(g), str(g))
            key.set_sender(app)
            t, c = time.perf_counter(), time.process_time()
            app._driver.send_message(key)  # as the terminal driver sends it (Pilot.press would poll meanwhile)
            while screen.last_painted_at == before:  # the first frame after the handler
                await asyncio.sleep(0.001)
            panes = screen.last_painted_at - t
            cpu = screen.last_painted_cpu - c  # the app's own CPU time to that frame (not the machine's load;
            # not the full garbage collection that may follow the frame, while the person reads)
            settled = panes
            if fresh[0] != workers or screen._fresh_busy or screen._gate.stale:
                while screen._gate.stale or screen._fresh_busy:  # significance decided afresh, shown ...
                    await asyncio.sleep(0.001)
                stamped.clear()
                screen.call_after_refresh(stamped.set)  # ... in a frame
                await stamped.wait()
                settled = time.perf_counter() - t
            r = out[g]
            r["panes"].append(panes)
            r["cpu"].append(cpu)
            r["settled"].append(settled)
            r["handler"].append(screen.last_edit_s)
            r["store"].append(screen.last_store_s)
            r["model"].append(m.last_edit_s)
    return out


async def session(folder: Path, n: int, busy: int, seed: int = 5) -> list[tuple[str, str, dict]]:
    """One app on the benchmark: the grade keys quiet, then beside `busy` CPU-busy processes.
    Returns (what, load averages before/after, results) per run."""
    from rankgate.tui.app import ReviewApp
    from rankgate.tui.loader import Inputs
    from rankgate.tui.screens.review import ReviewScreen

    app = ReviewApp(Inputs(str(folder)), cursor_blink=False)
    runs = []
    async with app.run_test(size=(160, 48)) as pilot:
        while not isinstance(app.screen, ReviewScreen) or app.screen.model is None:
            if app.error is not None:
                raise SystemExit(f"error: {app.error}")
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()  # the corpus too
        await pilot.pause()
        app.screen.ask_reason = False
        app.screen.ask_whose = False  # a grade is the bench reviewer's own judgment (no question about others')
        rng = random.Random(seed)
        for k in (0, busy) if busy else (0,):
            before = load_average()
            with Busy(k):
                got = await grade_keys(pilot, n, (0, 1), rng)
            runs.append(("quiet" if not k else f"{k} busy processes", f"{before} -> {load_average()}", got))
        app.exit()
    return runs


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--docs", type=int, default=200_000, help="size of the document ID space")
    ap.add_argument("--edits", type=int, default=100, help="presses of each grade key, per run")
    ap.add_argument("--busy", type=int, default=2, help="CPU-busy processes for the run under load (0: none)")
    ap.add_argument("--sample", default=str(HERE.parent / "sample_benchmarks" / "ops-handbook"),
                    help="a benchmark folder measured the same way with its own policy ('' to skip)")
    ap.add_argument("--starts", type=int, default=5, help="re-open processes to time")
    ap.add_argument("--keep-store", action="store_true", help="skip the first-open measurement")
    ap.add_argument("--cold-busy", type=int, default=1,
                    help="the cold starts again beside this many CPU-busy processes (0: not)")
    ap.add_argument("--cold-only", action="store_true", help="the cold starts only (no grade keys)")
    ap.add_argument("--baseline", metavar="SRC",
                    help="another source tree's src/ (e.g. of `git archive main`) measured beside this one: first "
                         "opens one after the other, re-opens alternating (its data folder: --home's + '-baseline')")
    ap.add_argument("--home", help="the data folder (store, caches) to use (default: bench/.cache/home-NAME; "
                    "another, to compare two checkouts through PYTHONPATH)")
    ap.add_argument("--keys-only", action="store_true",
                    help="the grade keys on the 10k benchmark only: no cold start, no sample (as --starts 0 "
                         "--keep-store --sample ''; the store is made when missing)")
    args = ap.parse_args()
    if args.keys_only:
        args.starts, args.sample = 0, ""

    folder = DATA / f"review-{args.queries // 1000}k" if args.queries >= 1000 else DATA / f"review-{args.queries}"
    generate(folder, args.queries, args.runs, args.depth, args.docs)
    home = Path(args.home) if args.home else CACHE / f"home-{folder.name}"
    env = dict(os.environ, RANKGATE_HOME=str(home), RANKGATE_REVIEWER="bench")
    print(f"benchmark: {args.queries} queries x {args.runs} runs x {args.depth} documents ({folder})")
    for busy in dict.fromkeys([0, args.cold_busy] if args.cold_busy and not args.keys_only else [0]):
        first = not args.keep_store and not (args.keys_only and home.exists())
        sides = [("this", env, home)]
        if args.baseline:
            here = str(HERE.parent / "src")
            sides = [("baseline", dict(env, PYTHONPATH=str(Path(args.baseline).resolve()),
                                       RANKGATE_HOME=f"{home}-baseline"), Path(f"{home}-baseline")),
                     ("this", dict(env, PYTHONPATH=here), home)]
        cold_starts(folder, sides, args.starts, first, busy)
    if args.cold_only:
        return 0

    os.environ.update(RANKGATE_HOME=str(home), RANKGATE_REVIEWER="bench")
    report(folder.name, asyncio.run(session(folder, args.edits, args.busy)))
    if args.sample:
        sample = Path(args.sample)
        sample_home = CACHE / f"home-{sample.name}"
        shutil.rmtree(sample_home, ignore_errors=True)  # a fresh store: the sample's own labels
        os.environ.update(RANKGATE_HOME=str(sample_home))
        report(f"{sample.name} (its policy)", asyncio.run(session(sample, args.edits, args.busy)))
    return 0


def report(name: str, runs: list) -> None:
    ms = lambda xs, p: pct(xs, p) * 1000  # noqa: E731
    for what, loads, got in runs:
        n = len(got[0]["panes"])
        print(f"{name}, {what} (load average 1/5/15 min {loads}), {n} presses of each grade key:")
        for g, r in got.items():
            print(f"  grade {g}: key to consistent panes p50 {ms(r['panes'], 50):6.1f} ms, "
                  f"p95 {ms(r['panes'], 95):6.1f} ms (CPU of the app p50 {ms(r['cpu'], 50):.1f}, "
                  f"p95 {ms(r['cpu'], 95):.1f}); settled (significance decided afresh, shown) "
                  f"p50 {ms(r['settled'], 50):.1f}, p95 {ms(r['settled'], 95):.1f}")
        allr = {k: [x for r in got.values() for x in r[k]] for k in ("handler", "store", "model")}
        print(f"    of which the handler: p50 {ms(allr['handler'], 50):.1f} ms, p95 {ms(allr['handler'], 95):.1f}; "
              f"the store's write (fsync) p50 {ms(allr['store'], 50):.2f}, p95 {ms(allr['store'], 95):.2f}; "
              f"the re-score of one query p50 {ms(allr['model'], 50):.2f}, p95 {ms(allr['model'], 95):.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
