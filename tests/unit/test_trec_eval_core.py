"""core/trec_eval.py's reading rules and core/measures.py's trec_eval names for the all_trec families."""

import math

import pytest

from rankgate.core.errors import InputError
from rankgate.core.measures import ALL_TREC, Measure, parse_measures
from rankgate.core.trec_eval import atof, atol, parse_request


@pytest.mark.parametrize("text,value", [("1", 1), ("1.5", 1), ("0x37", 0), ("1e+8", 1), ("1.1.11", 1), ("-2", -2),
                                        ("abc", 0), ("+3x", 3)])
def test_grades_read_as_c_atol(text, value):
    assert atol(text) == value


@pytest.mark.parametrize("text,value", [("2.5", 2.5), ("1e3", 1000.0), ("inf", math.inf), ("-Infinity", -math.inf),
                                        ("12abc", 12.0), ("abc", 0.0), ("0x1p3", 8.0), (".5", 0.5)])
def test_scores_read_as_c_atof(text, value):
    assert atof(text) == value


def test_trec_names_of_the_new_families_round_trip():
    for text in ("Rprec_mult_0.20", "relative_P_5", "unj_10", "infAP", "gm_bpref", "11pt_avg", "set_F", "rbp",
                 "num_nonrel_judged_ret", "ndcg_rel", "Rndcg", "binG", "G", "utility"):
        (m,) = parse_measures(text)
        assert m.trec_name == text
    assert parse_measures("RprecMult@1.5") == [Measure("RprecMult", 1.5)]
    assert len(ALL_TREC) == 97  # trec_eval 10's all_trec summary less runid and num_q
    assert [m.trec_name for m in parse_measures("official")][:4] == ["num_ret", "num_rel", "num_rel_ret", "map"]


def test_requests_keep_trec_eval_table_order_and_sorted_cutoffs():
    req = parse_request(["P.10,5", "map", "runid"])
    names = [name for _, items in req.measures() for name, _ in items]
    assert names == ["runid", "map", "P_5", "P_10"]
    assert [n for _, items in parse_request(["utility.2,-1,0,0"]).measures() for n, _ in items] == ["utility_2,-1,0,0"]
    nine = {r for r in parse_request(["all_trec"], "9").roots}
    assert "rbp" not in nine and "unj" not in nine and "infAP" in nine


@pytest.mark.parametrize("arg", ["prefs_simp", "P_avgjg", "nope", "P.", "all_trec.5", "utility.1,1,0,2",
                                 "ndcg.x", "iprec_at_recall.1.5"])
def test_requests_refused_by_name(arg):
    with pytest.raises(InputError) as e:
        parse_request([arg])
    assert arg.split(".")[0] in str(e.value)
