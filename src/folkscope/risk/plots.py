"""Plots of a risk-score run and of an evidence sweep: calibration, group calibration, histograms, ROC, ...

Drawing only: every number comes from :mod:`folkscope.risk.evaluate`
(``calibration_data``, ``histogram_data``, ``roc_data``...), which in turn uses
:mod:`folkscope.metrics`, or from :func:`folkscope.risk.evidence.evidence_sweep`'s
table. Figures are made and saved by the shared helpers of
:mod:`folkscope.report.figures`: matplotlib is imported only when drawing
(``pip install 'folkscope[plots]'``) and each PNG is written atomically.

Rows with a NaN score are left out of every plot and their number is printed
on the figure.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.errors import ConfigError
from folkscope.report.figures import plain_text, save_png, subplots_row
from folkscope.risk.evaluate import (
    calibration_data,
    histogram_data,
    roc_data,
    selective_accuracy_data,
)
from folkscope.runs.layout import safe_name

__all__ = [
    "draw_reliability",
    "make_all_plots",
    "plot_caption",
    "plot_calibration",
    "plot_evidence_sweep",
    "plot_feature_importance",
    "plot_group_calibration",
    "plot_roc",
    "plot_score_histogram",
    "plot_selective_accuracy",
    "square_axes",
]

_FEATURE = "drawing report plots"
_STRATEGY_TITLE = {
    "uniform": "equal-width bins",
    "quantile": "quantile bins (folktexts' edges)",
    "equal_count": "equal-count bins",
}
_SWEEP_PANELS = (("roc_auc", "ROC AUC (higher is better)"), ("ece", "ECE (lower is better)"))


def _figure(ncols: int = 1, *, width: float = 5.0, height: float = 4.2) -> tuple[Any, Any]:
    return subplots_row(ncols, width=width, height=height, feature=_FEATURE)


def _excluded_note(n: int) -> str:
    return f" ({n} NaN score{'s' if n != 1 else ''} excluded)" if n else ""


def draw_reliability(
    ax: Any, curve: Mapping[str, Any], *, label: str | None = None, color: Any = None, band: bool = False
) -> None:
    x, f = curve["mean_predicted"], curve["fraction_positive"]
    lo, hi = curve["ci_low"], curve["ci_high"]
    ok = curve["count"] > 0  # empty bins have no rate: drawn as gaps, never as 0
    if not ok.any():
        return
    if band:
        (line,) = ax.plot(
            np.where(ok, x, np.nan), np.where(ok, f, np.nan), marker="o", ms=3, lw=1.2, label=label, color=color
        )
        ax.fill_between(x[ok], lo[ok], hi[ok], alpha=0.15, color=line.get_color(), lw=0)
    else:
        # matplotlib refuses negative error-bar lengths; a bound on the wrong side of the point by rounding is 0
        yerr = np.clip(np.vstack([f[ok] - lo[ok], hi[ok] - f[ok]]), 0.0, None)
        ax.errorbar(x[ok], f[ok], yerr=yerr, fmt="o-", ms=4, lw=1.2, capsize=3, label=label, color=color)


def square_axes(ax: Any, xlabel: str, ylabel: str) -> None:
    ax.plot([0, 1], [0, 1], ls="--", lw=1, color="grey")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel=xlabel, ylabel=ylabel, aspect="equal")
    ax.grid(alpha=0.3)


def plot_calibration(
    scores: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    weight_col: str | None = None,
    n_bins: int = 10,
    title: str | None = None,
) -> Path:
    """Reliability diagram with equal-width and quantile bins side by side (Wilson 95% CIs).

    Parameters
    ----------
    scores : pandas.DataFrame
    path : path-like
        PNG to write (atomically).
    label_col, score_col, weight_col, n_bins
        As in :func:`folkscope.risk.evaluate.calibration_data`.
    title : str, optional

    Returns
    -------
    pathlib.Path
    """
    fig, axes = _figure(2)
    for ax, strategy in zip(axes, ("uniform", "quantile"), strict=True):
        data = calibration_data(
            scores, label_col=label_col, score_col=score_col, weight_col=weight_col, n_bins=n_bins, strategy=strategy
        )
        draw_reliability(ax, data["overall"])
        square_axes(ax, "mean risk score in bin", "observed positive rate")
        n = int(data["overall"]["count"].sum())
        ax.set_title(f"{_STRATEGY_TITLE[strategy]}, n={n:,}{_excluded_note(data['n_excluded'])}", fontsize=9)
    fig.suptitle(plain_text(title or "Calibration (95% Wilson intervals)"))
    return save_png(fig, path)


def plot_group_calibration(
    scores: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    group_col: str,
    label_col: str = "label",
    score_col: str = "risk_score",
    weight_col: str | None = None,
    n_bins: int = 10,
    group_labels: Mapping[str, Mapping[Any, Any]] | None = None,
    title: str | None = None,
) -> Path:
    """Calibration curves of each group of ``group_col`` (both binnings, 95% bands).

    Returns
    -------
    pathlib.Path
    """
    fig, axes = _figure(2)
    for ax, strategy in zip(axes, ("uniform", "quantile"), strict=True):
        data = calibration_data(
            scores,
            label_col=label_col,
            score_col=score_col,
            weight_col=weight_col,
            group_cols=[group_col],
            n_bins=n_bins,
            strategy=strategy,
            group_labels=group_labels,
        )
        for entry in data["groups"][group_col]:
            draw_reliability(ax, entry["curve"], band=True, label=plain_text(f"{entry['name']} (n={entry['n']:,})"))
        square_axes(ax, "mean risk score in bin", "observed positive rate")
        ax.set_title(f"{_STRATEGY_TITLE[strategy]}{_excluded_note(data['n_excluded'])}", fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(plain_text(title or f"Calibration by {group_col} (95% Wilson bands)"))
    return save_png(fig, path)


def plot_score_histogram(
    scores: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    bins: int = 20,
    title: str | None = None,
) -> Path:
    """Histogram of risk scores: all rows, and split by label.

    Returns
    -------
    pathlib.Path
    """
    data = histogram_data(scores, label_col=label_col, score_col=score_col, bins=bins)
    fig, axes = _figure(2, height=3.6)
    edges = data["edges"]
    axes[0].stairs(data["overall"], edges, fill=True, alpha=0.7)
    axes[0].set_title(f"all rows, n={data['n']:,}{_excluded_note(data['n_excluded'])}", fontsize=9)
    for lab, name in ((0, "label 0"), (1, "label 1")):
        counts = data["by_label"][lab]
        axes[1].stairs(counts, edges, lw=1.5, label=f"{name} (n={int(counts.sum()):,})")
    axes[1].set_title("by label", fontsize=9)
    axes[1].legend(fontsize=8)
    for ax in axes:
        ax.set(xlim=(0, 1), xlabel="risk score", ylabel="rows")
        ax.grid(alpha=0.3)
    fig.suptitle(plain_text(title or "Risk score distribution"))
    return save_png(fig, path)


def plot_roc(
    scores: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    baselines: Mapping[str, ArrayLike] | None = None,
    model_name: str = "model",
    title: str | None = None,
) -> Path:
    """ROC curve of the model, with the baselines' curves when their scores are given.

    Parameters
    ----------
    baselines : mapping of name -> array-like of shape (n_rows,), optional
        Baseline scores aligned to the rows of ``scores``.

    Returns
    -------
    pathlib.Path
    """
    data = roc_data(scores, label_col=label_col, score_col=score_col, baselines=baselines, model_name=model_name)
    fig, axes = _figure(1, width=5.2, height=5.0)
    ax = axes[0]
    for name, curve in data.items():
        auc = "undefined" if np.isnan(curve["auc"]) else f"{curve['auc']:.3f}"
        shown = name if name == model_name else str(name).replace("_", " ")  # a baseline's key, as words
        label = plain_text(f"{shown} (AUC {auc}){_excluded_note(curve['n_excluded'])}")
        if len(curve["fpr"]):
            ax.plot(curve["fpr"], curve["tpr"], lw=1.5, label=label)
        else:  # single-class labels: nothing to draw, but say so in the legend
            ax.plot([], [], lw=1.5, label=label)
    square_axes(ax, "false positive rate", "true positive rate")
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(plain_text(title or "ROC"))
    return save_png(fig, path)


#: what each run page figure shows, by the key :func:`make_all_plots` returns (``calibration_<col>`` per group column)
_CAPTIONS = {
    "calibration": "Calibration: the observed share of positives against the mean risk score, in equal-width bins "
    "(left) and quantile bins (right), with 95% Wilson intervals; the dashed diagonal is perfect calibration.",
    "score_histogram": "Risk scores of every row, by true label: a model that tells rows apart puts the two "
    "labels' scores apart; a spike at one value is no signal.",
    "roc": "ROC curves of the model and its baselines on the same rows: the higher and further left, the better the "
    "scores tell positives from negatives (AUC in the legend).",
    "selective_accuracy": "Accuracy when only the rows the model is most confident about are kept, against the share "
    "kept: a useful confidence rises to the left.",
    "feature_importance": "Permutation importance: how much the model's AUC drops when one feature's values are "
    "shuffled across rows.",
}


def plot_caption(key: str) -> str:
    """What the figure :func:`make_all_plots` returns under ``key`` shows, for its caption on the run page.

    >>> plot_caption("calibration_SEX")[:40]
    'Calibration of each SEX group: observed '
    """
    if key.startswith("calibration_"):
        col = key.removeprefix("calibration_")
        return (
            f"Calibration of each {col} group: observed share of positives against mean risk score, one curve per "
            "group; a curve off the diagonal for one group only is a calibration gap."
        )
    return _CAPTIONS.get(key, key.replace("_", " "))


def plot_selective_accuracy(
    scores: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    title: str | None = None,
) -> Path:
    """Accuracy on the most confident rows against the share of rows kept (coverage).

    Returns
    -------
    pathlib.Path
    """
    data = selective_accuracy_data(scores, label_col=label_col, score_col=score_col)
    fig, axes = _figure(1, width=5.2, height=4.2)
    ax = axes[0]
    curve = data["curve"]
    ax.plot(curve["coverage"], curve["selective_accuracy"], lw=1.5, drawstyle="steps-post", label="model")
    full = data["at_coverage"].get("1.0")
    if full is not None:
        ax.axhline(full, color="grey", ls=":", lw=1, label=f"accuracy on all rows ({full:.3f})")
    ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="coverage (share of rows, most confident first)", ylabel="accuracy")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.suptitle(plain_text(title or "Selective accuracy"))
    return save_png(fig, path)


def plot_feature_importance(
    importance: pd.DataFrame, path: str | os.PathLike[str], *, title: str | None = None
) -> Path:
    """Permutation importance (drop in AUC) per feature, with the spread over repeats.

    Parameters
    ----------
    importance : pandas.DataFrame
        :func:`folkscope.risk.permutation_importance` output (index: column;
        ``importance``, ``std``, ``n_repeats``).

    Returns
    -------
    pathlib.Path
    """
    table = importance.sort_values("importance")
    fig, axes = _figure(1, width=5.6, height=max(2.5, 0.35 * len(table) + 1.2))
    ax = axes[0]
    ax.barh(
        [plain_text(str(c)) for c in table.index], table["importance"], xerr=table["std"], color="#4c78a8", alpha=0.85
    )
    ax.axvline(0, color="black", lw=0.8)
    repeats = int(table["n_repeats"].iloc[0]) if "n_repeats" in table.columns and len(table) else 1
    ax.set(xlabel=f"drop in AUC when shuffled (mean ± sd over {repeats} repeat(s))")
    ax.grid(axis="x", alpha=0.3)
    fig.suptitle(plain_text(title or "Permutation importance"))
    return save_png(fig, path)


def plot_evidence_sweep(table: pd.DataFrame, path: str | os.PathLike[str], *, title: str | None = None) -> Path:
    """AUC and ECE against the number of features shown, with their 95% bootstrap bands.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`~folkscope.risk.evidence_sweep` output: ``k``, ``added_feature``,
        ``roc_auc``, ``ece`` and, where present, ``<metric>_low``/``_high``
        (bands) and ``baseline_<name>_<metric>`` (dashed lines).
    path : path
        The PNG to write.
    title : str, optional

    Returns
    -------
    pathlib.Path

    Notes
    -----
    Each x tick is labelled with the feature(s) its step adds; the point of
    the last step (every feature of the order) is drawn as a star, as in the
    paper's figure A9. Undefined values (NaN) are gaps.
    """
    missing = [c for c in ("k", "added_feature", "roc_auc", "ece") if c not in table.columns]
    if missing:
        raise ConfigError(f"an evidence sweep table needs column(s) {', '.join(missing)}", parameter="table")
    if table.empty:
        raise ConfigError("the evidence sweep table has no rows; nothing to plot", parameter="table")
    table = table.sort_values("k")
    x = table["k"].to_numpy(dtype=float)
    labels = [
        plain_text(a) if i == 0 else plain_text(f"+{a}") for i, a in enumerate(table["added_feature"].astype(str))
    ]
    fig, axes = _figure(2, width=max(4.8, 0.42 * len(table) + 2.2), height=4.2)
    baselines = sorted(
        {
            c.removeprefix("baseline_").removesuffix(f"_{m}")
            for c in table.columns
            for m, _ in _SWEEP_PANELS
            if c.startswith("baseline_") and c.endswith(f"_{m}")
        }
    )
    for ax, (metric, label) in zip(axes, _SWEEP_PANELS):
        y = table[metric].to_numpy(dtype=float)
        (line,) = ax.plot(x, y, marker="o", ms=4, lw=1.4, label="model")
        ax.plot(x[-1:], y[-1:], marker="*", ms=13, ls="none", color=line.get_color())
        if f"{metric}_low" in table.columns:
            low = table[f"{metric}_low"].to_numpy(dtype=float)
            high = table[f"{metric}_high"].to_numpy(dtype=float)
            ax.fill_between(x, low, high, alpha=0.18, color=line.get_color(), lw=0, label="95% bootstrap interval")
        for name in baselines:
            column = f"baseline_{name}_{metric}"
            if column in table.columns and np.isfinite(table[column].to_numpy(dtype=float)).any():
                ax.plot(
                    x,
                    table[column].to_numpy(dtype=float),
                    ls="--",
                    lw=1.0,
                    marker=".",
                    alpha=0.8,
                    label=plain_text(name),
                )
        if metric == "roc_auc":
            ax.axhline(0.5, color="grey", ls=":", lw=0.9, label="chance")
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
        ax.set(xlabel="features shown (added left to right)", ylabel=label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(plain_text(title or "Evidence sweep"))
    return save_png(fig, path)


def make_all_plots(
    scores: pd.DataFrame,
    out_dir: str | os.PathLike[str],
    *,
    baselines: Mapping[str, ArrayLike] | None = None,
    group_cols: Sequence[str] = ("RAC1P", "SEX"),
    group_labels: Mapping[str, Mapping[Any, Any]] | None = None,
    label_col: str = "label",
    score_col: str = "risk_score",
    n_bins: int = 10,
    model_name: str = "model",
    relative_to: str | os.PathLike[str] | None = None,
    importance: pd.DataFrame | None = None,
) -> dict[str, str]:
    """Draw every plot of a run into ``out_dir``.

    Parameters
    ----------
    scores : pandas.DataFrame
    out_dir : path-like
        Folder of the PNGs (created if needed).
    baselines : mapping of name -> scores, optional
        Baseline scores aligned to the rows, for the ROC plot.
    group_cols, group_labels
        One group-calibration plot per column.
    label_col, score_col, n_bins, model_name
    importance : pandas.DataFrame, optional
        Permutation importance of the run, drawn when given.
    relative_to : path-like, optional
        Folder the returned paths are relative to. Default: the parent of
        ``out_dir``, i.e. the run folder for the usual ``out_dir = run_dir /
        "plots"``, so the paths go straight into
        :func:`folkscope.risk.report.write_report`.

    Returns
    -------
    dict of name -> relative POSIX path
        ``calibration``, ``calibration_<col>`` per group column, ``score_histogram``,
        ``roc``, ``selective_accuracy`` and, with ``importance``,
        ``feature_importance`` (e.g. ``"plots/roc.png"``).
    """
    out = Path(out_dir)
    base = Path(relative_to) if relative_to is not None else out.parent
    cols = dict(label_col=label_col, score_col=score_col)
    paths = {"calibration": plot_calibration(scores, out / "calibration.png", n_bins=n_bins, **cols)}
    for col in group_cols:
        paths[f"calibration_{col}"] = plot_group_calibration(
            scores,
            out / f"calibration_by_{safe_name(col, fallback='group')}.png",
            group_col=col,
            n_bins=n_bins,
            group_labels=group_labels,
            **cols,
        )
    paths["score_histogram"] = plot_score_histogram(scores, out / "score_histogram.png", **cols)
    paths["roc"] = plot_roc(scores, out / "roc.png", baselines=baselines, model_name=model_name, **cols)
    paths["selective_accuracy"] = plot_selective_accuracy(scores, out / "selective_accuracy.png", **cols)
    if importance is not None and len(importance):
        paths["feature_importance"] = plot_feature_importance(importance, out / "feature_importance.png")
    return {name: Path(os.path.relpath(p, base)).as_posix() for name, p in paths.items()}
