"""Paired differences of two runs over the same units, with paired bootstrap intervals.

Why paired: two runs scored on the same rows (problems, pools, ...) share
those rows' sampling noise. Whether B beats A is a question about the
difference, and the difference of two metrics computed on the same resample
varies much less than either metric does; reading it off two separate
intervals (do they overlap?) is wrong in both directions.

How: a metric is given as ``value(side, counts)``, the metric of run A
(``side=0``) or B (``side=1``) when unit ``i`` counts ``counts[i]`` times.
Each replicate draws one resample of the units with
:func:`folkscope.metrics.bootstrap_ci` (rows, or whole clusters such as
option pairs or pools) and both runs' metrics are computed on it, as
multiplicities (integer weights equal repeated rows in every folkscope
metric, which is how the risk part bootstraps too). The interval is the
percentile interval of the B - A differences. Every metric is bootstrapped
with the same seed, so all of them see the same resamples.

Each part's comparer (its registry ``compare`` entry point) gets the
:class:`Options` and returns a :class:`PartComparison` built with these.

Examples
--------
Two runs' squared errors on four rows; Brier of B minus Brier of A:

>>> import numpy as np
>>> err = np.array([[0.04, 0.09, 0.01, 0.16], [0.01, 0.04, 0.01, 0.09]])
>>> brier = PairedMetric("brier", "Brier", "lower", lambda side, c: float(np.average(err[side], weights=c)))
>>> table = paired_differences([brier], 4, replicates=200, seed=0)
>>> round(float(table.loc[0, "difference"]), 4), table.loc[0, "favours"]
(-0.0375, 'B')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from folkscope._json import read_json
from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics import bootstrap_ci
from folkscope.runs import read_manifest

__all__ = [
    "BETTER",
    "COLUMNS",
    "Options",
    "PairedMetric",
    "PartComparison",
    "favours",
    "metrics_json",
    "paired_differences",
    "replicate_row",
    "top_moved",
]

#: how a metric's value reads: bigger is better, smaller is better, closest to 0 is
#: best (signed measures such as SCE or RABBI), or neither (a level, such as a mean score)
BETTER = ("higher", "lower", "zero", "none")

#: columns of every differences table, in order
COLUMNS = (
    "scope",
    "metric",
    "title",
    "a",
    "b",
    "difference",
    "low",
    "high",
    "std_error",
    "n_units",
    "n_undefined",
    "better",
    "favours",
)


@dataclass(frozen=True)
class PairedMetric:
    """One metric of a paired comparison.

    Attributes
    ----------
    key : str
        Stable name (``"roc_auc"``, ``"calibration_distance"``).
    title : str
        How tables and the console name it (``"AUC"``).
    better : {"higher", "lower", "zero", "none"}
        See :data:`BETTER`.
    value : callable
        ``value(side, counts) -> float``: the metric of run A (``side=0``) or
        B (``side=1``) with unit ``i`` counted ``counts[i]`` times (an array of
        shape (n_units,), all ones for the runs as they are). NaN where undefined.
    scope : str, default "overall"
        What the metric covers (``"overall"``, a group, a task).
    """

    key: str
    title: str
    better: str
    value: Callable[[int, NDArray[np.float64]], float]
    scope: str = "overall"

    def __post_init__(self) -> None:
        if self.better not in BETTER:
            raise ConfigError(
                f"better must be one of {', '.join(BETTER)}; got {self.better!r}", parameter="better", value=self.better
            )


def favours(better: str, low: float, high: float, abs_low: float = np.nan, abs_high: float = np.nan) -> str:
    """Which run the interval says is better: ``"A"``, ``"B"``, ``"neither"`` (0 inside it) or ``"n/a"``.

    ``low, high`` bound B - A; for a metric best at zero, ``abs_low, abs_high``
    bound |B| - |A| instead (B is better when that is surely negative).

    Examples
    --------
    >>> favours("higher", 0.01, 0.05), favours("lower", 0.01, 0.05), favours("higher", -0.01, 0.05)
    ('B', 'A', 'neither')
    >>> favours("zero", -0.3, -0.1, abs_low=-0.3, abs_high=-0.1), favours("none", 0.1, 0.2)
    ('B', 'n/a')
    """
    if better == "zero":
        better, low, high = "lower", abs_low, abs_high
    if better == "none" or not (np.isfinite(low) and np.isfinite(high)):
        return "n/a"
    if low > 0 or high < 0:
        b_bigger = low > 0
        return "B" if b_bigger == (better == "higher") else "A"
    return "neither"


def _bootstrap(
    metric: Callable[[NDArray[np.intp]], float],
    n_units: int,
    clusters: ArrayLike | None,
    replicates: int,
    seed: int,
    confidence: float,
) -> tuple[float, float, float, int]:
    """``(low, high, std_error, n_undefined)`` of ``metric(resampled unit indices)``; NaN resamples counted, not warned."""
    if replicates == 0:
        return np.nan, np.nan, np.nan, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # reported as n_undefined
        res = bootstrap_ci(
            metric,
            np.arange(n_units),
            n_resamples=replicates,
            confidence=confidence,
            clusters=clusters,
            random_state=seed,
        )
    return res.low, res.high, res.std_error, res.n_undefined


def _quiet(value: Callable[[int, NDArray[np.float64]], float], side: int, counts: NDArray[np.float64]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # an undefined metric is NaN in the table
        return float(value(side, counts))


def paired_differences(
    metrics: Sequence[PairedMetric],
    n_units: int,
    *,
    clusters: ArrayLike | None = None,
    replicates: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """B minus A of each metric with its paired percentile bootstrap interval.

    Parameters
    ----------
    metrics : sequence of PairedMetric
    n_units : int
        Units both runs scored (rows, problems, appearances).
    clusters : array-like of shape (n_units,), optional
        Resample whole clusters (option pairs, pools) rather than units.
    replicates : int, default 1000
        Bootstrap resamples; 0 gives point differences without intervals.
    seed : int, default 0
    confidence : float in (0, 1), default 0.95

    Returns
    -------
    pandas.DataFrame
        One row per metric with :data:`COLUMNS`: ``a``, ``b`` and
        ``difference`` (B - A) on the units as they are, ``low``/``high``
        the interval of the difference, ``n_undefined`` the resamples where
        it was undefined (left out of the interval), ``favours`` from
        :func:`favours`. Identical runs give 0 with a zero-width interval.
    """
    if isinstance(replicates, bool) or not isinstance(replicates, (int, np.integer)) or replicates < 0:
        raise ConfigError(
            f"replicates must be an integer >= 0; got {replicates!r}", parameter="replicates", value=replicates
        )
    ones = np.ones(n_units)
    rows: list[dict[str, Any]] = []
    for m in metrics:
        a, b = _quiet(m.value, 0, ones), _quiet(m.value, 1, ones)

        def diff(idx: NDArray[np.intp], m: PairedMetric = m) -> float:
            counts = np.bincount(idx, minlength=n_units).astype(np.float64)
            return m.value(1, counts) - m.value(0, counts)

        def abs_diff(idx: NDArray[np.intp], m: PairedMetric = m) -> float:
            counts = np.bincount(idx, minlength=n_units).astype(np.float64)
            return abs(m.value(1, counts)) - abs(m.value(0, counts))

        low, high, se, n_undefined = _bootstrap(diff, n_units, clusters, int(replicates), seed, confidence)
        abs_low = abs_high = np.nan
        if m.better == "zero":
            abs_low, abs_high, _, _ = _bootstrap(abs_diff, n_units, clusters, int(replicates), seed, confidence)
        rows.append(
            {
                "scope": m.scope,
                "metric": m.key,
                "title": m.title,
                "a": a,
                "b": b,
                "difference": b - a,
                "low": low,
                "high": high,
                "std_error": se,
                "n_units": n_units,
                "n_undefined": n_undefined,
                "better": m.better,
                "favours": favours(m.better, low, high, abs_low, abs_high),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def replicate_row(
    key: str,
    title: str,
    better: str,
    a: float,
    b: float,
    draws_a: ArrayLike,
    draws_b: ArrayLike,
    *,
    scope: str = "overall",
    n_units: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """A differences-table row from replicates drawn elsewhere (paired: ``draws_a[r]`` and ``draws_b[r]`` share draw r).

    For resampling schemes other than rows, such as redrawing a survey's
    truth from its sampling noise; the interval is the same percentile
    interval as :func:`paired_differences` gives.

    Examples
    --------
    >>> row = replicate_row("distance", "Distance", "lower", 0.5, 0.4, [0.5, 0.6, 0.4], [0.4, 0.5, 0.3])
    >>> round(row["difference"], 6), round(row["low"], 6), round(row["high"], 6), row["favours"]
    (-0.1, -0.1, -0.1, 'B')
    """
    da, db = np.asarray(draws_a, dtype=np.float64), np.asarray(draws_b, dtype=np.float64)
    diffs, abs_diffs = db - da, np.abs(db) - np.abs(da)
    ok = np.isfinite(diffs)
    alpha = 1.0 - confidence
    low = high = se = abs_low = abs_high = np.nan
    if ok.any():
        low, high = (float(v) for v in np.quantile(diffs[ok], [alpha / 2, 1 - alpha / 2]))
        abs_low, abs_high = (float(v) for v in np.quantile(abs_diffs[ok], [alpha / 2, 1 - alpha / 2]))
        se = float(np.std(diffs[ok], ddof=1)) if ok.sum() > 1 else np.nan
    return {
        "scope": scope,
        "metric": key,
        "title": title,
        "a": float(a),
        "b": float(b),
        "difference": float(b) - float(a),
        "low": low,
        "high": high,
        "std_error": se,
        "n_units": n_units,
        "n_undefined": int((~ok).sum()),
        "better": better,
        "favours": favours(better, low, high, abs_low, abs_high),
    }


# ----------------------------------------------------------------------------- what a part's comparer gets and returns
@dataclass(frozen=True)
class Options:
    """Settings of one comparison (see :func:`folkscope.report.compare.compare_runs`), handed to the part's comparer."""

    replicates: int = 1000
    seed: int = 0
    confidence: float = 0.95
    top: int = 10
    shared_rows: bool = False
    survey_weighted: bool = False


@dataclass(frozen=True)
class PartComparison:
    """What a part's comparer returns: the tables and what the console leads with."""

    unit: str
    n_a: int
    n_b: int
    n_shared: int
    differences: pd.DataFrame
    moved: pd.DataFrame
    headline: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()
    moved_unit: str = ""
    """What a row of ``moved`` is, when not a ``unit`` (epidemiology: a condition of a task)."""


def metrics_json(folder: Path) -> dict[str, Any]:
    """A run's ``metrics.json`` (a declared table, but JSON, so not :func:`read_table`'s)."""
    path = folder / read_manifest(folder).tables["metrics"]["file"]
    if not path.is_file():
        raise DataError(f"{folder} has no {path.name}; run `folkscope rescore {folder}` first")
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"{path} does not hold a run's metrics; the run folder is damaged, run it again")
    return data


def top_moved(frame: pd.DataFrame, by: pd.Series, top: int) -> pd.DataFrame:
    """The ``top`` rows with the largest ``by`` (NaN last), ties in key order."""
    order = by.abs().fillna(-1.0).to_numpy()
    return frame.iloc[np.argsort(-order, kind="stable")[:top]].reset_index(drop=True)
