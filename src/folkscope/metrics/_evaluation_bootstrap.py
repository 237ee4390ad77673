"""folktexts' bootstrap of its flat evaluation dictionaries (:func:`bootstrap_estimate`,
:func:`evaluate_predictions_bootstrap`), with folktexts 0.7.1's resamples.

The same seed draws folktexts' resamples; unlike folktexts, only the numeric
metrics are summarised (its ``evaluate_predictions_bootstrap`` fails on
``model_name=None`` in every call), and a metric undefined in some resamples
counts them in ``<metric>_n_undefined``. See :mod:`folkscope.metrics._evaluation`
for the definitions being resampled.
"""

from __future__ import annotations

import numbers
import statistics
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics._evaluation import evaluate_predictions
from folkscope.metrics._validation import as_1d, check_number, check_same_length

__all__ = ["bootstrap_estimate", "evaluate_predictions_bootstrap"]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not np.isnan(value)


def bootstrap_estimate(
    eval_func: Callable[[np.ndarray, np.ndarray, np.ndarray | None], Mapping[str, Any]],
    *,
    y_true: ArrayLike,
    y_pred_scores: ArrayLike,
    sensitive_attribute: ArrayLike | None = None,
    k: int = 200,
    confidence_pct: float = 95,
    seed: int = 42,
) -> dict[str, float]:
    """Mean, standard deviation and percentile interval of each metric of ``eval_func`` over bootstrap resamples.

    Resample ``i`` takes ``numpy.random.default_rng(seed).choice(n, n)``'s
    ``i``-th draw, as folktexts does, so the same seed gives folktexts'
    resamples.

    Parameters
    ----------
    eval_func : callable ``(y_true, y_pred_scores, sensitive_attribute) -> dict``
    y_true, y_pred_scores : array-like of shape (n_samples,)
    sensitive_attribute : array-like of shape (n_samples,), optional
    k : int, default=200
        Resamples.
    confidence_pct : float, default=95
        Width of the percentile interval.
    seed : int, default=42

    Returns
    -------
    dict
        ``<metric>_mean``, ``<metric>_stdev``, ``<metric>_low-percentile`` and
        ``<metric>_high-percentile`` per metric (sorted by name), over the
        resamples where the metric is a number; values that are not numbers
        (``model_name``; an undefined metric) are left out, and a metric left
        out of some resamples also gets ``<metric>_n_undefined``.

    Examples
    --------
    >>> out = bootstrap_estimate(lambda y, p, s: {"mean": float(p.mean())}, y_true=[0, 1] * 5,
    ...                          y_pred_scores=[0.2, 0.8] * 5, k=20)
    >>> 0.4 < out["mean_mean"] < 0.6, out["mean_low-percentile"] <= out["mean_high-percentile"]
    (True, True)
    """
    y = as_1d(y_true, "y_true")
    p = as_1d(y_pred_scores, "y_pred_scores")
    s = None if sensitive_attribute is None else np.asarray(sensitive_attribute).reshape(-1)
    check_same_length(y_true=y, y_pred_scores=p, sensitive_attribute=s)
    k = int(check_number(k, "k", integer=True, low=2))
    check_number(confidence_pct, "confidence_pct", low=0.0, high=100.0)
    rng = np.random.default_rng(seed=seed)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # an undefined resample is counted below
        for _ in range(k):
            rows = rng.choice(len(y), replace=True, size=len(y))
            results.append(eval_func(y[rows], p[rows], None if s is None else s[rows]))
    low = (100 - confidence_pct) / 2
    out: dict[str, float] = {}
    for metric in sorted({m for r in results for m in r}):
        values = [r[metric] for r in results if _is_number(r.get(metric))]
        if len(values) < 2:
            continue
        out[f"{metric}_mean"] = statistics.mean(values)
        out[f"{metric}_stdev"] = statistics.stdev(values)
        lo, hi = np.percentile(values, [low, 100 - low])
        out[f"{metric}_low-percentile"], out[f"{metric}_high-percentile"] = float(lo), float(hi)
        if len(values) < k:
            out[f"{metric}_n_undefined"] = k - len(values)
    return out


def evaluate_predictions_bootstrap(
    y_true: ArrayLike,
    y_pred_scores: ArrayLike,
    *,
    sensitive_attribute: ArrayLike | None = None,
    threshold: float | str = "best",
    k: int = 200,
    confidence_pct: float = 95,
    seed: int = 42,
) -> dict[str, float]:
    """:func:`bootstrap_estimate` of :func:`evaluate_predictions` at ``threshold`` (``"best"``: fitted per resample).

    Examples
    --------
    >>> out = evaluate_predictions_bootstrap([0, 1] * 10, [0.3, 0.7] * 10, threshold=0.5, k=10)
    >>> out["accuracy_mean"]
    1.0
    """

    def evaluate(labels: np.ndarray, scores: np.ndarray, groups: np.ndarray | None) -> dict[str, Any]:
        return evaluate_predictions(labels, scores, sensitive_attribute=groups, threshold=threshold)

    return bootstrap_estimate(
        evaluate,
        y_true=y_true,
        y_pred_scores=y_pred_scores,
        sensitive_attribute=sensitive_attribute,
        k=k,
        confidence_pct=confidence_pct,
        seed=seed,
    )
