"""Where evidence disappears: a system's stages (retrieve, rerank, context) and each relevant document's path.

A pipeline is declared in benchmark.toml, one table per system:

    [[pipeline]]
    name = "bm25-plain"                       # the system; a gate's run of this name gets its funnel
    stages = [
      {name = "retrieve", run = "runs/plain-retrieve.jsonl", depth = 20},
      {name = "rerank",   run = "runs/plain-rerank.jsonl",   depth = 10},
      {name = "context",  run = "runs/plain-context.jsonl",  depth = 3},
    ]

or with one JSONL file whose lines carry a `stage` ({"query", "stage", "ranking"}):

    [[pipeline]]
    name = "bm25-prf"
    file = "runs/prf-stages.jsonl"
    stages = [{name = "retrieve", depth = 20}, {name = "rerank", depth = 10}, {name = "context", depth = 3}]

Each stage's ranking is cut at its depth (the whole ranking without one). For each
relevant document of each query: its rank at each stage, the stage that dropped it
(the first stage it is absent from, when it does not reach the last stage; the
first stage when it was never retrieved), and whether it reached the last stage
(the context). Recall at a stage is the share of a query's relevant documents
present there, averaged over the queries. A stage that ranks a document its
previous stage did not have is allowed (rerankers may add documents) and reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rankgate.core.errors import InputError, refuse_unknown_keys
from rankgate.core.formats.corpus import json_line
from rankgate.core.formats.staged import ranking_order, stage_line
from rankgate.core.formats.textio import ASCII_SPACE, numbered_lines, read_text, shorten

PIPELINE_KEYS = {"name", "stages", "file"}
STAGE_KEYS = {"name", "run", "depth"}


@dataclass
class Stage:
    name: str
    depth: int | None
    rankings: dict[str, list[str]]  # query -> documents, best first, cut at depth
    source: str = ""


@dataclass
class Pipeline:
    name: str
    stages: list[Stage]
    source: str = ""

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]


# ---- reading ------------------------------------------------------------------------------------

def read_stage_file(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """A JSONL run whose rankings carry a `stage`: stage -> query -> documents (a "meta" first line is allowed)."""
    path = str(path)
    out: dict[str, dict[str, list[str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, raw in numbered_lines(read_text(path)):
        if not raw.strip(ASCII_SPACE):
            continue
        obj = json_line(path, raw, lineno, strict=False)
        if "meta" in obj:
            continue
        qid, stage, ranking = stage_line(path, lineno, obj)
        if (stage, qid) in seen:
            raise InputError(path, f"query {shorten(qid)} has two rankings at stage {shorten(stage)} "
                             f"(first at line {seen[stage, qid]})", line=lineno)
        seen[stage, qid] = lineno
        out.setdefault(stage, {})[qid] = ranking_order(ranking, path, lineno)
    return out


def _read_run(path: str) -> dict[str, list[str]]:
    from rankgate.core.formats import read_runs

    runs = read_runs(path)
    if len(runs) != 1:
        raise InputError(path, f"a stage reads one run; this file holds {len(runs)}")
    return runs[0].rankings()


def _depth(v, where: str, mpath: str) -> int | None:
    if v is None:
        return None
    from rankgate.core.benchmark import MAX_K

    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_K:  # 1e20 is no depth a stage has
        raise InputError(mpath, f"{where}: 'depth' must be a whole number from 1 to {MAX_K}, found {v!r}")
    return v


def parse_pipelines(tables: list, folder: Path, mpath: str) -> list[Pipeline]:
    """The manifest's [[pipeline]] tables, read with their stage runs."""
    out: list[Pipeline] = []
    for i, t in enumerate(tables):
        where = f"pipeline[{i}]"
        if not isinstance(t, dict):
            raise InputError(mpath, f"{where} must be a table with 'name' and 'stages'")
        refuse_unknown_keys(t, PIPELINE_KEYS, mpath, where)
        name = t.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(mpath, f"{where}: 'name' must name the system, e.g. \"bm25-rerank\"")
        if any(p.name == name for p in out):
            raise InputError(mpath, f"{where}: two pipelines are named {name!r}")
        stages = t.get("stages")
        if not isinstance(stages, list) or not stages or not all(isinstance(s, dict) for s in stages):
            raise InputError(mpath, f"{where}: 'stages' must be a list of tables {{name, run, depth}}, in order")
        by_stage = None
        if "file" in t:
            if not isinstance(t["file"], str) or not t["file"]:
                raise InputError(mpath, f"{where}: 'file' must name a JSONL run whose rankings carry 'stage'")
            by_stage = read_stage_file(folder / t["file"])
        built: list[Stage] = []
        for j, s in enumerate(stages):
            sw = f"{where}.stages[{j}]"
            refuse_unknown_keys(s, STAGE_KEYS, mpath, sw)
            sname = s.get("name")
            if not isinstance(sname, str) or not sname:
                raise InputError(mpath, f"{sw}: 'name' must name the stage, e.g. \"rerank\"")
            if any(b.name == sname for b in built):
                raise InputError(mpath, f"{sw}: stage {sname!r} appears twice in pipeline {name!r}")
            depth = _depth(s.get("depth"), sw, mpath)
            if by_stage is not None:
                if "run" in s:
                    raise InputError(mpath, f"{sw}: 'run' and the pipeline's 'file' both give this stage; keep one")
                if sname not in by_stage:
                    raise InputError(str(folder / t["file"]), f"no ranking has stage {sname!r} (stages found: "
                                     f"{', '.join(sorted(by_stage)) or 'none'})")
                rankings, src = by_stage[sname], str(folder / t["file"])
            else:
                run = s.get("run")
                if not isinstance(run, str) or not run:
                    raise InputError(mpath, f"{sw}: 'run' must name the stage's run file")
                rankings, src = _read_run(str(folder / run)), str(folder / run)
            if depth is not None:
                rankings = {q: d[:depth] for q, d in rankings.items()}
            built.append(Stage(sname, depth, rankings, src))
        if by_stage is not None:
            extra = sorted(set(by_stage) - {b.name for b in built})
            if extra:
                raise InputError(str(folder / t["file"]), f"stage {extra[0]!r} is not among the pipeline's stages "
                                 f"({', '.join(b.name for b in built)})")
        out.append(Pipeline(name, built, mpath))
    return out


def manifest_pipelines(manifest) -> list[Pipeline]:
    if manifest is None or not getattr(manifest, "pipelines", None):
        return []
    return parse_pipelines(manifest.pipelines, manifest.folder, str(manifest.path))


def is_staged(run) -> bool:
    """A run read from a staged JSONL file (core/formats/staged.staged_run: scored as its final stage)."""
    meta = getattr(run, "meta", None)
    return isinstance(meta, dict) and bool(meta.get("stages_in_file")) and "scored_stage" in meta


def run_pipelines(runs: dict) -> list[Pipeline]:
    """A pipeline per staged JSONL run among `runs` (name -> Run), named as the run: its stages in the order
    they first appear in the file, uncut (give depths with a [[pipeline]] table and `file =` instead)."""
    out = []
    for name, run in runs.items():
        if is_staged(run):
            by_stage = read_stage_file(run.path)
            out.append(Pipeline(name, [Stage(s, None, r, run.path) for s, r in by_stage.items()], run.path))
    return out


def all_pipelines(manifest, runs: dict) -> list[Pipeline]:
    """The manifest's [[pipeline]] tables, then a pipeline for each staged run no table names."""
    declared = manifest_pipelines(manifest)
    names = {p.name for p in declared}
    return declared + [p for p in run_pipelines({n: r for n, r in runs.items() if n not in names})]


def has_pipelines(manifest, runs: dict) -> bool:
    """Whether a funnel can be drawn: a [[pipeline]] table, or a staged run."""
    return bool(manifest is not None and getattr(manifest, "pipelines", None)) or any(map(is_staged, runs.values()))


# ---- the funnel ---------------------------------------------------------------------------------

@dataclass
class DocPath:
    doc: str
    grade: int
    ranks: list[int | None]  # per stage: 1-based rank within the stage's depth, or None
    dropped_at: str | None  # the stage that lost it (None: it reached the last stage)
    reached: bool  # present at the last stage (the context)

    def as_dict(self, stages: list[str]) -> dict:
        return {"doc": self.doc, "grade": self.grade, "ranks": dict(zip(stages, self.ranks)),
                "dropped_at": self.dropped_at, "reached_context": self.reached}


@dataclass
class Funnel:
    pipeline: str
    stages: list[str]
    depths: list[int | None]
    paths: dict[str, list[DocPath]]  # query -> its relevant documents' paths
    added: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # stage -> query -> docs not in the stage before
    leaks: dict[str, int] = field(default_factory=dict)  # stage -> documents ranked that their user may not see
    restricted: dict[str, list[str]] = field(default_factory=dict)  # query -> relevant docs its user may not see
    sources: list[str] = field(default_factory=list)  # the stage files read, in order (a receipt hashes them)
    no_ranking: dict[str, list[str]] = field(default_factory=dict)  # stage -> queries it has no ranking for
    # stage -> query -> the documents there nobody judged (when `funnel` was given the judged pairs):
    # what could still change a stage's recall (core/bounds.py)
    unjudged: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def query_recall(self, qid: str) -> list[float]:
        ps = self.paths.get(qid, [])
        if not ps:
            return [0.0] * len(self.stages)
        return [sum(p.ranks[i] is not None for p in ps) / len(ps) for i in range(len(self.stages))]

    def recall(self, queries: list[str] | None = None) -> dict[str, float]:
        """Macro recall at each stage over queries with at least one relevant document."""
        qs = [q for q in (queries if queries is not None else self.paths) if self.paths.get(q)]
        if not qs:
            return {s: 0.0 for s in self.stages}
        per = [self.query_recall(q) for q in qs]
        return {s: sum(r[i] for r in per) / len(per) for i, s in enumerate(self.stages)}

    def lost(self) -> dict[str, int]:
        """How many relevant documents each stage dropped (over every query)."""
        out = {s: 0 for s in self.stages}
        for ps in self.paths.values():
            for p in ps:
                if p.dropped_at is not None:
                    out[p.dropped_at] += 1
        return out

    def present(self) -> dict[str, int]:
        """How many relevant documents each stage holds (over every query)."""
        return {s: sum(p.ranks[i] is not None for ps in self.paths.values() for p in ps)
                for i, s in enumerate(self.stages)}

    def summary(self) -> dict:
        total = sum(len(ps) for ps in self.paths.values())
        out = {"pipeline": self.pipeline, "stages": [{"name": s, "depth": d} for s, d in zip(self.stages, self.depths)],
               "queries": sum(1 for ps in self.paths.values() if ps), "relevant": total,
               "recall": self.recall(), "present": self.present(), "lost": self.lost(),
               "reached_context": sum(p.reached for ps in self.paths.values() for p in ps),
               "not_subset": {s: {"queries": len(x), "documents": sum(len(v) for v in x.values())}
                              for s, x in self.added.items() if x}}
        if self.leaks:
            out["leaks"] = self.leaks
        if any(self.no_ranking.values()):  # a stage file that lacks a query: said, not silently "lost"
            out["no_ranking"] = {s: len(qs) for s, qs in self.no_ranking.items() if qs}
        return out

    def as_dict(self) -> dict:
        out = self.summary()
        out["per_query"] = [{"query": q, "recall": dict(zip(self.stages, self.query_recall(q))),
                             "documents": [p.as_dict(self.stages) for p in ps],
                             **({"restricted": self.restricted[q]} if q in self.restricted else {})}
                            for q, ps in self.paths.items()]
        out["not_subset_detail"] = {s: x for s, x in self.added.items() if x}
        if any(self.no_ranking.values()):
            out["no_ranking_detail"] = {s: qs for s, qs in self.no_ranking.items() if qs}
        return out


def funnel(pipeline: Pipeline, relevant: dict[str, dict[str, int]], access=None,
           judged: dict[str, set[str]] | None = None) -> Funnel:
    """Each relevant document's path through the stages. `relevant`: query -> {doc: grade} (relevant only),
    for the queries to report. With `access` (core.acl.Access), what a query's user may not see leaves the
    relevant set and every stage's ranking (counted per stage as leaks). With `judged` (query -> every
    document judged, at any grade), each stage's documents nobody judged are kept too (`unjudged`)."""
    names = pipeline.stage_names
    rankings = []
    leaks = {s: 0 for s in names} if access is not None else {}
    restricted: dict[str, list[str]] = {}
    for st in pipeline.stages:
        if access is not None:
            seen = {}
            for q, docs in st.rankings.items():
                vis = [d for d in docs if access.may_see(q, d)]
                leaks[st.name] += len(docs) - len(vis)
                seen[q] = vis
            rankings.append(seen)
        else:
            rankings.append(st.rankings)
    paths: dict[str, list[DocPath]] = {}
    for q, rel in relevant.items():
        if access is not None:
            hidden = sorted(d for d in rel if not access.may_see(q, d))
            if hidden:
                restricted[q] = hidden
            rel = {d: g for d, g in rel.items() if access.may_see(q, d)}
        pos = [{d: i + 1 for i, d in enumerate(r.get(q, []))} for r in rankings]
        out = []
        for d, g in sorted(rel.items(), key=lambda x: (-x[1], x[0])):
            ranks = [p.get(d) for p in pos]
            reached = ranks[-1] is not None
            dropped = None if reached else names[next(i for i, r in enumerate(ranks) if r is None)]
            out.append(DocPath(d, g, ranks, dropped, reached))
        paths[q] = out
    added: dict[str, dict[str, list[str]]] = {}
    for i in range(1, len(names)):
        before, now = rankings[i - 1], rankings[i]
        got = {}
        for q in relevant:
            prev = set(before.get(q, []))
            new = [d for d in now.get(q, []) if d not in prev]
            if new:
                got[q] = new
        added[names[i]] = got
    no_ranking = {n: [q for q in relevant if q not in r] for n, r in zip(names, rankings)}
    unjudged = {} if judged is None else {
        n: {q: got for q in relevant if (got := [d for d in r.get(q, []) if d not in judged.get(q, ())])}
        for n, r in zip(names, rankings)}
    return Funnel(pipeline.name, names, [s.depth for s in pipeline.stages], paths, added, leaks, restricted,
                  list(dict.fromkeys(s.source for s in pipeline.stages)), no_ranking, unjudged)


def relevant_of(qrels, rel_level: int, queries: list[str]) -> dict[str, dict[str, int]]:
    """query -> {doc: grade} of its relevant documents (grade >= rel_level), for the queries given."""
    wanted = set(queries)
    out: dict[str, dict[str, int]] = {q: {} for q in queries}
    qn, dn = qrels.catalog.queries.names, qrels.catalog.docs.names
    for qc, dc, g in zip(qrels.q.tolist(), qrels.doc.tolist(), qrels.grade.tolist()):
        if g >= rel_level and qn[qc] in wanted:
            out[qn[qc]][dn[dc]] = g
    return out


def bundle_funnels(bundle, rel_level: int, names: list[str] | None = None, queries: list[str] | None = None
                   ) -> dict[str, Funnel]:
    """The funnels of a benchmark's pipelines (those named, else all) on its answerable queries."""
    pipes = all_pipelines(bundle.manifest, bundle.runs)
    if names is not None:
        pipes = [p for p in pipes if p.name in names]
    if queries is None:
        queries = [q for q in bundle.qrels.query_ids if q not in bundle.no_answer]
    rel = relevant_of(bundle.qrels, rel_level, queries)
    access = getattr(bundle, "access", None)
    judged: dict[str, set[str]] = {}
    qn, dn = bundle.qrels.catalog.queries.names, bundle.qrels.catalog.docs.names
    for qc, dc in zip(bundle.qrels.q.tolist(), bundle.qrels.doc.tolist()):
        judged.setdefault(qn[qc], set()).add(dn[dc])
    return {p.name: funnel(p, rel, access, judged) for p in pipes}


# ---- side by side, and the gate's stage rules ---------------------------------------------------

def stage_losses(baseline: Funnel, candidate: Funnel, queries: list[str], stage: str | None = None) -> list[dict]:
    """Relevant documents of `queries` the baseline keeps at a stage and the candidate does not have there
    (the stages both pipelines name; only `stage` when given)."""
    common = [s for s in candidate.stages if s in baseline.stages and (stage is None or s == stage)]
    out = []
    for q in queries:
        b = {p.doc: p for p in baseline.paths.get(q, [])}
        for cp in candidate.paths.get(q, []):
            bp = b.get(cp.doc)
            if bp is None:
                continue
            for s in common:
                br, cr = bp.ranks[baseline.stages.index(s)], cp.ranks[candidate.stages.index(s)]
                if br is not None and cr is None:
                    out.append({"query": q, "doc": cp.doc, "stage": s, "baseline_rank": br})
                    break
    return out


def side_by_side(baseline: Funnel | None, candidate: Funnel | None, queries: list[str] | None = None) -> dict:
    """Both funnels' summaries, and the relevant documents the candidate loses where the baseline kept them."""
    out = {"baseline": baseline.summary() if baseline else None, "candidate": candidate.summary() if candidate else None}
    if baseline and candidate:
        qs = queries if queries is not None else list(candidate.paths)
        out["lost_where_baseline_kept"] = stage_losses(baseline, candidate, qs)
    return out
