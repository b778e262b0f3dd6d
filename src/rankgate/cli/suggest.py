"""`rankgate labels suggest BENCH`: ask a judge (a command or a chat endpoint) for suggested grades.

    rankgate labels suggest BENCH                 # the review queue's first 20 documents
    rankgate labels suggest BENCH --queue 50      # its first 50
    rankgate labels suggest BENCH --query Q       # the unjudged documents of one query's pool (every run's top k)
    rankgate labels suggest BENCH --judged        # calibration: the pairs experts already judged

Each answer is stored as a suggestion beside the workspace (store/suggestions.py), never as a label;
an answer that is late, not JSON or off the grade scale is reported for its document and not stored.
Ctrl-C stops after the answer in hand; what was stored stays. `labels agreement` then compares the
judge with each reviewer.
"""

from __future__ import annotations

import os
from pathlib import Path

from rankgate.cli.base import EXIT_INVALID, EXIT_OK, policy_overrides, say, say_json
from rankgate.core.errors import InputError
from rankgate.core.text import visible

DEFAULT_QUEUE = 20


def add_suggest(cmds, common) -> None:
    p = cmds.add_parser("suggest", parents=[common], help="ask a judge (a script or a model) for suggested grades, "
                        "stored apart from the labels", description=__doc__.split("\n\n")[0])
    p.add_argument("bench", nargs="?", metavar="BENCH", help="a benchmark folder (as -b FOLDER)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--queue", type=int, metavar="N", help=f"the review queue's first N documents "
                      f"(default {DEFAULT_QUEUE})")
    what.add_argument("--query", metavar="Q", help="the unjudged documents in any run's top k for query Q")
    what.add_argument("--judged", action="store_true", help="the pairs experts judged (a calibration run for "
                      "`labels agreement`); with --limit N the first N")
    p.add_argument("--limit", type=int, metavar="N", help="with --judged: at most N pairs")
    p.add_argument("--again", action="store_true", help="ask again about pairs this judge already suggested")
    j = p.add_argument_group("judge (default: the benchmark's [judge] table)")
    j.add_argument("--judge-command", metavar="CMD", help="a command that reads JSONL requests on stdin and "
                   "writes JSONL answers")
    j.add_argument("--judge-url", metavar="URL", help="an OpenAI-compatible base URL (POST URL/chat/completions)")
    j.add_argument("--judge-model", metavar="NAME", help="the endpoint's model")
    j.add_argument("--judge-key-env", metavar="VAR", help="the environment variable holding the API key")
    j.add_argument("--judge-prompt", metavar="FILE", help="the prompt template (default: the shipped one)")
    j.add_argument("--judge-name", metavar="NAME", help="the judge's name in the suggestions")
    j.add_argument("--timeout", type=float, metavar="S", help="seconds per document (default 30)")
    j.add_argument("--max-calls", type=int, metavar="N", help="ask about at most N documents (default 200)")
    j.add_argument("--trust-judge", action="store_true", help="run the benchmark's [judge] (its command, or its "
                   "endpoint with the key variable it names): asked once per folder and judge, then remembered")
    p.set_defaults(func=suggest)


def judge_from(args, manifest):
    """The judge of the manifest's [judge] table with the flags over it."""
    from rankgate.core.judge import judge_config

    flags = {"command": args.judge_command, "url": args.judge_url, "model": args.judge_model,
             "api_key_env": args.judge_key_env, "name": args.judge_name, "timeout": args.timeout,
             "max_calls": args.max_calls,
             "prompt": str(Path(args.judge_prompt).resolve()) if args.judge_prompt else None}
    # A command or prompt from the flags is the caller's (found from here); from the table, the folder's.
    folder = os.getcwd() if (args.judge_command or args.judge_url) else str(manifest.folder)
    config = judge_config(manifest.judge, str(manifest.path), folder, **flags)
    if config is None:
        raise InputError(str(manifest.path), "no judge: add a [judge] table (command = [...] or url and model) or "
                         "give --judge-command CMD or --judge-url URL --judge-model NAME (docs/reviewers.md)")
    if not (args.judge_command or args.judge_url):
        check_trusted(config, manifest, getattr(args, "trust_judge", False))
    return config


def check_trusted(config, manifest, agree: bool) -> None:
    """Refuse the [judge] of a folder the user has not trusted (with --trust-judge: trust it now)."""
    from rankgate.core.judge import untrusted_why
    from rankgate.store.trust import is_trusted, trust

    token = config.trust_token()
    if is_trusted(manifest.folder, token):
        return
    if not agree:
        raise InputError(str(manifest.path), untrusted_why(config))
    trust(manifest.folder, token)


def suggest(args) -> int:
    from rankgate.cli.labels_open import _bench_positional, _open
    from rankgate.core.benchmark import load_manifest
    from rankgate.core.judge import Cancelled, JudgeRequest, RunReport, ask
    from rankgate.store.suggestions import SuggestionBook, Suggestion

    _bench_positional(args)
    if not args.benchmark:
        raise InputError("labels suggest", "name a benchmark folder: rankgate labels suggest BENCH")
    if args.queue is not None and args.queue < 1:
        raise InputError("--queue", "N must be at least 1")
    if args.limit is not None and args.limit < 1:  # a negative N sliced pairs off the end
        raise InputError("--limit", "N must be at least 1")
    manifest = load_manifest(args.benchmark)
    config = judge_from(args, manifest)
    with _open(args, readonly=True, make=True) as ws:  # (suggestions are kept beside the workspace)
        book = SuggestionBook.beside(ws.path)
        pairs = _pairs(args, manifest, ws)
        queries = {q.id: q for q in ws.queries()}
    info = config.describe()
    if not args.again:
        done = {key for key, s in book.latest().items()
                if s.judge == info["name"] and s.prompt_hash == info["prompt_hash"]}
        skipped = [p for p in pairs if p in done]
        pairs = [p for p in pairs if p not in done]
        if skipped and not args.json:
            say(f"note: {len(skipped)} pairs already have this judge's suggestion (--again asks again)", err=True)
    docs = _texts(manifest, {d for _, d in pairs})
    requests = [JudgeRequest(q, d, queries[q].text if q in queries else "", queries[q].notes if q in queries else "",
                             docs.get(d, "")) for q, d in pairs]
    report = RunReport(info)
    total = min(len(requests), config.max_calls)
    report.left = len(requests) - total
    try:
        for a in ask(config, requests, manifest.grades):
            report.asked += 1
            if a.ok:
                book.add([Suggestion(a.query, a.doc, a.grade, a.reason, a.confidence, info["name"], info["model"],
                                     info["prompt_hash"])])
                report.stored.append(a)
                line = f"{a.grade} {visible(a.reason)}"
            else:
                report.failed.append(a)
                line = f"failed: {visible(a.error)}"
            if not args.json:
                say(f"[{report.asked}/{total}] {visible(a.query)} {visible(a.doc)}: {line}", err=True)
    except (KeyboardInterrupt, Cancelled):
        report.cancelled = True
        report.left = len(requests) - report.asked
    if args.json:
        say_json(dict(report.as_dict(), file=str(book.path)), indent=2)
    else:
        head = "cancelled: " if report.cancelled else ""
        say(f"{head}asked {info['name']} about {report.asked} documents: {len(report.stored)} suggestions stored in "
            f"{visible(str(book.path))}, {len(report.failed)} failed" +
            (f", {report.left} not asked" + (" (--max-calls)" if not report.cancelled else "") if report.left else ""))
        for a in report.failed:
            say(f"  failed: {visible(a.query)} {visible(a.doc)}: {visible(a.error)}")
    if report.cancelled:
        return 130
    if report.asked and not report.stored:
        return EXIT_INVALID  # every answer failed: the judge is misconfigured
    return EXIT_OK


def _pairs(args, manifest, ws) -> list[tuple[str, str]]:
    """The (query, doc) pairs to ask about, in order."""
    if args.judged:
        pairs = [(j.query, j.doc) for j in ws.judgments()]
        return pairs[: args.limit] if args.limit is not None else pairs
    from rankgate.core.bundle import load_bundle
    from rankgate.core.policy import resolve
    from rankgate.core.queue import build_queue

    bundle = load_bundle(None, [], benchmark=manifest,
                         labels=lambda cat: (ws.to_qrels(cat), {q.id: q for q in ws.queries()}))
    ns = _Overrides()
    policy = resolve(policy_overrides(ns), bundle)
    queue = build_queue(bundle.qrels, bundle.runs, policy, queries=bundle.queries, no_answer=bundle.no_answer)
    items = [it for it in queue if not it.unsure]
    if args.query is not None:
        if args.query not in bundle.queries and args.query not in bundle.qrels.query_ids:
            raise InputError(args.query, "no such query in the benchmark")
        return [(it.query, it.doc) for it in items if it.query == args.query]
    return [(it.query, it.doc) for it in items[: args.queue or DEFAULT_QUEUE]]


class _Overrides:
    """No policy flags: the manifest's gate decides the queue's order."""

    def __getattr__(self, name):
        return None


def _texts(manifest, wanted: set[str]) -> dict[str, str]:
    """Each wanted document's title and text (empty when the benchmark has no corpus)."""
    if not manifest.corpus or not wanted:
        return {}
    from rankgate.core.formats.corpus import read_corpus

    docs = read_corpus(manifest.corpus, wanted=wanted)
    return {d: (f"{x.title}\n{x.text}" if x.title else x.text) for d, x in docs.items()}


# ---- `labels agreement`: each judge against each reviewer -----------------------------------------

def judge_agreement_of(ws, level: int = 1) -> list:
    """Every judge that left suggestions beside this workspace, against every reviewer (core.agreement)."""
    from rankgate.core.agreement import judge_agreement
    from rankgate.store.suggestions import SuggestionBook

    book = SuggestionBook.beside(ws.path)
    if not book.records:
        return []
    per_judge: dict[str, dict[tuple[str, str], int]] = {}
    for r in book.records:
        if r["kind"] == "suggestion":
            per_judge.setdefault(str(r.get("judge", "")), {})[(r["query"], r["doc"])] = int(r["grade"])
    ratings = ws.ratings()
    out = []
    for name, suggested in per_judge.items():
        out += judge_agreement(suggested, ratings, judge=name, level=level)
    return out


def judge_agreement_lines(found: list) -> list[str]:
    """Each judge against each reviewer: kappa and the confusion table (rows: the judge's grades)."""
    def fig(x):
        return "n/a" if x is None else f"{x:.3f}"

    lines = []
    for a in found:
        if not a.units:
            lines.append(f"judge {visible(a.judge)} ~ {visible(a.reviewer)}: no pair both graded")
            continue
        lines.append(f"judge {visible(a.judge)} ~ {visible(a.reviewer)}: Cohen's kappa {fig(a.kappa)} (quadratic-"
                     f"weighted {fig(a.kappa_quadratic)}) over {a.units} pairs, {a.agreed} agreed, "
                     f"{a.relevant_agreed} agree on relevant or not")
        scale = list(a.confusion)
        lines.append("    judge \\ " + visible(a.reviewer) + "  " + " ".join(f"{g:>4}" for g in scale))
        for g in scale:
            lines.append(f"    {g:>8}  " + " " * len(visible(a.reviewer)) + " ".join(f"{a.confusion[g][h]:>4}"
                                                                                   for h in scale))
    return lines


# ---- `labels queue --order suggested|disagreement` -------------------------------------------------

def ordered_queue(args, db, bundle, policy, queue, limit) -> int:
    """`labels queue --order suggested` (the queue, what a judge suggested relevant first) or `--order
    disagreement` (judged pairs whose suggestion differs from the label), printed."""
    from rankgate.core.queue import by_suggestion, suggestion_disagreements
    from rankgate.store.suggestions import SuggestionBook, path_beside

    if db is None:
        raise InputError("--order", "suggestions live beside a workspace: name a benchmark folder or --db")
    book = SuggestionBook(path_beside(db))
    blind = set(book.overlap()[0])  # the judge's overlap: experts judge it without seeing the suggestion
    suggested = {key: s.grade for key, s in book.latest().items() if key not in blind}
    who = {key: s.judge for key, s in book.latest().items()}
    level = policy.checks.rel_level
    if args.order == "suggested":
        queue = by_suggestion(queue, suggested, level)
        shown = queue.items if limit is None else queue.items[:limit]
        if args.json:
            data = queue.as_dict(limit)
            for it in data["items"]:
                s = None if (it["query"], it["doc"]) in blind else book.latest().get((it["query"], it["doc"]))
                it["suggested"] = None if s is None else {"grade": s.grade, "judge": s.judge, "reason": s.reason}
            say_json(dict(data, order="suggested"), indent=2)
            return EXIT_OK
        n = sum(1 for it in queue.items if suggested.get((it.query, it.doc), -1) >= level)
        say(f"{len(queue)} documents to review, {n} suggested relevant first")
        for i, it in enumerate(shown, 1):
            g = suggested.get((it.query, it.doc))
            hint = f"suggested {g} by {visible(who[(it.query, it.doc)])}" if g is not None else "no suggestion"
            say(f"{i:>4}. {visible(it.query)} {visible(it.doc)}  {hint}; {visible(it.why())}")
        if len(shown) < len(queue):
            say(f"... and {len(queue) - len(shown)} more (--limit N)")
        return EXIT_OK
    q = bundle.qrels
    names, docs = q.catalog.queries.names, q.catalog.docs.names
    labels = {(names[a], docs[b]): int(g) for a, b, g in zip(q.q.tolist(), q.doc.tolist(), q.grade.tolist())}
    found = suggestion_disagreements(suggested, labels, level)
    shown = found if limit is None else found[:limit]
    if args.json:
        say_json({"order": "disagreement", "total": len(found),
                  "items": [{"query": a, "doc": b, "suggested": g, "label": h, "judge": who[(a, b)]}
                            for a, b, g, h in shown]}, indent=2)
        return EXIT_OK
    say(f"{len(found)} judged pairs whose suggested grade differs from the label (of {len(suggested)} suggested)")
    for i, (a, b, g, h) in enumerate(shown, 1):
        say(f"{i:>4}. {visible(a)} {visible(b)}  suggested {g} by {visible(who[(a, b)])}, label {h}")
    if len(shown) < len(found):
        say(f"... and {len(found) - len(shown)} more (--limit N)")
    return EXIT_OK


# ---- `labels overlap`: the blind check of the judge (core/judge_vote.py) ----------------------------

def add_overlap(cmds, common) -> None:
    p = cmds.add_parser("overlap", parents=[common], help="draw the pairs experts judge blind to check the "
                        "judge: its suggestions count in the gate only while its kappa on them meets [judge]")
    p.add_argument("bench", nargs="?", metavar="BENCH", help="a benchmark folder (as -b FOLDER)")
    p.add_argument("--size", type=int, default=60, metavar="N", help="how many suggested pairs to draw (default "
                   "60: the policy's min_overlap, 50 by default, with room for a few the experts cannot judge)")
    p.add_argument("--seed", type=int, metavar="S", help="the draw's seed (default: a new random one; recorded)")
    p.set_defaults(func=overlap)


def overlap(args) -> int:
    """Draw `--size` of the judge's suggestions of pairs nobody judged, at random; record the draw beside the
    suggestions. `labels queue` lists them first and the app hides their suggestion (blind)."""
    import secrets

    from rankgate.cli.labels_open import _bench_positional, _open
    from rankgate.core.judge_vote import draw_overlap
    from rankgate.store.suggestions import SuggestionBook

    _bench_positional(args)
    if args.size < 2:
        raise InputError("--size", "N must be at least 2 (a kappa needs pairs)")
    if args.seed is not None and args.seed < 0:
        raise InputError("--seed", "the seed must be 0 or more")
    with _open(args, readonly=True) as ws:
        book = SuggestionBook.beside(ws.path)
        judged = {(j.query, j.doc) for j in ws.judgments()}
    accepted = book.accepted()
    pool = [p for p in book.latest() if p not in judged and p not in accepted]
    if not pool:
        raise InputError(str(book.path), "no suggestion of an unjudged pair to draw from: `rankgate labels "
                         "suggest BENCH --queue N` asks the judge first")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    drawn = draw_overlap(pool, args.size, seed)
    book.add_overlap(drawn, seed)
    if args.json:
        say_json({"drawn": len(drawn), "of": len(pool), "seed": seed, "pairs": [list(p) for p in drawn],
                  "file": str(book.path)}, indent=2)
        return EXIT_OK
    short = f" (all there are: fewer than {args.size})" if len(drawn) < args.size else ""
    say(f"drew {len(drawn)} of {len(pool)} suggested pairs{short} for the experts to judge blind (seed {seed}); "
        f"`rankgate labels queue` lists them first, the app hides their suggestion")
    return EXIT_OK


def overlap_to_judge(db) -> list[tuple[str, str]]:
    """The overlap pairs no expert has judged yet (for the queue)."""
    from rankgate.store import Workspace
    from rankgate.store.suggestions import SuggestionBook, path_beside

    pairs, _ = SuggestionBook(path_beside(db)).overlap()
    if not pairs:
        return []
    with Workspace.open(db, readonly=True) as ws:
        judged = {(j.query, j.doc) for j in ws.judgments()}
    return [p for p in pairs if p not in judged]
