"""Allocation outcomes of top-k selection and the validity of bias metrics.

Source: Chen, Ji & Evans, "The Mismeasure of Man and Models" (sections 4.2 and
5); ``spec/allocation.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError, DataError
from folkscope.metrics._validation import (
    FloatArray,
    as_1d,
    check_binary,
    check_number,
    check_option,
    check_random_state,
    check_same_length,
    check_scores,
    factorize_labels,
    undefined,
)

__all__ = [
    "PearsonResult",
    "allocation_gaps",
    "impact_ratio",
    "model_ranking_ndcg_score",
    "predictive_validity",
    "root_mean_square_bias",
    "simulate_top_k_allocation",
    "top_k_selection",
]


def top_k_selection(
    scores: ArrayLike,
    pools: ArrayLike,
    *,
    k: int,
    tie_break: str = "fractional",
    random_state: int | np.random.Generator | None = None,
) -> FloatArray:
    """Select the ``k`` highest-scored candidates of every pool.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
        Finite scores, higher is better.
    pools : array-like of shape (n_candidates,)
        Pool (selection round) of each candidate.
    k : int >= 1
        Quota per pool; a pool with at most ``k`` candidates selects all.
    tie_break : {"fractional", "random"}, default="fractional"
        Candidates tied at the cut-off share the remaining slots: with
        ``"fractional"`` each gets ``slots / n_tied`` (the expectation under a
        random tie-break, deterministic); with ``"random"`` a seeded random
        order decides.
    random_state : int, Generator or None
        Used by ``tie_break="random"``.

    Returns
    -------
    ndarray of shape (n_candidates,)
        Selection indicator in [0, 1] (fractional only at tied cut-offs).

    Examples
    --------
    >>> top_k_selection([0.9, 0.5, 0.5, 0.1], [0, 0, 0, 0], k=2).tolist()
    [1.0, 0.5, 0.5, 0.0]
    """
    check_number(k, "k", integer=True, low=1)
    check_option(tie_break, "tie_break", ("fractional", "random"))
    s, _ = check_scores(scores, "scores", unit_interval=False)
    pool_arr = np.asarray(pools)
    check_same_length(scores=s, pools=pool_arr)
    _, pool = np.unique(pool_arr, return_inverse=True)
    n = len(s)
    if tie_break == "random":
        key = check_random_state(random_state).permutation(n)
        order = np.lexsort((key, -s, pool))
        pos = np.arange(n) - np.searchsorted(pool[order], pool[order], side="left")
        out = np.empty(n)
        out[order] = (pos < k).astype(np.float64)
        return out
    order = np.lexsort((-s, pool))
    ps, ss = pool[order], s[order]
    pool_start = np.searchsorted(ps, ps, side="left")
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (ps[1:] != ps[:-1]) | (ss[1:] != ss[:-1])
    run_id = np.cumsum(new_run) - 1
    run_first = np.flatnonzero(new_run)
    run_len = np.diff(np.append(run_first, n))
    start = (run_first - pool_start[run_first])[run_id]  # candidates ranked above the run
    length = run_len[run_id]
    frac = np.clip((k - start) / length, 0.0, 1.0)
    out = np.empty(n)
    out[order] = frac
    return out


def allocation_gaps(
    selected: ArrayLike,
    groups: ArrayLike,
    *,
    reference: Hashable,
    qualified: ArrayLike | None = None,
) -> pd.DataFrame:
    r"""Selection rates per group and their gaps to a reference group.

    .. math:: \phi(X) = \frac{|\{x\in X: \text{selected}\}|}{|X|},\quad
              \Delta DP(A, B) = \phi(A) - \phi(B)

    and among qualified candidates (:math:`d = 1`)
    :math:`\psi(X)` and :math:`\Delta EO(A, B) = \psi(A) - \psi(B)`.

    Parameters
    ----------
    selected : array-like of shape (n_candidates,)
        Selection indicator in [0, 1] (e.g. from :func:`top_k_selection`).
    groups : array-like of shape (n_candidates,)
    reference : hashable
        The reference group B (e.g. "White Male").
    qualified : array-like of shape (n_candidates,), optional
        Ground-truth qualification d in {0, 1}.

    Returns
    -------
    pandas.DataFrame
        Index: group labels (sorted). Columns ``n, selection_rate, dp_gap`` and,
        with ``qualified``, ``n_qualified, qualified_selection_rate, eo_gap``
        (NaN with a warning for a group without qualified members).

    Examples
    --------
    >>> gaps = allocation_gaps([1, 0, 1, 1], ["a", "a", "b", "b"], reference="b")
    >>> gaps["dp_gap"].tolist()
    [-0.5, 0.0]
    """
    sel, _ = check_scores(selected, "selected")
    g = np.asarray(groups)
    check_same_length(selected=sel, groups=g)
    codes, labels = factorize_labels(g)
    if reference not in labels:
        raise ConfigError(
            f"reference must be one of the groups {labels}; got {reference!r}.", parameter="reference", value=reference
        )
    m = len(labels)
    n = np.bincount(codes, minlength=m).astype(np.float64)
    phi = np.bincount(codes, weights=sel, minlength=m) / n
    ref = labels.index(reference)
    out = pd.DataFrame({"n": n, "selection_rate": phi, "dp_gap": phi - phi[ref]}, index=pd.Index(labels, name="group"))
    if qualified is not None:
        d = check_binary(qualified, "qualified")
        check_same_length(selected=sel, qualified=d)
        nq = np.bincount(codes, weights=d, minlength=m)
        with np.errstate(invalid="ignore", divide="ignore"):
            psi = np.bincount(codes, weights=sel * d, minlength=m) / nq
        if (nq == 0).any():
            undefined(
                f"allocation_gaps: group(s) {[labels[i] for i in np.flatnonzero(nq == 0)]} "
                "have no qualified "
                "candidate; their qualified selection rate and EO gap are NaN."
            )
        out["n_qualified"] = nq
        out["qualified_selection_rate"] = psi
        out["eo_gap"] = psi - psi[ref]
    return out


def impact_ratio(selection_rates: ArrayLike) -> FloatArray:
    """Each group's selection rate over the highest group's (four-fifths rule: flag < 0.8); NaN if nobody was selected.

    Examples
    --------
    >>> impact_ratio([0.1, 0.4, 0.2]).tolist()
    [0.25, 1.0, 0.5]
    """
    rates = as_1d(selection_rates, "selection_rates")
    return rates / rates.max() if len(rates) and rates.max() > 0 else np.full(len(rates), np.nan)


def simulate_top_k_allocation(
    scores: ArrayLike,
    groups: ArrayLike,
    *,
    k: int,
    reference: Hashable,
    n_rounds: int = 1000,
    pool_size: int | None = None,
    qualified: ArrayLike | None = None,
    tie_break: str = "fractional",
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Candidate selection in rounds: draw pools, pick the top ``k``, measure the gaps.

    Each round draws a pool, either one candidate per group (``pool_size=None``,
    the resume-screening design) or ``pool_size`` candidates uniformly without
    replacement, ranks it by score and selects the top ``k``. All pools are drawn
    at once as an index matrix from one seeded Generator.

    Parameters
    ----------
    scores : array-like of shape (n_candidates,)
    groups : array-like of shape (n_candidates,)
    k : int >= 1
    reference : hashable
    n_rounds : int, default=1000
    pool_size : int, optional
    qualified : array-like of shape (n_candidates,), optional
    tie_break : {"fractional", "random"}, default="fractional"
    random_state : int, Generator or None

    Returns
    -------
    pandas.DataFrame
        As :func:`allocation_gaps`, over all drawn candidate appearances.

    Examples
    --------
    >>> res = simulate_top_k_allocation([0.9, 0.8, 0.2, 0.1], ["a", "a", "b", "b"], k=1,
    ...                                 reference="b", n_rounds=50, random_state=0)
    >>> res["dp_gap"].tolist()
    [1.0, 0.0]
    """
    s, _ = check_scores(scores, "scores", unit_interval=False)
    g = np.asarray(groups)
    check_same_length(scores=s, groups=g)
    rounds = int(check_number(n_rounds, "n_rounds", integer=True, low=1))
    rng = check_random_state(random_state)
    codes, labels = factorize_labels(g)
    if pool_size is None:
        members = [np.flatnonzero(codes == c) for c in range(len(labels))]
        idx = np.column_stack([m[rng.integers(0, len(m), size=rounds)] for m in members])
    else:
        size = int(check_number(pool_size, "pool_size", integer=True, low=1, high=len(s)))
        if rounds * len(s) <= 1 << 24:
            # the `size` smallest of uniform keys form a random subset: all rounds at once
            idx = np.argpartition(rng.random((rounds, len(s))), size - 1, axis=1)[:, :size]
        else:  # large candidate sets: sample each pool directly
            idx = np.stack([rng.choice(len(s), size=size, replace=False) for _ in range(rounds)])
    flat = idx.ravel()
    pools = np.repeat(np.arange(rounds), idx.shape[1])
    sel = top_k_selection(s[flat], pools, k=k, tie_break=tie_break, random_state=rng)
    q = None if qualified is None else check_binary(qualified, "qualified")
    if q is not None:
        check_same_length(scores=s, qualified=q)
    return allocation_gaps(sel, g[flat], reference=reference, qualified=None if q is None else q[flat])


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
