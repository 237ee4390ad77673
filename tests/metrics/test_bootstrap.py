"""Bootstrap and clustered intervals: reproducibility, known cases, undefined resamples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import (
    bootstrap_ci,
    brier_score_loss,
    clustered_mean_ci,
    expected_calibration_error,
    roc_auc_score,
)

from .strategies import PROPERTY, binary_data

RNG = np.random.default_rng(11)
Y = RNG.integers(0, 2, 200)
P = np.clip(0.4 * Y + 0.6 * RNG.random(200), 0, 1)


@PROPERTY
@given(binary_data(min_size=3, max_size=30), st.integers(0, 2**32 - 1))
def test_same_seed_same_result(data, seed):
    y, p = data
    a = bootstrap_ci(brier_score_loss, y, p, n_resamples=50, random_state=seed)
    b = bootstrap_ci(brier_score_loss, y, p, n_resamples=50, random_state=np.random.default_rng(seed))
    assert np.array_equal(a.distribution, b.distribution)
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low <= a.high


def test_interval_of_a_mean_matches_theory():
    # percentile interval of a mean of n Bernoulli(0.3): close to the normal approximation
    x = (np.arange(1000) % 10 < 3).astype(float)
    res = bootstrap_ci(np.mean, x, n_resamples=2000, random_state=0)
    se = np.sqrt(0.3 * 0.7 / 1000)
    assert res.estimate == pytest.approx(0.3)
    assert res.std_error == pytest.approx(se, rel=0.1)
    assert res.low == pytest.approx(0.3 - 1.96 * se, abs=0.006)
    assert res.high == pytest.approx(0.3 + 1.96 * se, abs=0.006)
    assert res.n_undefined == 0 and res.n_resamples == 2000


def test_metric_with_weights_and_keywords():
    w = RNG.integers(1, 4, 200).astype(float)
    res = bootstrap_ci(
        lambda y, p, w: expected_calibration_error(y, p, sample_weight=w), Y, P, w, n_resamples=100, random_state=1
    )
    assert res.estimate == pytest.approx(expected_calibration_error(Y, P, sample_weight=w))
    assert res.low <= res.estimate <= res.high


def test_undefined_resamples_are_counted_and_reported():
    y = np.array([1] + [0] * 9)  # a resample often lacks the single positive
    p = np.linspace(0.1, 0.9, 10)
    with pytest.warns(UndefinedMetricWarning, match=r"undefined \(NaN\) in \d+ of 200"):
        res = bootstrap_ci(roc_auc_score, y, p, n_resamples=200, random_state=0)
    expected = 200 * 0.9**10  # P(no positive drawn) = 0.9^10 ~ 0.35
    assert res.n_undefined == np.isnan(res.distribution).sum()
    assert abs(res.n_undefined - expected) < 30


def test_all_resamples_undefined():
    with pytest.warns(UndefinedMetricWarning):
        res = bootstrap_ci(roc_auc_score, [1, 1, 1], [0.2, 0.4, 0.6], n_resamples=10, random_state=0)
    assert np.isnan(res.low) and res.n_undefined == 10


def test_cluster_bootstrap_draws_whole_clusters():
    # two clusters with constant values 0 and 1: every resample mean is 0, 1/2 or 1
    x = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    res = bootstrap_ci(np.mean, x, clusters=[7, 7, 7, 9, 9, 9], n_resamples=400, random_state=0)
    assert set(np.round(res.distribution, 12)) <= {0.0, 0.5, 1.0}
    assert (res.low, res.high) == (0.0, 1.0)
    # a row bootstrap of the same data is far narrower
    rows = bootstrap_ci(np.mean, x, n_resamples=400, random_state=0)
    assert rows.high - rows.low < 1.0


def test_bad_bootstrap_inputs():
    with pytest.raises(DataError, match="Inconsistent numbers of rows"):
        bootstrap_ci(brier_score_loss, [0, 1], [0.2, 0.3, 0.4])
    with pytest.raises(DataError, match="clusters must have shape"):
        bootstrap_ci(np.mean, [1.0, 2.0], clusters=[1])
    with pytest.raises(DataError, match="scalar"):
        bootstrap_ci(np.mean, 3.0)


def test_clustered_mean_ci_by_hand():
    x = np.array([1.0, 2.0, 3.0, 6.0])
    # no clusters: residuals -2, -1, 0, 3 ; SE = sqrt(4 + 1 + 0 + 9) / 4
    res = clustered_mean_ci(x)
    assert res.mean == 3.0
    assert res.std_error == pytest.approx(np.sqrt(14) / 4)
    assert res.high - res.mean == pytest.approx(1.959963984540054 * np.sqrt(14) / 4)
    # clusters {0,1} and {2,3}: sums -3 and 3 ; SE = sqrt(9 + 9) / 4
    res = clustered_mean_ci(x, ["a", "a", "b", "b"])
    assert res.std_error == pytest.approx(np.sqrt(18) / 4)
    with pytest.raises(DataError, match="NaN"):
        clustered_mean_ci([1.0, np.nan])
