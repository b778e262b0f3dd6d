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

from rankgate.cli.base import EXIT_OK, counted, say, shell
from rankgate.core.benchmark import MANIFEST
from rankgate.core.errors import InputError
from rankgate.core.outfile import new_temp, no_write_bit_folder


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
    from rankgate.core.formats import split_run_spec
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
    from rankgate.core.benchmark import MAX_K
    from rankgate.core.model import grade_problem

    if args.k > MAX_K:  # what the benchmark's own reader refuses is never written
        raise InputError("--k", f"k must be at most {MAX_K}")
    if args.rel_level is not None and (why := grade_problem(args.rel_level)) is not None:
        raise InputError("--rel-level", why)
    for what, path in (("queries", args.queries), ("corpus", args.corpus)):
        if path and not os.path.isfile(path) and not path.startswith("irds:"):
            raise InputError(path, f"no such file (expected a {what} file)")

    # Read everything first: a bad file stops here, before anything is written.
    bundle = load_bundle(args.qrels, args.runs, queries=args.queries)
    from rankgate.core.validate import refuse_duplicates

    for run in bundle.runs.values():  # as `gate` and `validate` refuse it: one line, nothing written
        refuse_duplicates(run)
    qrels = bundle.qrels
    names = qrels.catalog.docs.names
    judged = {names[c] for c in set(qrels.doc.tolist())}
    top = _top_k_docs(bundle, args.k)
    texts = read_corpus(args.corpus, judged | top) if args.corpus else None

    files = _plan_copies(folder, args) if args.copy else None
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
    _write_folder(folder, manifest, files or {}, "\n".join(lines) + "\n")

    _report(folder, manifest, bundle, judged, top, texts, args)
    return EXIT_OK


def _relative(path: str, folder: Path) -> str:
    """How benchmark.toml names an input: relative to the folder when the two share a folder below the root
    (a checkout's `../data/qrels.txt` moves with the checkout), else absolute (`/work/shared/...` from a folder
    under /tmp: `../../../../work/...` would break when the folder moves)."""
    if path.startswith("irds:"):
        return path
    target, base = os.path.abspath(path), os.path.abspath(folder)
    try:
        common = os.path.commonpath([target, base])
    except ValueError:  # another drive (Windows): the absolute path, then
        return Path(target).as_posix()
    if os.path.dirname(common) == common:  # only the root (or a drive) in common
        return Path(target).as_posix()
    return Path(os.path.relpath(target, base)).as_posix()


def _plan_copies(folder: Path, args) -> dict[str, str]:
    """Where --copy puts every file (runs into runs/), relative to the folder, by source path.

    Nothing is written here; a target that already exists (and is not the source itself) stops
    with one line, so nothing in the folder is ever overwritten."""
    from rankgate.core.formats import split_run_spec

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
    runs_dir = folder / "runs"
    if any(d.startswith("runs/") for d in taken) and (runs_dir.exists() or runs_dir.is_symlink()) \
            and not runs_dir.is_dir():
        raise InputError(str(runs_dir), "already exists and is not a folder; rankgate init --copy puts the runs "
                         "there (move it, or choose another folder)")
    for dest, src in taken.items():
        target = folder / dest
        if not (target.exists() or target.is_symlink()):
            continue
        try:
            same = os.path.samefile(src, target)
        except OSError:
            same = False
        if not same:
            raise InputError(str(target), "already exists; rankgate init --copy never overwrites a file (remove "
                             "it, or choose another folder)")
    return placed


def _writable(d: Path) -> None:
    """A folder with no write bit (a read-only shared reference set) is not written, even by root."""
    if no_write_bit_folder(d):
        raise InputError(os.path.abspath(d), "cannot write the benchmark folder here: this folder has no write "
                         "permission (read-only); nothing was written (give a folder elsewhere, e.g. in your home)")


def _write_folder(folder: Path, manifest: Path, files: dict[str, str], text: str) -> None:
    """Make the folder, copy the files in and write benchmark.toml: all of it, or nothing.

    Every copy goes to a temporary name first; only when all are written are they linked to their
    names (never over an existing file), benchmark.toml last. Any failure removes what was made and
    stops with one line."""
    made_dirs: list[Path] = []
    temps: list[Path] = []
    placed: list[Path] = []

    def mkdirs(d: Path) -> None:
        missing = []
        while not (d.exists() or d.is_symlink()):
            missing.append(d)
            if d.parent == d:
                break
            d = d.parent
        if missing:
            _writable(missing[-1].parent)
        for m in reversed(missing):
            m.mkdir()
            made_dirs.append(m)

    def temp_in(d: Path, name: str) -> Path:
        _writable(d)
        fd, tmp = new_temp(d, name)  # the umask's mode, as cp would give: teammates and CI read the folder
        os.close(fd)
        temps.append(tmp)
        return tmp

    def put(tmp: Path, target: Path) -> None:
        try:
            os.link(tmp, target)  # fails when the name appeared meanwhile: never overwritten
        except FileExistsError:
            raise InputError(str(target), "already exists; rankgate init never overwrites it") from None
        except OSError:  # no hard links here: check, then rename
            if target.exists() or target.is_symlink():
                raise InputError(str(target), "already exists; rankgate init never overwrites it") from None
            os.replace(tmp, target)
        placed.append(target)

    try:
        mkdirs(folder)
        pending: list[tuple[Path, Path]] = []
        seen: set[Path] = set()
        for src, dest in files.items():
            target = folder / dest
            if src.startswith("irds:") or target in seen:
                continue
            seen.add(target)
            if (target.exists() or target.is_symlink()) and os.path.samefile(src, target):
                continue  # already in the folder
            mkdirs(target.parent)
            tmp = temp_in(target.parent, target.name)
            shutil.copyfile(src, tmp)
            pending.append((tmp, target))
        tmp = temp_in(folder, MANIFEST)
        tmp.write_text(text, encoding="utf-8")
        pending.append((tmp, manifest))
        for tmp, target in pending:
            put(tmp, target)
    except BaseException as e:
        for p in placed:
            _quietly(p.unlink)
        for p in temps:
            _quietly(lambda: p.unlink(missing_ok=True))
        for d in reversed(made_dirs):
            _quietly(d.rmdir)
        if isinstance(e, OSError):
            where = e.filename or str(folder)
            raise InputError(str(where), f"cannot write the benchmark folder: {e.strerror or e}; nothing was "
                             "written") from None
        raise
    finally:
        for p in temps:
            _quietly(lambda: p.unlink(missing_ok=True))


def _quietly(fn) -> None:
    try:
        fn()
    except OSError:
        pass


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
        say(f"run {name!r}: {counted(len(run.query_codes), 'query', 'queries')}, "
            f"{counted(len(run.q), 'ranked document')}")
        counts = np.bincount(run.q, minlength=max(run.query_codes, default=-1) + 1)[run.query_codes]
        short = int((counts < args.k).sum())
        if short:
            say(f"note: run {name!r} ranks fewer than k={args.k} documents for {short} of {len(counts)} queries "
                "(the gate refuses short rankings: a smaller --k, or short_rankings = \"allow\" in a policy)")
    if texts is None:
        say("texts: no corpus (--corpus FILE to see documents in the review)")
    else:
        t_judged = sum(1 for d in judged if d in texts)
        t_top = sum(1 for d in top if d in texts)
        say(f"texts: found for {t_judged} of {len(judged)} judged documents and {t_top} of {len(top)} documents "
            f"in the runs' top {args.k}")
    if len(bundle.runs) >= 2:
        say(f"open it: rankgate review {shell(folder)}   ·   rankgate gate {shell(folder)}")
    else:  # the gate compares two runs
        say(f"open it: rankgate review {shell(folder)}   ·   rankgate score {shell(folder)} (the gate needs a "
            "second run)")
