"""Threshold rules and folkscope's accuracy-maximising threshold.

A score ``r`` becomes a positive prediction at threshold ``t`` by ``r >= t``,
the rule folktexts 0.7.1 applies, or, with ``threshold_rule=">"``, by
``r > t``, the strict wording of Cruz, Hardt & Mendler-Dünner (2024),
section 2.2, and folkscope's rule before issue 29. The two differ only on
scores exactly at the threshold, which numeric prompting (scores on a 0.01
grid) produces often; every thresholded metric takes the rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from folkscope.metrics._validation import FloatArray, check_binary_input, check_option, undefined

__all__ = ["THRESHOLD_RULES", "best_accuracy_threshold"]

#: How a score becomes a positive prediction at a threshold: ``">="`` (folktexts, the default) or ``">"``.
THRESHOLD_RULES = (">=", ">")


def check_threshold_rule(rule: object) -> str:
    """``threshold_rule`` checked against :data:`THRESHOLD_RULES`."""
    return str(check_option(rule, "threshold_rule", THRESHOLD_RULES))


def predict_positive(p: FloatArray, threshold: float, rule: str = ">=") -> Any:
    """The 0/1 decisions (booleans) of scores ``p`` at ``threshold`` under ``rule`` (see the module docstring)."""
    return p >= threshold if rule == ">=" else p > threshold


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


def best_accuracy_threshold(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    threshold_rule: str = ">=",
    sample_weight: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Threshold that maximises (weighted) accuracy of the thresholded scores on the given rows.

    Every split of the sorted distinct scores is a candidate: 0 (every row
    positive), the midpoints between consecutive distinct scores, and "every
    row negative" (``threshold_rule=">="``: the midpoint between the largest
    score and 1, unless that score is 1; ``">"``: the largest score). Among
    equally accurate thresholds the one closest to 0.5 wins (then the
    smaller), so a tie keeps the paper's default. folkscope's own fitting
    rule; folktexts' (:func:`compute_best_threshold`, a score on the ROC
    curve) is what ``--fit-threshold`` uses by default.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_prob : array-like of shape (n_samples,)
    threshold_rule : {">=", ">"}, default=">="
        The rule the threshold will be applied with (see :func:`accuracy_score`).
    sample_weight : array-like of shape (n_samples,), optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> best_accuracy_threshold([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    0.25
    >>> best_accuracy_threshold([0, 0], [0.3, 0.6]), best_accuracy_threshold([0, 0], [0.3, 0.6], threshold_rule=">")
    (0.8, 0.6)
    """
    rule = check_threshold_rule(threshold_rule)
    y, p, w, _ = check_binary_input(y_true, y_prob, sample_weight, nan_policy)
    if w is not None:  # a row of weight 0 must not add a candidate threshold
        y, p, w = y[w > 0], p[w > 0], w[w > 0]
    if len(y) == 0:
        return undefined("best_accuracy_threshold is undefined: no scored row is left.")
    uniq, wp, wn = _score_groups(p, y, w)
    cum_n, cum_p = np.cumsum(wn), np.cumsum(wp)
    # candidate j: rows with score <= uniq[j] predicted negative
    acc = cum_n + (cum_p[-1] - cum_p)
    mid = (uniq[:-1] + uniq[1:]) / 2.0
    if rule == ">=":  # the threshold must lie in (uniq[j], uniq[j+1]]; adjacent floats have no midpoint between them
        between = np.where(mid > uniq[:-1], mid, uniq[1:])
        none_positive = (uniq[-1] + 1.0) / 2.0 if uniq[-1] < 1.0 else None
    else:  # in [uniq[j], uniq[j+1])
        between = np.where(mid < uniq[1:], mid, uniq[:-1])
        none_positive = uniq[-1]
    thr = np.append(between, np.nan if none_positive is None else none_positive)
    if none_positive is None:  # no threshold in [0, 1] predicts a score of 1 negative
        acc[-1] = -np.inf
    if rule == ">=" or uniq[0] > 0:  # threshold 0 predicts every row positive
        acc = np.insert(acc, 0, cum_p[-1])
        thr = np.insert(thr, 0, 0.0)
    best = acc.max()
    tied = np.flatnonzero(acc >= best - 1e-12 * max(abs(best), 1.0))
    dist = np.abs(thr[tied] - 0.5)
    choice = tied[dist <= dist.min() + 1e-15]
    return float(thr[choice].min())
