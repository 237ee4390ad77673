"""Part 1's caveats: what makes a run's risk scores, and so its metrics, mislead.

The score diagnostics (:func:`folkscope.risk.diagnostics.score_diagnostics`)
name three: scores that collapse to one value, answer order driving the
answer, little probability on the answer letters. Test rows the model could
not score are the fourth: every metric is over the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from folkscope.runs import Caveat

__all__ = ["run_caveats"]


def run_caveats(metrics: Mapping[str, Any]) -> list[Caveat]:
    """The caveats of a risk run, from its ``metrics.json`` contents.

    >>> run_caveats({"diagnostics": {"caveats": [{"code": "order-bias", "message": "Answer order drives the answer."}]},
    ...              "model": {"counts": {"n_rows": 10, "n_scored": 7, "n_excluded": 3}}})[1].message
    '3 of 10 test rows have no score (the model gave no usable answer); every metric is over the other 7.'
    """
    caveats = [Caveat.from_dict(c) for c in (metrics.get("diagnostics") or {}).get("caveats") or []]
    counts = (metrics.get("model") or {}).get("counts") or {}
    if counts.get("n_excluded"):
        caveats.append(
            Caveat(
                "unscored-rows",
                f"{counts['n_excluded']} of {counts['n_rows']} test rows have no score (the model "
                f"gave no usable answer); every metric is over the other {counts['n_scored']}.",
            )
        )
    return caveats
