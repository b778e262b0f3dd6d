"""Several reviewers of one pair: each one's judgments, where they disagree, how much they agree.

Pure functions of a workspace's `labels` {query: {doc: {reviewer: judgment}}} and
`adjudications` {query: {doc: adjudication}} (store/labels.py); docs/reviewers.md.
"""

from __future__ import annotations

from rankgate.store.labels import as_judgment, pair_label, standing
from rankgate.store.records import Disagreement, Judgment


def reviews_of(labels: dict, qids: list[str], doc: str | None, include_removed: bool) -> list[Judgment]:
    """Every reviewer's own judgments of the queries `qids` (or of one pair), a pair's in the order of
    their last edit."""
    out = []
    for q in qids:
        per = labels.get(q, {})
        for d in ([doc] if doc is not None else list(per)):
            for r in per.get(d, {}).values():
                if include_removed or r.get("removed") is None:
                    out.append(as_judgment(r))
    return out


def judgments_by_reviewer(labels: dict) -> dict[str, int]:
    """Each reviewer's number of standing judgments, by name."""
    counts: dict[str, int] = {}
    for per in labels.values():
        for revs in per.values():
            for name, r in revs.items():
                if r.get("removed") is None:
                    counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def disagreements_of(labels: dict, adjudications: dict, qids: list[str],
                     include_adjudicated: bool) -> list[Disagreement]:
    """The pairs of the queries `qids` whose reviewers gave different grades (the adjudicated ones too
    with `include_adjudicated`)."""
    out = []
    for q in qids:
        adjq = adjudications.get(q, {})
        for d, revs in labels.get(q, {}).items():
            if len(revs) < 2:
                continue
            live = [r for r in revs.values() if r.get("removed") is None]
            if len({r["grade"] for r in live}) < 2:
                continue
            adj = adjq.get(d)
            if not standing(adj):
                adj = None
            elif not include_adjudicated:
                continue
            label = as_judgment(pair_label(revs, adj), True)
            out.append(Disagreement(q, d, tuple(as_judgment(r) for r in live), label,
                                    None if adj is None else label))
    return out


def ratings_of(labels: dict, qids: list[str]) -> dict[tuple[str, str], dict[str, int]]:
    """(query, doc) -> {reviewer: grade} of the standing judgments of the queries `qids`."""
    out = {}
    for q in qids:
        for d, revs in labels.get(q, {}).items():
            per = {n: r["grade"] for n, r in revs.items() if r.get("removed") is None}
            if per:
                out[(q, d)] = per
    return out


def agreement_groups(queries: dict[str, dict], ratings: dict, by: str | None) -> dict[str, list]:
    """The rated pairs by group: `by` None (no groups), "query", or "slice" (a query's tags; a query
    with several tags counts in each)."""
    groups: dict[str, list] = {}
    if by == "query":
        for q in queries:
            groups[q] = [u for u in ratings if u[0] == q]
    elif by == "slice":
        for q, rec in queries.items():
            for tag in rec.get("tags") or ():
                groups.setdefault(tag, [])
        by_q: dict[str, list] = {}
        for u in ratings:
            by_q.setdefault(u[0], []).append(u)
        for q, rec in queries.items():
            for tag in rec.get("tags") or ():
                groups[tag].extend(by_q.get(q, []))
    return groups
