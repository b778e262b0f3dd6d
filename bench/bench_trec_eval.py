"""`rankgate trec_eval -q -c -m all_trec` against the C trec_eval, whole process, digit for digit.

    python bench/bench_trec_eval.py                          # trec_eval from PATH, 5 rounds
    python bench/bench_trec_eval.py --trec-eval /tmp/trec_eval/trec_eval --rounds 9
    python bench/bench_trec_eval.py --bench robust --rounds 1    # a quick check that it works

The C program is not on PyPI or in Debian: build it from github.com/usnistgov/trec_eval (`make`) outside
this checkout. Without one, rankgate alone is timed (no ratio).

Workloads (generated into bench/data/trec_eval/ on first use, deterministic):
- robust: TREC Robust 2003's size: 100 topics x 1,000 ranked documents (a few topics ranked short),
  about 1,250 judgments per topic graded 0-2, document IDs such as FBIS3-10082 and LA010189-0001,
  scores with ties (trec_eval breaks them by document ID);
- one-line: one judgment and one ranked document (start-up);
- dl19: TREC DL 2019 passage, RepLLaMA's top 1,000 (../shared/conformance, when present).
Each round runs every tool once, in turn, as a fresh process, after one untimed warm-up round (which
also writes rankgate's .pyc files: PYTHONDONTWRITEBYTECODE is dropped, as an installed package has
them). Printed: median wall and CPU seconds (user + system, from wait4), peak resident memory,
rankgate / trec_eval, whether every line is the same, and the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "trec_eval"
SHARED = HERE.parent.parent / "shared" / "conformance" / "trec-dl-2019-passage"
OPTIONS = ["-q", "-c", "-m", "all_trec"]
PREFIXES = [("FBIS3-", 5), ("FBIS4-", 5), ("FT934-", 4), ("FT941-", 4), ("LA010189-", 4), ("FR940104-0-", 5)]


def robust_like(folder: Path, topics: int = 100, depth: int = 1000, judged: int = 1250, seed: int = 2003) -> None:
    """Qrels and a run of TREC Robust 2003's size and shape (see the module's docstring)."""
    rng = random.Random(seed)

    def docid() -> str:
        prefix, digits = rng.choice(PREFIXES)
        return f"{prefix}{rng.randrange(10 ** (digits - 1), 10 ** digits)}"

    qrels, run = [], []
    for topic in range(601, 601 + topics):
        pool = list(dict.fromkeys(docid() for _ in range(judged + depth)))
        rng.shuffle(pool)
        n_rel = rng.randint(1, 150)
        for i, doc in enumerate(pool[:judged]):
            grade = (2 if rng.random() < 0.3 else 1) if i < n_rel else 0
            qrels.append(f"{topic} 0 {doc} {grade}\n")
        n = depth if rng.random() > 0.1 else rng.randint(5, 200)  # some topics ranked short
        candidates = list(dict.fromkeys(pool[:n_rel * 3] + pool[judged // 4:]))  # some relevant, many unjudged
        ranked = rng.sample(candidates, n)
        score = 30.0
        for k, doc in enumerate(ranked):
            if rng.random() > 0.2:  # one in five ties the one above
                score -= rng.choice([0.001, 0.01, 0.125, 0.5])
            run.append(f"{topic} Q0 {doc} {k + 1} {score:.4f} robust_like\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "run.txt").write_text("".join(run))


def workloads(names: list[str]) -> dict[str, tuple[Path, Path]]:
    out = {}
    for name in names:
        if name == "robust":
            if not (DATA / "robust" / "run.txt").exists():
                robust_like(DATA / "robust")
            out[name] = (DATA / "robust" / "qrels.txt", DATA / "robust" / "run.txt")
        elif name == "one-line":
            (DATA / "one-line").mkdir(parents=True, exist_ok=True)
            (DATA / "one-line" / "qrels.txt").write_text("q1 0 d1 1\n")
            (DATA / "one-line" / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n")
            out[name] = (DATA / "one-line" / "qrels.txt", DATA / "one-line" / "run.txt")
        elif name == "dl19":
            if SHARED.is_dir():
                out[name] = (SHARED / "qrels.dl19-passage.txt", SHARED / "runs" / "REP_LLAMA.dl19.trec")
            else:
                print(f"note: {SHARED} is absent: dl19 skipped", file=sys.stderr)
        else:
            raise SystemExit(f"unknown workload {name!r} (robust, one-line, dl19)")
    return out


def run_once(cmd: list[str], env: dict) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak MB, stdout) of one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        # through a small shell that forks the command: a process forked from this Python and then exec'd
        # would report this Python's resident memory as its peak (Linux keeps the high-water mark across exec)
        proc = subprocess.Popen(["/bin/sh", "-c", '"$@"; exit $?', "sh", *cmd], stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.read().decode()[-2000:]}")
        out.seek(0)
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out.read().decode()


def bench(name: str, qrels: Path, run: Path, tools: dict[str, list[str]], rounds: int, env: dict) -> None:
    load_before = os.getloadavg()
    times: dict[str, list] = {tool: [] for tool in tools}
    texts = {}
    for r in range(rounds + 1):
        for tool, cmd in tools.items():
            wall, cpu, rss, text = run_once([*cmd, *OPTIONS, str(qrels), str(run)], env)
            texts[tool] = text
            if r:
                times[tool].append((wall, cpu, rss))
    load_after = os.getloadavg()
    print(f"\n{name}: {qrels.name} x {run.name} ({sum(1 for _ in open(run, 'rb')):,} run lines), "
          f"{rounds} rounds, load {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print("| tool | median wall s | median CPU s | peak MB | wall / trec_eval | CPU / trec_eval |")
    print("|---|---:|---:|---:|---:|---:|")
    c = times.get("trec_eval")
    for tool, ts in times.items():
        wall, cpu = statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts)
        ratio = (f"{wall / statistics.median(t[0] for t in c):.2f}x | {cpu / statistics.median(t[1] for t in c):.2f}x"
                 if c else "- | -")
        print(f"| {tool} | {wall:.3f} | {cpu:.3f} | {max(t[2] for t in ts):.0f} | {ratio} |")
    if c:
        same = texts["rankgate"] == texts["trec_eval"]
        lines = texts["trec_eval"].count("\n")
        print(f"every line the same as trec_eval's: {'yes' if same else 'NO'} ({lines:,} lines)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="robust,one-line,dl19", help="comma-separated: robust, one-line, dl19")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the python that runs rankgate")
    ap.add_argument("--trec-eval", help="the C trec_eval (default: trec_eval on PATH)")
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    tools = {"rankgate": [args.python, "-m", "rankgate", "trec_eval"]}
    te = args.trec_eval or shutil.which("trec_eval")
    if te:
        tools["trec_eval"] = [te]
    else:
        print("note: no C trec_eval (on PATH or --trec-eval PATH): rankgate alone, no ratio", file=sys.stderr)
    print(f"{sys.platform}, {os.cpu_count()} cores, python {sys.version.split()[0]}, trec_eval: {te or 'none'}")
    for name, (qrels, run) in workloads(args.bench.split(",")).items():
        bench(name, qrels, run, tools, args.rounds, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
