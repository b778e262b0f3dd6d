"""The headless commands: validate, score, compare, gate, receipt verify (CI's path; no textual import)."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

from rankgate.cli.base import EXIT_INVALID, EXIT_OK, EXIT_REJECTED, decide_exit, emit, policy_overrides, say, shell, usage
from rankgate.core.errors import InputError, ValidationError
from rankgate.core.outfile import refuse_inputs
from rankgate.core.measures import parse_measures
from rankgate.core.text import visible

if TYPE_CHECKING:  # the readers, the gate and the policy load numpy: imported where used, not for --help
    from rankgate.core.bundle import Bundle
    from rankgate.core.policy import Policy

QRELS_FORMATS = ("auto", "trec", "json", "jsonl", "beir")  # core.formats' names (a test checks they agree)
RUN_FORMATS = ("auto", "trec", "json", "jsonl")


def _inputs(p) -> None:
    p.add_argument("benchmark", nargs="?", help="a benchmark folder (with benchmark.toml), or a qrels file; "
                   "flags override the folder's parts")
    p.add_argument("--qrels", help="qrels file: TREC, release-gate JSON, graded JSON, JSONL judgments or BEIR TSV "
                   "(.gz ok)")
    p.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE",
                   help="run file (repeatable): TREC, the release-gate JSON, or JSONL; NAME= renames a one-run "
                   "file")
    p.add_argument("--queries", help="queries file: JSONL (id, text, tags, must_pass, no_answer ...), id<TAB>text "
                   "TSV, TREC topics or BEIR queries.jsonl (.gz ok)")
    p.add_argument("--corpus", help="document texts (read by review and validate): JSONL, TSV, TREC <DOC> or BEIR "
                   "corpus.jsonl (.gz ok)")
    p.add_argument("--acl", metavar="FILE", help="who may see which document: JSONL {\"doc\", \"groups\"} or "
                   "doc<TAB>group,group (or \"corpus\": the corpus's acl fields); queries carry \"groups\"")
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default="auto")
    p.add_argument("--run-format", choices=RUN_FORMATS, default="auto")
    p.add_argument("--policy", help="policy file (TOML): rules, slices, significance, budgets, waivers (docs/policy.md)")
    p.add_argument("--k", type=int, help="the cutoff k (default: a policy file's, the benchmark folder's; 10 on raw "
                   "files, as review and init)")
    p.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (trec_eval -l; default 1)")
    p.add_argument("--missing-queries", choices=("error", "zero"),
                   help="a qrels query without a ranking: error or score 0 (trec_eval -c); gate and compare "
                   "refuse by default, score scores it 0 with a warning")
    p.add_argument("--short-rankings", choices=("error", "allow"),
                   help="a ranking shorter than k: error or allow; gate refuses by default, score scores it "
                   "with a warning (allow: no warning; error: refuse)")
    p.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="threads: large TREC runs' blocks read at once, the significance tests' resamples (default: "
                   "every core; 1: one at a time); the results do not depend on it")
    p.set_defaults(extra_words_hint="runs are given with --runs FILE, one --runs per run; or use "
                   "`rankgate trec_eval QRELS RUN`")


def _jobs(text: str) -> int:
    import argparse

    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return n


def jobs(args) -> int:
    """--jobs, or every core the process may use."""
    n = getattr(args, "jobs", 0)
    if n:
        return n
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def register(sub) -> None:
    """The evaluation commands: validate, score, compare, gate, receipt (in the order --help lists them)."""
    _add_validate(sub)
    _add_score(sub)
    _add_compare(sub)
    _add_gate(sub)
    _add_receipt(sub)


def _add_validate(sub) -> None:
    v = sub.add_parser("validate", help="check qrels and runs; exit 2 listing every problem")
    _inputs(v)
    v.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measures to check the names of: nDCG@10, AP, P(rel=2)@10 ... (repeatable)")
    v.add_argument("--format", choices=("text", "json"), default="json")
    v.set_defaults(func=cmd_validate)


def _add_score(sub) -> None:
    s = sub.add_parser("score", help="score runs: the release-gate JSON, trec_eval's lines, or a table")
    _inputs(s)
    s.add_argument("--run", help="score only this run")
    s.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measure(s): P@10, R@100, RR@10, nDCG@10, AP, P(rel=2)@10, trec_eval names (repeatable)")
    s.add_argument("--format", choices=("json", "trec", "table"), default="json")
    s.add_argument("-q", "--per-query", action="store_true", help="with --format trec: per-query lines too")
    s.add_argument("--trec-eval-version", choices=("10", "9"), default="10",
                   help="10 (default), or 9: trec_eval 9.0.7's iprec_at_recall and 11pt_avg rule and its "
                   "single-precision scores (scores equal as C floats tie), as pytrec_eval computes them")
    s.add_argument("-M", "--depth", type=int, metavar="N", help="score only each ranking's top N (trec_eval -M)")
    s.add_argument("-J", "--judged-only", action="store_true",
                   help="drop the documents nobody judged and rank the rest again (trec_eval -J)")
    s.add_argument("--validate-only", action="store_true")
    s.add_argument("--with-suggestions", action="store_true", help="count a judge's suggested grades "
                   "(labels suggest) for the pairs nobody judged")
    s.set_defaults(func=cmd_score)


def _add_compare(sub) -> None:
    c = sub.add_parser("compare", help="per-query deltas, wins/losses, newly failed/fixed, slices, significance, "
                       "rank movement: candidates against one baseline")
    _inputs(c)
    c.add_argument("--baseline", help="the reference run (default: the policy's baseline, else the first run)")
    c.add_argument("--candidate", action="append", default=[], metavar="NAME",
                   help="a run to compare (repeatable; default: every other run)")
    c.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE",
                   help="measures to compare (default: Success, P, R, RR and nDCG at k)")
    c.add_argument("--format", choices=("json", "table", "markdown"), default="json")
    c.add_argument("--top", type=int, metavar="N", help="list only the N most changed queries per candidate")
    c.add_argument("--markdown", metavar="FILE", help="also write the comparison as Markdown here (with charts)")
    c.add_argument("--plot", metavar="FILE.svg",
                   help="also write the charts as an SVG: per-query deltas per candidate and Recall@k per run")
    c.add_argument("--plot-measure", metavar="MEASURE",
                   help="the measure of the per-query delta charts (default: nDCG@k if compared, else RR@k)")
    _stats(c)
    c.set_defaults(func=cmd_compare)


def _add_gate(sub) -> None:
    g = sub.add_parser("gate", help="accept (exit 0) or reject (exit 3) a candidate run against a baseline")
    _inputs(g)
    g.add_argument("--baseline", help="the run in production")
    g.add_argument("--candidate", help="the run to release")
    g.add_argument("--must-pass", action="append", default=[], metavar="QUERY",
                   help="a query the candidate must hit in its top k (repeatable)")
    g.add_argument("-m", "--measure", action="append", default=[], metavar="MEASURE", help="extra measures to report")
    g.add_argument("--receipt", metavar="PATH", help="write the JSON receipt here (an in-toto statement)")
    g.add_argument("--sign-key", metavar="KEYFILE", help="sign the receipt with this key file (HMAC-SHA256 in a DSSE "
                   "envelope; make one with rankgate receipt keygen)")
    g.add_argument("-o", "--output", metavar="FILE", help="write the result JSON here instead of stdout")
    g.add_argument("--quiet", action="store_true", help="no verdict line on stderr")
    g.add_argument("--markdown", metavar="FILE", help="write a Markdown summary here (a CI step page)")
    g.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here (a test case per check and query)")
    g.add_argument("--as-of", metavar="YYYY-MM-DD", help="judge waivers' expiry on this date (default: today, UTC)")
    g.add_argument("--with-suggestions", action="store_true", help="count a judge's suggested grades "
                   "(labels suggest) for the pairs nobody judged, while the judge's kappa against the experts "
                   "on the blind overlap meets the policy's [judge] bar; the receipt records it")
    g.add_argument("--db", metavar="FILE", help="the workspace the labels came from, for stale labels with --corpus "
                   "(default: the benchmark folder's, or the app's for a qrels file)")
    g.add_argument("--no-stability", dest="stability", action="store_const", const=False, default=None,
                   help="skip the stability report (could the unjudged documents flip a check?); the receipt "
                   "records it (policy: stability = false)")
    _stats(g)
    g.add_argument("--validate-only", action="store_true")
    g.set_defaults(func=cmd_gate)


def _add_receipt(sub) -> None:
    r = sub.add_parser("receipt", help="check a gate's receipt")
    rs = r.add_subparsers(dest="receipt_command", metavar="COMMAND")
    rv = rs.add_parser("verify", help="re-read the inputs, check every hash, recompute the decision "
                       "(exit 0 when they agree, 3 naming what differs, 2 when an input cannot be read)")
    rv.add_argument("receipt", help="the receipt (JSON) written by rankgate gate --receipt")
    rv.add_argument("--root", help="resolve the receipt's relative paths against this folder "
                    "(default: the current folder, else the folder the gate ran in)")
    rv.add_argument("--key", metavar="KEYFILE", help="the key the receipt was signed with: its signature must hold")
    rv.set_defaults(func=cmd_receipt_verify)
    rk = rs.add_parser("keygen", help="write a new signing key (32 random bytes, hex) to a file only you can read")
    rk.add_argument("path", metavar="KEYFILE")
    rk.set_defaults(func=cmd_receipt_keygen)
    r.set_defaults(func=lambda args: usage(r))

def _stats(p) -> None:
    p.add_argument("--resamples", type=int, metavar="N", help="resamples of the randomization test and the bootstrap "
                   "(default: policy, else 10000)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="random seed of the significance tests (default: policy, else 0)")
    p.add_argument("--allow-snapshot-mismatch", action="store_true",
                   help="compare runs whose corpus_snapshot differs from the labels' collection_version "
                        "or from each other")


# ---- shared ------------------------------------------------------------------------------------

def positional_qrels(args) -> None:
    """`rankgate score QRELS --runs ...`: a positional file that is no benchmark folder is the qrels."""
    from rankgate.core.benchmark import is_benchmark

    from rankgate.core.formats.irds import is_irds

    b = getattr(args, "benchmark", None)
    if b and not args.qrels and (is_irds(b) or os.path.isfile(b) and not is_benchmark(b)):
        args.qrels, args.benchmark = b, None


def load(args, fast: bool = False, gate: bool = False, on_run_error=None) -> tuple[Bundle, Policy]:
    """Read the inputs; `fast` reads runs lean where it can (large TREC runs through the compiled path,
    core/formats/trec_fast.py; JSONL runs, core/formats/jsonl_lean.py); `gate` keeps what the gate's review
    queue needs of them too."""
    from rankgate.cli.progress import terminal_progress
    from rankgate.core.bundle import load_bundle
    from rankgate.core.policy import resolve

    positional_qrels(args)
    reader = _fast_reader(args, gate) if fast else None
    if reader is not None:
        reader.start(args)
    broken: list[InputError | OSError] = []  # the gate: run files that do not read, refused below with why
    if gate and on_run_error is None:
        on_run_error = lambda path, e: broken.append(e)  # noqa: E731
    bundle = load_bundle(args.qrels, args.runs, benchmark=args.benchmark, queries=args.queries,
                         qrels_format=args.qrels_format, run_format=args.run_format, progress=terminal_progress,
                         run_reader=reader, acl=getattr(args, "acl", None),
                         suggestions=suggestions_file(args), on_run_error=on_run_error)
    overrides = policy_overrides(args)
    level = bundle.qrels.meta.get("dataset_rel_level")  # an ir_datasets dataset's official level
    if overrides.get("rel_level") is None and bundle.manifest is None and isinstance(level, int):
        overrides["rel_level"] = level
    if broken:
        _refuse_broken_run(broken[0], bundle, overrides)
    policy = resolve(overrides, bundle)
    if reader is not None and reader.deep:  # a run was read lean, and the gate's measures see whole rankings
        from rankgate.core.formats.jsonl_lean import watch_top_k

        watch_top_k(list(bundle.runs.values()), bundle.qrels, policy.k)
    return bundle, policy


def _refuse_broken_run(error, bundle: Bundle, overrides: dict) -> None:
    """The gate refuses a run file that does not read, even one that is neither its baseline nor its
    candidate: the receipt hashes every run listed, and a broken input in a committed benchmark should fail
    CI where it is, not later (docs/ci.md). When the gate's pair was read from other files, the error says
    so and how to go on."""
    from rankgate.core.policy import resolve

    from rankgate.core.bundle import SecondRunName

    if not isinstance(error, InputError):
        raise error
    if isinstance(error, SecondRunName):  # a clash of names, not a broken file (it may be the pair itself)
        raise error
    try:
        policy = resolve(overrides, bundle)
        pair = (policy.baseline, policy.candidate)
    except InputError:
        raise error from None
    if not all(pair) or not all(name in bundle.runs for name in pair):
        raise error
    where = "the runs in benchmark.toml" if bundle.manifest is not None else "--runs"
    raise InputError(error.path, f"{error.what} (not the gate's baseline {pair[0]} or candidate {pair[1]}, "
                     f"which read fine; the gate refuses every broken run it is given: fix it, or take it out "
                     f"of {where})", line=error.line, where=error.where) from None


def suggestions_file(args) -> str | None:
    """With --with-suggestions: the suggestions journal beside the benchmark's workspace (labels suggest)."""
    if not getattr(args, "with_suggestions", False):
        return None
    from rankgate.core.benchmark import is_benchmark, load_manifest

    if not args.benchmark or not is_benchmark(args.benchmark):
        raise InputError("--with-suggestions", "suggestions belong to a benchmark folder's workspace: name the folder")
    from rankgate.store import sync
    from rankgate.store.suggestions import path_beside

    located = sync.locate(load_manifest(args.benchmark), create=False)
    path = path_beside(located.adopt_from or located.path)
    if not path.exists():
        raise InputError(str(path), "no suggestions yet: `rankgate labels suggest BENCH` asks a judge for them")
    return str(path)


FAST_MIN_BYTES = 1 << 20  # trec_fast.MIN_BYTES (tests/cli/test_startup.py checks they agree)
EARLY_RUNS = 2  # runs whose first blocks are parsed beside the qrels (compare's and the gate's two)


class _FastReader:
    """The lean run reader, set up on the first run file large enough for it (a benchmark of small files
    never imports it, pyarrow's finder or the gate's depth): JSONL runs read lean (core/formats/jsonl_lean.py),
    TREC runs through the compiled path when pyarrow is there (core/formats/trec_fast.py), so memory follows
    what is kept, not the file. `deep`: a run was read lean and the gate's measures look at whole rankings
    (then the review queue's documents are looked up again in every run: jsonl_lean.watch_top_k)."""

    def __init__(self, args, gate: bool):
        self.args, self.gate, self.deep, self._read = args, gate, False, None

    def __call__(self, path: str, name, qrels, progress=None):
        fast = sys.modules.get("rankgate.core.formats.trec_fast")  # once loaded, its threshold rules too
        try:
            if self._read is None and os.path.getsize(path) < min(FAST_MIN_BYTES, getattr(fast, "MIN_BYTES",
                                                                                          FAST_MIN_BYTES)):
                return None
        except OSError:
            return None  # the usual reader says what is wrong with the file
        if self._read is None:
            self._read = self._setup()
        return self._read(path, name, qrels, progress)

    def start(self, args) -> None:
        """Before the qrels are read: the first two runs' first blocks parsed beside them, a thread each
        (trec_fast.read_early), when they are large TREC files given by --runs, read lean, and more than one
        thread may work (--jobs)."""
        from rankgate.core.formats import split_run_spec

        if not args.runs or getattr(args, "benchmark", None) or getattr(args, "acl", None) or self.args.run_format not in (
                "auto", "trec") or jobs(self.args) < 2:
            return
        for spec in args.runs[:EARLY_RUNS]:  # compare's and the gate's two runs parsed at once, beside the qrels
            path = split_run_spec(spec)[1]
            try:
                if os.path.getsize(path) < FAST_MIN_BYTES:
                    continue
            except OSError:
                continue
            from rankgate.core.formats import trec_fast  # (only for a file this large: its import costs)

            if not trec_fast.available():
                return
            trec_fast.read_early(path)

    def _setup(self):
        from functools import partial

        from rankgate.core.formats import trec_fast as fastpath
        from rankgate.core.formats.jsonl_lean import lean_run_reader

        keep_top = 0
        if self.gate:
            from rankgate.core.bounds import UNCUT_DEPTH

            depth, k = gate_depth(self.args)  # no cut-off: keep the unjudged documents as deep as the bounds look
            self.deep, keep_top = depth is None, depth or max(k, UNCUT_DEPTH)
        trec = partial(fastpath.lean_reader, jobs=jobs(self.args), deep=self.deep) if fastpath.available() else None
        return partial(lean_run_reader, fmt=self.args.run_format, trec=trec, keep_top=keep_top)


def _fast_reader(args, gate: bool) -> _FastReader | None:
    """The lean run reader, or None to read every run the usual way (RANKGATE_FAST=0)."""
    if os.environ.get("RANKGATE_FAST", "1") == "0":
        return None
    from rankgate.core.formats import textio

    textio.LEAN_ALLOCATOR = True  # the large reads' blocks from malloc (trec_fast.lean_allocator)
    return _FastReader(args, gate)


def gate_depth(args) -> tuple[int | None, int]:
    """How deep the gate's review queue looks into each ranking: every measure's cut-off (at least k),
    or None when one has none (AP, nDCG: whole rankings); and k."""
    from rankgate.core.bundle import find_manifest
    from rankgate.core.policy import resolve

    from types import SimpleNamespace

    from rankgate.core.decision import extra_measures, gate_measures
    from rankgate.core.queue import ranking_depth

    positional_qrels(args)
    manifest, _ = find_manifest(args.benchmark, args.qrels)
    policy = resolve(policy_overrides(args), SimpleNamespace(manifest=manifest, queries={}, must_pass=[]))
    return ranking_depth(gate_measures(policy.k) + extra_measures(policy)), policy.k


def warn_unexported(args, bundle: Bundle) -> None:
    """One line on stderr when this benchmark folder's workspace holds label edits its qrels file does not
    (store/sync.py: reads one small file, creates and locks nothing); the decision and the JSON are unchanged."""
    if bundle.manifest is None or args.qrels is not None:
        return
    from rankgate.store.unexported import unexported_note

    note = unexported_note(bundle.manifest)
    if note:
        say(note, err=True)


def check(bundle: Bundle, policy: Policy) -> None:
    problems = problems_of(bundle, policy)
    if problems:
        from rankgate.core.leniency import with_how_to_accept

        raise ValidationError(with_how_to_accept(problems))


def problems_of(bundle: Bundle, policy: Policy) -> list:
    """Every problem of the inputs (core.validate: validate_lean for runs read by the fast path)."""
    from rankgate.core.model import LeanRun
    from rankgate.core.validate import validate, validate_lean

    runs = list(bundle.runs.values())
    lean = [r for r in runs if isinstance(r, LeanRun)]
    full = [r for r in runs if not isinstance(r, LeanRun)]
    problems = validate(bundle.qrels, full, policy.checks, bundle.no_answer)
    if lean:
        judged = set(bundle.qrels.query_ids)
        for run in lean:
            problems += validate_lean(run, judged, set(bundle.no_answer), policy.checks)
    return sorted(problems, key=lambda p: not _located(p.where))  # a line's problem first: often the cause


def _located(where: str) -> bool:
    """A problem at a line (`file:6`) or a JSON path (`file: $["run"]`), not one about a whole file."""
    head, _, tail = where.rpartition(":")
    return bool(head) and (tail.isdigit() or tail.lstrip().startswith("$"))


def _valid_json(bundle: Bundle, policy: Policy, corpus: dict | None = None) -> str:
    out = {"status": "valid", "queries": len(bundle.qrels.query_ids), "runs": sorted(bundle.runs), "k": policy.k}
    if corpus is not None:
        out["corpus"] = corpus
    return json.dumps(out)


def corpus_report(bundle: Bundle, path: str | None) -> dict | None:
    """The corpus named by --corpus (or the manifest), read for what the inputs name: how many of
    the judged documents have a text. A corpus that cannot be read is an InputError."""
    from rankgate.core.formats.corpus import read_corpus

    path = path or (str(bundle.manifest.corpus) if bundle.manifest and bundle.manifest.corpus else None)
    if not path:
        return None
    names = bundle.qrels.catalog.docs.names
    judged = {names[c] for c in set(bundle.qrels.doc.tolist())}
    docs = read_corpus(path, judged)
    return {"path": path, "judged_documents": len(judged), "judged_with_text": len(docs)}


# ---- commands ----------------------------------------------------------------------------------

def _unread(e: Exception, path: str):
    """A file that could not be read, as one of validate's problems."""
    from rankgate.core.errors import Problem

    if isinstance(e, InputError):
        where = e.path + (f":{e.line}" if e.line is not None else "") + (f": {e.where}" if e.where else "")
        return Problem(where, e.what, "unreadable")
    return Problem(path, getattr(e, "strerror", None) or str(e), "unreadable")


def _runs_if_qrels_failed(args, e: InputError) -> list[str] | None:
    """The run files to check without qrels when `e` is the qrels file's own error; else None."""
    from rankgate.core.bundle import find_manifest

    from rankgate.core.bundle import run_specs

    try:
        manifest, qrels = find_manifest(args.benchmark, args.qrels)
        path = qrels or (str(manifest.qrels) if manifest else None)
        return run_specs(args.runs, manifest) if path is not None and e.path == str(path) else None
    except InputError:
        return None


def cmd_validate(args) -> int:
    unread: list = []  # a run file that cannot be read is listed, and the others are still checked
    try:
        bundle, policy = load(args, fast=True, on_run_error=lambda path, e: unread.append(_unread(e, path)))
    except InputError as e:
        if unread:
            problems = [_unread(e, e.path)]  # what the runs left out made impossible to check (e.g. a baseline)
        elif (specs := _runs_if_qrels_failed(args, e)) is not None:  # the runs are still checked for
            from rankgate.core.validate import runs_without_qrels  # what needs no qrels

            problems = [_unread(e, e.path)] + runs_without_qrels(specs, args.run_format)
        else:
            raise
    else:
        corpus = corpus_report(bundle, args.corpus)
        problems = problems_of(bundle, policy)
    problems = unread + problems
    if problems:
        if args.format == "json":
            emit(json.dumps({"status": "invalid", "problems": [p.as_dict() for p in problems]}, indent=2))
        for p in problems:
            say(f"error: {p}", err=True)
        return EXIT_INVALID
    texts = (f", texts for {corpus['judged_with_text']} of {corpus['judged_documents']} judged documents"
             if corpus else "")
    emit(_valid_json(bundle, policy, corpus) if args.format == "json" else
         f"valid: {len(bundle.qrels.query_ids)} queries, runs {', '.join(visible(r) for r in sorted(bundle.runs))}, k={policy.k}{texts}")
    return EXIT_OK


def cmd_score(args) -> int:
    from rankgate.core.leniency import lenient_check

    if args.depth is not None and args.depth < 1:
        raise InputError("--depth", f"expected a number of documents of 1 or more, found {args.depth}")
    # trec_eval 9's single-precision scores rank rows again: the compiled reader ranks them as it reads
    bundle, policy = load(args, fast=args.trec_eval_version != "9")
    warn_unexported(args, bundle)
    # score refuses only what would make a number wrong; the rest is one warning line each (core/leniency.py)
    warnings, problems = lenient_check(bundle, policy, problems_of, refuse_short=args.short_rankings == "error",
                                       quiet_short=args.short_rankings == "allow")
    if problems:
        raise ValidationError(problems)
    for line in warnings:
        say(line, err=True)
    options = {"depth": args.depth, "judged_only": args.judged_only, "compat": args.trec_eval_version}
    if args.validate_only:
        emit(_valid_json(bundle, policy))
        return EXIT_OK
    perm = None
    if getattr(bundle, "access", None) is not None:  # (core/acl.py and its corpus reader load only with one)
        from rankgate.core.acl import visible_bundle

        bundle, perm = visible_bundle(bundle, policy.checks.rel_level)  # with an ACL: what each user may see
    runs = [bundle.run(args.run)] if args.run else list(bundle.runs.values())
    if args.format == "trec":
        return _score_trec(bundle, policy, runs, args, options)
    from rankgate.core.gate import answerable_queries, macro, query_rows, score_run  # (not for trec's lines)

    k, extra = policy.k, policy.measures
    answerable = answerable_queries(bundle.qrels, bundle.no_answer)
    results = []
    for run in runs:
        s = score_run(bundle.qrels, run, k, policy.checks, extra, answerable, **options)
        results.append({"run": run.name, "k": k, "queries": query_rows(s, bundle.qrels, k, policy.checks.rel_level, extra),
                        "macro": macro(s, k, extra)})
        if bundle.no_answer:
            results[-1]["no_answer_queries"] = sorted(bundle.no_answer)
        if perm is not None:
            results[-1]["permission_leaks"] = perm.leaks[run.name]
    if args.format == "table":
        from rankgate.cli.tables import score_table

        emit(score_table(results))
    elif len(results) == 1:
        emit(json.dumps(results[0], indent=2))
    else:
        emit(json.dumps({"k": k, "runs": results}, indent=2))
    return EXIT_OK


def _score_trec(bundle: Bundle, policy: Policy, runs, args, options: dict) -> int:
    """trec_eval's output: `measure<TAB>qid<TAB>value`, `all` for the summary."""
    from rankgate.core.engine import evaluate, summarise
    from rankgate.core.measures import ALL_TREC

    measures = policy.measures or ALL_TREC
    out = []
    for run in runs:
        s = evaluate(bundle.qrels, run, measures, rel_level=policy.checks.rel_level,
                     missing=policy.checks.missing_queries, **options)
        if args.per_query:  # grouped by query, as trec_eval -q; no per-query line for a geometric mean
            for i, qid in enumerate(s.qids):
                out.extend(_trec_line(m, qid, float(s.values[m][i])) for m in measures if not m.geometric)
        out.append(f"{'runid':<22}\tall\t{visible(run.name)}")
        out.append(f"{'num_q':<22}\tall\t{len(s.qids)}")
        for m in measures:
            out.append(_trec_line(m, "all", summarise(m, s.values[m])))
    emit("\n".join(out))
    return EXIT_OK


def _trec_line(m, qid: str, value: float) -> str:
    v = f"{int(round(value))}" if m.summed else f"{value:.4f}"
    return f"{m.trec_name:<22}\t{visible(qid)}\t{v}"


def _as_of(text):
    if not text:
        return None
    import datetime as dt

    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError("--as-of", f"expected a date such as 2026-12-31, found {text!r}") from None


def cmd_gate(args) -> int:
    from rankgate.core import stats
    from rankgate.core.gate import gate_bundle

    stats.use_threads(jobs(args))  # the significance tests' resamples, chunk by chunk

    as_of = _as_of(args.as_of)
    bundle, policy = load(args, fast=True, gate=True)
    named = [p for _, p in bundle.files if p.startswith("irds:")]
    if args.receipt and named:
        raise InputError(named[0], "a receipt records the sha256 of every input file, and an ir_datasets name is "
                         "not a file: write it to one first (ir_datasets export ID qrels > qrels.txt)")
    warn_unexported(args, bundle)
    check(bundle, policy)
    _pair_in_order_given(bundle, policy, args.quiet)  # (after the inputs' errors, which come first)
    outputs = (("--receipt", args.receipt), ("--markdown", args.markdown), ("--junit", args.junit), ("-o", args.output))
    if any(path for _, path in outputs):  # names the input it would replace
        _refuse_inputs(bundle, policy, outputs)
    refuse_inputs(args.receipt, args.markdown, args.junit, args.output, inputs=[args.sign_key] if args.sign_key else [])
    if args.validate_only:
        emit(_valid_json(bundle, policy))
        return EXIT_OK
    from rankgate.cli.trust import gate_trust

    trust = gate_trust(args, bundle, policy)  # stale labels (may refuse), the judge's vote (may drop suggestions)
    same = _same_run(bundle, policy)  # then the gate's input errors (a must-pass query not in the qrels) come first
    result = gate_bundle(bundle, policy, as_of=as_of)
    if same:
        _one_run(bundle, policy)  # refuses comparing rules; else the JSON says "no_baseline" (core/gate.py)
    if getattr(args, "with_suggestions", False):  # recorded in the JSON, so in the receipt
        result.data["suggestions"] = {"counted": bundle.qrels.meta.get("suggestions_counted", 0),
                                      "file": next(p for r, p in bundle.files if r == "suggestions")}
    code = decide_exit(EXIT_OK if result.accepted else EXIT_REJECTED)  # kept if a reader closes the pipe early
    if args.receipt or args.markdown or args.junit or args.output:
        from rankgate.core.receipt import build_receipt, invocation_of, write_output, write_receipt
    if args.receipt:
        receipt = build_receipt(result.data, bundle, policy, code, invocation_of(args), trust=trust)
        if args.sign_key:
            from rankgate.core.signing import read_key, sign

            receipt = sign(receipt, read_key(args.sign_key))
        write_receipt(args.receipt, receipt)
    result.data.update(trust)  # after the receipt's result (recomputed by `receipt verify`), beside it
    if args.markdown:
        from rankgate.core.outputs import gate_markdown

        write_output(args.markdown, gate_markdown(result), "the Markdown summary")
    if args.junit:
        from rankgate.core.outputs import gate_junit

        write_output(args.junit, gate_junit(result), "the JUnit report")
    from rankgate.core.jsontext import dumps  # json.dumps(..., indent=2)'s text, faster

    if args.output:
        write_output(args.output, dumps(result.data) + "\n", "the result")
    else:
        emit(dumps(result.data))
    if not args.quiet:
        from rankgate.core.gate import verdict_line  # (core/outputs.py, the writers, is not loaded for it)

        say(verdict_line(result.data), err=True)
    return code


def _pair_in_order_given(bundle: Bundle, policy: Policy, quiet: bool) -> None:
    """Raw files with two runs and no pair named: the first --runs is the baseline, the second the candidate
    (core.gate.pair_in_order_given), said on the first line (stderr)."""
    from rankgate.core.gate import pair_in_order_given

    named = policy.baseline or policy.candidate
    if pair_in_order_given(bundle, policy) and not quiet:
        how = "the other --runs" if named else "the two --runs in the order given"
        say(f"gate: baseline {visible(policy.baseline)}, candidate {visible(policy.candidate)} ({how}; "
            "--baseline NAME --candidate NAME chooses)", err=True)


def _same_run(bundle: Bundle, policy: Policy) -> bool:
    """One run to gate: no baseline or candidate named and one run loaded (then it is both), or one named twice."""
    base, cand = policy.baseline, policy.candidate
    if len(bundle.runs) == 1:  # the one run fills the role not named, as gate_bundle does (a wrong name is said there)
        only = next(iter(bundle.runs))
        base, cand = base or only, cand or only
    return bool(base) and base == cand


def _one_run(bundle: Bundle, policy: Policy) -> None:
    """The gate has one run to look at (baseline = candidate): every rule must be absolute (floors, must-pass,
    judged share, budgets without max_ratio), and the run is gated on those alone. A comparing rule would compare
    the run with itself and pass: refused, exit 2."""
    base = policy.baseline
    comparing = policy.comparing_rules()
    if not comparing:
        return
    rules = ", ".join(visible(r) for r in comparing)
    if len(bundle.runs) == 1:
        head, todo = f"only one run ({visible(base)}): a gate compares two", \
            "add the run to compare (--runs, or `runs` in benchmark.toml) and name both with --baseline/--candidate"
    else:
        head, todo = f"the baseline and the candidate are both {visible(base)!r}: a gate compares two runs", \
            "name two with --baseline/--candidate"
    raise InputError("gate", f"{head} ({rules} would compare {visible(base)} with itself); {todo}, or use "
                     "`rankgate score`")


def _refuse_inputs(bundle: Bundle, policy: Policy, outputs) -> None:
    """No output flag may name a file the command reads (the bundle's, the policy's, a pipeline's stage runs)."""
    from rankgate.core.outfile import refuse_outputs
    from rankgate.core.receipt import input_files

    files = input_files(bundle, policy)
    manifest = bundle.manifest
    for t in getattr(manifest, "pipelines", None) or []:
        if not isinstance(t, dict):
            continue
        named = [t.get("file")] + [s.get("run") for s in t.get("stages") or [] if isinstance(s, dict)]
        files += [("stage", str(manifest.folder / p)) for p in named if isinstance(p, str) and p]
    refuse_outputs(outputs, files)


def cmd_compare(args) -> int:
    from rankgate.core import stats
    from rankgate.core.compare import compare_bundle, default_measures

    stats.use_threads(jobs(args))

    bundle, policy = load(args, fast=True)
    warn_unexported(args, bundle)
    check(bundle, policy)
    _refuse_inputs(bundle, policy, (("--markdown", args.markdown), ("--plot", args.plot)))
    refuse_inputs(args.markdown, args.plot, inputs=[p for _, p in bundle.files] + policy.sources)
    baseline = args.baseline or policy.baseline or next(iter(bundle.runs))
    bundle.run(baseline)
    candidates = list(dict.fromkeys(args.candidate)) or [n for n in bundle.runs if n != baseline]
    if not candidates:
        raise InputError("compare", f"nothing to compare with {baseline!r}: load another run or name one "
                         "with --candidate")
    if args.top is not None and args.top < 0:
        raise InputError("--top", "N must be 0 or more")
    measures = [m for t in args.measure for m in parse_measures(t)] or None
    plot_measure = None
    if args.plot_measure is not None:  # "" too: a typo is said, not ignored
        plot_measure = parse_measures(args.plot_measure)
        if len(plot_measure) != 1:
            raise InputError("--plot-measure", "name one measure, e.g. nDCG@10")
        plot_measure = plot_measure[0]
        measures = list(dict.fromkeys((measures or default_measures(policy.k)) + [plot_measure]))
    from rankgate.core.acl import visible_bundle

    original = bundle
    bundle, perm = visible_bundle(bundle, policy.checks.rel_level)  # with an ACL: what each user may see
    cmp = compare_bundle(bundle, policy, baseline, candidates, measures)
    data = cmp.as_dict(args.top, laid=args.format not in ("table", "markdown"))  # JSON: queries written from rows
    from rankgate.cli.funnel import compare_extras

    extras = compare_extras(original, policy, baseline, candidates, perm)
    data.update(extras)
    charts = None
    if args.markdown or args.format == "markdown":
        from rankgate.core.outputs import paired_charts

        charts = {c.candidate: paired_charts(c.paired, policy.must_pass, plot_measure) for c in cmp.candidates}
    if args.markdown:
        from rankgate.core.outputs import compare_markdown
        from rankgate.core.receipt import write_output

        write_output(args.markdown, compare_markdown(cmp.as_dict() | extras, charts=charts),
                     "the Markdown comparison")
    if args.plot:
        from rankgate.core.receipt import write_output

        write_output(args.plot, comparison_plot(cmp, policy.must_pass, plot_measure), "the SVG charts")
    if args.format == "table":
        from rankgate.cli.tables import compare_table

        from rankgate.cli.funnel import compare_extras_table

        emit(compare_table(data, top=args.top if args.top is not None else 10) + compare_extras_table(data))
    elif args.format == "markdown":
        from rankgate.core.outputs import compare_markdown

        emit(compare_markdown(data, charts=charts))
    else:
        from rankgate.cli.base import JsonOut
        from rankgate.core.jsontext import pieces

        out = JsonOut()  # json.dumps(data, indent=2)'s text, faster (10,000 queries: 64 MB), written as it is made
        pieces(data, out=out)
        out.close()
    return EXIT_OK


def comparison_plot(cmp, must_pass, measure=None) -> str:
    """The SVG of `compare --plot`: a delta panel per candidate, one Recall@k panel for every run."""
    from rankgate.core.charts import curve_depth, query_deltas, recall_curve
    from rankgate.core.outputs import chart_measure
    from rankgate.core.svgplot import comparison_svg

    panels, preps = [], {}
    for c in cmp.candidates:
        p = c.paired
        m = measure or chart_measure(p.measures, p.k)
        panels.append((f"{c.candidate} vs {cmp.baseline}: {m.name} delta per query", query_deltas(p, m, must_pass)))
        preps.setdefault(p.baseline_name, p.prepared["baseline"])
        preps.setdefault(p.candidate_name, p.prepared["candidate"])
    depth = curve_depth(*preps.values())
    curves = {name: recall_curve(prep, depth, cmp.rel_level) for name, prep in preps.items()}
    return comparison_svg(f"rankgate compare: baseline {cmp.baseline}, k = {cmp.k}", panels, depth, curves)


def cmd_receipt_verify(args) -> int:
    from rankgate.core.receipt import verify_receipt

    key = None
    if args.key:
        from rankgate.core.signing import read_key

        key = read_key(args.key)
    v = verify_receipt(args.receipt, args.root, key)
    emit(json.dumps(v.as_dict(), indent=2))
    if v.status == "unreadable":
        say(f"error: {args.receipt}: cannot read the inputs: {v.error}", err=True)
    elif v.status == "mismatch":
        shown = "; ".join(v.differences[:5]) + (f"; and {len(v.differences) - 5} more" if len(v.differences) > 5
                                                else "")
        say(f"error: {args.receipt}: the receipt does not match: {shown}", err=True)
    elif v.signature and v.signature != "valid":
        say(f"note: {args.receipt}: signed, signature not checked (give --key KEYFILE)", err=True)
    if v.status == "verified" and v.written_by:
        skipped = f"; not in it, so not checked: {len(v.not_checked)} field(s) added since" if v.not_checked else ""
        say(f"note: {args.receipt}: written by rankgate {visible(v.written_by)}; every field this version "
            f"rebuilds matches{skipped}", err=True)
    return v.exit_code


def cmd_receipt_keygen(args) -> int:
    from rankgate.core.receipt import write_atomic
    from rankgate.core.signing import new_key

    if os.path.lexists(args.path):
        raise InputError(args.path, "exists already: a key is never overwritten (choose another path)")
    try:
        write_atomic(args.path, new_key(), mode=0o600)
    except OSError as e:
        raise InputError(args.path, f"cannot write the key: {e.strerror or e}") from None
    say(f"wrote a signing key to {args.path} (keep it secret; verify with: rankgate receipt verify RECEIPT "
        f"--key {shell(args.path)})", err=True)
    return EXIT_OK
