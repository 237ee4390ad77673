"""Part 3 in ``folkscope compare``: two of its run folders, paired unit by unit (B minus A).

Units are tasks (same survey truth). The per-task distance and score and the mean score; their
intervals redraw the survey truth from its sampling noise (low-dimensional tasks: each condition's
answers from its effective sample size; high-dimensional: persons resampled), once per replicate for
both runs, as the part's own intervals do. Tasks are not resampled: the mean is over the tasks the
runs were asked, not a sample.

The paired bootstrap, unit matching and output are shared (:mod:`folkscope.report.paired`,
:mod:`folkscope.report.matching`, :mod:`folkscope.report.compare`); the floor plan (:mod:`folkscope.registry`) makes
:func:`compare` this part's ``compare`` entry point.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import read_json
from folkscope.epidemiology.config import made_with
from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import distribution_distance, epidemiology_score, person_distance
from folkscope.report.matching import match_units
from folkscope.report.paired import COLUMNS, Options, PartComparison, replicate_row, top_moved
from folkscope.runs import read_manifest, read_table

__all__ = ["compare"]


def _replicate_distances(
    truth: pd.DataFrame,
    models: Sequence[pd.DataFrame],
    persons: pd.DataFrame | None,
    dimension: str,
    replicates: int,
    rng: np.random.Generator,
    sizes: str = "n",
) -> tuple[list[float], np.ndarray] | None:
    """Full-data distance of each run and its distances on redrawn truths (replicates x runs), or None if unreadable.

    ``sizes``: the truth column each condition is redrawn at (``n``, the raw count of the paper's best reference,
    or ``effective_n``), as the runs' own intervals redraw it."""
    conditions = list(dict.fromkeys(truth["condition"]))
    levels = list(dict.fromkeys(truth["level"]))
    p = truth.pivot(index="condition", columns="level", values="p_true").loc[conditions, levels]
    qs = [
        m.pivot(index="condition", columns="level", values="p_model").reindex(index=conditions, columns=levels)
        for m in models
    ]
    if any(q.isna().to_numpy().any() for q in qs):
        return None
    draws = np.empty((replicates, len(models)))
    if dimension == "high":  # each person's truth against the model's answer for their cell
        if persons is None or len(levels) != 2:
            return None
        answers = [q.iloc[:, 1] for q in qs]
        pi, wi = persons["p_true"].to_numpy(np.float64), persons["weight"].to_numpy(np.float64)
        qi = [ans.loc[persons["condition"]].to_numpy(np.float64) for ans in answers]
        full = [person_distance(pi, q, wi) for q in qi]
        for r in range(replicates):
            k = rng.integers(0, len(pi), len(pi))
            draws[r] = [person_distance(pi[k], q[k], wi[k]) for q in qi]
        return full, draws
    first = truth.drop_duplicates("condition").set_index("condition").loc[conditions]
    shares, eff = first["share"].to_numpy(np.float64), first[sizes].to_numpy(np.int64)
    pt = p.to_numpy(np.float64)
    full = [distribution_distance(pt, q.to_numpy(), condition_weights=shares, negative_model=True) for q in qs]
    probs = pt / pt.sum(axis=1, keepdims=True)
    size = np.maximum(eff, 1)  # a condition without respondents keeps its published share
    for r in range(replicates):
        redrawn = np.where(eff[:, None] > 0, rng.multinomial(size, probs) / size[:, None], pt)
        draws[r] = [
            distribution_distance(redrawn, q.to_numpy(), condition_weights=shares, negative_model=True) for q in qs
        ]
    return full, draws


def _condition_moves(task: str, truth: pd.DataFrame, models: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Per condition: each run's L1 distance to the truth and the change."""
    merged = truth.merge(models[0], on=["task", "condition", "level"]).merge(
        models[1], on=["task", "condition", "level"], suffixes=("_a", "_b")
    )
    merged["err_a"] = (merged["p_true"] - merged["p_model_a"]).abs()
    merged["err_b"] = (merged["p_true"] - merged["p_model_b"]).abs()
    out = (
        merged.groupby("condition", sort=False)
        .agg(share=("share", "first"), distance_a=("err_a", "sum"), distance_b=("err_b", "sum"))
        .reset_index()
    )
    out.insert(0, "task", task)
    out["difference"] = out["distance_b"] - out["distance_a"]
    return out


def compare(a: Path, b: Path, opts: Options) -> PartComparison:
    """Paired per-task differences of distance and score, intervals from redrawing the shared survey truth."""
    cols = ["task", "dimension", "worst", "best", "score", "distance"]
    matched = match_units(
        read_table(a, "scores").reindex(columns=cols),
        read_table(b, "scores").reindex(columns=cols),
        keys=["task"],
        same=["dimension", "worst", "best"],
        unit="task",
        shared_rows=opts.shared_rows,
    )
    notes = [matched.note] if matched.note else []
    tasks = matched.shared
    truth = [read_table(f, "truth") for f in (a, b)]
    models = [read_table(f, "model") for f in (a, b)]
    persons = [
        read_table(f, "persons") if (f / read_manifest(f).tables["persons"]["file"]).is_file() else None for f in (a, b)
    ]
    keys = ["task", "condition", "level"]
    shared_truth = truth[0].merge(truth[1], on=keys, suffixes=("_a", "_b"))
    shared_truth = shared_truth[shared_truth["task"].isin(tasks["task"])]
    if not np.allclose(shared_truth["p_true_a"], shared_truth["p_true_b"], rtol=1e-9, atol=1e-12):
        raise DataError(
            "the runs share task names but not their survey truth (other data or filters); compare two runs "
            "over the same data"
        )
    # the runs share their references (matched above), so the first one's rules are both runs' rules; folders made
    # before the paper's defaults redrew at Kish's n and left crossed references undefined
    rules = made_with(read_json(a / "config.json"))
    sizes = "n" if rules["best_reference"] == "paper" else "effective_n"
    crossed = rules["best_above_worst"]
    rng = np.random.default_rng(opts.seed)
    rows: list[dict[str, Any]] = []
    moves = []
    score_draws, score_full, n_scored = np.zeros((opts.replicates, 2)), np.zeros(2), 0
    no_interval = []
    for _, task in tasks.iterrows():
        name = task["task"]
        t = truth[0][truth[0]["task"] == name]
        ms = [m[m["task"] == name] for m in models]
        got = _replicate_distances(
            t,
            ms,
            None if persons[0] is None else persons[0][persons[0]["task"] == name],
            str(task["dimension"]),
            opts.replicates,
            rng,
            sizes,
        )
        stated = (float(task["distance_a"]), float(task["distance_b"]))
        if got is not None and not np.allclose(got[0], stated, rtol=1e-9, atol=1e-12, equal_nan=False):
            got = None  # our reading of the tables does not reproduce the run's distance: no interval rather than a wrong one
        draws = scores = np.full((opts.replicates, 2), np.nan)
        if got is None:
            no_interval.append(str(name))
        elif np.isfinite(got[1]).all():
            draws = got[1]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)  # best >= worst: NaN, as in the run's own table
                scores = epidemiology_score(
                    draws, worst=float(task["worst"]), best=float(task["best"]), crossed=crossed
                )
        common: dict[str, Any] = {
            "scope": str(name),
            "n_units": int(t["condition"].nunique()),
            "confidence": opts.confidence,
        }
        rows.append(
            replicate_row(
                "score", "score", "higher", task["score_a"], task["score_b"], scores[:, 0], scores[:, 1], **common
            )
        )
        rows.append(
            replicate_row("distance", "distance", "lower", stated[0], stated[1], draws[:, 0], draws[:, 1], **common)
        )
        if np.isfinite([task["score_a"], task["score_b"]]).all():
            score_draws += scores
            score_full += [task["score_a"], task["score_b"]]
            n_scored += 1
        if all(len(m) for m in ms):
            moves.append(_condition_moves(str(name), t, ms))
    if n_scored:
        rows.insert(
            0,
            replicate_row(
                "mean_score",
                "mean score",
                "higher",
                score_full[0] / n_scored,
                score_full[1] / n_scored,
                score_draws[:, 0] / n_scored,
                score_draws[:, 1] / n_scored,
                n_units=n_scored,
                confidence=opts.confidence,
            ),
        )
    if no_interval:
        notes.append(
            f"no interval for {', '.join(no_interval)}: the run's tables do not reproduce its distance "
            "(a condition the model did not answer, or an older run layout)"
        )
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    moved = (
        pd.concat(moves, ignore_index=True)
        if moves
        else pd.DataFrame(columns=["task", "condition", "share", "distance_a", "distance_b", "difference"])
    )
    notes.append(
        "intervals redraw the survey truth from its sampling noise, as each run's own score interval does; "
        "the tasks are taken as they are, not resampled"
    )
    return PartComparison(
        "task",
        matched.n_a,
        matched.n_b,
        len(tasks),
        table,
        top_moved(moved, moved["difference"], opts.top),
        (("mean_score", "overall"),),
        tuple(notes),
        moved_unit="condition",
    )


#: part name -> its comparer
