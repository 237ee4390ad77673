"""The metric-validity study across allocation runs: which bias metric predicts who gets picked?

Over finished run folders (several models and subtasks), every (model,
subtask, group) is a point (Chen, Ji & Evans 2024, section 5):

- predictive validity: for k = 1..K, the Pearson correlation of each bias
  metric with the allocation gap at that point: RABBI and δ with ΔDP;
  RABBI among qualified candidates with ΔEO; the unsigned JSD and EMD with
  |ΔDP|;
- model selection: per subtask, models ranked by the root mean square of a
  metric over their groups, against the ideal ranking by the RMS of their
  ΔDP gaps, scored by NDCG (relevance = reverse ideal rank, discount
  log2(i + 1)); averaged over subtasks with at least two models.

Runs are read through their manifests and declared tables
(:func:`folkscope.runs.read_table`), so any allocation run folder counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import read_json
from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import model_ranking_ndcg_score, predictive_validity, root_mean_square_bias
from folkscope.runs import read_manifest, read_table

__all__ = ["METRIC_GAPS", "StudyResult", "study", "study_points", "write_study"]

#: each bias metric, the gap it is judged against, and whether the gap is taken without sign
METRIC_GAPS = {
    "rabbi": ("dp_gap", False),
    "delta": ("dp_gap", False),
    "rabbi_qualified": ("eo_gap", False),
    "jsd": ("dp_gap", True),
    "emd": ("dp_gap", True),
}


@dataclass(frozen=True, eq=False)
class StudyResult:
    """The study's tables.

    Attributes
    ----------
    points : DataFrame
        One row per (run, group, k): model, subtask, mode, group, k, the metrics and gaps.
    correlations : DataFrame
        One row per (metric, k): gap, r, p_value, n.
    selection : DataFrame
        One row per (metric, k): mean NDCG over subtasks with two or more models, and how many.
    """

    points: pd.DataFrame
    correlations: pd.DataFrame
    selection: pd.DataFrame


def study_points(folders: Sequence[str | Path]) -> pd.DataFrame:
    """Every (run, group, k) point of the given allocation run folders."""
    frames = []
    for folder in folders:
        manifest = read_manifest(folder)
        if manifest.part != "allocation":
            raise DataError(f"{folder} is a {manifest.part} run, not an allocation run; pass allocation run folders")
        metrics = read_json(Path(folder) / manifest.tables["metrics"]["file"])
        bias = read_table(folder, "bias")
        selection = read_table(folder, "selection")
        joined = selection.merge(bias, on="group", how="inner")  # the reference group has no bias row
        joined.insert(0, "run", str(folder))
        joined.insert(1, "model", str(metrics.get("model")))
        joined.insert(2, "subtask", str(metrics.get("subtask")))
        joined.insert(3, "mode", str(metrics["config"]["mode"]))
        frames.append(joined)
    if not frames:
        raise DataError("no run folders given; pass the allocation runs to compare")
    return pd.concat(frames, ignore_index=True)


def study(folders: Sequence[str | Path]) -> StudyResult:
    """Predictive validity and model-selection NDCG of each bias metric over the given runs."""
    points = study_points(folders)
    corr_rows, sel_rows = [], []
    for k, at_k in points.groupby("k", sort=True):
        for metric, (gap, absolute) in METRIC_GAPS.items():
            keep = at_k[[metric, gap]].dropna()  # a metric its groups were too small for is NaN: not a point
            r = p_value = float("nan")
            if len(keep):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UndefinedMetricWarning)  # too few points: NaN, reported with n
                    res = predictive_validity(keep[metric].to_numpy(), keep[gap].to_numpy(), absolute_gap=absolute)
                r, p_value = res.statistic, res.pvalue
            corr_rows.append(
                {
                    "metric": metric,
                    "k": int(k),
                    "gap": f"|{gap}|" if absolute else gap,
                    "r": r,
                    "p_value": p_value,
                    "n": len(keep),
                }
            )
            scores = []
            for _, sub in at_k.groupby(["subtask", "mode"]):
                per_model = (
                    sub.groupby("model")
                    .agg(
                        metric_rms=(metric, lambda v: root_mean_square_bias(v.dropna()) if v.notna().any() else np.nan),
                        gap_rms=("dp_gap", lambda v: root_mean_square_bias(v.dropna()) if v.notna().any() else np.nan),
                    )
                    .dropna()
                )
                if len(per_model) >= 2:
                    scores.append(
                        model_ranking_ndcg_score(per_model["gap_rms"].to_numpy(), per_model["metric_rms"].to_numpy())
                    )
            sel_rows.append(
                {
                    "metric": metric,
                    "k": int(k),
                    "ndcg": float(np.mean(scores)) if scores else float("nan"),
                    "n_subtasks": len(scores),
                }
            )
    return StudyResult(points, pd.DataFrame(corr_rows), pd.DataFrame(sel_rows))


def write_study(result: StudyResult, output: str | Path) -> dict[str, Any]:
    """The study's tables as CSV and its figures (when matplotlib is there) in ``output``; returns what was written."""
    from folkscope._io import atomic_write
    from folkscope.errors import MissingDependencyError

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {}
    for name in ("points", "correlations", "selection"):
        frame = getattr(result, name)
        written[name] = str(atomic_write(out / f"{name}.csv", lambda fh, f=frame: f.to_csv(fh, index=False)))
    try:
        written["figure"] = str(_figure(result, out / "study.png"))
    except MissingDependencyError as exc:
        written["figure"] = f"not drawn: {exc}"
    return written


def _figure(result: StudyResult, path: Path) -> Path:
    from folkscope.report.figures import plain_text, save_png, subplots_row

    fig, (scatter, lines, ranks) = subplots_row(3, width=4.6, height=4.0, feature="drawing the allocation study")
    at1 = result.points[result.points["k"] == 1]
    for metric in ("rabbi", "delta"):
        scatter.scatter(at1[metric], at1["dp_gap"], s=14, label=metric)
    scatter.axhline(0, color="grey", lw=0.6)
    scatter.axvline(0, color="grey", lw=0.6)
    scatter.set_xlabel("bias metric")
    scatter.set_ylabel("ΔDP at k = 1")
    scatter.legend(fontsize=7)
    scatter.set_title("Metric vs allocation gap")
    for metric, rows in result.correlations.groupby("metric", sort=False):
        lines.plot(rows["k"], rows["r"], marker="o", label=plain_text(metric))
    lines.set_xlabel("k")
    lines.set_ylabel("Pearson r with the gap")
    lines.legend(fontsize=7)
    lines.set_title("Predictive validity by k")
    # per subtask (and mode), each model's RMS RABBI against its RMS allocation gap: the fairness ranking by each
    rms = at1.groupby(["subtask", "mode", "model"]).agg(rabbi=("rabbi", _rms), gap=("dp_gap", _rms)).reset_index()
    cells = [f"{sub} ({mode})" for sub, mode in zip(rms["subtask"], rms["mode"])]
    rows = {cell: i for i, cell in enumerate(dict.fromkeys(cells))}
    for model, part in rms.assign(cell=cells).groupby("model"):
        ranks.scatter(part["rabbi"], [rows[c] for c in part["cell"]], s=30, label=plain_text(model))
        ranks.scatter(part["gap"], [rows[c] + 0.2 for c in part["cell"]], s=30, marker="x", color="grey")
    ranks.set_yticks(list(rows.values()), [plain_text(c) for c in rows], fontsize=7)
    ranks.set_xlabel("RMS over groups (o RABBI, x ΔDP), k = 1")
    ranks.legend(fontsize=7)
    ranks.set_title("Models per subtask")
    return save_png(fig, path)


def _rms(values: pd.Series) -> float:
    kept = values.dropna()
    return root_mean_square_bias(kept.to_numpy()) if len(kept) else float("nan")
