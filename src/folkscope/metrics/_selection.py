"""Allocation outcomes of top-k selection: who is picked, the selection rates and their gaps.

Source: Chen, Ji & Evans, "The Mismeasure of Man and Models" (section 4.2);
``spec/allocation.md``. How well a bias metric predicts these gaps is
:mod:`folkscope.metrics._validity`.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError
from folkscope.metrics._validation import (
    FloatArray,
    as_1d,
    check_binary,
    check_number,
    check_option,
    check_random_state,
    check_same_length,
    check_sample_weight,
    check_scores,
    factorize_labels,
    undefined,
)

__all__ = [
    "allocation_gaps",
    "impact_ratio",
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
    sample_weight: ArrayLike | None = None,
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
    sample_weight : array-like of shape (n_candidates,), optional
        Survey weights: the rates become population shares, Σ w·selected / Σ w
        per group (``n`` still counts candidates).

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
    >>> allocation_gaps([1, 0, 1, 1], list("aabb"), reference="b", sample_weight=[3, 1, 1, 1])["selection_rate"].tolist()
    [0.75, 1.0]
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
    w = np.ones(len(sel)) if sample_weight is None else check_sample_weight(sample_weight, len(sel), "sample_weight")
    phi = np.bincount(codes, weights=w * sel, minlength=m) / np.bincount(codes, weights=w, minlength=m)
    ref = labels.index(reference)
    out = pd.DataFrame({"n": n, "selection_rate": phi, "dp_gap": phi - phi[ref]}, index=pd.Index(labels, name="group"))
    if qualified is not None:
        d = check_binary(qualified, "qualified")
        check_same_length(selected=sel, qualified=d)
        nq = np.bincount(codes, weights=d, minlength=m)
        with np.errstate(invalid="ignore", divide="ignore"):
            psi = np.bincount(codes, weights=w * sel * d, minlength=m) / np.bincount(codes, weights=w * d, minlength=m)
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
