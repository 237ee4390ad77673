"""Part 3's caveats: tasks no answer could score.

A task is unscored when the model's answers could not be read, or (likelihood
readout) every answer of a condition had no probability; its score is NaN and
the run's mean is over the other tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folkscope.runs import Caveat

__all__ = ["run_caveats"]


def run_caveats(metrics: Mapping[str, Any]) -> list[Caveat]:
    """The caveats of an epidemiology run, from its ``metrics.json`` contents.

    >>> run_caveats({"scores": [{"task": "smoking", "score": None}, {"task": "sleep", "score": 80.0}]})[0].message
    '1 of 2 tasks could not be scored (smoking): their scores are n/a and the mean score is over the other 1.'
    """
    rows = list(metrics.get("scores") or [])
    unscored = [str(r.get("task")) for r in rows if r.get("score") is None or r.get("score") != r.get("score")]
    if not unscored:
        return []
    named = ", ".join(unscored[:4]) + (", ..." if len(unscored) > 4 else "")
    return [
        Caveat(
            "unscored-tasks",
            f"{len(unscored)} of {len(rows)} tasks could not be scored ({named}): their scores are n/a "
            f"and the mean score is over the other {len(rows) - len(unscored)}.",
        )
    ]
