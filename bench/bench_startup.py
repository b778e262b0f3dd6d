"""Start-up of short commands, whole process: CPU seconds (user + sys, median of --runs) and, with
--instructions, the instructions executed (valgrind's callgrind "I refs": the same on a busy machine
as on a quiet one, so two commits compare exactly even when the load average is 10).

    python bench/bench_startup.py [--runs 20] [--instructions] [--src DIR ...]

Each command runs with bytecode caching on (as after `pip install`, which compiles every module):
PYTHONDONTWRITEBYTECODE is dropped and every source tree is compiled once first. Without .pyc files
every run compiles all of rankgate's modules again, and `gate` costs about twice as much.
`--src` compares source trees (e.g. a `git archive` of main unpacked in /tmp) under the same python.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "import numpy": ["-c", "import numpy"],
    "import numpy, 1 BLAS thread": ["-c", "import numpy"],  # the floor of the commands that compute: rankgate loads
    # numpy with one OpenBLAS thread (cli.main); numpy.random is no longer on the gate's path (stats.SplitMix64)
    "rankgate --help": ["-m", "rankgate", "--help"],
    "rankgate score seed-lab": ["-m", "rankgate", "score", "sample_benchmarks/seed-lab"],
    "rankgate gate seed-lab": ["-m", "rankgate", "gate", "sample_benchmarks/seed-lab"],
    "gate, as the rankgate script": ["-c", "import sys; from rankgate.cli import main; sys.exit(main())", "gate",
                                     "sample_benchmarks/seed-lab"],  # what .venv/bin/rankgate runs: no runpy
}


ENV = {"import numpy, 1 BLAS thread": {"OPENBLAS_NUM_THREADS": "1"}}  # what a command runs with beyond PYTHONPATH


def env_for(src: Path, name: str = "") -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    return env | ENV.get(name, {})


def cpu_seconds(argv: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *argv], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(argv: list[str], env: dict) -> int | None:
    # a fixed hash seed, one OpenBLAS thread and no address randomisation (setarch -R) keep the count steady; so
    # the counts do not show OpenBLAS's thread start-up (the CPU column does: rankgate itself asks for one thread)
    env = dict(env, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    fixed = ["setarch", "-R"] if shutil.which("setarch") else []
    out = subprocess.run([*fixed, "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                          *argv], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    return int(found.group(1).replace(",", "")) if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--instructions", action="store_true", help="also count instructions (valgrind; ~10 s each)")
    ap.add_argument("--src", action="append", default=[], help="a source tree to run (default: this one's src)")
    args = ap.parse_args()
    sources = [Path(s).resolve() for s in args.src] or [ROOT / "src"]
    if args.instructions and not shutil.which("valgrind"):
        sys.exit("--instructions needs valgrind")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for src in sources:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=env_for(src), check=True)
        print(f"\n{src}")
        for name, argv in COMMANDS.items():
            env = env_for(src, name)
            cpu_seconds(argv, env)  # warm the file cache
            cpu = statistics.median(cpu_seconds(argv, env) for _ in range(args.runs))
            line = f"  {name:<26} CPU {cpu * 1000:6.0f} ms"
            if args.instructions:
                n = instructions(argv, env)
                line += f"   {n / 1e6:7.1f} M instructions" if n else "   (no count)"
            print(line, flush=True)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
