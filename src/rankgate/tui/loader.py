"""Everything `rankgate review` reads, in order, with progress (no textual here).

The app calls `load()` from a worker thread: the benchmark's manifest, each
run file (from the parsed-run cache when fresh), the label store (its first
open imports the folder's labels), the queries, the policy, then one
vectorised scoring of every run. The corpus is read afterwards, apart, by
`load_corpus()`, so that a large corpus never delays the first view.
"""

from __future__ import annotations

import gc
import getpass
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Container

import numpy as np

from rankgate.core.benchmark import Manifest, is_benchmark
from rankgate.core.bundle import Bundle, find_manifest, read_run_files, run_specs
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, split_run_spec
from rankgate.core.formats.irds import is_irds
from rankgate.core.formats.trec import run_name_from_path
from rankgate.core.formats.corpus import Document, read_corpus, read_queries
from rankgate.core.model import Catalog, Query, Run
from rankgate.core.policy import resolve
from rankgate.tui.labels import LabelBook, MemoryBackend
from rankgate.tui.model import ReviewModel
from rankgate.tui import scorecache
from rankgate.tui.runcache import ReadAhead, read_runs_cached, store_qrels

Progress = Callable[[str, int, int], None]  # (what, steps done, steps); may raise Cancelled to stop


class Cancelled(Exception):
    """The app is leaving while the benchmark loads (raised by the progress callback, between steps)."""


@dataclass
class Inputs:
    """What the command line named."""

    path: str | None = None
    runs: list[str] = field(default_factory=list)
    db: str | None = None
    reviewer: str | None = None
    memory: bool = False  # keep labels in memory only (tests of the views)
    blind: bool = False  # blind review: the store shows the reviewer's own judgments only (key B toggles)
    judge: bool = False  # open on the judging screen (--judge; a labels-only review always does)
    # Every part of a benchmark as a flag (over the manifest's, when there is one):
    queries: str | None = None
    corpus: str | None = None
    k: int | None = None
    rel_level: int | None = None
    measures: list[str] = field(default_factory=list)
    policy: str | None = None
    missing_queries: str | None = None  # the gate's input options (--missing-queries, --short-rankings ...)
    short_rankings: str | None = None
    allow_snapshot_mismatch: bool = False
    # A browser session of `rankgate review --serve` (tui/serve.py): exports only into `export_dir`; every
    # session writes the one workspace (`shared`); a viewer's session is read-only.
    export_dir: str | None = None
    shared: bool = False
    viewer: bool = False
    # A first open's run files, parsed ahead since the command started (read_ahead; taken by the first load)
    ahead: ReadAhead | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_args(cls, args) -> "Inputs":
        path = getattr(args, "path", None) or getattr(args, "qrels", None)
        inputs = cls(path, list(getattr(args, "runs", None) or []),
                     getattr(args, "db", None), getattr(args, "reviewer", None))
        inputs.blind = bool(getattr(args, "blind", False))
        inputs.judge = bool(getattr(args, "judge", False))
        for key in ("queries", "corpus", "k", "rel_level", "policy", "missing_queries", "short_rankings"):
            setattr(inputs, key, getattr(args, key, None))
        inputs.allow_snapshot_mismatch = bool(getattr(args, "allow_snapshot_mismatch", False))
        inputs.measures = list(getattr(args, "measure", None) or [])
        inputs.export_dir = getattr(args, "export_dir", None) if not getattr(args, "serve", False) else None
        inputs.shared = inputs.export_dir is not None
        if getattr(args, "viewer", None):
            inputs.viewer, inputs.reviewer = True, args.viewer
        return inputs

    def overrides(self) -> dict:
        """The policy settings the flags give (core.policy.resolve)."""
        return {"k": self.k, "rel_level": self.rel_level, "measures": self.measures, "policy": self.policy,
                "missing_queries": self.missing_queries, "short_rankings": self.short_rankings,
                "allow_snapshot_mismatch": self.allow_snapshot_mismatch}


@dataclass
class Loaded:
    model: ReviewModel
    manifest: Manifest | None
    reviewer: str
    corpus_path: Path | None
    cache_hits: int = 0
    corpus_missing: str = ""  # what the document pane says when there is no corpus, in the words of the mode
    wanted_docs: Container[str] | None = None  # the documents the review can show: the rest of a corpus is skipped
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # inputs left out, each with file, line and why
    unread_pair: dict[str, str] = field(default_factory=dict)  # the gate's runs left out, by role (unread_pair)
    later: list[Callable[[], None]] = field(default_factory=list)  # to run after the first frame (load())


def default_reviewer() -> str:
    try:
        return os.environ.get("RANKGATE_REVIEWER") or getpass.getuser()
    except Exception:  # no login name (some containers)
        return "reviewer"


def _noop(what: str, done: int, total: int) -> None:
    pass


def load(inputs: Inputs, progress: Progress = _noop, *, defer_caches: bool = False) -> Loaded:
    """Read and score everything. The cyclic garbage collector is paused while millions of small
    objects are made (it would rescan them again and again), and what was loaded is then frozen
    out of its view, so that later collections (while keys are pressed) stay short. `defer_caches`:
    new parsed-run cache entries (and the fold of a first open's import) are left in `Loaded.later` for
    the caller to run (the app, after its first frame), else done here."""
    from rankgate.core.pages import small_pages

    small_pages()
    enabled = gc.isenabled()
    gc.disable()
    try:
        let_go_of_last_load()
        loaded = _load(inputs, progress)
        if not defer_caches:
            while loaded.later:
                loaded.later.pop(0)()
        return loaded
    finally:
        freeze()  # before the collector runs again, or its first pass scans everything just made
        if enabled:
            gc.enable()


_frozen = False  # a load (or a corpus) was frozen out of the collector's view


def freeze() -> None:
    global _frozen
    gc.freeze()
    _frozen = True


def let_go_of_last_load() -> None:
    """Frozen objects are never collected: the last load's cycles (a few hundred objects), dropped by a
    reload (ctrl+r, blind review), stayed for good, one more lot at each reload. Before loading again, what
    was frozen is put back in the collector's view and collected once (the new load is frozen after)."""
    if _frozen:
        gc.unfreeze()
        gc.collect()


def check_inputs(inputs: Inputs) -> None:
    """The mistakes found without reading anything (InputError)."""
    if inputs.path and not os.path.exists(inputs.path) and not is_irds(inputs.path):
        raise InputError(inputs.path, "no such file or folder (expected a benchmark folder or a qrels file)")
    if not inputs.path and not inputs.db and not (inputs.runs and inputs.queries):
        raise InputError("review", "name a benchmark folder or a qrels file (rankgate review PATH), or label from "
                         "scratch with --runs FILE --queries FILE [--corpus FILE]")
    if inputs.path and not is_benchmark(inputs.path) and not inputs.runs and not labels_only(inputs):
        raise InputError("runs", "no runs given (expected --runs FILE, repeatable, a benchmark folder, or "
                         "--queries/--corpus to review the labels alone)")
    for spec in inputs.runs:
        _, path = split_run_spec(spec)
        if not os.path.exists(path):
            raise InputError(path, "no such file (expected a run file)")
    for what, path in (("queries", inputs.queries), ("corpus", inputs.corpus), ("policy", inputs.policy)):
        if path and not os.path.isfile(path) and not is_irds(path):
            raise InputError(path, f"no such file (expected a {what} file)")
    check_options(inputs)


def check_options(inputs: Inputs) -> None:
    """The flags' own mistakes (a measure's name, k, the policy file), said before the
    screen opens, in the words `rankgate gate` uses: a flag cannot be fixed from inside the app."""
    from rankgate.core.measures import parse_measures
    from rankgate.core.policy import MAX_K, load_policy

    if inputs.k is not None and inputs.k < 1:
        raise InputError("--k", "k must be at least 1")
    if inputs.k is not None and inputs.k > MAX_K:
        raise InputError("--k", f"k must be at most {MAX_K}")
    for text in inputs.measures:
        parse_measures(text)
    if inputs.policy and os.path.isfile(inputs.policy):
        load_policy(inputs.policy)


NO_RUNS = "(no runs)"  # labels-only review: one empty run stands for both sides; the app hides the run panes


def labels_only(inputs: Inputs) -> bool:
    """A qrels file with query or document texts and no runs: its labels are reviewed alone."""
    return bool(inputs.path and not is_benchmark(inputs.path) and not inputs.runs
                and (inputs.queries or inputs.corpus))


def no_runs(catalog: Catalog) -> Run:
    empty = np.zeros(0, np.int32)
    return Run(NO_RUNS, "", catalog, empty, empty, np.zeros(0), np.zeros(0, np.int64))


def read_ahead(inputs: Inputs) -> ReadAhead | None:
    """The run files of these inputs that have no parsed-run cache entry, parsed from now on in a thread
    (runcache.ReadAhead) while the app imports Textual and starts, then while the label store opens; None
    when the inputs are wrong (the load says why)."""
    try:
        check_inputs(inputs)
        manifest, _ = find_manifest(None, inputs.path)
        return ReadAhead([] if labels_only(inputs) else run_specs(inputs.runs, manifest))
    except Exception:
        return None


def _load(inputs: Inputs, progress: Progress) -> Loaded:
    check_inputs(inputs)
    manifest, qrels_path = find_manifest(None, inputs.path)
    if manifest is not None:
        qrels_path = str(manifest.qrels)
    elif not qrels_path and not inputs.db and not inputs.memory:
        # Labelling from scratch (runs and queries, no labels yet): the workspace is named after the
        # queries file, as a qrels file's is after it; the review queue walks the runs' pool.
        from rankgate.store import paths

        inputs.db = str(paths.workspace_path(os.path.abspath(inputs.queries)))
    specs = [] if labels_only(inputs) else run_specs(inputs.runs, manifest)
    steps = len(specs) + 3
    step = 0
    catalog = Catalog()

    # Labels first: their IDs take the first codes, as the core's bundle does. Meanwhile, run files not in
    # the parsed-run cache are parsed ahead in a thread (a first open: the store's import holds the GIL,
    # pyarrow's parsing does not), in their own codes; the catalog's are given when they are taken.
    ahead, inputs.ahead = inputs.ahead or ReadAhead(specs), None  # (started by the command, if it could)
    try:
        progress("opening the label store", step, steps)
        book, store_queries = open_labels(inputs, manifest, qrels_path, catalog, inputs.reviewer)
        try:
            return _load_rest(inputs, progress, manifest, qrels_path, specs, catalog, book, store_queries, ahead)
        except BaseException:  # cancelled or bad input: let go of the store (and its lock)
            book.close()
            raise
    finally:
        ahead.close()


def _load_rest(inputs: Inputs, progress: Progress, manifest, qrels_path, specs, catalog, book,
               store_queries, ahead: ReadAhead | None = None) -> Loaded:
    steps = len(specs) + 3
    step = 1
    hits = 0
    problems: list[str] = []  # a bad file is left out and named; the rest is reviewed
    if getattr(book.backend, "read_only", ""):
        problems.append(f"labels read-only (edits are refused): {book.backend.read_only}")
    refused: list[tuple[str, BaseException]] = []
    later: list[Callable[[], None]] = []  # new parsed-run cache entries, the import's fold: after the first frame
    order: list[str] = []  # every run's name in the order given, read or left out (unread_pair)
    left_out: dict[str, str] = {}  # a run left out: its name -> where and why

    def hit(_where):
        nonlocal hits
        hits += 1

    def read(spec: str, _name, path: str) -> list[Run]:
        nonlocal step
        name = Path(path).name
        progress(f"reading {name}", step, steps)
        step += 1
        shown = [-1]

        def reading(done: int, total: int) -> None:
            pct = 100 * done // max(total, 1)
            if pct != shown[0]:  # a message per percent, not per block
                shown[0] = pct
                progress(f"reading {name} · {pct}%", step - 1, steps)

        got = read_runs_cached(spec, catalog, on_hit=hit, progress=reading, later=later, ahead=ahead)
        order.extend(r.name for r in got)
        return got

    def refuse(path: str, e: BaseException) -> None:
        refused.append((path, e))
        problems.append(f"run left out: {_describe(e, path)}")
        name = next((n for n, p in map(split_run_spec, specs) if p == path and n), None) or run_name_from_path(path)
        order.append(name)
        left_out[name] = (f"{e.path}:{e.line}" if e.line else e.path) if isinstance(e, InputError) else path

    runs = read_run_files(specs, read, on_error=refuse) if specs else {NO_RUNS: no_runs(catalog)}
    if not runs:  # nothing to review rankings of: the first refusal is the error
        _raise_first_refusal(refused)

    progress("reading queries", step, steps)
    queries = _queries_of(inputs, manifest, store_queries, problems)
    step += 1
    bundle = Bundle.of(book.qrels, runs, queries, manifest)
    no_answer = bundle.no_answer
    policy = _policy_of(inputs, manifest, qrels_path, bundle, problems,
                        plain=lambda: Bundle(book.qrels, runs, queries, None, no_answer))

    def scoring(what, done, total):
        progress(what, step, steps)

    permissions = app_permissions(manifest, runs, problems)
    # Scores under an ACL (what each query's user may see) are not cached: they are scored every time.
    skey = None if inputs.memory or permissions is not None else scorecache.key(
        runs, ReviewModel.measures_of(policy), policy.k, policy.checks.rel_level, no_answer)
    cached = scorecache.load(skey, book.qrels)
    model = ReviewModel(queries=queries, runs=runs, labels=book, policy=policy, no_answer=no_answer,
                        baseline=policy.baseline, candidate=policy.candidate,
                        name=manifest.name if manifest else Path(qrels_path or inputs.queries or "labels").name,
                        collection_version=manifest.collection_version if manifest else "",
                        progress=scoring, permissions=permissions, cached=cached)
    model.input_checks = bool(specs)  # labels alone: no gate, nothing to check
    model.labels_file = export_target(manifest, qrels_path, inputs)
    if skey is not None and not model.derived_from_cache:  # (scored afresh, labels changed, an older entry)
        later.append(_scores_to_save(skey, book, model))  # written after the first frame
    book.judged_today()  # the reviewer's judgments of today, counted here rather than at the first frame
    later.extend(_import_fold(book))  # a first open's import, folded into the snapshot after the first frame
    progress("deciding the gate", steps, steps)
    model.gate(fresh=True)  # significance tests, if the policy has any, are paid here, not on screen
    progress("ready", steps, steps)
    corpus = Path(inputs.corpus) if inputs.corpus else manifest.corpus if manifest else None
    return Loaded(model, manifest, book.reviewer, corpus, hits, problems=problems,
                  corpus_missing=corpus_missing(manifest), wanted_docs=CatalogDocs(catalog.docs),
                  unread_pair=unread_pair(policy.baseline, policy.candidate, order, left_out)
                  or one_run_pair(model.baseline, model.candidate, policy, len(runs)), later=later)


class CatalogDocs:
    """The documents of the review's catalog, as the corpus reader asks (`in`, iteration) from its thread after
    the first frame: a set of the names made there on first use, and the names added since looked at apart
    (the catalog's own dictionary was made for this before the first frame: 200,000 documents, 0.05 s; made
    by another thread, it could lose a name the app adds meanwhile)."""

    def __init__(self, interner) -> None:
        self._names = interner.names  # (only ever appended to)
        self._seen: set[str] | None = None
        self._n = 0

    def __contains__(self, doc) -> bool:
        if self._seen is None:
            self._n = len(self._names)
            self._seen = set(self._names[:self._n])
        return doc in self._seen or (len(self._names) > self._n and doc in self._names[self._n:])

    def __iter__(self):
        return iter(self._names[:])

    def __len__(self) -> int:
        return len(self._names)


def _raise_first_refusal(refused: list[tuple[str, BaseException]]) -> None:
    """No run could be read: the first refusal is the error (its own when it is the only one)."""
    path, e = refused[0]
    more = f" (and {len(refused) - 1} more run files refused)" if len(refused) > 1 else ""
    if isinstance(e, InputError) and not more:
        raise e
    raise InputError(path, f"{getattr(e, 'what', None) or getattr(e, 'strerror', None) or e}{more}",
                     getattr(e, "line", None), getattr(e, "where", None))


def _queries_of(inputs: Inputs, manifest, store_queries, problems: list[str]) -> dict[str, Query]:
    """The queries: the store's, then --queries (its texts win; a bad file stops the review), else the
    benchmark's queries file (a bad one is left out and named)."""
    queries: dict[str, Query] = dict(store_queries or {})
    if inputs.queries:  # named on the command line: its texts win, and a bad file stops the review
        queries.update(read_queries(inputs.queries))
    elif not queries and manifest and manifest.queries:
        try:
            queries = read_queries(manifest.queries)
        except (InputError, OSError) as e:
            problems.append(f"query texts left out: {_describe(e, manifest.queries)}")
    return queries


def _policy_of(inputs: Inputs, manifest, qrels_path, bundle: Bundle, problems: list[str], plain):
    """The gate's policy; a benchmark's bad policy is named and the defaults used, on `plain()` (the bundle
    without its manifest); bad flags stop the review."""
    overrides = inputs.overrides()
    if overrides["rel_level"] is None and manifest is None and is_irds(qrels_path):
        from rankgate.core.formats.irds import rel_level

        overrides["rel_level"] = rel_level(qrels_path)  # the dataset's official measures', if any
    try:
        return resolve(overrides, bundle)
    except InputError as e:
        if inputs.policy or inputs.measures:  # the flags' own mistake: say so and stop
            raise
        problems.append(f"policy not applied, the gate uses the defaults: {e}")
        return resolve(overrides, plain())


def _import_fold(book) -> list[Callable[[], None]]:
    """The fold of a first open's import the store left in its journal (store/workspace.py fold_import), if any."""
    fold = getattr(book.backend, "fold_import", None)
    if fold is not None and getattr(getattr(book.backend, "ws", None), "fold_later", None) is not None:
        return [fold]
    return []


def _scores_to_save(skey, book, model: ReviewModel) -> Callable[[], None]:
    """Writing the evaluated queries' scores, for the next open (tui/scorecache.py), as they are now: the
    values are copied here (a grade key changes them in place), the labels are those of the open."""
    done = np.flatnonzero(model.evaluated)
    qids = [model.qids[i] for i in done.tolist()]
    values = {r: {m: v[done] for m, v in per.items()} for r, per in model.values.items()}  # (copies)
    derived = scorecache.derived_of(model)  # (copies: an edit changes the counts in place)
    qrels = book.qrels  # (the labels at open, never changed: edits go to the book's backend)
    return lambda: scorecache.save(skey, qrels, qids, values, derived=derived)


def export_target(manifest: Manifest | None, qrels_path: str | None, inputs: Inputs) -> str:
    """The labels' file as `rankgate gate` would read it: the folder's qrels, the qrels file, else (labelling
    from scratch) the workspace's export."""
    if manifest is not None:
        return str(manifest.qrels)
    return str(qrels_path or "the labels")


def one_run_pair(baseline: str | None, candidate: str | None, policy, n_runs: int) -> dict:
    """One run in both roles (a folder with one run): with rules that compare the two there is no decision,
    as `rankgate gate` refuses it; {"candidate": why}, cleared when `c` picks another run."""
    rules = policy.comparing_rules()
    if not baseline or baseline != candidate or not rules:
        return {}
    todo = "c picks another run" if n_runs > 1 else "add the run to compare to benchmark.toml's runs"
    return {"candidate": f"is {baseline}, the baseline too: {', '.join(rules)} would compare it with itself "
                         f"({todo})"}


def unread_pair(baseline: str | None, candidate: str | None, order: list[str], left_out: dict[str, str]) -> dict:
    """The gate's runs that could not be read, by role: {"candidate": "full-dup left out (FILE:LINE)"}.
    The pair is the policy's, else the first two runs given (read or not), as `rankgate gate` takes them;
    while one of them is unread the app shows no decision (the model gates what it could read)."""
    names = {"baseline": baseline or (order[0] if order else None),
             "candidate": candidate or (order[1] if len(order) > 1 else None)}
    return {role: f"{name} left out ({left_out[name]})" for role, name in names.items() if name in left_out}


def app_permissions(manifest: Manifest | None, runs: dict, problems: list[str]):
    """With an ACL in the manifest: each run's permission leaks (they do not depend on the labels, so they are
    found once), for the live gate's `no_permission_leaks` check, and the access rules the model scores by
    (what each query's user may see, core/acl.py). A bad ACL is named and the review goes on without them;
    `rankgate gate` refuses it with file:line."""
    if manifest is None or not manifest.acl:
        return None
    from rankgate.core.acl import Permissions, leaks, load_access

    try:
        access = load_access(manifest, None, str(manifest.queries) if manifest.queries else None,
                             str(manifest.corpus) if manifest.corpus else None)
        if access is None:
            return None
        return Permissions(access, {name: leaks(access, run) for name, run in runs.items()}, {}, {}, [])
    except (InputError, OSError) as e:
        problems.append(f"permissions not checked: {_describe(e, str(manifest.acl))}")
        return None


def corpus_missing(manifest: Manifest | None) -> str:
    """What the document pane says when no corpus is given, in the words of the mode: a benchmark
    folder's manifest, or the command line."""
    if manifest is not None:
        return (f"this benchmark has no corpus: add corpus = \"FILE\" to {manifest.path.name} "
                "or pass --corpus FILE")
    return "no corpus given: --corpus FILE"


def _describe(e: BaseException, path) -> str:
    """One line naming the file (InputError names it and the line already)."""
    if isinstance(e, InputError):
        return str(e)
    return f"{path}: {getattr(e, 'strerror', None) or e}"


def open_labels(inputs: Inputs, manifest: Manifest | None, qrels_path: str | None, catalog: Catalog,
                reviewer: str | None) -> tuple[LabelBook, dict[str, Query] | None]:
    """The label store for this benchmark, as a LabelBook in the app's catalog."""
    cv = manifest.collection_version if manifest else ""
    if not inputs.memory:
        from rankgate.tui.store_backend import StoreBackend

        backend = StoreBackend.open(inputs, manifest, qrels_path, reviewer, cv)
        try:
            qrels = store_qrels(backend.ws, catalog)  # (as the last open made them, while the store is unchanged)
            return LabelBook(backend, qrels), backend.queries()
        except BaseException:
            backend.close()
            raise
    if not qrels_path:
        raise InputError("review", "no qrels to open")
    qrels = read_qrels(qrels_path, "auto", catalog)
    return LabelBook(MemoryBackend(qrels, cv, reviewer or default_reviewer()), qrels), None


def load_corpus(path: str | Path | None, wanted=None, progress=None) -> dict[str, Document]:
    """The documents of the corpus file (with `wanted`, only those: a large corpus is read past), read as
    `load` reads the rest: the collector paused meanwhile and what was read frozen out of its view. Left in
    view, 10k queries' 66,000 documents made each full collection (several a minute while grading) cost
    100-300 ms, on whatever key press it fell."""
    if not path:
        return {}
    enabled = gc.isenabled()
    gc.disable()
    try:
        return read_corpus(path, wanted, progress)
    finally:
        freeze()
        if enabled:
            gc.enable()
