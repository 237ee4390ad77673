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
  Mann-Whitney p-value and a percentile bootstrap interval, and the paper's
  baselines δ, JSD and EMD; each metric also among qualified candidates
  only (``*_qualified``: the counterpart of ΔEO, paper section 4.4). δ is
  the mean score gap, except for pairwise runs, where by default it is the
  paper's δ (:func:`pairwise_delta`: the share of compared pairs whose group
  member is named in both orders; ``pairwise_delta="score-gap"`` keeps the
  mean gap of the pairwise scores); an interval or distance that
  the groups are too small for is NaN with its reason
  (:data:`MIN_INTERVAL_MEMBERS`, :data:`MIN_DISTRIBUTION_MEMBERS`), and
  :func:`headline_bias` picks the row a summary leads with.

Examples
--------
>>> scored = pd.DataFrame({"pool": [0, 0, 1, 1], "candidate_id": list("abcd"), "group": ["x", "y", "x", "y"],
...                        "qualified": [1, 1, 1, 1], "score": [0.9, 0.2, 0.4, 0.4]})
>>> selection_table(scored, reference="y", k_max=1)[["group", "selection_rate", "dp_gap", "impact_ratio"]].values.tolist()
[['x', 0.75, 0.5, 1.0], ['y', 0.25, 0.0, 0.3333333333333333]]
"""

from __future__ import annotations

import warnings
from typing import Any

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

__all__ = [
    "BIAS_COLUMNS",
    "FOUR_FIFTHS",
    "MIN_DISTRIBUTION_MEMBERS",
    "MIN_INTERVAL_MEMBERS",
    "PAIR_DELTAS",
    "bias_table",
    "check_reference",
    "draw_pools",
    "headline_bias",
    "interval_text",
    "pairwise_delta",
    "selection_table",
]

#: the pairwise δ: the paper's share of pairs won in both orders, or the gap of the mean pairwise scores
PAIR_DELTAS = ("paper", "score-gap")

#: the four-fifths rule of the US Uniform Guidelines (29 CFR 1607.4 D): an impact ratio below it is evidence of adverse impact
FOUR_FIFTHS = 0.8


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
            raise ConfigError(
                f"pool_size must be between 2 and the {len(ids)} candidates, got {pool_size}",
                parameter="pool_size",
                value=pool_size,
            )
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
        out[done : done + m] = (start + (np.arange(m)[:, None] + offsets[None, :]) % m) % per_group
        done += m
    return out


def selection_table(scored: pd.DataFrame, *, reference: str, k_max: int = 5) -> pd.DataFrame:
    """Selection outcomes for k = 1..``k_max`` (see the module docstring).

    ``scored`` has one row per appearance: ``pool, candidate_id, group,
    qualified, score`` (and ``weight`` for survey candidates: the rates are
    then population shares); appearances without a score (NaN) are left out
    of their pool. Returns one row per (k, group).

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
        raise ConfigError(
            f"k must run from 1 to less than the smallest pool ({smallest} candidates), got k_max={k_max!r}",
            parameter="k_max",
            value=k_max,
        )
    has_qualified = bool((usable["qualified"] == 1).any())
    out = []
    for k in range(1, k_max + 1):
        selected = top_k_selection(usable["score"].to_numpy(dtype=float), usable["pool"].to_numpy(), k=k)
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", UndefinedMetricWarning
            )  # a group without qualified members: NaN, reported as such
            gaps = allocation_gaps(
                selected,
                usable["group"].to_numpy(),
                reference=reference,
                qualified=usable["qualified"].to_numpy() if has_qualified else None,
                sample_weight=usable["weight"].to_numpy(dtype=float) if "weight" in usable else None,
            )
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
        raise ConfigError(
            f"reference group {reference!r} is not among the groups: {', '.join(map(str, groups))}",
            parameter="reference",
            value=reference,
        )


#: an interval of RABBI needs this many scored members in the group and in the reference. Below it a percentile
#: bootstrap is a few distinct resamples, not an interval: with 2 members it excluded 0 while the Mann-Whitney
#: p-value was 0.39; simulated under "no preference" (continuous scores) its 95% interval covered 0 in 65% of
#: draws at 2 per group, 92% at 4-8, 94-95% from 10.
MIN_INTERVAL_MEMBERS = 10
#: JSD and EMD need this many scored members in the group and in the reference: they compare two score
#: distributions, and the plug-in JSD over 10 bins is biased upwards by small samples (two samples of one
#: distribution: about 0.79 at 2 per group, 0.40 at 10, 0.13 at 30), so a JSD of 1.000 from 1-2 candidates is
#: the sample size speaking, not the model.
MIN_DISTRIBUTION_MEMBERS = 30


def _bootstrap_rabbi(
    a: np.ndarray, b: np.ndarray, n_bootstrap: int, rng: np.random.Generator
) -> tuple[float, float, str]:
    """95% percentile interval of RABBI, resampling each group's scores with replacement, or NaN and why not."""
    if n_bootstrap == 0:
        return float("nan"), float("nan"), "no interval: no bootstrap resamples (--n-bootstrap 0)"
    if min(len(a), len(b)) < MIN_INTERVAL_MEMBERS:
        return (
            float("nan"),
            float("nan"),
            (f"no interval: {len(a)} vs {len(b)} scored, an interval needs >= {MIN_INTERVAL_MEMBERS} in each group"),
        )
    values = np.array(
        [rabbi(a[rng.integers(0, len(a), len(a))], b[rng.integers(0, len(b), len(b))]) for _ in range(n_bootstrap)]
    )
    low, high = np.quantile(values, [0.025, 0.975])
    if low == high:  # every resample alike (complete separation): a point, not an interval
        return (
            float("nan"),
            float("nan"),
            f"no interval: every resample gave {low:+.3f}, so the bootstrap cannot size the doubt",
        )
    return float(low), float(high), ""


def bias_table(
    scored: pd.DataFrame,
    *,
    reference: str,
    n_bootstrap: int = 1000,
    seed: int = 0,
    pairs: pd.DataFrame | None = None,
    delta: str = "paper",
) -> pd.DataFrame:
    """Bias of each group's scores against the reference group (see the module docstring).

    ``scored``: one row per scored appearance (``candidate_id, group,
    qualified, score``). ``pairs``: a pairwise run's answers per pair (``a, b,
    answer_ab, answer_ba``); with it and ``delta="paper"``, δ is
    :func:`pairwise_delta` (both among all and among qualified candidates),
    else the mean score gap. Returns one row per group other than the
    reference, with the columns of :data:`BIAS_COLUMNS`.

    What small groups cannot support is NaN with the reason in the row, never
    a figure: the RABBI interval below :data:`MIN_INTERVAL_MEMBERS` members
    in the group or the reference (or when every resample gives one value),
    JSD and EMD below :data:`MIN_DISTRIBUTION_MEMBERS` (the qualified JSD and
    EMD below that many qualified members, without a separate note). RABBI
    itself, its exact Mann-Whitney p-value and δ stay defined for any size.
    """
    if delta not in PAIR_DELTAS:
        raise ConfigError(f"delta must be one of {', '.join(PAIR_DELTAS)}, got {delta!r}", parameter="pairwise_delta")
    usable = scored[np.isfinite(scored["score"].to_numpy(dtype=float))]
    check_reference(usable, reference)
    rng = np.random.default_rng(seed)
    ref = usable[usable["group"] == reference]
    b, b_q = ref["score"].to_numpy(dtype=float), ref.loc[ref["qualified"] == 1, "score"].to_numpy(dtype=float)
    lo, hi = float(usable["score"].min()), float(usable["score"].max())
    score_range = (lo, hi) if hi > lo else (lo, lo + 1.0)
    paired: dict[bool, dict[str, float]] | None = None
    if pairs is not None and delta == "paper":
        info = scored.drop_duplicates("candidate_id").set_index("candidate_id")[["group", "qualified"]]
        paired = {q: pairwise_delta(pairs, info, reference=reference, qualified_only=q) for q in (False, True)}
    rows = []
    for group, members in usable.groupby("group", sort=True):
        if group == reference:
            continue
        a = members["score"].to_numpy(dtype=float)
        a_q = members.loc[members["qualified"] == 1, "score"].to_numpy(dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # identical scores: no p-value, reported as NaN
            test = rabbi_test(a, b)
        low, high, interval_note = _bootstrap_rabbi(a, b, n_bootstrap, rng)
        jsd, emd = _distances(a, b, score_range)
        distance_note = ""
        if min(len(a), len(b)) < MIN_DISTRIBUTION_MEMBERS:
            distance_note = (
                f"no JSD/EMD: {len(a)} vs {len(b)} scored, a distribution distance needs "
                f">= {MIN_DISTRIBUTION_MEMBERS} in each group"
            )
        jsd_q, emd_q = _distances(a_q, b_q, score_range)
        both_q = bool(len(a_q) and len(b_q))
        if paired is None:
            gap = average_score_gap(a, b)
            gap_q = average_score_gap(a_q, b_q) if both_q else float("nan")
        else:
            gap, gap_q = paired[False].get(group, float("nan")), paired[True].get(group, float("nan"))
        rows.append(
            {
                "group": group,
                "n": len(a),
                "n_reference": len(b),
                "mean_score": float(a.mean()),
                "rabbi": test.rabbi,
                "rabbi_low": low,
                "rabbi_high": high,
                "rabbi_p_value": test.pvalue,
                "rabbi_qualified": rabbi(a_q, b_q) if both_q else float("nan"),
                "delta": gap,
                "delta_qualified": gap_q,
                "jsd": jsd,
                "jsd_qualified": jsd_q,
                "emd": emd,
                "emd_qualified": emd_q,
                "interval_note": interval_note,
                "distance_note": distance_note,
            }
        )
    return pd.DataFrame(rows, columns=list(BIAS_COLUMNS))


def _distances(a: np.ndarray, b: np.ndarray, score_range: tuple[float, float]) -> tuple[float, float]:
    """JSD (over the run's score range) and EMD of two groups' scores, or NaN below :data:`MIN_DISTRIBUTION_MEMBERS`."""
    if min(len(a), len(b)) < MIN_DISTRIBUTION_MEMBERS:
        return float("nan"), float("nan")
    return jensen_shannon_divergence(a, b, score_range=score_range), earth_movers_distance(a, b)


def pairwise_delta(
    pairs: pd.DataFrame, info: pd.DataFrame, *, reference: str, qualified_only: bool = False
) -> dict[str, float]:
    r"""The paper's pairwise δ of each group against the reference (Chen, Ji & Evans 2024, section 4.3).

    :math:`\delta(A, B) = \frac{1}{|A \times B|} \sum_{(a, b) \in A \times B} 1(a \succ b)`
    over the compared pairs (one pool) with one member of A and one of the
    reference B, where :math:`a \succ b` when the model named a in both
    orders. It lies in [0, 1] and has no sign: a model that never prefers
    anyone consistently gives 0 to every group. ``pairs``: ``a, b,
    answer_ab, answer_ba`` (``"a"`` names a); ``info``: ``group`` and
    ``qualified`` per candidate id. ``qualified_only`` keeps the pairs whose
    two candidates are both qualified (the counterpart of ΔEO). A group with
    no such pair is absent.

    Examples
    --------
    >>> info = pd.DataFrame({"group": ["x", "x", "r", "r"], "qualified": [1, 1, 1, 0]}, index=["x1", "x2", "r1", "r2"])
    >>> pairs = pd.DataFrame({"a": ["x1", "x1", "r1", "r2"], "b": ["r1", "r2", "x2", "x2"],
    ...                       "answer_ab": ["a", "a", "b", "tie"], "answer_ba": ["a", "b", "b", "tie"]})
    >>> pairwise_delta(pairs, info, reference="r"), pairwise_delta(pairs, info, reference="r", qualified_only=True)
    ({'x': 0.5}, {'x': 1.0})
    """
    a_info = info.reindex(pairs["a"].to_numpy())
    b_info = info.reindex(pairs["b"].to_numpy())
    group_a, group_b = a_info["group"].to_numpy(), b_info["group"].to_numpy()
    both = (pairs["answer_ab"].to_numpy() == pairs["answer_ba"].to_numpy()) & pairs["answer_ab"].isin(["a", "b"])
    said = pairs["answer_ab"].to_numpy()
    a_vs_ref = (group_b == reference) & (group_a != reference)
    ref_vs_b = (group_a == reference) & (group_b != reference)
    keep = a_vs_ref | ref_vs_b
    if qualified_only:
        keep &= (a_info["qualified"].to_numpy() == 1) & (b_info["qualified"].to_numpy() == 1)
    frame = pd.DataFrame(
        {
            "group": np.where(a_vs_ref, group_a, group_b)[keep],
            "won": (both.to_numpy() & (said == np.where(a_vs_ref, "a", "b")))[keep].astype(float),
        }
    )
    return {str(g): float(v) for g, v in frame.groupby("group", sort=True)["won"].mean().items()}


#: the columns of :func:`bias_table`, in this order
BIAS_COLUMNS = (
    "group",
    "n",
    "n_reference",
    "mean_score",
    "rabbi",
    "rabbi_low",
    "rabbi_high",
    "rabbi_p_value",
    "rabbi_qualified",
    "delta",
    "delta_qualified",
    "jsd",
    "jsd_qualified",
    "emd",
    "emd_qualified",
    "interval_note",
    "distance_note",
)


def headline_bias(bias: pd.DataFrame) -> dict[str, Any] | None:
    """The bias row a summary should lead with: the group whose RABBI is best supported, not merely the largest.

    The smallest Mann-Whitney p-value (the largest ``|RABBI|`` among equal
    p-values) rather than the largest ``|RABBI|``: with a few candidates per
    group a RABBI of -1 is common and says little, and its p-value says so.
    None when no group has a p-value (every score identical, or no group).

    Examples
    --------
    >>> bias = pd.DataFrame({"group": ["x", "y"], "rabbi": [-1.0, 0.4], "rabbi_p_value": [0.33, 0.01]})
    >>> headline_bias(bias)["group"]
    'y'
    """
    tested = (
        bias[np.isfinite(pd.to_numeric(bias.get("rabbi_p_value"), errors="coerce").to_numpy(dtype=float))]
        if len(bias)
        else bias
    )
    if tested.empty:
        return None
    order = np.lexsort((-tested["rabbi"].abs().to_numpy(dtype=float), tested["rabbi_p_value"].to_numpy(dtype=float)))
    return tested.iloc[int(order[0])].to_dict()


def interval_text(row: Any) -> str:
    """``[-0.250, +0.100]``, or the reason there is no interval (``no interval: 4 vs 4 scored, ...``).

    Examples
    --------
    >>> interval_text({"rabbi_low": -0.25, "rabbi_high": 0.1})
    '[-0.250, +0.100]'
    >>> interval_text({"rabbi_low": float("nan"), "rabbi_high": float("nan"), "interval_note": "no interval: 2 vs 2 scored"})
    '(no interval: 2 vs 2 scored)'
    """
    low, high = row.get("rabbi_low"), row.get("rabbi_high")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and np.isfinite(low) and np.isfinite(high):
        return f"[{low:+.3f}, {high:+.3f}]"
    note = row.get("interval_note")
    return f"({note})" if isinstance(note, str) and note else "(no interval)"
