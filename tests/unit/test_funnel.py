"""The funnel: each relevant document's path through a pipeline's stages, on a hand-worked example."""

import json

import pytest

from rankgate.core.benchmark import load_manifest
from rankgate.core.bundle import load_bundle
from rankgate.core.errors import InputError
from rankgate.core.funnel import bundle_funnels, stage_losses
from tests.conftest import write

# q1's relevant documents: a (3), c (2), b (1), d (1, never retrieved); q2's: x (1).
JUDGMENTS = [("q1", "a", 3), ("q1", "b", 1), ("q1", "c", 2), ("q1", "d", 1), ("q1", "n1", 0), ("q2", "x", 1)]
RETRIEVE = {"q1": ["a", "n1", "b", "c", "n2"], "q2": ["n3", "x"]}  # depth 4 cuts n2
RERANK = {"q1": ["b", "a"], "q2": ["n4", "x"]}  # n4 was not retrieved: not a subset, reported
CONTEXT = {"q1": ["a"], "q2": ["n4"]}


def _jsonl(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def bench(tmp_path, *, staged: bool = False, extra: str = "", candidate=None):
    write(tmp_path / "judgments.jsonl", _jsonl({"query": q, "doc": d, "grade": g} for q, d, g in JUDGMENTS))
    for name, r in (("retrieve", RETRIEVE), ("rerank", RERANK), ("context", CONTEXT)):
        write(tmp_path / f"{name}.jsonl", _jsonl({"query": q, "ranking": docs} for q, docs in r.items()))
    if staged:
        write(tmp_path / "stages.jsonl", _jsonl({"query": q, "stage": s, "ranking": docs}
                                                for s, r in (("retrieve", RETRIEVE), ("rerank", RERANK),
                                                             ("context", CONTEXT)) for q, docs in r.items()))
        pipe = ('[[pipeline]]\nname = "retrieve"\nfile = "stages.jsonl"\n'
                'stages = [{name = "retrieve", depth = 4}, {name = "rerank", depth = 2}, {name = "context", depth = 1}]\n')
    else:
        pipe = ('[[pipeline]]\nname = "retrieve"\nstages = [\n'
                '  {name = "retrieve", run = "retrieve.jsonl", depth = 4},\n'
                '  {name = "rerank", run = "rerank.jsonl", depth = 2},\n'
                '  {name = "context", run = "context.jsonl", depth = 1},\n]\n')
    write(tmp_path / "benchmark.toml", 'name = "f"\nk = 2\nqrels = "judgments.jsonl"\nruns = ["retrieve.jsonl"]\n'
          + extra + pipe)
    return tmp_path


@pytest.mark.parametrize("staged", [False, True], ids=["stage-runs", "one-staged-jsonl"])
def test_funnel_arithmetic_by_hand(tmp_path, staged):
    b = load_bundle(benchmark=str(bench(tmp_path, staged=staged)))
    f = bundle_funnels(b, 1)["retrieve"]
    assert f.stages == ["retrieve", "rerank", "context"] and f.depths == [4, 2, 1]
    paths = {p.doc: p for p in f.paths["q1"]}
    assert paths["a"].ranks == [1, 2, 1] and paths["a"].reached and paths["a"].dropped_at is None
    assert paths["b"].ranks == [3, 1, None] and paths["b"].dropped_at == "context"
    assert paths["c"].ranks == [4, None, None] and paths["c"].dropped_at == "rerank"
    assert paths["d"].ranks == [None, None, None] and paths["d"].dropped_at == "retrieve"
    assert [p.doc for p in f.paths["q1"]] == ["a", "c", "b", "d"]  # by grade, then ID
    (x,) = f.paths["q2"]
    assert x.ranks == [2, 2, None] and x.dropped_at == "context"
    # q1: 3/4, 2/4, 1/4; q2: 1, 1, 0
    assert f.query_recall("q1") == [0.75, 0.5, 0.25]
    assert f.recall() == pytest.approx({"retrieve": 0.875, "rerank": 0.75, "context": 0.125})
    assert f.lost() == {"retrieve": 1, "rerank": 1, "context": 2}
    assert f.present() == {"retrieve": 4, "rerank": 3, "context": 1}
    s = f.summary()
    assert s["relevant"] == 5 and s["reached_context"] == 1 and s["queries"] == 2
    # n4 came from nowhere at rerank: allowed, reported; the context is a subset of the rerank
    assert f.added["rerank"] == {"q2": ["n4"]} and f.added["context"] == {}
    assert s["not_subset"] == {"rerank": {"queries": 1, "documents": 1}}


def test_stage_losses_only_where_the_baseline_kept_it(tmp_path):
    b = load_bundle(benchmark=str(bench(tmp_path)))
    base = bundle_funnels(b, 1)["retrieve"]
    import copy

    cand = copy.deepcopy(base)
    cand.paths["q1"][0].ranks = [1, None, None]  # a: lost at rerank by the candidate, kept by the baseline
    cand.paths["q1"][2].ranks = [3, None, None]  # b: the baseline kept it at rerank too
    lost = stage_losses(base, cand, ["q1", "q2"])
    assert lost == [{"query": "q1", "doc": "a", "stage": "rerank", "baseline_rank": 2},
                    {"query": "q1", "doc": "b", "stage": "rerank", "baseline_rank": 1}]
    assert stage_losses(base, cand, ["q1"], "context") == [{"query": "q1", "doc": "a", "stage": "context",
                                                            "baseline_rank": 1}]
    assert stage_losses(base, base, ["q1", "q2"]) == []


@pytest.mark.parametrize("pipe, message", [
    ('[[pipeline]]\nname = "p"\nstages = [{name = "r"}]\n', "'run' must name the stage's run file"),
    ('[[pipeline]]\nname = "p"\nstages = [{name = "r", run = "retrieve.jsonl", depth = 0}]\n', "'depth'"),
    ('[[pipeline]]\nname = "p"\nstages = [{name = "r", run = "retrieve.jsonl"}, {name = "r", run = "x"}]\n',
     "appears twice"),
    ('[[pipeline]]\nname = "p"\nfile = "retrieve.jsonl"\nstages = [{name = "r"}]\n', "'stage'"),
    ('[[pipeline]]\nname = "p"\nstagez = []\n', "unknown key 'stagez'"),
])
def test_bad_pipelines_name_the_manifest(tmp_path, pipe, message):
    bench(tmp_path)
    write(tmp_path / "benchmark.toml", 'name = "f"\nk = 2\nqrels = "judgments.jsonl"\nruns = ["retrieve.jsonl"]\n'
          + pipe)
    b = load_bundle(benchmark=str(tmp_path))
    with pytest.raises(InputError, match=message):
        bundle_funnels(b, 1)


def test_manifest_keeps_pipeline_tables(tmp_path):
    m = load_manifest(bench(tmp_path))
    assert m.pipelines[0]["name"] == "retrieve" and len(m.pipelines[0]["stages"]) == 3


def _gate(capsys, *argv):
    from rankgate.cli import main

    code = main([str(a) for a in argv])
    return code, capsys.readouterr()


def test_stage_rules_in_the_gate(tmp_path, capsys):
    """The candidate's reranker drops b for the must-pass q1 where the baseline's kept it at rank 1."""
    bench(tmp_path)
    write(tmp_path / "cand-rerank.jsonl", _jsonl([{"query": "q1", "ranking": ["a", "c"]},
                                                  {"query": "q2", "ranking": ["x"]}]))
    write(tmp_path / "benchmark.toml", 'name = "f"\nk = 2\nqrels = "judgments.jsonl"\n'
          'runs = ["base=context.jsonl", "cand=context.jsonl"]\n'
          '[gate]\nshort_rankings = "allow"\nbaseline = "base"\ncandidate = "cand"\nmust_pass = ["q1"]\n'
          '[[gate.rules]]\ncheck = "stage_recall_floor"\nstage = "rerank"\nmin = 0.8\n'
          '[[gate.rules]]\ncheck = "no_stage_loss"\n'
          '[[pipeline]]\nname = "base"\nstages = [{name = "retrieve", run = "retrieve.jsonl", depth = 4},'
          ' {name = "rerank", run = "rerank.jsonl", depth = 2}]\n'
          '[[pipeline]]\nname = "cand"\nstages = [{name = "retrieve", run = "retrieve.jsonl", depth = 4},'
          ' {name = "rerank", run = "cand-rerank.jsonl", depth = 2}]\n')
    code, out = _gate(capsys, "gate", tmp_path)
    assert code == 3, out.err
    r = json.loads(out.out)
    d = {c["name"]: c for c in r["check_details"]}
    # candidate at rerank: q1 a, c of a, b, c, d = 0.5; q2 x = 1: 0.75 < 0.8
    assert d["rerank_recall_floor"]["passed"] is False and d["rerank_recall_floor"]["candidate"] == pytest.approx(0.75)
    assert d["rerank_recall_floor"]["baseline"] == pytest.approx(0.75)  # base: q1 a, b = 0.5; q2 x = 1
    assert d["no_stage_loss"]["passed"] is False
    assert d["no_stage_loss"]["lost"] == [{"query": "q1", "doc": "b", "stage": "rerank", "baseline_rank": 1}]
    assert "b for q1 at rerank (baseline rank 1)" in d["no_stage_loss"]["why"]
    assert r["funnel"]["candidate"]["lost"] == {"retrieve": 1, "rerank": 1}


def test_stage_rule_without_a_pipeline_fails_saying_why(tmp_path, capsys):
    bench(tmp_path)
    write(tmp_path / "benchmark.toml", 'name = "f"\nk = 2\nqrels = "judgments.jsonl"\n'
          'runs = ["base=context.jsonl", "cand=context.jsonl"]\n'
          '[gate]\nshort_rankings = "allow"\nbaseline = "base"\ncandidate = "cand"\n'
          '[[gate.rules]]\ncheck = "no_stage_loss"\n')
    code, out = _gate(capsys, "gate", tmp_path)
    d = json.loads(out.out)["check_details"][0]
    assert code == 3 and d["passed"] is False and "no pipeline for base, cand" in d["why"]


def test_stage_recall_floor_needs_a_stage(tmp_path, capsys):
    bench(tmp_path)
    write(tmp_path / "p.toml", '[[rules]]\ncheck = "stage_recall_floor"\nmin = 0.5\n')
    code, out = _gate(capsys, "gate", tmp_path, "--baseline", "retrieve", "--candidate", "retrieve",
                      "--policy", tmp_path / "p.toml")
    assert code == 2 and "rules[0]: check 'stage_recall_floor' needs 'stage'" in out.err


def test_ops_handbook_funnel_and_stage_rules(capsys, samples):
    """The sample's README: where bm25-plain's and bm25-prf's relevant documents are lost."""
    code, out = _gate(capsys, "funnel", samples / "ops-handbook")
    assert code == 0
    f = json.loads(out.out)["pipelines"]
    assert f["bm25-plain"]["lost"] == {"retrieve": 16, "rerank": 13, "context": 38}
    assert f["bm25-prf"]["lost"] == {"retrieve": 3, "rerank": 13, "context": 47}
    assert f["bm25-plain"]["relevant"] == f["bm25-prf"]["relevant"] == 122
    code, out = _gate(capsys, "gate", samples / "ops-handbook", "--policy", samples / "ops-handbook" / "stages.toml")
    r = json.loads(out.out)
    assert code == 3 and r["checks"]["rerank_recall_floor"] is True
    lost = next(c for c in r["check_details"] if c["name"] == "no_stage_loss")["lost"]
    assert [(x["query"], x["doc"], x["stage"]) for x in lost] == [
        ("q-leaked-key", "ir-security-incident-01", "rerank"), ("q-origin-exposed", "netsec-origin-isolation-02", "context")]


def test_receipt_hashes_stage_files_when_a_stage_rule_decides(capsys, samples, tmp_path):
    receipt = tmp_path / "r.json"
    _gate(capsys, "gate", samples / "ops-handbook", "--policy", samples / "ops-handbook" / "stages.toml",
          "--resamples", "200", "--receipt", receipt)
    stages = [i["path"] for i in json.loads(receipt.read_text())["predicate"]["inputs"] if i["role"] == "stage"]
    assert [p.rsplit("/", 1)[1] for p in stages] == ["bm25-plain-rerank.jsonl", "bm25-plain-context.jsonl",
                                                     "bm25-prf-stages.jsonl"]
    code, out = _gate(capsys, "receipt", "verify", receipt)
    assert code == 0, out.out


def test_funnel_command_reads_a_staged_jsonl_run_and_prints_a_table(tmp_path, capsys):
    bench(tmp_path, staged=True)
    code, out = _gate(capsys, "funnel", tmp_path, "--stages", f"mine={tmp_path / 'stages.jsonl'}", "--pipeline", "mine",
                      "--format", "table")
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0] == "pipeline mine: 5 relevant documents over 2 queries, 1 reach context"
    # uncut stages: n2 stays in retrieve, so c (rank 4) is still there; recall as in the hand-worked example
    assert lines[2].split() == ["retrieve", "all", "0.875", "4", "1", "-"]
    assert lines[3].split() == ["rerank", "all", "0.750", "3", "1", "1", "docs", "in", "1", "queries"]
    assert "    c (grade 2): retrieve 4 -> rerank - -> context -: lost at rerank" in lines
    code, out = _gate(capsys, "funnel", tmp_path, "--stages", tmp_path / "retrieve.jsonl")
    assert code == 2 and "retrieve.jsonl:1: field 'stage' must name the stage" in out.err


def test_compare_shows_the_funnels_side_by_side(capsys, samples):
    code, out = _gate(capsys, "compare", samples / "ops-handbook", "--candidate", "bm25-prf", "--resamples", "200")
    f = json.loads(out.out)["funnel"]["bm25-prf"]
    assert f["baseline"]["pipeline"] == "bm25-plain" and f["candidate"]["pipeline"] == "bm25-prf"
    assert f["baseline"]["lost"]["context"] == 38 and f["candidate"]["lost"]["context"] == 47
    assert {"query": "q-origin-exposed", "doc": "netsec-origin-isolation-02", "stage": "context",
            "baseline_rank": 2} in f["lost_where_baseline_kept"]
    code, out = _gate(capsys, "compare", samples / "ops-handbook", "--candidate", "bm25-prf", "--resamples", "200",
                      "--format", "table")
    table = out.out.split("funnel: bm25-plain -> bm25-prf", 1)[1].splitlines()
    assert table[2].split() == ["retrieve", "0.875", "0.984", "16", "3"]
    assert table[4].split() == ["context", "0.509", "0.546", "38", "47"]


def test_a_staged_jsonl_run_under_runs_is_scored_as_its_final_stage_and_gives_its_funnel(tmp_path, capsys):
    """One JSONL run carrying a stage per ranking, listed under `runs`: scored as its last stage (the context,
    what the generator receives), and `rankgate funnel` shows its stages as a pipeline of the run's name."""
    bench(tmp_path, staged=True)
    write(tmp_path / "benchmark.toml", 'name = "f"\nk = 2\nqrels = "judgments.jsonl"\n'
          'runs = ["staged=stages.jsonl", "context.jsonl"]\n[gate]\nshort_rankings = "allow"\n'
          'baseline = "context"\ncandidate = "staged"\n')
    code, out = _gate(capsys, "score", tmp_path, "--format", "json")
    assert code == 0, out.err
    scored = {r["run"]: r["queries"] for r in json.loads(out.out)["runs"]}
    assert scored["staged"] == scored["context"]
    assert ("run 'staged' carries the stages retrieve, rerank, context: scored as its final stage, context"
            in out.err)
    b = load_bundle(benchmark=str(tmp_path))
    staged, context = b.runs["staged"], b.runs["context"]
    assert staged.meta["scored_stage"] == "context" and staged.meta["stages_in_file"] == ["retrieve", "rerank",
                                                                                        "context"]
    assert {q: staged.ranking(q) for q in ("q1", "q2")} == {q: context.ranking(q) for q in ("q1", "q2")} == CONTEXT
    code, out = _gate(capsys, "gate", tmp_path)
    r = json.loads(out.out)
    assert code == 0, out.err
    assert r["baseline_macro"] == r["candidate_macro"]  # the same context, read both ways
    assert r["funnel"]["candidate"]["stages"] == [{"name": s, "depth": None} for s in ("retrieve", "rerank", "context")]
    code, out = _gate(capsys, "funnel", tmp_path, "--format", "table")
    assert code == 0, out.err
    assert out.out.splitlines()[0] == "pipeline staged: 5 relevant documents over 2 queries, 1 reach context"


def test_a_staged_run_with_a_stage_on_some_rankings_only_is_refused(tmp_path, capsys):
    bench(tmp_path)
    write(tmp_path / "mixed.jsonl", _jsonl([{"query": "q1", "ranking": ["a"]},
                                            {"query": "q2", "stage": "context", "ranking": ["x"]}]))
    code, out = _gate(capsys, "score", "--qrels", tmp_path / "judgments.jsonl", "--runs", tmp_path / "mixed.jsonl")
    assert code == 2 and "mixed.jsonl:2: field 'stage' on this ranking but not on those before" in out.err
    write(tmp_path / "mixed.jsonl", _jsonl([{"query": "q1", "stage": "retrieve", "ranking": ["a"]},
                                            {"query": "q2", "ranking": ["x"]}]))
    code, out = _gate(capsys, "score", "--qrels", tmp_path / "judgments.jsonl", "--runs", tmp_path / "mixed.jsonl")
    assert code == 2 and "mixed.jsonl:2: field 'stage' must name the stage" in out.err
