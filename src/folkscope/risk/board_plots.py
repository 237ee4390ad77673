"""The leaderboard's risk figures across runs: ECE against AUC, and each run's calibration and score spread.

Drawing only, like :mod:`folkscope.risk.plots` (whose reliability curve these
panels reuse): the numbers come from :mod:`folkscope.risk.evaluate`. Built for
many runs at once, so nothing overprints: calibration and score histograms
are small multiples, one panel per run, and the scatter numbers its points
(placed so no two numbers overlap) with a key beside the axes.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.report.figures import new_figure, place_point_labels, plain_text, save_png, subplots_grid
from folkscope.risk.evaluate import calibration_data, histogram_data
from folkscope.risk.plots import draw_reliability, square_axes

__all__ = ["ece_auc_figure", "plot_ece_auc", "plot_overlaid_calibration", "plot_score_histograms"]

_FEATURE = "drawing the leaderboard's risk figures"


def _wrapped(text: str, width: int = 34) -> str:
    """A panel title on lines of at most ``width`` characters, so long model and prompt names stay in their panel."""
    return "\n".join(textwrap.wrap(plain_text(text), width)) or plain_text(text)


def plot_overlaid_calibration(
    runs: Mapping[str, pd.DataFrame], path: str | os.PathLike[str], *, n_bins: int = 10, title: str | None = None
) -> Path:
    """Reliability curves of several runs as small multiples on shared axes (equal-width bins, 95% Wilson bands).

    One panel per run: five curves with their bands on one set of axes cross
    and hide each other, while panels side by side compare at a glance.

    Parameters
    ----------
    runs : mapping of label -> scores table
        Each run's ``scores.parquet`` (``label``, ``risk_score``).
    """
    fig, axes = subplots_grid(len(runs), width=3.0, height=3.2, feature=_FEATURE)
    for ax, (name, scores) in zip(axes, runs.items(), strict=True):
        data = calibration_data(scores, n_bins=n_bins, strategy="uniform")
        n = int(data["overall"]["count"].sum())
        draw_reliability(ax, data["overall"], band=True)
        square_axes(ax, "mean risk score in bin", "observed positive rate")
        ax.set_title(_wrapped(f"{name}, n={n:,}"), fontsize=7)
        ax.label_outer()
    fig.suptitle(plain_text(title or "Calibration"))
    return save_png(fig, path)


def plot_score_histograms(
    runs: Mapping[str, pd.DataFrame], path: str | os.PathLike[str], *, bins: int = 20, title: str | None = None
) -> Path:
    """Each run's risk-score histogram in its own panel, on shared axes, so spreads compare at a glance."""
    fig, axes = subplots_grid(len(runs), width=3.0, height=2.8, feature=_FEATURE)
    for ax, (name, scores) in zip(axes, runs.items(), strict=True):
        data = histogram_data(scores, bins=bins)
        ax.stairs(data["overall"] / max(data["n"], 1), data["edges"], fill=True, alpha=0.7)
        ax.set_title(_wrapped(name), fontsize=7)
        ax.set(xlim=(0, 1), xlabel="risk score", ylabel="share of rows")
        ax.grid(alpha=0.3)
        ax.label_outer()
    fig.suptitle(plain_text(title or "Risk score distributions"))
    return save_png(fig, path)


def ece_auc_figure(points: pd.DataFrame, *, title: str | None = None) -> Any:
    """The figure :func:`plot_ece_auc` saves, returned unsaved so its labels can be measured.

    Each point is numbered, the numbers placed so that none overlaps another
    (:func:`folkscope.report.figures.place_point_labels`), and a key beside the
    axes says which model, prompt and task each number is: names written at
    the points overprinted each other wherever models score alike.
    """
    kinds = points["kind"] if "kind" in points else pd.Series("model", index=points.index)
    shown = points.dropna(subset=["AUC", "ECE"])
    several_tasks = shown["task"].nunique() > 1
    entries = []
    for i, (idx, row) in enumerate(shown.iterrows(), start=1):
        name = str(row["model"])
        prompt = row.get("prompt")
        name += f" ({prompt})" if isinstance(prompt, str) and prompt else ""
        name += " (baseline)" if kinds.loc[idx] == "baseline" else ""
        name += f", {row['task']}" if several_tasks else ""
        entries.append(textwrap.fill(f"{i}. {plain_text(name)}", 58, subsequent_indent="    "))
    key_text = "\n".join(entries)
    # tall enough for the key: about 0.14 inch a line at 7 points
    fig = new_figure(width=10.0, height=max(5.0, 1.0 + 0.14 * key_text.count("\n")), feature=_FEATURE)
    ax, key = fig.subplots(1, 2, width_ratios=(3, 2))
    key.axis("off")
    for task, sub in shown.groupby("task", sort=True):
        base = kinds.loc[sub.index] == "baseline"
        (dots,) = ax.plot(sub.loc[~base, "AUC"], sub.loc[~base, "ECE"], "o", ms=6, label=plain_text(task))
        ax.plot(sub.loc[base, "AUC"], sub.loc[base, "ECE"], "o", ms=6, mfc="none", color=dots.get_color())
    ax.set(xlabel="AUC (higher is better)", ylabel="ECE (lower is better)", xlim=(0.4, 1.0))
    top = float(shown["ECE"].max()) if len(shown) else 0.0
    ax.set_ylim(0, max(top * 1.25, 0.05))  # room above the highest point for its number
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, title="task (hollow: baselines)", title_fontsize=7, loc="upper right")
    fig.suptitle(plain_text(title or "Calibration against discrimination"))
    key.text(0, 1, key_text, va="top", ha="left", fontsize=7, family="monospace", transform=key.transAxes)
    place_point_labels(ax, shown["AUC"], shown["ECE"], [str(i) for i in range(1, len(shown) + 1)])
    return fig


def plot_ece_auc(points: pd.DataFrame, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """ECE against AUC, one numbered point per model (or baseline) and task: the folktexts paper's summary view.

    Parameters
    ----------
    points : pandas.DataFrame
        Columns ``model``, ``task``, ``AUC``, ``ECE`` and optionally ``prompt``
        and ``kind`` (``baseline`` points are drawn hollow).
    """
    return save_png(ece_auc_figure(points, title=title), path)
