"""Part 4's caveats: problems with an option the backend could not score.

Such problems are left out of every statistic (``n_unscored``); a web API's
chat endpoint, which returns only its top log-probabilities, leaves many out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folkscope.runs import Caveat

__all__ = ["run_caveats"]


def run_caveats(metrics: Mapping[str, Any]) -> list[Caveat]:
    """The caveats of a numeric run, from its ``metrics.json`` contents.

    >>> run_caveats({"n_problems": 40, "n_unscored": 6})[0].message
    '6 of 40 problems have an option the backend could not score: they are left out of every statistic.'
    """
    if not metrics.get("n_unscored"):
        return []
    return [
        Caveat(
            "unscored-options",
            f"{metrics['n_unscored']} of {metrics['n_problems']} problems have an option the backend "
            "could not score: they are left out of every statistic.",
        )
    ]
