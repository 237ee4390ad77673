"""Survey standard errors by replicate weights (the Census Bureau's successive difference replication).

The ACS publishes 80 replicate weights per person (``PWGTP1``–``PWGTP80``)
so that a user can get design-based standard errors of any statistic without
the sampling design: compute the statistic once with the full weight and once
with each replicate weight, then

.. math:: \\mathrm{SE}(\\hat\\theta) = \\sqrt{\\tfrac{4}{80} \\sum_{r=1}^{80} (\\hat\\theta_r - \\hat\\theta)^2}

(U.S. Census Bureau, *ACS Design and Methodology*, ch. 12; *PUMS Accuracy of
the Data*). A bootstrap over rows treats rows as independent draws and
ignores the design's clustering and weighting; this does not.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import DataError

__all__ = ["replicate_standard_error"]


def replicate_standard_error(
    statistic: Callable[[np.ndarray], float],
    weights: ArrayLike,
    replicate_weights: ArrayLike,
    *,
    coefficient: float | None = None,
) -> float:
    """Standard error of ``statistic`` by successive difference replication.

    Parameters
    ----------
    statistic : callable
        The statistic as a function of one weight vector (e.g.
        ``lambda w: brier_score_loss(y, p, sample_weight=w)``).
    weights : array-like of shape (n_rows,)
        The full-sample weights (``PWGTP``).
    replicate_weights : array-like of shape (n_rows, R)
        The replicate weights (``PWGTP1``..``PWGTP80``).
    coefficient : float, optional
        Variance multiplier; default ``4 / R`` (the ACS's 4/80).

    Returns
    -------
    float
        The standard error; NaN where the statistic is undefined for the full
        weights or any replicate.

    Examples
    --------
    The weighted mean of 1, 2, 3 with two replicates: estimates 2.0, 2.25 and
    1.75, so SE = sqrt(4/2 * (0.25² + 0.25²)) = 0.5.

    >>> x = np.array([1.0, 2.0, 3.0])
    >>> mean = lambda w: float(np.average(x, weights=w))
    >>> replicate_standard_error(mean, [1, 1, 1], [[1, 2], [1, 1], [2, 1]])
    0.5
    """
    w = np.asarray(weights, dtype=np.float64)
    reps = np.asarray(replicate_weights, dtype=np.float64)
    if reps.ndim != 2 or reps.shape[0] != w.shape[0] or reps.shape[1] < 1:
        raise DataError(f"replicate_weights must have shape (n_rows, R) with n_rows = {w.shape[0]}, got {reps.shape}")
    if not np.isfinite(reps).all() or (reps < 0).any():
        raise DataError("replicate_weights hold missing or negative values; the ACS's are finite and >= 0")
    r = reps.shape[1]
    c = 4.0 / r if coefficient is None else float(coefficient)
    full = float(statistic(w))
    estimates = np.array([statistic(reps[:, k]) for k in range(r)], dtype=np.float64)
    if not np.isfinite(full) or not np.isfinite(estimates).all():
        return float("nan")
    return float(np.sqrt(c * np.sum((estimates - full) ** 2)))
