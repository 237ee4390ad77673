"""One epidemiology run: a model's distributions on a set of tasks, scored 0-100 against the surveys, in a run folder.

A run folder (``<results>/epidemiology-<selection>/<model>/<mode>-<hash8>/``,
:mod:`folkscope.runs`) holds:

- ``truth.parquet``: per task, condition and outcome level, the true share,
  the condition's population share and its respondents;
- ``model.parquet``: the elicited share at the same places;
- ``bins.parquet`` (likelihood mode): every question asked, the bin the
  model chose, its probability and the value read from it;
- ``references.json``: each task's worst, best and mean-baseline distances,
  and where the best comes from (declared, with its reason, for a task on a
  published table, which has no respondents to redraw);
- ``scores.parquet``, ``metrics.json``, ``report.html``: recomputed from the
  tables above by :func:`~folkscope.epidemiology.analysis.rescore`
  (``folkscope rescore``): distance, score 0-100 with a bootstrap interval
  (the truth redrawn from its own sampling noise), and the baselines beside it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import write_parquet
from folkscope._json import fingerprint, write_json
from folkscope.data.files import read_rows
from folkscope.data.surveys import load_dataset
from folkscope.engine import Engine, engine_for_run, run_accounting
from folkscope.epidemiology.analysis import analyse
from folkscope.epidemiology.config import EpidemiologyConfig
from folkscope.epidemiology.elicit import condition_texts, elicit, likelihood_answers, likelihood_distribution
from folkscope.epidemiology.tasks import Task
from folkscope.epidemiology.truth import (
    HighTruth,
    Truth,
    aggregate_references,
    aggregate_truth,
    high_references,
    high_truth,
    references,
    task_truth,
)
from folkscope.report.notebook import open_result
from folkscope.runs import Manifest, open_run, run_path

__all__ = ["EpidemiologyRun", "run_epidemiology"]

#: bumped when prompts or readings change, so old answers never pass for new ones
PROMPT_VERSION = "epidemiology-v1"


@dataclass(frozen=True)
class EpidemiologyRun:
    """Where a run was written and its metrics."""

    folder: Path
    metrics: dict[str, Any]

    def _repr_html_(self) -> str:
        """In Jupyter: the answer, the headline metrics with intervals and the caveats, read from the folder
        (:func:`folkscope.report.open_result`)."""
        return open_result(self.folder)._repr_html_()


def _truth_of(task: Task, frames: dict[str, pd.DataFrame], seed: int) -> Truth | HighTruth:
    """A task's truth: its published table, the cross-fitted persons (high-dimensional) or the weighted shares."""
    if task.table is not None:
        return aggregate_truth(task)
    if task.dimension == "high":
        return high_truth(task, frames[task.rows_key], seed=seed)
    return task_truth(task, frames[task.rows_key])


def _truth_key(truth: Truth | HighTruth) -> Any:
    """What a task's data say, for the run's fingerprint (another copy of the data: another run)."""
    if isinstance(truth, HighTruth):
        return hashlib.sha256(np.round(truth.p, 12).tobytes() + truth.weights.tobytes()).hexdigest()
    return [truth.dist.round(12).tolist(), truth.shares.round(12).tolist(), truth.n.tolist()]


def _low_long(task: Task, truth: Truth) -> pd.DataFrame:
    frame = _long(task, truth.dist, "p_true")
    per_condition = len(task.outcome.levels)
    frame["share"] = np.repeat(truth.shares, per_condition)
    frame["n"] = np.repeat(truth.n, per_condition)
    frame["effective_n"] = np.repeat(truth.effective_n, per_condition)
    return frame


def _high_long(task: Task, truth: HighTruth) -> pd.DataFrame:
    """Per cell: the weighted mean of its persons' truths (for the page), its population share and its persons."""
    n_cells = len(truth.cell_texts)
    w = np.bincount(truth.cell, weights=truth.weights, minlength=n_cells)
    mean = np.bincount(truth.cell, weights=truth.weights * truth.p, minlength=n_cells) / w
    w_sq = np.bincount(truth.cell, weights=truth.weights**2, minlength=n_cells)
    frame = _long(task, np.column_stack([1 - mean, mean]), "p_true", truth.cell_texts)
    frame["share"] = np.repeat(w / w.sum(), 2)
    frame["n"] = np.repeat(np.bincount(truth.cell, minlength=n_cells), 2)
    frame["effective_n"] = np.repeat(np.maximum(1, np.floor(w**2 / w_sq)).astype(np.int64), 2)
    return frame


def _bins_long(task: Task, answers: pd.DataFrame, asked: list[str | None]) -> pd.DataFrame:
    """The likelihood answers of one task, with the condition and level written out as the other tables write them."""
    texts = [lv.text for lv in task.outcome.levels]
    named = ["(all)" if c is None else c for c in asked]
    out = answers.assign(
        task=task.name,
        condition=[named[i] for i in answers["condition"]],
        level=[texts[j] for j in answers["level"]],
    )
    return out[["task", "condition", "level", "bin", "bin_probability", "stated"]]


def _long(task: Task, dist: np.ndarray, column: str, cells: list[str] | None = None) -> pd.DataFrame:
    conditions = (
        cells
        if cells is not None
        else ["(all)"]
        if task.condition is None
        else [lv.text for lv in task.condition.levels]
    )
    levels = [lv.text for lv in task.outcome.levels]
    return pd.DataFrame(
        {
            "task": task.name,
            "condition": np.repeat(conditions, len(levels)),
            "level": np.tile(levels, len(conditions)),
            column: dist.ravel(),
        }
    )


def run_epidemiology(
    config: EpidemiologyConfig,
    results_dir: str | Path,
    *,
    engine: Engine | None = None,
) -> EpidemiologyRun:
    """Compute the truth of every selected task, elicit the model's distributions, and score them.

    Tasks no answer could score are the run's caveat: recorded in its manifest
    and raised as a :class:`~folkscope.errors.CaveatWarning`.
    """
    tasks = config.selected()
    # a published table is its own truth: no dataset to load
    frames = {
        t.rows_key: read_rows(t.data_file)
        if t.data_file is not None
        else load_dataset(t.dataset, data_dir=config.data_dir)
        for t in {t.rows_key: t for t in tasks if t.table is None}.values()
    }
    # bad task files or a missing copy fail here, before the model loads
    truths = {t.name: _truth_of(t, frames, config.seed) for t in tasks}
    with engine_for_run(engine, config.engine, prompt_version=PROMPT_VERSION) as engine:
        return _write(config, tasks, frames, truths, engine, results_dir)


def _write(
    config: EpidemiologyConfig,
    tasks: list[Task],
    frames: dict[str, pd.DataFrame],
    truths: dict[str, Truth | HighTruth],
    engine: Engine,
    results_dir: str | Path,
) -> EpidemiologyRun:
    """Elicit every task into the run's folder (through the shared lifecycle) and analyse it."""
    identity = engine.identity()
    model_name = str((identity.get("backend") or {}).get("model", {}).get("name") or config.engine.model)
    # where the user keeps the data or task files is not part of what was asked, but what they say is: the tasks
    # and their truths are hashed (another copy or edition of a survey gives another folder), the paths are not;
    # the dimension filter is in the task list already
    hashed = {k: v for k, v in config.to_dict().items() if k not in ("data_dir", "dimension", "task_file", "task_dir")}
    data = {name: _truth_key(truth) for name, truth in truths.items()}
    asked = {
        "config": hashed,
        "engine": identity,
        "version": PROMPT_VERSION,
        "tasks": [repr(t) for t in tasks],
        "truth": data,
    }
    tables = {t.name: t.table.key() for t in tasks if t.table is not None}
    key = fingerprint(
        {**asked, "tables": tables} if tables else asked
    )  # a declared best or citation is part of the run too
    if config.dataset:
        subject = f"epidemiology-{config.dataset}"
    elif config.tasks:
        subject = "epidemiology-" + ("-".join(config.tasks) if len(config.tasks) <= 2 else f"{len(config.tasks)}-tasks")
    elif config.task_file or config.task_dir:  # the user's own files: named by their datasets
        datasets = sorted({t.dataset for t in tasks})
        subject = "epidemiology-" + ("-".join(datasets) if len(datasets) <= 2 else f"{len(datasets)}-datasets")
    else:
        subject = "epidemiology-all"
    if config.dimension and not config.tasks:
        subject += f"-{config.dimension}"
    variant = config.mode + ("-chat" if config.chat else "")
    final = run_path(
        results_dir, subject=subject, model=Path(model_name).name or model_name, variant=variant, fingerprint=key
    )
    manifest = Manifest(
        part="epidemiology",
        fingerprint=key,
        config=config.to_dict(),
        engine=identity,
        data={
            "tasks": [t.name for t in tasks],
            "datasets": sorted({t.dataset for t in tasks}),
            "rows": {name: int(len(frame)) for name, frame in frames.items()},
        },
    )
    with open_run(final, manifest, config=config.to_dict()) as folder:
        truth_rows, model_rows, person_rows, bin_rows, refs, timing = [], [], [], [], {}, {}
        for task in tasks:
            truth = truths[task.name]
            cells = truth.cell_texts if isinstance(truth, HighTruth) else None
            start = time.perf_counter()
            if config.mode == "likelihood":  # the chosen bins are kept, so a strange score can be traced
                asked = cells if cells is not None else condition_texts(task)
                answers = likelihood_answers(
                    engine,
                    task,
                    asked,
                    chat=config.chat,
                    readout=config.likelihood_readout,
                    levels=config.likelihood_levels,
                )
                dist = likelihood_distribution(answers, task, asked, levels=config.likelihood_levels)
                bin_rows.append(_bins_long(task, answers, asked))
            else:
                dist = elicit(
                    engine,
                    task,
                    mode=config.mode,
                    chat=config.chat,
                    seed=config.seed,
                    n_samples=config.n_samples,
                    conditions=cells,
                )
            timing[task.name] = time.perf_counter() - start
            if isinstance(truth, HighTruth):
                truth_rows.append(_high_long(task, truth))
                person_rows.append(
                    pd.DataFrame(
                        {
                            "task": task.name,
                            "condition": np.asarray(cells, dtype=object)[truth.cell],
                            "p_true": truth.p,
                            "weight": truth.weights,
                        }
                    )
                )
                r = high_references(truth, refits=config.refits, quantile=config.quantile, seed=config.seed)
            else:
                truth_rows.append(_low_long(task, truth))
                r = (
                    aggregate_references(task, quantile=config.quantile, best_reference=config.best_reference)
                    if task.table is not None
                    else references(
                        truth,
                        n_resamples=config.n_resamples,
                        quantile=config.quantile,
                        seed=config.seed,
                        best_reference=config.best_reference,
                    )
                )
            model_rows.append(_long(task, dist, "p_model", cells))
            refs[task.name] = {
                **asdict(r),
                "dataset": task.dataset,
                "dimension": task.dimension,
                "weights": "published table"
                if task.table is not None
                else task.weights or "none (declared unweighted)",
            }
            if task.table is not None:
                refs[task.name]["source"] = dict(task.table.source)
        write_parquet(folder / "truth.parquet", pd.concat(truth_rows, ignore_index=True))
        write_parquet(folder / "model.parquet", pd.concat(model_rows, ignore_index=True))
        if person_rows:
            write_parquet(folder / "persons.parquet", pd.concat(person_rows, ignore_index=True))
        if bin_rows:
            write_parquet(folder / "bins.parquet", pd.concat(bin_rows, ignore_index=True))
        write_json(
            folder / "references.json",
            {"tasks": refs, "elicitation_seconds": timing, "model": model_name, **run_accounting(engine)},
        )  # what the answers cost, as every part records it
        metrics = analyse(folder)
    return EpidemiologyRun(final, metrics)
