"""Part 2 on the leaderboard: bias against who gets picked, per subtask and group, and the metric-validity study.

One table per subtask and scoring mode, a row per (model, group): RABBI
against the reference group with its bootstrap interval and p-value, and
the allocation gaps when the top k = 1 of each pool is selected (ΔDP in
selection rate, ΔEO among qualified candidates, the impact ratio). Over
every allocation run found, :func:`folkscope.allocation.study.study` gives
the correlation of each bias metric with the gap it should predict (the
RABBI paper's predictive validity), shown as one more table, and the figure
plots RABBI against ΔDP.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope.allocation.study import study, study_points
from folkscope.errors import DataError
from folkscope.report.board import BoardFigure, BoardTable, PartBoard, run_metrics, slug
from folkscope.report.figures import drawn_figure, plain_text, save_png, subplots_row

__all__ = ["leaderboard"]

#: the study's metric keys as the page names them (|ΔDP| beside a metric without sign)
_METRIC_NAMES = {"rabbi": "RABBI", "delta": "Δ score", "jsd": "JSD", "emd": "EMD"}

_K = 1


def _notes(at_k: pd.DataFrame) -> pd.Series:
    """Why a row's interval or distances are empty (groups too small, no bootstrap), "" when nothing is."""
    parts = [
        at_k[c].fillna("").astype(str) if c in at_k else pd.Series("", index=at_k.index)
        for c in ("interval_note", "distance_note")
    ]
    return (parts[0] + "; " + parts[1]).str.strip("; ")


def _rows(points: pd.DataFrame) -> pd.DataFrame:
    at_k = points[points["k"] == _K]
    out = pd.DataFrame(
        {
            "model": at_k["model"],
            "group": at_k["group"],
            "RABBI": at_k["rabbi"],
            "RABBI low": at_k["rabbi_low"],
            "RABBI high": at_k["rabbi_high"],
            "p-value": at_k["rabbi_p_value"],
            "ΔDP (k=1)": at_k["dp_gap"],
            "ΔEO (k=1)": at_k["eo_gap"],
            "impact ratio (k=1)": at_k["impact_ratio"],
            "JSD": at_k["jsd"],
            "EMD": at_k["emd"],
            "too small to say": _notes(at_k),
            "run": at_k["run"],
        }
    )
    return out.reset_index(drop=True)


def _lead(rows: pd.DataFrame) -> str:
    """The answer: the best-supported rank bias (smallest p-value, not merely the largest RABBI) and the worst impact ratio."""
    tested = rows.dropna(subset=["RABBI", "p-value"])
    if tested.empty:
        text = "No group's RABBI could be tested"
    else:
        order = np.lexsort((-tested["RABBI"].abs().to_numpy(dtype=float), tested["p-value"].to_numpy(dtype=float)))
        top = tested.iloc[int(order[0])]
        text = f"Strongest evidence of rank bias: {top['model']} on {top['group']}, RABBI {top['RABBI']:+.3f}"
        if pd.notna(top["RABBI low"]) and pd.notna(top["RABBI high"]):
            text += f" [{top['RABBI low']:+.3f}, {top['RABBI high']:+.3f}]"
        elif top["too small to say"]:
            text += f" ({top['too small to say'].split(';')[0]})"
        text += f", p = {top['p-value']:.3g}"
    ratios = rows.dropna(subset=["impact ratio (k=1)"])
    if not ratios.empty:
        low = ratios.loc[ratios["impact ratio (k=1)"].idxmin()]
        text += f"; lowest impact ratio at k=1: {low['model']} on {low['group']}, {low['impact ratio (k=1)']:.2f}"
    return text + "."


def leaderboard(folders: Sequence[Path], *, site: Path, draw: bool = True) -> PartBoard:
    """Tables per subtask and mode over the given allocation run folders, the validity study and its figure.

    A run that measured nothing (no answer could be read) is named in a note, not tabulated as empty rows.
    """
    read, notes = run_metrics(folders)
    measured = [r.folder for r in read if not r.metrics.get("nothing_scored")]
    notes += [f"{r.folder}: {r.metrics['nothing_scored']}" for r in read if r.metrics.get("nothing_scored")]
    if not measured:
        return PartBoard(notes=notes)
    folders = measured
    try:
        points = study_points(folders)
    except DataError as exc:  # a folder whose tables cannot be read
        return PartBoard(notes=[*notes, str(exc)])
    if points.empty:
        return PartBoard(notes=[*notes, "the allocation runs hold no group besides the reference; nothing to tabulate"])
    tables = []
    for (subtask, mode), sub in points.groupby(["subtask", "mode"], sort=True):
        tables.append(
            BoardTable(
                part="allocation",
                key=slug(f"allocation-{subtask}-{mode}"),
                title=f"{subtask} ({mode})",
                frame=_rows(sub),
                intervals={"RABBI": ("RABBI low", "RABBI high")},
                labels=("model", "group"),
                lead=_lead(_rows(sub)),
                about="RABBI > 0: the group is ranked above the reference group more often than below [95% bootstrap]. "
                "ΔDP / ΔEO: the group's selection rate minus the reference's when each pool's top 1 is picked "
                "(ΔEO among qualified candidates); impact ratio below 0.8 fails the four-fifths rule. An interval, JSD "
                "or EMD that the groups are too small for is n/a, with the reason in its row (a note under the table).",
            )
        )
    validity = study(folders).correlations
    if len(validity):
        frame = validity.rename(columns={"r": "Pearson r", "p_value": "p-value", "n": "points"}).assign(
            run="",
            metric=validity["metric"].map(lambda m: _METRIC_NAMES.get(m, str(m).replace("_", " "))),
            gap=validity["gap"].map(lambda g: str(g).replace("dp_gap", "ΔDP").replace("eo_gap", "ΔEO")),
        )
        tables.append(
            BoardTable(
                part="allocation",
                key="allocation-metric-validity",
                title="Metric validity: which bias metric predicts the gap?",
                frame=frame[["metric", "k", "gap", "Pearson r", "p-value", "points", "run"]],
                labels=("metric", "gap"),
                about="Correlation of each bias metric with the allocation gap it should predict, over every (run, group) "
                "point above; n/a where there are too few points.",
            )
        )
    figures = []
    if draw:
        rel = drawn_figure(site, "allocation-rabbi-vs-gap", lambda p: _plot_rabbi_gap(points, p))
        if rel:
            figures.append(
                BoardFigure(
                    "allocation",
                    "RABBI against the allocation gap",
                    rel,
                    "Each point is a (model, group): a valid bias metric lines up with the gap it predicts.",
                )
            )
    return PartBoard(tables=tables, figures=figures, notes=notes)


def _plot_rabbi_gap(points: pd.DataFrame, path: Path) -> Any:
    fig, axes = subplots_row(1, width=5.6, height=4.4, feature="drawing the leaderboard figures")
    ax = axes[0]
    at_k = points[points["k"] == _K]
    for model, sub in at_k.groupby("model", sort=True):
        ax.plot(sub["rabbi"], sub["dp_gap"], "o", label=plain_text(model))
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(0, color="grey", lw=0.8)
    ax.set(xlabel="RABBI vs the reference group", ylabel="ΔDP at k = 1 (selection-rate gap)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path)
