"""Part 3's caveats: tasks no answer could score, scores the references cannot size, decoded shares below 0.

- A task is unscored when the model's answers could not be read, or
  (likelihood readout, every level asked) every answer of a condition stated
  0%; its score is NaN and the run's mean is over the other tasks.
- A task whose best reference is not below its worst has no room to score:
  under the paper's rule its score is 0 or 100, under ``nan`` undefined.
- The paper's likelihood decoding gives the unasked level 1 minus the stated
  values; where they sum above 1 that share is negative and the distance
  counts it as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folkscope.epidemiology.config import made_with
from folkscope.runs import Caveat

__all__ = ["run_caveats"]


def run_caveats(metrics: Mapping[str, Any]) -> list[Caveat]:
    """The caveats of an epidemiology run, from its ``metrics.json`` contents.

    >>> run_caveats({"scores": [{"task": "smoking", "score": None}, {"task": "sleep", "score": 80.0}]})[0].message
    '1 of 2 tasks could not be scored (smoking): their scores are n/a and the mean score is over the other 1.'
    """
    rows = list(metrics.get("scores") or [])
    caveats = []
    unscored = [str(r.get("task")) for r in rows if r.get("score") is None or r.get("score") != r.get("score")]
    if unscored:
        caveats.append(
            Caveat(
                "unscored-tasks",
                f"{len(unscored)} of {len(rows)} tasks could not be scored ({_named(unscored)}): their scores are n/a "
                f"and the mean score is over the other {len(rows) - len(unscored)}.",
            )
        )
    crossed = [str(r.get("task")) for r in rows if r.get("references_crossed")]
    if crossed:
        rule = made_with(metrics.get("config") or {})["best_above_worst"]
        outcome = "0 or 100 (the paper's rule)" if rule == "paper" else "n/a (--best-above-worst nan)"
        caveats.append(
            Caveat(
                "crossed-references",
                f"{len(crossed)} of {len(rows)} tasks have a best reference not below the uniform guess "
                f"({_named(crossed)}): the survey is too noisy to tell a model from a guess, and their scores are "
                f"{outcome}.",
            )
        )
    negative = [(str(r.get("task")), int(r.get("negative_remainders") or 0)) for r in rows]
    negative = [(task, n) for task, n in negative if n]
    if negative:
        caveats.append(
            Caveat(
                "negative-remainders",
                f"{sum(n for _, n in negative)} condition(s) of {len(negative)} task(s) ({_named([t for t, _ in negative])}) "
                "stated probabilities summing above 1, so the paper's decoding left the last answer a negative share; "
                "their distances count it as the paper's code does (--likelihood-levels all renormalises instead).",
            )
        )
    return caveats


def _named(tasks: list[str]) -> str:
    return ", ".join(tasks[:4]) + (", ..." if len(tasks) > 4 else "")
