"""`rankgate labels ...`: import, edit, freeze and export reviewed labels.

Every subcommand takes `--db FILE` (default: the `default` workspace in the data
folder) or `-b FOLDER` (a benchmark folder's own workspace, found by its name).
Reading commands open the workspace read-only, so they work while another
process (the review app) holds it for writing. `--json` prints machine-readable
output; otherwise one short line per item.
"""

from __future__ import annotations

import argparse
import json
import sys

from rankgate.core.errors import InputError

EXIT_OK, EXIT_INVALID = 0, 2


def register(sub) -> None:
    common = argparse.ArgumentParser(add_help=False)
    where = common.add_argument_group("workspace")
    where.add_argument("--db", metavar="FILE", help="the workspace file (default: the default workspace in "
                       "the user's data folder, or $RANKGATE_HOME)")
    where.add_argument("-b", "--benchmark", metavar="FOLDER", help="a benchmark folder: open its workspace by "
                       "name (the first open imports its qrels)")
    where.add_argument("--reviewer", help="your name in the history (default: $RANKGATE_REVIEWER, git's "
                       "user.name, or the login name)")
    common.add_argument("--json", action="store_true", help="machine-readable output")

    labels = sub.add_parser("labels", help="import, edit, freeze and export reviewed labels",
                            description="The label workspace: reviewed judgments with reasons, their history "
                            "and frozen versions.")
    labels.set_defaults(func=lambda args: _help(labels))
    cmds = labels.add_subparsers(dest="labels_command", metavar="SUBCOMMAND")

    p = cmds.add_parser("import", parents=[common], help="import qrels and query files (all or nothing)")
    p.add_argument("files", nargs="*", metavar="FILE", help="qrels (TREC, BEIR, seed/graded JSON, JSONL, gz) "
                   "or query files (JSONL with id/text, qid<TAB>text)")
    p.add_argument("--queries", action="append", default=[], metavar="FILE", help="read FILE as queries")
    p.add_argument("--on-conflict", choices=("stop", "keep", "overwrite"), default="stop",
                   help="when a label exists with another grade or reason: stop and list (default), keep the "
                   "store's, or overwrite with the file's")
    p.add_argument("--collection-version", metavar="V", help="the collection version the labels were judged on "
                   "(default: the file's header, if any)")
    p.add_argument("--why", help="why, for the history (default: 'import FILE')")
    p.add_argument("--dry-run", action="store_true", help="report what would change; change nothing")
    p.set_defaults(func=_import)

    p = cmds.add_parser("set", parents=[common], help="set a grade (new label, regrade, or a new reason)")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("grade", help="an integer; negative allowed")
    p.add_argument("--reason", help="why the document has this grade (needed for a new label)")
    p.add_argument("--collection-version", metavar="V", help="the collection version you inspected")
    p.add_argument("--why", default="", help="why the change, for the history")
    p.add_argument("--add-query", action="store_true", help="add the query if the workspace does not know it")
    p.set_defaults(func=_set)

    p = cmds.add_parser("remove", parents=[common], help="remove a label (history keeps it)")
    p.add_argument("query")
    p.add_argument("doc")
    p.add_argument("--why", default="", help="why, for the history")
    p.set_defaults(func=_remove)

    p = cmds.add_parser("list", parents=[common], help="the standing judgments")
    p.add_argument("query", nargs="?")
    p.add_argument("doc", nargs="?")
    p.add_argument("--removed", action="store_true", help="include removed labels")
    p.set_defaults(func=_list)

    p = cmds.add_parser("queries", parents=[common], help="the queries, with their judgment counts")
    p.set_defaults(func=_queries)

    p = cmds.add_parser("history", parents=[common], help="every change, oldest first")
    p.add_argument("query", nargs="?")
    p.add_argument("doc", nargs="?")
    p.add_argument("--limit", type=int, metavar="N", help="the newest N events only")
    p.set_defaults(func=_history)

    p = cmds.add_parser("freeze", parents=[common], help="name the current labels as a version")
    p.add_argument("name")
    p.add_argument("--note", default="", help="what this version is")
    p.set_defaults(func=_freeze)

    p = cmds.add_parser("versions", parents=[common], help="the frozen versions")
    p.set_defaults(func=_versions)

    p = cmds.add_parser("diff", parents=[common], help="the changelog between two versions")
    p.add_argument("old", metavar="V1")
    p.add_argument("new", metavar="V2", nargs="?", help="default: the current labels")
    p.set_defaults(func=_diff)

    p = cmds.add_parser("export", parents=[common], help="write reviewed qrels that `rankgate gate` reads")
    p.add_argument("--format", choices=("trec", "json", "json-graded", "jsonl"), default="trec",
                   help="trec (default); json: binary, documents with grade >= 1; json-graded; jsonl: with "
                   "reasons and collection versions")
    p.add_argument("-o", "--output", metavar="FILE", help="write here, atomically (default: standard output)")
    p.add_argument("--plain", action="store_true", help="no header (for tools that cannot read comments)")
    p.add_argument("--version", dest="label_version", metavar="V", help="a frozen version (default: the current "
                   "labels)")
    p.set_defaults(func=_export)

    p = cmds.add_parser("purge", parents=[common], help="erase a query or a judgment with its history")
    p.add_argument("query")
    p.add_argument("doc", nargs="?")
    p.add_argument("--why", default="", help="why, for the history")
    p.add_argument("--yes", action="store_true", help="yes, erase it: there is no undo")
    p.set_defaults(func=_purge)

    p = cmds.add_parser("status", parents=[common], help="where the workspace is and what it holds")
    p.set_defaults(func=_status)

    p = cmds.add_parser("recover", parents=[common], help="rebuild a damaged workspace from its backups and "
                        "journals (moves damaged files aside, deletes nothing)")
    p.set_defaults(func=_recover)


def _help(parser) -> int:
    parser.print_help()
    return EXIT_INVALID


# --------------------------------------------------------------------------- opening


def _open(args, readonly: bool, on_conflict: str = "stop"):
    from rankgate.store import paths
    from rankgate.store.workspace import Workspace

    if args.benchmark:
        if readonly:
            from rankgate.core.benchmark import load_manifest

            manifest = load_manifest(args.benchmark)
            db = args.db or paths.workspace_path(manifest.name)
            if not _exists(db):  # the first open imports the benchmark's labels: that one writes
                Workspace.open_benchmark(manifest, reviewer=args.reviewer, path=args.db).close()
            return Workspace.open_benchmark(manifest, readonly=True, reviewer=args.reviewer, path=args.db)
        return Workspace.open_benchmark(args.benchmark, reviewer=args.reviewer, path=args.db, on_conflict=on_conflict)
    return Workspace.open(args.db, readonly=readonly, reviewer=args.reviewer)


def _exists(path) -> bool:
    import os

    return os.path.exists(path)


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def _saved(ws) -> None:
    """After a write: the edit is durable; say so if folding it into the snapshot failed."""
    if ws.fold_problem:
        _note(f"the edit is saved in the journal, but folding it into the snapshot failed: {ws.fold_problem}")


# --------------------------------------------------------------------------- handlers


def _import(args) -> int:
    from rankgate.store.workspace import ImportConflicts

    if not args.files and not args.queries and not args.benchmark:
        raise InputError("labels import", "nothing to import: name qrels or query files (or -b FOLDER)")
    try:
        with _open(args, readonly=False, on_conflict=args.on_conflict) as ws:
            if not args.files and not args.queries and ws.benchmark_import is not None:
                report = ws.benchmark_import  # `import -b FOLDER`: the folder's own labels, just now
            else:
                report = ws.import_files(args.files, queries=args.queries, on_conflict=args.on_conflict,
                                         collection_version=args.collection_version, why=args.why,
                                         dry_run=args.dry_run)
            path = ws.path
        _saved(ws)
    except ImportConflicts as e:
        for c in e.conflicts[:200]:
            print(f"conflict: {c}", file=sys.stderr)
        if len(e.conflicts) > 200:
            print(f"conflict: ... and {len(e.conflicts) - 200} more", file=sys.stderr)
        raise
    for n in report.notes:
        _note(n)
    if args.json:
        _print_json(report.as_dict())
        return EXIT_OK
    verb = "would import" if args.dry_run else "imported"
    print(f"{verb} into {path}: {report.added} new judgments, {report.changed} changed, {report.unchanged} "
          f"unchanged, {report.kept} kept as stored; {report.queries_added} new queries, "
          f"{report.queries_updated} updated")
    return EXIT_OK


def _set(args) -> int:
    with _open(args, readonly=False) as ws:
        if args.reason is None and ws.judgment(args.query, args.doc) is None:
            raise InputError(str(ws.path), f"a new label needs --reason (why is {args.doc!r} graded {args.grade} "
                             f"for {args.query!r}?)")
        event = ws.set_judgment(args.query, args.doc, args.grade, reason=args.reason,
                                collection_version=args.collection_version, why=args.why,
                                create_query=args.add_query)
    _saved(ws)
    if args.json:
        _print_json(event.as_dict() if event else None)
    elif event is None:
        print(f"{args.query} {args.doc}: unchanged")
    else:
        before = event.before["grade"] if event.before else "-"
        print(f"{args.query} {args.doc}: {before} -> {event.after['grade']} ({event.kind}, event #{event.id})")
    return EXIT_OK


def _remove(args) -> int:
    with _open(args, readonly=False) as ws:
        event = ws.remove_judgment(args.query, args.doc, why=args.why)
    _saved(ws)
    if args.json:
        _print_json(event.as_dict())
    else:
        print(f"{args.query} {args.doc}: removed (was {event.before['grade']}; event #{event.id})")
    return EXIT_OK


def _list(args) -> int:
    with _open(args, readonly=True) as ws:
        items = ws.judgments(args.query, include_removed=args.removed)
    if args.doc is not None:
        items = [j for j in items if j.doc == args.doc]
    if args.json:
        for j in items:
            print(json.dumps(j.as_dict(), ensure_ascii=False))
        return EXIT_OK
    for j in items:
        extra = f" {json.dumps(j.reason, ensure_ascii=False)}" if j.reason else ""
        gone = f" (removed {j.removed})" if j.removed else ""
        print(f"{j.query} {j.doc} {j.grade}{extra} [{j.reviewer}, {j.updated}]{gone}")
    return EXIT_OK


def _queries(args) -> int:
    with _open(args, readonly=True) as ws:
        rows = [(q, len(ws.grades(q.id))) for q in ws.queries()]
    if args.json:
        for q, n in rows:
            d = {"id": q.id, "text": q.text, "notes": q.notes, "tags": list(q.tags), "must_pass": q.must_pass,
                 "held_out": q.held_out, "weight": q.weight, "no_answer": q.no_answer, "judgments": n}
            print(json.dumps(d, ensure_ascii=False))
        return EXIT_OK
    for q, n in rows:
        flags = [f for f, on in (("must-pass", q.must_pass), ("held-out", q.held_out), ("no-answer", q.no_answer))
                 if on]
        if q.tags:
            flags.append("tags=" + ",".join(q.tags))
        text = f" {json.dumps(q.text, ensure_ascii=False)}" if q.text else ""
        print(f"{q.id} {n} judgments{' ' + ' '.join(flags) if flags else ''}{text}")
    return EXIT_OK


def _history(args) -> int:
    with _open(args, readonly=True) as ws:
        events = ws.history(args.query, args.doc, limit=args.limit)
    for e in events:
        print(json.dumps(e.as_dict(), ensure_ascii=False) if args.json else e.describe())
    return EXIT_OK


def _freeze(args) -> int:
    with _open(args, readonly=False) as ws:
        v = ws.freeze(args.name, note=args.note)
    _saved(ws)
    if args.json:
        _print_json(v.as_dict())
    else:
        print(f"froze {v.name}: {v.labels} judgments over {v.queries} queries, {v.content_hash}")
    return EXIT_OK


def _versions(args) -> int:
    with _open(args, readonly=True) as ws:
        versions = ws.versions()
    for v in versions:
        if args.json:
            print(json.dumps(v.as_dict(), ensure_ascii=False))
        else:
            note = f" {json.dumps(v.note, ensure_ascii=False)}" if v.note else ""
            print(f"{v.name} {v.created} {v.who} {v.labels} judgments {v.content_hash}{note}")
    return EXIT_OK


def _diff(args) -> int:
    with _open(args, readonly=True) as ws:
        diff = ws.diff(args.old, args.new)
    if args.json:
        _print_json(diff.as_dict())
        return EXIT_OK
    for a in diff.added:
        print(f"+ {a['query']} {a['doc']} {a['grade']}")
    for r in diff.removed:
        print(f"- {r['query']} {r['doc']} {r['grade']}")
    for c in diff.regraded:
        print(f"~ {c['query']} {c['doc']} {c['before']} -> {c['after']}")
    print(f"{diff.old} -> {diff.new}: {len(diff.added)} added, {len(diff.removed)} removed, "
          f"{len(diff.regraded)} regraded")
    return EXIT_OK


def _export(args) -> int:
    with _open(args, readonly=True) as ws:
        out = ws.export(args.format, args.output, plain=args.plain, version=args.label_version)
    for n in out.notes:
        _note(n)
    if args.output is None:
        sys.stdout.write(out.text)
    elif args.json:
        _print_json({"path": args.output, "format": out.format, "version": out.version,
                     "content_hash": out.content_hash, "judgments": out.labels, "left_out": out.left_out})
    else:
        print(f"wrote {out.labels} judgments to {args.output} ({out.format}, version {out.version}, "
              f"{out.content_hash})")
    return EXIT_OK


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
        print(f"purged {target}: {event.before['judgments']} judgments, {event.before['events']} events")
    return EXIT_OK


def _status(args) -> int:
    with _open(args, readonly=True) as ws:
        stats = ws.stats()
    if args.json:
        _print_json(stats)
    else:
        for k, v in stats.items():
            if v is not None:
                print(f"{k}: {v}")
    return EXIT_OK


def _recover(args) -> int:
    from rankgate.store import paths
    from rankgate.store.workspace import Workspace

    db = args.db
    if db is None:
        if args.benchmark:
            from rankgate.core.benchmark import load_manifest

            db = paths.workspace_path(load_manifest(args.benchmark).name)
        else:
            db = paths.workspace_path()
    report = Workspace.recover(db)
    if args.json:
        _print_json(report)
        return EXIT_OK
    print(f"recovered {report['path']}: snapshot {report['snapshot']}, history {report['history']}, "
          f"{report['replayed']} edits replayed; {report['judgments']} judgments, {report['events']} events")
    for p in report["moved_aside"]:
        print(f"moved aside: {p}")
    if report["lost"]:
        print(f"lost: {report['lost']}")
    return EXIT_OK
