"""One epidemiology run: a model's distributions on a set of tasks, scored 0-100 against the surveys, in a run folder.

A run folder (``<results>/epidemiology-<selection>/<model>/<mode>-<hash8>/``,
:mod:`folkscope.runs`) holds:

- ``truth.parquet``: per task, condition and outcome level, the true share,
  the condition's population share and its respondents;
- ``model.parquet``: the elicited share at the same places;
- ``references.json``: each task's worst, best and mean-baseline distances,
  and where the best comes from (declared, with its reason, for a task on a
  published table, which has no respondents to redraw);
- ``scores.parquet``, ``metrics.json``, ``report.html``: recomputed from the
  tables above by :func:`analyse_run` (``folkscope rescore``): distance,
  score 0-100 with a bootstrap interval (the truth redrawn from its own
  sampling noise), and the baselines beside it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._config import comma_names, config_fields, option
from folkscope._io import write_parquet
from folkscope._json import fingerprint, read_json, write_json
from folkscope.engine import Engine, EngineConfig, run_accounting
from folkscope.epidemiology.caveats import run_caveats
from folkscope.epidemiology.datasets import DATASETS, load_dataset
from folkscope.epidemiology.elicit import LIKELIHOOD_READOUTS, MODES, elicit
from folkscope.epidemiology.report import render_report
from folkscope.epidemiology.tasks import Task, get_task, list_tasks
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
from folkscope.errors import ConfigError, DataError
from folkscope.logs import log_to_file
from folkscope.metrics import distribution_distance, epidemiology_score
from folkscope.report.page import write_page
from folkscope.runs import Manifest, RunFolder, read_caveats, record_caveats, run_path, warn_caveats

__all__ = ["EpidemiologyConfig", "EpidemiologyRun", "analyse_run", "run_epidemiology", "score_table"]

#: bumped when prompts or readings change, so old answers never pass for new ones
PROMPT_VERSION = "epidemiology-v1"
#: what --dimension accepts
DIMENSIONS = ("low", "high")


@dataclass(frozen=True)
class EpidemiologyConfig:
    """Everything that defines an epidemiology run (hashed into its folder name)."""

    tasks: tuple[str, ...] = field(default=(), metadata=option(
        "Task names (comma-separated); default: every task of --dataset, or the hand-written tasks of the bundled datasets "
        "(generated ones join with --dataset or --dimension).", kind="list", metavar="NAME,..."))
    dataset: str | None = field(default=None, metadata=option(
        "Run every task of this dataset (bundled: nist-acs, anes96, randhie; from your copy, with --data-dir: nhanes, gss, "
        "yrbss, nhis, meps96, brfss; full public files, downloaded on first use: nhanes1718, brfss2022, gss-cumulative, "
        "meps2022, nsduh2022, scf2022, acs-pums)."))
    dimension: str | None = field(default=None, metadata=option(
        "Only the low-dimensional (one condition at most) or high-dimensional (2-5 conditions, generated ones included) tasks "
        "of the selection.", choices=DIMENSIONS))
    data_dir: str | None = field(default=None, metadata=option(
        "Folder holding your copies of the datasets that are not bundled (NHANES, GSS, ...); the project's test copy is "
        "../shared/data. Full public files are read from (and downloaded to) its epidemiology/<dataset>/ folder; without "
        "it, folkscope's data folder.", metavar="PATH"))
    mode: str = field(default="qa", metadata=option(
        "qa (lettered answers, averaged over their orderings), likelihood (the 22 probability bins per answer) or sampling "
        "(answer frequencies of --n-samples generations, for models without log-probabilities).", choices=MODES))
    n_samples: int = field(default=50, metadata=option("sampling: generations per condition (temperature 1)."))
    chat: bool = field(default=False, metadata=option("Deliver the questions through the chat template.", kind="toggle"))
    likelihood_readout: str = field(default="argmax", metadata=option(
        "likelihood: the most probable bin's midpoint (the paper) or the expectation over the 22 bins.", choices=LIKELIHOOD_READOUTS))
    n_resamples: int = field(default=100, metadata=option("Bootstrap redraws of the best reference and the score interval."))
    refits: int = field(default=10, metadata=option("High-dimensional tasks: model refits on resampled persons for the best reference."))
    quantile: float = field(default=0.975, metadata=option("Quantile of the redrawn distances that scores 100 (the authors' code: 0.975)."))
    seed: int = field(default=0, metadata=option("Seed of the orderings beyond 128 and of the bootstrap."))
    model: str = field(default="default", metadata=option("Model handle (from --model).", cli=False))
    backend: str = field(default="transformers", metadata=option("Inference backend (from the engine flags).", cli=False))

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", comma_names(self.tasks) if isinstance(self.tasks, str) else tuple(self.tasks))
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}", parameter="mode", value=self.mode)
        if self.likelihood_readout not in LIKELIHOOD_READOUTS:
            raise ConfigError(f"likelihood_readout must be one of {', '.join(LIKELIHOOD_READOUTS)}", parameter="likelihood_readout")
        if isinstance(self.n_samples, bool) or not isinstance(self.n_samples, int) or self.n_samples < 1:
            raise ConfigError(f"n_samples must be an integer >= 1, got {self.n_samples!r}", parameter="n_samples")
        if isinstance(self.refits, bool) or not isinstance(self.refits, int) or self.refits < 2:
            raise ConfigError(f"refits must be an integer >= 2, got {self.refits!r}", parameter="refits")
        if isinstance(self.n_resamples, bool) or not isinstance(self.n_resamples, int) or self.n_resamples < 10:
            raise ConfigError(f"n_resamples must be an integer >= 10, got {self.n_resamples!r}", parameter="n_resamples")
        if self.dimension is not None and self.dimension not in DIMENSIONS:
            raise ConfigError(f"dimension must be one of {', '.join(DIMENSIONS)}, got {self.dimension!r}", parameter="dimension",
                              value=self.dimension)  # fmt: skip
        if not 0.5 < float(self.quantile) < 1:
            raise ConfigError(f"quantile must be in (0.5, 1), got {self.quantile!r}", parameter="quantile", value=self.quantile)
        self.selected()  # unknown task names or datasets fail now, before any model loads

    def selected(self) -> list[Task]:
        """The tasks this run asks: ``tasks``, else every task of ``dataset``, else the bundled ones; ``dimension`` filters.

        The default is the hand-written tasks of the bundled datasets
        (:data:`~folkscope.epidemiology.datasets.DATASETS`), so a plain run
        works offline without ``--data-dir`` and stays small; generated tasks
        (hundreds of cells each) join when ``--dataset`` or ``--dimension``
        is given, tasks on your own copies (NHANES, GSS, ...) or on published
        tables (BLS) when named by ``--tasks`` or ``--dataset``.
        """
        if self.tasks:
            chosen = [get_task(name) for name in self.tasks]
            if self.dataset is not None and any(t.dataset != self.dataset for t in chosen):
                raise ConfigError("--tasks and --dataset disagree; give one of them", parameter="dataset", value=self.dataset)
            if self.dimension is not None and any(t.dimension != self.dimension for t in chosen):
                raise ConfigError(f"--tasks names tasks that are not {self.dimension}-dimensional; drop --dimension or those tasks",
                                  parameter="dimension", value=self.dimension)  # fmt: skip
            return chosen
        if self.dataset is not None:
            chosen = list_tasks(dataset=self.dataset)
        elif self.dimension is not None:
            chosen = [t for t in list_tasks() if t.dataset in DATASETS]
        else:
            chosen = [t for t in list_tasks() if t.dataset in DATASETS and not t.generated]
        if self.dimension is not None:
            chosen = [t for t in chosen if t.dimension == self.dimension]
            if not chosen:
                raise ConfigError(f"no {self.dimension}-dimensional tasks{f' of dataset {self.dataset!r}' if self.dataset else ''}",
                                  parameter="dimension", value=self.dimension)  # fmt: skip
        return chosen

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpidemiologyConfig:
        return cls(**config_fields(cls, data, "EpidemiologyConfig", parameter="config"))


@dataclass(frozen=True)
class EpidemiologyRun:
    """Where a run was written and its metrics."""

    folder: Path
    metrics: dict[str, Any]


def _truth_of(task: Task, frames: dict[str, pd.DataFrame], seed: int) -> Truth | HighTruth:
    """A task's truth: its published table, the cross-fitted persons (high-dimensional) or the weighted shares."""
    if task.table is not None:
        return aggregate_truth(task)
    if task.dimension == "high":
        return high_truth(task, frames[task.dataset], seed=seed)
    return task_truth(task, frames[task.dataset])


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


def _long(task: Task, dist: np.ndarray, column: str, cells: list[str] | None = None) -> pd.DataFrame:
    conditions = cells if cells is not None else ["(all)"] if task.condition is None else [lv.text for lv in task.condition.levels]
    levels = [lv.text for lv in task.outcome.levels]
    return pd.DataFrame({
        "task": task.name, "condition": np.repeat(conditions, len(levels)), "level": np.tile(levels, len(conditions)),
        column: dist.ravel(),
    })  # fmt: skip


def run_epidemiology(config: EpidemiologyConfig, results_dir: str | Path, *, engine: Engine | None = None,
                     engine_config: EngineConfig | None = None) -> EpidemiologyRun:
    """Compute the truth of every selected task, elicit the model's distributions, and score them.

    Tasks no answer could score are the run's caveat: recorded in its manifest
    and raised as a :class:`~folkscope.errors.CaveatWarning`.
    """
    tasks = config.selected()
    # a published table is its own truth: no dataset to load
    frames = {name: load_dataset(name, data_dir=config.data_dir) for name in dict.fromkeys(t.dataset for t in tasks if t.table is None)}
    # bad task files or a missing copy fail here, before the model loads
    truths = {t.name: _truth_of(t, frames, config.seed) for t in tasks}
    own = engine is None
    if engine is None:
        engine = Engine.from_config(engine_config or EngineConfig(model=config.model, backend=config.backend),
                                    prompt_version=PROMPT_VERSION)  # fmt: skip
    identity = engine.identity()
    model_name = str((identity.get("backend") or {}).get("model", {}).get("name") or config.model)
    # where the user keeps the data is not part of what was asked, but what the data say is: the tasks and their
    # truths are hashed (another copy or edition of a survey gives another folder), the folder path is not; the
    # dimension filter is in the task list already
    hashed = {k: v for k, v in config.to_dict().items() if k not in ("data_dir", "dimension")}
    data = {name: _truth_key(truth) for name, truth in truths.items()}
    asked = {"config": hashed, "engine": identity, "version": PROMPT_VERSION, "tasks": [repr(t) for t in tasks], "truth": data}
    tables = {t.name: t.table.key() for t in tasks if t.table is not None}
    key = fingerprint({**asked, "tables": tables} if tables else asked)  # a declared best or citation is part of the run too
    if config.dataset:
        subject = f"epidemiology-{config.dataset}"
    elif config.tasks:
        subject = "epidemiology-" + ("-".join(config.tasks) if len(config.tasks) <= 2 else f"{len(config.tasks)}-tasks")
    else:
        subject = "epidemiology-all"
    if config.dimension and not config.tasks:
        subject += f"-{config.dimension}"
    variant = config.mode + ("-chat" if config.chat else "")
    final = run_path(results_dir, subject=subject, model=Path(model_name).name or model_name, variant=variant, fingerprint=key)
    try:
        with RunFolder(final, fingerprint=key) as folder, log_to_file(folder / "run.log"):
            write_json(folder / "config.json", config.to_dict())
            Manifest(part="epidemiology", fingerprint=key, config=config.to_dict(), engine=identity,
                     data={"tasks": [t.name for t in tasks], "datasets": sorted({t.dataset for t in tasks}),
                           "rows": {name: int(len(frame)) for name, frame in frames.items()}}).write(folder)  # fmt: skip
            truth_rows, model_rows, person_rows, refs, timing = [], [], [], {}, {}
            for task in tasks:
                truth = truths[task.name]
                cells = truth.cell_texts if isinstance(truth, HighTruth) else None
                start = time.perf_counter()
                dist = elicit(engine, task, mode=config.mode, chat=config.chat, likelihood_readout=config.likelihood_readout,
                              seed=config.seed, n_samples=config.n_samples, conditions=cells)  # fmt: skip
                timing[task.name] = time.perf_counter() - start
                if isinstance(truth, HighTruth):
                    truth_rows.append(_high_long(task, truth))
                    person_rows.append(pd.DataFrame({"task": task.name, "condition": np.asarray(cells, dtype=object)[truth.cell],
                                                     "p_true": truth.p, "weight": truth.weights}))  # fmt: skip
                    r = high_references(truth, refits=config.refits, quantile=config.quantile, seed=config.seed)
                else:
                    truth_rows.append(_low_long(task, truth))
                    r = aggregate_references(task, quantile=config.quantile) if task.table is not None else \
                        references(truth, n_resamples=config.n_resamples, quantile=config.quantile, seed=config.seed)  # fmt: skip
                model_rows.append(_long(task, dist, "p_model", cells))
                refs[task.name] = {**asdict(r), "dataset": task.dataset, "dimension": task.dimension,
                                   "weights": "published table" if task.table is not None else task.weights or "none (declared unweighted)"}  # fmt: skip
                if task.table is not None:
                    refs[task.name]["source"] = dict(task.table.source)
            write_parquet(folder / "truth.parquet", pd.concat(truth_rows, ignore_index=True))
            write_parquet(folder / "model.parquet", pd.concat(model_rows, ignore_index=True))
            if person_rows:
                write_parquet(folder / "persons.parquet", pd.concat(person_rows, ignore_index=True))
            write_json(folder / "references.json", {"tasks": refs, "elicitation_seconds": timing, "model": model_name,
                                                    **run_accounting(engine)})  # what the answers cost, as every part records it
            metrics = _analyse(folder)
    finally:
        if own:
            engine.close()
    warn_caveats(read_caveats(final), final)  # a Python user sees only the numbers otherwise
    return EpidemiologyRun(final, metrics)


def score_table(truth: pd.DataFrame, model: pd.DataFrame, refs: dict[str, Any], *, n_resamples: int, seed: int,
                persons: pd.DataFrame | None = None) -> pd.DataFrame:  # fmt: skip
    """Per task: distance, score 0-100 with its 95% bootstrap interval, and the references (see the module docstring).

    High-dimensional tasks are scored over ``persons`` (each person's truth
    against the model's answer for their cell, weighted; the interval
    resamples persons); low-dimensional ones over conditions (the interval
    redraws the truth from its sampling noise). A published table has no
    respondents behind it (``effective_n`` 0), so its interval is NaN: its
    sampling noise is unknown here.
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
        ref = refs[name]
        row = {"task": name, "dataset": ref["dataset"], "dimension": ref["dimension"], "worst": ref["worst"],
               "best": ref["best"], "mean_baseline": ref["mean_baseline"], "n_conditions": len(conditions),
               "unread_conditions": int(q.isna().any(axis=1).sum()), "best_from": ref.get("best_from", "sampling noise")}  # fmt: skip
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
            distance = float(np.average(2 * np.abs(pi - qi), weights=wi))
            picks = rng.integers(0, len(pi), size=(n_resamples, len(pi)))
            boot = [float(np.average(2 * np.abs(pi[k] - qi[k]), weights=wi[k])) for k in picks]
        elif (eff <= 0).any():  # a published table: the distance, but no respondents to redraw for an interval
            distance, boot = distribution_distance(pt, qm, condition_weights=shares), []
        else:
            distance = distribution_distance(pt, qm, condition_weights=shares)
            redrawn = rng.multinomial(eff, pt / pt.sum(axis=1, keepdims=True), size=(n_resamples, len(eff))) / eff[None, :, None]
            boot = [distribution_distance(r, qm, condition_weights=shares) for r in redrawn]
        score = float(epidemiology_score(distance, worst=ref["worst"], best=ref["best"]))
        scores = epidemiology_score(np.asarray(boot), worst=ref["worst"], best=ref["best"])
        low, high = np.quantile(scores, [0.025, 0.975]) if len(boot) else (np.nan, np.nan)
        row.update(distance=distance, score=score, score_low=float(low), score_high=float(high))
        rows.append(row)
    order = ["task", "score", "score_low", "score_high", "distance", "mean_baseline", "worst", "best", "dataset", "dimension",
             "n_conditions", "unread_conditions", "best_from"]  # the answer first, as the page shows it
    return pd.DataFrame(rows)[order]


def _second_level(part: pd.DataFrame) -> str:
    """A binary task's second answer (the outcome the truth gives the probability of), in the task's order."""
    return str(list(dict.fromkeys(part["level"]))[1])


def analyse_run(folder: str | Path) -> dict[str, Any]:
    """(Re)compute scores, metrics and report from a run folder's tables, without the model."""
    with RunFolder(folder) as staging:
        return _analyse(staging)


def _analyse(folder: Path) -> dict[str, Any]:
    config = read_json(folder / "config.json")
    refs = read_json(folder / "references.json")
    truth, model = pd.read_parquet(folder / "truth.parquet"), pd.read_parquet(folder / "model.parquet")
    persons = pd.read_parquet(folder / "persons.parquet") if (folder / "persons.parquet").is_file() else None
    scores = score_table(truth, model, refs["tasks"], n_resamples=int(config["n_resamples"]), seed=int(config["seed"]),
                         persons=persons)  # fmt: skip
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
