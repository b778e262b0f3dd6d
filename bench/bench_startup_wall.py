"""Wall time of `rankgate gate` on the seed lab, `rankgate --help` and `import numpy` (one OpenBLAS
thread, as rankgate loads it), as whole processes taken in turn (alternating, so a change in the
machine's load falls on all three alike), with each one's CPU time.

    python bench/bench_startup_wall.py [--rounds 40] [--bin bench/.venv-plain/bin]

Issue 19's target: gate on the seed lab and --help under 150 ms (medians). The first 3 rounds are
not counted (the page cache). Run it from the checkout's root, with a plain install's bin folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--bin", default="bench/.venv-plain/bin", help="a venv's bin folder with rankgate installed")
    args = ap.parse_args()
    b = args.bin.rstrip("/") + "/"
    cmds = {"rankgate gate seed-lab": [b + "rankgate", "gate", "sample_benchmarks/seed-lab"],
            "import numpy, 1 thread": [b + "python", "-c", "import numpy"],
            "rankgate --help": [b + "rankgate", "--help"]}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    one_thread = dict(env, OPENBLAS_NUM_THREADS="1")
    wall: dict[str, list[float]] = {k: [] for k in cmds}
    cpu: dict[str, list[float]] = {k: [] for k in cmds}
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):  # every start would compile rankgate's modules again
        print("note: PYTHONDONTWRITEBYTECODE is set: unset for these runs (byte code written once, as on a "
              "user's machine)")
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for i in range(args.rounds + 3):
        for name, cmd in cmds.items():
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env=one_thread if name.startswith("import") else env)
            t1 = time.perf_counter()
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode not in (0, 3):  # the seed lab's gate rejects: exit 3
                raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}")
            if i >= 3:
                wall[name].append(1e3 * (t1 - t0))
                cpu[name].append(1e3 * (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime))
    for name in cmds:
        w = sorted(wall[name])
        print(f"{name:24} median {statistics.median(w):6.1f} ms  min {w[0]:6.1f}  p90 {w[int(0.9 * len(w))]:6.1f}"
              f"  CPU median {statistics.median(cpu[name]):6.1f} ms")
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"gate / import numpy: {statistics.median(wall[next(iter(cmds))]) / statistics.median(wall['import numpy, 1 thread']):.2f}x "
          "wall (issue 36: at most 1.3x)")


if __name__ == "__main__":
    main()
