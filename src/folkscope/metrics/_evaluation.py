"""folktexts' flat evaluation dictionaries, with folktexts 0.7.1's definitions.

A script written for ``folktexts.evaluation`` gets the same keys and the
same numbers here: :func:`evaluate_predictions` (``threshold``, counts,
``accuracy``, ``tpr``, ``fnr``, ``fpr``, ``tnr``, ``balanced_accuracy``,
``precision``, ``ppr``, ``log_loss``, ``brier_score_loss``, the fairness
``*_ratio`` / ``*_diff`` and ``equalized_odds_*`` keys, ``roc_auc``, ``ece``,
``ece_quantile``), :func:`compute_best_threshold`,
:func:`evaluate_binary_predictions`,
:func:`evaluate_binary_predictions_fairness`, and their bootstrap
(:mod:`folkscope.metrics._evaluation_bootstrap`). The definitions are folktexts',
including its conventions, which differ from the rest of
:mod:`folkscope.metrics`:

- a rate whose denominator is 0 takes its *worst* value (TPR, TNR, precision
  and PPR 0; FNR and FPR 1) instead of NaN, and a ratio of two zeros is 0;
- predictions are ``score >= threshold``;
- ``log_loss`` clips scores to ``[eps, 1 - eps]`` (scikit-learn's rule) and
  both ECEs see the scores clipped the same way (netcal's rule);
- ``ece_quantile`` is None where two of its quantile bin edges coincide
  (netcal cannot bin them).

Where folktexts 0.7.1 raises instead of answering, these functions answer in
folkscope's way, and say so: an AUC of a single class is NaN (folktexts:
ValueError), no group large enough for fairness gives no fairness keys
(folktexts: KeyError), a best threshold of a single class is NaN (folktexts:
``inf``), and the bootstrap summarises only the numeric metrics (folktexts'
``evaluate_predictions_bootstrap`` fails on ``model_name=None`` in every
call). Every NaN comes with an :class:`~folkscope.errors.UndefinedMetricWarning`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError
from folkscope.metrics._calibration import _bin_edges, brier_score_loss, expected_calibration_error, log_loss
from folkscope.metrics._classification import roc_auc_score
from folkscope.metrics._thresholds import check_threshold_rule, predict_positive
from folkscope.metrics._validation import (
    check_binary,
    check_number,
    check_same_length,
    check_scores,
    undefined,
)

__all__ = [
    "compute_best_threshold",
    "evaluate_binary_predictions",
    "evaluate_binary_predictions_fairness",
    "evaluate_predictions",
]

_EPS = float(np.finfo(np.float64).eps)


def _worst_division(a: float, b: float, worst: float) -> float:
    """``a / b``, or the metric's worst value where folktexts' ``safe_division`` gives it (b = 0, NaN)."""
    if b == 0 or np.isnan(a) or np.isnan(b):
        return worst
    return a / b


def evaluate_binary_predictions(y_true: ArrayLike, y_pred: ArrayLike) -> dict[str, float]:
    """Accuracy, TPR, FNR, FPR, TNR, balanced accuracy, precision and PPR of 0/1 predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels 0/1.
    y_pred : array-like of shape (n_samples,)
        Predictions 0/1.

    Returns
    -------
    dict
        A rate without its denominator takes its worst value (see the module
        docstring); the accuracy of no row is NaN.

    Examples
    --------
    >>> evaluate_binary_predictions([1, 1, 0, 0], [1, 0, 0, 0])["tpr"]
    0.5
    >>> evaluate_binary_predictions([0, 0], [0, 1])["tpr"]   # no positive label: worst value
    0
    """
    y = check_binary(y_true, "y_true")
    pred = check_binary(y_pred, "y_pred")
    check_same_length(y_true=y, y_pred=pred)
    pos, hit = y == 1, pred == 1
    tp, fn = int(np.count_nonzero(pos & hit)), int(np.count_nonzero(pos & ~hit))
    fp, tn = int(np.count_nonzero(~pos & hit)), int(np.count_nonzero(~pos & ~hit))
    total = tp + fn + fp + tn
    tpr = _worst_division(tp, tp + fn, 0)
    tnr = _worst_division(tn, tn + fp, 0)
    return {
        "accuracy": (tp + tn) / total if total else undefined("accuracy is undefined: no row."),
        "tpr": tpr,
        "fnr": _worst_division(fn, tp + fn, 1),
        "fpr": _worst_division(fp, tn + fp, 1),
        "tnr": tnr,
        "balanced_accuracy": 0.5 * (tpr + tnr),
        "precision": _worst_division(tp, tp + fp, 0),
        "ppr": _worst_division(tp + fp, total, 0),
    }


def evaluate_binary_predictions_fairness(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    sensitive_attribute: ArrayLike,
    return_groupwise_metrics: bool = False,
    min_group_size: float = 0.04,
) -> dict[str, float]:
    """Between-group ratios (min / max) and differences (max - min) of :func:`evaluate_binary_predictions`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Labels and predictions, 0/1.
    sensitive_attribute : array-like of shape (n_samples,)
        Group of each row.
    return_groupwise_metrics : bool, default=False
        Also return every group's metrics as ``"<metric>_group=<group>"``.
    min_group_size : float, default=0.04
        Groups with fewer rows than this share of all rows are left out.

    Returns
    -------
    dict
        ``<metric>_ratio`` and ``<metric>_diff`` for every metric, then
        ``equalized_odds_ratio`` (min of the FNR and FPR ratios) and
        ``equalized_odds_diff`` (max of the TPR and FPR differences). Empty
        with a single group, or when no group is large enough.

    Examples
    --------
    >>> res = evaluate_binary_predictions_fairness([1, 1, 1, 1], [1, 0, 1, 1], ["a", "a", "b", "b"])
    >>> res["tpr_ratio"], res["tpr_diff"]
    (0.5, 0.5)
    """
    y = check_binary(y_true, "y_true")
    pred = check_binary(y_pred, "y_pred")
    groups = np.asarray(sensitive_attribute).reshape(-1)
    check_same_length(y_true=y, y_pred=pred, sensitive_attribute=groups)
    check_number(min_group_size, "min_group_size", low=0.0)
    values = np.unique(groups)
    if len(values) <= 1:
        return {}
    per_group: dict[str, dict[str, float]] = {}
    for value in values:
        rows = groups == value
        if np.count_nonzero(rows) < min_group_size * len(y):
            continue
        per_group[str(value)] = evaluate_binary_predictions(y[rows], pred[rows])
    if not per_group:
        return {}
    results: dict[str, float] = {}
    for metric in next(iter(per_group.values())):
        column = [m[metric] for m in per_group.values()]
        results[f"{metric}_ratio"] = _worst_division(min(column), max(column), 0)
        results[f"{metric}_diff"] = max(column) - min(column)
    results["equalized_odds_ratio"] = min(results["fnr_ratio"], results["fpr_ratio"])
    results["equalized_odds_diff"] = max(results["tpr_diff"], results["fpr_diff"])
    if return_groupwise_metrics:
        for group, metrics in per_group.items():
            results.update({f"{metric}_group={group}": value for metric, value in metrics.items()})
    return results


def compute_best_threshold(
    y_true: ArrayLike,
    y_pred_scores: ArrayLike,
    *,
    false_pos_cost: float = 1.0,
    false_neg_cost: float = 1.0,
) -> float:
    """The score on the ROC curve that minimises ``false_pos_cost * FPR + false_neg_cost * (1 - TPR)``.

    Candidates are scikit-learn's ROC thresholds (the distinct scores, plus
    ``inf`` for "no row positive"); among equal costs the largest threshold
    wins. With equal costs this maximises balanced accuracy, not accuracy
    (folktexts' docstring says accuracy). Used by ``--fit-threshold`` and
    :meth:`LLMClassifier.fit <folkscope.risk.LLMClassifier.fit>`.

    Returns
    -------
    float
        A score, or ``inf``; NaN (with a warning) when ``y_true`` holds a
        single class.

    Examples
    --------
    >>> compute_best_threshold([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    0.3
    """
    from sklearn.metrics import roc_curve

    y = check_binary(y_true, "y_true")
    p, _ = check_scores(y_pred_scores, "y_pred_scores")
    check_same_length(y_true=y, y_pred_scores=p)
    fp_cost = float(check_number(false_pos_cost, "false_pos_cost", low=0.0))
    fn_cost = float(check_number(false_neg_cost, "false_neg_cost", low=0.0))
    if len(np.unique(y)) < 2:
        return undefined("compute_best_threshold is undefined: y_true holds a single class (folktexts returns inf).")
    fpr, tpr, thresholds = roc_curve(y, p)
    return float(thresholds[np.argmin(fp_cost * fpr + fn_cost * (1 - tpr))])


def _quantile_ece(y: np.ndarray, p: np.ndarray) -> float | None:
    """folktexts' ``ece_quantile``: None where netcal cannot bin (two quantile edges equal)."""
    if np.any(np.diff(_bin_edges(p, None, 10, "quantile")) == 0):
        return None
    return expected_calibration_error(y, p, strategy="quantile")


def evaluate_predictions(
    y_true: ArrayLike,
    y_pred_scores: ArrayLike,
    *,
    sensitive_attribute: ArrayLike | None = None,
    threshold: float | str = "best",
    model_name: str | None = None,
    threshold_rule: str = ">=",
) -> dict[str, Any]:
    """Every metric of folktexts' results, in its flat layout (``results["ece"]``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels 0/1.
    y_pred_scores : array-like of shape (n_samples,)
        Risk scores in [0, 1], none missing.
    sensitive_attribute : array-like of shape (n_samples,), optional
        Adds the fairness keys of :func:`evaluate_binary_predictions_fairness`.
    threshold : float in [0, 1] or "best", default="best"
        Predictions are ``score >= threshold``; ``"best"`` fits it with
        :func:`compute_best_threshold`.
    model_name : str, optional
        Recorded as ``model_name``.
    threshold_rule : {">=", ">"}, default=">="
        Not in folktexts, which always predicts ``score >= threshold``.

    Returns
    -------
    dict
        See the module docstring for the keys and conventions.

    Examples
    --------
    >>> res = evaluate_predictions([0, 1, 1, 0], [0.2, 0.8, 0.5, 0.5], threshold=0.5)
    >>> res["accuracy"], res["tpr"], res["fpr"]   # 0.5 >= 0.5 is positive
    (0.75, 1.0, 0.5)
    """
    y = check_binary(y_true, "y_true")
    p, _ = check_scores(y_pred_scores, "y_pred_scores")
    check_same_length(y_true=y, y_pred_scores=p)
    if isinstance(threshold, str):
        if threshold != "best":
            raise ConfigError(
                f"threshold must be a number in [0, 1] or 'best'; got {threshold!r}",
                parameter="threshold",
                value=threshold,
            )
        threshold = compute_best_threshold(y, p)
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
        raise ConfigError(
            f"threshold must be a number in [0, 1] (a best threshold of inf or NaN cannot be applied); got {threshold!r}",
            parameter="threshold",
            value=threshold,
        )
    n_positives = int(np.count_nonzero(y == 1))
    results: dict[str, Any] = {
        "threshold": threshold,
        "n_samples": len(y),
        "n_positives": n_positives,
        "n_negatives": len(y) - n_positives,
        "model_name": model_name,
    }
    predictions = predict_positive(p, float(threshold), check_threshold_rule(threshold_rule)).astype(np.int8)
    results.update(evaluate_binary_predictions(y, predictions))
    results["log_loss"] = log_loss(y, p, eps=_EPS)
    results["brier_score_loss"] = brier_score_loss(y, p)
    if sensitive_attribute is not None:
        results.update(evaluate_binary_predictions_fairness(y, predictions, sensitive_attribute))
    results["roc_auc"] = roc_auc_score(y, p)
    clipped = np.clip(p, _EPS, 1 - _EPS)  # netcal bins the clipped scores
    results["ece"] = expected_calibration_error(y, clipped)
    results["ece_quantile"] = _quantile_ece(y, clipped)
    return results
