"""Benchmark of the label store: whole commands at 1k and 100k judgments, durable edits, opening, folding.

    .venv/bin/python bench/bench_store.py            # the figures the issues ask for
    .venv/bin/python bench/bench_store.py --process-only   # only the whole-process figures (issue 19)
    .venv/bin/python bench/bench_store.py --compare  # plus the designs we did not choose

Generates its qrels in a temporary folder (under bench/.cache by default, so the
files sit on the project's disk, not on a tmpfs where fsync costs nothing), imports
them, then times single durable edits (each one journal append + fsync, as a
reviewer makes them) and opening. Not a test: it prints figures.

Targets (issue 3): edit p95 <= 20 ms at 100k judgments, p95(100k) / p95(1k) <= 1.5,
open 100k judgments <= 1 s.
Targets (issue 19, whole processes, medians): `rankgate labels set` at 100k within 1.5x of 1k,
`labels import` of 100k judgments under 2 s, open of a 100k store under 0.2 s. The load average is
printed before and after: on a shared machine, compare the ratios of one run, not runs of two days.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rankgate.store.workspace import Workspace

HERE = Path(__file__).resolve().parent
DOCS_PER_QUERY = 50
REASONS = ["states the retention period in section 2", "lists the reset steps", "off topic: billing page",
           "mentions the limit but for another plan", ""]


def make_qrels(folder: Path, n: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    path = folder / f"qrels-{n}.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            q, d = f"q{i // DOCS_PER_QUERY:05d}", f"doc-{i:07d}"
            f.write(json.dumps({"query": q, "doc": d, "grade": rng.choice([-1, 0, 0, 1, 1, 2, 3]),
                                "reason": rng.choice(REASONS), "collection_version": "bench-1"}) + "\n")
    return path


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def ms(x: float) -> str:
    return f"{x * 1e3:8.2f} ms"


def build(folder: Path, n: int) -> tuple[Path, float]:
    qrels = make_qrels(folder, n)
    db = folder / f"ws-{n}" / "labels.json"
    t = time.perf_counter()
    with Workspace.open(db, reviewer="bench") as ws:
        ws.import_files([qrels])
    return db, time.perf_counter() - t


def time_open(db: Path, rounds: int = 5, readonly: bool = False) -> list[float]:
    out = []
    for _ in range(rounds):
        gc.collect()
        t = time.perf_counter()
        ws = Workspace.open(db, reviewer="bench", readonly=readonly)
        out.append(time.perf_counter() - t)
        ws.close()
    return out


def edit_args(rng: random.Random, n: int, i: int) -> tuple[str, str, int, str]:
    k = rng.randrange(n)
    return f"q{k // DOCS_PER_QUERY:05d}", f"doc-{k:07d}", rng.choice([-1, 0, 1, 2, 3]), \
        f"edit {i}: {rng.choice(REASONS)}"


def bare_fsync(folder: Path):
    """The floor: one 300-byte append + fdatasync on the same disk, nothing else."""
    fd = os.open(folder / "bare.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def once() -> float:
        t = time.perf_counter()
        os.write(fd, b"x" * 299 + b"\n")
        os.fdatasync(fd)
        return time.perf_counter() - t
    once.close = lambda: os.close(fd)
    return once


def time_edits(dbs: dict[int, Path], edits: int, folder: Path, seed: int = 11) -> dict[int, list[float]]:
    """Single durable edits, interleaved across the sizes (and a bare fsync), so that other
    disk traffic on the machine falls on every size alike."""
    rng = random.Random(seed)
    opened = {n: Workspace.open(db, reviewer="bench") for n, db in dbs.items()}
    bare = bare_fsync(folder)
    lat: dict = {n: [] for n in dbs}
    lat["fsync"] = []
    try:
        order = list(opened)
        for i in range(edits):
            order = order[1:] + order[:1]  # rotate, so no size always follows the bare fsync
            for n in order:
                q, d, g, reason = edit_args(rng, n, i)
                t = time.perf_counter()
                opened[n].set_judgment(q, d, g, reason=reason)
                lat[n].append(time.perf_counter() - t)
            lat["fsync"].append(bare())
        for n, ws in opened.items():  # then a journal of 500 edits to fold
            for i in range(500):
                ws.set_judgment(*edit_args(rng, n, i))
            t = time.perf_counter()
            ws.checkpoint()
            lat[f"fold-{n}"] = [time.perf_counter() - t]
    finally:
        for ws in opened.values():
            ws.close()
        bare.close()
    return lat


def unfolded_journal(db: Path, n: int, edits: int = 999) -> None:
    """Leave `edits` edits in the journal, unfolded, as a killed process would."""
    ws = Workspace.open(db, reviewer="bench", fold_every=10**9)
    for i in range(edits):
        k = i % n
        ws.set_judgment(f"q{k // DOCS_PER_QUERY:05d}", f"doc-{k:07d}", i % 4, reason=f"replay {i}")
    ws._journal.close()
    ws._journal = None
    ws._lock.release()
    ws._closed = True


def main_figures(folder: Path, sizes: list[int], edits: int) -> dict:
    dbs, imports = {}, {}
    for n in sizes:
        dbs[n], imports[n] = build(folder, n)
    lat = time_edits(dbs, edits, folder)
    f = lat["fsync"]
    print(f"\nbare append + fdatasync on this disk: median {ms(statistics.median(f))}  p95 {ms(pct(f, 95))}  "
          f"p99 {ms(pct(f, 99))}")
    results = {}
    for n in sizes:
        db = dbs[n]
        opens = time_open(db)
        with Workspace.open(db, reviewer="bench", readonly=True) as ws:
            t = time.perf_counter()
            ws.history("q00000")
            t_hist = time.perf_counter() - t
            t = time.perf_counter()
            ws.to_qrels()
            t_qrels = time.perf_counter() - t
            t = time.perf_counter()
            ws.export("trec")
            t_export = time.perf_counter() - t
        unfolded_journal(db, n)
        opens_journal = time_open(db, rounds=3, readonly=True)
        on_disk = {p.name: p.stat().st_size for p in db.parent.iterdir() if not p.name.startswith(".")}
        e = lat[n]
        r = results[n] = dict(import_s=imports[n], median=statistics.median(e), p95=pct(e, 95), p99=pct(e, 99),
                              max=max(e), fold=lat[f"fold-{n}"][0], open_median=statistics.median(opens),
                              open_max=max(opens), open_journal_median=statistics.median(opens_journal),
                              history=t_hist, to_qrels=t_qrels, export=t_export, files=on_disk)
        print(f"\n{n:>7} judgments   (import {r['import_s']:.2f} s)")
        print(f"  durable edit      median {ms(r['median'])}  p95 {ms(r['p95'])}  p99 {ms(r['p99'])}  "
              f"max {ms(r['max'])}  ({edits} edits, folds included)")
        print(f"  open (writer)     median {ms(r['open_median'])}  max {ms(r['open_max'])}")
        print(f"  open + replay 999 journal edits (reader)   median {ms(r['open_journal_median'])}")
        print(f"  fold of 500 edits {ms(r['fold'])}   first history read {ms(r['history'])}   "
              f"to_qrels {ms(r['to_qrels'])}   export trec {ms(r['export'])}")
        print("  files             " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(on_disk.items())))
    return results


# --------------------------------------------------------------------------- whole processes


CPU: dict[tuple, list[float]] = {}  # (command, size) -> CPU seconds (user + system) of each process


def run_cli(args: list[str], key: tuple | None = None) -> float:
    """Seconds of one `python -m rankgate ...` process, start to exit (fails loudly on a non-zero exit); its
    CPU seconds (user + system, all its threads) go to CPU[key]."""
    import resource
    import subprocess

    env = dict(os.environ, RANKGATE_REVIEWER="bench")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "rankgate", *args], capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"rankgate {' '.join(args)} failed: {out.stderr.strip()}")
    if key is not None:
        CPU.setdefault(key, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return took


def cpu(key: tuple) -> str:
    return f"{statistics.median(CPU[key]):.2f}" if CPU.get(key) else "n/a"


def open_in_process(db: Path, rounds: int) -> list[float]:
    """Workspace.open (read-only, as `labels list` does) in a fresh interpreter each round, imports excluded."""
    import subprocess

    code = ("import sys, time\nfrom rankgate.store.workspace import Workspace\nt = time.perf_counter()\n"
            "c = time.process_time()\nws = Workspace.open(sys.argv[1], readonly=True)\n"
            "print(time.perf_counter() - t, time.process_time() - c)\nws.close()")
    out = []
    for _ in range(rounds):
        wall, used = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                                    check=True).stdout.split()
        out.append(float(wall))
        CPU.setdefault(("open", str(db)), []).append(float(used))
    return out


def as_format_2(db: Path, folder: Path) -> Path:
    """A copy of a store with its snapshot in format 2 (one TinyDB document per judgment), to time the open
    this release replaces on the same machine in the same run."""
    import shutil

    from rankgate.store.columns import FIELDS, SAME

    out = folder / f"format2-{db.parent.name}"
    shutil.copytree(db.parent, out)
    tables = json.loads((out / db.name).read_bytes())
    rows, n = {}, 0
    for cols in tables["judgments"].values():
        full = {f: [cols[f][SAME]] * cols["n"] if isinstance(cols[f], dict) else cols[f] for f in FIELDS}
        for i in range(cols["n"]):
            n += 1
            rows[str(n)] = {"query": cols["query"], **{f: full[f][i] for f in FIELDS}}
    tables["judgments"] = rows
    tables["meta"]["1"]["format_version"] = 2
    tables["meta"]["1"].pop("live", None)
    (out / db.name).write_text(json.dumps(tables, separators=(",", ":")))
    return out / db.name


def process_figures(folder: Path, sizes: list[int], rounds: int) -> dict:
    """`labels import`, `labels set`, `labels list` and opening, as a user runs them, sizes alternating."""
    out: dict = {n: {"import": [], "set": [], "list": []} for n in sizes}
    qrels = {n: make_qrels(folder, n) for n in sizes}
    dbs = {}
    for r in range(rounds):
        for n in sizes:
            db = folder / f"proc-{n}-{r}" / "labels.json"
            out[n]["import"].append(run_cli(["labels", "import", "--db", str(db), str(qrels[n])], ("import", n)))
            dbs[n] = db
    rng = random.Random(5)
    for r in range(rounds):
        for n in sizes:
            q, d, _, reason = edit_args(rng, n, r)
            out[n]["set"].append(run_cli(["labels", "set", "--db", str(dbs[n]), q, d, str(r % 4 + 10), "--reason",
                                          reason], ("set", n)))
            out[n]["list"].append(run_cli(["labels", "list", "--db", str(dbs[n]), "q00000"], ("list", n)))
    floor = [run_cli(["--help"], ("help", 0)) for _ in range(rounds)]
    for n in sizes:
        out[n]["open"] = open_in_process(dbs[n], rounds)
        out[n]["snapshot_mb"] = dbs[n].stat().st_size / 1e6
        old = as_format_2(dbs[n], folder)
        out[n]["open_format2"] = open_in_process(old, rounds)
        out[n]["format2_mb"] = old.stat().st_size / 1e6
    print(f"\nwhole processes (medians of {rounds}; `python -m rankgate ...`, start to exit, wall s [CPU s]); "
          f"`rankgate --help` on this machine now: {statistics.median(floor):.3f} s [{cpu(('help', 0))}]")
    for n in sizes:
        f = out[n]
        print(f"  {n:>7} judgments: labels import {statistics.median(f['import']):6.2f} s [{cpu(('import', n))}]   "
              f"labels set {statistics.median(f['set']):6.3f} s [{cpu(('set', n))}]   labels list QUERY "
              f"{statistics.median(f['list']):6.3f} s [{cpu(('list', n))}]")
        print(f"  {'':>7}            open (in process) {statistics.median(f['open']) * 1e3:6.1f} ms "
              f"[{statistics.median(CPU[('open', str(dbs[n]))]) * 1e3:.1f} ms CPU], snapshot "
              f"{f['snapshot_mb']:.1f} MB;  the same labels in store format 2: "
              f"{statistics.median(f['open_format2']) * 1e3:6.1f} ms, {f['format2_mb']:.1f} MB")
    if len(sizes) >= 2:
        small, large = out[sizes[0]], out[sizes[-1]]
        ratio = statistics.median(large["set"]) / statistics.median(small["set"])
        ratio_cpu = statistics.median(CPU[("set", sizes[-1])]) / statistics.median(CPU[("set", sizes[0])])
        print(f"  labels set {sizes[-1]} / {sizes[0]}: {ratio:.2f}x wall, {ratio_cpu:.2f}x CPU (target <= 1.5);  "
              f"labels import {sizes[-1]}: {statistics.median(large['import']):.2f} s [{cpu(('import', sizes[-1]))}] "
              f"(target < 2 s);  open {sizes[-1]}: "
              f"{statistics.median(large['open']) * 1e3:.0f} ms (target < 200 ms)")
    return out


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# --------------------------------------------------------------------------- designs not chosen


def compare(folder: Path) -> None:
    """TinyDB's JSONStorage one write at a time; CachingMiddleware; a full atomic snapshot per edit."""
    from tinydb import Query, TinyDB
    from tinydb.middlewares import CachingMiddleware
    from tinydb.storages import JSONStorage

    from rankgate.store.storage import SnapshotStorage

    print("\ndesigns not chosen (single edits, each durable unless said otherwise)")
    for n in (1_000, 5_000, 20_000):
        path = folder / f"plain-{n}.json"
        db = TinyDB(path)
        db.table("judgments").insert_multiple({"query": f"q{i // 50}", "doc": f"d{i}", "grade": 1} for i in range(n))
        J = Query()
        lat = []
        for i in range(50):
            t = time.perf_counter()
            db.table("judgments").update({"grade": 2}, J.doc == f"d{i * 7 % n}")
            lat.append(time.perf_counter() - t)
        db.close()
        print(f"  TinyDB JSONStorage, update one  n={n:>6}: median {ms(statistics.median(lat))}  "
              f"p95 {ms(pct(lat, 95))}   (rewrites the file in place: a crash mid-write loses it)")
    for n in (1_000, 20_000):
        path = folder / f"caching-{n}.json"
        db = TinyDB(path, storage=CachingMiddleware(JSONStorage))
        db.table("judgments").insert_multiple({"query": f"q{i // 50}", "doc": f"d{i}", "grade": 1} for i in range(n))
        db.storage.flush()
        lat = []
        for i in range(50):
            t = time.perf_counter()
            db.table("judgments").update({"grade": 2}, Query().doc == f"d{i * 7 % n}")
            lat.append(time.perf_counter() - t)
        db.close()
        print(f"  TinyDB CachingMiddleware        n={n:>6}: median {ms(statistics.median(lat))}  "
              f"p95 {ms(pct(lat, 95))}   (not durable: writes every 1000 changes)")
    for n in (1_000, 100_000):
        path = folder / f"snapshot-{n}.json"
        storage = SnapshotStorage(path)
        tables = {"judgments": {str(i): {"query": f"q{i // 50}", "doc": f"d{i}", "grade": 1, "reason": "r",
                                         "collection_version": "c", "reviewer": "x", "created": "t", "updated": "t",
                                         "removed": None} for i in range(n)}}
        lat = []
        for i in range(10):
            tables["judgments"][str(i)] = dict(tables["judgments"][str(i)], grade=2)
            t = time.perf_counter()
            storage.write(tables)
            lat.append(time.perf_counter() - t)
        print(f"  atomic snapshot per edit        n={n:>6}: median {ms(statistics.median(lat))}  "
              f"p95 {ms(pct(lat, 95))}   (durable, but grows with the store)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,100000", help="judgment counts (default 1000,100000)")
    ap.add_argument("--edits", type=int, default=2000, help="timed edits per size (default 2000)")
    ap.add_argument("--dir", help="where to put the temporary files (default: bench/.cache)")
    ap.add_argument("--compare", action="store_true", help="also time the designs not chosen")
    ap.add_argument("--rounds", type=int, default=5, help="whole-process rounds per command (default 5)")
    ap.add_argument("--process-only", action="store_true", help="only the whole-process figures")
    args = ap.parse_args(argv)
    parent = Path(args.dir) if args.dir else HERE / ".cache"
    parent.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, files under {parent}; load average "
          f"{load_average()}")
    with tempfile.TemporaryDirectory(dir=parent) as tmp:
        process_figures(Path(tmp), sizes, args.rounds)
        print(f"load average after: {load_average()}")
        if args.process_only:
            return 0
        results = main_figures(Path(tmp), sizes, args.edits)
        if len(sizes) >= 2:
            small, large = results[sizes[0]], results[sizes[-1]]
            ratio = large["p95"] / small["p95"]
            print(f"\nedit p95 at {sizes[-1]}: {large['p95'] * 1e3:.2f} ms (target <= 20 ms); "
                  f"ratio p95({sizes[-1]}) / p95({sizes[0]}) = {ratio:.2f} (target <= 1.5); "
                  f"open {sizes[-1]}: {large['open_median'] * 1e3:.0f} ms (target <= 1000 ms)")
        if args.compare:
            compare(Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
