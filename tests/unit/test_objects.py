"""Qrels and runs from dicts and DataFrames (core/formats/objects.py): what they take and what they refuse."""

import math

import pytest

import rankgate
from rankgate.core.errors import InputError
from rankgate.core.formats.objects import qrels_from_dict, qrels_from_frame, run_from_dict, run_from_frame


class Frame:
    """A frame-like table without pandas: columns, and a column's tolist()."""

    def __init__(self, **cols):
        self.cols = cols
        self.columns = list(cols)

    def __getitem__(self, name):
        return Column(self.cols[name])


class Column(list):
    def tolist(self):
        return list(self)


def test_dict_qrels_and_runs_agree_with_files(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 a 2\n1 0 b 0\n2 0 c 1\n")
    (tmp_path / "r.trec").write_text("1 Q0 b 1 2 r\n1 Q0 a 2 1 r\n2 Q0 c 1 5 r\n")
    files = rankgate.evaluate(tmp_path / "q.txt", tmp_path / "r.trec", "nDCG@10,AP,RR@10")
    dicts = rankgate.evaluate({1: {"a": 2, "b": 0}, "2": {"c": 1}}, {"1": {"b": 2, "a": 1}, 2: {"c": 5.0}}, ["nDCG@10", "AP", "RR@10"])
    assert files.summary() == dicts.summary()


def test_ties_are_broken_by_document_id_descending_as_trec_eval():
    run = run_from_dict({"q": {"a": 1.0, "c": 1.0, "b": 1.0}})
    assert run.ranking("q") == ["c", "b", "a"]


@pytest.mark.parametrize("grade", [1.5, True, "2", None, float("nan")])
def test_bad_grades_are_refused(grade):
    with pytest.raises(InputError, match="is not an integer") as e:
        qrels_from_dict({"q": {"d": grade}})
    assert e.value.where == '$["q"]["d"]'


@pytest.mark.parametrize("score", [math.inf, math.nan, "1", None, False])
def test_bad_scores_are_refused(score):
    with pytest.raises(InputError, match="not a finite number"):
        run_from_dict({"q": {"d": score}})


def test_bad_shapes_are_refused():
    with pytest.raises(InputError, match="dict of document grades"):
        qrels_from_dict({"q": ["d1"]})
    with pytest.raises(InputError, match="query ID"):
        qrels_from_dict({"": {"d": 1}})
    with pytest.raises(InputError, match="expected a dict of query IDs"):
        run_from_dict([("q", "d", 1.0)])


def test_frames_without_pandas():
    q = qrels_from_frame(Frame(query_id=["q1", "q1"], doc_id=["a", "b"], relevance=[1, 0]))
    assert q.as_dict() == {"q1": {"a": 1, "b": 0}}
    r = run_from_frame(Frame(qid=["q1", "q1"], docno=["a", "b"], score=[0.1, 0.9], run=["mine", "mine"]))
    assert r.name == "mine" and r.ranking("q1") == ["b", "a"]
    assert rankgate.run(Frame(query_id=["q1"], doc_id=["a"], score=[1.0]), name="x").name == "x"


def test_frame_refusals_name_the_row():
    with pytest.raises(InputError, match="a second judgment") as e:
        qrels_from_frame(Frame(query_id=["q", "q"], doc_id=["a", "a"], relevance=[1, 2]))
    assert e.value.where == "row 1"
    with pytest.raises(InputError, match="no relevance column .*found query_id, doc_id, grade_x"):
        qrels_from_frame(Frame(query_id=["q"], doc_id=["a"], grade_x=[1]))
    with pytest.raises(InputError, match="holds 2 runs"):
        run_from_frame(Frame(query_id=["q", "q"], doc_id=["a", "b"], score=[1, 2], run=["x", "y"]))


def test_pandas_frames_and_numpy_values():
    pd = pytest.importorskip("pandas")
    import numpy as np

    df = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"],
                       "relevance": np.array([2, 0, 1], dtype=np.int8)})
    assert rankgate.qrels(df).as_dict() == {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    s = rankgate.evaluate(df, pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "c"],
                                            "score": np.array([1.0, 2.0], dtype=np.float32)}), "RR@10")
    out = rankgate.to_frame(s)
    assert out.to_dict("records") == [{"run": "run", "query_id": "q1", "measure": "RR@10", "value": 0.0},
                                      {"run": "run", "query_id": "q2", "measure": "RR@10", "value": 1.0}]


def test_scores_are_looked_up_by_the_names_users_write_and_print_readably():
    """s8 newcomer F13: summary()['nDCG@10'] and of('q1')['RR@10'] were KeyErrors (keyed by Measure objects),
    print(scores) dumped the internal arrays."""
    import rankgate

    s = rankgate.evaluate({"q1": {"d1": 2}, "q2": {"d9": 1}}, {"q1": {"d1": 1.5, "d2": 0.3}, "q2": {"d2": 1.0}},
                          ["nDCG@10", "RR@10"])
    rr = rankgate.parse_measure("RR@10")
    assert s.summary()["nDCG@10"] == s.summary()["ndcg_cut_10"] == s.summary()[rankgate.parse_measure("nDCG@10")]
    assert s.of("q1")["RR@10"] == 1.0 and s.of("q2")["RR@10"] == 0.0
    assert list(s.values["RR@10"]) == list(s.values[rr]) == [1.0, 0.0]
    assert "RR@10" in s.summary() and "AP" not in s.summary() and s.summary().get("AP", -1) == -1
    assert list(s.summary()) == [rankgate.parse_measure("nDCG@10"), rr]  # the keys stay Measure objects
    try:
        s.summary()["AP"]
        raise AssertionError("no KeyError")
    except KeyError as e:
        assert "nDCG@10, RR@10" in str(e)
    assert repr(s) == str(s) == "Scores(run='run', 2 queries: nDCG@10=0.5000, RR@10=0.5000)"
    assert "array" not in repr(s)
