"""How many judgments `labels queue --budget` needs to restore the full-qrels decision, against judging in rank order.

On TREC DL 2019 passage: remove a share of the judgments (seeded), gate each pair of runs on what is left,
then judge the removed documents back (their grade from the full qrels; a document the full qrels never
judged counts 0, as the gate counts it) one at a time, in two orders:

- budget: `labels queue --budget` (core/budget.py): the bounds' documents to judge, then the gate's
  review queue; asked again after every judgment (as a reviewer would see it, with what is known so far);
- rank order: the unjudged documents of the baseline's and the candidate's top k, rank 1 of every query
  first, then rank 2 ...

For each, how many judgments until the decision equals the full-qrels decision and stays equal to the end
of that order ("restored"), and until it is also certain (the bounds' four scenarios agree). Prints the
load average (figures taken on a busy machine are not figures).

    .venv/bin/python bench/bench_budget.py --dl19 ../shared/conformance/trec-dl-2019-passage
    .venv/bin/python bench/bench_budget.py --pairs 2 --seeds 1 --step 5     # a short run
"""

from __future__ import annotations

import argparse
from dataclasses import replace
import itertools
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from rankgate.core.bounds import stability  # noqa: E402
from rankgate.core.budget import budget_for  # noqa: E402
from rankgate.core.compare import pair  # noqa: E402
from rankgate.core.decision import decide, extra_measures, gate_measures  # noqa: E402
from rankgate.core.formats import read_qrels, read_runs  # noqa: E402
from rankgate.core.model import Catalog, Qrels  # noqa: E402
from rankgate.core.policy import Policy  # noqa: E402


def subset(q: Qrels, keep: np.ndarray) -> Qrels:
    return Qrels(q.path, q.catalog, q.q[keep], q.doc[keep], q.grade[keep], q.query_codes, q.format, {}, [],
                 dict(q.meta))


def with_pairs(base: Qrels, full: dict, pairs: list) -> Qrels:
    """`base` plus the judged `pairs` at their full-qrels grade (0 when the full qrels never judged them)."""
    if not pairs:
        return base
    cat = base.catalog
    aq = np.array([cat.queries.get(a) for a, _ in pairs], base.q.dtype)
    ad = np.array([cat.docs.code(b) for _, b in pairs], base.doc.dtype)
    ag = np.array([full.get(x, 0) for x in pairs], base.grade.dtype)
    return Qrels(base.path, cat, np.r_[base.q, aq], np.r_[base.doc, ad], np.r_[base.grade, ag], base.query_codes,
                 base.format, {}, [], dict(base.meta))


def state(q: Qrels, runs, policy) -> tuple[bool, bool]:
    """(accepted, certain) of the gate on these labels."""
    ms = list(dict.fromkeys(gate_measures(policy.k) + extra_measures(policy)))
    p = pair(q, runs[policy.baseline], runs[policy.candidate], k=policy.k, measures=ms,
             rel_level=policy.checks.rel_level)
    dec = decide(policy, p)
    st = stability(p, policy, dec, q.catalog.docs.names)
    return dec.accepted, st.stable


def rank_order(runs, policy, qrels: Qrels) -> list[tuple[str, str]]:
    judged = set(zip(qrels.q.tolist(), qrels.doc.tolist()))
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    rows = []
    for role in (policy.baseline, policy.candidate):
        r = runs[role]
        order = np.lexsort((-r.score, r.q))
        q, d = r.q[order], r.doc[order]
        start = np.r_[0, np.flatnonzero(q[1:] != q[:-1]) + 1]
        rank = np.arange(len(q)) - np.repeat(start, np.diff(np.r_[start, len(q)]))
        for a, b, k in zip(q.tolist(), d.tolist(), rank.tolist()):
            if k < policy.k and (a, b) not in judged and qn[a] in set(qrels.query_ids):
                rows.append((k, qn[a], dn[b]))
    return list(dict.fromkeys((a, b) for _, a, b in sorted(rows)))


def walk(name: str, next_pairs, base: Qrels, full: dict, runs, policy, truth: bool, limit: int, step: int):
    """Judge in the order `next_pairs(qrels_now, done)` gives, `step` at a time; the judgments until the
    decision is `truth` for good, and until it is also certain."""
    done: list = []
    history = []
    while True:
        now = with_pairs(base, full, done)
        acc, certain = state(now, runs, policy)
        history.append((len(done), acc == truth, acc == truth and certain))
        if len(done) >= limit:
            break
        more = [x for x in next_pairs(now, done) if x not in set(done)][:step]
        if not more:
            break
        done += more
    restored = None  # the first look from which the decision is the full-qrels one to the end
    for n, ok, _ in reversed(history):
        if not ok:
            break
        restored = n
    settled = next((n for n, _, c in history if c), None)
    return restored, settled, len(done)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dl19", default=str(ROOT.parent / "shared" / "conformance" / "trec-dl-2019-passage"))
    ap.add_argument("--remove", type=float, default=0.3, help="share of the judgments removed (default 0.3)")
    ap.add_argument("--seeds", type=int, default=3, help="removals drawn per pair (default 3)")
    ap.add_argument("--pairs", type=int, default=0, help="at most N pairs of runs (default: every pair)")
    ap.add_argument("--step", type=int, default=1, help="judgments between two looks (default 1)")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=400, help="judgments at most per walk (default 400)")
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    folder = Path(args.dl19)
    if not folder.exists():
        sys.exit(f"{folder}: not found (the DL19 conformance files; --dl19 FOLDER)")
    cat = Catalog()
    fullq = read_qrels(str(folder / "qrels.dl19-passage.txt"), catalog=cat)
    runs = {}
    for f in sorted((folder / "runs").glob("*.trec")):
        for r in read_runs(str(f), catalog=cat):
            runs[r.name] = r
    qn, dn = cat.queries.names, cat.docs.names
    full = {(qn[a], dn[b]): g for a, b, g in zip(fullq.q.tolist(), fullq.doc.tolist(), fullq.grade.tolist())}
    pairs = list(itertools.permutations(sorted(runs), 2))
    if args.pairs:
        pairs = pairs[:args.pairs]
    t0 = time.perf_counter()
    print(f"{'baseline -> candidate':<52} seed  full   cut   budget: restored certain   rank order: restored certain")
    totals = {"budget": [], "rank": []}
    for base_name, cand_name in pairs:
        policy = Policy(k=args.k, baseline=base_name, candidate=cand_name)
        policy.checks = replace(policy.checks, k=args.k, short_rankings="allow")
        truth, _ = state(fullq, runs, policy)
        for seed in range(args.seeds):
            keep = np.random.default_rng(seed).random(len(fullq.q)) >= args.remove
            base = subset(fullq, keep)
            cut, _ = state(base, runs, policy)
            b = walk("budget", lambda now, done: budget_for(now, runs, policy, args.step).items, base, full, runs,
                     policy, truth, args.limit, args.step)
            order = rank_order(runs, policy, base)
            r = walk("rank", lambda now, done: order, base, full, runs, policy, truth, args.limit, args.step)
            totals["budget"].append(b)
            totals["rank"].append(r)
            word = lambda a: "accept" if a else "reject"  # noqa: E731
            print(f"{base_name + ' -> ' + cand_name:<52} {seed:>4}  {word(truth):<6} {word(cut):<6}"
                  f"        {_n(b[0]):>8} {_n(b[1]):>7}              {_n(r[0]):>8} {_n(r[1]):>7}")
    for key, rows in totals.items():
        restored = [x[0] for x in rows if x[0] is not None]
        certain = [x[1] for x in rows if x[1] is not None]
        print(f"{key}: restored the full-qrels decision in {len(restored)} of {len(rows)} walks, median "
              f"{_median(restored)} judgments (mean {_mean(restored)}); certain in {len(certain)}, median "
              f"{_median(certain)}")
    print(f"wall {time.perf_counter() - t0:.1f} s; load average after: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _n(x) -> str:
    return "-" if x is None else str(x)


def _median(xs) -> str:
    return "-" if not xs else f"{float(np.median(xs)):g}"


def _mean(xs) -> str:
    return "-" if not xs else f"{float(np.mean(xs)):.1f}"


if __name__ == "__main__":
    random.seed(0)
    main()
