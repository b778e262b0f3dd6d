"""`rankgate labels ...`: import, edit, freeze and export reviewed labels.

Every subcommand takes `--db FILE` (default: the `default` workspace in the data
folder) or `-b FOLDER` (a benchmark folder's own workspace, found by its name).
Reading commands open the workspace read-only, so they work while another
process (the review app) holds it for writing. `--json` prints machine-readable
output; otherwise one short line per item.

A subcommand is an `_add_<name>(cmds, common)` that defines its parser, the
handler beside it, and its place in SUBCOMMANDS at the end of this module.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from rankgate.cli.base import EXIT_OK, UsageError, counted, policy_overrides, say, say_json, shell, usage
from rankgate.cli.labels_open import (  # noqa: F401 (opening a workspace: cli/labels_open.py)
    _app_workspace_line, _bench_positional, _exists, _label_store, _note, _open, _qrels_file, _qrels_workspace, _refuse_qrels_file, _unmade_workspace,
)
from rankgate.cli.suggest import add_overlap, add_suggest, judge_agreement_lines, judge_agreement_of
from rankgate.core.errors import InputError
from rankgate.core.text import visible

DAMAGED_SHOWN = 20  # damaged stretches `labels recover` prints; --json gives every one


def register(sub) -> None:
    """`rankgate labels` and its subcommands, in the order of SUBCOMMANDS (at the end of this module)."""
    labels = sub.add_parser("labels", help="import, edit, freeze and export reviewed labels",
                            description="The label workspace: reviewed judgments with reasons, their history "
                            "and frozen versions.")
    labels.set_defaults(func=lambda args: usage(labels))
    cmds = labels.add_subparsers(dest="labels_command", metavar="SUBCOMMAND")
    common = _workspace_flags()
    for add in SUBCOMMANDS:
        add(cmds, common)
    for name, p in cmds.choices.items():
        if (func := p.get_default("func")) is not None:
            p.set_defaults(func=_in_user_words(name, func))
    parse = labels.parse_known_args

    def flags_after_the_subcommand(args=None, namespace=None):
        _refuse_flags_first(list(args or []), common, cmds.choices)
        return parse(args, namespace)

    labels.parse_known_args = flags_after_the_subcommand


def _refuse_flags_first(words: list[str], common, subcommands) -> None:
    """`rankgate labels --db work.json status`: argparse called work.json an invalid subcommand. The workspace
    flags go after the subcommand: say so, with the command line in that order."""
    if not words or words[0] not in common._option_string_actions:
        return
    takes_value = {o for o, a in common._option_string_actions.items() if a.nargs != 0}
    flags, i = [], 0
    while i < len(words) and words[i] in common._option_string_actions:
        flags += words[i:i + 2] if words[i] in takes_value else words[i:i + 1]
        i += 2 if words[i] in takes_value else 1
    import shlex

    if i < len(words) and words[i] in subcommands:
        fixed = shlex.join(["rankgate", "labels", words[i], *flags, *words[i + 1:]])
        raise UsageError(f"rankgate labels: {words[0]} goes after the subcommand: {fixed}")
    raise UsageError(f"rankgate labels: name the subcommand first, then {words[0]}: "
                     f"{shlex.join(['rankgate', 'labels', 'SUBCOMMAND', *flags])} (rankgate labels --help lists them)")


# The store's errors name the workspace file they concern; those below are about the file itself and keep it.
ABOUT_THE_FILE = ("opened read-only", "the workspace is closed", "no label store here", "edits are refused")


def _in_user_words(name: str, func):
    """A subcommand run with -b FOLDER (no --db): an error about what the user typed (an ID, a grade, a
    version name, a missing judgment) names the command, not the workspace file in the data folder the user
    never named (`error: labels set: a new label needs --reason ...`). Errors about the file itself keep it."""
    def run(args):
        try:
            return func(args)
        except InputError as e:
            internal = getattr(args, "workspace_path", None)
            if (type(e) is InputError and getattr(args, "benchmark", None) and not getattr(args, "db", None)
                    and internal and e.path == internal
                    and not e.what.startswith(ABOUT_THE_FILE)):
                raise InputError(f"labels {name}", e.what, e.line, e.where) from None
            raise

    return run


def _workspace_flags() -> argparse.ArgumentParser:
    """The flags every subcommand that opens a workspace takes (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("workspace")
    where.add_argument("--db", metavar="FILE", help="the workspace file (default: the default workspace in "
                       "the user's data folder, or $RANKGATE_HOME); FILE.journal, FILE.history and FILE.lock "
                       "beside it belong to it: a backup copies them all (or use `labels export`)")
    where.add_argument("-b", "--benchmark", metavar="FOLDER", help="a benchmark folder: open its workspace by "
                       "name (the first open imports its qrels)")
    where.add_argument("--reviewer", help="your name in the history (default: $RANKGATE_REVIEWER, git's "
                       "user.name, or the login name)")
    common.add_argument("--json", action="store_true", help="machine-readable output")
    return common


# --------------------------------------------------------------------------- opening


def _print_json(obj) -> None:
    say_json(obj, indent=2)


def _print_conflicts(conflicts, limit: int = 200) -> None:
    for c in conflicts[:limit]:
        say(f"conflict: {c}", err=True)
    if len(conflicts) > limit:
        say(f"conflict: ... and {len(conflicts) - limit} more", err=True)


def _report_notes_or_json(args, report) -> bool:
    """Print the report's notes; with --json, print the report and say so."""
    for n in report.notes:
        _note(n)
    if args.json:
        _print_json(report.as_dict())
        return True
    return False


def _saved(ws) -> None:
    """After a write: the edit is durable; say so if folding it into the snapshot failed."""
    if ws.fold_problem:
        _note(f"the edit is saved in the journal, but folding it into the snapshot failed: {ws.fold_problem}")


# --------------------------------------------------------------------------- handlers


def _add_import(cmds, common) -> None:
    p = cmds.add_parser("import", parents=[common], help="import qrels and query files (all or nothing)")
    p.add_argument("files", nargs="*", metavar="FILE", help="qrels (TREC, BEIR, release-gate/graded JSON, JSONL, gz) "
                   "or query files (JSONL with id/text, qid<TAB>text)")
    p.add_argument("--queries", action="append", default=[], metavar="FILE", help="read FILE as queries")
    p.add_argument("--on-conflict", choices=("stop", "keep", "overwrite"), default="stop",
                   help="when a label exists with another grade or reason: stop and list (default), keep the "
                   "store's, or overwrite with the file's")
    p.add_argument("--collection-version", metavar="V", help="the collection version the labels were judged on "
                   "(default: the file's header, if any)")
    p.add_argument("--why", help="why, for the history (default: 'import FILE')")
    p.add_argument("--dry-run", action="store_true", help="report what would change; change nothing")
    p.add_argument("--corpus", metavar="FILE", help="the document texts the labels were judged on: each label "
                   "records a hash of its text, so a later corpus that changes it shows the label stale")
    p.set_defaults(func=_import)


def _import(args) -> int:
    from rankgate.store import ImportConflicts

    if not args.files and not args.queries and not args.benchmark:
        raise InputError("labels import", "nothing to import: name qrels or query files (or -b FOLDER)")
    def first_texts(qrels):  # `import -b FOLDER`: its labels record their texts in its corpus (or --corpus)
        return _texts_of(args, {qrels.catalog.docs.names[c] for c in set(qrels.doc.tolist())}, manifest)

    manifest = _manifest_of(args)
    try:
        with _open(args, readonly=False, on_conflict=args.on_conflict, texts=first_texts) as ws:
            if not args.files and not args.queries and ws.benchmark_import is not None:
                report = ws.benchmark_import  # `import -b FOLDER`: the folder's own labels, just now
            else:
                texts = _texts_of(args, _file_docs(args.files), ws) if _corpus_path(args, ws) else None
                report = ws.import_files(args.files, queries=args.queries, on_conflict=args.on_conflict,
                                         collection_version=args.collection_version, why=args.why,
                                         dry_run=args.dry_run, texts=texts)
            path = ws.path
            off = _off_scale_labels(args, ws)
        _saved(ws)
    except ImportConflicts as e:
        _print_conflicts(e.conflicts)
        raise
    if off:
        _note(off)
    if _report_notes_or_json(args, report):
        return EXIT_OK
    verb = "would import" if args.dry_run else "imported"
    say(f"{verb} into {path}: {report.added} new judgments, {report.changed} changed, {report.unchanged} "
          f"unchanged, {report.kept} kept as stored; {report.queries_added} new queries, "
          f"{report.queries_updated} updated")
    return EXIT_OK


def _off_scale_labels(args, ws, show: int = 3) -> str:
    """After an import into a benchmark that declares its scale: which labels have a grade off it (a note,
    not a refusal: a qrels from elsewhere may use another scale; the user decides to widen [grades] or
    regrade). Empty when none, or when the benchmark declares no scale."""
    from rankgate.store.labels import declared_scale

    scale = declared_scale(ws.manifest, _bench_name(args))
    if not scale:
        return ""
    off = [(q.id, d, g) for q in ws.queries() for d, g in ws.grades(q.id).items() if g not in ws.manifest.grades]
    if not off:
        return ""
    shown = ", ".join(f"{visible(q)} {visible(d)} {g}" for q, d, g in off[:show])
    more = f" and {len(off) - show} more" if len(off) > show else ""
    return (f"{counted(len(off), 'label')} with a grade off {scale}: {shown}{more}; they count in the gate as "
            "they are: add their grades to [grades] or regrade them with `rankgate labels set`")


def _bench_name(args) -> str:
    """The benchmark folder as the user named it, for messages."""
    return visible(os.path.normpath(args.benchmark or "."))


def _corpus_path(args, ws=None) -> str | None:
    """--corpus, else the benchmark's corpus (benchmark.toml), else None (`ws`: a workspace or a Manifest)."""
    if getattr(args, "corpus", None):
        return args.corpus
    manifest = getattr(ws, "manifest", ws)
    return str(manifest.corpus) if getattr(manifest, "corpus", None) else None


def _manifest_of(args):
    """The benchmark folder's manifest when -b names one, else None."""
    if not args.benchmark:
        return None
    from rankgate.core.benchmark import load_manifest

    _refuse_qrels_file(args.benchmark, getattr(args, "labels_command", None))
    return load_manifest(args.benchmark)


def _texts_of(args, docs, ws=None) -> dict[str, str]:
    """{doc: text hash} of `docs` in the corpus (core/staleness.py)."""
    from rankgate.core.formats.corpus import read_corpus
    from rankgate.core.staleness import corpus_hashes

    path = _corpus_path(args, ws)
    return corpus_hashes(read_corpus(path, set(docs))) if path else {}


def _file_docs(files) -> set[str]:
    """The documents the qrels files judge (to read only their texts from a corpus)."""
    from rankgate.store.transfer.imports import read_labels_or_queries

    docs: set[str] = set()
    for f in files:
        kind, read = read_labels_or_queries(str(f))
        if kind == "qrels":
            docs.update(d for _, d, _, _ in read.judgments())
    return docs


class _Manifested:
    """A stand-in for a workspace where only its manifest is asked for (the queue reads no workspace)."""

    def __init__(self, manifest) -> None:
        self.manifest = manifest


def _stale_of(args, ws, recorded: list, required: bool = True):
    """The stale labels among `recorded` (query, doc, hash) against the corpus; None when there is no corpus
    and it is not `required` (a command asked for stale labels without one refuses)."""
    from rankgate.core.staleness import stale_labels

    path = _corpus_path(args, ws)
    if path is None:
        if required:
            raise InputError("labels", "stale labels need the current texts: name --corpus FILE")
        return None
    wanted = {d for _, d, h in recorded if h}
    if not wanted:  # nothing to read from it; a corpus that is missing, a pipe or a folder is still named
        from rankgate.core.infile import open_regular

        open_regular(path).close()
    return stale_labels(recorded, _texts_of(args, wanted, ws) if wanted else {}, corpus=path)


def stale_line(stale) -> str:
    """`stale labels: 1 of 9260 checked (judged on a text CORPUS has changed since); 0 judged without a text`."""
    return (f"stale labels: {len(stale)} of {stale.checked} checked (judged on a text {visible(stale.corpus)} has "
            f"changed since); {stale.unknown} judged without a known text")


def _add_set(cmds, common) -> None:
    p = cmds.add_parser("set", parents=[common], help="set a grade (new label, regrade, or a new reason)")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("grade", help="an integer; negative allowed")
    p.add_argument("--reason", help="why the document has this grade (needed for a new label)")
    p.add_argument("--collection-version", metavar="V", help="the collection version you inspected")
    p.add_argument("--why", default="", help="why the change, for the history")
    p.add_argument("--add-query", action="store_true", help="add the query if the workspace does not know it")
    p.add_argument("--corpus", metavar="FILE", help="the corpus holding the text you judged: the label records "
                   "a hash of it (stale labels)")
    p.add_argument("--correct", action="store_true", help="the other reviewers' judgments of the pair (an imported "
                   "file's, say) were wrong: yours replaces them (history keeps theirs; no disagreement is "
                   "counted). Without it, yours goes beside theirs: a disagreement until adjudicated")
    p.set_defaults(func=_set)


def _check_scale(args, ws, command: str) -> None:
    """A grade off the scale the benchmark declares is refused before anything is stored."""
    from rankgate.store.labels import off_scale
    from rankgate.store.records import check_grade

    grade = check_grade(args.grade, command)
    if (why := off_scale(grade, ws.manifest, _bench_name(args))) is not None:
        raise InputError(command, why)


def _grade_of(args) -> int:
    from rankgate.store.records import check_grade

    return check_grade(args.grade, "labels set")


def _set(args) -> int:
    with _open(args, readonly=False) as ws:
        _check_scale(args, ws, "labels set")
        if args.reason is None and ws.judgment(args.query, args.doc, for_reviewer=ws.reviewer, blind=True) is None:
            label = None if ws.blind else ws.judgment(args.query, args.doc)
            how = "replaces theirs (--correct)" if args.correct else "goes beside theirs (--correct replaces theirs)"
            whose = f"; the pair is judged by {', '.join(label.reviewers or (label.reviewer,))}, and your " \
                f"judgment {how}" if label is not None else ""
            raise InputError("labels set", f"a new label needs --reason (why is {args.doc!r} graded {args.grade} "
                             f"for {args.query!r}?){whose}")
        texts = _texts_of(args, {args.doc}, ws) if args.corpus else {}
        if args.corpus and args.doc not in texts:
            raise InputError(args.corpus, f"no document {args.doc!r} in this corpus (expected the text you judged)")
        event = ws.set_judgment(args.query, args.doc, args.grade, reason=args.reason,
                                collection_version=args.collection_version, why=args.why,
                                create_query=args.add_query, text_hash=texts.get(args.doc),
                                corrects=args.correct)
        beside = [] if args.correct or ws.blind or event is None else \
            [r for r in ws.reviews(args.query, args.doc) if r.reviewer != ws.reviewer and r.grade != _grade_of(args)]
    _saved(ws)
    if beside and not args.json:  # a disagreement now: say so, and how to say theirs was wrong instead
        from rankgate.store.records import credit

        _note(f"{args.query} {args.doc}: your grade goes beside {', '.join(credit(r.reviewer) for r in beside)}'s "
              f"(a disagreement, to adjudicate); if theirs was wrong, `rankgate labels set ... --correct` replaces it")
    if args.json:
        _print_json(event.as_dict() if event else None)
    elif event is None:
        say(f"{args.query} {args.doc}: unchanged")
    else:
        before = event.before["grade"] if event.before else "-"
        say(f"{args.query} {args.doc}: {before} -> {event.after['grade']} ({event.kind}, event #{event.id})")
    return EXIT_OK


def _add_remove(cmds, common) -> None:
    p = cmds.add_parser("remove", parents=[common], help="remove your judgment of a pair (history keeps it)")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("--why", default="", help="why, for the history")
    p.add_argument("--of-reviewer", metavar="NAME", help="remove NAME's judgment instead of yours, explicitly "
                   "(an imported file's: file:NAME). Without it, other reviewers' judgments are never touched")
    p.set_defaults(func=_remove)


def _remove(args) -> int:
    with _open(args, readonly=False) as ws:
        event = ws.remove_judgment(args.query, args.doc, why=args.why, of_reviewer=args.of_reviewer)
    _saved(ws)
    if args.json:
        _print_json(event.as_dict())
    else:
        whose = f"{args.of_reviewer}'s judgment " if args.of_reviewer else "your judgment "
        say(f"{args.query} {args.doc}: {whose}removed (was {event.before['grade']}; event #{event.id})")
    return EXIT_OK


def _add_list(cmds, common) -> None:
    p = cmds.add_parser("list", parents=[common], help="the standing judgments")
    p.add_argument("query", nargs="?")
    p.add_argument("doc", nargs="?")
    p.add_argument("--removed", action="store_true", help="include removed labels")
    p.add_argument("--by-reviewer", action="store_true", help="every reviewer's own judgment (default: one label "
                   "a pair, saying how it was reached)")
    p.add_argument("--blind", action="store_true", help="blind review: your own judgments only (--reviewer)")
    p.add_argument("--unsure", action="store_true", help="only labels marked unsure (`rankgate labels unsure`)")
    p.add_argument("--stale", action="store_true", help="only stale labels: judged on a text the corpus "
                   "(--corpus, or the benchmark's) has changed since")
    p.add_argument("--corpus", metavar="FILE", help="the current document texts (default: the benchmark's corpus)")
    p.set_defaults(func=_list)


def _list(args) -> int:
    with _open(args, readonly=True, blind=args.blind) as ws:
        if args.by_reviewer:
            items = ws.reviews(args.query, args.doc, include_removed=args.removed)
        else:
            items = ws.judgments(args.query, include_removed=args.removed)
    if args.doc is not None:
        items = [j for j in items if j.doc == args.doc]
    if args.unsure:
        items = [j for j in items if j.unsure]
    if args.stale:
        stale = set(_stale_of(args, ws, [(j.query, j.doc, j.text_hash) for j in items]).pairs)
        items = [j for j in items if (j.query, j.doc) in stale]
    if args.json:
        for j in items:
            say_json(j.as_dict())
        return EXIT_OK
    for j in items:
        extra = f" {json.dumps(j.reason, ensure_ascii=False)}" if j.reason else ""
        gone = f" (removed {j.removed})" if j.removed else ""
        how = f" ({j.how()})" if j.reached and j.reached != "single" else ""
        flag = " [needs review]" if j.needs_review else ""
        flag += f" [unsure: {j.unsure}]" if j.unsure else ""
        say(f"{j.query} {j.doc} {j.grade}{extra} [{j.reviewer}, {j.updated}]{how}{flag}{gone}")
    return EXIT_OK


def _add_queries(cmds, common) -> None:
    p = cmds.add_parser("queries", parents=[common], help="the queries, with their judgment counts")
    p.set_defaults(func=_queries)


def _queries(args) -> int:
    with _open(args, readonly=True) as ws:
        rows = [(q, len(ws.grades(q.id))) for q in ws.queries()]
    if args.json:
        for q, n in rows:
            d = {"id": q.id, "text": q.text, "notes": q.notes, "tags": list(q.tags), "must_pass": q.must_pass,
                 "held_out": q.held_out, "weight": q.weight, "no_answer": q.no_answer, "judgments": n}
            say_json(d)
        return EXIT_OK
    for q, n in rows:
        flags = [f for f, on in (("must-pass", q.must_pass), ("held-out", q.held_out), ("no-answer", q.no_answer))
                 if on]
        if q.tags:
            flags.append("tags=" + ",".join(q.tags))
        text = f" {json.dumps(q.text, ensure_ascii=False)}" if q.text else ""
        say(f"{q.id} {counted(n, 'judgment')}{' ' + ' '.join(flags) if flags else ''}{text}")
    return EXIT_OK


def _add_history(cmds, common) -> None:
    p = cmds.add_parser("history", parents=[common], help="every change, oldest first")
    p.add_argument("query", nargs="?")
    p.add_argument("doc", nargs="?")
    p.add_argument("--limit", type=int, metavar="N", help="the newest N events only")
    p.set_defaults(func=_history)


def _history(args) -> int:
    with _open(args, readonly=True) as ws:
        events = ws.history(args.query, args.doc, limit=args.limit)
        if args.query and not events and ws.query(args.query) is None:  # as `labels set` says it
            raise ws.unknown_query(args.query, can_add=False)
    if not events and args.query and args.doc:  # a known query, a document never judged for it: say so
        say(f"no history: document '{visible(args.doc)}' was never judged for query '{visible(args.query)}'",
            err=True)
    for e in events:
        say_json(e.as_dict()) if args.json else say(e.describe())
    return EXIT_OK


def _add_freeze(cmds, common) -> None:
    p = cmds.add_parser("freeze", parents=[common], help="name the current labels as a version")
    p.add_argument("name")
    p.add_argument("--note", default="", help="what this version is")
    p.set_defaults(func=_freeze)


def _freeze(args) -> int:
    with _open(args, readonly=False) as ws:
        v = ws.freeze(args.name, note=args.note)
    _saved(ws)
    if args.json:
        _print_json(v.as_dict())
    else:
        say(f"froze {v.name}: {counted(v.labels, 'judgment')} over {counted(v.queries, 'query', 'queries')}, "
            f"{v.content_hash}")
    return EXIT_OK


def _add_versions(cmds, common) -> None:
    p = cmds.add_parser("versions", parents=[common], help="the frozen versions")
    p.set_defaults(func=_versions)


def _versions(args) -> int:
    with _open(args, readonly=True) as ws:
        versions = ws.versions()
    for v in versions:
        if args.json:
            say_json(v.as_dict())
        else:
            note = f" {json.dumps(v.note, ensure_ascii=False)}" if v.note else ""
            say(f"{v.name} {v.created} {v.who} {counted(v.labels, 'judgment')} {v.content_hash}{note}")
    return EXIT_OK


def _add_diff(cmds, common) -> None:
    p = cmds.add_parser("diff", parents=[common], help="the changelog between two versions")
    p.add_argument("old", metavar="V1")
    p.add_argument("new", metavar="V2", nargs="?", help="default: the current labels")
    p.set_defaults(func=_diff)


def _diff(args) -> int:
    with _open(args, readonly=True) as ws:
        diff = ws.diff(args.old, args.new)
    if args.json:
        _print_json(diff.as_dict())
        return EXIT_OK
    for a in diff.added:
        say(f"+ {a['query']} {a['doc']} {a['grade']}")
    for r in diff.removed:
        say(f"- {r['query']} {r['doc']} {r['grade']}")
    for c in diff.regraded:
        say(f"~ {c['query']} {c['doc']} {c['before']} -> {c['after']}")
    say(f"{diff.old} -> {diff.new}: {len(diff.added)} added, {len(diff.removed)} removed, "
          f"{len(diff.regraded)} regraded")
    return EXIT_OK


def _add_export(cmds, common) -> None:
    p = cmds.add_parser("export", parents=[common], help="write reviewed qrels that `rankgate gate` reads")
    _bench_arg(p)
    p.add_argument("--format", choices=("trec", "json", "json-graded", "jsonl"), default=None,
                   help="trec (default; -o FILE: from its name, .jsonl jsonl, .json json-graded; a benchmark's own "
                   "qrels file: its own format); json: binary, documents with grade >= 1; json-graded; jsonl: with "
                   "reasons, unsure notes and collection versions")
    p.add_argument("-o", "--output", metavar="FILE", help="write here, atomically (default: a benchmark's own qrels "
                   "file; else standard output; '-': standard output)")
    p.add_argument("--plain", action="store_true", help="no header: no `meta` in JSON and JSONL (TREC has none "
                   "unless --header)")
    p.add_argument("--header", action="store_true", help="TREC: start with `# version:`, `# content_hash:`, "
                   "`# exported_at:` lines (rankgate and `labels merge` read them; trec_eval and pytrec_eval do not)")
    p.add_argument("--version", dest="label_version", metavar="V", help="a frozen version (default: the current "
                   "labels)")
    p.add_argument("--require-adjudication", action="store_true", help="refuse while reviewers disagree about a "
                   "pair nobody adjudicated")
    p.add_argument("--judged-by", metavar="NAME", help="NAME's own judgments only (a reviewer's export, for "
                   "`labels merge`)")
    p.add_argument("--all-reviewers", action="store_true", help="jsonl: every reviewer's judgment and every "
                   "adjudication, one a line (for `labels merge`, not for the gate)")
    p.add_argument("--overwrite", action="store_true", help="a benchmark's qrels file: replace it even when it "
                   "holds changes the workspace has not seen (or no longer parses)")
    p.add_argument("--outside-folder", action="store_true", help="a benchmark's qrels file outside its folder "
                   "(`rankgate init` without --copy points at one): replace that file itself (by default refused; "
                   "-o FILE writes a copy)")
    p.add_argument("--force", action="store_true", help="-o FILE: replace FILE even when it holds no judgments "
                   "(by default an export replaces only an earlier export, qrels, or an empty file)")
    p.set_defaults(func=_export)


def _export(args) -> int:
    _bench_positional(args)
    if args.header and args.plain:
        raise InputError("labels export", "--header and --plain contradict each other: choose one")
    named = args.benchmark
    raw_qrels = named if _app_workspace_of(args) is not None else None  # the app's workspace of a qrels file
    if raw_qrels is not None and args.output is None:  # as the app's `e`: STEM.reviewed.EXT beside the file
        from rankgate.store.sync import reviewed_path

        args.output = str(reviewed_path(raw_qrels))
    if args.benchmark and args.output is None and args.db is None:
        return _export_back(args)
    if args.output == "-":
        args.output = None
    if args.output is not None:
        args.format = _format_for_output(args.format, args.output)
        _refuse_benchmark_inputs(args)
    with _open(args, readonly=True) as ws:
        if args.output is not None:
            _refuse_unrelated_file(ws, args)
        options = dict(plain=args.plain, header=True if args.header else None, version=args.label_version,
                       require_adjudication=args.require_adjudication, judged_by=args.judged_by,
                       all_reviewers=args.all_reviewers)
        manifest = getattr(ws, "manifest", None)
        from rankgate.store import sync

        followed = (raw_qrels or sync.raw_qrels_of(ws)) if manifest is None and args.output is not None else None
        if args.output is not None and manifest is not None:  # TREC keeps the benchmark file's own column (Q0)
            out = sync.export_like_qrels(ws, manifest, args.format or "trec", args.output, **options)
        elif followed is not None:  # the app's workspace of a qrels file: that file's format, layout and order
            out, _, notes = sync.export_reviewed(ws, followed, args.output, args.format, **options)
            if notes is not None:
                out.notes.append(f"query notes in {notes}")
        else:
            out = ws.export(args.format or "trec", args.output, **options)
    for n in out.notes:
        _note(n)
    if args.output is None:  # the file itself when piped; escaped on a terminal
        sys.stdout.write(visible(out.text, lines="keep") if sys.stdout.isatty() else out.text)
    elif args.json:
        _print_json({"path": args.output, "format": out.format, "version": out.version,
                     "content_hash": out.content_hash, "judgments": out.labels, "left_out": out.left_out,
                     "unchanged": out.unchanged})
    elif out.unchanged:
        say(f"{args.output} already holds these {counted(out.labels, 'judgment')} ({out.format}, version "
            f"{out.version}, {out.content_hash}): left as it was")
    else:
        say(f"wrote {counted(out.labels, 'judgment')} to {args.output} ({out.format}, version {out.version}, "
              f"{out.content_hash})")
    return EXIT_OK


# What an -o FILE's name says it holds; other names (and standard output): --format, else TREC.
SUFFIX_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json-graded", ".trec": "trec", ".qrels": "trec",
                  ".txt": "trec"}


def _format_for_output(fmt: str | None, output: str) -> str | None:
    """`-o NAME.jsonl` writes JSONL (with reasons and unsure notes), `.json` graded JSON, `.trec`/`.qrels`/`.txt`
    TREC, when --format is not given; a --format that contradicts the name is refused (a .txt name takes any)."""
    suffix = os.path.splitext(output)[1].lower()
    named = SUFFIX_FORMATS.get(suffix)
    if fmt is None:
        return named
    family = {"json-graded": "json"}.get(fmt, fmt)
    if named is not None and suffix != ".txt" and {"json-graded": "json"}.get(named, named) != family:
        raise InputError(str(output), f"--format {fmt} contradicts the name's {suffix} (which writes {named}): "
                         f"leave out --format, or name the file for {fmt}; nothing was written")
    return fmt


def _refuse_benchmark_inputs(args) -> None:
    """`-o FILE` never replaces a file of the benchmark named (its benchmark.toml, qrels, queries, runs, corpus,
    ACL, guidelines, policy, pipeline stages, judge prompt), through any name or link. Checked before the
    workspace is opened."""
    from rankgate.core.outfile import refuse_special

    out = args.output
    if not out.strip():
        raise InputError("-o", "expected a file name (or '-' for standard output); nothing was written")
    refuse_special(out, stream_ok=True)
    if not args.benchmark:
        return
    from rankgate.core.benchmark import load_manifest

    _refuse_qrels_file(args.benchmark, getattr(args, "labels_command", None))
    manifest = load_manifest(args.benchmark)
    for role, path in benchmark_inputs(manifest):
        try:
            if not os.path.samefile(out, path):
                continue
        except (OSError, ValueError):
            continue
        if role == "qrels":
            raise InputError(str(out), f"is the qrels file of benchmark {visible(manifest.name)}; "
                             f"`rankgate labels export {visible(shell(manifest.folder))}` (without -o) writes it "
                             "back, checking for changes the workspace has not seen; nothing was written")
        raise InputError(str(out), f"is the {role} file of benchmark {visible(manifest.name)}, an input; an "
                         "export never replaces it: nothing was written (choose another file)")


def _refuse_unrelated_file(ws, args) -> None:
    """Without --force, `-o FILE` replaces an existing file only when it holds judgments (an earlier export or
    qrels, docs/labels.md) or nothing: a run, a queries file or notes are refused. The store's own files are
    refused first, with their own words (store/transfer/export.py)."""
    from rankgate.core.formats.sniff import holds_judgments
    from rankgate.store.transfer.export import refuse_store_target

    from rankgate.core.outfile import is_stream

    refuse_store_target(ws, args.output)
    if is_stream(args.output):  # /dev/null: nothing there to keep
        return
    if os.path.exists(args.output) and not args.force and not holds_judgments(args.output):
        raise InputError(str(args.output), "exists and holds no judgments (it is not an earlier export or qrels "
                         "file); nothing was written (choose another file, or --force to replace it)")


def benchmark_inputs(manifest) -> list[tuple[str, str]]:
    """(role, path) of every file a benchmark folder's manifest names."""
    from rankgate.core.formats import split_run_spec

    folder = manifest.folder
    files = [("benchmark.toml", manifest.path), ("qrels", manifest.qrels), ("queries", manifest.queries),
             ("corpus", manifest.corpus), ("guidelines", manifest.guidelines)]
    files += [("run", split_run_spec(str(spec))[1]) for spec in manifest.runs]  # resolved already, as the ACL
    if manifest.acl and manifest.acl != "corpus":
        files.append(("ACL", manifest.acl))
    if isinstance(manifest.gate.get("policy"), str):
        files.append(("policy", folder / manifest.gate["policy"]))
    for t in manifest.pipelines or []:
        if isinstance(t, dict):
            named = [t.get("file")] + [st.get("run") for st in t.get("stages") or [] if isinstance(st, dict)]
            files += [("pipeline stage", folder / p) for p in named if isinstance(p, str) and p]
    if isinstance(manifest.judge.get("prompt"), str) and manifest.judge["prompt"]:
        files.append(("judge prompt", folder / manifest.judge["prompt"]))
    return [(role, str(p)) for role, p in files if p]


def _export_back(args) -> int:
    """`labels export BENCH`: the workspace's labels to the benchmark's own qrels file (store/sync.py)."""
    from rankgate.store import sync

    for flag, given in (("--plain", args.plain), ("--header", args.header), ("--version", args.label_version),
                        ("--judged-by", args.judged_by), ("--all-reviewers", args.all_reviewers)):
        if given:
            raise InputError("labels export", f"{flag} does not write back to the benchmark's qrels file; export "
                             "elsewhere with -o FILE")
    with _open(args, readonly=True, make=True) as ws, _no_other_writer(ws):
        manifest = ws.manifest
        fmt = None
        if args.format:
            own = sync.file_format(manifest.qrels)
            if args.format != own and {args.format, own} != {"json", "json-graded"}:
                raise InputError(str(manifest.qrels), f"is {own}; the benchmark's qrels file keeps its own format "
                                 f"(export {args.format} elsewhere with -o FILE)")
            fmt = args.format
        if args.require_adjudication and ws.disagreements():
            ws.export("trec", None, require_adjudication=True)  # raises, naming the first disagreement
        out = sync.export_back(ws, manifest, fmt, overwrite=args.overwrite, outside_folder=args.outside_folder)
    for n in out.notes:
        _note(n)
    if args.json:
        _print_json({"path": str(manifest.qrels), "format": out.format, "version": out.version,
                     "content_hash": out.content_hash, "judgments": out.labels, "left_out": out.left_out,
                     "workspace": str(ws.path), "unchanged": out.unchanged})
    elif out.unchanged:
        say(f"{manifest.qrels} already holds these {counted(out.labels, 'judgment')} ({out.format}, version "
            f"{out.version}, {out.content_hash}): left as it was; `rankgate gate {shell(manifest.folder)}` reads them")
    else:
        say(f"wrote {counted(out.labels, 'judgment')} to {manifest.qrels} ({out.format}, version {out.version}, "
            f"{out.content_hash}); `rankgate gate {shell(manifest.folder)}` now reads them")
    return EXIT_OK


@contextlib.contextmanager
def _no_other_writer(ws):
    """Writing a benchmark's qrels file back records the sync in its workspace: refused while another writer (the
    review app) holds the workspace, whose count of unexported edits would go wrong (it exports with `e`); held
    meanwhile, so the app does not open it for writing half way."""
    from rankgate.store import paths
    from rankgate.store.storage import Locked, WriterLock

    lock = WriterLock(paths.sidecar(ws.path, paths.LOCK), ws.path)
    try:
        lock.acquire()
    except Locked as e:
        holder = e.what.removeprefix("is open for writing by ").partition(";")[0]
        folder = shell(ws.manifest.folder)
        raise InputError(str(ws.manifest.qrels), f"not written: the workspace is open for writing by {holder} "
                         f"(the review app?): export with `e` there, or quit it first; `rankgate labels export "
                         f"{folder} -o FILE` writes a copy meanwhile") from None
    try:
        yield
    finally:
        lock.release()


def _bench_arg(p) -> None:
    p.add_argument("bench", nargs="?", metavar="BENCH", help="a benchmark folder (as -b FOLDER)")


def _add_purge(cmds, common) -> None:
    p = cmds.add_parser("purge", parents=[common], help="erase a query or a judgment with its history")
    p.add_argument("query")
    p.add_argument("doc", nargs="?")
    p.add_argument("--why", default="", help="why, for the history")
    p.add_argument("--yes", action="store_true", help="yes, erase it: there is no undo")
    p.set_defaults(func=_purge)


def _purge(args) -> int:
    target = f"document {args.doc!r} of query {args.query!r}" if args.doc else f"query {args.query!r}"
    if not args.yes:
        raise InputError("labels purge", f"purge erases {target}, its judgments and their history from the "
                         "store and its backups, with no undo; add --yes to do it (to retire a label, use "
                         "`labels remove`)")
    with _open(args, readonly=False) as ws:
        event = ws.purge(args.query, args.doc, why=args.why)
    if args.json:
        _print_json(event.as_dict())
    else:
        say(f"purged {target}: {counted(event.before['judgments'], 'judgment')}, "
            f"{counted(event.before['events'], 'event')}")
    return EXIT_OK


def _add_status(cmds, common) -> None:
    p = cmds.add_parser("status", parents=[common], help="where the workspace is and what it holds; for a "
                        "benchmark, how it differs from the folder's qrels file (exit 1 when it does)")
    _bench_arg(p)
    p.add_argument("--corpus", metavar="FILE", help="the current document texts: count the labels judged on a "
                   "text it has changed (stale; default: the benchmark's corpus)")
    p.set_defaults(func=_status)


def _app_workspace_of(args):
    """A qrels file named where the benchmark folder goes: open the workspace the app made for it
    (`rankgate review QRELS --runs ...`), as --db; with none yet, one line says what to pass instead.
    Returns that workspace's path, or None when args named no qrels file."""
    from rankgate.store import paths

    if not (args.benchmark and args.db is None and _qrels_file(args.benchmark)):
        return None
    app_workspace = _qrels_workspace(args.benchmark)
    if app_workspace is None:
        _refuse_qrels_file(args.benchmark, getattr(args, "labels_command", None))  # says what to pass instead
    args.benchmark, args.db = None, str(app_workspace)
    return app_workspace


def _status(args) -> int:
    from rankgate.store import sync

    _bench_positional(args)
    qrels = args.benchmark
    app_workspace = _app_workspace_of(args)  # the app on raw files: its workspace
    comparison = None
    with _open(args, readonly=True) as ws:
        stats = ws.stats()
        hashes = ws.text_hashes()
        # stale labels: asked for (--corpus), or some label records its text and the benchmark has a corpus
        stale = _stale_of(args, ws, hashes, required=False) if args.corpus or any(h for *_, h in hashes) else None
        if stale is not None:
            stats["stale_labels"] = len(stale)
        unmade = getattr(ws, "unmade", None)  # no workspace yet: where the first open will make it
        if unmade is not None:
            stats["path"] = str(unmade)
        if ws.manifest is not None and args.db is None:
            comparison = sync.compare(ws, ws.manifest)  # a qrels file that no longer parses: error, exit 2
        followed = sync.raw_qrels_of(ws) if comparison is None else None  # the app's workspace of a qrels file
        if followed is not None:
            stats["qrels_file"] = str(followed)
            stats["unexported"] = sync.raw_unexported(ws, followed)
    if args.json:
        if comparison is not None:
            stats["sync"] = {"qrels": str(comparison.qrels), "in_sync": comparison.in_sync,
                             "file": comparison.counts("file"), "workspace": comparison.counts("workspace"),
                             "conflicts": len(comparison.conflicts), "last_sync": comparison.synced,
                             "last_sync_unknown": comparison.last_sync_unknown}
        _print_json(stats)
    else:
        for k, v in stats.items():
            if k == "readonly":  # how this command opened it, not a fact about the labels
                continue
            if isinstance(v, list):
                v = ", ".join(map(str, v)) or "none"
            elif isinstance(v, dict):
                v = ", ".join(f"{key} {value}" for key, value in v.items())
            if v is not None and k not in ("stale_labels", "unexported"):
                say(f"{k}: {v}")
        if followed is not None:
            n = stats["unexported"]
            say(f"unexported: {n} label edit{'s' if n != 1 else ''} that neither {followed.name} nor the last "
                f"export holds" + (f" (`rankgate labels export {shell(str(qrels or followed))}` writes them to "
                                   f"{sync.reviewed_path(followed).name})" if n and app_workspace else ""))
        if stale is not None:
            say(stale_line(stale))
        if app_workspace is not None:
            from shlex import quote

            say(f"(the app's workspace for {qrels}, `rankgate review {quote(str(qrels))} --runs ...`; `rankgate gate` "
                f"reads {qrels}, not these labels; other `rankgate labels` commands reach them with --db "
                f"{quote(str(app_workspace))})")
        if unmade is not None:
            say(f"(no workspace yet: the first `rankgate review {shell(ws.manifest.folder)}` or `rankgate labels "
                f"import -b {shell(ws.manifest.folder)}` makes it, importing {ws.manifest.qrels}; this command made "
                "nothing)")
        if comparison is not None:
            say(f"workspace file: {unmade or comparison.workspace}")
            say(f"qrels file: {comparison.qrels}")
            for line in comparison.describe():
                if not (unmade is not None and line.startswith("last sync")):  # (none yet: nothing was made)
                    say(line)
            if not comparison.in_sync:
                say(f"({_export_hint(ws.manifest)}; `rankgate review` offers to bring the file's changes in)")
    return EXIT_OK if comparison is None or comparison.in_sync else 1


def _export_hint(manifest) -> str:
    """The export command that brings the file in line with the workspace: into the file, or, for a qrels file
    outside the benchmark folder (which an export never replaces unasked), into a copy in the folder."""
    from rankgate.store import sync

    if not sync.is_outside_folder(manifest):
        return f"`rankgate labels export {shell(manifest.folder)}` writes the workspace to the file"
    copy = sync.folder_copy_path(manifest)
    return (f"the file is outside the benchmark folder: `rankgate labels export {shell(manifest.folder)} -o "
            f"{shell(str(copy))}` writes the workspace to a copy in the folder (then set qrels = \"{copy.name}\" "
            "in benchmark.toml)")


def _add_recover(cmds, common) -> None:
    p = cmds.add_parser("recover", parents=[common], help="rebuild a damaged workspace from its backups and "
                        "journals (moves damaged files aside, deletes nothing)")
    p.set_defaults(func=_recover)


def _recover(args) -> int:
    from rankgate.store import Workspace, paths

    db = args.db
    if db is None:
        if args.benchmark:
            from rankgate.core.benchmark import load_manifest

            from rankgate.store import sync

            _refuse_qrels_file(args.benchmark, getattr(args, "labels_command", None))
            db = sync.locate(load_manifest(args.benchmark), create=False).path
        else:
            db = paths.workspace_path()
    report = Workspace.recover(db)
    if args.json:
        _print_json(report)
        return EXIT_OK
    say(f"recovered {report['path']}: snapshot {report['snapshot']}, history {report['history']}, "
          f"{report['replayed']} edits replayed; {report['judgments']} judgments, {report['events']} events")
    for d in report["damaged"][:DAMAGED_SHOWN]:
        say(f"damaged: {d}")
    if len(report["damaged"]) > DAMAGED_SHOWN:  # (a journal of 80,000 damaged stretches printed them all)
        say(f"damaged: {len(report['damaged']) - DAMAGED_SHOWN} more stretches (--json lists them all)")
    for f in report["foreign"][:DAMAGED_SHOWN]:
        say(f"foreign: {f}")
    if len(report["foreign"]) > DAMAGED_SHOWN:
        say(f"foreign: {len(report['foreign']) - DAMAGED_SHOWN} more records (--json lists them all)")
    for p in report["moved_aside"]:
        say(f"moved aside: {p}")
    say(f"lost: {report['lost']}" if report["lost"] else "lost: nothing (every edit the files hold was recovered)")
    return EXIT_OK


# --------------------------------------------------------------------------- several reviewers


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False) if text else '""'


def _fig(x) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _add_merge(cmds, common) -> None:
    p = cmds.add_parser("merge", parents=[common], help="bring several reviewers' exports together, keeping "
                        "everyone's judgment (all or nothing)")
    p.add_argument("files", nargs="+", metavar="EXPORT", help="a reviewer's export: JSONL judgments naming their "
                   "reviewer, or TREC/JSON qrels naming it in the header (# reviewer: NAME); NAME=FILE names the "
                   "reviewer of a file that does not")
    p.add_argument("--on-conflict", choices=("stop", "keep", "overwrite"), default="stop",
                   help="when a reviewer's judgment in the store differs from the file's: stop and list (default), "
                   "keep the store's, or overwrite with the file's")
    p.add_argument("--why", help="why, for the history (default: 'merge FILE')")
    p.add_argument("--dry-run", action="store_true", help="report what would change; change nothing")
    p.set_defaults(func=_merge)


def _merge(args) -> int:
    from rankgate.store import MergeConflicts

    try:
        with _open(args, readonly=False, on_conflict=args.on_conflict) as ws:
            report = ws.merge_files(args.files, on_conflict=args.on_conflict, why=args.why, dry_run=args.dry_run)
            path = ws.path
        _saved(ws)
    except MergeConflicts as e:
        _print_conflicts(e.conflicts)
        raise
    if _report_notes_or_json(args, report):
        return EXIT_OK
    verb = "would merge" if args.dry_run else "merged"
    who = ", ".join(f"{name} {n}" for name, n in report.reviewers.items())
    adj = f", {report.adjudications} adjudications" if report.adjudications else ""
    n = len(report.files)
    say(f"{verb} {n} export{'s' if n != 1 else ''} into {path}: {report.added} new judgments (read: {who}), "
          f"{report.changed} changed, {report.unchanged} unchanged, {report.kept} kept as stored{adj}; "
          f"{report.queries_added} new queries")
    say(f"{report.disagreements} pairs where reviewers disagree, not adjudicated "
          "(`rankgate labels disagreements`; `rankgate labels adjudicate QID DOC GRADE --reason TEXT`)")
    return EXIT_OK


def _describe_disagreement(d) -> str:
    parts = "; ".join(f"{j.reviewer} {j.grade} {_quote(j.reason)}" for j in d.judgments)
    if d.adjudication is not None:
        end = f"adjudicated {d.adjudication.grade} by {d.adjudication.reviewer} {_quote(d.adjudication.reason)}"
    else:
        end = f"exported {d.label.grade} (not adjudicated: the latest judgment, {d.label.reviewer}'s)"
    return f"{d.query} {d.doc}: {parts} -> {end}"


def _add_agreement(cmds, common) -> None:
    p = cmds.add_parser("agreement", parents=[common], help="agreement between reviewers: Cohen's kappa, "
                        "Krippendorff's alpha, the disagreeing pairs")
    p.add_argument("--by", choices=("query", "slice"), help="also per query, or per slice (query tag)")
    _bench_arg(p)  # `labels agreement BENCH`, as `labels suggest BENCH` before it
    p.set_defaults(func=_agreement)


def _agreement(args) -> int:
    _bench_positional(args)
    _app_workspace_of(args)  # a qrels file the app reviewed: its workspace, as `labels status QRELS`
    with _open(args, readonly=True) as ws:
        overall, groups = ws.agreement(args.by)
        found = ws.disagreements(include_adjudicated=True)
        judges = judge_agreement_of(ws)  # suggested grades (labels suggest) against each reviewer
    if args.json:
        _print_json({"overall": overall.as_dict(), "by": args.by,
                     "groups": {name: a.as_dict() for name, a in groups.items()},
                     "disagreements": [d.as_dict() for d in found], "judges": [a.as_dict() for a in judges]})
        return EXIT_OK
    for line in judge_agreement_lines(judges):
        say(line)
    if not overall.units:
        say(f"no pair is judged by two reviewers yet ({overall.single} judged by one): nothing to agree about "
              "(`rankgate labels merge` brings other reviewers' exports in)")
        return EXIT_OK
    share = f"{overall.agreement:.1%}" if overall.agreement is not None else "n/a"
    say(f"{overall.units} pairs judged by two or more of {', '.join(overall.reviewers)} ({overall.single} by one "
          f"only); all agree on {overall.agreed} ({share})")
    say(f"Krippendorff's alpha (ordinal): {_fig(overall.alpha)}  (nominal: {_fig(overall.alpha_nominal)})")
    for p in overall.pairs:
        say(f"Cohen's kappa {p.a} ~ {p.b}: {_fig(p.kappa)} (quadratic-weighted {_fig(p.kappa_quadratic)}) over "
              f"{p.units} pairs, {p.agreed} agreed")
    if args.by:
        say(f"by {args.by}:")
        width = max((len(n) for n in groups), default=0)
        for name, a in groups.items():
            if not a.units:
                continue
            kappas = ", ".join(f"{p.a}~{p.b} {_fig(p.kappa)}" for p in a.pairs)
            say(f"  {name:<{width}}  {a.units:>3} pairs  agree {a.agreed:>3}  alpha {_fig(a.alpha)}  kappa {kappas}")
    open_ = sum(1 for d in found if d.adjudication is None)
    say(f"disagreements: {len(found)} ({open_} not adjudicated)")
    for d in found:
        say(f"  {_describe_disagreement(d)}")
    return EXIT_OK


def _add_disagreements(cmds, common) -> None:
    p = cmds.add_parser("disagreements", parents=[common], help="pairs whose reviewers disagree, with each "
                        "grade and reason")
    p.add_argument("bench", nargs="?", metavar="BENCH", help="a benchmark folder (as -b FOLDER), or a qrels file "
                   "the app reviewed (its workspace, as `labels status QRELS` names it)")
    p.add_argument("query", nargs="?", metavar="QID", help="this query's pairs only")
    p.add_argument("--all", action="store_true", help="include adjudicated ones")
    p.set_defaults(func=_disagreements)


def _disagreements(args) -> int:
    if args.bench and args.query is None and (args.db or args.benchmark or not os.path.exists(args.bench)):
        args.bench, args.query = None, args.bench  # `disagreements --db DB QID`: one name after a workspace
    _bench_positional(args)
    _app_workspace_of(args)
    with _open(args, readonly=True) as ws:
        if args.query and ws.query(args.query) is None:
            raise ws.unknown_query(args.query, can_add=False)
        found = ws.disagreements(args.query, include_adjudicated=args.all)
        unsure = {(j.query, j.doc): j for j in ws.unsure(args.query)}
    for d in found:
        j = unsure.pop((d.query, d.doc), None)
        if args.json:
            say_json(dict(d.as_dict(), unsure=j.unsure if j else ""))
        else:
            say(_describe_disagreement(d) + (f" (unsure: {j.unsure})" if j else ""))
    for j in unsure.values():  # labels marked unsure that no reviewers disagree about
        if args.json:
            say_json({"query": j.query, "doc": j.doc, "grade": j.grade, "reviewer": j.reviewer, "reached": j.reached,
                      "unsure": j.unsure})
        else:
            say(f"{j.query} {j.doc}: {j.reviewer} {j.grade} {_quote(j.reason)} -> unsure: {j.unsure}")
    return EXIT_OK


def _add_unsure(cmds, common) -> None:
    p = cmds.add_parser("unsure", parents=[common], help="mark a label unsure (needs discussion), with a note; "
                        "or --clear the mark")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("note", nargs="?", help="what is unsure (required unless --clear)")
    p.add_argument("--clear", action="store_true", help="clear the pair's unsure mark")
    p.add_argument("--why", default="", help="why, for the history")
    p.set_defaults(func=_unsure)


def _unsure(args) -> int:
    if args.clear and args.note is not None:
        raise InputError("labels unsure", "give a NOTE or --clear, not both")
    if not args.clear and (args.note is None or not args.note.strip()):
        raise InputError("labels unsure", f"give a NOTE saying what is unsure about {args.doc!r} for "
                         f"{args.query!r} (or --clear)")
    with _open(args, readonly=False) as ws:
        if args.clear:
            event = ws.clear_unsure(args.query, args.doc, why=args.why)
        else:
            event = ws.mark_unsure(args.query, args.doc, args.note, why=args.why)
    _saved(ws)
    if args.json:
        _print_json(event.as_dict() if event else None)
    elif event is None:
        say(f"{args.query} {args.doc}: unchanged (marked unsure with this note already)")
    elif args.clear:
        say(f"{args.query} {args.doc}: unsure mark cleared (event #{event.id})")
    else:
        say(f"{args.query} {args.doc}: marked unsure: {event.after['unsure']} (event #{event.id})")
    return EXIT_OK


def _add_adjudicate(cmds, common) -> None:
    p = cmds.add_parser("adjudicate", parents=[common], help="record a pair's final grade, with its own reason")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("grade", nargs="?", help="the final grade (an integer)")
    p.add_argument("--reason", help="why this is the final grade (required)")
    p.add_argument("--withdraw", action="store_true", help="withdraw the pair's adjudication instead")
    p.add_argument("--why", default="", help="why, for the history")
    p.set_defaults(func=_adjudicate)


def _adjudicate(args) -> int:
    with _open(args, readonly=False) as ws:
        if args.withdraw:
            if args.grade is not None:
                raise InputError("labels adjudicate", "--withdraw takes no grade")
            event = ws.remove_adjudication(args.query, args.doc, why=args.why)
        else:
            if args.grade is None:
                raise InputError("labels adjudicate", "name the final grade: QID DOC GRADE --reason TEXT")
            _check_scale(args, ws, "labels adjudicate")
            if not args.reason or not args.reason.strip():
                raise InputError("labels adjudicate", f"an adjudication needs --reason (why is {args.doc!r} "
                                 f"graded {args.grade} for {args.query!r}?)")
            event = ws.adjudicate(args.query, args.doc, args.grade, args.reason, why=args.why)
    _saved(ws)
    if args.json:
        _print_json(event.as_dict() if event else None)
    elif event is None:
        say(f"{args.query} {args.doc}: unchanged (the same adjudication stands)")
    elif args.withdraw:
        say(f"{args.query} {args.doc}: adjudication withdrawn (was {event.before['grade']} by "
              f"{event.before['reviewer']}; event #{event.id}); the disagreement is open again")
    else:
        grades = ", ".join(f"{r} {g}" for r, g in event.after.get("grades", {}).items())
        say(f"{args.query} {args.doc}: adjudicated {event.after['grade']} by {event.who} ({grades}; event "
              f"#{event.id})")
    return EXIT_OK


def _add_confirm(cmds, common) -> None:
    p = cmds.add_parser("confirm", parents=[common], help="a label carried by a migration still holds: clear "
                        "its needs-review flag")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("--why", default="", help="why, for the history")
    p.set_defaults(func=_confirm)


def _confirm(args) -> int:
    with _open(args, readonly=False) as ws:
        events = ws.confirm(args.query, args.doc, why=args.why)
    _saved(ws)
    if args.json:
        _print_json([e.as_dict() for e in events])
    elif not events:
        say(f"{args.query} {args.doc}: nothing needed review")
    else:
        say(f"{args.query} {args.doc}: confirmed ({len(events)} judgment{'s' if len(events) != 1 else ''}; "
              f"event #{events[-1].id})")
    return EXIT_OK


def _add_migrate(cmds, common) -> None:
    p = cmds.add_parser("migrate", parents=[common], help="carry judgments to new document IDs after "
                        "rechunking, as a new version (all or nothing)")
    p.add_argument("--map", required=True, metavar="MAP.tsv", help="OLD_ID<TAB>NEW_ID lines; one line per new "
                   "ID when an old ID was split")
    p.add_argument("--version", dest="label_version", metavar="NAME", help="the version the migrated labels are "
                   "frozen as (default: migrated-<UTC time>)")
    p.add_argument("--before", metavar="NAME", help="the version the labels before are frozen as (default: "
                   "NAME-before, or the latest version when it holds them already)")
    p.add_argument("--drop-unmapped", action="store_true", help="remove judgments whose document is not in the "
                   "map (default: leave them, and list them)")
    p.add_argument("--collection-version", metavar="V", help="the new corpus's collection version")
    p.add_argument("--why", default="", help="why, for the history")
    p.add_argument("--dry-run", action="store_true", help="report what would change; change nothing")
    p.set_defaults(func=_migrate)


def _migrate(args) -> int:
    with _open(args, readonly=False) as ws:
        report = ws.migrate(args.map, version=args.label_version, before=args.before,
                            drop_unmapped=args.drop_unmapped, collection_version=args.collection_version,
                            why=args.why, dry_run=args.dry_run)
    _saved(ws)
    if args.json:
        _print_json(report.as_dict())
        return EXIT_OK
    verb = "would carry" if args.dry_run else "carried"
    sources = len({(c["query"], s) for c in report.carried for s in c["from"]})
    say(f"{verb} {sources} labels to {len(report.carried)} query-document pairs with new IDs, each marked as "
          f"needing review; {report.retired} judgments on old IDs removed (version {report.before!r} keeps them)")
    for c in report.merged:
        say(f"merged: {c['query']} {c['doc']} <- {', '.join(c['from'])} (each reviewer's highest grade)")
    if report.unmapped:
        what = "removed" if report.dropped_unmapped else "left as they are (--drop-unmapped removes them)"
        say(f"{len(report.unmapped)} labels name a document the map does not: {what}")
        for u in report.unmapped[:20]:
            say(f"not in the map: {u['query']} {u['doc']} [{', '.join(u['reviewers'])}]")
        if len(report.unmapped) > 20:
            say(f"... and {len(report.unmapped) - 20} more (--json lists them all)")
    if not args.dry_run:
        say(f"versions: before {report.before}, after {report.version}")
    return EXIT_OK


def _add_queue(cmds, common) -> None:
    p = cmds.add_parser("queue", help="the review queue: unjudged documents in any run's top k, the most "
                        "decisive first")
    p.add_argument("benchmark", nargs="?", metavar="BENCHMARK", help="a benchmark folder (its workspace's labels "
                   "when it has one, else its qrels); flags override it")
    p.add_argument("-b", "--benchmark", dest="benchmark_flag", metavar="FOLDER", help="the benchmark folder "
                   "(as BENCHMARK, the way `labels set` and `agreement` take it)")
    p.add_argument("--qrels", help="qrels file (instead of a workspace)")
    p.add_argument("--runs", action="append", default=[], metavar="[NAME=]FILE", help="run file (repeatable)")
    p.add_argument("--queries", help="queries file (JSONL: tags, must_pass ...)")
    p.add_argument("--db", metavar="FILE", help="take the labels from this workspace")
    p.add_argument("--policy", help="policy file (TOML): the gate whose decision the queue is ordered by")
    p.add_argument("--k", type=int, help="the cutoff k (default: a policy file's, the benchmark folder's; 10 "
                   "on raw files)")
    p.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (default 1)")
    p.add_argument("--baseline", help="the gate's baseline run")
    p.add_argument("--candidate", help="the gate's candidate run")
    p.add_argument("--must-pass", action="append", default=[], metavar="QUERY", help="a must-pass query "
                   "(repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="list the first N (default: 50; all with --json)")
    p.add_argument("--order", choices=("decisive", "suggested", "disagreement"), default="decisive",
                   help="suggested: what a judge suggested relevant first; disagreement: judged pairs whose "
                   "suggestion differs from the label (labels suggest)")
    p.add_argument("--budget", type=int, metavar="N", help="the N judgments that most reduce the uncertainty of "
                   "the gate's decision, with the decision in the worst and best case once they are judged")
    p.add_argument("--corpus", metavar="FILE", help="the current document texts: stale labels in a run's top k "
                   "are queued after unsure ones (default: the benchmark's corpus)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_queue)


def _gate_refuses(bundle, policy, pair: tuple[str, str]) -> str | None:
    """Why `rankgate gate` would refuse these inputs (exit 2), as its first error line, or None: the same
    checks as the gate's (and the app's NO DECISION), so the queue's hint never shows a decision the gate
    would not make."""
    from rankgate.cli.evaluate import problems_of
    from rankgate.core.binding import check_binding
    from rankgate.core.gate import query_problems

    problems = problems_of(bundle, policy)  # in the gate's order: its inputs, the policy's queries, the binding
    problems = problems or query_problems(set(bundle.qrels.query_ids) | set(bundle.no_answer), policy)
    if problems:
        return str(problems[0])
    try:
        check_binding(bundle.qrels, [bundle.runs[n] for n in pair], allow=policy.allow_snapshot_mismatch,
                      manifest_version=bundle.manifest.collection_version if bundle.manifest else "")
    except InputError as e:
        return str(e)
    return None


def _queue(args) -> int:
    from rankgate.core.bundle import load_bundle
    from rankgate.core.policy import resolve
    from rankgate.core.queue import build_queue
    from rankgate.store import Workspace

    manifest, db, beside = _queue_sources(args)
    unsure: dict[tuple[str, str], str] = {}  # labels marked unsure: they come first
    hashes: list = []  # (query, doc, text hash) of the workspace's labels: stale ones come next

    def from_workspace(catalog):
        with Workspace.open(db, readonly=True) as ws:
            unsure.update(((j.query, j.doc), j.unsure) for j in ws.unsure())
            hashes.extend(ws.text_hashes())
            return ws.to_qrels(catalog), {q.id: q for q in ws.queries()}

    bundle = load_bundle(args.qrels, args.runs, benchmark=manifest, queries=args.queries,
                         labels=from_workspace if db is not None else None)
    where = f"the workspace {db}" if db is not None else str(args.qrels or manifest.qrels)
    runs = bundle.runs
    policy = resolve(policy_overrides(args), bundle)
    stale = _stale_of(args, manifest and _Manifested(manifest), hashes, required=False) if hashes else None
    blind = []
    if db is not None:  # the judge's overlap (labels overlap): judged blind, before the rest
        from rankgate.cli.suggest import overlap_to_judge

        blind = overlap_to_judge(db)
    queue = build_queue(bundle.qrels, runs, policy, queries=bundle.queries, no_answer=bundle.no_answer,
                        unsure=unsure, stale=stale.pairs if stale else (), blind=blind)
    limit = args.limit if args.limit is not None else (None if args.json else 50)
    if args.order != "decisive":  # a judge's suggestions beside the workspace (cli/suggest.py)
        from rankgate.cli.suggest import ordered_queue

        return ordered_queue(args, beside, bundle, policy, queue, limit)
    refused = _gate_refuses(bundle, policy, queue.gate) if queue.gate else None
    if refused:
        queue.decision = None
    if args.budget is not None:
        return _budget(args, bundle, policy, refused)
    if args.json:
        _print_json(dict(queue.as_dict(limit), labels=where, judge_overlap=[list(p) for p in blind],
                         **({"gate_refuses": refused} if refused else {})))
        return EXIT_OK
    _print_queue(queue, runs, where, blind, refused, limit)
    return EXIT_OK


def _queue_sources(args):
    """(the benchmark's manifest or None, the workspace or None, where a judge's suggestions are kept) of
    `labels queue`; refused when it has no labels or no runs."""
    from rankgate.core.benchmark import is_benchmark, load_manifest

    manifest = None
    if args.benchmark_flag:
        if args.benchmark and args.benchmark != args.benchmark_flag:
            raise InputError("labels queue", "name the benchmark folder once (BENCHMARK or -b FOLDER)")
        args.benchmark = args.benchmark_flag
    if args.benchmark:
        if not is_benchmark(args.benchmark):
            if _qrels_file(args.benchmark):  # the file as it is, or the labels graded on it in the app
                raise InputError(args.benchmark, f"is a qrels file, not a benchmark folder: --qrels "
                                 f"{shell(args.benchmark)} --runs FILE reads the file; "
                                 f"{_app_workspace_line(args.benchmark)} (with --runs FILE)")
            raise InputError(args.benchmark, "not a benchmark folder (no benchmark.toml); name files with --qrels "
                             "and --runs")
        manifest = load_manifest(args.benchmark)
    db = args.db
    beside = db  # where a judge's suggestions are kept: beside the workspace, made yet or not
    if db is None and args.qrels is None and manifest is not None:
        from rankgate.store import sync

        located = sync.locate(manifest, create=False)
        found = beside = located.adopt_from or located.path
        db = found if found.exists() else None
    if db is None and not args.qrels and manifest is None:
        raise InputError("labels queue", "no labels: name a benchmark folder, --qrels FILE or --db FILE")
    if not args.runs and manifest is None:
        raise InputError("labels queue", "no runs: name a benchmark folder or --runs FILE")
    return manifest, db, beside


def _print_queue(queue, runs, where: str, blind: list, refused: str | None, limit: int | None) -> None:
    """`labels queue` as text: what is counted, then one line per item."""
    if blind:
        say(f"{len(blind)} pairs to judge blind first (the judge's overlap: its suggestions count only while it "
            f"agrees with you on them): " + ", ".join(f"{visible(q)} {visible(d)}" for q, d in blind[:10]) +
            (f" ... and {len(blind) - 10} more (--json lists all)" if len(blind) > 10 else ""))
    gate = f"; gate {queue.gate[0]} -> {queue.gate[1]}: {queue.decision}" if queue.gate else ""
    if refused:
        gate = f"; gate {queue.gate[0]} -> {queue.gate[1]}: no decision, `rankgate gate` refuses these labels: {refused}"
    marked = f" and {queue.unsure} labels marked unsure (first)" if queue.unsure else ""
    marked += f" and {queue.stale} stale labels (next: their text changed since judged)" if queue.stale else ""
    unjudged = len(queue) - queue.unsure - queue.stale
    say(f"{unjudged} unjudged documents{marked} in the top {queue.k} of {', '.join(runs)} "
        f"(labels: {where}{gate})")
    shown = queue.items if limit is None else queue.items[:limit]
    for i, it in enumerate(shown, 1):
        ranks = ", ".join(f"{r} #{n}" for r, n in it.ranks.items())
        say(f"{i:>4}. {it.query} {it.doc}  [{ranks}]  {it.why()}")
    if len(shown) < len(queue):
        say(f"... and {len(queue) - len(shown)} more (--limit N)")


def _budget(args, bundle, policy, refused: str | None) -> int:
    """`labels queue --budget N`: core/budget.py, printed."""
    from rankgate.core.budget import budget_for

    if args.budget < 1:
        raise InputError("--budget", "N must be at least 1")
    pair = (policy.baseline, policy.candidate)
    if not all(pair) or not all(r in bundle.runs for r in pair):
        raise InputError("--budget", "a budget is for the gate's decision: name its --baseline and --candidate "
                         "(or a benchmark whose [gate] names them)")
    if refused:
        raise InputError("--budget", f"no decision to make certain: `rankgate gate` refuses these labels: {refused}")
    b = budget_for(bundle.qrels, bundle.runs, policy, args.budget, queries=bundle.queries,
                   no_answer=bundle.no_answer)
    if args.json:
        _print_json(dict(b.as_dict(), gate=list(pair), budget=args.budget))
        return EXIT_OK
    say(f"gate {visible(pair[0])} -> {visible(pair[1])}: {b.decision} now; {b.unjudged} unjudged documents within "
        f"its checks' depth leave it between {b.worst_now} (worst case) and {b.best_now} (best case); "
        f"{b.progress()}")
    for i, (q, d) in enumerate(b.items, 1):
        say(f"{i:>4}. {visible(q)} {visible(d)}  {b.reasons[(q, d)]}")
    outcome = f"certain: {b.worst}" if b.certain else f"between {b.worst} (worst case) and {b.best} (best case)"
    if not b.items:  # "once these 0 are judged" said nothing
        say(f"no judgment to list: the decision is {outcome}")
        return EXIT_OK
    say(f"once these {len(b.items)} are judged (and found not relevant, as the gate counts them now), the "
        f"decision is {outcome}")
    return EXIT_OK


# --------------------------------------------------------------------------- the subcommands

# each adds its parser (`cmds.add_parser`, with `parents=[common]` when it opens a workspace) and its handler;
# this order is the order of `rankgate labels --help`
SUBCOMMANDS = (_add_import, _add_set, _add_remove, _add_unsure, _add_list, _add_queries, _add_history, _add_freeze,
               _add_versions, _add_diff, _add_merge, _add_agreement, _add_disagreements, _add_adjudicate,
               _add_confirm, _add_migrate, _add_queue, add_suggest, add_overlap, _add_export, _add_purge, _add_status,
               _add_recover)
