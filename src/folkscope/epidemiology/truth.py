"""Ground truth of a low-dimensional task and the references its score is measured between.

- truth: per condition level x, the weighted share of each outcome level
  (``weights`` column; the sample's own shares where the dataset is declared
  unweighted), and the condition's population share;
- best reference: the survey's own sampling noise, the ``quantile`` (0.975)
  of the task distance between ``n_resamples`` multinomial redraws and the
  truth (:func:`folkscope.metrics.best_reference_distance`). How many answers
  each condition redraws (:data:`BEST_REFERENCES`): ``"paper"`` (default)
  its raw respondent count, as the paper and the authors' code redraw;
  ``"design-effect"`` its Kish effective sample size (Σw)² / Σw², the number
  of unweighted answers that would be as noisy as the weighted ones (a
  larger, more honest best on weighted surveys, but scores then no longer
  compare with the paper's leaderboard);
- worst reference: the uniform distribution over the answers;
- mean baseline: the marginal distribution predicted for every condition.

High-dimensional tasks (a binary outcome, 2-5 conditions) have a truth per
person instead (:func:`high_truth`): LightGBM fitted on the condition codes
with 5-fold stratified cross-fitting and the survey weights, out-of-fold
predictions (:mod:`folkscope.learners`). Their worst reference is the smaller
of a uniform guess and the 0/1 guess; their best, 10 refits on resampled
persons (:func:`high_references`).

Tasks on a published table (:mod:`~folkscope.epidemiology.aggregate`) take
the table's proportions and shares as the truth (:func:`aggregate_truth`);
with no respondents to redraw, their best reference is 0 under ``"paper"``
(the authors' code sets it so for the BLS, IPEDS and FBI tables) and the one
the task declares, with its reason, under ``"design-effect"``
(:func:`aggregate_references`).

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
from folkscope.metrics import best_reference_distance, mean_baseline_distance, person_distance, worst_reference_distance

__all__ = [
    "BEST_REFERENCES",
    "HighTruth",
    "References",
    "Truth",
    "aggregate_references",
    "aggregate_truth",
    "high_references",
    "high_truth",
    "references",
    "task_truth",
]


#: how the best reference of a survey task redraws each condition: its raw n (the paper) or its Kish effective n
BEST_REFERENCES = ("paper", "design-effect")


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
        Respondents behind each condition (0 for a published table: unknown).
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
        A level matches no respondent or is written in another type than its
        column (:meth:`~folkscope.epidemiology.tasks.Task.check_levels`), the
        declared weight column is missing or has negative or missing values,
        or a condition has zero weight.
    """
    if task.table is not None:
        return aggregate_truth(task)
    task.check_levels(frame)
    rows = task.rows(frame)
    w = _weights_of(task, rows)
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
        raise DataError(
            f"task {task.name}: no respondent (or zero weight) in condition(s) {', '.join(empty)}; drop or widen them"
        )
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
    #: where the best reference comes from (a published table declares it)
    best_from: str = "sampling noise"


def aggregate_truth(task: Task) -> Truth:
    """The published proportions and shares of a task on an aggregate table; no respondents are known (n = 0).

    Examples
    --------
    >>> from folkscope.epidemiology.tasks import get_task
    >>> truth = aggregate_truth(get_task("bls_union_membership_by_sex"))
    >>> truth.dist[:, 0].round(3).tolist(), truth.n.tolist()
    ([0.105, 0.095], [0, 0])
    """
    if task.table is None:
        raise DataError(f"task {task.name} has no published table; its truth comes from its dataset (task_truth)")
    zeros = np.zeros(len(task.table.shares), dtype=np.int64)
    return Truth(task.table.dist.copy(), task.table.shares.copy(), zeros, zeros.copy())


def aggregate_references(task: Task, *, quantile: float = 0.975, best_reference: str = "paper") -> References:
    """Worst (uniform) and mean-baseline distances of a published table, and its best reference.

    The best is 0 under ``"paper"`` (the authors' code: a published table is
    taken as exact) and the distance the task declares under
    ``"design-effect"`` (rounding and survey error the publication states).

    Raises
    ------
    DataError
        The declared best is not below the worst (the score would have no room).
    """
    table = task.table
    if table is None:
        raise DataError(f"task {task.name} has no published table; its references come from its dataset (references)")
    _check_best_reference(best_reference)
    worst = worst_reference_distance(table.dist, condition_weights=table.shares)
    if best_reference == "paper":
        best, best_from = 0.0, "0 for a published table, as the paper's code sets it"
    else:
        if table.best >= worst:
            raise DataError(
                f"task {task.name}: the declared best distance {table.best} is not below the uniform guess's "
                f"{worst:.4f}; declare a smaller one"
            )
        best, best_from = table.best, f"declared: {table.best_because}"
    return References(
        worst=worst,
        best=best,
        mean_baseline=mean_baseline_distance(table.dist, condition_weights=table.shares),
        n_resamples=0,
        quantile=quantile,
        best_from=best_from,
    )


def _check_best_reference(best_reference: str) -> None:
    if best_reference not in BEST_REFERENCES:
        raise DataError(f"best_reference must be one of {', '.join(BEST_REFERENCES)}, got {best_reference!r}")


def references(
    truth: Truth, *, n_resamples: int = 100, quantile: float = 0.975, seed: int = 0, best_reference: str = "paper"
) -> References:
    """Worst (uniform), best (sampling noise) and mean-baseline distances of a task's truth.

    ``best_reference``: each condition redraws its raw respondent count
    (``"paper"``) or its Kish effective sample size (``"design-effect"``).
    """
    _check_best_reference(best_reference)
    sizes = truth.n if best_reference == "paper" else truth.effective_n
    best = best_reference_distance(
        truth.dist,
        sizes,
        condition_weights=truth.shares,
        quantile=quantile,
        n_resamples=n_resamples,
        random_state=seed,
    )
    return References(
        worst=worst_reference_distance(truth.dist, condition_weights=truth.shares),
        best=float(best),
        mean_baseline=mean_baseline_distance(truth.dist, condition_weights=truth.shares),
        n_resamples=n_resamples,
        quantile=quantile,
        best_from="sampling noise at the raw n"
        if best_reference == "paper"
        else "sampling noise at Kish's effective n",
    )


@dataclass(frozen=True, eq=False)
class HighTruth:
    """A high-dimensional task's truth: P(outcome = its second level | x) for every person, out of fold.

    Attributes
    ----------
    p : ndarray
        Each person's cross-fitted probability.
    weights : ndarray
        Their survey weights (ones where the dataset is declared unweighted).
    cell : ndarray of int
        Each person's cell (combination of condition levels), an index into ``cell_texts``.
    cell_texts : list of str
        How a question describes each cell (the task's ``person`` template).
    codes : ndarray of int
        Each person's level codes, one column per condition.
    y : ndarray of int
        Each person's outcome (1 for the second level).
    """

    p: np.ndarray
    weights: np.ndarray
    cell: np.ndarray
    cell_texts: list[str]
    codes: np.ndarray
    y: np.ndarray

    def distance(self, q: np.ndarray) -> float:
        """Weighted mean over persons of the L1 distance between their true and predicted binary distributions, 2 |p - q|."""
        return person_distance(self.p, q, self.weights)


def _weights_of(task: Task, rows: pd.DataFrame) -> np.ndarray:
    if task.weights is None:
        return np.ones(len(rows))
    if task.weights not in rows:
        raise DataError(
            f"task {task.name}: the weight column {task.weights!r} is not in the data; fix 'weights' in its task file"
        )
    w = pd.to_numeric(rows[task.weights], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(w).all() or (w < 0).any():
        raise DataError(f"task {task.name}: weight column {task.weights!r} has missing or negative values")
    return w


def high_truth(task: Task, frame: pd.DataFrame, *, folds: int = 5, seed: int = 0) -> HighTruth:
    """The cross-fitted truth of a high-dimensional task (LightGBM on the condition codes, survey weights, 5 folds)."""
    from folkscope.learners import crossfit_probabilities

    task.check_levels(frame)
    rows = task.rows(frame)
    codes, cell, texts = task.cells(rows)
    keep = cell >= 0
    if not keep.any():
        raise DataError(f"task {task.name}: no respondent falls in a level of every condition; check the levels")
    y = task.outcome.codes(rows)[keep]
    w = _weights_of(task, rows)[keep]
    p = crossfit_probabilities(codes[keep], y, w, folds=folds, seed=seed)
    return HighTruth(p=p, weights=w, cell=cell[keep], cell_texts=texts, codes=codes[keep], y=y)


def high_references(truth: HighTruth, *, refits: int = 10, quantile: float = 0.975, seed: int = 0) -> References:
    """Worst (the smaller of a uniform guess and the 0/1 guess), best (refits on resampled data) and mean-baseline distances.

    The best reference refits the model on ``refits`` bootstrap resamples of
    the persons and takes the ``quantile`` of their distances to the
    cross-fitted truth: how far the truth itself moves with the sample.
    """
    from folkscope.learners import fit_gbm

    mean = float(np.average(truth.p, weights=truth.weights))
    worst = min(truth.distance(np.full(len(truth.p), 0.5)), truth.distance(np.full(len(truth.p), float(mean > 0.5))))
    rng = np.random.default_rng(seed)
    distances = []
    for r in range(refits):
        idx = rng.integers(0, len(truth.p), len(truth.p))
        if np.unique(truth.y[idx]).size < 2:
            continue
        model = fit_gbm(truth.codes[idx], truth.y[idx], truth.weights[idx], seed=seed + r)
        distances.append(truth.distance(model.predict_proba(np.asarray(truth.codes, dtype=float))[:, 1]))
    if not distances:
        raise DataError("every resample held one outcome only; the task is too small for a best reference")
    return References(
        worst=worst,
        best=float(np.quantile(distances, quantile)),
        mean_baseline=truth.distance(np.full(len(truth.p), mean)),
        n_resamples=refits,
        quantile=quantile,
        best_from="refits on resampled persons",
    )
