"""The epidemiology run page: the scores first, then true against model distributions per task.

Built on the shared page shell (:mod:`folkscope.report.page`); figures need
matplotlib (the ``plots`` extra), and without it the page keeps every table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from folkscope.epidemiology.answer import answer
from folkscope.epidemiology.config import made_with
from folkscope.report.figures import plain_text, save_png, subplots_row
from folkscope.report.page import frame_table, optional_figures, para, render_page, section, sentence

__all__ = ["render_report", "write_task_figure"]

_FEATURE = "drawing the epidemiology figures"
#: the reader's names of the score and distribution columns
_LABELS = {
    "score_low": "score 95% low",
    "score_high": "score 95% high",
    "distance": "distance (L1)",
    "worst": "worst (uniform)",
    "best": "best (noise)",
    "n_conditions": "conditions",
    "references_crossed": "best not below worst",
    "p_true": "survey share",
    "p_model": "model share",
    "share": "condition's share",
    "n": "respondents",
}
#: conditions drawn as bar panels; more (a high-dimensional task's cells) become one scatter
_MAX_PANELS = 6


def write_task_figure(task: str, truth: pd.DataFrame, model: pd.DataFrame, path: Path) -> Path:
    """One panel per condition: the true and the model's share of each answer, side by side."""
    part = truth[truth["task"] == task].merge(
        model[model["task"] == task], on=["task", "condition", "level"], sort=False
    )
    conditions = list(dict.fromkeys(part["condition"]))
    if len(conditions) > _MAX_PANELS:  # many cells (a high-dimensional task): one scatter of the second answer's share
        second = part[part["level"] == list(dict.fromkeys(part["level"]))[1]]
        fig, (ax,) = subplots_row(1, width=4.6, height=4.2, feature=_FEATURE)
        ax.scatter(second["p_true"], second["p_model"], s=20 + 400 * second["share"], alpha=0.6, color="#4c78a8")
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        ax.set_xlabel(
            plain_text(f"survey: P({second['level'].iloc[0][:30]}), one point per cell sized by its share"), fontsize=8
        )
        ax.set_ylabel("model", fontsize=8)
        ax.set_title(plain_text(task), fontsize=8)
        return save_png(fig, path)
    fig, axes = subplots_row(len(conditions), width=3.2, height=3.0, feature=_FEATURE)
    for ax, condition in zip(axes, conditions):
        rows = part[part["condition"] == condition]
        x = np.arange(len(rows))
        ax.bar(x - 0.2, rows["p_true"], width=0.4, label="survey", color="#4c78a8")
        ax.bar(x + 0.2, rows["p_model"].fillna(0), width=0.4, label="model", color="#f58518")
        ax.set_xticks(x, [plain_text(t)[:18] for t in rows["level"]], rotation=35, ha="right", fontsize=7)
        ax.set_ylim(min(0.0, float(rows["p_model"].min())), 1)  # a paper-decoded remainder may be negative
        ax.set_title(plain_text(condition)[:40], fontsize=8)
    axes[0].legend(fontsize=7)
    fig.suptitle(plain_text(task), fontsize=9)
    return save_png(fig, path)


def render_report(metrics: dict[str, Any], truth: pd.DataFrame, model: pd.DataFrame, folder: Path) -> str:
    """The run page as HTML (figures written into ``folder`` when matplotlib is there)."""
    scores = pd.DataFrame(metrics["scores"])
    css = "headline" if metrics.get("mean_score") is not None else "headline warn"
    config = metrics["config"]
    figures = optional_figures(
        lambda: {task: write_task_figure(task, truth, model, folder / f"{task}.png").name for task in scores["task"]},
        run_dir=folder,
        captions={
            task: f"{task}: the survey's share of each answer (blue) beside the model's (orange), one panel per "
            "condition (one point per cell, sized by its share, when there are many)."
            for task in scores["task"]
        },
    )
    both = truth.merge(model, on=["task", "condition", "level"], sort=False)
    body = [
        para(sentence(answer(metrics)), css_class=css),
        _likelihood_note(config, folder),
        section(
            "Scores by task",
            frame_table(scores, digits=3, labels=_LABELS),
            para(
                "Distance: population-weighted mean over conditions of the L1 distance between the survey's and the "
                "model's distributions; worst: a uniform guess; best: the survey's own sampling noise (best from: where it "
                "comes from: redraws at the raw respondent count as the paper, or at Kish's effective n; a published table, "
                "with no respondents to redraw, has 0 as in the paper or the best it declares, and no interval); mean "
                "baseline: the overall distribution for every condition. Score = 100 · clip((distance − worst) / (best − "
                "worst), 0, 1), with a 95% bootstrap interval; where best is not below worst the paper's rule gives 0 or "
                "100."
            ),
        ),
        figures,
        section(
            "Distributions",
            frame_table(
                both[["task", "condition", "level", "p_true", "p_model", "share", "n"]],
                digits=3,
                labels={**_LABELS, "level": "answer"},
                integers=("n",),
            ),
        ),
    ]
    subtitle = f"{metrics.get('model')} · {config['mode']}{' (chat)' if config.get('chat') else ''} · {metrics['n_tasks']} tasks"
    return render_page(
        "epidemiology",
        heading="Does the model know P(Y | X) of real surveys?",
        body=body,
        subtitle=subtitle,
        config=config,
    )


def _likelihood_note(config: dict[str, Any], folder: Path) -> Markup | str:
    """How a likelihood run read its answers, and the bins the model chose most, so a strange score can be traced."""
    if config.get("mode") != "likelihood":
        return ""
    if made_with(config)["likelihood_levels"] == "paper":
        how = (
            "As the paper decodes them, the model was asked about every answer but the last, and the last answer's share "
            "is what remains (1 minus the others), so a model that states 0% everywhere gives the last answer 100%."
        )
    else:
        how = "Every answer was asked about and the stated values renormalised to sum to 1."
    bins_path = folder / "bins.parquet"
    if not bins_path.is_file():
        return para(how)
    bins = pd.read_parquet(bins_path)
    counts = bins["bin"].fillna("unread").value_counts()
    top = ", ".join(f"{letter} {n} of {len(bins)}" for letter, n in counts.head(3).items())
    return para(f"{how} Most chosen answers (A = 0%, V = 100%; bins.parquet has every one): {top}.")
