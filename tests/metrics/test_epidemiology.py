"""L1 distances, baselines, the bootstrap best reference and the 0-100 score."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import (
    best_reference_distance,
    distribution_distance,
    epidemiology_score,
    l1_distance,
    mean_baseline_distance,
    uniform_baseline_distance,
    worst_reference_distance,
    zero_one_baseline_distance,
)

from .strategies import PROPERTY

TRUE = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]])
MODEL = np.array([[0.3, 0.3, 0.4], [0.6, 0.2, 0.2]])


def test_l1_and_weighted_distance_by_hand():
    # row 0: 0.1 + 0.2 + 0.1 = 0.4 ; row 1: 0 + 0.1 + 0.1 = 0.2
    assert l1_distance(TRUE, MODEL) == pytest.approx([0.4, 0.2])
    assert distribution_distance(TRUE, MODEL) == pytest.approx(0.3)
    # population shares 1:3 -> 0.25 * 0.4 + 0.75 * 0.2
    assert distribution_distance(TRUE, MODEL, condition_weights=[1, 3]) == pytest.approx(0.25)


def test_baselines_by_hand():
    # uniform 1/3: row 0 |0.2-1/3| + |0.5-1/3| + |0.3-1/3| = 0.1333+0.1667+0.0333 = 1/3
    # row 1: 0.2667 + 0.0333 + 0.2333 = 0.5333
    assert uniform_baseline_distance(TRUE) == pytest.approx((1 / 3 + 1.6 / 3) / 2)
    # mean baseline: marginal (0.4, 0.4, 0.2); row 0: 0.2+0.1+0.1 ; row 1: 0.2+0.1+0.1
    assert mean_baseline_distance(TRUE) == pytest.approx(0.4)
    binary = np.array([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8]])
    # weighted marginal of Y=1 with shares 1:1:1 is 0.4 -> predict 0 everywhere
    assert zero_one_baseline_distance(binary) == pytest.approx((0.2 + 0.6 + 1.6) / 3)
    # shares 1:1:8 make the marginal 0.68 -> predict 1 everywhere
    assert zero_one_baseline_distance(binary, condition_weights=[1, 1, 8]) == pytest.approx((1.8 + 1.4 + 8 * 0.4) / 10)
    uniform = uniform_baseline_distance(binary)  # (0.8 + 0.4 + 0.6) / 3 = 0.6
    assert uniform == pytest.approx(0.6)
    assert worst_reference_distance(binary) == pytest.approx(0.6)
    assert worst_reference_distance(binary, include_zero_one=True) == pytest.approx(0.6)
    skewed = np.array([[0.95, 0.05], [0.9, 0.1]])
    assert worst_reference_distance(skewed, include_zero_one=True) == pytest.approx(0.15)


def test_score_by_hand_and_clipping():
    assert epidemiology_score(0.3, worst=0.6, best=0.1) == pytest.approx(60.0)
    assert epidemiology_score(0.05, worst=0.6, best=0.1) == 100.0
    assert epidemiology_score(0.9, worst=0.6, best=0.1) == 0.0
    assert epidemiology_score([0.6, 0.35, 0.1], worst=0.6, best=0.1).tolist() == pytest.approx([0.0, 50.0, 100.0])
    with pytest.warns(UndefinedMetricWarning, match="best"):
        assert np.isnan(epidemiology_score(0.3, worst=0.2, best=0.2, crossed="nan"))
    # the paper's rule (default): the worst moves to best + 0.0001, so 100 at or below the best, 0 beyond
    assert epidemiology_score([0.2, 0.3], worst=0.2, best=0.2).tolist() == [100.0, 0.0]


def test_best_reference_exact_small_cases():
    # one respondent, fair coin: the resampled distribution is (1, 0) or (0, 1): L1 = 1 always
    assert best_reference_distance([[0.5, 0.5]], [1], random_state=0) == 1.0
    # two conditions of one respondent each: the weighted mean is still 1
    assert best_reference_distance([[0.5, 0.5], [0.5, 0.5]], [1, 1], condition_weights=[1, 9], random_state=0) == 1.0
    # a degenerate condition never moves
    assert best_reference_distance([[1.0, 0.0]], [50], random_state=0) == 0.0


def test_best_reference_matches_normal_theory():
    # binary p = 0.5, n = 10,000: L1 = 2 |p* - p| ~ 2 |N(0, 0.005)| ; 97.5% quantile of |Z| 2.2414
    best = best_reference_distance([[0.5, 0.5]], [10_000], n_resamples=4000, random_state=1)
    assert best == pytest.approx(2 * 2.2414 * 0.005, rel=0.06)
    per = best_reference_distance(TRUE, [100, 10_000], per_condition=True, random_state=1)
    assert per.shape == (2,) and per[0] > per[1]


@PROPERTY
@given(st.integers(0, 2**32 - 1))
def test_best_reference_seeded(seed):
    a = best_reference_distance(TRUE, [30, 40], n_resamples=100, random_state=seed)
    b = best_reference_distance(TRUE, [30, 40], n_resamples=100, random_state=seed)
    assert a == b


@PROPERTY
@given(
    hnp.arrays(np.float64, (4, 3), elements=st.floats(0.01, 1)),
    hnp.arrays(np.float64, (4, 3), elements=st.floats(0.01, 1)),
)
def test_distance_properties(a, b):
    p = a / a.sum(axis=1, keepdims=True)
    q = b / b.sum(axis=1, keepdims=True)
    d = l1_distance(p, q)
    assert np.all((d >= 0) & (d <= 2 + 1e-12))
    assert np.allclose(d, l1_distance(q, p))
    assert np.allclose(l1_distance(p, p), 0)
    # the mean baseline is never worse than the uniform when there is one condition
    assert mean_baseline_distance(p[:1]) == pytest.approx(0.0, abs=1e-12)


def test_bad_inputs():
    with pytest.raises(DataError, match="do not sum to 1"):
        l1_distance([[0.5, 0.6]], [[0.5, 0.5]])
    with pytest.raises(DataError, match="shape"):
        l1_distance(TRUE, [[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(DataError, match="non-negative"):
        l1_distance([[1.5, -0.5]], [[0.5, 0.5]])
    with pytest.raises(DataError, match="binary"):
        zero_one_baseline_distance(TRUE)
    with pytest.raises(DataError, match="integers >= 1"):
        best_reference_distance(TRUE, [0, 10])
    with pytest.raises(DataError, match="condition_weights must be non-negative"):
        distribution_distance(TRUE, MODEL, condition_weights=[-1, 2])
