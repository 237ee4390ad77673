"""Evidence sweeps: a model's risk-score metrics as features are added one at a time.

The paper (Cruz, Hardt, Mendler-Dünner 2024, appendix A.4, figures A8-A9)
gives the model more and more of a person's features and follows how its
predictive signal (AUC) and calibration (ECE) change. :func:`evidence_sweep`
runs one ordinary benchmark per prefix of a feature order (``k = 1..n``
features; ``step=2`` adds two at a time, as the paper's figures do): the
task's own order, or an order the user gives, e.g. by permutation
importance (:func:`importance_order` reads a run's ``feature_importance.csv``).

Each step is a normal run with ``feature_subset`` set to its prefix, in its
own run folder: ``folkscope run --use-feature-subset <prefix>`` reproduces
it, and a rerun of the sweep gets every answer already computed back from
the engine's result cache. The step that shows every feature of the task in
the task's order is the plain full-feature run (same folder). The sweep's
table and plot go to ``<results_dir>/<task>/<model>/evidence-<hash8>/``,
beside the step run folders; the hash covers the order, the step size and
the full run's fingerprint (model, data, prompt and benchmark settings).
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._io import atomic_write
from folkscope._json import fingerprint, write_json
from folkscope.data.dataset import Dataset
from folkscope.engine import Engine
from folkscope.errors import ConfigError, UnknownColumnError
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.run import Benchmark
from folkscope.tasks.task import TaskMetadata, get_task

__all__ = ["evidence_sweep", "importance_order"]

log = logging.getLogger(__name__)

#: metrics of the sweep table, from ``metrics["model"]["unweighted"]``
SWEEP_METRICS = ("roc_auc", "ece", "brier", "accuracy")
TABLE_FILE, JSON_FILE, PLOT_FILE = "evidence_sweep.csv", "evidence_sweep.json", "evidence_sweep.png"

# make_benchmark's keywords that build the engine (used once); its others but these pick the rows (used at every step)
_ENGINE_KWARGS = frozenset({"tokenizer", "device", "dtype", "use_cache", "cache_dir", "backend_options"})
_OWN_KWARGS = frozenset({"task", "model", "config", "backend", "dataset"})


def _data_kwargs() -> frozenset[str]:
    """``data_dir``, ``states``, ``survey_year``, ``horizon``, ``data_file``, ...: read from make_benchmark itself."""
    params = inspect.signature(Benchmark.make_benchmark).parameters.values()
    named = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return frozenset(named - _ENGINE_KWARGS - _OWN_KWARGS)


def importance_order(source: str | Path | pd.DataFrame) -> list[str]:
    """Feature columns by importance, largest first, from a permutation-importance table.

    Parameters
    ----------
    source : path or DataFrame
        A ``feature_importance.csv`` (as a run with ``--feature-importance``
        writes it: a ``column`` column, sorted by importance), the run folder
        holding one, or the table itself (:func:`~folkscope.risk.importance.permutation_importance`
        output, indexed by column). With an ``importance`` column the rows
        are sorted by it (largest first, ties in file order); without one,
        the file's order is kept.

    Raises
    ------
    ConfigError
        The file is missing or unreadable, or has no ``column`` column.

    Examples
    --------
    >>> importance_order(pd.DataFrame({"column": ["SEX", "AGEP"], "importance": [0.01, 0.2]}))
    ['AGEP', 'SEX']
    """
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index() if "column" not in source.columns and source.index.name == "column" else source
        where = "the importance table"
    else:
        path = Path(source)
        if path.is_dir():
            path = path / "feature_importance.csv"
        where = str(path)
        if not path.is_file():
            raise ConfigError(
                f"importance file {path} does not exist; pass a run's feature_importance.csv (run with --feature-importance)",
                parameter="order",
                value=str(path),
            )
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(
                f"cannot read importance file {path}: {reason}", parameter="order", value=str(path)
            ) from None
    if "column" not in frame.columns:
        raise ConfigError(
            f"{where} has no 'column' column (it has: {', '.join(map(str, frame.columns))}); "
            "expected a feature_importance.csv of a run",
            parameter="order",
        )
    if "importance" in frame.columns:
        frame = frame.sort_values("importance", ascending=False, kind="stable", na_position="last")
    return [str(c) for c in frame["column"]]


def _check_order(order: Any, available: Sequence[str], task_name: str) -> tuple[str, ...]:
    """The validated feature order (one-line errors, before any data or model loads)."""
    if order is None or (isinstance(order, str) and order.strip() == "task"):
        return tuple(available)
    if isinstance(order, str):
        order = [c.strip() for c in order.split(",") if c.strip()]
    if isinstance(order, (pd.Index, pd.Series)):
        order = order.tolist()
    if not isinstance(order, Sequence) or isinstance(order, (bytes, bytearray)):
        raise ConfigError(
            f"order must be 'task' or a list of feature columns, got {type(order).__name__}",
            parameter="order",
            value=order,
        )
    bad = [c for c in order if not isinstance(c, str) or not c.strip()]
    if bad:
        raise ConfigError(f"order must list column names, got {bad[0]!r}", parameter="order", value=list(order))
    columns = [c.strip() for c in order]
    if not columns:
        raise ConfigError(
            "order is empty; name at least one feature column, or pass order='task'", parameter="order", value=[]
        )
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:
        raise ConfigError(
            f"order lists {', '.join(dict.fromkeys(twice))} more than once; each feature is added once",
            parameter="order",
            value=columns,
        )
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise UnknownColumnError(
            f"order names {', '.join(unknown)}, not among the features of task {task_name} "
            f"({', '.join(available)}); --use-feature-subset widens or narrows that set",
            parameter="order",
            value=unknown,
        )
    return tuple(columns)


def _sizes(n: int, step: int) -> list[int]:
    """Prefix lengths ``step, 2*step, ...``, always ending with ``n``."""
    sizes = list(range(step, n + 1, step))
    return sizes if sizes and sizes[-1] == n else [*sizes, n]


def _number(value: Any) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)  # "inf" (the JSON spelling) included
    except (TypeError, ValueError):
        return math.nan


def _step_row(
    k: int, added: Sequence[str], prefix: Sequence[str], run_dir: Path, metrics: Mapping[str, Any]
) -> dict[str, Any]:
    """One table row: the step, its run folder and the model's unweighted metrics (with their intervals)."""
    model = metrics.get("model") or {}
    section = model.get("unweighted") or {}
    overall = section.get("overall") or {}
    intervals = section.get("intervals") or {}
    row: dict[str, Any] = {
        "k": k,
        "added_feature": "+".join(added),
        "features": ",".join(prefix),
        "run_dir": str(run_dir),
    }
    for name in SWEEP_METRICS:
        row[name] = _number(overall.get(name))
        interval = intervals.get(name)
        if isinstance(interval, Mapping) and interval.get("low") is not None:
            row[f"{name}_low"] = _number(interval.get("low"))
            row[f"{name}_high"] = _number(interval.get("high"))
    summary = overall.get("score_summary") or {}
    row["score_mean"] = _number(summary.get("mean"))
    row["score_std"] = _number(summary.get("std"))
    counts = model.get("counts") or {}
    row["n_scored"] = counts.get("n_scored")
    row["nan_scores"] = counts.get("n_excluded")
    for name, result in (metrics.get("baselines") or {}).items():  # refitted on the same prefix of features
        base = (result.get("unweighted") or {}).get("overall") or {}
        for metric in ("roc_auc", "ece"):
            row[f"baseline_{name}_{metric}"] = _number(base.get(metric))
    return row


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    table = pd.DataFrame(rows)
    front = ["k", "added_feature", "features", "run_dir"]
    metric_cols = [c for m in SWEEP_METRICS for c in (m, f"{m}_low", f"{m}_high") if c in table.columns]
    rest = [c for c in table.columns if c not in front and c not in metric_cols]
    return table[[*front, *metric_cols, *rest]]


def _write_tables(sweep_dir: Path, table: pd.DataFrame, record: dict[str, Any]) -> None:
    atomic_write(sweep_dir / TABLE_FILE, lambda fh: fh.write(table.to_csv(index=False).encode("utf-8")))
    steps = table.to_dict(orient="records")
    for step in steps:
        step["features"] = step["features"].split(",")
    write_json(sweep_dir / JSON_FILE, {**record, "steps": steps})


def _fresh_stats(engine: Engine) -> None:
    """Start a step's request and traffic counts at zero, so each run folder records its own, as a lone run would."""
    from folkscope.engine.runner import EngineStats

    engine.stats = EngineStats()
    backend = engine.backend
    try:
        backend.stats = type(backend.stats)()
    except (AttributeError, TypeError):  # a backend without resettable counts keeps its running totals
        pass


def evidence_sweep(
    task: TaskMetadata | str,
    *,
    model: Any,
    order: str | Sequence[str] | None = None,
    config: BenchmarkConfig | None = None,
    results_dir: str | Path,
    backend: str = "transformers",
    dataset: Dataset | None = None,
    step: int = 1,
    **make_benchmark_kwargs: Any,
) -> pd.DataFrame:
    """Benchmark a model with more and more features; one table row per step.

    Parameters
    ----------
    task : TaskMetadata or str
    model : str, EngineConfig, Engine or a loaded transformers model
        As :meth:`Benchmark.make_benchmark <folkscope.risk.Benchmark.make_benchmark>`
        takes it. It is loaded once; every step reuses the same engine.
    order : None, "task" or sequence of str
        The order features are added in. ``None``/``"task"``: the task's order
        (or ``config.feature_subset``'s, which sets the features available).
        A list (or a comma-separated string): those columns, first to last;
        it may leave features out (the sweep then ends with the last listed).
        :func:`importance_order` turns a permutation-importance file into one.
    config : BenchmarkConfig, optional
        Settings of every step (or pass its fields as keywords);
        ``feature_subset`` is set per step.
    results_dir : path
        Root of the run folders (``bench.run(results_dir)``) and of the sweep folder.
    backend : str
        Engine backend of a model handle (``"transformers"``, ``"vllm"``, ``"litellm"``, ``"fake"``).
    dataset : Dataset, optional
        Rows to use instead of loading the task's (as in ``make_benchmark``).
    step : int, default 1
        Features added per step (the paper's figures A8-A9 add 2); the last
        step always shows the whole order.
    **make_benchmark_kwargs
        Other :meth:`~folkscope.risk.Benchmark.make_benchmark` keywords:
        ``tokenizer``, ``device``, ``dtype``, ``use_cache``, ``cache_dir``,
        ``backend_options`` (engine, used once), ``data_dir``, ``states``,
        ``survey_year``, ``horizon``, ``data_file``, ... (rows, every step), or
        :class:`~folkscope.risk.BenchmarkConfig` fields when ``config`` is not given.

    Returns
    -------
    pandas.DataFrame
        One row per step: ``k`` (features shown), ``added_feature`` (the
        step's new features, joined by ``+``), ``features`` (comma-separated
        prefix), ``run_dir``, then the model's unweighted ``roc_auc``, ``ece``,
        ``brier``, ``accuracy`` (each with ``_low``/``_high`` 95% bootstrap
        bounds when ``n_bootstrap > 0``), ``score_mean``, ``score_std``,
        ``n_scored``, ``nan_scores`` and, with baselines, their AUC and ECE
        on the same features (``baseline_<name>_roc_auc``, ...).
        ``table.attrs`` holds ``sweep_dir``, ``plot`` (None when matplotlib is
        missing), ``task``, ``model``, ``order`` and ``available`` (the
        features the order was drawn from).

    Raises
    ------
    ConfigError
        An empty order, a repeated or unknown column, a bad ``step``,
        ``config`` given together with config keywords: before any data or
        model loads. Data problems of any step (a missing column) are found
        before the model loads too: the full order's data is loaded first.

    See Also
    --------
    importance_order : an order from a run's permutation importance.
    folkscope.risk.plots.plot_evidence_sweep : the sweep's plot.

    References
    ----------
    Cruz, Hardt, Mendler-Dünner (2024), "Evaluating language models as risk
    scores", appendix A.4 (figures A8 and A9: scores and metrics with
    increasing evidence).

    Examples
    --------
    >>> import tempfile
    >>> from folkscope.risk import evidence_sweep
    >>> table = evidence_sweep("NISTIncome", model="demo", backend="fake", order=["EDU", "AGEP"],
    ...                        results_dir=tempfile.mkdtemp(), subsampling=0.03, n_bootstrap=10,
    ...                        baselines=False, use_cache=False)
    >>> table[["k", "added_feature", "features"]].values.tolist()
    [[1, 'EDU', 'EDU'], [2, 'AGEP', 'EDU,AGEP']]
    >>> sorted(p.name for p in Path(table.attrs["sweep_dir"]).iterdir() if p.suffix != ".png")
    ['evidence_sweep.csv', 'evidence_sweep.json']
    """
    config_fields = {f.name for f in fields(BenchmarkConfig)}
    data_names = _data_kwargs()
    unknown = sorted(set(make_benchmark_kwargs) - _ENGINE_KWARGS - data_names - config_fields)
    if unknown:
        raise TypeError(f"evidence_sweep() got an unexpected keyword argument {unknown[0]!r}")
    config_kwargs = {k: v for k, v in make_benchmark_kwargs.items() if k in config_fields}
    if config is not None and config_kwargs:
        raise ConfigError("pass either config= or BenchmarkConfig fields as keywords, not both", parameter="config")
    config = config or BenchmarkConfig(**config_kwargs)
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise ConfigError(f"step must be a positive integer, got {step!r}", parameter="step", value=step)
    base = get_task(task).with_wording(config.wording)
    available = base.with_features(list(config.feature_subset)).features if config.feature_subset else base.features
    columns = _check_order(order, available, base.name)
    engine_kwargs = {k: v for k, v in make_benchmark_kwargs.items() if k in _ENGINE_KWARGS}
    data_kwargs = {k: v for k, v in make_benchmark_kwargs.items() if k in data_names}

    sizes = _sizes(len(columns), step)
    # the prefix equal to the available features in their order is the plain run of `config` (same run folder)
    configs = [
        config if columns[:n] == tuple(available) else replace(config, feature_subset=columns[:n]) for n in sizes
    ]
    # the whole order first: its rows are checked (every column present) before the model loads
    last = Benchmark.make_benchmark(
        task, model=model, backend=backend, config=configs[-1], dataset=dataset, **engine_kwargs, **data_kwargs
    )
    engine = last.classifier.engine
    own_engine = not isinstance(model, Engine)
    sweep_id = fingerprint({"order": list(columns), "step": step, "full_run": last.fingerprint()})
    sweep_dir = last.run_folder(results_dir).parent / f"evidence-{sweep_id[:8]}"
    record: dict[str, Any] = {
        "task": base.name,
        "model": last.model_name,
        "order": list(columns),
        "available": list(available),
        "step": step,
        "full_run_fingerprint": last.fingerprint(),
        "benchmark_config": {k: v for k, v in config.to_dict().items() if k != "feature_subset"},
    }

    rows: list[dict[str, Any]] = []
    for i, (n, step_config) in enumerate(zip(sizes, configs)):
        if i == len(sizes) - 1:
            bench = last
        else:
            bench = Benchmark.make_benchmark(task, model=engine, config=step_config, dataset=dataset, **data_kwargs)
        if own_engine:
            _fresh_stats(engine)
        added = columns[sizes[i - 1] if i else 0 : n]
        log.info(
            "evidence sweep %s: step %d/%d, %d feature(s), adding %s", base.name, i + 1, len(sizes), n, "+".join(added)
        )
        metrics = bench.run(results_dir)
        rows.append(_step_row(n, added, columns[:n], bench.run_dir or bench.run_folder(results_dir), metrics))
        _write_tables(
            sweep_dir, _table(rows), {**record, "complete": i == len(sizes) - 1}
        )  # a long sweep shows progress

    table = _table(rows)
    plot: Path | None = None
    if importlib.util.find_spec("matplotlib") is None:
        log.warning("evidence sweep plot skipped: matplotlib is not installed (pip install 'folkscope[plots]')")
    else:
        from folkscope.risk.plots import plot_evidence_sweep

        plot = plot_evidence_sweep(
            table, sweep_dir / PLOT_FILE, title=f"Evidence sweep: {base.name}, {last.model_name}"
        )
    table.attrs.update(
        sweep_dir=str(sweep_dir),
        plot=None if plot is None else str(plot),
        task=base.name,
        model=last.model_name,
        order=list(columns),
        available=list(available),
    )
    return table
