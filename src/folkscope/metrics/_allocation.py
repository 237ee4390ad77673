"""Bias between two groups' scores: RABBI and the baseline metrics it is compared with.

Source: Chen, Ji & Evans, "The Mismeasure of Man and Models: Evaluating
Allocational Harms in Large Language Models" (sections 3.1, 4.3, appendix A);
``spec/allocation.md``. Scores are any real numbers, higher is better.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError, DataError
from folkscope.metrics._validation import (
    FloatArray,
    as_1d,
    check_nan_policy,
    check_number,
    check_sample_weight,
    check_scores,
    undefined,
    wmean,
)

__all__ = [
    "RabbiTest",
    "average_score_gap",
    "earth_movers_distance",
    "jensen_shannon_divergence",
    "pointwise_relevance_score",
    "rabbi",
    "rabbi_test",
]


def _group(
    scores: ArrayLike, weights: ArrayLike | None, name: str, nan_policy: object
) -> tuple[FloatArray, FloatArray | None]:
    policy = check_nan_policy(nan_policy)
    s, nan = check_scores(scores, name, nan_policy=policy, unit_interval=False)
    w = check_sample_weight(weights, len(s), f"weights_{name[-1]}")
    if nan.any():
        s = s[~nan]
        w = None if w is None else w[~nan]
    if len(s) == 0 or (w is not None and not w.sum() > 0):
        raise DataError(f"{name} has no scored candidate left after omitting NaN scores.")
    return s, w


def rabbi(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    weights_a: ArrayLike | None = None,
    weights_b: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Rank-allocational-based bias index RABBI(A, B) of protected group A vs reference B.

    .. math:: \mathcal R(A, B) = \frac{1}{|A||B|}\sum_{a\in A}\sum_{b\in B}
              [\mathbb 1(s_a > s_b) - \mathbb 1(s_a < s_b)] = \frac{2U_A}{n_A n_B} - 1

    with :math:`U_A` the Mann-Whitney statistic (ties count 1/2, via midranks).
    O(n log n): midranks of the pooled scores, never a loop over pairs. With
    weights every pair (a, b) counts ``w_a w_b`` (computed by binary search in
    the sorted reference scores). Antisymmetric: ``rabbi(a, b) == -rabbi(b, a)``.
    To compare with the equal-opportunity gap ΔEO, pass the qualified
    candidates (d = 1) of each group only.

    Parameters
    ----------
    scores_a : array-like of shape (n_a,)
        Scores of the protected group A.
    scores_b : array-like of shape (n_b,)
        Scores of the reference group B.
    weights_a, weights_b : array-like, optional
        Non-negative candidate weights.
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [-1, 1]
        Positive: A is preferred; 0: no preference.

    References
    ----------
    Chen, Ji, Evans, eq. (1) and appendix A; Cureton (1956); Kerby (2014).

    Examples
    --------
    >>> rabbi([3, 2], [1, 2])   # pairs: (3,1)+ (3,2)+ (2,1)+ (2,2)0 -> 3/4
    0.75
    """
    a, wa = _group(scores_a, weights_a, "scores_a", nan_policy)
    b, wb = _group(scores_b, weights_b, "scores_b", nan_policy)
    if wa is None and wb is None:
        from scipy.stats import rankdata

        ranks = rankdata(np.concatenate([a, b]), method="average")
        na, nb = len(a), len(b)
        u_a = float(ranks[:na].sum()) - na * (na + 1) / 2.0
        return 2.0 * u_a / (na * nb) - 1.0
    wa_ = np.ones_like(a) if wa is None else wa
    wb_ = np.ones_like(b) if wb is None else wb
    order = np.argsort(b, kind="stable")
    bs = b[order]
    cw = np.concatenate([[0.0], np.cumsum(wb_[order])])
    below = cw[np.searchsorted(bs, a, side="left")]
    above = cw[-1] - cw[np.searchsorted(bs, a, side="right")]
    return float(np.dot(wa_, below - above) / (wa_.sum() * cw[-1]))


class RabbiTest(NamedTuple):
    """RABBI with its Mann-Whitney test (see :func:`rabbi_test`)."""

    rabbi: float
    u_statistic: float
    pvalue: float


def rabbi_test(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    nan_policy: str = "raise",
) -> RabbiTest:
    """RABBI and the two-sided Mann-Whitney U test of "no preference" (unweighted).

    The p-value comes from :func:`scipy.stats.mannwhitneyu` (``method="auto"``:
    exact for small samples without ties, else the tie-corrected normal
    approximation). When every score is identical the test is undefined: the
    p-value is NaN with an :class:`~folkscope.errors.UndefinedMetricWarning`.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_a,), (n_b,)
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    RabbiTest
        ``(rabbi, u_statistic, pvalue)`` with ``u_statistic`` = U_A.

    Examples
    --------
    >>> res = rabbi_test([5, 6, 7, 8], [1, 2, 3, 4])
    >>> res.rabbi, res.u_statistic, round(res.pvalue, 4)
    (1.0, 16.0, 0.0286)
    """
    from scipy.stats import mannwhitneyu

    a, _ = _group(scores_a, None, "scores_a", nan_policy)
    b, _ = _group(scores_b, None, "scores_b", nan_policy)
    value = rabbi(a, b)
    u_a = (value + 1.0) * len(a) * len(b) / 2.0
    if np.all(np.concatenate([a, b]) == a[0]):
        return RabbiTest(
            value, u_a, undefined("rabbi_test: every score is identical, so the Mann-Whitney p-value is undefined.")
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = mannwhitneyu(a, b, alternative="two-sided", method="auto")
    return RabbiTest(value, float(res.statistic), float(res.pvalue))


def average_score_gap(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    weights_a: ArrayLike | None = None,
    weights_b: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    r"""Average performance gap :math:`\delta = \mathrm{mean}(s_A) - \mathrm{mean}(s_B)`.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_a,), (n_b,)
    weights_a, weights_b : array-like, optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float

    References
    ----------
    Chen, Ji, Evans, section 4.3 (pointwise form).

    Examples
    --------
    >>> average_score_gap([0.9, 0.7], [0.5, 0.3])
    0.4
    """
    a, wa = _group(scores_a, weights_a, "scores_a", nan_policy)
    b, wb = _group(scores_b, weights_b, "scores_b", nan_policy)
    return wmean(a, wa) - wmean(b, wb)


def jensen_shannon_divergence(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    bins: int | Sequence[float] = 10,
    score_range: tuple[float, float] | None = None,
    weights_a: ArrayLike | None = None,
    weights_b: ArrayLike | None = None,
    base: float = 2.0,
    nan_policy: str = "raise",
) -> float:
    r"""Jensen-Shannon divergence between the two groups' score histograms.

    .. math:: JSD(P, Q) = \tfrac12 KL(P\|M) + \tfrac12 KL(Q\|M),\quad M = \tfrac12(P + Q)

    Both groups are binned on the same edges: ``bins`` equal-width bins over
    ``score_range`` (default: the pooled min and max), or explicit edges. The
    divergence (not its square root) is returned, in bits by default, so it lies
    in [0, 1]. It has no sign; compare it with ``|ΔDP|``.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_a,), (n_b,)
    bins : int or sequence of float, default=10
    score_range : (low, high), optional
    weights_a, weights_b : array-like, optional
    base : float > 1, default=2
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float in [0, log_base 2]

    References
    ----------
    Lin (1991); used as a baseline by Chen, Ji, Evans, section 4.3.

    Examples
    --------
    >>> jensen_shannon_divergence([0.1, 0.2], [0.8, 0.9], bins=2, score_range=(0, 1))
    1.0
    """
    check_number(base, "base", low=1, low_open=True)
    a, wa = _group(scores_a, weights_a, "scores_a", nan_policy)
    b, wb = _group(scores_b, weights_b, "scores_b", nan_policy)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        check_number(bins, "bins", integer=True, low=1)
        if score_range is None:
            lo, hi = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
        else:
            lo, hi = (float(check_number(v, "score_range")) for v in score_range)
        if hi == lo:
            hi = lo + 1.0  # a single point: one bin holds everything, JSD = 0
        edges = np.linspace(lo, hi, int(bins) + 1)
    else:
        edges = as_1d(bins, "bins")
        if len(edges) < 2 or np.any(np.diff(edges) <= 0):
            raise ConfigError(
                f"bins must be an int >= 1 or increasing edges (at least 2); got {bins!r}.",
                parameter="bins",
                value=bins,
            )
    pa = np.histogram(a, bins=edges, weights=wa)[0]
    pb = np.histogram(b, bins=edges, weights=wb)[0]
    if not (pa.sum() > 0 and pb.sum() > 0):
        return undefined("jensen_shannon_divergence is undefined: a group has no score inside the histogram range.")
    pa, pb = pa / pa.sum(), pb / pb.sum()
    m = (pa + pb) / 2

    def kl(p: FloatArray) -> float:
        nz = p > 0
        return float(np.sum(p[nz] * np.log(p[nz] / m[nz])))

    return float((kl(pa) + kl(pb)) / 2 / np.log(base))


def earth_movers_distance(
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    *,
    weights_a: ArrayLike | None = None,
    weights_b: ArrayLike | None = None,
    nan_policy: str = "raise",
) -> float:
    """Earth mover's (1-Wasserstein) distance between the two groups' score distributions.

    Computed exactly from the empirical CDFs by :func:`scipy.stats.wasserstein_distance`.
    In score units, no sign.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_a,), (n_b,)
    weights_a, weights_b : array-like, optional
    nan_policy : {"raise", "omit"}, default="raise"

    Returns
    -------
    float >= 0

    References
    ----------
    Rubner et al. (1998); used as a baseline by Chen, Ji, Evans, section 4.3.

    Examples
    --------
    >>> earth_movers_distance([0.0, 1.0], [0.5, 1.5])
    0.5
    """
    from scipy.stats import wasserstein_distance

    a, wa = _group(scores_a, weights_a, "scores_a", nan_policy)
    b, wb = _group(scores_b, weights_b, "scores_b", nan_policy)
    return float(wasserstein_distance(a, b, wa, wb))


def pointwise_relevance_score(
    label_probs: ArrayLike,
    relevance: ArrayLike,
) -> FloatArray:
    r"""Pointwise ranking score :math:`\sum_y P_n(y\mid a)\,\gamma_y` per candidate.

    ``P_n`` are the label probabilities renormalised over the label set Y.

    Parameters
    ----------
    label_probs : array-like of shape (n_candidates, n_labels)
        Next-token probabilities of the labels (not necessarily summing to 1).
    relevance : array-like of shape (n_labels,)
        Relevance value of each label (Yes/No: 1/0; grades: 1..5).

    Returns
    -------
    ndarray of shape (n_candidates,)
        NaN (with a warning) for rows whose label probabilities sum to 0.

    References
    ----------
    Chen, Ji, Evans, section 3.2; Zhuang et al. (2024).

    Examples
    --------
    >>> pointwise_relevance_score([[0.2, 0.6], [0.1, 0.1]], [0, 1]).round(6).tolist()
    [0.75, 0.5]
    """
    probs = np.asarray(label_probs, dtype=np.float64)
    gamma = as_1d(relevance, "relevance")
    if probs.ndim != 2 or probs.shape[1] != len(gamma):
        raise DataError(f"label_probs must have shape (n_candidates, {len(gamma)}); got {probs.shape}.")
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise DataError("label_probs must be finite and non-negative.")
    mass = probs.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = probs @ gamma / mass
    if (mass == 0).any():
        undefined(
            f"pointwise_relevance_score: {int((mass == 0).sum())} candidate(s) put no "
            "probability on any label; their score is NaN."
        )
    return np.asarray(out)
