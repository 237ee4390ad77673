"""Calibration metrics: hand-computed values, interval references and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import (
    brier_score_loss,
    calibration_curve,
    confidence_bias,
    expected_calibration_error,
    log_loss,
    score_summary,
    signed_calibration_error,
)

from .strategies import PROPERTY, binary_data, int_weights

ECE_UNIFORM = lambda y, p, **kw: expected_calibration_error(y, p, **kw)  # noqa: E731
ECE_EQUAL_COUNT = lambda y, p, **kw: expected_calibration_error(y, p, strategy="equal_count", **kw)  # noqa: E731,E501
# folktexts' quantile ECE places its edges by the unweighted scores, so integer weights are not row repetition there
WEIGHTED = [ECE_UNIFORM, ECE_EQUAL_COUNT, brier_score_loss, log_loss, confidence_bias, signed_calibration_error]


# ---------------------------------------------------------------------------- hand values
def test_ece_uniform_by_hand():
    y = [0, 1, 1, 0, 1]
    p = [0.05, 0.15, 0.55, 0.58, 0.95]
    # bins (width 0.1): 0 -> {0.05}, 1 -> {0.15}, 5 -> {0.55, 0.58}, 9 -> {0.95}
    # |0 - 0.05| + |1 - 0.15| + |1 - 1.13| + |1 - 0.95| = 0.05 + 0.85 + 0.13 + 0.05 = 1.08
    assert expected_calibration_error(y, p) == pytest.approx(1.08 / 5)


def test_ece_uniform_edges_are_left_closed():
    # uniform_exact: 0.3 lies on an edge and joins 0.35 in bin [0.3, 0.4): |1 - 0.65| / 2
    assert expected_calibration_error([1, 0], [0.3, 0.35], strategy="uniform_exact") == pytest.approx(0.175)
    # uniform (folktexts' linspace edges): 0.3 < 0.30000000000000004 stays in [0.2, 0.3): (|1 - 0.3| + |0 - 0.35|) / 2
    assert expected_calibration_error([1, 0], [0.3, 0.35]) == pytest.approx(0.525)
    # 1.0 belongs to the last bin, 0.0 to the first
    assert expected_calibration_error([1, 0], [1.0, 0.0]) == 0.0


def test_ece_quantile_by_hand():
    y = [0, 1, 0, 1]
    p = [0.1, 0.2, 0.3, 0.4]
    # 2 quantile bins: edges (0.1, 0.2, 0.4) -> {0.1, 0.2} and {0.3, 0.4}
    # |1 - 0.3| + |1 - 0.7| = 1.0, over n = 4
    assert expected_calibration_error(y, p, n_bins=2, strategy="quantile") == pytest.approx(0.25)
    # 2 uniform bins put all in [0, 0.5): |2 - 1.0| / 4
    assert expected_calibration_error(y, p, n_bins=2) == pytest.approx(0.25)
    # 10 exact-width bins: one row each: (0.1 + 0.8 + 0.3 + 0.6) / 4
    assert expected_calibration_error(y, p, n_bins=10, strategy="uniform_exact") == pytest.approx(0.45)
    # folktexts' linspace edges keep 0.3 below 0.30000000000000004, with 0.2: (0.1 + |1 - 0.5| + 0.6) / 4
    assert expected_calibration_error(y, p, n_bins=10) == pytest.approx(0.3)


def test_ece_quantile_with_ties_merges_bins():
    # every score tied: all quantile edges coincide, one non-empty bin
    y, p = [0, 1, 1, 1], [0.5, 0.5, 0.5, 0.5]
    assert expected_calibration_error(y, p, strategy="quantile") == pytest.approx(abs(3 - 2) / 4)


def test_ece_weighted_by_hand():
    # weights 3 and 1 in one bin: |3*0 + 1*1 - (3*0.2 + 1*0.25)| / 4
    got = expected_calibration_error([0, 1], [0.2, 0.25], sample_weight=[3, 1])
    assert got == pytest.approx(abs(1 - 0.85) / 4)


def test_brier_log_loss_sce_by_hand():
    y, p = [1, 0, 1], [0.8, 0.4, 0.5]
    assert brier_score_loss(y, p) == pytest.approx((0.04 + 0.16 + 0.25) / 3)
    assert log_loss(y, p) == pytest.approx(-(np.log(0.8) + np.log(0.6) + np.log(0.5)) / 3)
    assert signed_calibration_error(y, p) == pytest.approx((-0.2 + 0.4 - 0.5) / 3)
    assert log_loss(y, p) == pytest.approx(skm.log_loss(y, p))
    assert brier_score_loss(y, p, sample_weight=[1, 2, 3]) == pytest.approx(
        skm.brier_score_loss(y, p, sample_weight=[1, 2, 3])
    )


def test_log_loss_is_honest_about_certain_mistakes():
    assert log_loss([1, 0], [0.0, 0.0]) == np.inf
    # clipped to 0.001: -(ln 0.001 + ln 0.999) / 2
    assert log_loss([1, 0], [0.0, 0.0], eps=1e-3) == pytest.approx(-(np.log(1e-3) + np.log(0.999)) / 2)
    assert log_loss([1, 0], [1.0, 0.0]) == 0.0
    # a zero-weight row cannot make the loss infinite
    assert np.isfinite(log_loss([1, 0], [0.0, 0.2], sample_weight=[0, 1]))


def test_confidence_bias_equals_binned_definition():
    rng = np.random.default_rng(3)
    p = rng.random(200)
    y = (rng.random(200) < 0.5).astype(int)
    conf = np.maximum(p, 1 - p)
    correct = ((p > 0.5) == (y == 1)).astype(float)
    bins = np.minimum((p * 10).astype(int), 9)
    by_bins = sum(
        (bins == m).mean() * (conf[bins == m].mean() - correct[bins == m].mean())
        for m in range(10)
        if (bins == m).any()
    )
    assert confidence_bias(y, p) == pytest.approx(by_bins)


def test_confidence_bias_signs():
    # over-confident: extreme scores, half wrong -> conf 0.95, acc 0.5
    assert confidence_bias([1, 0], [0.95, 0.95]) == pytest.approx(0.45)
    # under-confident: scores near 0.5 but always right -> conf 0.55, acc 1
    assert confidence_bias([1, 0], [0.55, 0.45]) == pytest.approx(-0.45)


# ---------------------------------------------------------------------------- summary
def test_score_summary_reports_nan_and_shares():
    s = score_summary([0.0, 0.02, 0.5, 0.97, 1.0, np.nan, np.nan], quantiles=[0.5])
    assert (s["n"], s["n_nan"]) == (7, 2)
    assert s["share_nan"] == pytest.approx(2 / 7)
    assert s["mean"] == pytest.approx((0.0 + 0.02 + 0.5 + 0.97 + 1.0) / 5)
    assert s["std"] == pytest.approx(np.std([0.0, 0.02, 0.5, 0.97, 1.0]))
    assert s["q0.5"] == 0.5
    assert s["share_near_0"] == pytest.approx(2 / 5)
    assert s["share_near_1"] == pytest.approx(2 / 5)


def test_score_summary_all_nan_warns():
    with pytest.warns(UndefinedMetricWarning, match="every score is NaN"):
        s = score_summary([np.nan, np.nan])
    assert s["n_nan"] == 2 and np.isnan(s["mean"])


def test_score_summary_weighted():
    s = score_summary([0.2, 0.8], sample_weight=[3, 1], quantiles=[0.5, 0.8])
    assert s["mean"] == pytest.approx(0.35)
    assert s["q0.5"] == 0.2 and s["q0.8"] == 0.8


# ---------------------------------------------------------------------------- properties
@PROPERTY
@given(binary_data(), st.integers(1, 15))
def test_ece_in_unit_interval(data, n_bins):
    y, p = data
    for strategy in ("uniform", "quantile", "equal_count"):
        assert 0.0 <= expected_calibration_error(y, p, n_bins=n_bins, strategy=strategy) <= 1.0


@PROPERTY
@given(binary_data(), st.randoms(use_true_random=False))
def test_permutation_invariance(data, rnd):
    y, p = data
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    for metric in WEIGHTED:
        assert metric(y[perm], p[perm]) == pytest.approx(metric(y, p), abs=1e-12)
    a, b = calibration_curve(y, p), calibration_curve(y[perm], p[perm])
    assert np.allclose(a.to_numpy(float), b.to_numpy(float), equal_nan=True, atol=1e-12)


@PROPERTY
@given(binary_data())
def test_unit_weights_equal_unweighted(data):
    y, p = data
    for metric in WEIGHTED:
        assert metric(y, p, sample_weight=np.ones(len(y))) == pytest.approx(metric(y, p), abs=1e-12)


@PROPERTY
@given(binary_data().flatmap(lambda d: st.tuples(st.just(d), int_weights(len(d[0])))))
def test_integer_weights_equal_row_repetition(args):
    (y, p), w = args
    for metric in WEIGHTED:
        assert metric(y, p, sample_weight=w) == pytest.approx(metric(np.repeat(y, w), np.repeat(p, w)), abs=1e-12)


@PROPERTY
@given(binary_data())
def test_sce_and_brier_relations(data):
    y, p = data
    assert signed_calibration_error(y, p) == pytest.approx(np.mean(p) - np.mean(y), abs=1e-12)
    # ECE with a single bin is |SCE|
    assert expected_calibration_error(y, p, n_bins=1) == pytest.approx(abs(signed_calibration_error(y, p)), abs=1e-12)
    assert -0.5 <= confidence_bias(y, p) <= 1.0
