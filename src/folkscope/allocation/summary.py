"""The console summary of an allocation run (``folkscope allocation run`` and ``folkscope rescore``).

Caveats first (what the numbers rest on), then the selection and bias
tables fitted to the terminal, and last the answer (the page's headline,
:func:`folkscope.allocation.answer.answer`) and the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.allocation.answer import answer
from folkscope.engine.usage import usage_line
from folkscope.report.numbers import fixed
from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say
from folkscope.runs import read_caveats

__all__ = ["print_summary"]


#: the selection table's columns kept first when the terminal is narrow
_FIRST_COLUMNS = ("group", "n", "selection_rate", "impact_ratio", "dp_gap", "eo_gap")


def _print(lines: list[str]) -> None:
    print("\n".join(lines))


def print_summary(folder: str | Path, metrics: dict[str, Any]) -> None:
    """Caveats, the selection at k = 1 and the bias tables, then the answer and the page (also ``rescore``'s summary)."""
    page = Path(folder) / "report.html"
    print(f"run folder: {folder}")
    # unread answers, small groups: what the numbers below rest on
    for line in caveat_lines(c.message for c in read_caveats(folder)):
        print(line)
    if metrics.get("nothing_scored"):  # the answer says it in full
        _print(closing_lines(answer(metrics), page))
        return
    selection = pd.DataFrame(metrics["selection"])
    at1 = selection[selection["k"] == 1].drop(columns=["k"])
    first = [c for c in _FIRST_COLUMNS if c in at1.columns]
    at1 = at1[first + [c for c in at1.columns if c not in first]]
    print("selection at k = 1:")
    _print(fit_table(at1, float_format=fixed))
    bias = pd.DataFrame(metrics["bias"])
    if len(bias):
        bias = bias.apply(
            lambda col: col.astype(float) if col.dtype == object and col.isna().all() else col
        )  # JSON null -> NaN
        say(f"bias against {metrics['reference']} (RABBI > 0: the group is ranked above it):")
        shown = [
            c
            for c in ("group", "n", "rabbi", "rabbi_low", "rabbi_high", "rabbi_p_value", "delta", "jsd", "emd")
            if c in bias
        ]
        _print(fit_table(bias[shown], float_format=fixed))
        notes = sorted({str(n) for col in ("interval_note", "distance_note") if col in bias for n in bias[col] if n})
        for note in notes:
            say(f"too small to say: {note}")
    if metrics.get("pairwise"):
        shares = metrics["pairwise"]
        say(
            "pairwise answers: "
            + ", ".join(f"{k} {shares[k]:.1%}" for k in ("regular", "tie", "flipped", "inconsistent", "unread"))
        )
    if "scoring_seconds" in metrics:
        print(f"scoring: {metrics['scoring_seconds']:.1f} s")
    line = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if line:
        say(line)
    for note in metrics.get("notes") or ():
        say(f"note: {note}")
    _print(closing_lines(answer(metrics), page))
