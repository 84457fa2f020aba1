from __future__ import annotations

import pytest

from simulator.review.agreement import cohen_kappa, krippendorff_alpha, weighted_kappa

# Ten turns, two annotators (A, B), verdicts accept (a) / reject (r):
#   both accept 4, both reject 3, A accepts and B rejects 2, A rejects and B accepts 1.
VERDICTS = [("a", "a")] * 4 + [("r", "r")] * 3 + [("a", "r")] * 2 + [("r", "a")]


def test_it_computes_cohens_kappa_on_a_case_worked_by_hand():
    # p_o = (4 + 3) / 10 = 0.7
    # A accepts 6/10, B accepts 5/10: p_e = 0.6·0.5 + 0.4·0.5 = 0.5
    # κ = (p_o − p_e) / (1 − p_e) = 0.2 / 0.5 = 0.4
    figure = cohen_kappa(VERDICTS)
    assert figure.value == pytest.approx(0.4)
    assert figure.n == 10 and figure.values == 20


def test_it_computes_krippendorffs_alpha_on_the_same_case_by_hand():
    # 20 pairable values: 11 accepts (4·2 + 2 + 1), 9 rejects.
    # Observed disagreement: 3 split items, 2 ordered pairs each, over n = 20: D_o = 6/20.
    # Expected: D_e = 2·11·9 / (20·19) = 198/380.
    # α = 1 − D_o/D_e = 1 − (6/20)·(380/198) = 1 − 114/198 = 14/33 ≈ 0.4242
    figure = krippendorff_alpha([list(pair) for pair in VERDICTS])
    assert figure.value == pytest.approx(14 / 33)
    assert figure.n == 10


def test_it_computes_quadratic_weighted_kappa_by_hand():
    # Pairs (1,1) (2,3) (3,3) (5,4): observed mean squared difference = (0+1+0+1)/4 = 0.5.
    # Marginals: first {1,2,3,5} once each, second {1:1, 3:2, 4:1}.
    # Expected Σ f·s·(a−b)² / 16 = (17 + 7 + 5 + 25) / 16 = 54/16.
    # κ_w = 1 − 0.5 / (54/16) = 1 − 4/27 = 23/27
    figure = weighted_kappa([(1, 1), (2, 3), (3, 3), (5, 4)])
    assert figure.value == pytest.approx(23 / 27)
    assert figure.n == 4


def test_alpha_drops_items_with_one_label_and_handles_three_raters():
    # Item 3 has one label and cannot count. Items 1–2 agree; item 4 splits 2–1.
    # Pairable units [a,a,a] [r,r] [a,a,r]: n = 8 values, a = 5, r = 3.
    # Item 4 has 4 ordered pairs that differ, weighted 1/(3 − 1): D_o = (4/2) / 8 = 0.25
    # D_e = 2·5·3 / (8·7) = 30/56
    # α = 1 − 0.25·56/30 = 1 − 14/30 = 8/15
    figure = krippendorff_alpha([["a", "a", "a"], ["r", "r"], ["a"], ["a", "a", "r"]])
    assert figure.value == pytest.approx(8 / 15)
    assert figure.n == 3 and figure.values == 8


def test_figures_are_undefined_without_items_or_without_variation():
    assert cohen_kappa([]).value is None and cohen_kappa([]).n == 0
    # Everyone accepted everything: perfect agreement, but nothing chance could not explain.
    assert cohen_kappa([("a", "a")] * 5).value is None
    assert krippendorff_alpha([["a"], ["r"]]).value is None
    assert weighted_kappa([(3, 3), (4, 4)]).value == pytest.approx(1.0)
