"""Whole-process timings of `rankgate score` against trec_eval's heirs, side by side.

    python bench/gen_data.py                      # inputs, once (bench/data/)
    python bench/bench_score.py                   # every benchmark, 5 rounds
    python bench/bench_score.py --bench msmarco --rounds 3 --tools rankgate,floor,pytrec_eval

Every tool reads the same TREC qrels and run from disk and computes AP, nDCG@10,
RR@10, R@100 and P@10 over all queries; each round runs every tool once, in
turn, as a fresh process (after one untimed warm-up round that fills the page
cache and numba's cache). Reported: the median wall time, the median CPU time
(user + system, which other load on the machine disturbs less), and the peak
resident memory of that process (ru_maxrss from wait4), each tool's ratio to
rankgate, and rankgate's to the read floor: `floor` is pyarrow reading the run's
query, document and score columns and doing nothing else (peers/read_floor.py,
under this python; with --command compare or gate, each of the two runs the command
reads), measured in the same rounds; as the floor's own time swings
most (the kernel's cost of fresh memory pages on a shared virtual machine), the
ratio of the fastest rounds is printed beside the medians'. The peers run under
--peer-python (default: a separate venv if present, else this python); a peer
that is not installed there is skipped with a note. The load average before and
after each benchmark and the environment (versions, pandas installed or not) are
printed with the figures. Each peer's means are checked against rankgate's to
1e-4 and every disagreement is printed with its known cause.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
PEERS = HERE / "peers"
DEFAULT_PEER_PYTHON = HERE / ".venv-peers" / "bin" / "python"  # bench/README.md, Setup

MEASURES = ["AP", "nDCG@10", "RR@10", "R@100", "P@10"]
TREC_NAMES = {"map": "AP", "ndcg_cut_10": "nDCG@10", "recip_rank_cut_10": "RR@10", "recall_100": "R@100",
              "P_10": "P@10"}
BENCHES = {  # name: (folder, run file)
    "msmarco": ("msmarco", "run.txt"),
    "wide": ("wide", "run.txt"),
    "shuffled": ("msmarco", "run.shuffled.txt"),
    "long": ("long", "run.txt"),  # 25-byte document IDs
    "long-shuffled": ("long", "run.shuffled.txt"),
    # dense qrels (gen_data.py --judged-per-query, default 100), as real pooled qrels are: issue 36
    "dense": ("dense", "run.txt"),
    "dense-shuffled": ("dense", "run.shuffled.txt"),
    "dense-wide": ("dense-wide", "run.txt"),
    "dense-1m": ("dense-1m", "run.txt"),
    "dense-2m": ("dense-2m", "run.txt"),
    "quick": ("quick-2000x1000-100", "run.txt"),  # bench/quick.py's default workload (it generates it)
}
DENSE = "dense,dense-shuffled,dense-wide,dense-1m,dense-2m"
PEER_MODULES = {"pytrec_eval": "pytrec_eval", "ranx": "ranx", "ir_measures": "ir_measures",
                "prototype": "pyarrow"}
COMPARE_PEERS = ("ranx",)  # peers/ranx_compare_peer.py: ranx's compare, Fisher's randomization test on five measures
OWN_TOOLS = ("rankgate", "rankgate-general", "rankgate-before", "floor", "floor+qrels")  # run under this python, not --peer-python
# "prototype" is not a peer: bench/experiments/fast_score.py, the lean read path this
# harness recommends (pyarrow reader, no document interning, rankgate's own measures),
# run under --peer-python, to show what the whole process can take.
TOLERANCE = 1e-4

# Known reasons a peer's mean differs from trec_eval's (and so rankgate's).
NOTES = {
    ("ranx", "*"): "ranx orders tied scores by its own argsort, not by doc id descending as trec_eval does",
    ("ir_measures", "RR@10"): "ir_measures computes RR@10 with its msmarco provider, which breaks score ties "
                              "its own way (pytrec_eval has no RR cut-off)",
}


def second_run(run: Path) -> Path:
    """The candidate `compare` and `gate` measure against the run: the benchmark's run.cand.txt (gen_data.py
    writes one beside each dense run: the same documents, scores moved by noise, so the measures differ),
    else the run itself under a second name (read twice, every delta zero)."""
    cand = run.with_name("run.cand.txt")
    return cand if cand.exists() and cand != run else run


def rankgate_cmd(args, qrels: Path, run: Path) -> list[str]:
    command = getattr(args, "command", "score")
    jobs = ["--jobs", str(args.jobs)] if getattr(args, "jobs", None) else []
    common = ["--qrels", str(qrels), "--missing-queries", "zero", "--short-rankings", "allow", *jobs]
    two = ["--runs", f"base={run}", "--runs", f"cand={second_run(run)}"]
    if command == "compare":  # every query compared, its movements too: the JSON is large (10k queries: 64 MB)
        return [*args.rankgate, "compare", *common, *two, "--format", "json"]
    if command == "gate":
        extra = [f"-m{m}" for m in (getattr(args, "gate_measures", None) or "").split(",") if m]
        return [*args.rankgate, "gate", *common, *two, "--baseline", "base", "--candidate", "cand", *extra]
    return [*args.rankgate, "score", *common, "--runs", str(run), "--format", "trec",
            "-m", "AP,ndcg_cut_10,RR@10,R@100,P@10"]


def peer_cmd(args, tool: str, qrels: Path, run: Path) -> list[str]:
    if tool in ("floor", "floor+qrels"):  # every run the command reads: compare and gate read two
        runs = [run, second_run(run)] if getattr(args, "command", "score") != "score" else [run]
        flag = ["--with-qrels"] if tool == "floor+qrels" else []
        return [sys.executable, str(PEERS / "read_floor.py"), *flag, str(qrels), *map(str, runs)]
    if tool == "prototype":
        return [str(args.peer_python), str(HERE / "experiments" / "fast_score.py"), str(qrels), str(run), "--compact"]
    command = getattr(args, "command", "score")
    if command == "compare" and tool in COMPARE_PEERS:  # the same job: both runs, a paired test on each measure
        return [str(args.peer_python), str(PEERS / f"{tool}_compare_peer.py"), str(qrels), str(run),
                str(second_run(run))]
    if command != "score":
        raise SystemExit(f"{tool} has no {command}: the peers of --command compare are {', '.join(COMPARE_PEERS)}")
    return [str(args.peer_python), str(PEERS / f"{tool}_peer.py"), str(qrels), str(run)]


def parse_rankgate(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == "all" and parts[0].strip() in TREC_NAMES:
            out[TREC_NAMES[parts[0].strip()]] = float(parts[2])
    return out


def parse_peer(text: str) -> dict[str, float]:
    return {k: v for k, v in json.loads(text.strip().splitlines()[-1]).items() if k in MEASURES}


GENERAL_ENV = {"RANKGATE_FAST": "0"}  # rankgate-general: rankgate without its pyarrow fast path


def tool_env(args, tool: str) -> dict | None:
    """The environment a tool runs with: --src / --before-src put a checkout's src/ first on the path."""
    env = dict(GENERAL_ENV) if tool == "rankgate-general" else {}
    src = args.before_src if tool == "rankgate-before" else args.src if tool.startswith("rankgate") else None
    if src:
        env["PYTHONPATH"] = str(Path(src).resolve() / "src")
    return env or None


def run_once(cmd: list[str], env: dict | None = None) -> tuple[float, float, float, str]:
    """(wall seconds, cpu seconds, peak MB, stdout) of one process."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env={**os.environ, **env} if env else None)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode()
        if proc.returncode != 0 and not (proc.returncode == 3 and "gate" in cmd):  # 3: the gate rejects
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.read().decode()[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, text


def installed_peers(args) -> list[str]:
    if not args.peer_python.exists():
        print(f"note: peer python {args.peer_python} not found: skipping every peer "
              "(see bench/README.md for the venv)")
        return []
    found = []
    for tool in args.tools:
        if tool in OWN_TOOLS:
            continue
        mod = PEER_MODULES[tool]
        ok = subprocess.run([str(args.peer_python), "-c", f"import {mod}"], capture_output=True).returncode == 0
        if ok:
            found.append(tool)
        else:
            print(f"note: {tool} is not installed in {args.peer_python}: skipped")
    return found


def versions(args, peers: list[str]) -> dict[str, str]:
    names = {"pytrec_eval": "pytrec-eval-terrier", "ranx": "ranx", "ir_measures": "ir-measures",
             "prototype": "pyarrow"}
    out = {}
    code = "import sys, importlib.metadata as m\nfor n in sys.argv[1:]:\n print(m.version(n))"
    if peers:
        res = subprocess.run([str(args.peer_python), "-c", code, *[names[p] for p in peers]],
                             capture_output=True, text=True)
        out.update(zip(peers, res.stdout.split()))
    res = subprocess.run([*args.rankgate, "--version"], capture_output=True, text=True,
                         env={**os.environ, **(tool_env(args, "rankgate") or {})})
    out["rankgate"] = (res.stdout.strip().split() or ["?"])[-1]
    return out


def bench(args, name: str, peers: list[str]) -> dict:
    folder, run_name = BENCHES[name]
    if args.queries:
        folder = f"{folder}-{args.queries}"
    qrels, run = DATA / folder / "qrels.txt", DATA / folder / run_name
    if not run.exists() or not qrels.exists():
        sys.exit(f"{run} missing: run `python bench/{'quick' if name == 'quick' else 'gen_data'}.py` first")
    lines = sum(1 for _ in open(run, "rb"))
    cmds = {t: rankgate_cmd(args, qrels, run) for t in ("rankgate", "rankgate-general") if t in args.tools}
    if args.before_src:
        cmds["rankgate-before"] = rankgate_cmd(args, qrels, run)
    for tool in ("floor", "floor+qrels"):
        if tool in args.tools:
            cmds[tool] = peer_cmd(args, tool, qrels, run)
    cmds.update({p: peer_cmd(args, p, qrels, run) for p in peers})
    samples: dict[str, list[tuple[float, float, float]]] = {t: [] for t in cmds}
    means: dict[str, dict[str, float]] = {}
    load_before = os.getloadavg()
    print(f"\n== {name}: {run.relative_to(HERE)} ({lines:,} lines, {run.stat().st_size / 1e6:.0f} MB), "
          f"{args.rounds} rounds + {args.warmup} warm-up, load average {load_before[0]:.1f}", flush=True)
    for r in range(-args.warmup, args.rounds):
        for tool, cmd in cmds.items():
            wall, cpu, peak, out = run_once(cmd, tool_env(args, tool))
            if tool not in means and not tool.startswith("floor") and args.command == "score":
                means[tool] = parse_rankgate(out) if tool.startswith("rankgate") or tool == "prototype" \
                    else parse_peer(out)
            if r >= 0:
                samples[tool].append((wall, cpu, peak))
            if args.verbose:
                print(f"  round {r}: {tool:12s} {wall:7.2f} s wall {cpu:7.2f} s cpu {peak:7.0f} MB", flush=True)
    rows = []
    for tool, s in samples.items():
        rows.append(dict(tool=tool, wall=statistics.median(x[0] for x in s), wall_min=min(x[0] for x in s),
                         cpu=statistics.median(x[1] for x in s), cpu_min=min(x[1] for x in s),
                         peak_mb=max(x[2] for x in s)))
    return dict(bench=name, run=str(run.relative_to(HERE)), lines=lines, rows=rows, means=means,
                disagreements=check(means), load=[load_before[0], os.getloadavg()[0]])


def check(means: dict[str, dict[str, float]]) -> list[dict]:
    ref = means.get("rankgate")
    if not ref:
        return []
    out = []
    for tool, vals in means.items():
        if tool == "rankgate":
            continue
        for m in MEASURES:
            if m not in vals or m not in ref:
                out.append(dict(tool=tool, measure=m, rankgate=ref.get(m), peer=vals.get(m), note="missing"))
            elif abs(vals[m] - ref[m]) > TOLERANCE:
                note = NOTES.get((tool, m)) or NOTES.get((tool, "*")) or "unexplained"
                out.append(dict(tool=tool, measure=m, rankgate=ref[m], peer=vals[m], note=note))
    return out


def table(result: dict) -> str:
    rows = result["rows"]
    base = next((r["wall"] for r in rows if r["tool"] == "rankgate"), None)
    base_cpu = next((r["cpu"] for r in rows if r["tool"] == "rankgate"), None)
    load = result.get("load") or [float("nan")] * 2
    out = [f"| {result['bench']} ({result['lines']:,} lines; load {load[0]:.1f}-{load[1]:.1f}) | median s | "
           f"x rankgate | cpu s | cpu x rankgate | peak MB |", "|---|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: r["wall"]):
        ratio = f"{r['wall'] / base:.2f}" if base else "-"
        cratio = f"{r['cpu'] / base_cpu:.2f}" if base_cpu else "-"
        out.append(f"| {r['tool']} | {r['wall']:.2f} | {ratio} | {r['cpu']:.2f} | {cratio} | {r['peak_mb']:.0f} |")
    floor = next((r for r in rows if r["tool"] == "floor"), None)
    before = next((r for r in rows if r["tool"] == "rankgate-before"), None)
    if floor and base:
        out.append(f"\nrankgate / read floor: {base / floor['wall']:.2f}x wall, {base_cpu / floor['cpu']:.2f}x cpu "
                   "(target: at most 2x)")
        mine = next(r for r in rows if r["tool"] == "rankgate")
        if "wall_min" in floor and "cpu_min" in floor:  # the floor swings most: its best against rankgate's best
            out.append(f"fastest rounds: {mine['wall_min'] / floor['wall_min']:.2f}x wall "
                       f"({mine['wall_min']:.2f} / {floor['wall_min']:.2f} s), "
                       f"{mine['cpu_min'] / floor['cpu_min']:.2f}x cpu")
        if before:
            out.append(f"rankgate-before / read floor: {before['wall'] / floor['wall']:.2f}x wall, "
                       f"{before['cpu'] / floor['cpu']:.2f}x cpu")
    both = next((r for r in rows if r["tool"] == "floor+qrels"), None)
    if both and base:  # a reference: the floor reading the judgments too (not the floor)
        out.append(f"rankgate / read floor with the qrels: {base / both['wall']:.2f}x wall, "
                   f"{base_cpu / both['cpu']:.2f}x cpu")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=DENSE, help=f"comma list of {', '.join(BENCHES)} (default: the dense ones, "
                    f"{DENSE}; the sparse ones are msmarco, wide, shuffled, long, long-shuffled)")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per tool (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    ap.add_argument("--tools", default="rankgate,floor,pytrec_eval,ranx,ir_measures",
                    help="comma list of tools (floor: pyarrow reading three columns, peers/read_floor.py; floor+qrels: "
                         "the same and the qrels' three columns, a reference row; "
                         "rankgate-general: RANKGATE_FAST=0, the reader without pyarrow; "
                         "prototype: bench/experiments/fast_score.py, not a peer)")
    ap.add_argument("--peer-python", type=Path,
                    default=DEFAULT_PEER_PYTHON if DEFAULT_PEER_PYTHON.exists() else Path(sys.executable),
                    help=f"python of the venv with the peers installed (default {DEFAULT_PEER_PYTHON} if present, "
                         "else this python)")
    ap.add_argument("--rankgate", default=None,
                    help="rankgate command (default: the rankgate script beside this python, else python -m rankgate)")
    ap.add_argument("--src", type=Path, help="run rankgate from this checkout (PYTHONPATH=SRC/src)")
    ap.add_argument("--before-src", type=Path,
                    help="also run rankgate from this checkout (e.g. a worktree of main), as rankgate-before")
    ap.add_argument("--queries", type=int, help="use the smaller inputs of `gen_data.py --queries N`")
    ap.add_argument("--command", choices=("score", "compare", "gate"), default="score",
                    help="rankgate's command (compare, gate: the run as baseline, the benchmark's "
                         "run.cand.txt as candidate (else the run under a second name); the floor then reads "
                         "both runs)")
    ap.add_argument("--gate-measures", help="with --command gate: extra measures, a comma list (AP,ndcg: whole "
                    "rankings, so the review queue reads each run again for its documents)")
    ap.add_argument("--jobs", type=int, help="rankgate's --jobs (default: its own, every core)")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every round")
    args = ap.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    for flag, tree in (("--src", args.src), ("--before-src", args.before_src)):
        if tree is not None and not (tree / "src" / "rankgate" / "__init__.py").is_file():
            # given a checkout's src/ (or anything else), rankgate would come from the installed package, silently
            ap.error(f"{flag} {tree}: no src/rankgate/__init__.py under it; give the checkout's root, not its src/")
        if tree is not None:  # byte code for both trees, as an installed package has: where the shell sets
            import compileall  # PYTHONDONTWRITEBYTECODE, a fresh worktree compiled rankgate in every process

            compileall.compile_dir(str(tree / "src" / "rankgate"), quiet=1)
    unknown = set(args.tools) - {*OWN_TOOLS, *PEER_MODULES}
    if unknown:
        ap.error(f"unknown tools: {', '.join(sorted(unknown))}")
    if args.rankgate:
        args.rankgate = args.rankgate.split()
    else:
        script = Path(sys.executable).parent / "rankgate"
        args.rankgate = [str(script)] if script.exists() else [sys.executable, "-m", "rankgate"]
    benches = [b.strip() for b in args.bench.split(",") if b.strip()]
    for b in benches:
        if b not in BENCHES:
            ap.error(f"unknown benchmark {b!r} (choose from {', '.join(BENCHES)})")

    peers = installed_peers(args)
    vers = versions(args, peers)
    print("tools: " + ", ".join(f"{t} {v}" if t != "prototype" else f"prototype (pyarrow {v})"
                                for t, v in vers.items()))
    env = environment(args)
    print("environment: " + ", ".join(f"{k} {v}" for k, v in env.items()))
    results = []
    for b in benches:
        res = bench(args, b, peers)
        results.append(res)
        print(table(res))
        for d in res["disagreements"]:
            print(f"  disagrees: {d['tool']} {d['measure']}: {d['peer']:.6f} vs rankgate {d['rankgate']:.4f} "
                  f"({d['note']})")
        if not res["disagreements"] and len(res["means"]) > 1:
            print(f"  every peer's means agree with rankgate's to {TOLERANCE:g}")
    print()
    for res in results:
        print(table(res))
        print()
    if args.json:
        args.json.write_text(json.dumps(dict(versions=vers, environment=env, machine=machine(), results=results),
                                        indent=2))
    return 0


def environment(args) -> dict:
    """rankgate's python: its version and the versions of what the fast path uses; pandas installed or not
    (pyarrow imports it when it is, unless the arrays are built as rankgate builds them)."""
    code = ("import sys, importlib.metadata as m\nfor n in ('numpy', 'pyarrow', 'pandas'):\n"
            " try: print(n, m.version(n))\n except m.PackageNotFoundError: print(n, 'not installed')")
    python = args.rankgate[0] if args.rankgate[0].endswith("python") else sys.executable
    script = Path(args.rankgate[0])
    if script.name == "rankgate":  # the venv's script: its python is beside it
        python = str(script.parent / "python")
    out = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split("\n")
    env = {"python": python}
    env.update(line.split(" ", 1) for line in out if " " in line)
    env["nproc"] = str(os.cpu_count())
    return env


def machine() -> dict:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return dict(nproc=os.cpu_count(), cpu=cpu, mem_gib=round(mem, 1), python=sys.version.split()[0],
                load=os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
