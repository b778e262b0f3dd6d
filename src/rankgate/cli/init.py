"""`rankgate init DIR --qrels ... --runs ... [--queries ...] [--corpus ...] [--copy]`: a benchmark folder from files.

Every file is read first (a bad one stops with one line, and nothing is written); then DIR gets a
`benchmark.toml` naming the files by paths relative to it (or, with --copy, copies of them), and
what was found is printed: queries, judgments, runs, and how many documents have a text.
An existing benchmark.toml is never overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from rankgate.cli.base import EXIT_OK, say
from rankgate.core.benchmark import MANIFEST
from rankgate.core.errors import InputError
from rankgate.core.formats import split_run_spec


def register(sub) -> None:
    p = sub.add_parser("init", help="make a benchmark folder (benchmark.toml) from qrels, runs, queries and a corpus")
    p.add_argument("folder", metavar="DIR", help="the benchmark folder to make (created when absent)")
    p.add_argument("--qrels", required=True, help="qrels file: TREC, JSON, JSONL judgments or BEIR TSV (.gz ok)")
    p.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE", required=True,
                   help="run file (repeatable): TREC, the release-gate JSON, or JSONL")
    p.add_argument("--queries", metavar="FILE", help="query texts: JSONL, id<TAB>text, TREC topics, BEIR (.gz ok)")
    p.add_argument("--corpus", metavar="FILE", help="document texts: JSONL, TSV, TREC <DOC>, BEIR (.gz ok)")
    p.add_argument("--name", help="the benchmark's name (default: the folder's name)")
    p.add_argument("--k", type=int, default=10, help="the cutoff k the gate judges at (default 10)")
    p.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (default 1)")
    p.add_argument("--copy", action="store_true", help="copy the files into DIR instead of pointing at them")
    p.set_defaults(func=cmd_init)


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string


def cmd_init(args) -> int:
    from rankgate.core.bundle import load_bundle
    from rankgate.core.formats.corpus import read_corpus

    folder = Path(args.folder)
    manifest = folder / MANIFEST
    if manifest.exists():
        raise InputError(str(manifest), "already exists; rankgate init never overwrites it (edit it, or choose "
                         "another folder)")
    if folder.exists() and not folder.is_dir():
        raise InputError(str(folder), "is a file, expected a folder")
    if args.k < 1:
        raise InputError("--k", "k must be at least 1")
    for what, path in (("queries", args.queries), ("corpus", args.corpus)):
        if path and not os.path.isfile(path) and not path.startswith("irds:"):
            raise InputError(path, f"no such file (expected a {what} file)")

    # Read everything first: a bad file stops here, before anything is written.
    bundle = load_bundle(args.qrels, args.runs, queries=args.queries)
    qrels = bundle.qrels
    names = qrels.catalog.docs.names
    judged = {names[c] for c in set(qrels.doc.tolist())}
    top = _top_k_docs(bundle, args.k)
    texts = read_corpus(args.corpus, judged | top) if args.corpus else None

    files = _place(folder, args, list(bundle.runs)) if args.copy else None
    folder.mkdir(parents=True, exist_ok=True)
    rel = (lambda p: files[p]) if files else (lambda p: _relative(p, folder))
    run_names = list(bundle.runs)
    lines = [f"name = {_toml_str(args.name or folder.resolve().name)}", f"k = {args.k}",
             f"qrels = {_toml_str(rel(args.qrels))}"]
    if args.queries:
        lines.append(f"queries = {_toml_str(rel(args.queries))}")
    if args.corpus:
        lines.append(f"corpus = {_toml_str(rel(args.corpus))}")
    specs = []
    for spec in args.runs:
        name, path = split_run_spec(spec)
        specs.append(_toml_str(f"{name}={rel(path)}" if name else rel(path)))
    lines.append(f"runs = [{', '.join(specs)}]")
    if args.rel_level is not None:
        lines.append(f"rel_level = {args.rel_level}")
    if len(run_names) >= 2:
        lines += ["", "[gate]  # the run in production and the run to release: edit to taste",
                  f"baseline = {_toml_str(run_names[0])}", f"candidate = {_toml_str(run_names[1])}"]
    tmp = manifest.with_name(MANIFEST + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        os.link(tmp, manifest)  # fails when a benchmark.toml appeared meanwhile: never overwritten
    except FileExistsError:
        raise InputError(str(manifest), "already exists; rankgate init never overwrites it") from None
    except OSError:
        os.replace(tmp, manifest)
    finally:
        tmp.unlink(missing_ok=True)

    _report(folder, manifest, bundle, judged, top, texts, args)
    return EXIT_OK


def _relative(path: str, folder: Path) -> str:
    if path.startswith("irds:"):
        return path
    try:
        return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(folder))).as_posix()
    except ValueError:  # another drive (Windows): the absolute path, then
        return Path(os.path.abspath(path)).as_posix()


def _place(folder: Path, args, run_names: list[str]) -> dict[str, str]:
    """Copy every file into the folder (runs into runs/); their paths relative to it, by source path."""
    placed: dict[str, str] = {}
    taken: dict[str, str] = {}

    def put(src: str, where: str) -> None:
        if src.startswith("irds:"):  # an ir_datasets name: nothing to copy
            placed[src] = src
            return
        dest = f"{where}{Path(src).name}"
        if dest in taken and taken[dest] != os.path.abspath(src):
            raise InputError(src, f"a second file named {Path(src).name!r} (first {taken[dest]}); rename one")
        taken[dest] = os.path.abspath(src)
        placed[src] = dest

    put(args.qrels, "")
    for p in (args.queries, args.corpus):
        if p:
            put(p, "")
    for spec in args.runs:
        put(split_run_spec(spec)[1], "runs/")
    for src, dest in placed.items():
        if src.startswith("irds:"):
            continue
        target = folder / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or not os.path.samefile(src, target):
            shutil.copyfile(src, target)
    return placed


def _top_k_docs(bundle, k: int) -> set[str]:
    """The documents some run ranks in its top k (what a review shows first)."""
    import numpy as np

    from rankgate.core.model import sort_run

    out: set[str] = set()
    for run in bundle.runs.values():
        if not len(run):
            continue
        qs, docs, _ = sort_run(run)
        start = np.r_[0, np.flatnonzero(qs[1:] != qs[:-1]) + 1]
        rank = np.arange(len(qs)) - np.repeat(start, np.diff(np.r_[start, len(qs)]))
        names = run.catalog.docs.names
        out.update(names[c] for c in docs[rank < k].tolist())
    return out


def _report(folder, manifest, bundle, judged, top, texts, args) -> None:
    qrels = bundle.qrels
    grades = sorted(set(qrels.grade.tolist()))
    say(f"wrote {manifest}" + (" (files copied)" if args.copy else ""))
    judged_q = len(qrels.query_ids)
    if bundle.queries:
        with_text = sum(1 for q in qrels.query_ids if q in bundle.queries and bundle.queries[q].text)
        say(f"queries: {len(bundle.queries)} in {args.queries}; texts for {with_text} of the {judged_q} judged")
    else:
        say(f"queries: {judged_q} judged, no texts (--queries FILE to add them)")
    say(f"judged: {len(qrels)} judgments of {len(judged)} documents for {judged_q} queries, grades "
        f"{', '.join(map(str, grades))}")
    import numpy as np

    for name, run in bundle.runs.items():
        say(f"run: {name}: {len(run.query_codes)} queries, {len(run.q)} ranked documents")
        counts = np.bincount(run.q, minlength=max(run.query_codes, default=-1) + 1)[run.query_codes]
        short = int((counts < args.k).sum())
        if short:
            say(f"note: run {name} ranks fewer than k={args.k} documents for {short} of {len(counts)} queries "
                "(the gate refuses short rankings: a smaller --k, or short_rankings = \"allow\" in a policy)")
    if texts is None:
        say("texts: no corpus (--corpus FILE to see documents in the review)")
    else:
        t_judged = sum(1 for d in judged if d in texts)
        t_top = sum(1 for d in top if d in texts)
        say(f"texts: found for {t_judged} of {len(judged)} judged documents and {t_top} of {len(top)} documents "
            f"in the runs' top {args.k}")
    say(f"open it: rankgate review {folder}   ·   rankgate gate {folder}")
