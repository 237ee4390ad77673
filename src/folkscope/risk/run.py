"""A risk-score benchmark run: score the test split, evaluate, write a self-describing run folder.

Run folder (``<results_root>/<task>/<model>/<prompt-config-name>-<hash8>/``)::

    config.json       benchmark config, task, prompt config, model identity, data
                      provenance, package versions, fingerprint
    scores.parquet    one row per test row: row_id, split, label, weight, group
                      columns, risk_score, per-ordering scores, baseline scores
    metrics.json      overall / per-group / gaps / bootstrap intervals, weighted and
                      unweighted, for the model and each baseline; scoring counts
    results.bench-<hash>.json, <task>.test_predictions.csv
                      folktexts' flat results and predictions (:mod:`folkscope.risk.results`)
    plots/*.png       calibration (equal-width and quantile), group calibration,
                      score histogram, ROC
    report.html       one page linking all of the above

The hash covers everything that changes the numbers, so two configurations
never share a folder and a rerun of the same one lands in the same place
(model answers come back from the engine cache, so nothing is recomputed).
The folder is written as a whole: staged beside it and renamed into place
(:class:`~folkscope.runs.RunFolder`). :func:`~folkscope.risk.analysis.rescore` recomputes metrics, plots
and report from ``scores.parquet`` without a model.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_write, write_parquet
from folkscope._json import fingerprint, write_json
from folkscope.data.dataset import ACSDataset, Dataset
from folkscope.engine import Engine, EngineConfig, run_accounting
from folkscope.engine.usage import oom_note
from folkscope.errors import ConfigError
from folkscope.prompting import shuffled_pool
from folkscope.report.notebook import open_result
from folkscope.risk.analysis import evaluate_folder, group_pairs, manifest, rescore, write_folktexts
from folkscope.risk.baselines import fit_baselines
from folkscope.risk.classifier import LLMClassifier
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.importance import permutation_importance
from folkscope.runs import open_run, package_versions, run_path
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["Benchmark"]

log = logging.getLogger(__name__)


def _engine_config(
    model: str,
    backend: str,
    device: str | None,
    dtype: str | None,
    use_cache: bool,
    cache_dir: str | Path | None,
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
        model=model,
        backend=backend,
        device=device,
        dtype=dtype,
        use_cache=use_cache,
        cache_dir=None if cache_dir is None else str(cache_dir),
        **options,
    )


class Benchmark:
    """A model, a task's dataset and a configuration, ready to run.

    Build it with :meth:`make_benchmark`; :meth:`run` scores the test split
    and writes the run folder. ``bench.results`` holds the results
    afterwards: folktexts' flat keys (``results["ece"]``, ``["roc_auc"]``,
    ``["tpr"]``, ...) and folkscope's sections (``results["model"]``, the
    ``metrics.json`` of the run, with groups, weights and intervals).
    """

    #: the ACS data settings make_acs_benchmark uses (folktexts' name; val_size 0: folkscope keeps no validation split)
    ACS_DATASET_CONFIGS: dict[str, Any] = {
        "survey_year": 2018,
        "horizon": "1-Year",
        "survey": "person",
        "test_size": 0.1,
        "val_size": 0.0,
        "subsampling": None,
        "seed": 42,
    }

    def __init__(
        self,
        llm_clf: LLMClassifier,
        dataset: Dataset,
        config: BenchmarkConfig | None = None,
        *,
        model_name: str | None = None,
    ) -> None:
        self.classifier = llm_clf
        self.dataset = dataset
        self.config = config if config is not None else BenchmarkConfig()
        self.model_name = model_name if model_name is not None else llm_clf.model_name
        self.results: dict[str, Any] | None = None
        self.run_dir: Path | None = None
        self._results_root_dir = Path("results")

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
            dataset = Dataset(
                dataset.data,
                task_obj,
                test_size=dataset.test_size,
                val_size=dataset.val_size,
                seed=dataset.seed,
                provenance=dataset.provenance,
            )
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
        group_pairs(pairs, {c: dict(task_obj.column_texts[c].values) for c in pairs if c in task_obj.column_texts})
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
            loose = {
                "backend": backend != "transformers",
                "device": device is not None,
                "dtype": dtype is not None,
                "use_cache": not use_cache,
                "cache_dir": cache_dir is not None,
                "backend_options": bool(backend_options),
            }
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
            engine = Engine.from_loaded(
                model, tokenizer, device=device, use_cache=use_cache, cache_dir=cache_dir, **dict(backend_options or {})
            )
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
            threshold_rule=config.threshold_rule,
        )
        return cls(classifier, dataset, config, model_name=str(name))

    @classmethod
    def make_acs_benchmark(
        cls,
        task_name: str = "ACSIncome",
        *,
        model: Any = "default",
        tokenizer: Any = None,
        data_dir: str | Path | None = None,
        config: BenchmarkConfig | None = None,
        **kwargs: Any,
    ) -> Benchmark:
        """folktexts' name for :meth:`make_benchmark` on an ACS task (``task_name``, ``data_dir``)."""
        if not str(task_name).startswith("ACS"):
            raise ConfigError(
                f"make_acs_benchmark takes an ACS task, got {task_name!r}; use make_benchmark",
                parameter="task_name",
                value=task_name,
            )
        return cls.make_benchmark(
            task_name, model=model, tokenizer=tokenizer, data_dir=data_dir, config=config, **kwargs
        )

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

    # -- folktexts' names ------------------------------------------------------------
    @property
    def llm_clf(self) -> LLMClassifier:
        """The classifier (folktexts' name)."""
        return self.classifier

    @property
    def task(self) -> TaskMetadata:
        return self.dataset.task

    @property
    def results_root_dir(self) -> Path:
        """Root of the run folders: the last ``run``'s, or ``results``."""
        return self._results_root_dir

    @results_root_dir.setter
    def results_root_dir(self, path: str | Path) -> None:
        self._results_root_dir = Path(path).expanduser()

    @property
    def results_dir(self) -> Path:
        """This configuration's run folder under :attr:`results_root_dir` (it exists once the benchmark has run)."""
        return self.run_folder(self.results_root_dir)

    @property
    def configs_dict(self) -> dict[str, Any]:
        """folktexts' ``config`` entry of the results: the options and the model, task and data they ran on."""
        from folkscope.risk.results import configs_dict

        return configs_dict(self.describe() | {"fingerprint": self.fingerprint(), "model_name": self.model_name})

    def __hash__(self) -> int:
        """The number in ``results.bench-<hash>.json`` (from the fingerprint, so the same for the same run)."""
        from folkscope.risk.results import bench_hash

        return bench_hash(self.fingerprint())

    def save_results(self, results_root_dir: str | Path | None = None) -> Path:
        """Write folktexts' flat results (``results.bench-<hash>.json``) into the run folder; return its path.

        ``run`` writes it already; this writes it again, e.g. into another
        ``results_root_dir``.
        """
        from folkscope.risk.results import results_file_name

        if self.results is None:
            raise ConfigError("no results to save: run the benchmark first (bench.run(results_root_dir=...))")
        if results_root_dir is not None:
            self.results_root_dir = results_root_dir
        path = self.results_dir / results_file_name(self.fingerprint())
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, {k: v for k, v in self.results.items() if k not in _SECTIONS})
        return path

    def plot_results(self, *, show_plots: bool = True) -> dict[str, str]:
        """The run's plots (calibration, group calibration, histogram, ROC, ...): name -> PNG path.

        ``run`` draws them; a run without matplotlib at the time is redrawn
        now (``rescore``). ``show_plots`` displays them in a notebook.
        """
        if self.results is None or self.run_dir is None:
            raise ConfigError("no results to plot: run the benchmark first (bench.run(results_root_dir=...))")
        plots = sorted((self.run_dir / "plots").glob("*.png"))
        if not plots:
            rescore(self.run_dir)
            plots = sorted((self.run_dir / "plots").glob("*.png"))
        paths = {p.stem: p.as_posix() for p in plots}
        self.results["plots"] = paths
        if show_plots:
            _display(plots)
        return paths

    def _repr_html_(self) -> str | None:
        """In Jupyter, once run: the run's answer, headline metrics with intervals and caveats
        (:func:`folkscope.report.open_result`); before that, None, so the notebook shows the plain repr."""
        return None if self.run_dir is None else open_result(self.run_dir)._repr_html_()

    # -- running -------------------------------------------------------------------
    def run(self, results_root_dir: str | Path = "results", fit_threshold: int | bool = 0) -> dict[str, Any]:
        """Score the test split, evaluate, write the run folder; return the results.

        ``fit_threshold`` (folktexts' argument): fit the decision threshold on
        this many training rows (``True``: 100), as ``BenchmarkConfig.fit_threshold``.

        The folder appears whole or not at all (:class:`~folkscope.runs.RunFolder`):
        files are written to a staging folder beside it, renamed into place
        at the end. A run that fails or is killed leaves a finished folder of
        the same configuration as it was; rerunning continues the staging
        folder and its ``run.log``.

        Each caveat of the run (scores that collapse, strong order bias...,
        recorded in its manifest) is also raised as a
        :class:`~folkscope.errors.CaveatWarning`.
        """
        if fit_threshold:
            n = 100 if fit_threshold is True else fit_threshold
            self.config = replace(self.config, fit_threshold=n)  # checked there; part of the run's identity
        self.results_root_dir = results_root_dir
        run_dir = self.run_folder(results_root_dir)
        versions = package_versions()
        record = self.describe() | {
            "fingerprint": self.fingerprint(),
            "versions": versions,
            "model_name": self.model_name,
        }
        record["scheduling"] = {"batch_size": self.config.batch_size}  # recorded, outside the fingerprint
        with open_run(run_dir, manifest(record), config=record) as staging:
            flat, metrics = self._run_in(staging, record, run_dir)
            self.run_dir = run_dir  # kept before the caveat warnings, which a caller may have made errors
            self.results = {**flat, **metrics}
        return self.results

    def _run_in(self, run_dir: Path, record: dict[str, Any], final_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        n_fit = self.config.fit_threshold
        if n_fit:
            X_fit, y_fit = self.dataset.subsample(int(n_fit), seed=self.config.seed).get_train()
            self.classifier.fit(X_fit, y_fit, method=self.config.threshold_fit)
            log.info("fitted threshold %.4f on %d training rows", self.classifier.threshold, len(X_fit))
        X_test, y_test = self.dataset.get_test()
        scores = self.classifier.predict_proba(X_test)[:, 1]
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
                self.classifier,
                X_test,
                y_test,
                n_repeats=self.config.importance_repeats,
                max_rows=self.config.importance_rows,
                seed=self.config.seed,
            )
            atomic_write(run_dir / "feature_importance.csv", lambda fh: fh.write(importance.to_csv().encode("utf-8")))
        write_parquet(run_dir / "scores.parquet", table)
        scoring = report.to_dict() | {"threshold": self.classifier.threshold} | run_accounting(self.classifier.engine)
        scoring["threshold_fitted_on"] = self.classifier._threshold_fitted_on if n_fit else 0
        note = oom_note(scoring.get("backend_stats") or {})
        if note:
            scoring["notes"] = [*scoring.get("notes", []), note]
        metrics = evaluate_folder(run_dir, record, scoring)
        return write_folktexts(run_dir, record, scoring, final_dir), metrics

    def _recalibrated(self, test_scores: np.ndarray) -> dict[str, np.ndarray]:
        """Test scores after Platt and isotonic maps fitted on scored training rows."""
        from folkscope.metrics import IsotonicCalibrator, PlattCalibrator

        X_fit, y_fit = self.dataset.subsample(int(self.config.recalibrate or 0), seed=self.config.seed).get_train()
        fit_scores = self.classifier.predict_proba(X_fit)[:, 1]
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


#: folkscope's sections of bench.results (metrics.json); the other keys are folktexts' flat results
_SECTIONS = ("model", "baselines", "recalibrated", "scoring", "diagnostics", "selective_accuracy", "feature_importance")


def _display(plots: list[Path]) -> None:
    """Show PNGs in a notebook; elsewhere say where they are (there is no window to draw in)."""
    try:
        from IPython import get_ipython
        from IPython.display import Image, display
    except ImportError:
        get_ipython = None  # type: ignore[assignment]
    if get_ipython is None or get_ipython() is None:
        log.info("plots: %s", ", ".join(p.as_posix() for p in plots))
        return
    for path in plots:
        display(Image(filename=str(path)))
