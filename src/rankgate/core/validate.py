"""Structural checks of qrels against runs, all reported at once.

What it checks: empty qrels or runs (the readers refuse those), a query with no
relevant document or a repeated one, a run whose query IDs differ from the
qrels' (missing and extra named), a document ranked twice for one query, and a
ranking shorter than k. Each problem names the file and line or JSON path.
"""

from __future__ import annotations

from rankgate.core.fastclass import dataclass  # the standard one, made when first used (import cost)

import numpy as np

from rankgate.core.formats.textio import shorten
from rankgate.core.errors import InputError, Problem
from rankgate.core.formats.jsonfmt import jpath
from rankgate.core.model import LeanRun, Qrels, Run, distinct_codes

MAX_PER_RULE = 20  # problems listed per rule and file before "and N more"
SHOWN = 5  # IDs a one-line problem names before "and N more"


@dataclass(frozen=True)
class Checks:
    """The validation policy (flags, the policy file, or the manifest)."""

    k: int = 3
    missing_queries: str = "error"  # or "zero": a missing query scores 0 (trec_eval -c)
    short_rankings: str = "error"  # or "allow"
    rel_level: int = 1


def _row_where(run: Run, row: int, qid: str) -> str:
    w = int(run.where[row])
    if run.format == "json":
        return f"{run.path}: {jpath(run.name, qid, w)}"
    return f"{run.path}:{w}"


def _capped(problems: list[Problem], found: list[Problem], where: str, rule: str) -> None:
    problems.extend(found[:MAX_PER_RULE])
    if len(found) > MAX_PER_RULE:
        problems.append(Problem(where, f"... and {len(found) - MAX_PER_RULE} more like this", rule))


def validate(qrels: Qrels, runs: list[Run], checks: Checks, no_answer: set[str] = frozenset()) -> list[Problem]:
    problems: list[Problem] = list(qrels.problems)
    declared = qrels.query_ids
    declared_set = set(declared)

    # Queries with nothing relevant at the level in force.
    level_ok = qrels.grade >= checks.rel_level
    with_rel = set(distinct_codes(qrels.q[level_ok]).tolist())
    codes = qrels.catalog.queries.codes  # (once: 100k queries asked for it 0.07 s)
    empty = [qid for qid in declared if codes[qid] not in with_rel and qid not in no_answer]
    where = f"{qrels.path}: {jpath(empty[0])}" if len(empty) == 1 and qrels.format.startswith("json") else qrels.path
    problems.extend(empty_relevant_problems(where, empty, checks.rel_level))

    seen_names: set[str] = set()
    for run in runs:
        if run.name in seen_names:
            problems.append(Problem(run.path, f"two runs are named {shorten(run.name)}; name them with NAME=FILE",
                                    "duplicate-run"))
        seen_names.add(run.name)
        rnames = run.catalog.queries.names
        present = {rnames[c] for c in run.query_codes}
        problems.extend(query_set_problems(run.name, run.path, present, declared_set, set(no_answer), checks))
        problems.extend(_duplicates(run))
        if checks.short_rankings == "error":
            problems.extend(_short(run, checks.k))
    return problems


def runs_without_qrels(specs: list[str], run_format: str = "auto") -> list[Problem]:
    """What the run files `specs` ([NAME=]FILE) show without qrels (when the qrels cannot be read): each file
    that cannot be read (its file:line), two runs of one name, a document ranked twice for a query. The rules
    that need the qrels (missing queries, short rankings at k) wait for them. Runs are read whole here."""
    from rankgate.core.bundle import read_run_files
    from rankgate.core.formats import read_runs
    from rankgate.core.model import Catalog

    problems: list[Problem] = []

    def unread(path: str, e: Exception) -> None:
        if isinstance(e, InputError):
            where = e.path + (f":{e.line}" if e.line is not None else "") + (f": {e.where}" if e.where else "")
            problems.append(Problem(where, e.what, "unreadable"))
        else:
            problems.append(Problem(path, getattr(e, "strerror", None) or str(e), "unreadable"))

    catalog = Catalog()
    runs = read_run_files(specs, lambda spec, name, path: read_runs(spec, run_format, catalog), unread)
    for run in runs.values():
        problems.extend(_duplicates(run))
    return problems


def validate_lean(run: LeanRun, qrels_queries: set[str], no_answer: set[str], checks: Checks) -> list[Problem]:
    """The run-level rules of `validate`, for a lean run (read by core.formats.trec_fast)."""
    problems = query_set_problems(run.name, run.path, set(run.query_ids), qrels_queries, no_answer, checks)
    for line, query, doc in run.duplicates[:MAX_PER_RULE]:
        problems.append(Problem(f"{run.path}:{line}", f"run {shorten(run.name)} ranks document {shorten(doc)} twice for "
                                f"query {shorten(query)}", "duplicate-ranked"))
    if run.n_duplicates > MAX_PER_RULE:
        problems.append(Problem(run.path, f"... and {run.n_duplicates - MAX_PER_RULE} more like this",
                                "duplicate-ranked"))
    if checks.short_rankings == "error":
        problems.extend(short_problems(run.name, run.path, short_rankings(run, checks.k), checks.k))
    return problems


def query_set_problems(name: str, path: str, present: set[str], declared: set[str], no_answer: set[str],
                       checks: Checks) -> list[Problem]:
    """A run's query IDs against the qrels': the missing and the extra, named."""
    if checks.missing_queries != "error":
        return []
    out = []
    missing = sorted(declared - present - no_answer)
    extra = sorted(present - declared - no_answer)
    if missing:
        out.append(Problem(path, f"run {shorten(name)} has no ranking for {len(missing)} "
                           f"qrels quer{'y' if len(missing) == 1 else 'ies'}: {_list(missing)} "
                           "(use --missing-queries zero to score them as 0)", "missing-queries"))
    if extra:
        out.append(Problem(path, f"run {shorten(name)} ranks {len(extra)} "
                           f"quer{'y' if len(extra) == 1 else 'ies'} absent from the qrels: {_list(extra)}",
                           "extra-queries"))
    return out


def _list(ids: list[str], n: int = 10) -> str:
    shown = ", ".join(repr(i) for i in ids[:n])
    return shown + (f" and {len(ids) - n} more" if len(ids) > n else "")


def _duplicates(run: Run) -> list[Problem]:
    if len(run.q) < 2:
        return []
    D = max(len(run.catalog.docs), 1)
    keys = run.q.astype(np.int64) * D + run.doc
    sk = np.sort(keys)  # whether any key repeats: a plain sort, 2-3x cheaper than the stable argsort below,
    if not (sk[1:] == sk[:-1]).any():  # which only a run with a repeat pays (to name its rows in file order)
        return []
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if not len(dup):
        return []
    qn, dn = run.catalog.queries.names, run.catalog.docs.names
    found = []
    for row in np.sort(order[dup])[: MAX_PER_RULE + 1].tolist():  # in file order
        qid, doc = qn[run.q[row]], dn[run.doc[row]]
        found.append(Problem(_row_where(run, row, qid),
                             f"run {shorten(run.name)} ranks document {shorten(doc)} twice for query {shorten(qid)}", "duplicate-ranked"))
    out: list[Problem] = []
    _capped(out, found, run.path, "duplicate-ranked")
    if len(dup) > MAX_PER_RULE + 1:
        out[-1] = Problem(run.path, f"... and {len(dup) - MAX_PER_RULE} more like this", "duplicate-ranked")
    return out


def refuse_duplicates(run: Run) -> None:
    """A run that ranks a document twice for a query stops here (InputError naming the file and the line), as
    `validate` refuses it: `rankgate init` and the app refuse it the same way."""
    found = _duplicates(run)
    if found:
        raise InputError(found[0].where, found[0].what)


def empty_relevant_problems(where: str, empty: list[str], level: int) -> list[Problem]:
    """One line for the judged queries with no relevant document at the level in force."""
    if not empty:
        return []
    if len(empty) == 1:
        what = f"query {shorten(empty[0])} has no relevant document (grade >= {level}); declare it a no-answer " \
               "query or label its evidence"
    else:
        what = f"{len(empty)} queries have no relevant document (grade >= {level}): {_list(empty, SHOWN)}; " \
               "declare them no-answer queries or label their evidence"
    return [Problem(where, what, "empty-relevant")]


def short_rankings(run, k: int) -> list[tuple[str, int]]:
    """(query, documents ranked) of each query the run ranks fewer than k documents for, in the run's order
    (0 too: a JSONL run's empty ranking). A full run (Run) or a lean one (LeanRun)."""
    if isinstance(run, LeanRun):
        counts = run.num_ret
        return [(run.qnames[i], int(counts[i])) for i in np.flatnonzero(counts < k).tolist()]
    counts = np.bincount(run.q, minlength=len(run.catalog.queries)) if len(run.q) else \
        np.zeros(len(run.catalog.queries), np.int64)
    qn = run.catalog.queries.names
    codes = np.asarray(run.query_codes, dtype=np.int64)  # (one numpy pass, not a scalar lookup per query)
    short = codes[counts[codes] < k] if len(codes) else codes
    return [(qn[c], n) for c, n in zip(short.tolist(), counts[short].tolist())]


def short_problems(name: str, path: str, short: list[tuple[str, int]], k: int) -> list[Problem]:
    """One line for a run's short rankings (`short_rankings`): how many, and the first few with their length."""
    if not short:
        return []
    if len(short) == 1:
        (q, n), = short
        what = (f"run {shorten(name)} ranks {n} document{'' if n == 1 else 's'} for query {shorten(q)}, "
                f"fewer than k={k}")
    else:
        shown = ", ".join(f"{shorten(q)} ({n})" for q, n in short[:SHOWN])
        more = f" and {len(short) - SHOWN} more" if len(short) > SHOWN else ""
        what = f"run {shorten(name)} ranks fewer than k={k} documents for {len(short)} queries: {shown}{more}"
    return [Problem(path, f"{what} (use --short-rankings allow to accept them, or a smaller --k)", "short-ranking")]


def _short(run: Run, k: int) -> list[Problem]:
    return short_problems(run.name, run.path, short_rankings(run, k), k)


# ---- the gate's input checks on what the review app holds ------------------------------------

@dataclass(frozen=True)
class RunShape:
    """What the gate's input checks need of a run: its name and file, the queries it ranks, its short
    rankings at k (`short_rankings`)."""

    name: str
    path: str
    present: frozenset
    short: tuple = ()


def gate_input_problems(qrels_path: str, judged: list[str], relevant: set[str], runs: list[RunShape],
                        checks: Checks, no_answer: set[str] = frozenset()) -> list[Problem]:
    """The rules of `validate` that depend on which queries are judged, for labels held elsewhere than in a
    file (the review app's store): no judgment at all, a judged query with no relevant document, a judged
    query a run does not rank or a ranked query nobody judged (unless missing_queries = "zero"), short
    rankings (unless short_rankings = "allow"). `judged`: the judged queries in order; `relevant`: those
    with a grade >= rel_level. The problems are `validate`'s own, one line per run and rule; the gate's
    "how to accept" is added by core.leniency.with_how_to_accept."""
    problems: list[Problem] = []
    if not judged:
        return [Problem(qrels_path, "no judgments yet: the gate needs judged queries (grade a document)", "no-judgments")]
    problems.extend(empty_relevant_problems(qrels_path, [q for q in judged if q not in relevant and q not in no_answer],
                                            checks.rel_level))
    declared = set(judged)
    for run in runs:
        problems.extend(query_set_problems(run.name, run.path, run.present, declared, set(no_answer), checks))
        if checks.short_rankings == "error":
            problems.extend(short_problems(run.name, run.path, list(run.short), checks.k))
    return problems
