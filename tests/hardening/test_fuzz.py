"""Property-based fuzzing: whatever the bytes, a reader parses them or raises InputError."""

import pytest

import gzip

from hypothesis import HealthCheck, given, settings, strategies as st

from rankgate.core.benchmark import load_manifest
from rankgate.core.errors import InputError
from rankgate.core.formats import read_qrels, read_runs
from rankgate.core.formats.corpus import read_corpus, read_queries
from rankgate.core.policy import load_policy

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

token = st.sampled_from(["q1", "Q0", "d1", "0", "1", "-1", "1.5", "nan", "#", "#x", "", "\t", " ", "{", "}",
                         '"', "[", "]", ":", ",", "query", "ranking", "meta", "doc", "grade", "1e9", "\u00e9",
                         "\x00", "\r", "query-id\tcorpus-id\tscore"])
line = st.lists(token, max_size=8).map(" ".join)
texty = st.lists(line, max_size=12).map("\n".join).map(lambda s: s.encode("utf-8", "surrogatepass"))
json_like = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=True) | st.text(max_size=4),
                         lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                         max_leaves=12)
payloads = st.one_of(st.binary(max_size=300), texty,
                     json_like.map(lambda v: __import__("json").dumps(v).encode()),
                     st.lists(json_like.map(lambda v: __import__("json").dumps(v)), max_size=4)
                     .map(lambda ls: "\n".join(ls).encode()),
                     texty.map(gzip.compress))


def survive(fn, path):
    try:
        fn(path)
    except InputError as e:
        assert str(e)  # our error, with a message


@pytest.mark.slow
@FUZZ
@given(data=payloads, name=st.sampled_from(["q.trec", "q.json", "q.jsonl", "q.tsv", "q"]))
def test_qrels_reader(tmp_path, data, name):
    p = tmp_path / name
    p.write_bytes(data)
    survive(read_qrels, p)


@FUZZ
@given(data=payloads, name=st.sampled_from(["r.trec", "r.json", "r.jsonl", "r"]))
def test_run_reader(tmp_path, data, name):
    p = tmp_path / name
    p.write_bytes(data)
    survive(read_runs, p)


trec_field = st.sampled_from(["q1", "q2", "Q0", "d1", "d2", "1", "2.5", "-0", "1e3", "inf", "nan", "x", "#c", "",
                              "\u00e9", "\xff", "\x00", "1_0", "0x1"])
trec_line = st.lists(trec_field, min_size=0, max_size=8).map(" ".join)
trec_like = st.lists(trec_line, max_size=10).map(lambda ls: ("\n".join(ls) + "\n").encode("utf-8", "surrogatepass"))


@pytest.mark.slow
@FUZZ
@given(data=st.one_of(trec_like, st.binary(max_size=300), texty), block=st.sampled_from([8, 64, 1 << 20]))
def test_fast_run_reader(tmp_path, monkeypatch, data, block):
    """The fast path either reads a TREC run or hands it to the general reader (None): never another
    error. Whatever it accepts, the general reader accepts with the same queries."""
    import pytest

    pytest.importorskip("pyarrow")
    from rankgate.core.formats import trec_fast as fast

    monkeypatch.setattr(fast, "BLOCK", block)
    p = tmp_path / "r.trec"
    p.write_bytes(data)
    qrels = read_qrels(write_qrels(tmp_path))
    lean = fast.read_lean_run(str(p), "r", qrels)
    if lean is not None:
        general = read_runs(p, "trec")[0]
        names = general.catalog.queries.names
        assert sorted(lean.qnames) == sorted(names[c] for c in general.query_codes)
        assert int(lean.num_ret.sum()) == len(general.q)


def write_qrels(tmp_path):
    q = tmp_path / "q.trec"
    q.write_text("q1 0 d1 1\nq2 0 d2 2\n")
    return q


@pytest.mark.slow
@FUZZ
@given(data=payloads)
def test_queries_and_corpus_readers(tmp_path, data):
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    survive(read_queries, p)
    survive(read_corpus, p)


toml_value = st.one_of(st.integers(-2, 5).map(str), st.sampled_from(['"error"', '"zero"', '"allow"', '"x"', "true",
                                                                      '["R@3"]', '["q1"]', "[1]", "0.5", '"nDCG@10"']))
toml_key = st.sampled_from(["k", "rel_level", "missing_queries", "short_rankings", "measures", "must_pass",
                            "baseline", "candidate", "bogus", "measure", "check", "min", "tolerance", "name", "policy",
                            "qrels", "runs", "name"])
toml_doc = st.lists(st.one_of(st.tuples(toml_key, toml_value).map(lambda kv: f"{kv[0]} = {kv[1]}"),
                              st.sampled_from(["[[rules]]", "[gate]", "= =", "[x"])), max_size=10).map("\n".join)


@pytest.mark.slow
@FUZZ
@given(doc=st.one_of(toml_doc, st.text(max_size=80)))
def test_policy_and_manifest_loaders(tmp_path, doc):
    p = tmp_path / "benchmark.toml"
    p.write_text(doc, encoding="utf-8", errors="surrogatepass") if "\ud800" not in doc else p.write_bytes(b"\xff")
    survive(load_policy, p)
    survive(load_manifest, p)
