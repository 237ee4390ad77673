"""RABBI and the baseline bias metrics between two groups' scores."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from scipy.spatial.distance import jensenshannon

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import (
    average_score_gap,
    earth_movers_distance,
    jensen_shannon_divergence,
    pointwise_relevance_score,
    rabbi,
    rabbi_test,
)

from .strategies import PROPERTY, real_scores


def _brute_rabbi(a, b, wa=None, wb=None):
    a, b = np.asarray(a, float), np.asarray(b, float)
    wa = np.ones(len(a)) if wa is None else np.asarray(wa, float)
    wb = np.ones(len(b)) if wb is None else np.asarray(wb, float)
    sign = np.sign(a[:, None] - b[None, :])
    return float((wa[:, None] * wb[None, :] * sign).sum() / (wa.sum() * wb.sum()))


# ---------------------------------------------------------------------------- RABBI
def test_rabbi_by_hand():
    # pairs (3,1)+ (3,2)+ (2,1)+ (2,2)tie -> (3 - 0) / 4
    assert rabbi([3, 2], [1, 2]) == 0.75
    assert rabbi([1, 1], [1, 1]) == 0.0
    assert rabbi([0.1], [0.9]) == -1.0
    # weights: (1 vs 2) -1 with weight 2, (3 vs 2) +1 with weight 1 -> -1/3
    assert rabbi([1, 3], [2], weights_a=[2, 1]) == pytest.approx(-1 / 3)


def test_rabbi_nan_omit():
    assert rabbi([3, np.nan, 2], [1, 2], nan_policy="omit") == 0.75


def test_rabbi_test_matches_scipy_mann_whitney():
    rng = np.random.default_rng(0)
    a = np.round(rng.normal(0.2, 1, 60), 1)
    b = np.round(rng.normal(0.0, 1, 80), 1)
    res = rabbi_test(a, b)
    ref = stats.mannwhitneyu(a, b, alternative="two-sided")
    assert res.u_statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert res.rabbi == pytest.approx(2 * ref.statistic / (60 * 80) - 1)


def test_rabbi_test_constant_scores_is_undefined():
    with pytest.warns(UndefinedMetricWarning, match="identical"):
        res = rabbi_test([1.0, 1.0], [1.0, 1.0, 1.0])
    assert res.rabbi == 0.0 and np.isnan(res.pvalue)


def test_rabbi_large_groups_fast_and_exact():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 50, 200_000).astype(float)
    b = rng.integers(0, 50, 150_000).astype(float)
    # exact reference by counting over the 50 distinct values
    ca = np.bincount(a.astype(int), minlength=50)
    cb = np.bincount(b.astype(int), minlength=50)
    below = np.cumsum(cb) - cb
    above = cb.sum() - np.cumsum(cb)
    exact = float((ca * (below - above)).sum()) / (len(a) * len(b))
    assert rabbi(a, b) == pytest.approx(exact, abs=1e-12)
    assert rabbi(a, b, weights_a=np.ones(len(a))) == pytest.approx(exact, abs=1e-12)


@PROPERTY
@given(real_scores(), real_scores())
def test_rabbi_equals_brute_force_pair_count(a, b):
    assert rabbi(a, b) == pytest.approx(_brute_rabbi(a, b), abs=1e-12)


@PROPERTY
@given(real_scores(), real_scores())
def test_rabbi_antisymmetric_and_bounded(a, b):
    r = rabbi(a, b)
    assert -1.0 <= r <= 1.0
    assert rabbi(b, a) == pytest.approx(-r, abs=1e-12)
    assert rabbi(a, a) == pytest.approx(0.0, abs=1e-12)


@PROPERTY
@given(
    real_scores(max_size=12).flatmap(
        lambda a: st.tuples(st.just(a), hnp.arrays(np.int64, len(a), elements=st.integers(1, 4)))
    ),
    real_scores(),
)
def test_rabbi_weights(args, b):
    a, wa = args
    assert rabbi(a, b, weights_a=wa) == pytest.approx(_brute_rabbi(a, b, wa), abs=1e-12)
    # integer weights equal repeated candidates; unit weights equal no weights
    assert rabbi(a, b, weights_a=wa) == pytest.approx(rabbi(np.repeat(a, wa), b), abs=1e-12)
    assert rabbi(a, b, weights_b=np.ones(len(b))) == pytest.approx(rabbi(a, b), abs=1e-12)


@PROPERTY
@given(real_scores(), real_scores(), st.randoms(use_true_random=False))
def test_rabbi_permutation_invariant(a, b, rnd):
    pa = np.array(rnd.sample(list(a), len(a)))
    assert rabbi(pa, b) == pytest.approx(rabbi(a, b), abs=1e-12)


# ---------------------------------------------------------------------------- baselines
def test_average_score_gap_by_hand():
    assert average_score_gap([0.9, 0.7], [0.5, 0.3]) == pytest.approx(0.4)
    assert average_score_gap([1.0, 0.0], [0.5], weights_a=[3, 1]) == pytest.approx(0.25)


def test_jensen_shannon_by_hand():
    a, b = [0.1, 0.2, 0.6], [0.6, 0.7, 0.8]
    # P = (2/3, 1/3), Q = (0, 1), M = (1/3, 2/3)
    # KL(P||M) = 2/3 log2 2 + 1/3 log2(1/2) = 1/3 ; KL(Q||M) = log2 1.5
    expected = (1 / 3 + np.log2(1.5)) / 2
    got = jensen_shannon_divergence(a, b, bins=2, score_range=(0, 1))
    assert got == pytest.approx(expected)
    assert got == pytest.approx(jensenshannon([2 / 3, 1 / 3], [0, 1], base=2) ** 2)
    assert jensen_shannon_divergence(a, b, bins=[0, 0.5, 1.0]) == pytest.approx(expected)
    assert jensen_shannon_divergence(a, a) == 0.0
    assert jensen_shannon_divergence([1.0, 1.0], [1.0]) == 0.0
    assert jensen_shannon_divergence(a, b, bins=2, score_range=(0, 1), base=np.e) == pytest.approx(expected * np.log(2))


def test_jensen_shannon_outside_range_is_undefined():
    with pytest.warns(UndefinedMetricWarning, match="no score inside"):
        assert np.isnan(jensen_shannon_divergence([5.0], [0.5], score_range=(0, 1)))


def test_earth_movers_distance():
    assert earth_movers_distance([0.0, 1.0], [0.5, 1.5]) == pytest.approx(0.5)
    assert earth_movers_distance([0.0, 1.0], [0.0, 1.0]) == 0.0
    # weight 3 on 0 and 1 on 1 vs a point mass at 0: mass 1/4 moves by 1
    assert earth_movers_distance([0.0, 1.0], [0.0], weights_a=[3, 1]) == pytest.approx(0.25)
    assert earth_movers_distance([0.2, 0.9], [0.4]) == pytest.approx(stats.wasserstein_distance([0.2, 0.9], [0.4]))


def test_pointwise_relevance():
    # Yes/No with relevance 1/0 ; probabilities renormalised over the labels
    got = pointwise_relevance_score([[0.6, 0.2], [0.1, 0.1]], [1, 0])
    assert got == pytest.approx([0.75, 0.5])
    # grades 1..5
    grades = pointwise_relevance_score([[0, 0, 0.5, 0.5, 0]], [1, 2, 3, 4, 5])
    assert grades == pytest.approx([3.5])
    with pytest.warns(UndefinedMetricWarning, match="no probability"):
        assert np.isnan(pointwise_relevance_score([[0.0, 0.0]], [1, 0])[0])
