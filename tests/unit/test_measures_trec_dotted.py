"""trec_eval's own -m notation (`ndcg_cut.10`, `P.5,10`, `recall.1000`, `iprec_at_recall.0.5`) names the same
measures as its output names (`ndcg_cut_10` ...); a cutoff below 1 is said as such (`P@-1`)."""

import pytest

from rankgate.cli import main
from rankgate.core.errors import InputError
from rankgate.core.measures import parse_measure, parse_measures
from tests.conftest import write


@pytest.mark.parametrize("dotted, underscored", [
    ("ndcg_cut.10", "ndcg_cut_10"),
    ("P.5", "P_5"),
    ("recall.1000", "recall_1000"),
    ("map_cut.100", "map_cut_100"),
    ("success.1", "success_1"),
    ("recip_rank_cut.10", "recip_rank_cut_10"),
    ("iprec_at_recall.0.5", "iprec_at_recall_0.50"),
    ("P.5,10", "P_5,P_10"),
    ("map,ndcg_cut.10", "map,ndcg_cut_10"),
])
def test_trec_evals_dotted_names_are_its_underscored_measures(dotted, underscored):
    assert parse_measures(dotted) == parse_measures(underscored)


@pytest.mark.parametrize("text, said", [
    ("P@-1", "the cutoff must be at least 1"),
    ("nDCG(rel=2)@-3", "the cutoff must be at least 1"),
    ("P.0", "the cutoff must be at least 1"),
    ("ndcg_cut.x", "the cutoff must be a whole number"),
    ("iprec_at_recall.high", "the recall level is not a number"),
    ("ndcg.5", "unknown measure"),  # trec_eval's ndcg.GAINS (gain values) is not a cutoff
])
def test_bad_cutoffs_are_said_in_one_line(text, said):
    with pytest.raises(InputError) as e:
        parse_measure(text)
    assert said in str(e.value) and "\n" not in str(e.value)
    if said != "unknown measure":
        assert "rankgate computes" not in str(e.value)  # not the long list of every family


def test_score_takes_the_dotted_name_and_prints_trec_evals_name(tmp_path, capsys):
    qrels = write(tmp_path / "q.trec", "q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 1\n")
    run = write(tmp_path / "r.trec", "".join(f"{q} Q0 d{d} {r} {9 - r} r\n" for q in ("q1", "q2")
                                             for r, d in enumerate((3, 2, 1), 1)))
    outs = []
    for m in ("ndcg_cut.10", "ndcg_cut_10"):
        assert main(["score", "--qrels", str(qrels), "--runs", str(run), "-m", m, "--format", "trec"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and "ndcg_cut_10" in outs[0]


def test_a_list_of_bare_cutoffs_after_a_measure_says_how_to_write_it():
    """Red team: `-m 'P@5,10'` said "'10': unknown measure"; a bare cut-off in a list says what to write."""
    with pytest.raises(InputError) as e:
        parse_measures("P@5,10")
    assert "'10' is a cut-off alone; name each measure whole (P@5,P@10), or use trec_eval's P.5,10" in str(e.value)
    assert [str(m) for m in parse_measures("P@5,P@10")] == [str(m) for m in parse_measures("P.5,10")]
