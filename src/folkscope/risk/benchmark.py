"""A risk-score benchmark run: score the test split, evaluate, write a self-describing run folder.

Run folder (``<results_root>/<task>/<model>/<prompt-config-name>-<hash8>/``)::

    config.json       benchmark config, task, prompt config, model identity, data
                      provenance, package versions, fingerprint
    scores.parquet    one row per test row: row_id, split, label, weight, group
                      columns, risk_score, per-ordering scores, baseline scores
    metrics.json      overall / per-group / gaps / bootstrap intervals, weighted and
                      unweighted, for the model and each baseline; scoring counts
    plots/*.png       calibration (equal-width and quantile), group calibration,
                      score histogram, ROC
    report.html       one page linking all of the above

The hash covers everything that changes the numbers, so two configurations
never share a folder and a rerun of the same one lands in the same place
(model answers come back from the engine cache, so nothing is recomputed).
The folder is written as a whole: staged beside it and renamed into place
(:class:`~folkscope.runs.RunFolder`). :func:`rescore` recomputes metrics, plots
and report from ``scores.parquet`` without a model.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import warnings
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope.data.dataset import ACSDataset, Dataset
from folkscope.engine import Engine, EngineConfig, run_accounting
from folkscope.engine.usage import oom_note
from folkscope.errors import ConfigError, DataError
from folkscope.logs import log_to_file
from folkscope.prompting import shuffled_pool
from folkscope._io import atomic_write, write_parquet
from folkscope._json import fingerprint, write_json
from folkscope.risk.baselines import fit_baselines
from folkscope.risk.classifier import LLMClassifier
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.diagnostics import score_diagnostics
from folkscope.risk.importance import permutation_importance
from folkscope.runs import MANIFEST_FILE, Manifest, RunFolder, package_versions, run_path
from folkscope.tasks.columns import column_set
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["Benchmark", "rescore"]

log = logging.getLogger(__name__)
_RESULT_FILES = ("config.json", "scores.parquet", "metrics.json")



def _engine_config(
    model: str, backend: str, device: str | None, dtype: str | None, use_cache: bool, cache_dir: str | Path | None,
    options: dict[str, Any],
) -> EngineConfig:
    """The :class:`EngineConfig` of make_benchmark's loose engine keywords, so both ways in are checked alike."""
    known = {f.name for f in fields(EngineConfig)} - {"model", "backend", "device", "dtype", "use_cache", "cache_dir"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(
            f"backend option(s) {', '.join(unknown)} are not engine settings; known: {', '.join(sorted(known))}",
            parameter="backend_options",
            value=unknown,
        )
    return EngineConfig(
        model=model, backend=backend, device=device, dtype=dtype, use_cache=use_cache,
        cache_dir=None if cache_dir is None else str(cache_dir), **options,
    )  # fmt: skip

class Benchmark:
    """A model, a task's dataset and a configuration, ready to run.

    Build it with :meth:`make_benchmark`; :meth:`run` scores the test split
    and writes the run folder. ``bench.results`` holds the metrics afterwards.
    """

    def __init__(self, classifier: LLMClassifier, dataset: Dataset, config: BenchmarkConfig, *, model_name: str) -> None:
        self.classifier = classifier
        self.dataset = dataset
        self.config = config
        self.model_name = model_name
        self.results: dict[str, Any] | None = None
        self.run_dir: Path | None = None

    @classmethod
    def make_benchmark(
        cls,
        task: TaskMetadata | str = "ACSIncome",
        *,
        dataset: Dataset | None = None,
        model: Any = "default",
        tokenizer: Any = None,
        config: BenchmarkConfig | None = None,
        backend: str = "transformers",
        data_dir: str | Path | None = None,
        device: str | None = None,
        dtype: str | None = None,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        backend_options: Mapping[str, Any] | None = None,
        states: list[str] | None = None,
        survey_year: int | None = None,
        horizon: str | None = None,
        data_file: str | Path | None = None,
        replicate_weights: bool = False,
        **config_kwargs: Any,
    ) -> Benchmark:
        """Validate everything, load the data, then build the engine (in that order).

        Parameters
        ----------
        task : TaskMetadata or str
        dataset : Dataset, optional
            Defaults to ``ACSDataset.make_from_task(task, ...)``.
        model : str, EngineConfig, Engine or a loaded transformers model
            A model handle (``"default"``, folder, ``.gguf``, hub id), an
            :class:`~folkscope.engine.EngineConfig` (model, backend and every
            engine setting in one checked object; then leave ``backend``,
            ``device``, ``dtype``, ``use_cache``, ``cache_dir`` and
            ``backend_options`` out), a ready :class:`~folkscope.engine.Engine`
            (any backend), or, as in
            folktexts, a transformers model already in memory with its
            ``tokenizer`` (:meth:`Engine.from_loaded <folkscope.engine.Engine.from_loaded>`).
        tokenizer : optional
            The tokenizer of a loaded ``model``.
        config : BenchmarkConfig, optional
            Or pass its fields as keyword arguments.
        backend : str
            Engine backend for a model handle (``"transformers"``, ``"litellm"``,
            ``"vllm"``, ``"fake"``, ...).
        backend_options : mapping, optional
            The backend's own options, e.g. ``{"max_rpm": 60}`` for ``litellm``
            or ``{"tensor_parallel_size": 2}`` for ``vllm``.
        states, survey_year, horizon : optional
            Census PUMS tasks: which files to read (default: all states, the
            task's year, 1-Year), as :meth:`ACSDataset.make_from_task
            <folkscope.data.ACSDataset.make_from_task>` takes them.
        data_file : path, optional
            The user's own rows (CSV or parquet) instead of a download.
        replicate_weights : bool, default False
            Census PUMS tasks: also read PWGTP1-80, so the run reports survey
            standard errors by successive difference replication.
        """
        if config is not None and config_kwargs:
            raise ConfigError("pass either config= or BenchmarkConfig fields as keywords, not both", parameter="config")
        config = config or BenchmarkConfig(**config_kwargs)
        task_obj = get_task(task).with_wording(config.wording)
        if config.feature_subset:
            task_obj = task_obj.with_features(list(config.feature_subset))
        if config.population_filter:
            task_obj = task_obj.with_filters(list(config.population_filter))
        sources = {"states": states, "survey_year": survey_year, "horizon": horizon, "data_file": data_file}
        if dataset is None:
            dataset = ACSDataset.make_from_task(
                task_obj, cache_dir=data_dir, seed=config.seed, replicate_weights=replicate_weights, **sources
            )
        elif any(v is not None for v in sources.values()):
            given = next(k for k, v in sources.items() if v is not None)
            raise ConfigError(f"{given}= selects rows to load; a dataset= was given already", parameter=given)
        elif dataset.task != task_obj:
            dataset = Dataset(dataset.data, task_obj, test_size=dataset.test_size, val_size=dataset.val_size, seed=dataset.seed, provenance=dataset.provenance)
        if config.subsampling is not None:
            dataset = dataset.subsample(config.subsampling, seed=config.seed)
        pairs = config.group_pairs()
        unknown = [c for c in pairs if c not in task_obj.sensitive_attributes]
        if unknown:
            raise ConfigError(
                f"--sce-pair names column {unknown[0]}, which is not a group column of task {task_obj.name} "
                f"({', '.join(task_obj.sensitive_attributes)})",
                parameter="sce_pairs",
                value=unknown[0],
            )
        _group_pairs(pairs, {c: dict(task_obj.column_texts[c].values) for c in pairs if c in task_obj.column_texts})
        prompt_config = config.prompt_config()
        examples = None
        if prompt_config.few_shot is not None:  # folktexts' first training rows: of the split in a random order
            examples = shuffled_pool(*dataset.get_train(), seed=prompt_config.few_shot.seed)
        if tokenizer is not None and isinstance(model, (str, Engine, EngineConfig)):
            raise ConfigError(
                "tokenizer= goes with a loaded transformers model; a model name or an Engine brings its own",
                parameter="tokenizer",
            )
        if isinstance(model, Engine):
            engine = model
        elif isinstance(model, EngineConfig):
            loose = {"backend": backend != "transformers", "device": device is not None, "dtype": dtype is not None,
                     "use_cache": not use_cache, "cache_dir": cache_dir is not None, "backend_options": bool(backend_options)}  # fmt: skip
            given = [name for name, set_ in loose.items() if set_]
            if given:
                raise ConfigError(
                    f"{given[0]}= is an engine setting; with model=EngineConfig(...) set it in the EngineConfig",
                    parameter=given[0],
                )
        elif not isinstance(model, str):
            if tokenizer is None:
                raise ConfigError(
                    f"a loaded model ({type(model).__name__}) needs its tokenizer: make_benchmark(model=model, tokenizer=tokenizer)",
                    parameter="tokenizer",
                )
            engine = Engine.from_loaded(model, tokenizer, device=device, use_cache=use_cache, cache_dir=cache_dir, **dict(backend_options or {}))
        else:
            model = _engine_config(model, backend, device, dtype, use_cache, cache_dir, dict(backend_options or {}))
        if isinstance(model, EngineConfig):
            if model.backend == "litellm" and model.max_concurrency is None and config.batch_size is not None:
                model = replace(model, max_concurrency=config.batch_size)  # folktexts' batch of web requests
            engine = Engine.from_config(model)
        model_identity = engine.identity()["backend"].get("model") or {}
        name = model_identity.get("name") or str(model.model if isinstance(model, EngineConfig) else model)
        classifier = LLMClassifier(
            engine,
            task_obj,
            prompt_config=prompt_config,
            examples=examples,
            numeric_readout=config.numeric_readout,
            max_new_tokens=config.max_new_tokens,
            temperature=config.generation_temperature,
            context_size=config.context_size,
        )
        return cls(classifier, dataset, config, model_name=str(name))

    @classmethod
    def make_acs_benchmark(
        cls, task_name: str = "ACSIncome", *, model: Any = "default", tokenizer: Any = None, data_dir: str | Path | None = None,
        config: BenchmarkConfig | None = None, **kwargs: Any,
    ) -> Benchmark:  # fmt: skip
        """folktexts' name for :meth:`make_benchmark` on an ACS task (``task_name``, ``data_dir``)."""
        if not str(task_name).startswith("ACS"):
            raise ConfigError(f"make_acs_benchmark takes an ACS task, got {task_name!r}; use make_benchmark", parameter="task_name", value=task_name)
        return cls.make_benchmark(task_name, model=model, tokenizer=tokenizer, data_dir=data_dir, config=config, **kwargs)

    # -- identity ------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """Everything that defines the run's numbers (hashed into the folder name)."""
        return {
            "task": self.dataset.task.to_dict(),
            # batch_size only schedules work (the engine's own options, in its identity, say how), never the numbers
            "benchmark_config": {k: v for k, v in self.config.to_dict().items() if k != "batch_size"},
            "prompt_config": self.classifier.prompt_config.to_dict(),
            "prompt_config_name": self.classifier.prompt_config.name,
            "engine": self.classifier.engine.identity(),
            "data": self.dataset.describe(),
        }

    def fingerprint(self) -> str:
        """SHA-256 of :meth:`describe` (:func:`folkscope._json.fingerprint`)."""
        return fingerprint(self.describe())

    def run_folder(self, results_root_dir: str | Path) -> Path:
        """``<root>/<task>/<model>/<prompt-config-name>-<hash8>`` (:func:`folkscope.runs.run_path`)."""
        return run_path(
            results_root_dir,
            subject=self.dataset.task.name,
            model=self.model_name,
            variant=self.classifier.prompt_config.name,
            fingerprint=self.fingerprint(),
        )

    # -- running -------------------------------------------------------------------
    def run(self, results_root_dir: str | Path = "results") -> dict[str, Any]:
        """Score the test split, evaluate, write the run folder; return the metrics.

        The folder appears whole or not at all (:class:`~folkscope.runs.RunFolder`):
        files are written to a staging folder beside it, renamed into place
        at the end. A run that fails or is killed leaves a finished folder of
        the same configuration as it was; rerunning continues the staging
        folder and its ``run.log``.
        """
        run_dir = self.run_folder(results_root_dir)
        versions = package_versions()
        record = self.describe() | {"fingerprint": self.fingerprint(), "versions": versions, "model_name": self.model_name}
        record["scheduling"] = {"batch_size": self.config.batch_size}  # recorded, outside the fingerprint
        with RunFolder(run_dir, fingerprint=record["fingerprint"]) as staging:
            write_json(staging / "config.json", record)
            _manifest(record).write(staging)
            self.results = self._run_in(staging, record)
        self.run_dir = run_dir
        return self.results

    def _run_in(self, run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
        with log_to_file(run_dir / "run.log"):  # progress and third-party warnings, kept with the results
            n_fit = self.config.fit_threshold
            if n_fit:
                X_fit, y_fit = self.dataset.subsample(int(n_fit), seed=self.config.seed).get_train()
                self.classifier.fit(X_fit, y_fit)
                log.info("fitted threshold %.4f on %d training rows", self.classifier.threshold, len(X_fit))
            X_test, y_test = self.dataset.get_test()
            scores = self.classifier.predict_proba(X_test)
            table = self._scores_table(scores)
            report = self.classifier.last_report  # before any other scoring replaces it
            if self.config.recalibrate:
                for name, values in self._recalibrated(scores).items():
                    table[f"recalibrated_{name}"] = values
            if self.config.baselines:
                for result in fit_baselines(self.dataset, seed=self.config.seed):
                    table[f"baseline_{result.name}"] = result.scores
            if self.config.feature_importance:
                importance = permutation_importance(
                    self.classifier, X_test, y_test, n_repeats=self.config.importance_repeats,
                    max_rows=self.config.importance_rows, seed=self.config.seed,
                )  # fmt: skip
                atomic_write(run_dir / "feature_importance.csv", lambda fh: fh.write(importance.to_csv().encode("utf-8")))
            write_parquet(run_dir / "scores.parquet", table)
            scoring = report.to_dict() | {"threshold": self.classifier.threshold} | run_accounting(self.classifier.engine)
            note = oom_note(scoring.get("backend_stats") or {})
            if note:
                scoring["notes"] = [*scoring.get("notes", []), note]
            return _evaluate_folder(run_dir, record, scoring)

    def _recalibrated(self, test_scores: np.ndarray) -> dict[str, np.ndarray]:
        """Test scores after Platt and isotonic maps fitted on scored training rows."""
        from folkscope.metrics import IsotonicCalibrator, PlattCalibrator

        X_fit, y_fit = self.dataset.subsample(int(self.config.recalibrate or 0), seed=self.config.seed).get_train()
        fit_scores = self.classifier.predict_proba(X_fit)
        keep = ~np.isnan(fit_scores)
        out = {}
        for name, calibrator in (("platt", PlattCalibrator()), ("isotonic", IsotonicCalibrator())):
            calibrator.fit(fit_scores[keep], y_fit.to_numpy()[keep])
            mapped = np.full(len(test_scores), np.nan)
            ok = ~np.isnan(test_scores)
            mapped[ok] = calibrator.transform(test_scores[ok])
            out[name] = mapped
        return out

    def _scores_table(self, scores: np.ndarray) -> pd.DataFrame:
        task = self.dataset.task
        frame = self.dataset.get_frame("test")
        table = pd.DataFrame(
            {
                "row_id": frame.index.to_numpy(),
                "split": "test",
                "label": frame[task.target_name].to_numpy(dtype=np.int8),
                "weight": self.dataset.weights("test"),
            }
        )
        for col in task.sensitive_attributes:
            if col in frame.columns:
                table[col] = frame[col].to_numpy()
        replicates = self.dataset.replicate_weights("test")
        if replicates is not None:
            for k in range(replicates.shape[1]):
                table[f"replicate_weight_{k + 1}"] = replicates[:, k]
        table["risk_score"] = scores
        details = self.classifier.last_details  # per-ordering scores, or the CoT generations
        if details is not None:
            for col in details.columns:
                table[col] = details[col].to_numpy()
        return table


def _evaluate_folder(run_dir: Path, record: dict[str, Any], scoring: dict[str, Any]) -> dict[str, Any]:
    """Metrics, plots and report of a run folder whose scores.parquet exists."""
    from folkscope.risk.plots import make_all_plots
    from folkscope.risk.report import write_report
    from folkscope.risk.evaluate import evaluate_baselines, evaluate_scores, selective_accuracy_data, to_jsonable

    table = pd.read_parquet(run_dir / "scores.parquet")
    groups = tuple(c for c in record["task"].get("sensitive_attributes", ("RAC1P", "SEX")) if c in table.columns)
    texts = column_set(record["task"].get("columns", "acs"))
    labels = {c: dict(texts[c].values) for c in groups if c in texts and texts[c].values}
    seed = int(record["benchmark_config"].get("seed", 42))
    n_boot = int(record["benchmark_config"].get("n_bootstrap", 1000))
    pairs = _group_pairs(BenchmarkConfig.from_dict(record["benchmark_config"]).group_pairs() if "sce_pairs" in record["benchmark_config"] else {}, labels)
    pairs = {c: pair for c, pair in pairs.items() if c in groups}
    model_metrics = evaluate_scores(
        table, group_cols=groups, group_labels=labels, seed=seed, n_bootstrap=n_boot,
        threshold=float(scoring.get("threshold", 0.5)), group_pairs=pairs or None,
    )  # fmt: skip
    def extra(prefix: str, rename: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        cols = {rename.format(c.removeprefix(prefix)): table[c].to_numpy() for c in table.columns if c.startswith(prefix)}
        if not cols:
            return {}, {}
        return cols, evaluate_baselines(table, cols, group_cols=groups, group_labels=labels, seed=seed, n_bootstrap=n_boot)

    baseline_cols, baseline_metrics = extra("baseline_", "{}")
    recal_cols, recal_metrics = extra("recalibrated_", "model ({})")
    diagnostics = score_diagnostics(table)
    replicate_se = _replicate_standard_errors(table, float(scoring.get("threshold", 0.5)))
    if replicate_se is not None and model_metrics.get("survey_weighted"):
        model_metrics["survey_weighted"]["replicate_standard_errors"] = replicate_se
    metrics = {
        "model": model_metrics, "baselines": baseline_metrics, "recalibrated": recal_metrics, "scoring": scoring,
        "diagnostics": diagnostics, "selective_accuracy": selective_accuracy_data(table),
    }  # fmt: skip
    importance_file = run_dir / "feature_importance.csv"
    importance = pd.read_csv(importance_file, index_col="column") if importance_file.is_file() else None
    if importance is not None:
        metrics["feature_importance"] = importance.to_dict(orient="index")
    for warning in diagnostics["warnings"]:  # on the console now, in the report's diagnostics section later
        log.warning(warning)
    metrics = to_jsonable(metrics)
    write_json(run_dir / "metrics.json", metrics)
    compared = {**recal_cols, **baseline_cols}
    notes = list(scoring.get("notes", []))
    plots: dict[str, str] = {}
    if importlib.util.find_spec("matplotlib") is None:  # the numbers and the report do not need it
        note = "Plots skipped: matplotlib is not installed (pip install 'folkscope[plots]'); `folkscope rescore RUN_DIR` draws them later."
        log.warning(note)
        notes.append(note)
    else:
        plots = make_all_plots(
            table, run_dir / "plots", baselines=compared or None, group_cols=groups, group_labels=labels, importance=importance
        )
    write_report(run_dir, config=record, metrics=metrics, plots=plots, baselines={**recal_metrics, **baseline_metrics} or None, notes=notes)
    return metrics


#: Survey-weighted metrics given design-based standard errors when the rows carry replicate weights.
REPLICATE_METRICS = ("ece", "brier", "roc_auc", "accuracy", "sce")


def _replicate_standard_errors(table: pd.DataFrame, threshold: float) -> dict[str, Any] | None:
    """Survey standard errors (successive difference replication over PWGTP1-80) of the weighted metrics, or None."""
    from folkscope.errors import UndefinedMetricWarning
    from folkscope.metrics import GROUP_METRICS, replicate_standard_error

    columns = [f"replicate_weight_{k}" for k in range(1, 81)]
    if not all(c in table.columns for c in columns):
        return None
    scored = table["risk_score"].notna().to_numpy()
    y = table["label"].to_numpy(dtype=float)[scored]
    p = table["risk_score"].to_numpy(dtype=float)[scored]
    w = table["weight"].to_numpy(dtype=float)[scored]
    reps = table[columns].to_numpy(dtype=float)[scored]
    names = {"ece": "ece", "brier": "brier_score", "roc_auc": "roc_auc", "accuracy": "accuracy", "sce": "sce"}
    out: dict[str, Any] = {"method": "successive difference replication, 80 replicate weights, SE = sqrt(4/80 * sum (theta_r - theta)^2)"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # an undefined replicate gives NaN, reported as such
        for metric in REPLICATE_METRICS:
            fn = GROUP_METRICS[names[metric]]
            se = replicate_standard_error(lambda ww, fn=fn: fn(y, p, ww, threshold, 10), w, reps) if len(y) else float("nan")
            out[metric] = None if not np.isfinite(se) else se
    return out


def _group_pairs(pairs: Mapping[str, tuple[str, str]], labels: Mapping[str, Mapping[Any, str]]) -> dict[str, tuple[Any, Any]]:
    """``--sce-pair`` groups as codes: a number that is a code stays a code; a label becomes its code.

    Raises
    ------
    ConfigError
        A group that is neither a code nor a label of the column.
    """
    out: dict[str, tuple[Any, Any]] = {}
    for column, pair in pairs.items():
        known = dict(labels.get(column) or {})
        by_label = {str(v): k for k, v in known.items()}
        resolved = []
        for group in pair:
            try:
                code: Any = int(group)
            except ValueError:
                code = by_label.get(group, group)
            if known and code not in known:
                listed = ", ".join(f"{k} {v}" for k, v in list(known.items())[:6])
                raise ConfigError(
                    f"--sce-pair {column}={','.join(pair)}: {group!r} is not a group of {column} ({listed}"
                    f"{', ...' if len(known) > 6 else ''})",
                    parameter="sce_pairs",
                    value=group,
                )
            resolved.append(code)
        out[column] = (resolved[0], resolved[1])
    return out


def _manifest(record: Mapping[str, Any], **extra: Any) -> Manifest:
    """The run folder's manifest, from its ``config.json`` record."""
    config = {k: record[k] for k in ("task", "benchmark_config", "prompt_config", "prompt_config_name", "model_name") if k in record}
    return Manifest(
        part="risk", fingerprint=record["fingerprint"], config=config, engine=record.get("engine"), data=record.get("data"),
        versions=record.get("versions") or package_versions(), **extra,
    )  # fmt: skip


def rescore(run_dir: str | Path) -> dict[str, Any]:
    """Recompute metrics, plots and report of a finished run folder, without the model.

    The folder is updated as a whole (:class:`~folkscope.runs.RunFolder`): a
    rescore that fails or is killed leaves it as it was.
    """
    run_dir = Path(run_dir)
    missing = [f for f in _RESULT_FILES[:2] if not (run_dir / f).is_file()]
    if missing:
        raise DataError(f"{run_dir} is not a finished run folder: missing {', '.join(missing)}")
    with RunFolder(run_dir) as staging:
        record = json.loads((staging / "config.json").read_text())
        if not (staging / MANIFEST_FILE).is_file():  # a folder from before manifests gains one
            _manifest(record, created="").write(staging)
        scoring: dict[str, Any] = {}
        if (staging / "metrics.json").is_file():
            scoring = json.loads((staging / "metrics.json").read_text()).get("scoring", {})
        return _evaluate_folder(staging, record, scoring)
