"""The metric-validity study across allocation runs: which bias metric predicts who gets picked?

Over finished run folders (several models and subtasks), every (model,
subtask, group) is a point (Chen, Ji & Evans 2024, section 5), and every
number is computed separately per scoring mode (pointwise, pairwise,
listwise), as the paper's table 1 splits them:

- predictive validity (table 1): for k = 1..K, the Pearson correlation of
  each bias metric with ΔDP and with ΔEO. Against ΔEO each metric is the one
  computed among qualified candidates only (``rabbi_qualified``,
  ``delta_qualified``, ...; paper section 4.4); the unsigned JSD and EMD are
  compared with |ΔDP| and |ΔEO|, and, comparing score distributions, only
  for pointwise runs (the paper's table has none for pairwise);
- model selection (section 5.2): per subtask, models ranked ascending by
  the root mean square of a metric over their groups, against the ideal
  ranking by the RMS of their allocation gaps, scored by NDCG@N for N = 1
  .. the number of models (relevance of a model = its reverse rank in the
  ideal ranking, discount log2(i + 1),
  :func:`folkscope.metrics.model_ranking_ndcg_score`; a subtask with fewer
  models than N counts with all of them), averaged over subtasks with at
  least two models.

Two things make such a study say less than it seems, and both are warned
about (:class:`~folkscope.errors.CaveatWarning`) and written down
(``notes.txt``): two runs of one model, mode and subtask (their points are
counted together, as if one model had been asked twice as often), and
models whose bias measurements are all identical (every ranking of them is
trivially ideal: a fake backend that ignores the model name, or one model
run under several names).

Runs are read through their manifests and declared tables
(:func:`folkscope.runs.read_table`), so any allocation run folder counts;
columns a folder from an older version lacks are empty, not errors.
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
from folkscope.errors import CaveatWarning, DataError, UndefinedMetricWarning
from folkscope.metrics import model_ranking_ndcg_score, predictive_validity, root_mean_square_bias
from folkscope.runs import read_manifest, read_table

__all__ = ["GAPS", "METRIC_GAPS", "StudyResult", "metric_column", "study", "study_points", "write_study"]

#: each bias metric: the column compared with ΔEO (the metric among qualified candidates) and whether it has no sign
METRIC_GAPS = {
    "jsd": ("jsd_qualified", True),
    "emd": ("emd_qualified", True),
    "delta": ("delta_qualified", False),
    "rabbi": ("rabbi_qualified", False),
}
#: the allocation gaps the metrics are judged against (columns of the selection table)
GAPS = ("dp_gap", "eo_gap")
#: distances between score distributions: the paper compares them for pointwise runs only
_DISTRIBUTIONS = ("jsd", "emd")
_MODE_ORDER = {"pointwise": 0, "pairwise": 1, "listwise": 2}


def metric_column(metric: str, gap: str) -> str:
    """The bias column compared with ``gap``: the metric itself for ΔDP, among qualified candidates for ΔEO.

    Examples
    --------
    >>> metric_column("rabbi", "dp_gap"), metric_column("rabbi", "eo_gap")
    ('rabbi', 'rabbi_qualified')
    """
    return metric if gap == "dp_gap" else METRIC_GAPS[metric][0]


def _metrics_of(mode: str) -> list[str]:
    return [m for m in METRIC_GAPS if mode == "pointwise" or m not in _DISTRIBUTIONS]


@dataclass(frozen=True, eq=False)
class StudyResult:
    """The study's tables.

    Attributes
    ----------
    points : DataFrame
        One row per (run, group, k): run, model, subtask, mode, group, k, the metrics and gaps.
    correlations : DataFrame
        One row per (mode, metric, gap, k): the column compared, r, p_value, n.
    table1 : DataFrame
        The paper's table 1: one row per (k, mode, metric), Pearson r (p-value, n) with ΔDP and with ΔEO.
    selection : DataFrame
        One row per (mode, metric, gap, k, N): mean NDCG@N over subtasks with two or more models, and how many.
    notes : tuple of str
        Why the numbers may say less than they seem (merged runs, identical models); also warned about.
    """

    points: pd.DataFrame
    correlations: pd.DataFrame
    table1: pd.DataFrame
    selection: pd.DataFrame
    notes: tuple[str, ...] = ()


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
    points = pd.concat(frames, ignore_index=True)
    wanted = [*GAPS, *METRIC_GAPS, *(column for column, _ in METRIC_GAPS.values())]
    for column in wanted:  # older folders (or runs without qualified candidates) lack some
        if column not in points:
            points[column] = np.nan
    return points


def study(folders: Sequence[str | Path]) -> StudyResult:
    """Predictive validity (table 1) and model-selection NDCG@N of each bias metric, per mode, over the given runs.

    Warns (:class:`~folkscope.errors.CaveatWarning`) when runs of one model,
    mode and subtask are merged, or when all models on a subtask measure
    identical bias; the same sentences are in :attr:`StudyResult.notes`.
    """
    points = study_points(folders)
    notes = _merged_runs(points) + _identical_models(points)
    for note in notes:
        warnings.warn(note, CaveatWarning, stacklevel=2)
    correlations = _correlations(points)
    return StudyResult(points, correlations, _table1(correlations), _selection(points), tuple(notes))


def _correlations(points: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (mode, k), at_k in _by_mode_and_k(points):
        for metric in _metrics_of(mode):
            absolute = METRIC_GAPS[metric][1]
            for gap in GAPS:
                column = metric_column(metric, gap)
                keep = at_k[[column, gap]].dropna()  # a metric its groups were too small for is NaN: not a point
                r = p_value = float("nan")
                if len(keep):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UndefinedMetricWarning)  # too few points: NaN, with n
                        res = predictive_validity(keep[column].to_numpy(), keep[gap].to_numpy(), absolute_gap=absolute)
                    r, p_value = res.statistic, res.pvalue
                rows.append(
                    {
                        "mode": mode,
                        "metric": metric,
                        "k": int(k),
                        "gap": f"|{gap}|" if absolute else gap,
                        "column": column,
                        "r": r,
                        "p_value": p_value,
                        "n": len(keep),
                    }
                )
    return pd.DataFrame(rows, columns=["mode", "metric", "k", "gap", "column", "r", "p_value", "n"])


def _table1(correlations: pd.DataFrame) -> pd.DataFrame:
    """The correlations laid out as the paper's table 1: one row per (k, mode, metric), ΔDP and ΔEO side by side."""
    keys = ["k", "mode", "metric"]
    sides = []
    for gap in GAPS:
        part = correlations[correlations["gap"].str.strip("|") == gap]
        sides.append(part[[*keys, "r", "p_value", "n"]].rename(columns=lambda c, g=gap: c if c in keys else f"{c}_{g}"))
    table = sides[0].merge(sides[1], on=keys, how="outer")
    order = {m: i for i, m in enumerate(METRIC_GAPS)}
    return table.sort_values(
        keys,
        key=lambda col: col.map(_MODE_ORDER) if col.name == "mode" else col.map(order) if col.name == "metric" else col,
    ).reset_index(drop=True)


def _selection(points: pd.DataFrame) -> pd.DataFrame:
    """NDCG@N of the model ranking by each metric against the ideal ranking by each gap, per mode and k."""
    columns = ["mode", "metric", "gap", "k", "n", "ndcg", "n_subtasks"]
    rows = []
    for (mode, k), at_k in _by_mode_and_k(points):
        for metric in _metrics_of(mode):
            for gap in GAPS:
                column = metric_column(metric, gap)
                subtasks = []
                for _, sub in at_k.groupby("subtask", sort=True):
                    per_model = (
                        sub.groupby("model").agg(metric_rms=(column, _rms), gap_rms=(gap, _rms)).dropna()
                    )  # a model without a value for the metric or the gap cannot be ranked
                    if len(per_model) >= 2:
                        subtasks.append(per_model)
                for n in range(1, max((len(s) for s in subtasks), default=0) + 1):
                    scores = [
                        model_ranking_ndcg_score(s["gap_rms"].to_numpy(), s["metric_rms"].to_numpy(), n=min(n, len(s)))
                        for s in subtasks
                    ]
                    rows.append(
                        {
                            "mode": mode,
                            "metric": metric,
                            "gap": gap,
                            "k": int(k),
                            "n": n,
                            "ndcg": float(np.mean(scores)),
                            "n_subtasks": len(scores),
                        }
                    )
    return pd.DataFrame(rows, columns=columns)


def _by_mode_and_k(points: pd.DataFrame) -> list[tuple[tuple[str, int], pd.DataFrame]]:
    groups = list(points.groupby(["mode", "k"], sort=True))
    return sorted(groups, key=lambda item: (_MODE_ORDER.get(item[0][0], 9), item[0][1]))


def _merged_runs(points: pd.DataFrame) -> list[str]:
    """One sentence per (model, mode, subtask) that more than one run folder contributes to."""
    runs = points.groupby(["model", "mode", "subtask"], sort=True)["run"].unique()
    return [
        f"{len(folders)} runs of model {model!r} ({mode}, subtask {subtask!r}) are merged: their points count "
        "together, as if one model had been asked that many times; pass one run per model, mode and subtask "
        f"({', '.join(sorted(map(str, folders)))})"
        for (model, mode, subtask), folders in runs.items()
        if len(folders) > 1
    ]


def _identical_models(points: pd.DataFrame) -> list[str]:
    """One sentence per (mode, subtask) whose two or more models measure exactly the same bias in every group."""
    notes = []
    first = points[points["k"] == points["k"].min()]
    for (mode, subtask), cell in first.groupby(["mode", "subtask"], sort=True):
        values = cell.set_index(["model", "group"])[["rabbi", "delta"]].round(12)
        per_model = [frame.droplevel("model").sort_index() for _, frame in values.groupby(level="model")]
        if len(per_model) >= 2 and all(p.equals(per_model[0]) for p in per_model[1:]):
            notes.append(
                f"all {len(per_model)} models give identical bias measurements ({mode}, subtask {subtask!r}): "
                "ranking them is meaningless (NDCG is trivially 1); are they one model under several names?"
            )
    return notes


def _rms(values: pd.Series) -> float:
    kept = values.dropna()
    return root_mean_square_bias(kept.to_numpy()) if len(kept) else float("nan")


def write_study(result: StudyResult, output: str | Path) -> dict[str, Any]:
    """The study's tables as CSV, its notes and its figures (when matplotlib is there) in ``output``.

    Returns what was written, name -> path (or why a figure was not drawn).
    """
    from folkscope._io import atomic_write
    from folkscope.allocation.study_figures import groups_figure, ndcg_figure, study_figure
    from folkscope.errors import MissingDependencyError

    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Any] = {}
    for name in ("points", "correlations", "table1", "selection"):
        frame = getattr(result, name)
        written[name] = str(atomic_write(out / f"{name}.csv", lambda fh, f=frame: f.to_csv(fh, index=False)))
    if result.notes:
        text = "".join(f"caveat: {note}\n" for note in result.notes).encode()
        written["notes"] = str(atomic_write(out / "notes.txt", lambda fh: fh.write(text)))
    figures = {
        "figure": lambda: study_figure(result.points, result.correlations, out),
        "ndcg_figure": lambda: ndcg_figure(result.selection, out),
        "groups_figure": lambda: groups_figure(result.points, out),
    }
    for name, draw in figures.items():
        try:
            written[name] = str(draw())
        except MissingDependencyError as exc:
            written[name] = f"not drawn: {exc}"
    return written
