"""Figures of the metric-validity study (:mod:`folkscope.allocation.study`), after the paper's figures 2-6.

- ``study.png``: each metric against ΔDP at k = 1 (one marker per mode),
  the correlation with ΔDP against k (one line per mode and metric), and per
  subtask each model's RMS RABBI beside its RMS ΔDP, one colour and marker
  per model with a legend (the fairness rankings of the paper's figure 5);
- ``ndcg.png``: mean NDCG@N against N at k = 1, one panel per mode and gap
  (ΔDP, ΔEO), one line per metric (the paper's figure 4);
- ``groups.png``: per group, the correlation of each metric with ΔDP over
  the (model, subtask) points, at k = 2 where the runs reach it (the
  paper's figure 6).

Kept apart from the study's numbers so that those never need matplotlib.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import predictive_validity, root_mean_square_bias
from folkscope.report.figures import plain_text, save_png, subplots_row

__all__ = ["groups_figure", "ndcg_figure", "study_figure"]

_FEATURE = "drawing the allocation study"
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_MODE_MARKERS = {"pointwise": "o", "pairwise": "s", "listwise": "^"}


def _style(models: list[str]) -> dict[str, tuple[str, str]]:
    """One (colour, marker) per model, distinct for up to 120 models: colour cycles by 10, marker by 12."""
    return {m: (f"C{i % 10}", _MARKERS[(i // 10 + i) % len(_MARKERS)]) for i, m in enumerate(models)}


def study_figure(points: pd.DataFrame, correlations: pd.DataFrame, out: Path) -> Path:
    """``study.png`` from the study's points and correlations (see the module docstring)."""
    fig, (scatter, lines, ranks) = subplots_row(3, width=4.8, height=4.2, feature=_FEATURE)
    at1 = points[points["k"] == points["k"].min()]
    for (mode, metric), rows in (
        at1.melt(id_vars=["mode", "dp_gap"], value_vars=["rabbi", "delta"], var_name="metric")
        .dropna()
        .groupby(["mode", "metric"], sort=True)
    ):
        scatter.scatter(
            rows["value"], rows["dp_gap"], s=14, marker=_MODE_MARKERS.get(mode, "o"), label=f"{metric} ({mode})"
        )
    scatter.axhline(0, color="grey", lw=0.6)
    scatter.axvline(0, color="grey", lw=0.6)
    scatter.set_xlabel("bias metric")
    scatter.set_ylabel("ΔDP at k = 1")
    scatter.legend(fontsize=7)
    scatter.set_title("Metric vs allocation gap")
    dp = correlations[correlations["gap"].str.strip("|") == "dp_gap"]
    for (mode, metric), rows in dp.groupby(["mode", "metric"], sort=True):
        lines.plot(rows["k"], rows["r"], marker=_MODE_MARKERS.get(mode, "o"), label=plain_text(f"{metric} ({mode})"))
    lines.set_xlabel("k")
    lines.set_ylabel("Pearson r with ΔDP")
    lines.legend(fontsize=7)
    lines.set_title("Predictive validity by k")
    rms = at1.groupby(["subtask", "mode", "model"]).agg(rabbi=("rabbi", _rms), gap=("dp_gap", _rms)).reset_index()
    cells = [f"{sub} ({mode})" for sub, mode in zip(rms["subtask"], rms["mode"])]
    rows_at = {cell: i for i, cell in enumerate(dict.fromkeys(cells))}
    style = _style(sorted(rms["model"].unique()))
    for model, part in rms.assign(cell=cells).groupby("model", sort=True):
        colour, marker = style[model]
        y = np.array([rows_at[c] for c in part["cell"]], dtype=float)
        ranks.scatter(part["rabbi"], y, s=36, color=colour, marker=marker, label=plain_text(model))
        ranks.scatter(part["gap"], y + 0.25, s=36, color=colour, marker=marker, facecolors="none")
    ranks.set_yticks(list(rows_at.values()), [plain_text(c) for c in rows_at], fontsize=7)
    ranks.set_xlabel("RMS over groups: filled RABBI, hollow ΔDP (k = 1)")
    ranks.legend(fontsize=7, title="model", title_fontsize=7)
    ranks.set_title("Models per subtask")
    return save_png(fig, out / "study.png")


def ndcg_figure(selection: pd.DataFrame, out: Path) -> Path:
    """``ndcg.png`` from the study's NDCG@N table (see the module docstring); a note where no subtask has two models."""
    k1 = selection[selection["k"] == selection["k"].min()] if len(selection) else selection
    panels = list(k1.groupby(["mode", "gap"], sort=False)) if len(k1) else []
    fig, axes = subplots_row(max(len(panels), 1), width=4.2, height=3.8, feature=_FEATURE)
    if not panels:
        axes[0].text(0.5, 0.5, "needs two or more models\non one subtask and mode", ha="center", va="center")
        axes[0].set_axis_off()
    for ax, ((mode, gap), rows) in zip(axes, panels):
        for metric, part in rows.groupby("metric", sort=False):
            ax.plot(part["n"], part["ndcg"], marker="o", label=plain_text(metric))
        ax.set_xticks(sorted(int(n) for n in rows["n"].unique()))  # N counts models: whole numbers only
        ax.set_xlabel("N (models)")
        ax.set_ylabel("mean NDCG@N")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{mode}, ideal ranking by {'ΔDP' if gap == 'dp_gap' else 'ΔEO'}", fontsize=9)
        ax.legend(fontsize=7)
    return save_png(fig, out / "ndcg.png")


def groups_figure(points: pd.DataFrame, out: Path) -> Path:
    """``groups.png`` from the study's points (see the module docstring): bars of r per group and metric, per mode."""
    k = 2 if (points["k"] == 2).any() else int(points["k"].min())
    at_k = points[points["k"] == k]
    modes = sorted(at_k["mode"].unique())
    fig, axes = subplots_row(max(len(modes), 1), width=5.0, height=4.0, feature=_FEATURE)
    for ax, mode in zip(axes, modes):
        cell = at_k[at_k["mode"] == mode]
        metrics = [m for m in ("jsd", "emd", "delta", "rabbi") if cell[m].notna().any()]
        groups = sorted(cell["group"].unique())
        width = 0.8 / max(len(metrics), 1)
        for j, metric in enumerate(metrics):
            r = np.array([_group_r(cell[cell["group"] == g], metric) for g in groups])
            x = np.arange(len(groups)) + j * width
            ax.bar(x, np.nan_to_num(r), width=width, label=plain_text(metric), color=f"C{j}")
            for xi in x[np.isnan(r)]:  # no correlation (under 3 points, or a constant metric): said, not left blank
                ax.text(xi, 0.02, "n/a", rotation=90, ha="center", va="bottom", fontsize=6, color=f"C{j}")
        ax.axhline(0, color="grey", lw=0.6)
        ax.set_xticks(
            np.arange(len(groups)) + 0.4 - width / 2, [plain_text(g) for g in groups], rotation=45, ha="right"
        )
        ax.set_ylabel(f"Pearson r with ΔDP, k = {k}")
        ax.set_title(f"Per group ({mode}; JSD, EMD against |ΔDP|)", fontsize=9)
        ax.legend(fontsize=7)
    return save_png(fig, out / "groups.png")


def _group_r(rows: pd.DataFrame, metric: str) -> float:
    keep = rows[[metric, "dp_gap"]].dropna()
    if len(keep) < 3:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # fewer than 3 points or constant: no bar
        return predictive_validity(
            keep[metric].to_numpy(), keep["dp_gap"].to_numpy(), absolute_gap=metric in ("jsd", "emd")
        ).statistic


def _rms(values: pd.Series) -> float:
    kept = values.dropna()
    return root_mean_square_bias(kept.to_numpy()) if len(kept) else float("nan")
