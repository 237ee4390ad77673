"""Re-scoring a risk run from its ``scores.parquet``, without the model: metrics, plots, report, folktexts' files.

Everything here reads the scores table a run wrote, never a model: the
benchmark calls :func:`evaluate_folder` and :func:`write_folktexts` after
scoring, and :func:`rescore` calls them again on a finished folder (new
metric definitions, plots drawn later).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import write_json
from folkscope.errors import ConfigError, DataError
from folkscope.risk.caveats import run_caveats
from folkscope.risk.config import BenchmarkConfig
from folkscope.risk.diagnostics import score_diagnostics
from folkscope.runs import MANIFEST_FILE, Manifest, RunFolder, package_versions, record_caveats
from folkscope.tasks.columns import column_set

__all__ = ["REPLICATE_METRICS", "evaluate_folder", "group_pairs", "manifest", "rescore", "write_folktexts"]

log = logging.getLogger(__name__)
_RESULT_FILES = ("config.json", "scores.parquet", "metrics.json")


def write_folktexts(run_dir: Path, record: dict[str, Any], scoring: dict[str, Any], final_dir: Path) -> dict[str, Any]:
    """folktexts' results JSON and predictions CSV of a folder whose scores.parquet exists (:mod:`folkscope.risk.results`)."""
    from folkscope.risk.results import write_folktexts_files

    return write_folktexts_files(run_dir, pd.read_parquet(run_dir / "scores.parquet"), record, scoring, final_dir)


def evaluate_folder(run_dir: Path, record: dict[str, Any], scoring: dict[str, Any]) -> dict[str, Any]:
    """Metrics, plots and report of a run folder whose scores.parquet exists."""
    from folkscope.risk.evaluate import evaluate_baselines, evaluate_scores, selective_accuracy_data, to_jsonable
    from folkscope.risk.plots import make_all_plots
    from folkscope.risk.report import write_report

    table = pd.read_parquet(run_dir / "scores.parquet")
    groups = tuple(c for c in record["task"].get("sensitive_attributes", ("RAC1P", "SEX")) if c in table.columns)
    texts = column_set(record["task"].get("columns", "acs"))
    labels = {c: dict(texts[c].values) for c in groups if c in texts and texts[c].values}
    seed = int(record["benchmark_config"].get("seed", 42))
    n_boot = int(record["benchmark_config"].get("n_bootstrap", 1000))
    pairs = group_pairs(
        BenchmarkConfig.from_dict(record["benchmark_config"]).group_pairs()
        if "sce_pairs" in record["benchmark_config"]
        else {},
        labels,
    )
    pairs = {c: pair for c, pair in pairs.items() if c in groups}
    rule = str(record["benchmark_config"].get("threshold_rule", ">="))
    model_metrics = evaluate_scores(
        table,
        group_cols=groups,
        group_labels=labels,
        seed=seed,
        n_bootstrap=n_boot,
        threshold=float(scoring.get("threshold", 0.5)),
        threshold_rule=rule,
        group_pairs=pairs or None,
    )

    def extra(prefix: str, rename: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        cols = {
            rename.format(c.removeprefix(prefix)): table[c].to_numpy() for c in table.columns if c.startswith(prefix)
        }
        if not cols:
            return {}, {}
        return cols, evaluate_baselines(
            table, cols, group_cols=groups, group_labels=labels, seed=seed, n_bootstrap=n_boot, threshold_rule=rule
        )

    baseline_cols, baseline_metrics = extra("baseline_", "{}")
    recal_cols, recal_metrics = extra("recalibrated_", "model ({})")
    diagnostics = score_diagnostics(table)
    replicate_se = _replicate_standard_errors(table, float(scoring.get("threshold", 0.5)), rule)
    if replicate_se is not None and model_metrics.get("survey_weighted"):
        model_metrics["survey_weighted"]["replicate_standard_errors"] = replicate_se
    metrics = {
        "model": model_metrics,
        "baselines": baseline_metrics,
        "recalibrated": recal_metrics,
        "scoring": scoring,
        "diagnostics": diagnostics,
        "selective_accuracy": selective_accuracy_data(table),
    }
    importance_file = run_dir / "feature_importance.csv"
    importance = pd.read_csv(importance_file, index_col="column") if importance_file.is_file() else None
    if importance is not None:
        metrics["feature_importance"] = importance.to_dict(orient="index")
    for warning in diagnostics["warnings"]:  # in run.log; the console summary and the report show them as caveats
        log.info(warning)
    metrics = to_jsonable(metrics)
    write_json(run_dir / "metrics.json", metrics)
    record_caveats(run_dir, run_caveats(metrics))
    compared = {**recal_cols, **baseline_cols}
    notes = list(scoring.get("notes", []))
    plots: dict[str, str] = {}
    if importlib.util.find_spec("matplotlib") is None:  # the numbers and the report do not need it
        note = "Plots skipped: matplotlib is not installed (pip install 'folkscope[plots]'); `folkscope rescore RUN_DIR` draws them later."
        log.warning(note)
        notes.append(note)
    else:
        plots = make_all_plots(
            table,
            run_dir / "plots",
            baselines=compared or None,
            group_cols=groups,
            group_labels=labels,
            importance=importance,
        )
    write_report(
        run_dir,
        config=record,
        metrics=metrics,
        plots=plots,
        baselines={**recal_metrics, **baseline_metrics} or None,
        notes=notes,
    )
    return metrics


#: Survey-weighted metrics given design-based standard errors when the rows carry replicate weights.
REPLICATE_METRICS = ("ece", "brier", "roc_auc", "accuracy", "sce")


def _replicate_standard_errors(table: pd.DataFrame, threshold: float, rule: str) -> dict[str, Any] | None:
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
    out: dict[str, Any] = {
        "method": "successive difference replication, 80 replicate weights, SE = sqrt(4/80 * sum (theta_r - theta)^2)"
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # an undefined replicate gives NaN, reported as such
        for metric in REPLICATE_METRICS:
            fn = GROUP_METRICS[names[metric]]
            se = (
                replicate_standard_error(lambda ww, fn=fn: fn(y, p, ww, threshold, 10, rule), w, reps)
                if len(y)
                else float("nan")
            )
            out[metric] = None if not np.isfinite(se) else se
    return out


def group_pairs(
    pairs: Mapping[str, tuple[str, str]], labels: Mapping[str, Mapping[Any, str]]
) -> dict[str, tuple[Any, Any]]:
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


def manifest(record: Mapping[str, Any], **extra: Any) -> Manifest:
    """The run folder's manifest, from its ``config.json`` record."""
    config = {
        k: record[k]
        for k in ("task", "benchmark_config", "prompt_config", "prompt_config_name", "model_name")
        if k in record
    }
    return Manifest(
        part="risk",
        fingerprint=record["fingerprint"],
        config=config,
        engine=record.get("engine"),
        data=record.get("data"),
        versions=record.get("versions") or package_versions(),
        **extra,
    )


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
            manifest(record, created="").write(staging)
        scoring: dict[str, Any] = {}
        if (staging / "metrics.json").is_file():
            scoring = json.loads((staging / "metrics.json").read_text()).get("scoring", {})
        metrics = evaluate_folder(staging, record, scoring)
        write_folktexts(staging, record, scoring, run_dir)
        return metrics
