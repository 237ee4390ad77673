"""Part 3 on the leaderboard: scores by dataset, dimension and prompting mode, and per task.

The summary table has a row per (model, prompting mode, chat or not) and a
column per dataset and per dimension: the mean 0-100 score of the tasks
there (the paper's leaderboard view). One table per dataset then lists every
task's score with its bootstrap interval beside the distances it is built
from (the model's, the uniform worst, the sampling-noise best, and the mean
baseline's), so a reader can see when a model adds nothing beyond the
population average.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope.epidemiology.config import made_with
from folkscope.report.board import BoardFigure, BoardTable, PartBoard, run_metrics, slug
from folkscope.report.figures import drawn_figure, plain_text, save_png, subplots_row

__all__ = ["leaderboard"]


def _task_rows(folder: Path, metrics: dict[str, Any]) -> pd.DataFrame:
    config = metrics.get("config") or {}
    mode = str(metrics.get("mode") or config.get("mode") or "qa")
    if mode == "likelihood" and config.get("likelihood_readout", "argmax") != "argmax":
        mode += f" ({config['likelihood_readout']})"  # another readout of the same answers: another row
    rules = made_with(config)
    if mode.startswith("likelihood") and rules["likelihood_levels"] != "paper":
        mode += " (all levels)"  # runs before the option asked every level
    if rules["best_reference"] != "paper":
        mode += " (design-effect best)"  # another best reference: scores that do not compare with the paper's
    mode += " (chat)" if config.get("chat") else ""
    scores = pd.DataFrame(metrics.get("scores") or [])
    if scores.empty:
        return scores
    scores.insert(0, "model", str(metrics.get("model") or config.get("model") or "model"))
    scores.insert(1, "mode", mode)
    scores["run"] = str(folder)
    return scores


def leaderboard(folders: Sequence[Path], *, site: Path, draw: bool = True) -> PartBoard:
    """The summary table, one table per dataset, and score bars, over the given epidemiology run folders."""
    runs, notes = run_metrics(folders)
    frames = [_task_rows(run.folder, dict(run.metrics)) for run in runs]
    scores = (
        pd.concat([f for f in frames if not f.empty], ignore_index=True)
        if any(not f.empty for f in frames)
        else pd.DataFrame()
    )
    if scores.empty:
        return PartBoard(notes=[*notes, "no epidemiology task was scored in these runs"])
    tables = [_summary(scores)]
    for dataset, sub in scores.groupby("dataset", sort=True):
        frame = pd.DataFrame(
            {
                "model": sub["model"],
                "mode": sub["mode"],
                "task": sub["task"],
                "dimension": sub["dimension"],
                "score": sub["score"],
                "score low": sub["score_low"],
                "score high": sub["score_high"],
                "distance": sub["distance"],
                "mean baseline": sub["mean_baseline"],
                "worst": sub["worst"],
                "best": sub["best"],
                "run": sub["run"],
            }
        ).sort_values(["task", "score"], ascending=[True, False])
        tables.append(
            BoardTable(
                part="epidemiology",
                key=slug(f"epidemiology-{dataset}"),
                title=f"{dataset}: score per task",
                frame=frame,
                intervals={"score": ("score low", "score high")},
                labels=("model", "mode", "task", "dimension"),
                about="score = 100 · clip((distance − worst) / (best − worst), 0, 1) [95% bootstrap]; distances are L1 between "
                "the survey's and the model's distributions (lower is better); a model above the mean baseline's "
                "distance knows less than the population average.",
            )
        )
    figures = []
    if draw:
        rel = drawn_figure(site, "epidemiology-scores", lambda p: _plot_scores(tables[0].frame, p))
        if rel:
            figures.append(
                BoardFigure(
                    "epidemiology",
                    "Mean score by dataset",
                    rel,
                    "0: no closer than a uniform guess; 100: as close as the survey's own sampling noise.",
                )
            )
    return PartBoard(tables=tables, figures=figures, notes=notes)


def _summary(scores: pd.DataFrame) -> BoardTable:
    """Mean score per (model, mode) overall, per dimension and per dataset."""
    keys = ["model", "mode"]
    out = (
        scores.groupby(keys, sort=True)
        .agg(tasks=("score", "count"), unscored=("score", lambda v: int(v.isna().sum())), mean=("score", "mean"))
        .rename(columns={"mean": "mean score"})
    )
    for name, column in (("dimension", "dimension"), ("dataset", "dataset")):
        wide = scores.pivot_table(index=keys, columns=column, values="score", aggfunc="mean")
        wide.columns = [f"{value} ({'dim' if name == 'dimension' else 'data'})" for value in wide.columns]
        out = out.join(wide)
    frame = out.reset_index().assign(
        run=scores.groupby(keys, sort=True)["run"].agg(lambda r: r.iloc[0] if r.nunique() == 1 else "").to_numpy()
    )
    best = frame.loc[frame["mean score"].idxmax()] if frame["mean score"].notna().any() else None
    lead = (
        f"Highest mean score: {best['model']} ({best['mode']}), {best['mean score']:.1f} of 100 over {int(best['tasks'])} tasks."
        if best is not None
        else ""
    )
    return BoardTable(
        part="epidemiology",
        key="epidemiology-summary",
        title="Mean score by dataset and dimension",
        frame=frame,
        lead=lead,
        labels=tuple(keys),
        about="Mean 0-100 score of the tasks in each dataset (data) and dimension (dim: "
        "low = one condition, high = 2-5 conditions) over the tasks scored (unscored: every answer unreadable, "
        "or 0% for every answer of a condition); n/a where the model ran no task there.",
    )


def _plot_scores(summary: pd.DataFrame, path: Path) -> Any:
    datasets = [c for c in summary.columns if c.endswith("(data)")]
    fig, axes = subplots_row(
        1, width=max(5.0, 1.1 * len(datasets) + 2), height=4.0, feature="drawing the leaderboard figures"
    )
    ax = axes[0]
    width = 0.8 / max(len(summary), 1)
    x = np.arange(len(datasets))
    for i, (_, row) in enumerate(summary.iterrows()):
        values = row[datasets].to_numpy(dtype=float)  # a dataset the model ran no task of: no bar
        ax.bar(x + i * width, np.nan_to_num(values), width=width, label=plain_text(f"{row['model']} · {row['mode']}"))
    ax.set_xticks(
        x + width * (len(summary) - 1) / 2, [plain_text(c.removesuffix(" (data)")) for c in datasets], rotation=20
    )
    ax.set(ylim=(0, 100), ylabel="mean score (0-100)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path)
