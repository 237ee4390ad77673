"""The console summary of an epidemiology run (``folkscope epidemiology run`` and ``folkscope rescore``): the answer first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.engine.usage import usage_line
from folkscope.runs import caveat_lines

__all__ = ["print_summary"]


def print_summary(folder: str | Path, metrics: dict[str, Any]) -> None:
    """The answer first (the mean score), then one line per task (also ``rescore``'s summary)."""
    print(f"run folder: {folder}")
    mean = metrics.get("mean_score")
    print(
        f"mean score {mean:.1f} of 100 over {metrics['n_tasks']} tasks ({metrics['mode']})"
        if mean is not None
        else "no task could be scored: the answers were unreadable, or (likelihood) 0% for every answer of a condition"
    )
    for line in caveat_lines(folder):
        print(line)
    scores = pd.DataFrame(metrics["scores"])[
        ["task", "score", "score_low", "score_high", "distance", "worst", "best", "mean_baseline"]
    ]
    print(scores.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    seconds = metrics.get("elicitation_seconds") or {}
    if seconds:
        print(f"elicitation: {sum(seconds.values()):.1f} s")
    paid = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if paid:
        print(paid)
    print(f"report: {folder}/report.html")
