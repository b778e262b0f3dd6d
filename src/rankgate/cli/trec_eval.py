"""`rankgate trec_eval`: trec_eval 10's command line and its output, line for line (core/trec_eval.py)."""

from __future__ import annotations

from rankgate.cli.base import EXIT_OK, emit, say
from rankgate.core.errors import InputError

ABOUT = """trec_eval 10's command line and output, line for line: the same measure names, the
same order (-q groups the lines by query, then the summary), the same formatting,
the runid from the run's tag column. Files are read as trec_eval reads them: run
queries missing from the qrels are ignored, short rankings are scored, grades such as
1.5 are truncated, scores such as inf are taken, IDs are bytes; .gz files too.

Where trec_eval 10 stops (a qrels query missing from the run, without -c), rankgate
scores the queries the run has, as trec_eval 9 did, and says so on stderr.
Measures: -m official (the default), -m all_trec, -m set, a name (map, ndcg_cut,
P ...) or a name with parameters (P.5,10  ndcg_cut.10  iprec_at_recall..10,.20
utility.2,-1,0,0  ndcg.1=3,2=9  relstring.20). docs/measures.md lists them all."""

REFUSED = {"N": "-N (documents in the collection)", "R": "-R (other relevance formats: prefs, qrels_jg)",
           "T": "-T (other result formats)", "Z": "-Z (z-scores)", "D": "-D (debug output)",
           "o": "-o (the old output format, obsolete in trec_eval too)"}


def register(sub) -> None:
    import argparse

    t = sub.add_parser("trec_eval", help="trec_eval 10's command line and output, line for line",
                       description=ABOUT, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("qrels", nargs="?", metavar="QRELS", help="qrels file (qid iter docid grade; .gz ok)")
    t.add_argument("runs", nargs="?", metavar="RUN", help="run file (qid Q0 docid rank score tag; .gz ok)")
    t.add_argument("-q", dest="per_query", action="store_true", help="per-query lines too, grouped by query")
    t.add_argument("-c", dest="complete", action="store_true",
                   help="average over every qrels query: a query the run lacks scores 0")
    t.add_argument("-n", dest="no_summary", action="store_true", help="no summary lines")
    t.add_argument("-l", dest="level", type=int, default=1, metavar="N",
                   help="grade >= N is relevant (default 1)")
    t.add_argument("-M", dest="depth", type=int, metavar="N", help="score only each ranking's top N documents")
    t.add_argument("-J", dest="judged_only", action="store_true",
                   help="judged documents only: unjudged ones are dropped and the rest ranked again")
    t.add_argument("-m", dest="measure", action="append", default=[], metavar="MEASURE",
                   help="a measure, a group (official, all_trec, set) or NAME.PARAMS (repeatable)")
    t.add_argument("--trec-eval-version", choices=("10", "9"), default="10",
                   help="10 (default), or 9: trec_eval 9.0.7's iprec_at_recall and 11pt_avg rule and its "
                   "single-precision scores (scores equal as C floats tie), as pytrec_eval computes them")
    t.add_argument("--list-measures", action="store_true", help="list every measure name and exit")
    for flag in REFUSED:
        t.add_argument(f"-{flag}", dest=f"refused_{flag}", metavar="X", nargs="?", const="", help=argparse.SUPPRESS)
    t.set_defaults(func=cmd_trec_eval)


def cmd_trec_eval(args) -> int:
    from rankgate.core import trec_eval as te

    if args.list_measures:
        from rankgate.core.measures import FAMILIES

        for root in te.TABLE:
            about = FAMILIES[root.family].description if root.family else {
                "runid": "the run's tag (its last line's)", "num_q": "queries scored",
                "relstring": "the grades of the first N ranks (per query only)"}[root.name]
            emit(f"{root.name:<22}\t{about}")
        return EXIT_OK
    for flag, what in REFUSED.items():
        if getattr(args, f"refused_{flag}") is not None:
            raise InputError("trec_eval", f"{what} is not supported by rankgate trec_eval")
    if not args.qrels or not args.runs:
        raise InputError("trec_eval", "expected two files: QRELS RUN (as trec_eval takes them)")
    if args.depth is not None and args.depth < 1:
        raise InputError("-M", f"expected a number of documents of 1 or more, found {args.depth}")
    for given in args.measure:
        if "judged_only" in given:  # ir_measures' notation: trec_eval says it with -J, for every measure
            raise InputError("-m", f"{given!r}: trec_eval has no per-measure judged_only; use -J (judged "
                             "documents only, for every measure), or rankgate score -m for ir_measures' notation")
    request = te.parse_request(args.measure, args.trec_eval_version)
    if args.trec_eval_version == "10":
        return _trec_eval_10(args, request)
    return _trec_eval_9(args, request)


def _missing(args, judged: set, ranked: set) -> None:
    """Without -c: no query in common is an error; qrels queries the run lacks are said on stderr."""
    from rankgate.core import trec_eval as te

    both = judged & ranked
    if args.complete:
        return
    if not both:
        raise InputError(args.runs, "no query has both a ranking and judgments (trec_eval: No queries with "
                         "both results and relevance info)")
    missing = sorted(judged - ranked)
    if missing:
        names = ", ".join(te.shown(q) for q in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        say(f"warning: {len(missing)} qrels queries have no ranking in the run ({names}{more}): scored the "
            f"{len(both)} it ranks, as trec_eval 9 did (trec_eval 10 stops here; -c scores them 0)", err=True)


def _trec_eval_10(args, request) -> int:
    """trec_eval 10: each query computed as its C code computes it (core/trec_eval_kernel.py). The cyclic
    garbage collector is paused: this path makes no reference cycles, and walking the hundreds of
    thousands of tuples and lists that reading a run makes took a quarter of its time."""
    import gc

    paused = gc.isenabled()
    gc.disable()
    try:
        return _evaluate_10(args, request)
    finally:
        if paused:
            gc.enable()


def _evaluate_10(args, request) -> int:
    from rankgate.core import trec_eval as te

    notes: list[str] = []
    judged, positive = te.judged_by_query(args.qrels, notes)
    ranked, runid, ranked_ids = te.ranked_by_query(args.runs, notes, judged)
    for note in notes:
        say(note, err=True)
    _missing(args, set(judged), set(ranked))
    unjudged = sorted(q for q, (_, levels) in judged.items() if not levels and (args.complete or q in ranked))
    if unjudged:  # trec_eval stops on the first such query, or reuses the previous query's counts for it
        say(f"warning: {len(unjudged)} queries have no judgment graded 0 or more ({te.shown(unjudged[0])}...): "
            "scored as having no relevant document; trec_eval itself stops or misreads them", err=True)
    qids, plan, rows = te.evaluate_by_query(judged, ranked, request, level=args.level, complete=args.complete,
                                            depth=args.depth, judged_only=args.judged_only)
    lines = te.lines_by_query(request, qids, plan, rows, runid, per_query=args.per_query,
                              summary=not args.no_summary, num_rel_all=float(positive) if args.complete else None)
    if lines:
        emit("\n".join(lines))
    return EXIT_OK


def _trec_eval_9(args, request) -> int:
    """trec_eval 9.0.7 (--trec-eval-version 9): the engine's measures with its compatibility rules."""
    from rankgate.core import trec_eval as te
    from rankgate.core.engine import evaluate
    from rankgate.core.model import Catalog

    notes: list[str] = []
    catalog = Catalog()
    from rankgate.core.formats.textio import naming_ids

    with naming_ids(args.qrels):  # an ID too long is named with its file and line
        qrels = te.read_qrels(args.qrels, catalog, notes)
    with naming_ids(args.runs):
        run, runid = te.read_run(args.runs, catalog, notes)
    ranked = {catalog.queries.names[c] for c in run.query_codes}
    for note in notes:
        say(note, err=True)
    judged = set(qrels.query_ids)
    _missing(args, judged, ranked)
    measures = [m for _, items in request.measures() for _, m in items if m is not None]
    scores = evaluate(qrels, run, measures, rel_level=args.level, missing="zero" if args.complete else "error",
                      compat="9", depth=args.depth, judged_only=args.judged_only)
    num_rel_all = None
    if args.complete:  # trec_eval's -c summary of num_rel counts grades >= 1 whatever -l says
        num_rel_all = float((qrels.grade >= 1).sum())
    quiet = frozenset(judged - ranked) if args.complete else frozenset()  # 9.0.7 prints no lines for them
    lines = te.format_lines(request, scores, runid, per_query=args.per_query, summary=not args.no_summary,
                            num_rel_all=num_rel_all, quiet=quiet)
    if lines:
        emit("\n".join(lines))
    return EXIT_OK
