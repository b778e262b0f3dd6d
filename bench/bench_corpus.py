"""How the review app's corpus reading scales: an MS MARCO-sized passage corpus, and DL19 as it is.

    python bench/bench_corpus.py                      # make bench/data/corpus-8.8m/ if missing, then measure
    python bench/bench_corpus.py --passages 1000000   # a smaller variant
    python bench/bench_corpus.py --dl19 ../shared/conformance/trec-dl-2019-passage

The corpus is JSONL (`{"docid": ..., "text": ...}`, about 330 bytes a line as MS MARCO's
passages are; one passage in 1000 holds U+0085). The app reads it in a background worker and keeps
only the documents it can show (those judged or ranked: `wanted`), so memory is the file's
blocks and those documents, not the collection. Measured in a fresh process each: wall and
CPU seconds, and peak RSS, of read_corpus with 50,000 wanted documents (a review of about
50 queries x 6 runs x 100 + judgments), and without `wanted` on the DL19 file.

With --dl19, the app's whole open (tui.loader.load: runs, label store, queries, scoring) of
DL19 from its raw files is timed too, first open and re-open, beside the ops-handbook sample.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORDS = ("the of and to in is for that on with as are by this be from or an at was it which can have "
         "not your you more one all their has also other its they been water body cells blood heart "
         "energy cost average salary temperature definition meaning causes symptoms treatment").split()


def make_corpus(path: Path, passages: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        buf = []
        for i in range(passages):
            text = " ".join(rng.choices(WORDS, k=56))
            if i % 1000 == 7:
                text = text.replace(" ", "\x85", 1)
            buf.append(json.dumps({"docid": str(i), "text": text}) + "\n")
            if len(buf) == 10000:
                f.writelines(buf)
                buf.clear()
        f.writelines(buf)
    os.replace(tmp, path)


def measure(code: str) -> dict:
    """Run `code` in a fresh process (it prints a JSON line); its wall, CPU and peak RSS."""
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    out = json.loads(p.stdout.read().strip().splitlines()[-1])
    return {**out, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_mb": round(usage.ru_maxrss / 1024)}


READ = """
import json, sys
from rankgate.core.formats.corpus import read_corpus
wanted = {wanted}
docs = read_corpus({path!r}, wanted)
print(json.dumps({{"documents": len(docs)}}))
"""

OPEN = """
import glob, json, os, time
os.environ["RANKGATE_HOME"] = {home!r}
from rankgate.tui.loader import Inputs, load, load_corpus
inputs = {inputs}
t = time.perf_counter()
loaded = load(inputs)
first_view = time.perf_counter() - t
docs = load_corpus(loaded.corpus_path, loaded.wanted_docs)
print(json.dumps({{"first_view_s": round(first_view, 2), "with_corpus_s": round(time.perf_counter() - t, 2),
                  "queries": len(loaded.model.queries), "documents": len(docs)}}))
loaded.model.labels.close()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passages", type=int, default=8_841_823)
    ap.add_argument("--wanted", type=int, default=50_000)
    ap.add_argument("--dl19", type=Path, help="the trec-dl-2019-passage folder (conformance data)")
    args = ap.parse_args()

    rows = []
    if args.dl19:
        d = args.dl19
        (passages,) = d.glob("passages*.jsonl.gz")
        rows.append(("DL19 passages, all", measure(READ.format(wanted=None, path=str(passages)))))
        home = str(HERE / ".cache" / "corpus-home")
        import shutil

        shutil.rmtree(home, ignore_errors=True)
        runs = sorted(str(p) for p in (d / "runs").glob("*.trec"))
        dl19 = (f"Inputs({str(d / 'qrels.dl19-passage.txt')!r}, {runs!r}, queries={str(d / 'topics.dl19-passage.tsv')!r}, "
                f"corpus={str(passages)!r}, k=10, rel_level=2)")
        sample = f"Inputs({str(ROOT / 'sample_benchmarks' / 'ops-handbook')!r})"
        for name, inputs in (("open DL19 (raw files), first", dl19), ("open DL19 (raw files), again", dl19),
                             ("open ops-handbook sample, first", sample), ("open ops-handbook sample, again", sample)):
            rows.append((name, measure(OPEN.format(home=home, inputs=inputs))))
    if args.passages:
        path = HERE / "data" / f"corpus-{args.passages}" / "corpus.jsonl"
        if not path.exists():
            t = time.perf_counter()
            make_corpus(path, args.passages)
            print(f"made {path} ({path.stat().st_size >> 20} MB) in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        n = min(args.wanted, args.passages)
        wanted = f"set(map(str, __import__('random').Random(1).sample(range({args.passages}), {n})))"
        rows.append((f"{args.passages:,} passages ({path.stat().st_size >> 20} MB), {n:,} wanted",
                     measure(READ.format(wanted=wanted, path=str(path)))))
    for name, r in rows:
        print(f"{name:<52} " + "  ".join(f"{k} {v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
