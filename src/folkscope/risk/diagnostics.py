"""Is there a risk score at all? Order bias, answer-letter mass and score collapse.

A small model can give AUC 0.6 and ECE 0.02 while every score sits between
0.497 and 0.502: the letters A and B are preferred by position, the
order-bias correction averages that preference to one half, and calibration
metrics then describe a constant. These numbers say so before anyone reads
the metrics (the default model: order bias 0.83, median letter mass 0.18,
all scores in 0.497–0.502).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["COLLAPSE_RANGE", "LOW_ANSWER_MASS", "STRONG_ORDER_BIAS", "score_diagnostics"]

#: A 5–95% score range below this is a collapse: the model barely tells rows apart.
COLLAPSE_RANGE = 0.02
#: Mean |score change| between answer orderings at or above this is reported as strong order bias.
STRONG_ORDER_BIAS = 0.2
#: A median probability mass on the answer letters below this is reported as low.
LOW_ANSWER_MASS = 0.5


def score_diagnostics(table: pd.DataFrame, score_col: str = "risk_score") -> dict[str, Any]:
    """Order bias, answer-letter mass and score spread of a run's ``scores.parquet`` table, with warnings.

    Parameters
    ----------
    table : pandas.DataFrame
        ``risk_score``, and where the run has them ``score_ordering_<k>``
        (multiple choice with order-bias correction) and ``answer_mass``.

    Returns
    -------
    dict
        ``order_bias`` (mean over rows of the range of the per-ordering
        scores, i.e. ``|score(A, B) - score(B, A)|`` for two options; None
        with one ordering), ``answer_mass`` (median, minimum and the share of
        rows below 0.5 of the probability the model put on the answer
        letters; None for numeric and chain-of-thought runs), ``spread``
        (min, 5% and 95% quantiles, max, ``collapsed``), ``caveats``
        (``{"code", "message"}``: ``scores-collapse``, ``order-bias``,
        ``low-answer-mass``; the run's manifest records them) and ``warnings``
        (their messages, for the report and console).

    Examples
    --------
    >>> t = pd.DataFrame({"risk_score": [0.499, 0.5, 0.501], "score_ordering_0": [0.9, 0.95, 0.92],
    ...                   "score_ordering_1": [0.1, 0.05, 0.08], "answer_mass": [0.2, 0.15, 0.18]})
    >>> d = score_diagnostics(t)
    >>> round(d["order_bias"]["mean_abs_difference"], 3), d["answer_mass"]["median"], d["spread"]["collapsed"]
    (0.847, 0.18, True)
    """
    scores = table[score_col].to_numpy(dtype=float)
    scores = scores[np.isfinite(scores)]
    out: dict[str, Any] = {"order_bias": None, "answer_mass": None, "spread": None, "caveats": [], "warnings": []}

    def caveat(code: str, message: str) -> None:
        out["caveats"].append({"code": code, "message": message})
        out["warnings"].append(message)

    if len(scores):
        q05, q95 = (float(v) for v in np.quantile(scores, [0.05, 0.95]))
        collapsed = bool(q95 - q05 < COLLAPSE_RANGE)
        out["spread"] = {
            "min": float(scores.min()),
            "q05": q05,
            "q95": q95,
            "max": float(scores.max()),
            "collapsed": collapsed,
        }
        if collapsed:
            caveat(
                "scores-collapse",
                f"Scores collapse: 90% of them lie in [{q05:.3f}, {q95:.3f}] (all in [{scores.min():.3f}, {scores.max():.3f}]). "
                "The model barely tells rows apart, so calibration and threshold metrics here describe a near-constant score.",
            )
    ordering_cols = sorted(c for c in table.columns if c.startswith("score_ordering_"))
    if len(ordering_cols) > 1:
        per = table[ordering_cols].to_numpy(dtype=float)
        ok = np.isfinite(per).all(axis=1)
        if ok.any():
            spread = per[ok].max(axis=1) - per[ok].min(axis=1)
            bias = float(spread.mean())
            out["order_bias"] = {
                "mean_abs_difference": bias,
                "max_abs_difference": float(spread.max()),
                "orderings": len(ordering_cols),
            }
            if bias >= STRONG_ORDER_BIAS:
                caveat(
                    "order-bias",
                    f"Answer order drives the answer: a row's score changes by {bias:.2f} on average when the options change "
                    "places. The order-bias correction averages this out, but the model's choice is mostly about letter position.",
                )
    if "answer_mass" in table.columns:
        mass = table["answer_mass"].to_numpy(dtype=float)
        mass = mass[np.isfinite(mass)]
        if len(mass):
            median = float(np.median(mass))
            out["answer_mass"] = {
                "median": median,
                "min": float(mass.min()),
                "share_below_half": float((mass < 0.5).mean()),
            }
            if median < LOW_ANSWER_MASS:
                caveat(
                    "low-answer-mass",
                    f"The model puts a median {median:.0%} of its next-token probability on the answer letters; scores are "
                    "renormalised over the letters, so they rest on a small part of what the model would say.",
                )
    return out
