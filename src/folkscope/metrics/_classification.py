"""Discrimination and thresholded classification of risk scores.

A score becomes a prediction by ``c(x) = 1{r >= tau}`` (folktexts' rule;
``threshold_rule=">"`` for ``1{r > tau}``, see :mod:`._thresholds`), with
``tau = 0.5`` unless a threshold is fitted (``--fit-threshold``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.metrics._thresholds import check_threshold_rule, predict_positive
from folkscope.metrics._validation import (
    FloatArray,
    check_binary_input,
    check_number,
    undefined,
    wsum,
)

__all__ = [
    "accuracy_score",
    "balanced_accuracy_score",
    "false_negative_rate",
    "false_positive_rate",
    "positive_prediction_rate",
    "precision_score",
    "roc_auc_score",
    "true_negative_rate",
    "true_positive_rate",
]


def _weights(n: int, w: FloatArray | None) -> FloatArray:
    return np.ones(n) if w is None else w


def _check_threshold(threshold: object) -> float:
    return float(check_number(threshold, "threshold", low=0.0, high=1.0))


def _rates(
    y: FloatArray, p: FloatArray, w: FloatArray | None, threshold: float, rule: str = ">="
) -> tuple[float, float, float, float]:
    """Weighted (true positives, positives, false positives, negatives)."""
    pred = predict_positive(p, threshold, rule)
    if w is None:
        pos = y == 1
        n_pos, tp = np.count_nonzero(pos), np.count_nonzero(pred & pos)
        return float(tp), float(n_pos), float(np.count_nonzero(pred) - tp), float(len(y) - n_pos)
    predf = pred.astype(np.float64)
    w_pos = w * y  # exactly w or 0, since y is 0/1
    w_neg = w - w_pos  # exactly 0 or w
    return (float(np.dot(w_pos, predf)), float(w_pos.sum()), float(np.dot(w_neg, predf)), float(w_neg.sum()))


def _accuracy(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    """Accuracy on validated arrays (shared with groupwise_metrics)."""
    if len(y) == 0:
        return undefined("accuracy_score is undefined: no scored row is left.")
    correct = (predict_positive(p, t, rule) == (y == 1)).astype(np.float64)
    return wsum(correct, w) / (len(y) if w is None else float(w.sum()))


def _thresholded(name: str, rate: Any) -> Any:
    """A public thresholded metric: ``rate(y, p, w, t, rule)`` on validated input."""

    def metric(
        y_true: ArrayLike,
        y_prob: ArrayLike,
        *,
        threshold: float = 0.5,
        threshold_rule: str = ">=",
        sample_weight: ArrayLike | None = None,
        nan_policy: str = "raise",
    ) -> float:
        t, rule = _check_threshold(threshold), check_threshold_rule(threshold_rule)
        y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
        return float(rate(y, p, w, t, rule))

    metric.__name__ = metric.__qualname__ = name
    return metric


accuracy_score = _thresholded("accuracy_score", _accuracy)
accuracy_score.__doc__ = """Share of rows whose thresholded score (``1{r >= threshold}``) equals the label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels 0/1.
    y_prob : array-like of shape (n_samples,)
        Risk scores in [0, 1] (not predicted labels).
    threshold : float in [0, 1], default=0.5
    threshold_rule : {">=", ">"}, default=">="
        ``">="`` predicts positive at ``r >= threshold`` (folktexts' rule);
        ``">"`` at ``r > threshold`` (the paper's strict wording).
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1] (higher is better)

    Examples
    --------
    >>> accuracy_score([1, 0, 0], [0.9, 0.2, 0.5])   # 0.5 >= 0.5 predicts positive
    0.6666666666666666
    >>> accuracy_score([1, 0, 0], [0.9, 0.2, 0.5], threshold_rule=">")
    1.0
    """


def _tpr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    tp, pos, _, _ = _rates(y, p, w, t, rule)
    if pos == 0:
        return undefined("true_positive_rate is undefined: there is no positive label (y = 1).")
    return tp / pos


def _fnr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    tp, pos, _, _ = _rates(y, p, w, t, rule)
    if pos == 0:
        return undefined("false_negative_rate is undefined: there is no positive label (y = 1).")
    return (pos - tp) / pos


def _fpr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    _, _, fp, neg = _rates(y, p, w, t, rule)
    if neg == 0:
        return undefined("false_positive_rate is undefined: there is no negative label (y = 0).")
    return fp / neg


def _tnr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    _, _, fp, neg = _rates(y, p, w, t, rule)
    if neg == 0:
        return undefined("true_negative_rate is undefined: there is no negative label (y = 0).")
    return (neg - fp) / neg


def _precision(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    tp, _, fp, _ = _rates(y, p, w, t, rule)
    if tp + fp == 0:
        return undefined("precision_score is undefined: no row is predicted positive.")
    return tp / (tp + fp)


def _ppr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    tp, pos, fp, neg = _rates(y, p, w, t, rule)
    if pos + neg == 0:
        return undefined("positive_prediction_rate is undefined: no scored row is left.")
    return (tp + fp) / (pos + neg)


def _balanced_accuracy(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float, rule: str = ">=") -> float:
    tp, pos, fp, neg = _rates(y, p, w, t, rule)
    if pos == 0 or neg == 0:
        return undefined("balanced_accuracy_score is undefined: y_true holds a single class.")
    return (tp / pos + 1.0 - fp / neg) / 2.0


_SHARED_PARAMETERS = """
    Parameters
    ----------
    y_true, y_prob, threshold, threshold_rule, sample_weight, nan_policy
        As in :func:`accuracy_score`.

    Returns
    -------
    float in [0, 1]
"""

true_positive_rate = _thresholded("true_positive_rate", _tpr)
true_positive_rate.__doc__ = f"""TPR (recall) ``P(r >= threshold | y = 1)``; NaN with a warning without positives.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> true_positive_rate([1, 1, 0], [0.9, 0.3, 0.8])
    0.5
    """
false_negative_rate = _thresholded("false_negative_rate", _fnr)
false_negative_rate.__doc__ = f"""FNR ``1 - TPR = P(r < threshold | y = 1)`` (lower is better); NaN with a warning without positives.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> false_negative_rate([1, 1, 1, 0], [0.9, 0.3, 0.5, 0.8])
    0.3333333333333333
    """
false_positive_rate = _thresholded("false_positive_rate", _fpr)
false_positive_rate.__doc__ = f"""FPR ``P(r >= threshold | y = 0)`` (lower is better); NaN with a warning without negatives.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> false_positive_rate([1, 0, 0, 0], [0.9, 0.6, 0.1, 0.2])
    0.3333333333333333
    """
true_negative_rate = _thresholded("true_negative_rate", _tnr)
true_negative_rate.__doc__ = f"""TNR (specificity) ``1 - FPR``; NaN with a warning without negatives.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> true_negative_rate([1, 0, 0, 0], [0.9, 0.6, 0.1, 0.2])
    0.6666666666666666
    """
precision_score = _thresholded("precision_score", _precision)
precision_score.__doc__ = f"""Precision ``P(y = 1 | r >= threshold)``; NaN with a warning when no row is predicted positive.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> precision_score([1, 0, 0, 0], [0.9, 0.6, 0.1, 0.2])
    0.5
    """
positive_prediction_rate = _thresholded("positive_prediction_rate", _ppr)
positive_prediction_rate.__doc__ = f"""Share of rows predicted positive, ``P(r >= threshold)`` (folktexts' ``ppr``).
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> positive_prediction_rate([1, 0, 0, 0], [0.9, 0.6, 0.1, 0.2])
    0.5
    """
balanced_accuracy_score = _thresholded("balanced_accuracy_score", _balanced_accuracy)
balanced_accuracy_score.__doc__ = f"""Balanced accuracy ``(TPR + 1 - FPR) / 2``; NaN with a warning for a single class.
{_SHARED_PARAMETERS}
    Examples
    --------
    >>> balanced_accuracy_score([1, 1, 0, 0], [0.9, 0.3, 0.2, 0.1])   # (1/2 + 1) / 2
    0.75
    """


def roc_auc_score(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Area under the ROC curve: P(score of a positive > score of a negative), ties 1/2.

    .. math:: \mathrm{AUC} = \frac{\sum_{i: y_i=1}\sum_{j: y_j=0} w_i w_j
              [\mathbb 1(r_i > r_j) + \tfrac12 \mathbb 1(r_i = r_j)]}{W_+ W_-}

    Computed in O(n log n) from the sorted unique scores; equal to
    ``sklearn.metrics.roc_auc_score`` on the same input. One class only:
    NaN with an :class:`~folkscope.errors.UndefinedMetricWarning` (never 0 or 0.5).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
        Any real scores (only their order matters), but they must be finite.
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1] (higher is better)

    Examples
    --------
    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy, unit_interval=False)
    return _auc(y, p, w)


def _auc_presorted(pos: np.ndarray, neg: np.ndarray, p: FloatArray, w: FloatArray | None) -> float:
    """AUC in one linear pass when ``p`` is sorted ascending (groupwise_metrics presorts).

    Rows with equal scores form tie blocks; each positive beats the negatives
    of earlier blocks and ties (half a win) with those of its own block.
    """
    starts = np.flatnonzero(np.concatenate([[True], p[1:] != p[:-1]]))
    if w is None:  # integer counts stay exact beyond 2**53 / n rows
        neg_block = np.add.reduceat(neg.astype(np.int64), starts)
        pos_block = np.add.reduceat(pos.astype(np.int64), starts)
        before = np.cumsum(neg_block) - neg_block
        twice_wins = 2 * int(np.dot(pos_block, before)) + int(np.dot(pos_block, neg_block))
        return twice_wins / (2.0 * int(pos_block.sum()) * int(neg_block.sum()))
    neg_block = np.add.reduceat(np.where(neg, w, 0.0), starts)
    pos_block = np.add.reduceat(np.where(pos, w, 0.0), starts)
    before = np.cumsum(neg_block) - neg_block
    return float(np.dot(pos_block, before + 0.5 * neg_block) / (pos_block.sum() * neg_block.sum()))


def _auc(y: FloatArray, p: FloatArray, w: FloatArray | None) -> float:
    """ROC AUC on validated arrays (shared with groupwise_metrics).

    Only the negatives are sorted; each positive finds the (weight of) negatives
    below and equal to it by binary search: O(n log n), cheaper than an argsort
    of all rows.
    """
    pos = y == 1
    if w is not None:  # rows of weight 0 take no part
        pos, neg = pos & (w > 0), ~pos & (w > 0)
    else:
        neg = ~pos
    if not (pos.any() and neg.any()):
        return undefined(
            "roc_auc_score is undefined: y_true holds a single class "
            f"({'no negatives' if not neg.any() else 'no positives'})."
        )
    if p.size > 1 and bool(np.all(p[1:] >= p[:-1])):
        return _auc_presorted(pos, neg, p, w)
    pp, pn = p[pos], p[neg]
    if w is None:
        # sorted needles keep the binary searches cache-friendly (several times faster)
        ns, ps = np.sort(pn), np.sort(pp)
        lo = np.searchsorted(ns, ps, side="left")
        hi = np.searchsorted(ns, ps, side="right")
        # integer pair counts stay exact beyond 2**53 / n rows
        wins = 2 * int(lo.sum(dtype=np.int64)) + int((hi - lo).sum(dtype=np.int64))
        return wins / (2.0 * len(pp) * len(pn))
    order_n, order_p = np.argsort(pn), np.argsort(pp)
    ns, ps = pn[order_n], pp[order_p]
    cw = np.concatenate([[0.0], np.cumsum(w[neg][order_n])])
    lo = cw[np.searchsorted(ns, ps, side="left")]
    hi = cw[np.searchsorted(ns, ps, side="right")]
    wp = w[pos][order_p]
    return float(np.dot(wp, lo + 0.5 * (hi - lo)) / (wp.sum() * cw[-1]))
