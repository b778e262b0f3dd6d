"""JSONL runs read lean (core/formats/jsonl_lean.py) give exactly what the general reader gives."""

import pytest

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from rankgate.cli import main
from tests.conftest import write
from tests.unit.test_fast import POLICY, every_measure, qrels_st


def run_cmd(capsys, monkeypatch, lean, *argv):
    import rankgate.cli.evaluate as evaluate

    monkeypatch.setattr(evaluate, "FAST_MIN_BYTES", 0)  # these files are small: read them lean all the same
    monkeypatch.setenv("RANKGATE_FAST", "1" if lean else "0")
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


DOCS = [f"d{i}" for i in range(14)] + ["d\u00e9", "D1"]
item = st.one_of(st.sampled_from(DOCS),
                 st.builds(lambda d, s: {"doc": d, "score": s}, st.sampled_from(DOCS),
                           st.sampled_from([0.5, 1, 1.5, 2.0, 3, -1.0])),
                 st.builds(lambda d: {"doc": d}, st.sampled_from(DOCS)))
ranking_st = st.lists(item, max_size=14).map(  # a list is either IDs or objects, as a writer makes it
    lambda r: [x if isinstance(x, dict) else {"doc": x, "score": len(r) - i} for i, x in enumerate(r)]
    if any(isinstance(x, dict) for x in r) else r)
run_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "10", "7"]), ranking_st, min_size=1, max_size=4)


def jsonl(run: dict, meta: bool, latency: bool) -> str:
    lines = [json.dumps({"meta": {"name": "named"}})] if meta else []
    for i, (q, ranking) in enumerate(run.items()):
        line = {"query": q, "ranking": ranking}
        if latency:
            line["latency_ms"] = 10 + i
        lines.append(json.dumps(line))
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=run_st, other=run_st, qrels=qrels_st, meta=st.booleans(), latency=st.booleans(), deep=st.booleans())
def test_lean_jsonl_runs_score_gate_compare_and_validate_as_the_general_reader(
        tmp_path, capsys, monkeypatch, run, other, qrels, meta, latency, deep):
    """Ties (scores equal, broken by document ID), duplicates, empty rankings, bare ID lists, objects
    without a score, a metadata line and latencies: the same output, exit code and messages."""
    a = write(tmp_path / "a.jsonl", jsonl(run, meta, latency))
    b = write(tmp_path / "b.jsonl", jsonl(other, False, latency))
    q = write(tmp_path / "q.trec", "".join(f"{qid} 0 {d} {g}\n" for qid, ds in qrels.items() for d, g in ds.items()))
    policy = write(tmp_path / "policy.toml", POLICY.replace('"Judged@3"', '"Judged@3", "AP"') if deep else POLICY)
    common = ["--qrels", q, "--runs", f"a={a}", "--runs", f"b={b}", "--k", "3"]
    lenient = ["--missing-queries", "zero", "--short-rankings", "allow"]
    for argv in (["score", *common, "-m", every_measure(), "--format", "json"],
                 ["score", *common, *lenient, "-m", "AP,P@2,RR,NumRet", "--format", "trec", "-q"],
                 ["gate", *common, *lenient, "--baseline", "a", "--candidate", "b", "--policy", policy,
                  "--as-of", "2026-06-01"],
                 ["gate", *common, "--baseline", "a", "--candidate", "b", "--as-of", "2026-06-01"],
                 ["compare", *common, *lenient, "--baseline", "a", "-m", "AP,nDCG@5,RR"],
                 ["validate", *common, "--format", "json"]):
        lean = run_cmd(capsys, monkeypatch, True, *argv)
        assert lean == run_cmd(capsys, monkeypatch, False, *argv), argv[0]


def test_a_lean_jsonl_run_keeps_judged_rows_only(tmp_path):
    """What is kept: every ranking's length, the rows of judged documents (for any query) with their
    rank in trec_eval order, the duplicates in file order, the top unjudged rows when asked."""
    from rankgate.core.formats import read_qrels
    from rankgate.core.formats.jsonl_lean import read_lean_jsonl

    qrels = read_qrels(write(tmp_path / "q.trec", "q1 0 d4 1\nq2 0 d3 2\n"))
    lines = [{"meta": {"name": "x"}},
             {"query": "q2", "ranking": ["d1", "d3", "d4", "d3"], "latency_ms": 5},
             {"query": "q1", "ranking": [{"doc": "d9", "score": 1}, {"doc": "d4", "score": 2},
                                         {"doc": "d7", "score": 2}, {"doc": "d3", "score": 0}]},
             {"query": "q3", "ranking": []}]
    run = write(tmp_path / "r.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    lean = read_lean_jsonl(str(run), None, qrels, keep_top=2)
    names = qrels.catalog.docs.names
    assert lean.name == "x" and lean.qnames == ["q2", "q1", "q3"] and lean.num_ret.tolist() == [4, 4, 0]
    assert sorted((lean.qnames[q], names[d], r) for q, d, r in zip(lean.jq, lean.jdoc, lean.jrank)) == [
        ("q1", "d3", 3), ("q1", "d4", 1), ("q2", "d3", 1), ("q2", "d3", 3), ("q2", "d4", 2)]  # d7 > d4 on a tie
    assert lean.duplicates == [(2, "q2", "d3")] and lean.n_duplicates == 1
    assert sorted(zip(lean.top_q.tolist(), lean.top_docs, lean.top_rank.tolist())) == [(0, "d1", 0), (1, "d7", 0)]
    assert lean.latency_ms == {"q2": 5.0} and len(qrels.catalog.docs) == 2  # nothing unjudged interned


def test_a_forced_run_format_is_not_second_guessed(tmp_path, capsys, monkeypatch):
    """--run-format trec on a JSONL file reads it as TREC (and says what is wrong), on both paths."""
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    run = write(tmp_path / "r.jsonl", json.dumps({"query": "q1", "ranking": ["d1"]}) + "\n")
    for fmt in ("trec", "jsonl", "json"):
        argv = ["score", "--qrels", q, "--runs", run, "--run-format", fmt, "--k", "1"]
        lean = run_cmd(capsys, monkeypatch, True, *argv)
        assert lean == run_cmd(capsys, monkeypatch, False, *argv)
        assert lean[0] == (0 if fmt == "jsonl" else 2)


def test_bad_jsonl_runs_are_refused_with_the_general_readers_words(tmp_path, capsys, monkeypatch):
    q = write(tmp_path / "q.trec", "q1 0 d1 1\n")
    for i, text in enumerate(['{"query": "q1", "ranking": [1]}\n', '{"query": "q1", "ranking": "d1"}\n',
                              '{"query": "q1", "ranking": ["d1"]}\n{"query": "q1", "ranking": []}\n',
                              '{"query": "q1", "ranking": [{"doc": "d1", "score": NaN}]}\n',
                              '{"query": "q1", "ranking": ["d1"], "latency_ms": -1}\n',
                              '{"query": "q1", "ranking": ["d1"]}\n{"meta": {}}\n', '{"meta": {}}\n',
                              '{"query": "q1", "ranking": ["d1"]}\n{"query": "q2", "ranking": ["\\ud800"]}\n']):
        run = write(tmp_path / f"r{i}.jsonl", text)
        argv = ["score", "--qrels", q, "--runs", run, "--k", "1"]
        lean = run_cmd(capsys, monkeypatch, True, *argv)
        assert lean == run_cmd(capsys, monkeypatch, False, *argv)
        assert lean[0] == 2 and lean[2].count("\n") == 1 and "Traceback" not in lean[2], text
