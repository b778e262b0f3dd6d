"""What `rankgate score` scores with a warning where `gate` refuses: only what would make a number wrong
is refused.

- a query with no relevant document (at the level in force): scored as trec_eval scores it (0 for most
  measures, counted in the means);
- a query the run ranks that the qrels lack: ignored, as trec_eval ignores it;
- a ranking shorter than a cutoff: scored as trec_eval scores it (the missing ranks are not relevant);
  refused only when asked for (`--short-rankings error`), and then only against the cutoffs of the
  measures asked for, never the default k columns.

Each is one warning line per file: how many, and the first IDs.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rankgate.core.errors import Problem
from rankgate.core.measures import Measure
from rankgate.core.model import LeanRun, distinct_codes

SOFT_RULES = ("empty-relevant", "extra-queries", "short-ranking")
SHOWN = 5  # IDs a warning names before "and N more"


def _first(ids: list[str]) -> str:
    out = ", ".join(repr(i) for i in ids[:SHOWN])
    return out + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def deepest_cutoff(measures: list[Measure], k: int) -> int:
    """The depth the measures asked for look at: their largest rank cutoff (k when none has one)."""
    cuts = [int(m.cutoff) for m in measures if isinstance(m.cutoff, int)]
    return max(cuts) if cuts else k


def ranking_lengths(run) -> dict[str, int]:
    if isinstance(run, LeanRun):
        if len(run.num_ret) and run.num_ret.min() > 0:  # (every query it names ranks something: the usual case)
            return dict(zip(run.qnames, run.num_ret.tolist()))
        return {q: int(n) for q, n in zip(run.qnames, run.num_ret.tolist()) if n > 0}
    counts = np.bincount(run.q, minlength=len(run.catalog.queries)) if len(run.q) else np.zeros(0, np.int64)
    names = run.catalog.queries.names
    return {names[c]: int(counts[c]) for c in run.query_codes if c < len(counts) and counts[c] > 0}


def lenient_check(bundle, policy, problems_of, *, refuse_short: bool, quiet_short: bool = False
                  ) -> tuple[list[str], list[Problem]]:
    """(warning lines, problems that still refuse) for `rankgate score`. `problems_of(bundle, policy)` is the
    CLI's full validation (cli.evaluate.problems_of); `refuse_short`: --short-rankings error was given;
    `quiet_short`: --short-rankings allow was given (short rankings are wanted: no warning)."""
    checks = replace(policy.checks, short_rankings="allow")
    policy = replace(policy, checks=checks)
    problems = [p for p in problems_of(bundle, policy) if p.rule not in SOFT_RULES]
    warnings: list[str] = []
    qrels, level = bundle.qrels, policy.checks.rel_level
    with_rel = set(distinct_codes(qrels.q[qrels.grade >= level]).tolist())
    codes = qrels.catalog.queries.codes
    empty = [q for q in qrels.query_ids if codes[q] not in with_rel and q not in bundle.no_answer]
    if empty:
        warnings.append(f"warning: {qrels.path}: {len(empty)} quer{'y has' if len(empty) == 1 else 'ies have'} no "
                        f"relevant document (grade >= {level}): {_first(empty)}; scored as trec_eval scores them "
                        "(0 for most measures, counted in the means)")
    declared = set(qrels.query_ids) | set(bundle.no_answer)
    depth = deepest_cutoff(policy.measures, policy.k)
    for run in bundle.runs.values():
        stages = run.meta.get("stages_in_file") if isinstance(getattr(run, "meta", None), dict) else None
        if stages and "scored_stage" in run.meta:  # a staged JSONL run (core/formats/staged.py)
            warnings.append(f"note: {run.path}: run {run.name!r} carries the stages {', '.join(map(str, stages))}: "
                            f"scored as its final stage, {run.meta['scored_stage']} (`rankgate funnel` shows each)")
        lengths = ranking_lengths(run)
        extra = sorted(set(lengths).difference(declared))
        if extra:
            warnings.append(f"warning: {run.path}: run {run.name!r} ranks {len(extra)} quer"
                            f"{'y' if len(extra) == 1 else 'ies'} absent from the qrels: {_first(extra)}; "
                            "ignored, as trec_eval ignores them")
        if quiet_short and not refuse_short:
            continue
        short = [q for q, n in lengths.items() if n < depth and q in declared]
        if not short:
            continue
        listed = [f"{q} ({lengths[q]})" for q in short]
        if refuse_short:
            problems.append(Problem(run.path, f"run {run.name!r} has {len(short)} ranking"
                                    f"{'' if len(short) == 1 else 's'} shorter than {depth}, the deepest cutoff "
                                    f"asked for: {_first(listed)} (leave out --short-rankings error to score them "
                                    "as trec_eval does)", "short-ranking"))
        else:
            warnings.append(f"warning: {run.path}: run {run.name!r} has {len(short)} ranking"
                            f"{'' if len(short) == 1 else 's'} shorter than {depth}: {_first(listed)}; scored as "
                            "trec_eval scores them (the missing ranks count as not relevant)")
    return warnings, problems


# What `gate` (and `compare`) add to the refusals `score` turns into warnings: how to accept each.
HOW_TO_ACCEPT = {
    "empty-relevant": ' (a no-answer query: "no_answer": true in the --queries file; `rankgate score` scores it '
                      "as trec_eval does)",
    "extra-queries": " (to accept them: --missing-queries zero; `rankgate score` ignores them as trec_eval does)",
}


def with_how_to_accept(problems: list[Problem]) -> list[Problem]:
    return [replace(p, what=p.what + HOW_TO_ACCEPT[p.rule]) if p.rule in HOW_TO_ACCEPT and not
            p.what.startswith("...") else p for p in problems]
