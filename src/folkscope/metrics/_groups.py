"""Every risk-score metric per group of a sensitive attribute, plus the gaps between groups."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError, UndefinedMetricWarning

# the private implementations take arrays validated once by groupwise_metrics
from folkscope.metrics._calibration import _brier, _confidence_bias, _ece, _log_loss, _sce
from folkscope.metrics._classification import (
    _accuracy,
    _auc,
    _balanced_accuracy,
    _fnr,
    _fpr,
    _ppr,
    _precision,
    _tnr,
    _tpr,
)
from folkscope.metrics._thresholds import check_threshold_rule
from folkscope.metrics._validation import (
    FloatArray,
    check_binary_input,
    check_number,
    check_same_length,
    factorize_labels,
)

__all__ = ["GROUP_METRICS", "GroupMetrics", "groupwise_metrics", "signed_calibration_error_gap"]

_Metric = Callable[..., float]

#: Metrics computed by :func:`groupwise_metrics`, by name. Each takes
#: ``(y, p, w, threshold, n_bins)`` and, for the thresholded ones, the rule
#: as a sixth argument (default ``">="``, folktexts' ``score >= threshold``).
GROUP_METRICS: dict[str, _Metric] = {
    "ece": lambda y, p, w, t, b, r=">=": _ece(y, p, w, b, "uniform"),  # expected_calibration_error
    "ece_quantile": lambda y, p, w, t, b, r=">=": _ece(y, p, w, b, "quantile"),
    "ece_equal_count": lambda y, p, w, t, b, r=">=": _ece(y, p, w, b, "equal_count"),
    "brier_score": lambda y, p, w, t, b, r=">=": _brier(y, p, w),  # brier_score_loss
    "log_loss": lambda y, p, w, t, b, r=">=": _log_loss(y, p, w, None),
    "roc_auc": lambda y, p, w, t, b, r=">=": _auc(y, p, w),  # roc_auc_score
    "accuracy": lambda y, p, w, t, b, r=">=": _accuracy(y, p, w, t, r),
    "balanced_accuracy": lambda y, p, w, t, b, r=">=": _balanced_accuracy(y, p, w, t, r),
    "tpr": lambda y, p, w, t, b, r=">=": _tpr(y, p, w, t, r),  # true_positive_rate
    "fpr": lambda y, p, w, t, b, r=">=": _fpr(y, p, w, t, r),  # false_positive_rate
    "fnr": lambda y, p, w, t, b, r=">=": _fnr(y, p, w, t, r),  # false_negative_rate
    "tnr": lambda y, p, w, t, b, r=">=": _tnr(y, p, w, t, r),  # true_negative_rate
    "precision": lambda y, p, w, t, b, r=">=": _precision(y, p, w, t, r),  # precision_score
    "ppr": lambda y, p, w, t, b, r=">=": _ppr(y, p, w, t, r),  # positive_prediction_rate
    "confidence_bias": lambda y, p, w, t, b, r=">=": _confidence_bias(y, p, w),
    "sce": lambda y, p, w, t, b, r=">=": _sce(y, p, w),  # signed_calibration_error
}


@dataclass(frozen=True)
class GroupMetrics:
    """Result of :func:`groupwise_metrics`.

    Attributes
    ----------
    overall : pandas.Series
        Every metric on all rows together.
    per_group : pandas.DataFrame
        One row per group (sorted labels): counts ``n, n_nan, weight,
        n_positive, n_negative, prevalence, mean_score`` then the metrics.
    gaps : pandas.DataFrame
        One row per metric: ``max_minus_min`` over the groups where the metric
        is defined, ``max_group``, ``min_group``, ``n_groups_defined``, and
        ``a_minus_b`` when a pair (A, B) is compared.
    pair : tuple or None
        The (A, B) groups of ``a_minus_b``.
    undefined : tuple of (group, metric)
        Where a metric was undefined (NaN), e.g. AUC of a single-class group.
    """

    overall: pd.Series
    per_group: pd.DataFrame
    gaps: pd.DataFrame
    pair: tuple[Hashable, Hashable] | None = None
    undefined: tuple[tuple[Hashable, str], ...] = field(default_factory=tuple)

    def to_frame(self) -> pd.DataFrame:
        """Long (tidy) table with columns ``group, metric, value`` (overall as ``"__all__"``)."""
        wide = pd.concat([self.per_group, self.overall.to_frame("__all__").T])
        long = wide.rename_axis("group").reset_index().melt(id_vars="group", var_name="metric", value_name="value")
        return long


def _factorize_groups(groups: ArrayLike, n: int) -> tuple[Any, list[Any]]:
    check_same_length(y_true=np.empty(n), groups=np.asarray(groups).reshape(-1))
    return factorize_labels(groups)


def _safe(
    metric: _Metric, y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, b: int, rule: str
) -> tuple[float, bool]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        value = metric(y, p, w, t, b, rule)
    bad = any(issubclass(c.category, UndefinedMetricWarning) for c in caught)
    for c in caught:  # anything else is not ours to swallow
        if not issubclass(c.category, UndefinedMetricWarning):
            warnings.warn_explicit(c.message, c.category, c.filename, c.lineno)
    return value, bad or bool(np.isnan(value))


def _counts(y: FloatArray, p: FloatArray, w: FloatArray | None, n_nan: int) -> dict[str, float]:
    ww = np.ones_like(y) if w is None else w
    tot = float(ww.sum())
    return {
        "n": float(len(y) + n_nan),
        "n_nan": float(n_nan),
        "weight": tot,
        "n_positive": float((y == 1).sum()),
        "n_negative": float((y == 0).sum()),
        "prevalence": float(np.dot(ww, y) / tot) if tot > 0 else float("nan"),
        "mean_score": float(np.dot(ww, p) / tot) if tot > 0 else float("nan"),
    }


def groupwise_metrics(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    groups: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    metrics: Sequence[str] | None = None,
    threshold: float = 0.5,
    threshold_rule: str = ">=",
    n_bins: int = 10,
    pair: tuple[Hashable, Hashable] | None = None,
    nan_policy: str = "raise",
) -> GroupMetrics:
    """Every risk-score metric overall and per group, with between-group gaps.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,)
        Group label of each row (e.g. RAC1P or SEX codes); missing labels raise.
    sample_weight : array-like of shape (n_samples,), optional
    metrics : sequence of str, optional
        Names from :data:`GROUP_METRICS`; all by default.
    threshold : float, default=0.5
        Threshold of the thresholded metrics (accuracy, TPR, FPR, ...).
    threshold_rule : {">=", ">"}, default=">="
        ``score >= threshold`` predicts positive (folktexts), or ``score > threshold``.
    n_bins : int, default=10
        Bins of the ECE metrics.
    pair : (A, B), optional
        Groups for ``a_minus_b`` (e.g. ΔSCE = SCE_A − SCE_B). With exactly two
        groups and no pair, A and B are the two labels in sorted order.
    nan_policy : {"raise", "omit"}, default="raise"
        With ``"omit"`` NaN scores are dropped and counted in ``n_nan``.

    Returns
    -------
    GroupMetrics
        Undefined metrics (single-class group: AUC, balanced accuracy, TPR or
        FPR) are NaN, listed in ``undefined`` and reported in one
        :class:`~folkscope.errors.UndefinedMetricWarning`.

    Examples
    --------
    >>> res = groupwise_metrics([0, 1, 0, 1], [0.2, 0.9, 0.4, 0.6], ["a", "a", "b", "b"],
    ...                         metrics=["sce", "accuracy"])
    >>> res.per_group["sce"].round(3).tolist(), round(float(res.gaps.loc["sce", "a_minus_b"]), 3)
    ([0.05, 0.0], 0.05)
    """
    names = list(GROUP_METRICS) if metrics is None else list(metrics)
    unknown = [m for m in names if m not in GROUP_METRICS]
    if unknown or not names:
        raise ConfigError(
            f"metrics must be a non-empty subset of {sorted(GROUP_METRICS)}; got {metrics!r}.",
            parameter="metrics",
            value=metrics,
        )
    t = float(check_number(threshold, "threshold", low=0.0, high=1.0))
    rule = check_threshold_rule(threshold_rule)
    b = int(check_number(n_bins, "n_bins", integer=True, low=1))
    # validate once on all rows so NaN handling is the same for every group
    y_all, p_all, w_all, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    nan = np.isnan(np.asarray(y_prob, dtype=np.float64))
    codes, labels = _factorize_groups(groups, len(nan))
    if pair is not None:
        missing = [g for g in pair if g not in labels]
        if len(pair) != 2 or missing:
            raise ConfigError(f"pair must name two groups among {labels}; got {pair!r}.", parameter="pair", value=pair)
    elif len(labels) == 2:
        pair = (labels[0], labels[1])
    codes_kept = codes[~nan]
    # Presort by score once: the metrics are order-free, and the sorts inside them
    # (quantile edges, AUC) run about 3x faster on sorted input.
    by_score = np.argsort(p_all)
    y_all, p_all, codes_kept = y_all[by_score], p_all[by_score], codes_kept[by_score]
    w_all = None if w_all is None else w_all[by_score]
    undefined: list[tuple[Hashable, str]] = []

    def compute(label: Hashable, y: FloatArray, p: FloatArray, w: FloatArray | None, n_nan: int) -> dict[str, float]:
        row = _counts(y, p, w, n_nan)
        for name in names:
            if len(y) == 0:
                row[name], bad = float("nan"), True
            else:
                row[name], bad = _safe(GROUP_METRICS[name], y, p, w, t, b, rule)
            if bad:
                undefined.append((label, name))
        return row

    overall = pd.Series(compute("__all__", y_all, p_all, w_all, int(nan.sum())))
    # small integer codes take numpy's O(n) radix sort instead of a comparison sort
    small = np.int16 if len(labels) < 2**15 else np.int64
    order = np.argsort(codes_kept.astype(small, copy=False), kind="stable")
    bounds = np.searchsorted(codes_kept[order], np.arange(len(labels) + 1))
    nan_per_group = np.bincount(codes[nan], minlength=len(labels))
    rows = {}
    for g, label in enumerate(labels):
        sl = order[bounds[g] : bounds[g + 1]]
        rows[label] = compute(label, y_all[sl], p_all[sl], None if w_all is None else w_all[sl], int(nan_per_group[g]))
    per_group = pd.DataFrame.from_dict(rows, orient="index")
    gaps = _gaps(per_group[names], pair)
    if undefined:
        desc = ", ".join(f"{m} of group {g!r}" for g, m in undefined)
        warnings.warn(f"groupwise_metrics: undefined (NaN): {desc}.", UndefinedMetricWarning, stacklevel=2)
    return GroupMetrics(overall, per_group, gaps, pair, tuple(undefined))


def _gaps(values: pd.DataFrame, pair: tuple[Hashable, Hashable] | None) -> pd.DataFrame:
    defined = values.notna()
    # idxmax/idxmin refuse all-NaN columns, so they run on the defined metrics only
    some = defined.any()
    max_group = pd.Series(None, index=values.columns, dtype=object)
    min_group = pd.Series(None, index=values.columns, dtype=object)
    if some.any():
        max_group[some] = values.loc[:, some].idxmax()
        min_group[some] = values.loc[:, some].idxmin()
    out = pd.DataFrame(
        {
            "max_minus_min": values.max() - values.min(),
            "max_group": max_group,
            "min_group": min_group,
            "n_groups_defined": defined.sum().astype(float),
        }
    )
    if pair is not None:
        rows: Any = values.loc  # labels are arbitrary hashables
        out["a_minus_b"] = rows[pair[0]] - rows[pair[1]]
    return out


def signed_calibration_error_gap(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    groups: ArrayLike,
    *,
    group_a: Hashable,
    group_b: Hashable,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r""":math:`\Delta SCE = SCE_A - SCE_B` between two groups.

    Positive values indicate an undue score advantage of group A (its scores
    exceed its outcomes more than B's do).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,)
    group_a, group_b : hashable
        Labels present in ``groups``.
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [-2, 2]

    References
    ----------
    Cruz, Hardt, Mendler-Dünner (2024), appendix A.1, figure A3.

    Examples
    --------
    >>> round(signed_calibration_error_gap([0, 1, 0, 1], [0.2, 0.9, 0.4, 0.6],
    ...                                    ["w", "w", "b", "b"], group_a="w", group_b="b"), 3)
    0.05
    """
    res = groupwise_metrics(
        y_true,
        y_prob,
        groups,
        sample_weight=sample_weight,
        metrics=["sce"],
        pair=(group_a, group_b),
        nan_policy=nan_policy,
    )
    gap: Any = res.gaps.at["sce", "a_minus_b"]
    return float(gap)
