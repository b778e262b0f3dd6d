"""Document IDs crafted to share one 64-bit hash against ordinary IDs of the same shape, whole process.

    python bench/bench_crafted.py                 # 60 queries x 1,000, 60k judged, 3 rounds
    python bench/bench_crafted.py --rounds 5 --queries 120
    python bench/bench_crafted.py --rounds 1 --src /tmp/before   # an older checkout (git worktree add)

The fast reader looks judged documents up by an unkeyed 64-bit hash, so anyone can make IDs that share one
(tests/unit/test_crafted_hashes.py's crafted_ids: the hash's last multiply undone). This times `gate`,
`compare`, `score` and `validate` on qrels and two runs (grouped) made of such IDs, and on the same files
with every ID swapped for an ordinary random one of the same length, and prints the medians, the ratio
crafted / ordinary (about 1 is the claim; before the fix `gate` took 74 s on this input where ordinary
IDs took about 1 s) and the load average before and after. Inputs go to bench/data/crafted/.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's tests/, for crafted_ids

COMMANDS = {
    "gate": ["gate", "--qrels", "{q}", "--runs", "base={a}", "--runs", "cand={b}", "--baseline", "base",
             "--candidate", "cand", "-m", "AP,nDCG@10"],
    "compare": ["compare", "--qrels", "{q}", "--runs", "base={a}", "--runs", "cand={b}", "--baseline", "base"],
    "score": ["score", "--qrels", "{q}", "--runs", "{a}", "-m", "AP,ndcg_cut_10,RR@10,R@100,P@10"],
    "validate": ["validate", "--qrels", "{q}", "--runs", "{a}"],
}


def make(folder: Path, ids: list[str], queries: int, depth: int, seed: int = 3) -> None:
    """Qrels judging `depth` IDs a query and two runs ranking `depth` a query, both drawn from `ids`."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "qrels.txt", "w") as q, open(folder / "a.txt", "w") as a, open(folder / "b.txt", "w") as b:
        for i in range(queries):
            q.writelines(f"q{i} 0 {d} {rng.randint(0, 3)}\n" for d in rng.sample(ids, depth))
            docs = rng.sample(ids, depth)
            for f in (a, b):
                rng.shuffle(docs)
                f.writelines(f"q{i} Q0 {d} {k + 1} {depth - k} x\n" for k, d in enumerate(docs))


def ordinary(n: int, length: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    alphabet = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "#")
    return list(dict.fromkeys("".join(rng.choices(alphabet, k=length)) for _ in range(n)))


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--ids", type=int, default=20000, help="distinct IDs to draw from (crafting: ~12 s per 20k)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rankgate", default=str(Path(sys.executable).parent / "rankgate"))
    ap.add_argument("--src", help="run the rankgate of the checkout at SRC instead (PYTHONPATH=SRC/src), e.g. an "
                    "older commit's `git worktree`")
    args = ap.parse_args()
    if args.src:
        os.environ["PYTHONPATH"] = str(Path(args.src) / "src")
        args.rankgate = f"{sys.executable} -m rankgate"
    from tests.unit.test_crafted_hashes import crafted_ids

    data = HERE / "data" / "crafted"
    crafted = [d for d in crafted_ids(args.ids) if not d.startswith("#")]
    make(data / "crafted", crafted, args.queries, args.depth)
    make(data / "ordinary", ordinary(len(crafted), len(crafted[0])), args.queries, args.depth)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {args.queries} queries x "
          f"{args.depth}, {args.queries * args.depth} judged; {len(crafted)} IDs of one hash; "
          f"{args.rounds} rounds, medians of whole processes")
    print(f"{'command':10} {'crafted s':>10} {'ordinary s':>11} {'ratio':>7}")
    for name, template in COMMANDS.items():
        got = {}
        for kind in ("crafted", "ordinary"):
            d = data / kind
            argv = args.rankgate.split() + [t.format(q=d / "qrels.txt", a=d / "a.txt", b=d / "b.txt") for t in template]
            timed(argv)  # warm-up (page cache, byte code)
            got[kind] = statistics.median(timed(argv) for _ in range(args.rounds))
        print(f"{name:10} {got['crafted']:10.2f} {got['ordinary']:11.2f} {got['crafted'] / got['ordinary']:6.2f}x")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
