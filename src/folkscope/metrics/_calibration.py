"""Calibration of risk scores: ECE, calibration curves, confidence bias, SCE, Brier, log loss.

Formulas follow Cruz, Hardt & Mendler-Dünner, "Evaluating language models as
risk scores" (NeurIPS 2024 D&B), section 2 and appendix A.1; see
``spec/risk-scores.md`` ("Evaluation").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.metrics._validation import (
    FloatArray,
    check_binary_input,
    check_number,
    check_option,
    check_sample_weight,
    check_scores,
    total_weight,
    undefined,
    weighted_quantile,
    wmean,
)

__all__ = [
    "brier_score_loss",
    "confidence_bias",
    "expected_calibration_error",
    "log_loss",
    "score_summary",
    "signed_calibration_error",
]

_STRATEGIES = ("uniform", "uniform_exact", "quantile", "equal_count")


def _bin_edges(p: FloatArray, w: FloatArray | None, n_bins: int, strategy: str) -> FloatArray:
    levels = np.arange(n_bins + 1) / n_bins
    if strategy == "uniform":
        # folktexts' (netcal's) edges: linspace, whose 0.30000000000000004 keeps a score of 0.3 in [0.2, 0.3)
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "uniform_exact":
        # m / M, so that edges equal the decimals users type: 3 / 10 == 0.3
        return levels
    if strategy == "quantile":
        # folktexts' ECE (netcal): linearly interpolated quantiles of the scores, weights not used
        # for the edges, the outer edges moved to 0 and 1
        edges = np.quantile(p, levels) if len(p) else levels.copy()
        edges[0], edges[-1] = 0.0, 1.0
        return np.asarray(edges, dtype=np.float64)
    return weighted_quantile(p, levels, w)


def _assign_bins(p: FloatArray, edges: FloatArray, strategy: str) -> Any:
    # uniform and folktexts' quantile bins are [a, b) with the last closed (numpy's histogram rule;
    # between tied quantile edges a score goes to the last bin that starts at it); equal_count edges
    # are data values from the inverted CDF, so its bins are (a, b] (the first closed) and hold equal counts
    if strategy == "equal_count":
        return np.searchsorted(edges[1:-1], p, side="left")
    return np.searchsorted(edges[1:-1], p, side="right")


def _check_bins(n_bins: object, strategy: object) -> tuple[int, str]:
    check_number(n_bins, "n_bins", integer=True, low=1)
    check_option(strategy, "strategy", _STRATEGIES)
    return int(n_bins), str(strategy)  # type: ignore[call-overload]


def expected_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    n_bins: int = 10,
    strategy: str = "uniform",
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Expected calibration error over equal-width or quantile score bins.

    .. math:: \mathrm{ECE} = \frac{1}{n}\sum_m \Big|\sum_{i\in B_m} y_i - \sum_{i\in B_m} r_i\Big|

    With weights, every sum is weighted and ``n`` becomes the total weight.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels 0/1.
    y_prob : array-like of shape (n_samples,)
        Risk scores in [0, 1].
    n_bins : int, default=10
        Number of bins M (the paper uses 10).
    strategy : {"uniform", "uniform_exact", "quantile", "equal_count"}, default="uniform"
        ``"uniform"``: folktexts' ``ece`` (netcal's ``equal_intervals=True``):
        M equal-width bins ``[e_m, e_{m+1})`` on [0, 1] (1.0 in the last) with
        edges ``numpy.linspace(0, 1, M+1)``, whose 0.30000000000000004 keeps a
        score of exactly 0.3 in the bin below it. ``"uniform_exact"``: edges
        exactly m/M, so a score of 0.3 opens its bin; on scores on a 0.01 grid
        (numeric prompting) the two differ (by up to 1.2e-2 measured at
        n = 100), elsewhere they agree. ``"quantile"``: folktexts' ``ece_quantile`` (netcal's
        ``equal_intervals=False``): edges at the linearly interpolated
        quantiles m/M of the scores (``numpy.quantile``; weights are not used
        for the edges), outer edges 0 and 1, bins ``[e_m, e_{m+1})`` with the
        last closed. ``"equal_count"``: edges at the (weighted) quantiles by
        the inverted empirical CDF, bins ``(e_m, e_{m+1}]`` (the minimum in
        the first), so untied scores split into equal counts (equal weight
        with weights). Tied scores can merge bins, and empty bins add 0.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative survey weights.
    nan_policy : {"raise", "omit"}, default="raise"
        NaN scores raise; ``"omit"`` drops them explicitly.

    Returns
    -------
    float
        ECE in [0, 1] (lower is better).

    References
    ----------
    Cruz, Hardt, Mendler-Dünner (2024), eq. (1).

    Examples
    --------
    >>> expected_calibration_error([0, 1, 1, 0], [0.1, 0.9, 0.6, 0.4], n_bins=2)
    0.25
    """
    nb, strat = _check_bins(n_bins, strategy)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _ece(y, p, w, nb, strat)


def _ece(y: FloatArray, p: FloatArray, w: FloatArray | None, nb: int, strat: str) -> float:
    """ECE on validated arrays (shared with groupwise_metrics, which validates once)."""
    total = total_weight(len(y), w)
    if len(y) == 0 or total == 0:
        return undefined("expected_calibration_error is undefined: no scored row is left.")
    idx = _assign_bins(p, _bin_edges(p, w, nb, strat), strat)
    sy = np.bincount(idx, weights=y if w is None else y * w, minlength=nb)
    sp = np.bincount(idx, weights=p if w is None else p * w, minlength=nb)
    return float(np.abs(sy - sp).sum() / total)


def confidence_bias(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Risk-score confidence bias :math:`R_{bias}` (over- vs under-confidence).

    .. math:: R_{bias} = \sum_m \frac{|B_m|}{n}\,[\mathrm{Conf}(B_m) - \mathrm{Acc}(B_m)]

    with Conf the mean of ``max(r, 1 - r)`` and Acc the accuracy of the argmax
    prediction ``1{r > 0.5}``. Because every bin is weighted by its share of rows,
    the sum equals ``mean(max(r, 1-r)) - mean(correct)`` for *any* binning, so no
    ``n_bins`` is needed. Positive: over-confident; negative: under-confident.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [-0.5, 1]

    References
    ----------
    Cruz, Hardt, Mendler-Dünner (2024), section 4.2.

    Examples
    --------
    >>> round(confidence_bias([1, 0], [0.9, 0.6]), 12)  # conf (0.9 + 0.6)/2, accuracy 1/2
    0.25
    """
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _confidence_bias(y, p, w)


def _confidence_bias(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    if len(y) == 0:
        return undefined("confidence_bias is undefined: no scored row is left.")
    conf = np.maximum(p, 1.0 - p)
    correct = ((p > 0.5) == (y == 1)).astype(np.float64)
    return wmean(conf - correct, w)


def signed_calibration_error(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Signed calibration error :math:`SCE = \frac{1}{n}\sum_i (r_i - y_i)`.

    Positive values mean scores are biased upward for this population. The
    paper writes the sum over score buckets; the bucketing cancels. For the group
    difference :math:`\Delta SCE = SCE_A - SCE_B` use
    :func:`signed_calibration_error_gap`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [-1, 1]

    References
    ----------
    Cruz, Hardt, Mendler-Dünner (2024), appendix A.1, eq. (3).

    Examples
    --------
    >>> signed_calibration_error([1, 0], [0.5, 0.5])
    0.0
    """
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _sce(y, p, w)


def _sce(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    if len(y) == 0:
        return undefined("signed_calibration_error is undefined: no scored row is left.")
    return wmean(p - y, w)


def brier_score_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Brier score :math:`\frac{1}{n}\sum_i (r_i - y_i)^2` (lower is better).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Brier (1950), Monthly Weather Review 78(1).

    Examples
    --------
    >>> round(brier_score_loss([1, 0], [0.8, 0.4]), 12)  # (0.2**2 + 0.4**2) / 2
    0.1
    """
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _brier(y, p, w)


def _brier(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    if len(y) == 0:
        return undefined("brier_score_loss is undefined: no scored row is left.")
    return wmean((p - y) ** 2, w)


def log_loss(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    eps: float | None = None,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Binary cross-entropy :math:`-\frac{1}{n}\sum_i [y_i\ln r_i + (1-y_i)\ln(1-r_i)]` in nats.

    Scores of exactly 0 or 1 on the wrong label give ``inf``: nothing is clipped
    unless ``eps`` is passed, in which case scores are clipped to
    ``[eps, 1 - eps]`` first.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    eps : float in (0, 0.5), optional
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float >= 0 (may be inf)

    Examples
    --------
    >>> round(log_loss([1, 0], [0.5, 0.5]), 6)   # ln 2
    0.693147
    """
    if eps is not None:
        check_number(eps, "eps", low=0, high=0.5, low_open=True, high_open=True)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _log_loss(y, p, w, eps)


def _log_loss(y: FloatArray, p: FloatArray, w: FloatArray | None, eps: float | None) -> float:
    if len(y) == 0:
        return undefined("log_loss is undefined: no scored row is left.")
    if eps is not None:
        p = np.clip(p, eps, 1 - eps)
    with np.errstate(divide="ignore"):
        ll = np.log(np.where(y == 1, p, 1.0 - p))  # one log per row, not two
    if w is not None:
        ll = np.where(w > 0, ll, 0.0)  # a zero-weight row cannot make the loss infinite
    return float(-wmean(ll, w))


def score_summary(
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    quantiles: Sequence[float] = (0.05, 0.25, 0.5, 0.75, 0.95),
    near: float = 0.05,
) -> dict[str, float]:
    """Summary of a score distribution, with NaN scores counted (not dropped silently).

    Statistics are computed on the non-NaN scores; ``n_nan`` and ``share_nan``
    say how many were excluded.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples,)
        Scores in [0, 1]; NaN allowed (counted).
    sample_weight : array-like of shape (n_samples,), optional
    quantiles : sequence of float in [0, 1]
        Reported as ``"q<level>"`` by the inverted empirical CDF.
    near : float in [0, 0.5], default=0.05
        ``share_near_0`` is the share with ``r <= near``, ``share_near_1`` with
        ``r >= 1 - near``.

    Returns
    -------
    dict
        ``n, n_nan, share_nan, mean, std`` (weighted, ddof=0), the quantiles,
        ``share_near_0, share_near_1``.

    Examples
    --------
    >>> s = score_summary([0.0, 0.5, 1.0, float("nan")], quantiles=[0.5])
    >>> s["n_nan"], s["mean"], s["q0.5"], s["share_near_1"]
    (1.0, 0.5, 0.5, 0.3333333333333333)
    """
    check_number(near, "near", low=0, high=0.5)
    levels = [check_number(q, "quantiles", low=0, high=1) for q in quantiles]
    p, nan = check_scores(y_prob, "y_prob", nan_policy="omit")
    w = check_sample_weight(sample_weight, len(p))
    keep = ~nan
    p = p[keep]
    w = None if w is None else w[keep]
    n_nan = int(nan.sum())
    out: dict[str, float] = {"n": float(len(nan)), "n_nan": float(n_nan), "share_nan": n_nan / len(nan)}
    if len(p) == 0 or total_weight(len(p), w) == 0:
        undefined("score_summary: every score is NaN (or has weight 0); statistics are NaN.")
        stats = dict.fromkeys(
            ["mean", "std", *[f"q{q:g}" for q in levels], "share_near_0", "share_near_1"], float("nan")
        )
        return {**out, **stats}
    mean = wmean(p, w)
    out["mean"] = mean
    out["std"] = float(np.sqrt(max(wmean((p - mean) ** 2, w), 0.0)))
    for q, v in zip(levels, weighted_quantile(p, levels, w), strict=True):
        out[f"q{q:g}"] = float(v)
    out["share_near_0"] = wmean((p <= near).astype(np.float64), w)
    out["share_near_1"] = wmean((p >= 1 - near).astype(np.float64), w)
    return out
