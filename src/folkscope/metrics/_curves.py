"""Curves over score bins and confidence levels: reliability diagrams, selective accuracy.

Compute only; plotting lives in the report layer. Binning follows
:func:`~folkscope.metrics.expected_calibration_error`; the prediction rule
``1{r > 0.5}`` follows Cruz, Hardt & Mendler-Dünner (2024), section 2.2.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.metrics._calibration import _assign_bins, _bin_edges, _check_bins
from folkscope.metrics._validation import (
    FloatArray,
    check_binary_input,
    check_number,
    check_option,
    undefined,
)

__all__ = ["calibration_curve", "selective_accuracy_curve", "selective_accuracy_score"]

_INTERVALS = ("wilson", "clopper-pearson")


def calibration_curve(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    sample_weight: ArrayLike | None = None,
    interval: str = "wilson",
    confidence: float = 0.95,
    nan_policy: str = "raise",
) -> pd.DataFrame:
    """Reliability-diagram data: per bin, mean score, positive rate and its interval.

    Parameters
    ----------
    y_true, y_prob, n_bins, strategy, sample_weight, nan_policy
        As in :func:`expected_calibration_error`.
    interval : {"wilson", "clopper-pearson"}, default="wilson"
        Binomial interval for the positive rate of each bin. With weights the
        Kish effective size ``(sum w)^2 / sum w^2`` replaces the count and the
        weighted rate the proportion (a design-effect approximation).
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    pandas.DataFrame
        One row per bin (``n_bins`` rows, empty bins kept with ``count == 0`` and
        NaN rates) with columns ``bin, lower, upper, count, weight,
        mean_predicted, fraction_positive, ci_low, ci_high``.

    Examples
    --------
    >>> curve = calibration_curve([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.8], n_bins=2)
    >>> curve[["count", "mean_predicted", "fraction_positive"]].to_numpy().tolist()
    [[2.0, 0.15000000000000002, 0.0], [2.0, 0.75, 1.0]]
    """
    nb, strat = _check_bins(n_bins, strategy)
    check_option(interval, "interval", _INTERVALS)
    check_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    ww = np.ones_like(p) if w is None else w
    edges = _bin_edges(p, w, nb, strat) if len(p) else np.linspace(0.0, 1.0, nb + 1)
    idx = _assign_bins(p, edges, strat)
    count = np.bincount(idx, minlength=nb).astype(np.float64)
    weight = np.bincount(idx, weights=ww, minlength=nb)
    weight2 = np.bincount(idx, weights=ww * ww, minlength=nb)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_pred = np.bincount(idx, weights=ww * p, minlength=nb) / weight
        frac = np.bincount(idx, weights=ww * y, minlength=nb) / weight
        n_eff = weight**2 / weight2
    low, high = _binomial_interval(frac, n_eff, confidence, interval)
    return pd.DataFrame(
        {
            "bin": np.arange(nb),
            "lower": edges[:-1],
            "upper": edges[1:],
            "count": count,
            "weight": weight,
            "mean_predicted": mean_pred,
            "fraction_positive": frac,
            "ci_low": low,
            "ci_high": high,
        }
    )


def _binomial_interval(
    phat: FloatArray, n: FloatArray, confidence: float, method: str
) -> tuple[FloatArray, FloatArray]:
    from scipy import stats

    alpha = 1.0 - confidence
    with np.errstate(invalid="ignore", divide="ignore"):
        if method == "wilson":
            z = stats.norm.ppf(1 - alpha / 2)
            denom = 1 + z**2 / n
            centre = (phat + z**2 / (2 * n)) / denom
            half = z / denom * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2))
            # In exact arithmetic the interval holds phat and is [0, .] at phat = 0 and [., 1] at phat = 1;
            # in floating point centre - half can land at +3e-17 above 0 (n = 7, 9, 12, ...). Make both exact.
            low = np.where(phat <= 0, 0.0, np.minimum(np.clip(centre - half, 0, 1), phat))
            high = np.where(phat >= 1, 1.0, np.maximum(np.clip(centre + half, 0, 1), phat))
            return low, high
        x = phat * n
        low = np.where(x > 0, stats.beta.ppf(alpha / 2, x, n - x + 1), 0.0)
        high = np.where(x < n, stats.beta.ppf(1 - alpha / 2, x + 1, n - x), 1.0)
        empty = ~(n > 0)
        return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def _confidence_levels(
    y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None, nan_policy: str
) -> tuple[Any, Any, Any, float]:
    """Per distinct confidence max(r, 1-r), descending: (level, weight, correct weight)."""
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    if w is not None:  # a row of weight 0 must not add a point to the curve
        y, p, w = y[w > 0], p[w > 0], w[w > 0]
    conf = np.maximum(p, 1.0 - p)
    correct = ((p > 0.5) == (y == 1)).astype(np.float64)
    levels, inv = np.unique(conf, return_inverse=True)
    ww = np.ones_like(y) if w is None else w
    wt = np.bincount(inv, weights=ww, minlength=len(levels))[::-1]
    wc = np.bincount(inv, weights=ww * correct, minlength=len(levels))[::-1]
    return levels[::-1], wt, wc, float(ww.sum())


def selective_accuracy_curve(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> pd.DataFrame:
    """Accuracy of the argmax prediction on the most confident rows, at every coverage.

    Rows are ranked by confidence ``max(r, 1 - r)``; one point per distinct
    confidence level ``c`` keeps all rows with confidence >= c (ties are never
    split, so the curve does not depend on row order).

    Parameters
    ----------
    y_true, y_prob, sample_weight, nan_policy
        As in :func:`accuracy_score`.

    Returns
    -------
    pandas.DataFrame
        Columns ``confidence`` (descending), ``coverage`` (share of total weight
        kept), ``selective_accuracy``, ``weight``.

    Examples
    --------
    >>> curve = selective_accuracy_curve([1, 0, 1], [0.9, 0.2, 0.4])
    >>> curve["coverage"].round(3).tolist(), curve["selective_accuracy"].round(3).tolist()
    ([0.333, 0.667, 1.0], [1.0, 1.0, 0.667])
    """
    levels, wt, wc, total = _confidence_levels(y_true, y_prob, sample_weight, nan_policy)
    cw, cc = np.cumsum(wt), np.cumsum(wc)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = cc / cw
    return pd.DataFrame({"confidence": levels, "coverage": cw / total, "selective_accuracy": acc, "weight": cw})


def selective_accuracy_score(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    coverage: float = 0.5,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Accuracy on the ``coverage`` share of rows with the highest confidence ``max(r, 1-r)``.

    Rows tied at the boundary confidence enter with a common fraction so the
    kept weight is exactly ``coverage`` of the total (the expectation under
    random tie-breaking, independent of row order).

    Parameters
    ----------
    y_true, y_prob, sample_weight, nan_policy
        As in :func:`accuracy_score`.
    coverage : float in (0, 1], default=0.5

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> selective_accuracy_score([1, 0, 1, 0], [0.9, 0.2, 0.4, 0.6], coverage=0.5)
    1.0
    """
    check_number(coverage, "coverage", low=0.0, high=1.0, low_open=True)
    levels, wt, wc, total = _confidence_levels(y_true, y_prob, sample_weight, nan_policy)
    if total == 0:
        return undefined("selective_accuracy_score is undefined: no weighted row is left.")
    target = float(coverage) * total
    cw = np.cumsum(wt)
    k = int(np.searchsorted(cw, target * (1 - 1e-12), side="left"))
    k = min(k, len(cw) - 1)
    before_w = cw[k - 1] if k > 0 else 0.0
    before_c = float(wc[:k].sum())
    frac = (target - before_w) / wt[k] if wt[k] > 0 else 0.0
    return float((before_c + frac * wc[k]) / target)
