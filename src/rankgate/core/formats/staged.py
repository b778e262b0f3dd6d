"""Staged JSONL runs: one ranking per query and stage ({"query", "stage", "ranking"}).

Read for a pipeline (core/funnel.read_stage_file: `[[pipeline]] file =`, `--stages`) as stage -> query ->
documents, or, given where a run is expected (`runs`, `--runs`), as a run of its final stage (`staged_run`,
called by the JSONL run reader when the first ranking carries a `stage`). No import of the other readers here:
the JSONL run reader imports this module.
"""

from __future__ import annotations

import math

from rankgate.core.errors import InputError
from rankgate.core.formats.textio import RUN_LINE_KEYS, shorten, unknown_key


def ranking_order(items: list, path: str, lineno: int) -> list[str]:
    """A JSONL ranking (IDs, or {"doc", "score"} objects) in trec_eval order: score desc, then doc ID desc."""
    return [d for _, d in scored_ranking(items, path, lineno)]


def scored_ranking(items: list, path: str, lineno: int) -> list[tuple[float, str]]:
    """`ranking_order` with each document's score (an ID alone scores by its position)."""
    n = len(items)
    rows = []
    for i, item in enumerate(items):
        if isinstance(item, str) and item:
            rows.append((float(n - i), item))
        elif isinstance(item, dict) and isinstance(item.get("doc"), str) and item["doc"]:
            score = item.get("score", float(n - i))
            if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
                raise InputError(path, f"ranking[{i}].score must be a finite number", line=lineno)
            rows.append((float(score), item["doc"]))
        else:
            raise InputError(path, f"ranking[{i}] must be a document ID or an object with 'doc' and 'score'",
                             line=lineno)
    seen: set[str] = set()
    for _, d in rows:
        if d in seen:
            raise InputError(path, f"document {shorten(d)} appears twice in this ranking (expected each document "
                             "once per query and stage)", line=lineno)
        seen.add(d)
    rows.sort(key=lambda r: (r[0], r[1].encode()), reverse=True)
    return rows


def stage_line(path: str, lineno: int, obj: dict) -> tuple[str, str, list]:
    """One line of a staged JSONL run: (query, stage, its raw ranking list), checked."""
    unknown_key(obj, RUN_LINE_KEYS, "a ranking line", path, lineno)
    qid, stage, ranking = obj.get("query"), obj.get("stage"), obj.get("ranking")
    if not isinstance(qid, str) or not qid:
        raise InputError(path, "field 'query' must be a non-empty string", line=lineno)
    if not isinstance(stage, str) or not stage:
        raise InputError(path, "field 'stage' must name the stage of this ranking, e.g. \"rerank\"", line=lineno)
    if not isinstance(ranking, list):
        raise InputError(path, "field 'ranking' must be a list of document IDs", line=lineno)
    return qid, stage, ranking


def staged_run(path: str, objects, name: str | None, catalog, meta: dict):
    """A staged JSONL run given where a run is expected (`runs`, `--runs`): scored as its final stage, the
    stage that appears last in the file (stages count in the order they first appear: retrieve, rerank,
    context), since the final stage is what the generator receives. `objects`: its (line number, object) pairs
    after the "meta" line; `latency_ms` and `context_tokens` are read from the final stage's lines. The run's
    metadata says which stage was scored ("scored_stage") and the stages found ("stages_in_file"); `rankgate
    funnel` and the gate's stage rules read every stage of it as a pipeline of the run's name."""
    from array import array

    import numpy as np

    from rankgate.core.formats.trec import run_name_from_path
    from rankgate.core.model import Run

    lines: dict[str, list[tuple[int, str, list, dict]]] = {}  # stage -> its lines, in file order
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in objects:
        if "meta" in obj:
            raise InputError(path, "run metadata must be the first line", line=lineno)
        qid, stage, ranking = stage_line(path, lineno, obj)
        if (stage, qid) in seen:
            raise InputError(path, f"query {shorten(qid)} has two rankings at stage {shorten(stage)} "
                             f"(first at line {seen[stage, qid]})", line=lineno)
        seen[stage, qid] = lineno
        lines.setdefault(stage, []).append((lineno, qid, ranking, obj))
    final = list(lines)[-1]
    qs, ds, ss, ws = array("i"), array("i"), array("d"), array("q")
    codes, budgets = [], {"latency_ms": {}, "context_tokens": {}}
    for lineno, qid, ranking, obj in lines[final]:
        q = catalog.queries.code(qid)
        codes.append(q)
        for score, doc in scored_ranking(ranking, path, lineno):
            qs.append(q)
            ds.append(catalog.docs.code(doc))
            ss.append(score)
            ws.append(lineno)
        for key, target in budgets.items():
            v = obj.get(key)
            if v is None:
                continue
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise InputError(path, f"field {key!r} must be a non-negative number", line=lineno)
            target[qid] = float(v)
    meta = dict(meta, scored_stage=final, stages_in_file=list(lines))
    return Run(str(name or meta.get("name") or run_name_from_path(path)), path, catalog,
               np.frombuffer(qs, np.int32), np.frombuffer(ds, np.int32), np.frombuffer(ss, np.float64),
               np.frombuffer(ws, np.int64), format="jsonl", meta=meta, latency_ms=budgets["latency_ms"],
               context_tokens=budgets["context_tokens"], query_codes=codes)
