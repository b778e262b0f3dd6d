"""Agreement figures (core.agreement) against hand computations and published examples."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from rankgate.core.agreement import cohen_kappa, krippendorff_alpha, matrix_units, measure, measure_groups

NAN = float("nan")


def close(x, y, tol=1e-12):
    return x is not None and math.isclose(x, y, rel_tol=0, abs_tol=tol)


# --------------------------------------------------------------------------- Cohen's kappa


def test_kappa_two_categories_by_hand():
    # 50 units: both "yes" 20, A yes / B no 5, A no / B yes 10, both "no" 15.
    # p_o = (20 + 15) / 50 = 0.7; A says yes 25/50, B says yes 30/50;
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert close(cohen_kappa(a, b), 0.4)


def test_kappa_three_grades_unweighted_and_quadratic_by_hand():
    a = [0, 0, 1, 1, 2, 2, 2, 0, 1, 2]
    b = [0, 1, 1, 1, 2, 1, 2, 0, 2, 2]
    # Counts (rows: a's grade, columns: b's grade 0, 1, 2):
    #   a=0: 2 1 0     a=1: 0 2 1     a=2: 0 1 3
    # p_o = (2 + 2 + 3) / 10 = 0.7; a's marginals 3 3 4, b's 2 4 4;
    # p_e = (3*2 + 3*4 + 4*4) / 100 = 0.34; kappa = 0.36 / 0.66 = 6/11.
    assert close(cohen_kappa(a, b), 6 / 11)
    # Quadratic weights (i - j)^2. Observed: three cells one grade apart: 3/10 = 0.3.
    # Expected: one apart (w 1): 3*4 + 3*2 + 3*4 + 4*4 = 46; two apart (w 4): (3*4 + 4*2) * 4 = 80;
    # (46 + 80) / 100 = 1.26; kappa_w = 1 - 0.3 / 1.26 = 16/21.
    assert close(cohen_kappa(a, b, weights="quadratic"), 16 / 21)


def test_kappa_of_the_sample_pair_lena_and_ana_by_hand():
    # The six ops-handbook pairs lena and ana both judged (q-kv-cache-per-token):
    # lena 3 1 1 1 0 0, ana 3 1 1 2 0 0: 5 of 6 agree, p_o = 5/6.
    # lena's marginals 0:2 1:3 3:1, ana's 0:2 1:2 2:1 3:1;
    # p_e = (2*2 + 3*2 + 0*1 + 1*1) / 36 = 11/36; kappa = (30/36 - 11/36) / (25/36) = 19/25 = 0.76.
    lena, ana = [3, 1, 1, 1, 0, 0], [3, 1, 1, 2, 0, 0]
    assert close(cohen_kappa(lena, ana), 19 / 25)
    # Quadratic: observed one unit at distance 1: 1/6 = 6/36. Expected, sum of counts * (g - h)^2 / 36:
    # lena 0 (2 units) vs ana 1,2,3: 2*2*1 + 2*1*4 + 2*1*9 = 30; lena 1 (3) vs ana 0,2,3: 3*2*1 + 3*1*1 + 3*1*4
    # = 21; lena 3 (1) vs ana 0,1,2: 1*2*9 + 1*2*4 + 1*1*1 = 27; 78/36. kappa_w = 1 - 6/78 = 12/13.
    assert close(cohen_kappa(lena, ana, weights="quadratic"), 12 / 13)


def test_kappa_undefined_and_bad_input():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([2, 2, 2], [2, 2, 2]) is None  # one grade throughout: no variation to agree about
    assert cohen_kappa([0, 1], [1, 0]) == -1.0  # systematic disagreement
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError):
        cohen_kappa([1], [1], weights="cubic")


# --------------------------------------------------------------------------- Krippendorff's alpha


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units,
# missing values. He reports alpha 0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def test_krippendorffs_own_example_all_three_levels():
    units = matrix_units(KRIPPENDORFF_2011)
    assert len(units) == 12 and units[11] == [3]  # unit 12: one value, not pairable
    assert round(krippendorff_alpha(units, "nominal"), 3) == 0.743
    assert round(krippendorff_alpha(units, "ordinal"), 3) == 0.815
    assert round(krippendorff_alpha(units, "interval"), 3) == 0.849
    # beyond the published digits: nominal is exactly 113/152 (0.743421...)
    assert close(krippendorff_alpha(units, "nominal"), 113 / 152)


def test_the_wikipedia_reliability_example():
    # Wikipedia, "Krippendorff's alpha", a computational example: 3 coders, 15 units; nominal 0.691 (56/81),
    # interval 0.811.
    data = [
        [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
        [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
        [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
    ]
    assert close(krippendorff_alpha(matrix_units(data), "nominal"), 56 / 81)
    assert round(krippendorff_alpha(matrix_units(data), "interval"), 6) == 0.810845


def test_ordinal_alpha_by_hand():
    # Two reviewers, three units: (0, 0), (1, 2), (2, 2). Coincidences (each pair of a unit counts 1/(m-1) = 1):
    #   o_00 = 2, o_12 = o_21 = 1, o_22 = 2; marginals n_0 = 2, n_1 = 1, n_2 = 3; n = 6.
    # Ordinal distances: d01 = (2 + 1 - (2+1)/2)^2 = 2.25; d12 = (1 + 3 - (1+3)/2)^2 = 4;
    #   d02 = (2 + 1 + 3 - (2+3)/2)^2 = 12.25.
    # sum o*d = 2 * 4 = 8; sum n_c n_k d = 2 * (2*1*2.25 + 2*3*12.25 + 1*3*4) = 180;
    # alpha = 1 - (n - 1) * 8 / 180 = 1 - 40/180 = 7/9.
    units = [[0, 0], [1, 2], [2, 2]]
    assert close(krippendorff_alpha(units, "ordinal"), 7 / 9)
    # nominal: sum o (c != k) = 2; sum n_c n_k (c != k) = 2 * (2 + 6 + 3) = 22; 1 - 5 * 2 / 22 = 6/11.
    assert close(krippendorff_alpha(units, "nominal"), 6 / 11)
    # interval: sum o d = 2; sum n n d = 2 * (2*1*1 + 2*3*4 + 1*3*1) = 58; 1 - 5 * 2 / 58 = 24/29.
    assert close(krippendorff_alpha(units, "interval"), 24 / 29)


def test_alpha_undefined_and_bad_level():
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([[1], [2]]) is None  # no unit graded twice
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None  # one value throughout
    assert krippendorff_alpha([[0, 0], [1, 1]]) == 1.0
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2]], "ratio")


# --------------------------------------------------------------------------- groups


def test_measure_pairs_units_and_groups():
    ratings = {
        ("q1", "a"): {"ana": 0, "bo": 0},
        ("q1", "b"): {"ana": 1, "bo": 2},
        ("q2", "c"): {"ana": 2, "bo": 2},
        ("q2", "d"): {"ana": 2},  # one reviewer: left out
        ("q2", "e"): {"ana": 1, "cy": 1},
    }
    a = measure(ratings)
    assert (a.units, a.single, a.ratings, a.agreed) == (4, 1, 8, 3)
    assert a.reviewers == ("ana", "bo", "cy")
    assert [(p.a, p.b, p.units, p.agreed) for p in a.pairs] == [("ana", "bo", 3, 2), ("ana", "cy", 1, 1)]
    # ana~bo over (0,0), (1,2), (2,2): the hand example above; kappa: p_o 2/3, ana 0:1 1:1 2:1,
    # bo 0:1 2:2, p_e = (1*1 + 1*0 + 1*2)/9 = 1/3, kappa = (2/3 - 1/3) / (2/3) = 1/2.
    assert close(a.pairs[0].kappa, 0.5)
    assert a.kappa is None  # three pairs of reviewers share units: see a.pairs
    groups = measure_groups(ratings, {"q1": [("q1", "a"), ("q1", "b")], "empty": []})
    assert close(groups["q1"].alpha, krippendorff_alpha([[0, 0], [1, 2]]))
    assert groups["q1"].kappa is not None and groups["empty"].units == 0 and groups["empty"].alpha is None
    assert a.as_dict()["kappa"][0]["reviewers"] == ["ana", "bo"]


def test_the_core_modules_stay_headless():
    code = ("import sys, rankgate.core.agreement, rankgate.core.migrate, rankgate.core.queue; "
            "bad = [m for m in ('textual', 'tinydb') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
