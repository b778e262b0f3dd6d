"""Structural checks of qrels against runs, all reported at once.

What it checks: empty qrels or runs (the readers refuse those), a query with no
relevant document or a repeated one, a run whose query IDs differ from the
qrels' (missing and extra named), a document ranked twice for one query, and a
ranking shorter than k. Each problem names the file and line or JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankgate.core.formats.textio import shorten
from rankgate.core.errors import InputError, Problem
from rankgate.core.formats.jsonfmt import jpath
from rankgate.core.model import LeanRun, Qrels, Run, unique

MAX_PER_RULE = 20  # problems listed per rule and file before "and N more"


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
    with_rel = set(unique(qrels.q[level_ok]).tolist())
    empty = [qid for qid in declared if qrels.catalog.queries.codes[qid] not in with_rel and qid not in no_answer]
    _capped(problems, [Problem(f"{qrels.path}: {jpath(q)}" if qrels.format.startswith("json") else qrels.path,
                               f"query {shorten(q)} has no relevant document (grade >= {checks.rel_level}); "
                               "declare it a no-answer query or label its evidence", "empty-relevant")
                       for q in empty], qrels.path, "empty-relevant")

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
        counts = run.num_ret
        short = np.flatnonzero(counts < checks.k).tolist()  # 0 too: a JSONL run's empty ranking
        for i in short[:MAX_PER_RULE]:
            problems.append(Problem(run.path, f"run {shorten(run.name)} ranks {int(counts[i])} document"
                                    f"{'' if counts[i] == 1 else 's'} for query {shorten(run.qnames[i])}, fewer than "
                                    f"k={checks.k} (use --short-rankings allow to accept them, or a smaller --k)", "short-ranking"))
        if len(short) > MAX_PER_RULE:
            problems.append(Problem(run.path, f"... and {len(short) - MAX_PER_RULE} more like this",
                                    "short-ranking"))
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


def _short(run: Run, k: int) -> list[Problem]:
    counts = np.bincount(run.q, minlength=len(run.catalog.queries)) if len(run.q) else \
        np.zeros(len(run.catalog.queries), np.int64)
    qn = run.catalog.queries.names
    short = [c for c in run.query_codes if counts[c] < k]
    found = [Problem(run.path, f"run {shorten(run.name)} ranks {int(counts[c])} document"
                     f"{'' if counts[c] == 1 else 's'} for query {shorten(qn[c])}, fewer than k={k} "
                     "(use --short-rankings allow to accept them, or a smaller --k)", "short-ranking") for c in short]
    out: list[Problem] = []
    _capped(out, found, run.path, "short-ranking")
    return out
