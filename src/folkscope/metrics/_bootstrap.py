"""Uncertainty of any metric: percentile bootstrap and clustered standard errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics._validation import (
    FloatArray,
    as_1d,
    check_number,
    check_random_state,
    check_same_length,
    undefined,
)

__all__ = ["BootstrapResult", "MeanInterval", "bootstrap_ci", "clustered_mean_ci"]

#: resampled index matrices are drawn in blocks of at most this many entries
_BLOCK = 1 << 24


@dataclass(frozen=True)
class BootstrapResult:
    """Result of :func:`bootstrap_ci`.

    Attributes
    ----------
    estimate : float
        The metric on the original rows.
    low, high : float
        Percentile interval of the resampled values.
    std_error : float
        Standard deviation of the defined resampled values (ddof=1).
    confidence : float
    n_resamples : int
    n_undefined : int
        Resamples where the metric was NaN (e.g. a single class was drawn);
        excluded from the interval and reported, never replaced.
    distribution : ndarray of shape (n_resamples,)
        Every resampled value, NaN included.
    """

    estimate: float
    low: float
    high: float
    std_error: float
    confidence: float
    n_resamples: int
    n_undefined: int
    distribution: FloatArray


def _as_rows(arrays: tuple[ArrayLike, ...]) -> list[NDArray[Any]]:
    if not arrays:
        raise ConfigError("bootstrap_ci needs at least one data array after the metric.", parameter="arrays", value=())
    out = [np.asarray(a) for a in arrays]
    for i, a in enumerate(out):
        if a.ndim == 0:
            raise DataError(
                f"array {i} passed to bootstrap_ci is a scalar; rows are resampled "
                "along axis 0, so pass arrays of shape (n_samples, ...)."
            )
    check_same_length(**{f"array_{i}": a for i, a in enumerate(out)})
    if len(out[0]) == 0:
        raise DataError("bootstrap_ci got empty arrays; at least one row is needed.")
    return out


def _cluster_index(clusters: ArrayLike, n: int) -> tuple[Any, Any, Any]:
    arr = np.asarray(clusters)
    if arr.ndim != 1 or len(arr) != n:
        raise DataError(f"clusters must have shape ({n},), one id per row; got {arr.shape}.")
    _, codes = np.unique(arr, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return order, starts, sizes


def _resample_indices(
    rng: np.random.Generator, n: int, count: int, cluster: tuple[Any, Any, Any] | None
) -> list[NDArray[np.intp]]:
    if cluster is None:
        return list(rng.integers(0, n, size=(count, n)))
    order, starts, sizes = cluster
    draws = rng.integers(0, len(sizes), size=(count, len(sizes)))
    out = []
    for d in draws:  # vectorised gather of whole clusters: repeat starts, add offsets
        lengths = sizes[d]
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out.append(order[np.repeat(starts[d], lengths) + offsets])
    return out


def bootstrap_ci(
    metric: Callable[..., float],
    *arrays: ArrayLike,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
    random_state: int | np.random.Generator | None = None,
) -> BootstrapResult:
    """Percentile bootstrap interval of ``metric(*arrays)``.

    Rows (axis 0 of every array, resampled together) are drawn with
    replacement; with ``clusters``, whole clusters are drawn instead (e.g. option
    pairs in numeric calibration). Index matrices are generated in blocks by
    one seeded :class:`numpy.random.Generator`, so the same seed gives the
    same result.

    Parameters
    ----------
    metric : callable
        ``metric(*resampled_arrays) -> float``, e.g. ``roc_auc_score`` or
        ``lambda y, p, w: expected_calibration_error(y, p, sample_weight=w)``.
    *arrays : array-like of shape (n_samples, ...)
    n_resamples : int, default=1000
    confidence : float in (0, 1), default=0.95
    clusters : array-like of shape (n_samples,), optional
        Cluster id of each row for a cluster bootstrap.
    random_state : int, Generator or None

    Returns
    -------
    BootstrapResult
        Resamples where the metric is NaN are counted in ``n_undefined``,
        reported with one :class:`~folkscope.errors.UndefinedMetricWarning` and
        left out of the interval.

    Examples
    --------
    >>> from folkscope.metrics import brier_score_loss
    >>> res = bootstrap_ci(brier_score_loss, [0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4],
    ...                    n_resamples=200, random_state=0)
    >>> res.low <= res.estimate <= res.high
    True
    """
    if not callable(metric):
        raise ConfigError(f"metric must be callable; got {metric!r}.", parameter="metric", value=metric)
    b = int(check_number(n_resamples, "n_resamples", integer=True, low=1))
    check_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    rows = _as_rows(arrays)
    n = len(rows[0])
    cluster = None if clusters is None else _cluster_index(clusters, n)
    rng = check_random_state(random_state)
    estimate = float(metric(*rows))
    values = np.empty(b)
    per_block = max(1, _BLOCK // max(n, 1))
    done = 0
    with warnings.catch_warnings():
        # NaN resamples are counted below and reported once
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        while done < b:
            count = min(per_block, b - done)
            for j, idx in enumerate(_resample_indices(rng, n, count, cluster)):
                values[done + j] = float(metric(*(a[idx] for a in rows)))
            done += count
    defined = values[~np.isnan(values)]
    n_undefined = b - len(defined)
    if len(defined) == 0:
        undefined(f"bootstrap_ci: the metric was undefined in all {b} resamples.")
        return BootstrapResult(estimate, np.nan, np.nan, np.nan, float(confidence), b, b, values)
    if n_undefined:
        undefined(
            f"bootstrap_ci: the metric was undefined (NaN) in {n_undefined} of {b} "
            "resamples; they are excluded from the interval."
        )
    alpha = 1.0 - float(confidence)
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    se = float(np.std(defined, ddof=1)) if len(defined) > 1 else float("nan")
    return BootstrapResult(estimate, float(low), float(high), se, float(confidence), b, n_undefined, values)


class MeanInterval(NamedTuple):
    """Mean with a normal-approximation interval (see :func:`clustered_mean_ci`)."""

    mean: float
    low: float
    high: float
    std_error: float


def clustered_mean_ci(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    confidence: float = 0.95,
) -> MeanInterval:
    r"""Mean of per-problem values with a cluster-robust 95% interval.

    .. math:: SE = \frac{1}{n}\sqrt{\sum_c \Big(\sum_{i\in c} (x_i - \bar x)\Big)^2}

    (Miller 2024, "Adding error bars to evals"; without clusters every row is
    its own cluster and this is the plug-in CLT standard error). The interval is
    ``mean ± z · SE``. Numeric calibration clusters by option pair; paired
    base-vs-chat differences are passed as ``chat - base``.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
    clusters : array-like of shape (n_samples,), optional
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    MeanInterval

    Examples
    --------
    >>> clustered_mean_ci([1.0, 3.0]).mean
    2.0
    """
    from scipy import stats

    check_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    x = as_1d(values, "values")
    if np.isnan(x).any():
        raise DataError(
            f"values contains {int(np.isnan(x).sum())} NaN; drop or fix them first "
            "(e.g. relative entropy is undefined when probability mass is 0)."
        )
    resid = x - x.mean()
    if clusters is None:
        ss = float(np.dot(resid, resid))
    else:
        c = np.asarray(clusters)
        if c.shape != x.shape:
            raise DataError(f"clusters must have shape {x.shape}; got {c.shape}.")
        _, codes = np.unique(c, return_inverse=True)
        sums = np.bincount(codes, weights=resid)
        ss = float(np.dot(sums, sums))
    se = np.sqrt(ss) / len(x)
    z = float(stats.norm.ppf(0.5 + float(confidence) / 2))
    m = float(x.mean())
    return MeanInterval(m, m - z * se, m + z * se, float(se))
