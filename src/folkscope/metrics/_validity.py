"""The validity of bias metrics: do they predict the allocation gaps, and do they rank models as the gaps do?

Source: Chen, Ji & Evans, "The Mismeasure of Man and Models" (section 5:
predictive validity, table 1; model selection by NDCG@N, section 5.2);
``spec/allocation.md``. The gaps themselves are :mod:`folkscope.metrics._selection`.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import DataError
from folkscope.metrics._validation import as_1d, check_number, check_same_length, undefined

__all__ = [
    "PearsonResult",
    "model_ranking_ndcg_score",
    "predictive_validity",
    "root_mean_square_bias",
]


def root_mean_square_bias(biases: ArrayLike) -> float:
    r"""Overall bias of a model across groups, :math:`\sqrt{\frac1G\sum_g b_g^2}`.

    Used to rank models by fairness per subtask (Chen, Ji, Evans, section 5.2).

    Parameters
    ----------
    biases : array-like of shape (n_groups,)
        Bias of each group against the reference (NaN raises).

    Returns
    -------
    float >= 0

    Examples
    --------
    >>> root_mean_square_bias([0.3, -0.4])
    0.3535533905932738
    """
    b = as_1d(biases, "biases")
    if not np.isfinite(b).all():
        raise DataError("biases must be finite; drop or fix NaN group biases first.")
    return float(np.sqrt(np.mean(b * b)))


def model_ranking_ndcg_score(
    reference_values: ArrayLike,
    metric_values: ArrayLike,
    *,
    n: int | None = None,
) -> float:
    r"""NDCG@N of the model ranking by a bias metric against the ideal ranking.

    Models are ranked ascending (least biased first) by ``metric_values``
    (ranking :math:`\tau`) and by ``reference_values``, the allocation gaps
    (ideal ranking :math:`\sigma`).

    .. math:: \mathrm{DCG@}N(\tau) = \sum_{i=1}^{N} \frac{rel(\tau(i))}{\log_2(i+1)},\quad
              rel(m) = M - \sigma^{-1}(m) + 1

    i.e. the relevance of a model is its reverse rank in the ideal ranking (the
    fairest of M models gets M, the least fair 1); NDCG = DCG(τ) / DCG(σ).
    Ties: tied ideal ranks share their mean reverse rank, and models tied in the
    metric share the mean discount of their positions (the expectation over a
    random order), so the score does not depend on input order.

    Parameters
    ----------
    reference_values : array-like of shape (n_models,)
        Overall allocation gap per model (lower is fairer).
    metric_values : array-like of shape (n_models,)
        Overall bias per model by the metric (e.g. RMS of RABBI over groups).
    n : int, optional
        Rank cut-off N (default: all models).

    Returns
    -------
    float in (0, 1]

    References
    ----------
    Järvelin & Kekäläinen (2002); Chen, Ji, Evans, section 5.2.

    Examples
    --------
    >>> model_ranking_ndcg_score([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    1.0
    """
    from scipy.stats import rankdata

    ref = as_1d(reference_values, "reference_values")
    met = as_1d(metric_values, "metric_values")
    check_same_length(reference_values=ref, metric_values=met)
    if not (np.isfinite(ref).all() and np.isfinite(met).all()):
        raise DataError("reference_values and metric_values must be finite (no NaN).")
    m = len(ref)
    cut = m if n is None else int(check_number(n, "n", integer=True, low=1, high=m))
    discount = np.where(np.arange(1, m + 1) <= cut, 1.0 / np.log2(np.arange(2, m + 2)), 0.0)
    rel = m - rankdata(ref, method="average") + 1.0
    ideal = float(np.dot(np.sort(rel)[::-1], discount))
    order = np.argsort(met, kind="stable")
    sorted_met = met[order]
    run = np.cumsum(np.r_[True, sorted_met[1:] != sorted_met[:-1]]) - 1
    mean_disc = (np.bincount(run, weights=discount) / np.bincount(run))[run]
    return float(np.dot(rel[order], mean_disc) / ideal)


class PearsonResult(NamedTuple):
    """Pearson correlation and its two-sided p-value."""

    statistic: float
    pvalue: float


def predictive_validity(
    metric_values: ArrayLike,
    allocation_gaps: ArrayLike,
    *,
    absolute_gap: bool = False,
) -> PearsonResult:
    """Pearson correlation between a bias metric and the allocation gap across points.

    Each point is a (model, subtask, group) triple. Unsigned metrics (JSD, EMD)
    are compared with ``|gap|``: pass ``absolute_gap=True``.

    Parameters
    ----------
    metric_values : array-like of shape (n_points,)
    allocation_gaps : array-like of shape (n_points,)
        ΔDP or ΔEO at the same points.
    absolute_gap : bool, default=False

    Returns
    -------
    PearsonResult
        NaN (with a warning) for fewer than 3 points or a constant input.

    References
    ----------
    Chen, Ji, Evans, section 5.1, table 1.

    Examples
    --------
    >>> round(predictive_validity([0.1, 0.2, 0.3], [0.2, 0.4, 0.6]).statistic, 6)
    1.0
    """
    from scipy.stats import pearsonr

    x = as_1d(metric_values, "metric_values")
    y = as_1d(allocation_gaps, "allocation_gaps")
    check_same_length(metric_values=x, allocation_gaps=y)
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise DataError("metric_values and allocation_gaps must be finite (no NaN).")
    if absolute_gap:
        y = np.abs(y)
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        nan = undefined("predictive_validity is undefined: fewer than 3 points or a constant input.")
        return PearsonResult(nan, nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res: Any = pearsonr(x, y)
    return PearsonResult(float(np.clip(res.statistic, -1.0, 1.0)), float(res.pvalue))
