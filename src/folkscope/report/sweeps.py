"""Plots of sweeps over several runs: the evidence sweep (metrics as features are added).

Drawing only: the numbers come from :func:`folkscope.risk.evidence.evidence_sweep`'s
table. matplotlib is imported when a function is called (``pip install
'folkscope[plots]'``), on the Agg canvas; the PNG is written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError
from folkscope.report.plots import _figure, _save, _text

__all__ = ["plot_evidence_sweep"]

_PANELS = (("roc_auc", "ROC AUC (higher is better)"), ("ece", "ECE (lower is better)"))


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
    labels = [_text(a) if i == 0 else _text(f"+{a}") for i, a in enumerate(table["added_feature"].astype(str))]
    fig, axes = _figure(2, width=max(4.8, 0.42 * len(table) + 2.2), height=4.2)
    baselines = sorted(
        {c.removeprefix("baseline_").removesuffix(f"_{m}") for c in table.columns for m, _ in _PANELS
         if c.startswith("baseline_") and c.endswith(f"_{m}")}
    )  # fmt: skip
    for ax, (metric, label) in zip(axes, _PANELS):
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
                ax.plot(x, table[column].to_numpy(dtype=float), ls="--", lw=1.0, marker=".", alpha=0.8, label=_text(name))
        if metric == "roc_auc":
            ax.axhline(0.5, color="grey", ls=":", lw=0.9, label="chance")
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
        ax.set(xlabel="features shown (added left to right)", ylabel=label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(_text(title or "Evidence sweep"))
    return _save(fig, path)
