"""Numeric-calibration statistics from the tidy probability table.

Everything here is computed from two tables and no model: the problems
(:func:`problems_frame`) and the option probabilities
(:func:`folkscope.numeric.scoring.score_problems`). The formulas live in
:mod:`folkscope.metrics` (PM, WD, RE, behaviours, clustered intervals); this
module only groups and reshapes.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import (
    REFERENCE_BEHAVIOURS,
    classify_behaviour,
    clustered_mean_ci,
    mode_frequency,
    mode_probability,
    numeric_calibration_table,
)
from folkscope.numeric.frequencies import NumberFrequencies
from folkscope.numeric.problems import NumericProblem

__all__ = [
    "METRIC_COLUMNS",
    "behaviour_shares",
    "classify_cells",
    "count_number_frequencies",
    "frequency_effect",
    "distribution_summary",
    "heatmap_data",
    "option_matrices",
    "order_bias",
    "paired_differences",
    "problem_metrics",
    "problems_frame",
    "split_unscored",
    "summarize_metrics",
]

#: per-problem metric columns, as in :func:`folkscope.metrics.numeric_calibration_table`
METRIC_COLUMNS = ("probability_mass", "calibration_distance", "relative_entropy")


def problems_frame(problems: Sequence[NumericProblem]) -> pd.DataFrame:
    """One row per problem with the grouping columns the analyses use.

    Columns: ``problem_id, dataset, template_id, scale, cell, pair, first,
    second, n_options, count_first, count_second, number_1, number_2,
    instruction_id, text`` (``first``/``second``: the options listed first
    and second; ``number_1``/``number_2``: the two numbers the text shows,
    i.e. the counts, or the interval ends of a distributions problem).
    """

    def shown(p: NumericProblem, i: int) -> int:
        return int(p.numbers[i]) if len(p.numbers) == 2 else int(p.counts[i])

    return pd.DataFrame(
        {
            "problem_id": [p.id for p in problems],
            "dataset": [p.dataset for p in problems],
            "template_id": [p.template_id for p in problems],
            "scale": [p.scale for p in problems],
            "cell": [p.cell for p in problems],
            "pair": [p.pair for p in problems],
            "first": [p.options[0] for p in problems],
            "second": [p.options[1] for p in problems],
            "n_options": [len(p.options) for p in problems],
            "count_first": [p.counts[0] for p in problems],
            "count_second": [p.counts[1] for p in problems],
            "number_1": [shown(p, 0) for p in problems],
            "number_2": [shown(p, 1) for p in problems],
            "instruction_id": [p.instruction_id for p in problems],
            "text": [p.text for p in problems],
        }
    )


def option_matrices(probs: pd.DataFrame) -> list[tuple[list[str], np.ndarray, np.ndarray]]:
    """Split the tidy probability table into (problem ids, Π, P) per number of options.

    Rows keep the problems' first-appearance order; Π and P have shape
    (n_problems, n_options) with columns in listing order.
    """
    need = {"problem_id", "position", "ideal_prob", "model_prob"}
    if not need <= set(probs.columns):
        raise DataError(f"the probability table needs columns {sorted(need)}; got {sorted(probs.columns)}")
    ordered = probs.assign(_order=pd.factorize(probs["problem_id"])[0]).sort_values(
        ["_order", "position"], kind="stable"
    )
    sizes = ordered.groupby("_order", sort=True)["position"].transform("size")
    out = []
    for k in sorted(sizes.unique()):
        part = ordered[sizes == k]
        ids = part["problem_id"].iloc[::k].tolist()
        out.append((ids, part["model_prob"].to_numpy().reshape(-1, k), part["ideal_prob"].to_numpy().reshape(-1, k)))
    return out


def split_unscored(probs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Leave out problems with an option the backend could not score.

    A web-API backend may return NaN for an option whose variants fell
    outside its top-k list while the bound says they could matter (engine
    contract: ``ScoreResult.bound``). Such a problem has no defined Π, so the
    analyses drop it and the run reports how many (never silently).

    Returns
    -------
    (scored rows, ids of the problems left out)
    """
    bad = probs["model_prob"].isna()
    if not bad.any():
        return probs, []
    ids = list(dict.fromkeys(probs.loc[bad, "problem_id"]))
    return probs[~probs["problem_id"].isin(ids)].reset_index(drop=True), ids


def problem_metrics(probs: pd.DataFrame) -> pd.DataFrame:
    """PM, WD and RE of every problem (``numeric_calibration_table``), keyed by ``problem_id``."""
    frames = []
    for ids, pi, p in option_matrices(probs):
        table = numeric_calibration_table(pi, p)
        table.insert(0, "problem_id", ids)
        table["max_prob"] = pi.max(axis=1)
        table["argmax"] = pi.argmax(axis=1)
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def summarize_metrics(
    metrics: pd.DataFrame, clusters: Sequence[Any] | pd.Series, *, confidence: float = 0.95
) -> dict[str, dict[str, float | int]]:
    """Mean of each metric with a 95% interval clustered by ``clusters`` (the option pair).

    Problems where RE is undefined (PM = 0) are left out of RE's mean and
    counted in ``n_undefined``.
    """
    c = np.asarray(clusters)
    out: dict[str, dict[str, float | int]] = {}
    for name in METRIC_COLUMNS:
        values = metrics[name].to_numpy(dtype=float)
        ok = ~np.isnan(values)
        entry: dict[str, float | int] = {"n": int(ok.sum()), "n_undefined": int((~ok).sum())}
        if ok.any():
            ci = clustered_mean_ci(values[ok], c[ok], confidence=confidence)
            entry.update(mean=float(ci.mean), low=float(ci.low), high=float(ci.high), std_error=float(ci.std_error))
        else:
            entry.update(mean=float("nan"), low=float("nan"), high=float("nan"), std_error=float("nan"))
        out[name] = entry
    return out


def classify_cells(probs: pd.DataFrame, problems: pd.DataFrame, *, null_mass: float = 0.5) -> pd.DataFrame:
    """Reference behaviour of every grid cell (template x scale x ordered option pair).

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``cell, template_id, scale, first, second, n_problems,
        behaviour, rate`` (the winning behaviour's match rate), ``mean_pm``,
        one ``rate_<behaviour>`` column per reference behaviour and
        ``behaviour_renormalised`` (the behaviour of Π / PM, i.e. of how the
        mass on the options is split; problems with PM = 0 left out).
    """
    cell_of = problems.set_index("problem_id")
    rows = []
    for ids, pi, p in option_matrices(probs):
        meta = cell_of.loc[ids]
        codes, _ = pd.factorize(meta["cell"])
        order = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.diff(codes[order])) + 1
        for members in np.split(order, bounds):
            res = classify_behaviour(pi[members], p[members], null_mass=null_mass)
            first = meta.iloc[members[0]]
            row = {
                "cell": first["cell"],
                "template_id": first["template_id"],
                "scale": first["scale"],
                "first": first["first"],
                "second": first["second"],
                "n_problems": len(members),
                "behaviour": res.behaviour,
                "rate": res.rates[res.behaviour],
                "mean_pm": res.mean_probability_mass,
            }
            row.update({f"rate_{b}": res.rates[b] for b in REFERENCE_BEHAVIOURS})
            # how the cell splits the mass it does put on the options (Π / PM), which
            # stays informative for small models whose cells are all Null by mass
            sub, mass = pi[members], pi[members].sum(axis=1)
            keep = mass > 0
            row["behaviour_renormalised"] = (
                classify_behaviour(sub[keep] / mass[keep, None], p[members][keep], null_mass=0.0).behaviour
                if keep.any()
                else "null"
            )
            rows.append(row)
    return pd.DataFrame(rows)


def behaviour_shares(cells: pd.DataFrame, *, column: str = "behaviour") -> dict[str, float]:
    """Share of grid cells classified as each reference behaviour (all behaviours listed).

    ``column="behaviour_renormalised"`` gives the shares of the renormalised outputs Π / PM.
    """
    counts = cells[column].value_counts()
    n = max(len(cells), 1)
    return {b: float(counts.get(b, 0)) / n for b in REFERENCE_BEHAVIOURS}


def order_bias(probs: pd.DataFrame) -> tuple[dict[str, float], pd.DataFrame]:
    """Win rates by position (first vs second listed) and by option word.

    An option wins a two-option problem when it gets more probability than
    the other (a tie counts one half). With balanced counts a calibrated
    model's first-listed win rate is 0.5.

    Returns
    -------
    overall : dict
        ``first_win_rate`` and the number of two-option problems ``n``.
    by_word : pandas.DataFrame
        ``option, win_rate_first, win_rate_second, n_first, n_second``.
    """
    two = [(ids, pi) for ids, pi, _ in option_matrices(probs) if pi.shape[1] == 2]
    if not two:
        return {"first_win_rate": float("nan"), "n": 0}, pd.DataFrame(
            columns=["option", "win_rate_first", "win_rate_second", "n_first", "n_second"]
        )
    ids, pi = two[0]
    win_first = np.where(pi[:, 0] > pi[:, 1], 1.0, np.where(pi[:, 0] < pi[:, 1], 0.0, 0.5))
    options = (
        probs.drop_duplicates(["problem_id", "position"])
        .pivot(index="problem_id", columns="position", values="option")
        .loc[ids]
    )
    long = pd.DataFrame(
        {
            "option": np.concatenate([options[0].to_numpy(), options[1].to_numpy()]),
            "listed": ["first"] * len(ids) + ["second"] * len(ids),
            "win": np.concatenate([win_first, 1.0 - win_first]),
        }
    )
    agg = long.pivot_table(index="option", columns="listed", values="win", aggfunc=["mean", "size"])
    by_word = pd.DataFrame(
        {
            "option": agg.index,
            "win_rate_first": agg[("mean", "first")].to_numpy(),
            "win_rate_second": agg[("mean", "second")].to_numpy(),
            "n_first": agg[("size", "first")].to_numpy(),
            "n_second": agg[("size", "second")].to_numpy(),
        }
    ).reset_index(drop=True)
    return {"first_win_rate": float(win_first.mean()), "n": len(ids)}, by_word


def heatmap_data(cells: pd.DataFrame, *, column: str = "behaviour") -> pd.DataFrame:
    """Ordered option pairs (first x second) with their dominant behaviour.

    Cells of the same ordered pair (other templates and scales) are pooled:
    ``behaviour`` is the most common label in ``column`` (ties: reference
    order), ``share`` the share of cells with it and ``rate`` their mean match
    rate (NaN for ``column="behaviour_renormalised"``, which has no rate).
    """
    rows = []
    for (first, second), g in cells.groupby(["first", "second"], sort=True):
        counts = g[column].value_counts()
        top = max(counts.index, key=lambda b: (counts[b], -REFERENCE_BEHAVIOURS.index(b)))
        rate = float(g.loc[g[column] == top, "rate"].mean()) if column == "behaviour" else np.nan
        rows.append(
            {
                "first": first,
                "second": second,
                "behaviour": top,
                "share": float(counts[top] / len(g)),
                "rate": rate,
                "n_cells": len(g),
            }
        )
    return pd.DataFrame(rows, columns=["first", "second", "behaviour", "share", "rate", "n_cells"])


def paired_differences(
    base: pd.DataFrame, chat: pd.DataFrame, clusters: pd.Series, *, confidence: float = 0.95
) -> dict[str, dict[str, float | int]]:
    """Chat minus base PM, WD and RE per problem, with paired clustered intervals.

    ``base`` and ``chat`` are :func:`problem_metrics` tables of the same
    problems; ``clusters`` maps ``problem_id`` to the option pair.
    """
    merged = base.merge(chat, on="problem_id", suffixes=("_base", "_chat"))
    if len(merged) != len(base) or len(merged) != len(chat):
        raise DataError(
            "paired differences need the same problems in both tables; "
            f"{len(base)} base, {len(chat)} chat, {len(merged)} shared"
        )
    diffs = pd.DataFrame({m: merged[f"{m}_chat"] - merged[f"{m}_base"] for m in METRIC_COLUMNS})
    return summarize_metrics(diffs, clusters.loc[merged["problem_id"]].to_numpy(), confidence=confidence)


def distribution_summary(probs: pd.DataFrame, problems: pd.DataFrame) -> dict[str, Any]:
    """Distributions extras: mode probability, mode frequency by interval shape, modal digits.

    The shape of an interval is its template and number of options (the grid
    cell), so option positions line up within a group; ``uniform_rate`` is the
    mode frequency a perfectly uniform choice would approach (mean 1/k).
    ``mode_last_digit`` says which numbers the model favours: for each last
    digit, the share of problems whose most likely option ends with it
    (``mode_share``) against the share a uniform choice among the valid
    options would give (``uniform_share``, the mean fraction of a problem's
    options ending with it); ``ratio`` > 1 means over-represented.
    """
    cell_of = problems.set_index("problem_id")["cell"]
    mode_p, mode_f, weights, uniform = [], [], [], []
    mode_digit: Counter[int] = Counter()
    uniform_digit = np.zeros(10)
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMetricWarning)
        for ids, pi, _ in option_matrices(probs):
            mode_p.append(mode_probability(pi))
            mode_f.append(mode_frequency(pi, cell_of.loc[ids].to_numpy()))
            weights.append(len(ids))
            uniform.append(1.0 / pi.shape[1])
    options = (
        probs.sort_values(["problem_id", "position"], kind="stable")
        .groupby("problem_id", sort=False)["option"]
        .agg(list)
    )
    modes = problem_metrics(probs).set_index("problem_id")["argmax"]
    for pid, opts in options.items():
        digits = [int(o[-1]) for o in opts if o and o[-1].isdigit()]
        if len(digits) != len(opts):
            continue  # not numeric options: no digit statistics
        mode_digit[digits[int(modes[pid])]] += 1
        for d in digits:
            uniform_digit[d] += 1.0 / len(digits)
        n += 1
    w = np.asarray(weights, dtype=float)
    by_digit = (
        {
            str(d): {
                "mode_share": mode_digit[d] / n,
                "uniform_share": uniform_digit[d] / n,
                "ratio": (mode_digit[d] / uniform_digit[d]) if uniform_digit[d] else float("nan"),
            }
            for d in range(10)
        }
        if n
        else {}
    )
    return {
        "mode_probability": float(np.average(mode_p, weights=w)),
        "mode_frequency": float(np.average(mode_f, weights=w)),
        "uniform_rate": float(np.average(uniform, weights=w)),
        "mode_last_digit": by_digit,
    }


def count_number_frequencies(texts: Iterable[str]) -> dict[int, int]:
    """A corpus counter: how often each integer is written (as digits) in ``texts``.

    Examples
    --------
    >>> count_number_frequencies(["7 cats and 12 dogs", "12 more"])
    {7: 1, 12: 2}
    """
    counts: Counter[int] = Counter()
    for text in texts:
        counts.update(int(m) for m in re.findall(r"(?<![\d.])\d+(?![\d.])", text))
    return dict(sorted(counts.items()))


def frequency_effect(
    metrics: pd.DataFrame,
    problems: pd.DataFrame,
    frequency: NumberFrequencies | Mapping[int, float] | Callable[[int], float],
    *,
    metric: str = "calibration_distance",
    measured_only: bool = False,
) -> dict[str, float | int]:
    """Spearman correlation between a metric and the frequency gap log|Freq(N1) - Freq(N2)|.

    N1 and N2 are the two numbers the text shows (``number_1``/``number_2``
    of :func:`problems_frame`: the counts, or a distributions interval's
    ends); older frames without them fall back to the counts.

    Parameters
    ----------
    metrics : pandas.DataFrame
        :func:`problem_metrics` table.
    problems : pandas.DataFrame
        :func:`problems_frame` table.
    frequency : NumberFrequencies, mapping or callable
        A loaded table (:func:`~folkscope.numeric.frequencies.load_number_frequencies`;
        numbers it lacks leave their problems out, counted in ``n_missing``),
        a plain mapping (numbers missing from it count 0) or a function,
        e.g. built from :func:`count_number_frequencies`.
    metric : str, default "calibration_distance"
    measured_only : bool, default False
        With a :class:`NumberFrequencies`, use only problems whose two
        numbers were both measured (not estimated); the others are counted
        in ``n_estimated``.

    Returns
    -------
    dict
        ``spearman_rho, p_value, n`` (problems used), ``n_excluded`` (left out
        in all), ``n_equal`` (two equally frequent numbers: the log gap is
        undefined), ``n_missing`` and ``n_estimated``.
    """
    from scipy import stats

    table = frequency if isinstance(frequency, NumberFrequencies) else None

    def freq(n: float) -> float:
        key = int(n)
        if table is not None:
            value = table.get(key)
            return float("nan") if value is None else float(value)
        return float(frequency(key) if callable(frequency) else frequency.get(key, 0.0))

    first, second = (
        ("number_1", "number_2") if {"number_1", "number_2"} <= set(problems) else ("count_first", "count_second")
    )
    merged = metrics[["problem_id", metric]].merge(problems[["problem_id", first, second]], on="problem_id")
    a, b = merged[first].to_numpy(), merged[second].to_numpy()
    fa = np.array([freq(x) for x in a], dtype=float)
    fb = np.array([freq(x) for x in b], dtype=float)
    missing = np.isnan(fa) | np.isnan(fb)
    estimated = np.zeros(len(merged), dtype=bool)
    if table is not None and measured_only:
        estimated = (
            ~np.array([int(x) in table.measured and int(y) in table.measured for x, y in zip(a, b)], dtype=bool)
            & ~missing
        )
    with np.errstate(invalid="ignore"):
        gap = np.abs(fa - fb)
    values = merged[metric].to_numpy(dtype=float)
    equal = ~missing & ~estimated & (gap == 0)
    ok = ~missing & ~estimated & ~equal & ~np.isnan(values)
    out: dict[str, float | int] = {
        "n": int(ok.sum()),
        "n_excluded": int((~ok).sum()),
        "n_equal": int(equal.sum()),
        "n_missing": int(missing.sum()),
        "n_estimated": int(estimated.sum()),
    }
    if ok.sum() < 3 or np.ptp(values[ok]) == 0 or np.ptp(gap[ok]) == 0:
        out.update(spearman_rho=float("nan"), p_value=float("nan"))
        return out
    res = stats.spearmanr(values[ok], np.log(gap[ok]))
    out.update(spearman_rho=float(res.statistic), p_value=float(res.pvalue))
    return out
