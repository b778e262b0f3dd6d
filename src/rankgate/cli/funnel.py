"""`rankgate funnel BENCH`: where each relevant document is lost on its way through a system's stages."""

from __future__ import annotations

import json

from rankgate.cli.base import EXIT_OK, emit
from rankgate.core.errors import InputError
from rankgate.core.text import cut_list, more_tail, visible


def register(sub) -> None:
    f = sub.add_parser("funnel", help="each relevant document's path through a pipeline's stages (retrieve, "
                       "rerank, context): recall and losses per stage")
    f.add_argument("benchmark", help="a benchmark folder whose benchmark.toml declares [[pipeline]] tables")
    f.add_argument("--pipeline", action="append", default=[], metavar="NAME",
                   help="show only this pipeline (repeatable; default: every pipeline)")
    f.add_argument("--query", action="append", default=[], metavar="QUERY",
                   help="per-query paths only for this query (repeatable; default: every query)")
    f.add_argument("--stages", action="append", default=[], metavar="[NAME=]FILE",
                   help="a JSONL run whose rankings carry a 'stage' (repeatable): one pipeline each, its stages "
                   "in the order they first appear, uncut (beside the manifest's [[pipeline]] tables)")
    f.add_argument("--rel-level", type=int, help="grade >= N counts as relevant (default: the manifest's, else 1)")
    f.add_argument("--acl", metavar="FILE", help="who may see which document (default: the manifest's acl)")
    f.add_argument("--format", choices=("json", "table"), default="json")
    f.set_defaults(func=cmd_funnel)


def funnel_data(args) -> dict:
    from rankgate.core.bundle import load_bundle
    from rankgate.core.funnel import bundle_funnels

    from rankgate.core.funnel import has_pipelines, run_pipelines

    bundle = load_bundle(benchmark=args.benchmark, acl=args.acl)
    m = bundle.manifest
    extra = _staged(args.stages)
    staged_runs = [p.name for p in run_pipelines(bundle.runs)] if m is not None else []
    if m is None or not (has_pipelines(m, bundle.runs) or extra):
        raise InputError(str(m.path if m else args.benchmark), "no [[pipeline]] declared: name a system's "
                         "stages in order (see docs/formats.md, \"Pipelines\"), or list a staged JSONL run "
                         "under runs")
    level = args.rel_level if args.rel_level is not None else m.rel_level
    wanted = list(dict.fromkeys(args.pipeline)) or None
    funnels = bundle_funnels(bundle, level, wanted) if has_pipelines(m, bundle.runs) else {}
    if extra:
        from rankgate.core.funnel import funnel, relevant_of

        rel = relevant_of(bundle.qrels, level, [q for q in bundle.qrels.query_ids if q not in bundle.no_answer])
        for p in extra:
            if p.name in funnels:
                raise InputError("--stages", f"a pipeline named {p.name!r} is declared already: name it NAME=FILE")
            if wanted is None or p.name in wanted:
                funnels[p.name] = funnel(p, rel, bundle.access)
    for name in wanted or []:
        if name not in funnels:
            raise InputError("--pipeline", f"no pipeline named {name!r} (declared: "
                             f"{', '.join([p.get('name', '?') for p in m.pipelines] + staged_runs + [p.name for p in extra])})")
    unknown = [q for q in args.query if q not in bundle.qrels.query_ids]
    if unknown:
        raise InputError("--query", f"query {unknown[0]!r} is not in the qrels")
    out = {"benchmark": m.name, "rel_level": level, "pipelines": {}}
    for name, f in funnels.items():
        d = f.as_dict()
        if args.query:
            d["per_query"] = [r for r in d["per_query"] if r["query"] in set(args.query)]
        out["pipelines"][name] = d
    if bundle.access is not None:
        out["permissions"] = bundle.access.summary()
    return out


def _staged(specs: list[str]) -> list:
    """--stages [NAME=]FILE: a pipeline per staged JSONL run, named NAME or by the file's stem."""
    from rankgate.core.formats import split_run_spec
    from rankgate.core.formats.trec import run_name_from_path
    from rankgate.core.funnel import Pipeline, Stage, read_stage_file

    out = []
    for spec in specs:
        name, path = split_run_spec(spec)
        stages = read_stage_file(path)
        if not stages:
            raise InputError(path, "no ranking: expected {\"query\", \"stage\", \"ranking\"} lines")
        out.append(Pipeline(name or run_name_from_path(path), [Stage(s, None, r, path) for s, r in stages.items()],
                            path))
    return out


def funnel_table(data: dict, width: int = 100) -> str:
    """Per pipeline: each stage's depth, recall, relevant documents present and lost; then each query's
    relevant documents, rank by stage, and where each was lost."""
    lines: list[str] = []
    for name, f in data["pipelines"].items():
        stages = [s["name"] for s in f["stages"]]
        lines.append(f"pipeline {visible(name)}: {f['relevant']} relevant documents over {f['queries']} queries, "
                     f"{f['reached_context']} reach {visible(stages[-1])}")
        rows = [["stage", "depth", "recall", "present", "lost here", "not from the stage before"]]
        for s in f["stages"]:
            n = s["name"]
            ns = f["not_subset"].get(n)
            rows.append([visible(n), str(s["depth"] or "all"), f"{f['recall'][n]:.3f}", str(f["present"][n]),
                         str(f["lost"][n]), f"{ns['documents']} docs in {ns['queries']} queries" if ns else "-"])
        if f.get("leaks"):
            rows[0].append("leaks")
            for r, s in zip(rows[1:], f["stages"]):
                r.append(str(f["leaks"][s["name"]]))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            lines.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                          enumerate(zip(r, widths))).rstrip())
        for n, qs in (f.get("no_ranking_detail") or {}).items():
            shown, more = cut_list([visible(q) for q in qs], max(width - 40, 20))
            lines.append(f"  no ranking at {visible(n)} for {len(qs)} queries (counted as retrieving nothing): "
                         + ", ".join(shown) + more_tail(more))
        lines.append("")
        for q in f["per_query"]:
            docs = q["documents"]
            recall = " ".join(f"{q['recall'][s]:.2f}" for s in stages)
            lines.append(f"  {visible(q['query'])}  recall by stage {recall}"
                         + (f"  (restricted: {', '.join(visible(d) for d in q['restricted'])})"
                            if q.get("restricted") else ""))
            for d in docs:
                path = " -> ".join(f"{visible(s)} {d['ranks'][s] if d['ranks'][s] else '-'}" for s in stages)
                end = "reached " + visible(stages[-1]) if d["reached_context"] else f"lost at {visible(d['dropped_at'])}"
                lines.append(f"    {visible(d['doc'])} (grade {d['grade']}): {path}: {end}"[:max(width, 40)])
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def cmd_funnel(args) -> int:
    data = funnel_data(args)
    if args.format == "table":
        from rankgate.cli.tables import table_width

        emit(funnel_table(data, table_width()))
    else:
        emit(json.dumps(data, indent=2))
    return EXIT_OK


# ---- compare: funnels side by side, and leaks -------------------------------------------------------

def compare_extras(bundle, policy, baseline: str, candidates: list[str], perm) -> dict:
    """What `rankgate compare` adds with pipelines (each candidate's funnel beside the baseline's) and with an
    ACL (each run's leaks); {} without either."""
    out: dict = {}
    from rankgate.core.funnel import has_pipelines

    if has_pipelines(bundle.manifest, bundle.runs):
        from rankgate.core.funnel import bundle_funnels, side_by_side

        found = bundle_funnels(bundle, policy.checks.rel_level, [baseline, *candidates])
        if found:
            out["funnel"] = {c: side_by_side(found.get(baseline), found.get(c)) for c in candidates}
    if perm is not None:
        out["permissions"] = perm.as_dict()
    return out


def compare_extras_table(data: dict) -> str:
    """The funnels (recall at each stage, baseline -> candidate) and leak counts, for the compare table."""
    lines: list[str] = []
    for cand, f in (data.get("funnel") or {}).items():
        b, c = f.get("baseline"), f.get("candidate")
        if not b and not c:
            continue
        lines.append(f"funnel: {visible(data['baseline'])} -> {visible(cand)} (recall at each stage; relevant "
                     "documents lost there)")
        stages = list(dict.fromkeys([s["name"] for s in (b or c)["stages"]] + [s["name"] for s in (c or b)["stages"]]))
        rows = [["stage", "baseline", "candidate", "lost b", "lost c"]]
        for s in stages:
            def cell(x, key, fmt):
                return fmt(x[key][s]) if x and s in x[key] else "-"
            rows.append([visible(s), cell(b, "recall", "{:.3f}".format), cell(c, "recall", "{:.3f}".format),
                         cell(b, "lost", str), cell(c, "lost", str)])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines += ["  " + "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
                  for r in rows]
        lost = f.get("lost_where_baseline_kept") or []
        if lost:
            lines.append(f"  lost where the baseline kept them: {len(lost)} relevant documents, e.g. "
                         + "; ".join(f"{visible(x['doc'])} for {visible(x['query'])} at {visible(x['stage'])}"
                                     for x in lost[:3]))
    perm = data.get("permissions")
    if perm:
        leaks = ", ".join(f"{visible(run)} {x['count']}" for run, x in perm["leaks"].items())
        lines.append(f"permission leaks (documents returned to users who may not see them): {leaks}")
    return ("\n\n" + "\n".join(lines) + "\n") if lines else ""
