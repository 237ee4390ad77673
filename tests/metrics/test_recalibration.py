"""Platt scaling and isotonic recalibration fitted on training rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from folkscope.errors import ConfigError, DataError
from folkscope.metrics import (
    IsotonicCalibrator,
    PlattCalibrator,
    expected_calibration_error,
)


def _overconfident(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """True probability q; reported score = sigmoid(3 * logit(q)) (over-confident)."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < q).astype(int)
    z = np.log(q / (1 - q))
    return y, 1 / (1 + np.exp(-3 * z))


def test_platt_recovers_known_distortion():
    y, r = _overconfident(20000, 0)
    cal = PlattCalibrator().fit(r, y)
    # logit(r) = 3 logit(q): the calibrated slope is 1/3, intercept 0
    assert cal.coef_ == pytest.approx(1 / 3, abs=0.03)
    assert cal.intercept_ == pytest.approx(0.0, abs=0.05)
    y_test, r_test = _overconfident(20000, 1)
    assert expected_calibration_error(y_test, cal.transform(r_test)) < 0.02
    assert expected_calibration_error(y_test, r_test) > 0.1


def test_platt_is_the_weighted_maximum_likelihood_fit():
    rng = np.random.default_rng(5)
    r = rng.uniform(0.01, 0.99, 400)
    y = (rng.random(400) < r**2).astype(int)
    w = rng.integers(1, 4, 400).astype(float)
    cal = PlattCalibrator().fit(r, y, sample_weight=w)
    z = np.log(r / (1 - r))

    def nll(t):
        s = t[0] * z + t[1]
        return np.sum(w * (np.logaddexp(0, s) - y * s))

    ref = minimize(nll, [0.5, 0.5], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 10000}).x
    assert cal.coef_ == pytest.approx(ref[0], abs=1e-5)
    assert cal.intercept_ == pytest.approx(ref[1], abs=1e-5)


def test_platt_handles_extreme_scores_and_separable_data():
    cal = PlattCalibrator().fit([0.0, 0.0, 1.0, 1.0], [0, 0, 1, 1])
    q = cal.transform([0.0, 0.5, 1.0])
    assert np.all(np.isfinite(q)) and q[0] < 0.5 < q[2]
    assert cal.transform([0.5])[0] == pytest.approx(0.5, abs=1e-6)


def test_isotonic_is_monotone_and_pools_violators():
    cal = IsotonicCalibrator().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    # pool adjacent violators: (1, 0) -> 0.5, 0.5
    assert cal.transform([0.1, 0.2, 0.3, 0.4]).tolist() == [0.0, 0.5, 0.5, 1.0]
    # outside the training range: the value at the nearest end
    assert cal.transform([0.0, 1.0]).tolist() == [0.0, 1.0]
    y, r = _overconfident(5000, 2)
    q = IsotonicCalibrator().fit_transform(r, y)
    order = np.argsort(r)
    assert np.all(np.diff(q[order]) >= -1e-12)


@pytest.mark.parametrize("cls", [PlattCalibrator, IsotonicCalibrator])
def test_errors(cls):
    with pytest.raises(ConfigError, match="not fitted"):
        cls().transform([0.5])
    with pytest.raises(DataError, match="both classes"):
        cls().fit([0.2, 0.4], [1, 1])
    with pytest.raises(DataError, match=r"y_prob must hold probabilities in \[0, 1\]"):
        cls().fit([0.2, 1.4], [0, 1])
    with pytest.raises(DataError, match="scores contains 1 NaN"):
        cls().fit([0.2, 0.4, 0.6], [0, 1, 1]).transform([np.nan])


def test_platt_bad_options():
    with pytest.raises(ConfigError) as info:
        PlattCalibrator(eps=0.7).fit([0.2, 0.4], [0, 1])
    assert info.value.parameter == "eps"
