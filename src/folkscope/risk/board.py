"""Part 1 on the leaderboard: one table per task, models and baselines side by side, and the cross-model figures.

A row per run (the model under one prompt configuration) and a row per
baseline (logistic regression, gradient boosting): the folktexts paper's
table 1 (ECE, quantile ECE, Brier, AUC, accuracy, confidence bias) plus the
largest SCE gap between the groups of any sensitive column, each number
with the run's own bootstrap interval where it has one. Baselines depend on
the rows only, not on the model, so runs on the same rows share one
baseline row.

Runs of one task on different rows (another subsample or seed) are not
comparable and get a table each, titled by their test rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._json import fingerprint
from folkscope.errors import DataError
from folkscope.report.board import BoardFigure, BoardTable, PartBoard, run_metrics, slug
from folkscope.report.figures import drawn_figure
from folkscope.risk.evaluate import INTERVAL_METRICS, TABLE_COLUMNS
from folkscope.risk.prompt_words import prompt_settings
from folkscope.runs import Manifest, read_table

__all__ = ["leaderboard"]

#: metrics.json key -> column, in the order of the folktexts paper's summary table
_SHOWN = ("ece", "ece_quantile", "brier", "roc_auc", "accuracy", "confidence_bias")
_GAP = "Max SCE gap"


def _metric_row(block: Mapping[str, Any]) -> dict[str, Any]:
    """The shown metrics of one ``evaluate_scores`` result (unweighted), with intervals and the largest SCE gap."""
    un = block.get("unweighted") or {}
    overall, intervals = un.get("overall") or {}, un.get("intervals") or {}
    row: dict[str, Any] = {"n": overall.get("n")}
    for key in _SHOWN:
        title = TABLE_COLUMNS[key]
        row[title] = overall.get(key)
        if key in INTERVAL_METRICS:
            iv = intervals.get(key) or {}
            row[f"{title} low"], row[f"{title} high"] = iv.get("low"), iv.get("high")
    gaps = [((g.get("gaps") or {}).get("sce") or {}).get("max_minus_min") for g in (un.get("groups") or {}).values()]
    gaps = [abs(float(v)) for v in gaps if v is not None]
    row[_GAP] = max(gaps) if gaps else None
    return row


def _lead(frame: pd.DataFrame) -> str:
    """The answer: the most discriminating model, whether its AUC shows any signal, and the baselines' reach."""
    models = frame[frame["kind"] == "model"].dropna(subset=["AUC"])
    if models.empty:
        return "No model has a defined AUC on these rows."
    best = models.loc[models["AUC"].idxmax()]
    signal = "no signal above chance" if pd.notna(best["AUC low"]) and best["AUC low"] <= 0.5 else "above chance"
    text = f"Best AUC: {best['model']} {best['AUC']:.3f} ({signal}), ECE {best['ECE']:.3f}"
    base = frame[frame["kind"] == "baseline"].dropna(subset=["AUC"])
    if not base.empty:
        top = base.loc[base["AUC"].idxmax()]
        text += f"; the {top['model']} baseline reaches AUC {top['AUC']:.3f}"
    return text + "."


def leaderboard(folders: Sequence[Path], *, site: Path, draw: bool = True) -> PartBoard:
    """Every task's table over the given risk run folders, and the figures across them.

    Parameters
    ----------
    folders : sequence of Path
        Risk run folders (their manifests say ``part: risk``).
    site : Path
        The site folder; figures go to ``site/figures``.
    draw : bool
        Draw the figures (needs matplotlib; without it they are left out with a note).
    """
    groups: dict[tuple[str, str], list[tuple[Path, Manifest, Mapping[str, Any]]]] = {}
    runs, notes = run_metrics(folders)
    for folder, manifest, metrics in ((r.folder, r.manifest, r.metrics) for r in runs):
        task = str((manifest.data or {}).get("task") or (manifest.config.get("task") or {}).get("name") or "task")
        rows_of = {k: v for k, v in (manifest.data or {}).items() if k not in ("population",)}
        groups.setdefault((task, fingerprint(rows_of)[:8]), []).append((folder, manifest, metrics))
    tasks_seen: dict[str, int] = {}
    for task, _ in groups:
        tasks_seen[task] = tasks_seen.get(task, 0) + 1
    tables, per_task = [], {}
    for (task, data_key), runs in sorted(groups.items()):
        records, baselines = [], {}
        for folder, manifest, metrics in runs:
            model = metrics.get("model") or {}
            records.append(
                {
                    "model": manifest.model_name,
                    "prompt": prompt_settings(manifest.config),
                    "kind": "model",
                    **_metric_row(model),
                    "run": str(folder),
                }
            )
            for name, block in (metrics.get("baselines") or {}).items():
                baselines.setdefault(
                    name,
                    {
                        "model": name.replace("_", " "),
                        "prompt": "",
                        "kind": "baseline",
                        **_metric_row(block),
                        "run": str(folder),
                    },
                )
        frame = pd.DataFrame([*records, *baselines.values()])
        distinct = tasks_seen[task] > 1
        n_test = (runs[0][1].data or {}).get("test_rows")
        title = f"{task} ({n_test:,} test rows, data {data_key})" if distinct and n_test else task
        tables.append(
            BoardTable(
                part="risk",
                key=slug(f"risk-{task}-{data_key}" if distinct else f"risk-{task}"),
                title=title,
                frame=frame,
                intervals={
                    TABLE_COLUMNS[k]: (f"{TABLE_COLUMNS[k]} low", f"{TABLE_COLUMNS[k]} high")
                    for k in _SHOWN
                    if k in INTERVAL_METRICS
                },
                about="Unweighted metrics on the test rows; [95% bootstrap interval] of each run. Max SCE gap: the largest "
                "difference in signed calibration error between two groups of one sensitive column. Baselines use the same rows.",
                labels=("model", "prompt"),
                lead=_lead(frame),
            )
        )
        per_task[title] = runs
    figures = _figures(tables, per_task, site) if draw and tables else []
    return PartBoard(tables=tables, figures=figures, notes=notes)


def _figures(
    tables: list[BoardTable], per_task: Mapping[str, list[tuple[Path, Manifest, Mapping[str, Any]]]], site: Path
) -> list[BoardFigure]:
    from folkscope.risk.board_plots import (
        plot_ece_auc,
        plot_overlaid_calibration,
        plot_score_histograms,
    )

    out: list[BoardFigure] = []
    points = pd.concat([t.frame.assign(task=t.title) for t in tables], ignore_index=True)
    rel = drawn_figure(site, "risk-ece-vs-auc", lambda p: plot_ece_auc(points, p))
    if rel:
        out.append(
            BoardFigure(
                "risk",
                "ECE vs AUC, every model and task",
                rel,
                "Each numbered point is a model (or baseline) on a task, named in the key beside the axes: lower right "
                "is better (high AUC, low ECE).",
            )
        )
    for title, runs in per_task.items():
        scores = {}
        for folder, manifest, _ in runs:
            try:
                frame = read_table(folder, "scores")
            except DataError:
                continue
            name = f"{manifest.model_name} ({prompt_settings(manifest.config)})"
            scores[name if name not in scores else f"{name} [{folder.name}]"] = frame  # same words, other run
        if not scores:
            continue
        rel = drawn_figure(
            site,
            f"risk-calibration-{slug(title)}",
            lambda p, s=scores, t=title: plot_overlaid_calibration(s, p, title=t),
        )
        if rel:
            out.append(
                BoardFigure(
                    "risk",
                    f"Calibration curves: {title}",
                    rel,
                    "One panel per run: the observed share of positives against the mean risk score in equal-width "
                    "bins, with its 95% band; the diagonal is perfect calibration.",
                )
            )
        rel = drawn_figure(
            site, f"risk-scores-{slug(title)}", lambda p, s=scores, t=title: plot_score_histograms(s, p, title=t)
        )
        if rel:
            out.append(
                BoardFigure(
                    "risk",
                    f"Score distributions: {title}",
                    rel,
                    "A model that tells rows apart spreads its scores; a spike at 0.5 is no signal.",
                )
            )
    return out
