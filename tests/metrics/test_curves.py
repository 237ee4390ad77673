"""Reliability-diagram data with intervals, and selective accuracy / coverage curves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from folkscope.metrics import (
    accuracy_score,
    calibration_curve,
    selective_accuracy_curve,
    selective_accuracy_score,
)


def test_calibration_curve_counts_and_empty_bins():
    curve = calibration_curve([0, 1, 1, 0, 1], [0.05, 0.15, 0.55, 0.58, 0.95])
    assert len(curve) == 10
    assert curve["count"].tolist() == [1, 1, 0, 0, 0, 2, 0, 0, 0, 1]
    empty = curve[curve["count"] == 0]
    assert empty[["mean_predicted", "fraction_positive", "ci_low", "ci_high"]].isna().all().all()
    assert curve.loc[5, "mean_predicted"] == pytest.approx(0.565)
    assert curve.loc[5, "fraction_positive"] == pytest.approx(0.5)
    assert curve["lower"].tolist()[:3] == [0.0, 0.1, 0.2]


@pytest.mark.parametrize(("interval", "method"), [("wilson", "wilson"), ("clopper-pearson", "exact")])
def test_calibration_curve_intervals_match_scipy(interval, method):
    # one bin with 3 of 8 positive, one with 0 of 2, one with 2 of 2
    y = [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    p = [0.35] * 8 + [0.05, 0.05, 0.95, 0.95]
    curve = calibration_curve(y, p, interval=interval).set_index("bin")
    for b, k, n in [(3, 3, 8), (0, 0, 2), (9, 2, 2)]:
        ref = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method=method)
        assert curve.loc[b, "ci_low"] == pytest.approx(ref.low, abs=1e-9)
        assert curve.loc[b, "ci_high"] == pytest.approx(ref.high, abs=1e-9)


def test_calibration_curve_weighted_uses_effective_size():
    # equal weights 2: effective size stays 4, so intervals equal the unweighted ones
    a = calibration_curve([1, 0, 0, 1], [0.35] * 4)
    b = calibration_curve([1, 0, 0, 1], [0.35] * 4, sample_weight=[2, 2, 2, 2])
    assert np.allclose(a["ci_low"], b["ci_low"], equal_nan=True)
    assert b.loc[3, "weight"] == 8


def test_calibration_curve_quantile_bins_equal_counts():
    p = np.linspace(0.01, 0.99, 100)
    y = (p > 0.5).astype(int)
    curve = calibration_curve(y, p, strategy="quantile", n_bins=10)
    assert curve["count"].tolist() == [10] * 10


def test_selective_accuracy_by_hand():
    y = [1, 0, 1, 0, 1]
    p = [0.95, 0.1, 0.3, 0.65, 0.65]
    # confidence 0.95 0.9 0.7 0.65 0.65 ; correct 1 1 0 0 1
    curve = selective_accuracy_curve(y, p)
    assert curve["confidence"].tolist() == pytest.approx([0.95, 0.9, 0.7, 0.65])
    assert curve["coverage"].tolist() == pytest.approx([0.2, 0.4, 0.6, 1.0])
    assert curve["selective_accuracy"].tolist() == pytest.approx([1, 1, 2 / 3, 3 / 5])
    assert selective_accuracy_score(y, p, coverage=0.4) == pytest.approx(1.0)
    # coverage 0.8: three full rows (2 correct) + half of the tied pair (1 correct of 2)
    assert selective_accuracy_score(y, p, coverage=0.8) == pytest.approx((2 + 0.5) / 4)
    assert selective_accuracy_score(y, p, coverage=1.0) == pytest.approx(accuracy_score(y, p))


@pytest.mark.parametrize("n", [7, 9, 12, 14, 18, 24, 1, 2, 3, 100])
@pytest.mark.parametrize("interval", ["wilson", "clopper-pearson"])
def test_intervals_hold_the_observed_rate_exactly_at_0_and_1(n, interval):
    """n = 7 all negative gave a Wilson lower bound of +2.8e-17 above the rate 0, and the plot refused the bar."""
    for label in (0, 1):
        row = calibration_curve(np.full(n, label), np.full(n, 0.3), n_bins=1, interval=interval).iloc[0]
        assert row["ci_low"] <= row["fraction_positive"] <= row["ci_high"]
        assert (row["ci_low"] == 0.0) if label == 0 else (row["ci_high"] == 1.0)


@pytest.mark.parametrize("interval", ["wilson", "clopper-pearson"])
def test_intervals_always_hold_the_rate(interval):
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        y = (rng.random(n) < rng.random()).astype(int)
        curve = calibration_curve(y, rng.random(n), n_bins=int(rng.integers(1, 6)), interval=interval)
        full = curve[curve["count"] > 0]
        assert (full["ci_low"] <= full["fraction_positive"]).all() and (
            full["fraction_positive"] <= full["ci_high"]
        ).all()
