"""A risk run's answer in one line of plain text: the page's headline and the terminal's last word.

The run page's headline and the console summary said the same thing in two
codes; here it is said once, from the metrics alone (no HTML, no I/O), and
each caller dresses it as it needs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from folkscope.report.numbers import fixed

__all__ = ["answer"]


def _defined(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _with_interval(value: Any, interval: Mapping[str, Any] | None) -> str:
    iv = interval or {}
    return fixed(value, iv.get("low"), iv.get("high"))


def answer(metrics: Mapping[str, Any], baselines: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """Discrimination and calibration with their 95% intervals, read against chance and the best baseline.

    Parameters
    ----------
    metrics : mapping
        The model's metrics (``metrics.json``'s ``"model"`` block: ``unweighted``
        with ``overall`` and ``intervals``).
    baselines : mapping, optional
        Baseline name -> its metrics in the same shape (``metrics.json``'s ``"baselines"``).

    Returns
    -------
    str
        One sentence or two, plain text.

    Examples
    --------
    >>> m = {"unweighted": {"overall": {"roc_auc": 0.545, "ece": 0.21},
    ...      "intervals": {"roc_auc": {"low": 0.424, "high": 0.68}, "ece": {"low": 0.15, "high": 0.27}}}}
    >>> answer(m)
    'AUC 0.545 [0.424, 0.680]: no signal, the interval includes chance (0.5); ECE 0.210 [0.150, 0.270].'
    >>> answer(m, {"logistic_regression": {"unweighted": {"overall": {"roc_auc": 0.857}}}}).split(". ")[1]
    'The logistic-regression baseline reaches AUC 0.857 on the same rows.'
    """
    unweighted = metrics.get("unweighted") or {}
    overall, intervals = unweighted.get("overall") or {}, unweighted.get("intervals") or {}
    auc = overall.get("roc_auc")
    if not _defined(auc):
        return "AUC is undefined on these rows (one class only); see the counts in the report."
    low = (intervals.get("roc_auc") or {}).get("low")
    signal = (
        "no signal, the interval includes chance (0.5)"
        if _defined(low) and low <= 0.5
        else "the scores rank people better than chance"
    )
    text = (
        f"AUC {_with_interval(auc, intervals.get('roc_auc'))}: {signal}; "
        f"ECE {_with_interval(overall.get('ece'), intervals.get('ece'))}."
    )
    best: tuple[str, float, Mapping[str, Any] | None] | None = None
    for name, block in (baselines or {}).items():
        b_un = block.get("unweighted") or {}
        b_auc = (b_un.get("overall") or {}).get("roc_auc")
        if _defined(b_auc) and (best is None or b_auc > best[1]):
            best = (name, float(b_auc), (b_un.get("intervals") or {}).get("roc_auc"))
    if best is not None:
        text += f" The {best[0].replace('_', '-')} baseline reaches AUC {_with_interval(best[1], best[2])} on the same rows."
    return text
