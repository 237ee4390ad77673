"""An epidemiology run's answer in one line of plain text: the page's headline and the terminal's last word.

Said once, from the metrics alone (no HTML, no I/O): the mean score over
the tasks, what its ends mean, and how often the model lost to the mean
baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["answer"]


def answer(metrics: Mapping[str, Any]) -> str:
    """The mean score of 100 over the tasks, read against a uniform guess and the surveys' own noise.

    Parameters
    ----------
    metrics : mapping
        The run's ``metrics.json``: ``mean_score`` (None when no task was
        scored), ``n_tasks``, ``mode``, ``scores`` (records with ``distance``
        and ``mean_baseline``).

    Returns
    -------
    str
        One or two sentences, plain text.

    Examples
    --------
    >>> answer({"mean_score": 41.25, "n_tasks": 3, "mode": "verbalized",
    ...         "scores": [{"distance": 0.3, "mean_baseline": 0.2}, {"distance": 0.1, "mean_baseline": 0.2}]})
    "mean score 41.2 of 100 over 3 tasks (verbalized prompting): 0 is no closer to the surveys than a uniform guess, 100 as close as their own sampling noise. On 1 of 2 tasks the model is further from the truth than predicting the population's overall distribution for every condition (the mean baseline)."
    """
    mean = metrics.get("mean_score")
    if mean is None:
        return (
            "no task could be scored: on every task the model's answers were unreadable, or (likelihood) it "
            "stated 0% for every answer of a condition."
        )
    text = (
        f"mean score {mean:.1f} of 100 over {metrics['n_tasks']} tasks ({metrics['mode']} prompting): 0 is no "
        "closer to the surveys than a uniform guess, 100 as close as their own sampling noise."
    )
    scores = list(metrics.get("scores") or [])
    beaten = [s for s in scores if _above(s.get("distance"), s.get("mean_baseline"))]
    if beaten:
        text += f" On {len(beaten)} of {len(scores)} tasks the model is further from the truth than predicting the population's overall distribution for every condition (the mean baseline)."
    return text


def _above(distance: Any, baseline: Any) -> bool:
    """True when both are numbers and the model's distance exceeds the baseline's (NaN compares False)."""
    return isinstance(distance, (int, float)) and isinstance(baseline, (int, float)) and distance > baseline
