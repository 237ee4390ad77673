"""Re-scoring an epidemiology run from its tables, without the model: scores 0-100 with intervals, metrics, caveats, page.

The run writes ``truth.parquet``, ``model.parquet``, ``persons.parquet``
(high-dimensional tasks), ``bins.parquet`` (likelihood mode) and ``references.json``; :func:`analyse` turns
them into ``scores.parquet`` (:func:`score_table`), ``metrics.json`` and
``report.html``, records the run's caveats, and is all that ``folkscope
rescore`` (:func:`rescore`) repeats.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import write_parquet
from folkscope._json import read_json, write_json
from folkscope.epidemiology.caveats import run_caveats
from folkscope.epidemiology.config import made_with
from folkscope.epidemiology.report import render_report
from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import distribution_distance, epidemiology_score, person_distance
from folkscope.report.page import write_page
from folkscope.runs import RunFolder, record_caveats

__all__ = ["analyse", "rescore", "score_table"]


def score_table(
    truth: pd.DataFrame,
    model: pd.DataFrame,
    refs: dict[str, Any],
    *,
    n_resamples: int,
    seed: int,
    persons: pd.DataFrame | None = None,
    best_reference: str = "paper",
    crossed: str = "paper",
) -> pd.DataFrame:
    """Per task: distance, score 0-100 with its 95% bootstrap interval, and the references (see the module docstring).

    High-dimensional tasks are scored over ``persons`` (each person's truth
    against the model's answer for their cell, weighted; the interval
    resamples persons); low-dimensional ones over conditions (the interval
    redraws the truth from its sampling noise). A published table has no
    respondents behind it (``effective_n`` 0), so its interval is NaN: its
    sampling noise is unknown here. The interval redraws each condition at
    the sample size its best reference used (``best_reference``: the raw n,
    or Kish's effective n).

    ``crossed``: the score of a task whose best reference is not below its
    worst (:func:`~folkscope.metrics.epidemiology_score`); such a task is
    flagged in ``references_crossed`` either way. ``negative_remainders``
    counts the conditions whose paper-decoded likelihood distribution gave
    its unasked level a negative share (kept, as the authors' code keeps it).
    """
    rng = np.random.default_rng(seed)
    rows = []
    merged = truth.merge(model, on=["task", "condition", "level"], sort=False)
    for name, part in merged.groupby("task", sort=False):
        conditions = list(dict.fromkeys(part["condition"]))
        p = part.pivot(index="condition", columns="level", values="p_true").loc[conditions]
        q = part.pivot(index="condition", columns="level", values="p_model").loc[conditions, p.columns]
        first = part.drop_duplicates("condition").set_index("condition").loc[conditions]
        shares, eff = first["share"].to_numpy(), first["effective_n"].to_numpy(dtype=np.int64)
        if best_reference == "paper" and (eff > 0).all():
            eff = first["n"].to_numpy(dtype=np.int64)  # the redraws of the paper's best reference
        ref = refs[name]
        row = {
            "task": name,
            "dataset": ref["dataset"],
            "dimension": ref["dimension"],
            "worst": ref["worst"],
            "best": ref["best"],
            "mean_baseline": ref["mean_baseline"],
            "n_conditions": len(conditions),
            "unread_conditions": int(q.isna().any(axis=1).sum()),
            "negative_remainders": int((q.fillna(0.0) < 0).any(axis=1).sum()),
            "references_crossed": bool(ref["best"] >= ref["worst"]),
            "best_from": ref.get("best_from", "sampling noise"),
        }
        if row["unread_conditions"]:
            row.update(distance=np.nan, score=np.nan, score_low=np.nan, score_high=np.nan)
            rows.append(row)
            continue
        pt, qm = p.to_numpy(), q.to_numpy()
        if ref["dimension"] == "high":
            if persons is None:
                raise DataError(f"task {name} is high-dimensional but the run folder has no persons.parquet")
            mine = persons[persons["task"] == name]
            answer = q.iloc[:, list(p.columns).index(_second_level(part))]
            pi, wi = mine["p_true"].to_numpy(), mine["weight"].to_numpy()
            qi = answer.loc[mine["condition"]].to_numpy()
            distance = person_distance(pi, qi, wi)
            picks = rng.integers(0, len(pi), size=(n_resamples, len(pi)))
            boot = [person_distance(pi[k], qi[k], wi[k]) for k in picks]
        elif (eff <= 0).any():  # a published table: the distance, but no respondents to redraw for an interval
            distance, boot = distribution_distance(pt, qm, condition_weights=shares, negative_model=True), []
        else:
            distance = distribution_distance(pt, qm, condition_weights=shares, negative_model=True)
            redrawn = (
                rng.multinomial(eff, pt / pt.sum(axis=1, keepdims=True), size=(n_resamples, len(eff)))
                / eff[None, :, None]
            )
            boot = [distribution_distance(r, qm, condition_weights=shares, negative_model=True) for r in redrawn]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # crossed references: flagged in the row
            score = float(epidemiology_score(distance, worst=ref["worst"], best=ref["best"], crossed=crossed))
            scores = epidemiology_score(np.asarray(boot), worst=ref["worst"], best=ref["best"], crossed=crossed)
        low, high = np.quantile(scores, [0.025, 0.975]) if len(boot) else (np.nan, np.nan)
        row.update(distance=distance, score=score, score_low=float(low), score_high=float(high))
        rows.append(row)
    order = [
        "task",
        "score",
        "score_low",
        "score_high",
        "distance",
        "mean_baseline",
        "worst",
        "best",
        "dataset",
        "dimension",
        "n_conditions",
        "unread_conditions",
        "negative_remainders",
        "references_crossed",
        "best_from",
    ]  # the answer first, as the page shows it
    return pd.DataFrame(rows)[order]


def _second_level(part: pd.DataFrame) -> str:
    """A binary task's second answer (the outcome the truth gives the probability of), in the task's order."""
    return str(list(dict.fromkeys(part["level"]))[1])


def rescore(folder: str | Path) -> dict[str, Any]:
    """(Re)compute scores, metrics and report from a run folder's tables, without the model."""
    with RunFolder(folder) as staging:
        return analyse(staging)


def analyse(folder: Path) -> dict[str, Any]:
    """The metrics of the run in ``folder`` (staged or finished), its scores, caveats and page written beside them."""
    config = read_json(folder / "config.json")
    refs = read_json(folder / "references.json")
    truth, model = pd.read_parquet(folder / "truth.parquet"), pd.read_parquet(folder / "model.parquet")
    persons = pd.read_parquet(folder / "persons.parquet") if (folder / "persons.parquet").is_file() else None
    rules = made_with(config)  # a folder made before the paper's defaults is rescored with the rules of its time
    scores = score_table(
        truth,
        model,
        refs["tasks"],
        n_resamples=int(config["n_resamples"]),
        seed=int(config["seed"]),
        persons=persons,
        best_reference=rules["best_reference"],
        crossed=rules["best_above_worst"],
    )
    write_parquet(folder / "scores.parquet", scores)
    metrics = {
        "config": config,
        "model": refs.get("model"),
        "mode": config["mode"],
        "n_tasks": len(scores),
        "mean_score": float(scores["score"].mean()) if scores["score"].notna().any() else None,
        "scores": scores.to_dict("records"),
        "elicitation_seconds": refs.get("elicitation_seconds"),
        **{k: refs[k] for k in ("engine_stats", "backend_stats") if k in refs},
    }
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    write_page(folder / "report.html", render_report(metrics, truth, model, folder))
    return metrics
