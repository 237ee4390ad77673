"""Discrimination and thresholded classification of risk scores.

A score becomes a prediction by ``c(x) = 1{r > tau}`` (strictly greater), the
rule of Cruz, Hardt & Mendler-Dünner (2024), section 2.2, with ``tau = 0.5``
unless a threshold is fitted (``--fit-threshold``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

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
    "best_accuracy_threshold",
    "false_positive_rate",
    "roc_auc_score",
    "true_positive_rate",
]


def _weights(n: int, w: FloatArray | None) -> FloatArray:
    return np.ones(n) if w is None else w


def _check_threshold(threshold: object) -> float:
    return float(check_number(threshold, "threshold", low=0.0, high=1.0))


def _rates(y: FloatArray, p: FloatArray, w: FloatArray | None,
           threshold: float) -> tuple[float, float, float, float]:
    """Weighted (true positives, positives, false positives, negatives)."""
    pred = p > threshold
    if w is None:
        pos = y == 1
        n_pos, tp = np.count_nonzero(pos), np.count_nonzero(pred & pos)
        return float(tp), float(n_pos), float(np.count_nonzero(pred) - tp), float(len(y) - n_pos)
    predf = pred.astype(np.float64)
    w_pos = w * y          # exactly w or 0, since y is 0/1
    w_neg = w - w_pos      # exactly 0 or w
    return (float(np.dot(w_pos, predf)), float(w_pos.sum()),
            float(np.dot(w_neg, predf)), float(w_neg.sum()))


def accuracy_score(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Share of rows whose thresholded score ``1{r > threshold}`` equals the label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels 0/1.
    y_prob : array-like of shape (n_samples,)
        Risk scores in [0, 1] (not predicted labels).
    threshold : float in [0, 1], default=0.5
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1] (higher is better)

    Examples
    --------
    >>> accuracy_score([1, 0, 1], [0.9, 0.2, 0.5])   # 0.5 is not > 0.5
    0.6666666666666666
    """
    t = _check_threshold(threshold)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _accuracy(y, p, w, t)


def _accuracy(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float) -> float:
    """Accuracy on validated arrays (shared with groupwise_metrics)."""
    if len(y) == 0:
        return undefined("accuracy_score is undefined: no scored row is left.")
    correct = ((p > t) == (y == 1)).astype(np.float64)
    return wsum(correct, w) / (len(y) if w is None else float(w.sum()))


def true_positive_rate(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """TPR (recall) ``P(r > threshold | y = 1)``; NaN with a warning without positives.

    Parameters
    ----------
    y_true, y_prob, threshold, sample_weight, nan_policy
        As in :func:`accuracy_score`.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> true_positive_rate([1, 1, 0], [0.9, 0.3, 0.8])
    0.5
    """
    t = _check_threshold(threshold)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _tpr(y, p, w, t)


def _tpr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float) -> float:
    tp, pos, _, _ = _rates(y, p, w, t)
    if pos == 0:
        return undefined("true_positive_rate is undefined: there is no positive label (y = 1).")
    return tp / pos


def false_positive_rate(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """FPR ``P(r > threshold | y = 0)`` (lower is better); NaN with a warning without negatives.

    Parameters
    ----------
    y_true, y_prob, threshold, sample_weight, nan_policy
        As in :func:`accuracy_score`.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> false_positive_rate([1, 0, 0, 0], [0.9, 0.6, 0.1, 0.2])
    0.3333333333333333
    """
    t = _check_threshold(threshold)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _fpr(y, p, w, t)


def _fpr(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float) -> float:
    _, _, fp, neg = _rates(y, p, w, t)
    if neg == 0:
        return undefined("false_positive_rate is undefined: there is no negative label (y = 0).")
    return fp / neg


def balanced_accuracy_score(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    threshold: float = 0.5,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Balanced accuracy ``(TPR + 1 - FPR) / 2``; NaN with a warning for a single class.

    Parameters
    ----------
    y_true, y_prob, threshold, sample_weight, nan_policy
        As in :func:`accuracy_score`.

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> balanced_accuracy_score([1, 1, 0, 0], [0.9, 0.3, 0.2, 0.1])   # (1/2 + 1) / 2
    0.75
    """
    t = _check_threshold(threshold)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    return _balanced_accuracy(y, p, w, t)


def _balanced_accuracy(y: FloatArray, p: FloatArray, w: FloatArray | None, t: float) -> float:
    tp, pos, fp, neg = _rates(y, p, w, t)
    if pos == 0 or neg == 0:
        return undefined("balanced_accuracy_score is undefined: y_true holds a single class.")
    return (tp / pos + 1.0 - fp / neg) / 2.0


def _score_groups(p: FloatArray, y: FloatArray, w: FloatArray | None) -> tuple[Any, Any, Any]:
    """Unique scores (ascending) with the positive and negative weight at each."""
    if len(p) == 0:
        return p, p, p
    order = np.argsort(p)
    ps = p[order]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    ys = y[order]
    if w is None:
        wp = np.add.reduceat(ys, starts)
        wn = np.diff(np.append(starts, len(ps))) - wp
    else:
        ws = w[order]
        wp = np.add.reduceat(ws * ys, starts)
        wn = np.add.reduceat(ws, starts) - wp
    return ps[starts], wp, np.asarray(wn, dtype=np.float64)


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
        return undefined("roc_auc_score is undefined: y_true holds a single class "
                         f"({'no negatives' if not neg.any() else 'no positives'}).")
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


def best_accuracy_threshold(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Threshold that maximises (weighted) accuracy of ``1{r > t}`` on the given rows.

    Candidates are 0, the midpoints between consecutive distinct scores and the
    largest score (predict all negative); every possible split of the sorted
    scores is covered, except predicting a score of exactly 0 positive. Among
    equally accurate thresholds the one closest to 0.5 wins (then the smaller),
    so a tie keeps the paper's default. Used for ``--fit-threshold N`` on N
    training rows.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> best_accuracy_threshold([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    0.25
    """
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    if w is not None:  # a row of weight 0 must not add a candidate threshold
        y, p, w = y[w > 0], p[w > 0], w[w > 0]
    if len(y) == 0:
        return undefined("best_accuracy_threshold is undefined: no scored row is left.")
    uniq, wp, wn = _score_groups(p, y, w)
    cum_n, cum_p = np.cumsum(wn), np.cumsum(wp)
    # candidate j: rows with score <= uniq[j] predicted negative
    acc = cum_n + (cum_p[-1] - cum_p)
    thr = np.append((uniq[:-1] + uniq[1:]) / 2.0, uniq[-1])
    if uniq[0] > 0:  # threshold 0 predicts every row positive
        acc = np.insert(acc, 0, cum_p[-1])
        thr = np.insert(thr, 0, 0.0)
    best = acc.max()
    tied = np.flatnonzero(acc >= best - 1e-12 * max(abs(best), 1.0))
    dist = np.abs(thr[tied] - 0.5)
    choice = tied[dist <= dist.min() + 1e-15]
    return float(thr[choice].min())
