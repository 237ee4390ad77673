"""folktexts' results files in a run folder: the flat results and the predictions CSV.

A folktexts user reads ``results["ece"]`` from ``Benchmark.run()``, finds
``results.bench-<hash>.json`` beside ``<dataset>.test_predictions.csv`` and
loads them with their own scripts. Every run folder holds both, next to
folkscope's richer ``metrics.json`` (overall, per group and weighted, with
intervals). The flat numbers are :func:`folkscope.metrics.evaluate_predictions`
on the scored test rows, at the run's threshold and rule, with the first
group column of the task as folktexts' ``sensitive_attribute`` (RAC1P for the
ACS tasks, as there). They are written from ``scores.parquet`` alone, so
``folkscope rescore`` writes them again.
"""

from __future__ import annotations

import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_write
from folkscope._json import to_jsonable, write_json
from folkscope.errors import UndefinedMetricWarning

__all__ = [
    "bench_hash",
    "configs_dict",
    "flat_results",
    "predictions_file_name",
    "results_file_name",
    "write_folktexts_files",
]


def bench_hash(fingerprint: str) -> int:
    """The run's number in folktexts' file names: the first 60 bits of its fingerprint (``hash(bench)`` gives it back)."""
    return int(fingerprint[:15], 16)


def results_file_name(fingerprint: str) -> str:
    """``results.bench-<hash>.json``, folktexts' name of the flat results."""
    return f"results.bench-{bench_hash(fingerprint)}.json"


def predictions_file_name(task_name: str) -> str:
    """``<task>.test_predictions.csv``, folktexts' name of the test predictions."""
    return f"{task_name}.test_predictions.csv"


def configs_dict(record: dict[str, Any]) -> dict[str, Any]:
    """folktexts' ``config`` entry: the options, then what model, task and data they ran on."""
    task = record.get("task") or {}
    data = record.get("data") or {}
    return {
        **(record.get("benchmark_config") or {}),
        "model_name": record.get("model_name"),
        "task_name": task.get("name"),
        "dataset_name": data.get("task", task.get("name")),
        "dataset_subsampling": (data.get("subsample") or {}).get("size"),
        "prompt_config_name": record.get("prompt_config_name"),
        "fingerprint": record.get("fingerprint"),
    }


def flat_results(
    table: pd.DataFrame, record: dict[str, Any], scoring: dict[str, Any], final_dir: Path
) -> dict[str, Any]:
    """folktexts' flat results dictionary of a run's scores table.

    Rows without a score are left out of every number and counted in
    ``n_unscored`` (folktexts has no such rows); an undefined metric (the
    AUC of one class) is None.
    """
    from folkscope.metrics import evaluate_predictions

    config = record.get("benchmark_config") or {}
    groups = (record.get("task") or {}).get("sensitive_attributes") or []
    sensitive = groups[0] if groups and groups[0] in table.columns else None
    scores = table["risk_score"].to_numpy(dtype=float)
    scored = ~np.isnan(scores)
    threshold = float(scoring.get("threshold", 0.5))
    out: dict[str, Any] = {"threshold": threshold, "n_samples": 0, "model_name": record.get("model_name")}
    if scored.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # undefined values are None, as metrics.json says
            out = evaluate_predictions(
                table["label"].to_numpy()[scored],
                scores[scored],
                threshold=threshold,
                model_name=record.get("model_name"),
                sensitive_attribute=None if sensitive is None else table[sensitive].to_numpy()[scored],
                threshold_rule=str(config.get("threshold_rule", ">=")),
            )
    out["n_unscored"] = int((~scored).sum())
    out["threshold_rule"] = str(config.get("threshold_rule", ">="))
    out["threshold_fitted_on"] = int(scoring.get("threshold_fitted_on", 0))
    if sensitive is not None:
        out["sensitive_attribute"] = sensitive
    task_name = (record.get("task") or {}).get("name", "task")
    out["predictions_path"] = (final_dir / predictions_file_name(task_name)).as_posix()
    out["config"] = configs_dict(record)
    out["benchmark_hash"] = bench_hash(record["fingerprint"])
    out["results_dir"] = final_dir.as_posix()
    out["results_root_dir"] = final_dir.parents[2].as_posix() if len(final_dir.parents) > 2 else final_dir.as_posix()
    out["current_time"] = datetime.now().strftime("%Y.%m.%d-%H.%M.%S")
    return to_jsonable(out)  # type: ignore[no-any-return]


def write_folktexts_files(
    run_dir: Path, table: pd.DataFrame, record: dict[str, Any], scoring: dict[str, Any], final_dir: Path
) -> dict[str, Any]:
    """Write the flat results JSON and the predictions CSV into ``run_dir`` (whole files); return the flat results."""
    flat = flat_results(table, record, scoring, final_dir)
    task_name = (record.get("task") or {}).get("name", "task")
    predictions = pd.DataFrame(
        {"risk_score": table["risk_score"].to_numpy(), "label": table["label"].to_numpy()},
        index=pd.Index(table["row_id"].to_numpy(), name="row_id"),
    )
    atomic_write(run_dir / predictions_file_name(task_name), lambda fh: fh.write(predictions.to_csv().encode("utf-8")))
    write_json(run_dir / results_file_name(record["fingerprint"]), flat)
    return flat
