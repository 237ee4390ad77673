"""Ground truth of a low-dimensional task and the references its score is measured between.

- truth: per condition level x, the weighted share of each outcome level
  (``weights`` column; the sample's own shares where the dataset is declared
  unweighted), and the condition's population share;
- best reference: the survey's own sampling noise, the ``quantile`` (0.975)
  of the task distance between ``n_resamples`` multinomial redraws and the
  truth (:func:`folkscope.metrics.best_reference_distance`); with weights each
  condition draws its Kish effective sample size (Σw)² / Σw², the number of
  unweighted answers that would be as noisy;
- worst reference: the uniform distribution over the answers;
- mean baseline: the marginal distribution predicted for every condition.

Examples
--------
>>> frame = pd.DataFrame({"y": [1, 1, 0, 0], "x": [1, 1, 1, 2], "w": [1.0, 3.0, 4.0, 2.0]})
>>> from folkscope.epidemiology.tasks import Level, Task, Variable
>>> task = Task("t", "d", "p", "w", Variable("y", (Level("no", 0), Level("yes", 1))),
...             Variable("x", (Level("one", 1), Level("two", 2))), "{condition}", "{condition}{outcome}", {})
>>> truth = task_truth(task, frame)
>>> truth.dist.tolist(), truth.shares.tolist()
([[0.5, 0.5], [1.0, 0.0]], [0.8, 0.2])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.epidemiology.tasks import Task
from folkscope.errors import DataError
from folkscope.metrics import best_reference_distance, mean_baseline_distance, worst_reference_distance

__all__ = ["References", "Truth", "references", "task_truth"]


@dataclass(frozen=True, eq=False)
class Truth:
    """A task's true distributions.

    Attributes
    ----------
    dist : ndarray of shape (n_conditions, n_levels)
        P(outcome level | condition level).
    shares : ndarray of shape (n_conditions,)
        Population share of each condition (weighted).
    n : ndarray of int
        Respondents behind each condition.
    effective_n : ndarray of int
        Kish effective sample size of each condition (= n when unweighted).
    """

    dist: np.ndarray
    shares: np.ndarray
    n: np.ndarray
    effective_n: np.ndarray


def task_truth(task: Task, frame: pd.DataFrame) -> Truth:
    """The weighted distribution of the outcome in every condition level of ``task`` over ``frame``'s rows.

    Raises
    ------
    DataError
        The declared weight column is missing or has negative or missing
        values, or a condition level has no respondent.
    """
    rows = task.rows(frame)
    if task.weights is not None:
        if task.weights not in rows:
            raise DataError(f"task {task.name}: the weight column {task.weights!r} is not in the data; fix 'weights' in its task file")
        w = pd.to_numeric(rows[task.weights], errors="coerce").to_numpy(dtype=float)
        if not np.isfinite(w).all() or (w < 0).any():
            raise DataError(f"task {task.name}: weight column {task.weights!r} has missing or negative values")
    else:
        w = np.ones(len(rows))
    y = task.outcome.codes(rows)
    if task.condition is None:
        x, n_cond = np.zeros(len(rows), dtype=int), 1
    else:
        x, n_cond = task.condition.codes(rows), len(task.condition.levels)
    keep = x >= 0
    y, x, w = y[keep], x[keep], w[keep]
    n_levels = len(task.outcome.levels)
    table = np.zeros((n_cond, n_levels))
    np.add.at(table, (x, y), w)
    totals = table.sum(axis=1)
    if (totals <= 0).any():
        empty = [task.condition.levels[i].text if task.condition else "all" for i in np.flatnonzero(totals <= 0)]
        raise DataError(f"task {task.name}: no respondent (or zero weight) in condition(s) {', '.join(empty)}; drop or widen them")
    n = np.bincount(x, minlength=n_cond)
    w_sum, w_sq = np.bincount(x, weights=w, minlength=n_cond), np.bincount(x, weights=w * w, minlength=n_cond)
    effective = np.maximum(1, np.floor(w_sum**2 / np.where(w_sq > 0, w_sq, 1))).astype(np.int64)
    return Truth(table / totals[:, None], totals / totals.sum(), n, effective)


@dataclass(frozen=True)
class References:
    """The distances a task's score is measured between, and the marginal-mean baseline."""

    worst: float
    best: float
    mean_baseline: float
    n_resamples: int
    quantile: float


def references(truth: Truth, *, n_resamples: int = 100, quantile: float = 0.975, seed: int = 0) -> References:
    """Worst (uniform), best (sampling noise) and mean-baseline distances of a task's truth."""
    best = best_reference_distance(truth.dist, truth.effective_n, condition_weights=truth.shares, quantile=quantile,
                                   n_resamples=n_resamples, random_state=seed)  # fmt: skip
    return References(
        worst=worst_reference_distance(truth.dist, condition_weights=truth.shares),
        best=float(best),
        mean_baseline=mean_baseline_distance(truth.dist, condition_weights=truth.shares),
        n_resamples=n_resamples,
        quantile=quantile,
    )
