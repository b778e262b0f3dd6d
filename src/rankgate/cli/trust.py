"""What the gate trusts of its labels: stale labels (core/staleness.py) and a judge's vote (core/judge_vote.py).

`gate_trust` runs after the gate's inputs are read and checked: it finds the
workspace whose labels carry text hashes (`--db`, the benchmark folder's, or the
app's for a qrels file) and the current corpus (`--corpus` or the benchmark's),
and, with `--with-suggestions`, decides whether the judge's suggestions count.
The receipt records both under `label_trust` (not recomputed by `receipt
verify`: the workspace is not one of the gate's input files).
"""

from __future__ import annotations

import os
from pathlib import Path

from rankgate.cli.base import say
from rankgate.core.errors import InputError
from rankgate.core.text import visible


def _workspace_of(args, bundle) -> Path | None:
    """The workspace whose labels the gate's qrels came from, when there is one."""
    from rankgate.store import paths, sync

    if getattr(args, "db", None):
        return Path(args.db)
    if bundle.manifest is not None and args.qrels is None:
        located = sync.locate(bundle.manifest, create=False)
        found = located.adopt_from or located.path
        return found if found.exists() else None
    qrels = args.qrels or (args.benchmark if args.benchmark and os.path.isfile(args.benchmark) else None)
    if qrels:
        path = paths.qrels_workspace_path(qrels, create=False)
        return path if path.exists() else None
    return None


def stale_for_gate(args, bundle, policy) -> dict | None:
    """The labels the corpus made stale, as the gate's JSON records them; None without a corpus or a
    workspace. `stale_labels = "refuse"` refuses (exit 2) when there is one."""
    corpus = args.corpus or (str(bundle.manifest.corpus) if bundle.manifest and bundle.manifest.corpus else None)
    db = _workspace_of(args, bundle) if corpus else None
    if db is None and args.corpus:  # (a benchmark's own corpus is for review too: no workspace, nothing to say)
        raise InputError("--corpus", "the gate reads a corpus only to find stale labels, which takes the workspace "
                         "the labels came from, and there is none for these qrels: add --db FILE (the workspace), "
                         "or leave out --corpus; nothing was decided")
    if db is None:
        return None
    from rankgate.core.formats.corpus import read_corpus  # only now: the gate's usual path loads no store
    from rankgate.core.staleness import corpus_hashes, stale_labels
    from rankgate.store import Workspace

    with Workspace.open(db, readonly=True) as ws:
        recorded = ws.text_hashes()
    q = bundle.qrels
    qn, dn = q.catalog.queries.names, q.catalog.docs.names
    used = {(qn[a], dn[b]) for a, b in zip(q.q.tolist(), q.doc.tolist())}
    recorded = [r for r in recorded if (r[0], r[1]) in used]  # the labels the gate reads
    if not any(h for _, _, h in recorded):  # no label records its text: nothing can be stale (nor said)
        return None
    stale = stale_labels(recorded, corpus_hashes(read_corpus(corpus, {d for _, d, h in recorded if h})), corpus)
    out = dict(stale.as_dict(), policy=policy.stale_labels, workspace=str(db))
    if len(stale) and policy.stale_labels == "refuse":
        shown = ", ".join(f"{visible(a)} {visible(b)}" for a, b in stale.pairs[:3])
        raise InputError(corpus, f"{len(stale)} stale labels (judged on a text this corpus has changed since: "
                         f"{shown}{' ...' if len(stale) > 3 else ''}); the policy says stale_labels = \"refuse\": "
                         "judge them again (`rankgate labels list --stale`), or set it to \"warn\"")
    return out


def stale_line(d: dict) -> str:
    what = {"refuse": "refused", "warn": "counted, with this warning", "allow": "counted"}[d["policy"]]
    return (f"stale labels: {d['count']} (judged on a text {visible(d['corpus'])} has changed since; {what}: "
            f"stale_labels = \"{d['policy']}\")")


def judge_for_gate(args, bundle, policy) -> dict | None:
    """With --with-suggestions: whether the judge earned its vote. When it did not, the suggested rows
    are taken out of the bundle's qrels again (the gate decides on the experts' labels alone)."""
    from rankgate.core.judge_vote import judge_vote, without_suggestions
    from rankgate.store.suggestions import SuggestionBook

    path = next((p for r, p in bundle.files if r == "suggestions"), None)
    if path is None:
        return None
    q = bundle.qrels
    added = int(q.meta.get("suggestions_counted", 0))
    experts = len(q.q) - added  # with_suggestions appends the suggested rows after the experts'
    qn, dn = q.catalog.queries.names, q.catalog.docs.names
    expert = {(qn[a], dn[b]): g for a, b, g in zip(q.q[:experts].tolist(), q.doc[:experts].tolist(),
                                                    q.grade[:experts].tolist())}
    book = SuggestionBook(path)
    overlap, seed = book.overlap()
    accepted = book.accepted()  # an accepted suggestion was seen: not a blind check
    overlap = [p for p in overlap if p not in accepted]
    suggested = {key: s.grade for key, s in book.latest().items()}
    vote = judge_vote(suggested, overlap, expert, unjudged=added, level=policy.checks.rel_level,
                      min_kappa=policy.judge_min_kappa, min_overlap=policy.judge_min_overlap, seed=seed,
                      judges=book.judges())
    if not vote.counted and added:
        bundle.qrels = without_suggestions(q)
    return vote.as_dict()


def gate_trust(args, bundle, policy) -> dict:
    """Stale labels and the judge's vote, before the gate decides; their lines go to stderr first."""
    trust = {}
    stale = stale_for_gate(args, bundle, policy)
    if stale is not None:
        trust["stale_labels"] = stale
    judge = judge_for_gate(args, bundle, policy) if getattr(args, "with_suggestions", False) else None
    if judge is not None:
        trust["judge"] = judge
    if not getattr(args, "quiet", False):
        if judge is not None:
            say(judge["line"], err=True)
        if stale is not None and stale["count"] and stale["policy"] == "warn":  # "allow": the report says it
            say(stale_line(stale), err=True)
    return trust
