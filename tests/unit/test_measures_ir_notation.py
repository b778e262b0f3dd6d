"""ir_measures' notation (`nDCG(judged_only=True)@10`, `P(rel=2)@5`, `gains=...`) parsed and computed,
the rest refused in one line naming the measure and what is supported."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rankgate.core.engine import evaluate
from rankgate.core.errors import InputError
from rankgate.core.measures import FAMILIES, Measure, parse_measure, parse_measures
from tests.conftest import write


@pytest.mark.parametrize("text, expected", [
    ("nDCG(judged_only=True)@10", Measure("nDCG", 10, judged_only=True)),
    ("nDCG(judged_only=False)@10", Measure("nDCG", 10)),
    ("nDCG( judged_only = True )@10", Measure("nDCG", 10, judged_only=True)),
    ("nDCG(dcg='log2')@10", Measure("nDCG", 10)),
    ('nDCG(dcg="log2",judged_only=True)@10', Measure("nDCG", 10, judged_only=True)),
    ("P(rel=2)@5", Measure("P", 5, 2)),
    ("P(judged_only=True,rel=2)@5", Measure("P", 5, 2, judged_only=True)),
    ("AP(rel=2)", Measure("AP", None, 2)),
    ("RR(rel=2)", Measure("RR", None, 2)),
    ("RR(judged_only=True)@10", Measure("RR", 10, judged_only=True)),
    ("Judged@10", Measure("Judged", 10)),
    ("R@100", Measure("R", 100)),
    ("Bpref(rel=2)", Measure("bpref", None, 2)),
    ("nDCG(gains={0:0,1:1,2:3})@10", Measure("nDCG", 10, params="0=0,1=1,2=3")),
    ("RBP(p=0.8)", Measure("RBP", params="p=0.8")),
    ("SetF(beta=0.5)", Measure("SetF", params="0.5")),
    ("SetP(relative=True)", Measure("SetRelP")),
    ("NumRet(rel=2)", Measure("NumRelRet", None, 2)),  # ir_measures: the relevant documents retrieved
])
def test_ir_measures_notation_parses(text, expected):
    assert parse_measure(text) == expected


def test_names_print_in_ir_measures_notation_and_parse_back():
    for text in ("nDCG(judged_only=True)@10", "P(judged_only=True,rel=2)@5", "AP(rel=2)", "RR(judged_only=True)"):
        m = parse_measure(text)
        assert m.name == text
        assert parse_measure(m.name) == m


def test_a_list_splits_only_at_top_level_commas():
    got = parse_measures("nDCG@10,P(judged_only=True,rel=2)@5,nDCG(gains={0:0,1:1,2:3}),AP")
    assert [m.name for m in got][0] == "nDCG@10"
    assert got[1] == Measure("P", 5, 2, judged_only=True)
    assert got[2] == Measure("nDCG", None, params="0=0,1=1,2=3")
    assert got[3] == Measure("AP")


@pytest.mark.parametrize("text, said", [
    ("nDCG(dcg='exp-log2')@10", "nDCG(gains={1:1,2:3,3:7})"),
    ("ERR@10", "unknown measure; rankgate computes P, R, RR, nDCG"),
    ("alpha_nDCG@20", "unknown measure"),
    ("NumQ", "unknown measure"),
    ("Judged(judged_only=True)@10", "Judged takes no parameter here, not 'judged_only'"),
    ("P(foo=1)@5", "P takes rel, judged_only here, not 'foo'"),
    ("P(judged_only=yes)@5", "judged_only must be True or False"),
    ("P(rel=high)@5", "rel must be a whole number"),
    ("nDCG(gains={0:0},rel=2)", "gains or rel, not both"),
    ("nDCG(gains=[1,2])", "gains must be a mapping"),
    ("RBP(p=high)", "p must be a number"),
])
def test_what_rankgate_does_not_compute_is_refused_in_one_line(text, said):
    with pytest.raises(InputError) as e:
        parse_measures(text)
    message = str(e.value)
    assert said in message and "\n" not in message
    assert text.replace(" ", "") in message


def test_unknown_measure_lists_every_family():
    with pytest.raises(InputError) as e:
        parse_measure("ERR@10")
    assert all(name in str(e.value) for name in FAMILIES)


docs = st.sampled_from([f"d{i}" for i in range(10)])
qrels_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                           st.dictionaries(docs, st.integers(-1, 3), min_size=1, max_size=6), min_size=1, max_size=3)
run_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                         st.dictionaries(docs, st.sampled_from([0.5, 1.0, 2.0, 3.25]), min_size=1, max_size=10),
                         min_size=1, max_size=3)
ALL = "nDCG@5,nDCG,AP,P@3,R@5,RR,Rprec,bpref,Success@3,IPrec@0.5,SetP,SetF,NumRet,NumRelRet,RBP"


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(qrels=qrels_st, run=run_st, level=st.sampled_from([1, 2]))
def test_judged_only_measure_equals_the_whole_evaluation_judged_only(tmp_path, qrels, run, level):
    """`X(judged_only=True)` beside other measures gives what `-J` gives for X, and leaves the others alone."""
    from rankgate.core.formats import read_qrels, read_runs
    from rankgate.core.model import Catalog

    qf = write(tmp_path / "q.trec", "".join(f"{q} 0 {d} {g}\n" for q, ds in qrels.items() for d, g in ds.items()))
    rf = write(tmp_path / "r.trec", "".join(f"{q} Q0 {d} 0 {s} t\n" for q, ds in run.items() for d, s in ds.items()))
    if not set(qrels) & set(run):
        return
    plain = parse_measures(ALL)
    judged = [Measure(m.family, m.cutoff, m.rel, m.params, True) for m in plain]
    cat = Catalog()
    qr, rn = read_qrels(qf, catalog=cat), read_runs(rf, catalog=cat)[0]
    mixed = evaluate(qr, rn, plain + judged, rel_level=level)
    whole_j = evaluate(qr, rn, plain, rel_level=level, judged_only=True)
    whole = evaluate(qr, rn, plain, rel_level=level)
    for p, j in zip(plain, judged):
        assert mixed.values[j].tolist() == pytest.approx(whole_j.values[p].tolist(), abs=1e-12), j.name
        assert mixed.values[p].tolist() == pytest.approx(whole.values[p].tolist(), abs=1e-12), p.name


def test_score_takes_the_notation_and_trec_eval_points_to_minus_j(tmp_path, capsys):
    """`score -m 'nDCG(judged_only=True)@10'` equals `score -J -m nDCG@10`; `trec_eval` has no
    per-measure form and says to use -J."""
    from rankgate.cli import main

    q = write(tmp_path / "q.trec", "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\n")
    r = write(tmp_path / "r.trec", "q1 Q0 dx 1 9 t\nq1 Q0 d2 2 8 t\nq1 Q0 d3 3 7 t\nq1 Q0 d1 4 6 t\n"
                                   "q2 Q0 dy 1 5 t\nq2 Q0 d4 2 4 t\n")

    def summary(*argv):
        assert main(["score", "--qrels", str(q), "--runs", str(r), "--format", "trec", *argv]) == 0
        out = capsys.readouterr().out
        return [line.split("\t")[2] for line in out.splitlines() if line.startswith("ndcg_cut_10")]

    mine = summary("-m", "nDCG@10,nDCG(judged_only=True)@10")
    assert mine[1] == summary("-J", "-m", "nDCG@10")[0] != mine[0]
    assert main(["trec_eval", "-m", "nDCG(judged_only=True)@10", str(q), str(r)]) == 2
    err = capsys.readouterr().err
    assert "trec_eval has no per-measure judged_only; use -J" in err and err.count("\n") == 1
