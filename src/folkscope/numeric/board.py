"""Part 4 on the leaderboard: one table per dataset, a row per run (model, base or chat prompt).

The three summaries of the paper (PM: probability mass on the two options,
WD: calibration distance to the stated proportions, RE: relative entropy),
each with the run's clustered interval, and the behaviour shares of its
grid cells (calibrated, always the larger or smaller count, always the first
or second option, null where the options get almost no mass).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.report.board import BoardTable, PartBoard, run_metrics, slug
from folkscope.runs import Manifest

__all__ = ["leaderboard"]

_SUMMARIES = {"probability_mass": "PM", "calibration_distance": "WD", "relative_entropy": "RE"}
_BEHAVIOURS = ("calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second", "null")


def _row(folder: Path, manifest: Manifest, metrics: dict[str, Any]) -> dict[str, Any]:
    config = metrics.get("config") or {}
    row: dict[str, Any] = {
        "model": manifest.model_name,
        "prompt": "chat" if config.get("chat") else "base",
        "problems": metrics.get("n_problems"),
    }
    for key, title in _SUMMARIES.items():
        block = (metrics.get("summary") or {}).get(key) or {}
        row[title], row[f"{title} low"], row[f"{title} high"] = block.get("mean"), block.get("low"), block.get("high")
    shares = metrics.get("behaviour_shares") or {}
    for name in _BEHAVIOURS:
        row[f"share {name.replace('_', ' ')}"] = shares.get(name)
    row["run"] = str(folder)
    return row


def _lead(frame: pd.DataFrame) -> str:
    """The answer: which run follows the stated counts most closely, and how much mass it puts on the options."""
    scored = frame.dropna(subset=["WD"])
    if scored.empty:
        return "No run has a defined calibration distance."
    best = scored.loc[scored["WD"].idxmin()]
    return (
        f"Closest to the stated proportions: {best['model']} ({best['prompt']}), WD {best['WD']:.3f}, "
        f"with {best['PM']:.1%} of its probability on the two options."
    )


def leaderboard(folders: Sequence[Path], *, site: Path, draw: bool = True) -> PartBoard:
    """One table per numeric dataset over the given run folders (no cross-run figure: each run page has its heatmap)."""
    by_dataset: dict[str, list[dict[str, Any]]] = {}
    runs, notes = run_metrics(folders)
    for run in runs:
        dataset = str(
            (run.metrics.get("config") or {}).get("dataset") or run.manifest.config.get("dataset") or "numeric"
        )
        by_dataset.setdefault(dataset, []).append(_row(run.folder, run.manifest, dict(run.metrics)))
    tables = [
        BoardTable(
            part="numeric",
            key=slug(f"numeric-{dataset}"),
            title=dataset,
            frame=pd.DataFrame(rows),
            lead=_lead(pd.DataFrame(rows)),
            intervals={t: (f"{t} low", f"{t} high") for t in _SUMMARIES.values()},
            labels=("model", "prompt"),
            about="PM: probability mass on the two options (higher: the model answers the question); WD: "
            "Wasserstein distance of the raw probabilities to the stated proportions (lower is better); RE: relative "
            "entropy against them, in bits. [95% interval clustered by option pair.] Shares: behaviour of the grid cells.",
        )
        for dataset, rows in sorted(by_dataset.items())
    ]
    return PartBoard(tables=tables, notes=notes)
