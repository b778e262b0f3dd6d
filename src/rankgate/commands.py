"""The headless commands: validate, score, gate (CI's path; no textual import)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

from rankgate.core.bundle import Bundle, load_bundle
from rankgate.core.errors import InputError, ValidationError
from rankgate.core.formats import QRELS_FORMATS, RUN_FORMATS
from rankgate.core.gate import Policy, load_policy, macro, policy_from_table, query_rows, run_gate, score_run, \
    answerable_queries
from rankgate.core.measures import parse_measures
from rankgate.core.validate import validate

EXIT_OK, EXIT_INVALID, EXIT_REJECTED = 0, 2, 3


def _inputs(p) -> None:
    p.add_argument("benchmark", nargs="?", help="a benchmark folder (with benchmark.toml); flags override it")
    p.add_argument("--qrels", help="qrels file: TREC, seed JSON, graded JSON, JSONL judgments or BEIR TSV (.gz ok)")
    p.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE",
                   help="run file (repeatable): TREC, the seed's JSON, or JSONL; NAME= renames a one-run file")
    p.add_argument("--queries", help="queries file (JSONL with id, text, tags, must_pass, no_answer ...)")
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default="auto")
    p.add_argument("--run-format", choices=RUN_FORMATS, default="auto")
    p.add_argument("--policy", help="policy file (TOML): k, measures, rules, must_pass")
    p.add_argument("--k", type=int, help="the cutoff k (default: policy, manifest, else 3)")
    p.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (trec_eval -l; default 1)")
    p.add_argument("--missing-queries", choices=("error", "zero"),
                   help="a qrels query without a ranking: error (default) or score 0 (trec_eval -c)")
    p.add_argument("--short-rankings", choices=("error", "allow"),
                   help="a ranking shorter than k: error (default) or allow")


def register(sub) -> None:
    v = sub.add_parser("validate", help="check qrels and runs; exit 2 listing every problem")
    _inputs(v)
    v.add_argument("--format", choices=("text", "json"), default="json")
    v.set_defaults(func=cmd_validate)

    s = sub.add_parser("score", help="score runs: the seed's JSON, trec_eval's lines, or a table")
    _inputs(s)
    s.add_argument("--run", help="score only this run")
    s.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measure(s): P@10, R@100, RR@10, nDCG@10, AP, P(rel=2)@10, trec_eval names (repeatable)")
    s.add_argument("--format", choices=("json", "trec", "table"), default="json")
    s.add_argument("-q", "--per-query", action="store_true", help="with --format trec: per-query lines too")
    s.add_argument("--trec-eval-version", choices=("10", "9"), default="10",
                   help="whose iprec_at_recall rounding to follow (they differ only there)")
    s.add_argument("--validate-only", action="store_true")
    s.set_defaults(func=cmd_score)

    g = sub.add_parser("gate", help="accept (exit 0) or reject (exit 3) a candidate run against a baseline")
    _inputs(g)
    g.add_argument("--baseline", help="the run in production")
    g.add_argument("--candidate", help="the run to release")
    g.add_argument("--must-pass", action="append", default=[], metavar="QUERY",
                   help="a query the candidate must hit in its top k (repeatable)")
    g.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE", help="extra measures to report")
    g.add_argument("--receipt", metavar="PATH", help="write the JSON receipt here")
    g.add_argument("--validate-only", action="store_true")
    g.set_defaults(func=cmd_gate)


# ---- shared ------------------------------------------------------------------------------------

def load(args) -> tuple[Bundle, Policy]:
    bundle = load_bundle(args.qrels, args.runs, benchmark=args.benchmark, queries=args.queries,
                         qrels_format=args.qrels_format, run_format=args.run_format)
    return bundle, resolve_policy(args, bundle)


def resolve_policy(args, bundle: Bundle) -> Policy:
    """Defaults < the manifest's [gate] (and the policy file it names) < --policy < flags."""
    policy = Policy()
    m = bundle.manifest
    if m is not None:
        policy.k = m.k
        policy.checks = replace(policy.checks, rel_level=m.rel_level)
        gate = dict(m.gate)
        named = gate.pop("policy", None)
        if named is not None:
            if not isinstance(named, str):
                raise InputError(str(m.path), "key 'gate.policy' must be a file name")
            policy = load_policy(m.folder / named, policy)
        policy = policy_from_table(gate, str(m.path), policy)
    if getattr(args, "policy", None):
        policy = load_policy(args.policy, policy)
    if bundle.queries and not policy.must_pass:
        policy.must_pass = bundle.must_pass
    if args.k is not None:
        if args.k < 1:
            raise InputError("--k", "k must be at least 1")
        policy.k = args.k
    checks = policy.checks
    if args.rel_level is not None:
        checks = replace(checks, rel_level=args.rel_level)
    if args.missing_queries:
        checks = replace(checks, missing_queries=args.missing_queries)
    if args.short_rankings:
        checks = replace(checks, short_rankings=args.short_rankings)
    policy.checks = replace(checks, k=policy.k)
    if getattr(args, "measure", None):
        policy.measures = list(dict.fromkeys(policy.measures + [m for t in args.measure for m in parse_measures(t)]))
    if getattr(args, "must_pass", None):
        policy.must_pass = list(dict.fromkeys(args.must_pass))
    for key in ("baseline", "candidate"):
        if getattr(args, key, None):
            setattr(policy, key, getattr(args, key))
    return policy


def check(bundle: Bundle, policy: Policy) -> None:
    problems = validate(bundle.qrels, list(bundle.runs.values()), policy.checks, bundle.no_answer)
    if problems:
        raise ValidationError(problems)


def _valid_json(bundle: Bundle, policy: Policy) -> str:
    return json.dumps({"status": "valid", "queries": len(bundle.qrels.query_ids), "runs": sorted(bundle.runs),
                       "k": policy.k})


def emit(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# ---- commands ----------------------------------------------------------------------------------

def cmd_validate(args) -> int:
    bundle, policy = load(args)
    problems = validate(bundle.qrels, list(bundle.runs.values()), policy.checks, bundle.no_answer)
    if problems:
        if args.format == "json":
            emit(json.dumps({"status": "invalid", "problems": [p.as_dict() for p in problems]}, indent=2))
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        return EXIT_INVALID
    emit(_valid_json(bundle, policy) if args.format == "json" else
         f"valid: {len(bundle.qrels.query_ids)} queries, runs {', '.join(sorted(bundle.runs))}, k={policy.k}")
    return EXIT_OK


def cmd_score(args) -> int:
    bundle, policy = load(args)
    check(bundle, policy)
    if args.validate_only:
        emit(_valid_json(bundle, policy))
        return EXIT_OK
    runs = [bundle.run(args.run)] if args.run else list(bundle.runs.values())
    if args.format == "trec":
        return _score_trec(bundle, policy, runs, args)
    k, extra = policy.k, policy.measures
    answerable = answerable_queries(bundle.qrels, bundle.no_answer)
    results = []
    for run in runs:
        s = score_run(bundle.qrels, run, k, policy.checks, extra, answerable)
        results.append({"run": run.name, "k": k, "queries": query_rows(s, bundle.qrels, k, policy.checks.rel_level, extra),
                        "macro": macro(s, k, extra)})
        if bundle.no_answer:
            results[-1]["no_answer_queries"] = sorted(bundle.no_answer)
    if args.format == "table":
        from rankgate.report import score_table

        emit(score_table(results))
    elif len(results) == 1:
        emit(json.dumps(results[0], indent=2))
    else:
        emit(json.dumps({"k": k, "runs": results}, indent=2))
    return EXIT_OK


def _score_trec(bundle: Bundle, policy: Policy, runs, args) -> int:
    """trec_eval's output: `measure<TAB>qid<TAB>value`, `all` for the summary."""
    from rankgate.core.engine import evaluate, summarise
    from rankgate.core.measures import ALL_TREC

    measures = policy.measures or ALL_TREC
    out = []
    for run in runs:
        s = evaluate(bundle.qrels, run, measures, rel_level=policy.checks.rel_level,
                     missing=policy.checks.missing_queries, compat=args.trec_eval_version)
        if args.per_query:
            for m in measures:
                for i, qid in enumerate(s.qids):
                    out.append(_trec_line(m, qid, float(s.values[m][i])))
        out.append(f"{'runid':<22}\tall\t{run.name}")
        out.append(f"{'num_q':<22}\tall\t{len(s.qids)}")
        for m in measures:
            out.append(_trec_line(m, "all", summarise(m, s.values[m])))
    emit("\n".join(out))
    return EXIT_OK


def _trec_line(m, qid: str, value: float) -> str:
    v = f"{int(round(value))}" if m.summed else f"{value:.4f}"
    return f"{m.trec_name:<22}\t{qid}\t{v}"


def cmd_gate(args) -> int:
    bundle, policy = load(args)
    check(bundle, policy)
    if args.validate_only:
        emit(_valid_json(bundle, policy))
        return EXIT_OK
    if not policy.baseline or not policy.candidate:
        raise InputError("gate", "name the runs to compare: --baseline NAME --candidate NAME "
                         f"(loaded: {', '.join(sorted(bundle.runs))})")
    result = run_gate(bundle.qrels, bundle.run(policy.baseline), bundle.run(policy.candidate), policy,
                      bundle.no_answer)
    code = EXIT_OK if result.accepted else EXIT_REJECTED
    if args.receipt:
        from rankgate.core.receipt import build_receipt, write_receipt

        write_receipt(args.receipt, build_receipt(result.data, bundle, policy, code))
    emit(json.dumps(result.data, indent=2))
    return code
