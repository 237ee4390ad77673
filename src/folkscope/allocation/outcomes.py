"""Rounds of pools, who the top k of each pool are, and the bias metrics judged against that.

- :func:`draw_pools`: selection rounds, seeded: one candidate per group per
  round (the resume-screening design), or ``pool_size`` candidates drawn
  uniformly without replacement.
- :func:`selection_table`: for k = 1..K, each group's selection rate φ, the
  demographic-parity gap ΔDP to the reference group, the impact ratio (φ over
  the highest group's φ: the four-fifths rule), and among qualified
  candidates ψ and the equal-opportunity gap ΔEO. Ties at the cut-off share
  the remaining places fractionally.
- :func:`bias_table`: per group against the reference: RABBI with its
  Mann-Whitney p-value and a percentile bootstrap interval, RABBI among
  qualified candidates only (the counterpart of ΔEO), and the paper's
  baselines δ (mean score gap), JSD and EMD.

Examples
--------
>>> scored = pd.DataFrame({"pool": [0, 0, 1, 1], "candidate_id": list("abcd"), "group": ["x", "y", "x", "y"],
...                        "qualified": [1, 1, 1, 1], "score": [0.9, 0.2, 0.4, 0.4]})
>>> selection_table(scored, reference="y", k_max=1)[["group", "selection_rate", "dp_gap", "impact_ratio"]].values.tolist()
[['x', 0.75, 0.5, 1.0], ['y', 0.25, 0.0, 0.3333333333333333]]
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from folkscope.allocation.candidates import check_balanced
from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics import (
    allocation_gaps,
    average_score_gap,
    earth_movers_distance,
    impact_ratio,
    jensen_shannon_divergence,
    rabbi,
    rabbi_test,
    top_k_selection,
)

__all__ = ["bias_table", "check_reference", "draw_pools", "selection_table"]


def draw_pools(frame: pd.DataFrame, *, rounds: int, pool_size: int | None = None, seed: int = 0) -> pd.DataFrame:
    """``rounds`` pools of candidates, one row per (pool, candidate): ``pool, candidate_id`` (seeded).

    ``pool_size=None`` draws one candidate of every group per round;
    otherwise ``pool_size`` distinct candidates uniformly.

    When the candidates carry items (``item``: the resume under the name,
    see :class:`~folkscope.allocation.CandidateSet`), every group must hold
    the same items (else a DataError: group and item would be confounded),
    and one-per-group pools keep that balance. Each group's candidates are
    lined up the same way (the first of every item, then the second ...), so
    place ``p`` holds the same item in every group; rounds come in blocks of
    ``m`` (the candidates per group, fewer in a last, shorter block) that use
    the same ``m`` consecutive places for every group, rotated by a seeded
    offset per group so that a pool mixes them. Over any number of rounds,
    every group meets exactly the same items equally often; when every item
    is held equally often and there are no more groups than items (8 names
    per group on Bloomberg's 8 resumes), each pool holds as many different
    items as groups, the audit's design.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ConfigError(f"rounds must be an integer >= 1, got {rounds!r}", parameter="rounds", value=rounds)
    rng = np.random.default_rng(seed)
    ids = frame["candidate_id"].to_numpy()
    crossed = "item" in frame and bool((frame["item"].astype(str) != "").any())
    if crossed:
        check_balanced(frame)
    if pool_size is None:
        groups = sorted(frame["group"].unique())
        if crossed:
            items = frame["item"].astype(str)
            lined = frame.assign(_nth=items.groupby(frame["group"]).cumcount(), _item=items)
            lined = lined.sort_values(["group", "_nth", "_item"], kind="stable")
            members = [lined.loc[lined["group"] == g, "candidate_id"].to_numpy() for g in groups]
            places = _balanced_places(len(members[0]), len(groups), rounds, rng)
            chosen = np.column_stack([m[places[:, g]] for g, m in enumerate(members)])
        else:
            members = [ids[(frame["group"] == g).to_numpy()] for g in groups]
            chosen = np.column_stack([m[rng.integers(0, len(m), size=rounds)] for m in members])
    else:
        if not 2 <= pool_size <= len(ids):
            raise ConfigError(f"pool_size must be between 2 and the {len(ids)} candidates, got {pool_size}",
                              parameter="pool_size", value=pool_size)  # fmt: skip
        chosen = np.stack([rng.choice(ids, size=pool_size, replace=False) for _ in range(rounds)])
    return pd.DataFrame({"pool": np.repeat(np.arange(rounds), chosen.shape[1]), "candidate_id": chosen.ravel()})


def _balanced_places(per_group: int, n_groups: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """(rounds, n_groups) places in 0..per_group-1 such that every group gets the same multiset of places.

    A block of ``m`` rounds starts at a seeded place ``s`` and gives group
    ``g`` in its round ``i`` place ``s + (i + offset_g) % m`` (mod
    ``per_group``; offsets seeded): every group takes each of the block's
    ``m`` places once.
    """
    out = np.empty((rounds, n_groups), dtype=np.int64)
    done = 0
    while done < rounds:
        m = min(per_group, rounds - done)
        start = int(rng.integers(0, per_group))
        offsets = rng.permutation(n_groups)
        out[done:done + m] = (start + (np.arange(m)[:, None] + offsets[None, :]) % m) % per_group
        done += m
    return out


def selection_table(scored: pd.DataFrame, *, reference: str, k_max: int = 5) -> pd.DataFrame:
    """Selection outcomes for k = 1..``k_max`` (see the module docstring).

    ``scored`` has one row per appearance: ``pool, candidate_id, group,
    qualified, score``; appearances without a score (NaN) are left out of
    their pool. Returns one row per (k, group).

    Raises
    ------
    ConfigError
        ``k_max`` is not smaller than the smallest pool, or the reference group never appears.
    """
    usable = scored[np.isfinite(scored["score"].to_numpy(dtype=float))]
    if usable.empty:
        raise DataError("no candidate has a score; nothing to select")
    check_reference(usable, reference)
    smallest = int(usable.groupby("pool").size().min())
    if isinstance(k_max, bool) or not isinstance(k_max, int) or not 1 <= k_max < smallest:
        raise ConfigError(f"k must run from 1 to less than the smallest pool ({smallest} candidates), got k_max={k_max!r}",
                          parameter="k_max", value=k_max)  # fmt: skip
    has_qualified = bool((usable["qualified"] == 1).any())
    out = []
    for k in range(1, k_max + 1):
        selected = top_k_selection(usable["score"].to_numpy(dtype=float), usable["pool"].to_numpy(), k=k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # a group without qualified members: NaN, reported as such
            gaps = allocation_gaps(selected, usable["group"].to_numpy(), reference=reference,
                                   qualified=usable["qualified"].to_numpy() if has_qualified else None)  # fmt: skip
        gaps["n"] = gaps["n"].astype(np.int64)  # counts of appearances, not scores
        if "n_qualified" in gaps:
            gaps["n_qualified"] = gaps["n_qualified"].astype(np.int64)
        gaps["impact_ratio"] = impact_ratio(gaps["selection_rate"].to_numpy())
        gaps.insert(0, "k", k)
        out.append(gaps.reset_index())
    return pd.concat(out, ignore_index=True)


def check_reference(frame: pd.DataFrame, reference: str) -> None:
    """The reference group must be one of ``frame``'s groups: one clear line naming them otherwise."""
    groups = sorted(frame["group"].unique())
    if reference not in groups:
        raise ConfigError(f"reference group {reference!r} is not among the groups: {', '.join(map(str, groups))}",
                          parameter="reference", value=reference)  # fmt: skip


def _bootstrap_rabbi(a: np.ndarray, b: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of RABBI, resampling each group's scores with replacement."""
    if n_bootstrap == 0 or len(a) < 2 or len(b) < 2:
        return float("nan"), float("nan")
    values = np.array([rabbi(a[rng.integers(0, len(a), len(a))], b[rng.integers(0, len(b), len(b))]) for _ in range(n_bootstrap)])
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)


def bias_table(scored: pd.DataFrame, *, reference: str, n_bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Bias of each group's scores against the reference group (see the module docstring).

    ``scored``: one row per scored appearance (``group, qualified, score``).
    Returns one row per group other than the reference: ``group, n, mean_score,
    rabbi, rabbi_low, rabbi_high, rabbi_p_value, rabbi_qualified, delta, jsd, emd``.
    """
    usable = scored[np.isfinite(scored["score"].to_numpy(dtype=float))]
    check_reference(usable, reference)
    rng = np.random.default_rng(seed)
    ref = usable[usable["group"] == reference]
    b, b_q = ref["score"].to_numpy(dtype=float), ref.loc[ref["qualified"] == 1, "score"].to_numpy(dtype=float)
    lo, hi = float(usable["score"].min()), float(usable["score"].max())
    rows = []
    for group, members in usable.groupby("group", sort=True):
        if group == reference:
            continue
        a = members["score"].to_numpy(dtype=float)
        a_q = members.loc[members["qualified"] == 1, "score"].to_numpy(dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # identical scores: no p-value, reported as NaN
            test = rabbi_test(a, b)
        low, high = _bootstrap_rabbi(a, b, n_bootstrap, rng)
        rows.append({
            "group": group, "n": len(a), "mean_score": float(a.mean()), "rabbi": test.rabbi, "rabbi_low": low,
            "rabbi_high": high, "rabbi_p_value": test.pvalue,
            "rabbi_qualified": rabbi(a_q, b_q) if len(a_q) and len(b_q) else float("nan"),
            "delta": average_score_gap(a, b),
            "jsd": jensen_shannon_divergence(a, b, score_range=(lo, hi) if hi > lo else (lo, lo + 1.0)),
            "emd": earth_movers_distance(a, b),
        })  # fmt: skip
    return pd.DataFrame(rows)
