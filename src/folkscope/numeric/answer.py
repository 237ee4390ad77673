"""A numeric run's answer in one line of plain text: the page's headline and the terminal's last word.

Said once, from the metrics alone (no HTML, no I/O): how much probability
the model puts on the options, how far its odds are from the numbers in the
prompt, how concentrated they are, and which reference behaviour most grid
cells follow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from folkscope.report.numbers import format_number

__all__ = ["answer", "estimate"]


def estimate(entry: Mapping[str, Any] | None) -> str:
    """``0.726 [0.700, 0.750]``, ``n/a`` when undefined (three decimals, two significant digits when smaller).

    Examples
    --------
    >>> estimate({"mean": 4.1e-09, "low": 1.3e-09, "high": 6.9e-09}), estimate({"mean": float("nan")})
    ('4.1e-09 [1.3e-09, 6.9e-09]', 'n/a')
    """
    entry = entry or {}
    mean = entry.get("mean")
    if not isinstance(mean, (int, float)) or math.isnan(mean):
        return "n/a"
    text = format_number(float(mean))
    low, high = entry.get("low"), entry.get("high")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and not (math.isnan(low) or math.isnan(high)):
        text += f" [{format_number(float(low))}, {format_number(float(high))}]"
    return text


def answer(metrics: Mapping[str, Any]) -> str:
    """PM, WD and RE with their 95% intervals, and the behaviour most grid cells follow.

    Parameters
    ----------
    metrics : mapping
        The run's ``metrics.json``: ``summary`` (``probability_mass``,
        ``calibration_distance``, ``relative_entropy``, each with ``mean``,
        ``low``, ``high``), ``behaviour_shares``, ``n_cells``, ``n_unscored``.

    Returns
    -------
    str
        One sentence, plain text.

    Examples
    --------
    >>> answer({"n_cells": 550, "behaviour_shares": {"null": 0.9, "calibrated": 0.1}, "summary": {
    ...     "probability_mass": {"mean": 0.82, "low": 0.8, "high": 0.84},
    ...     "calibration_distance": {"mean": 0.31, "low": 0.29, "high": 0.33},
    ...     "relative_entropy": {"mean": -0.4, "low": -0.45, "high": -0.35}}})
    'probability on the options PM 0.820 [0.800, 0.840]; distance from the stated odds WD 0.310 [0.290, 0.330] (0: calibrated); relative entropy RE -0.400 [-0.450, -0.350] bits (< 0: too concentrated); 90% of 550 grid cells behave as null.'
    """
    summary = metrics.get("summary") or {}
    text = (
        f"probability on the options PM {estimate(summary.get('probability_mass'))}; "
        f"distance from the stated odds WD {estimate(summary.get('calibration_distance'))} (0: calibrated); "
        f"relative entropy RE {estimate(summary.get('relative_entropy'))} bits (< 0: too concentrated)"
    )
    shares = {k: v for k, v in (metrics.get("behaviour_shares") or {}).items() if isinstance(v, (int, float)) and v > 0}
    if shares:
        top = max(shares, key=lambda k: shares[k])
        text += f"; {shares[top]:.0%} of {metrics.get('n_cells', '?')} grid cells behave as {top}"
    if metrics.get("n_unscored"):
        text += f"; {metrics['n_unscored']} problems left out (an option could not be scored)"
    return text + "."
