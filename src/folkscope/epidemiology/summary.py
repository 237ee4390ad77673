"""The console summary of an epidemiology run (``folkscope epidemiology run`` and ``folkscope rescore``).

Caveats first, then one line per task in a table fitted to the terminal, and
last the answer (the page's headline, :func:`folkscope.epidemiology.answer.answer`)
and the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.engine.usage import usage_line
from folkscope.epidemiology.answer import answer
from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say
from folkscope.runs import read_caveats

__all__ = ["print_summary"]

#: the per-task columns, most important first (a narrow terminal drops them from the right)
_COLUMNS = ["task", "score", "score_low", "score_high", "distance", "mean_baseline", "worst", "best"]


def print_summary(folder: str | Path, metrics: dict[str, Any]) -> None:
    """Caveats, one line per task, then the answer and the page (also ``rescore``'s summary)."""
    print(f"run folder: {folder}")
    for line in caveat_lines(c.message for c in read_caveats(folder)):
        print(line)
    scores = pd.DataFrame(metrics["scores"])
    lines = fit_table(scores[[c for c in _COLUMNS if c in scores]], float_format=lambda v: f"{v:.3f}")
    print("\n".join(lines))
    seconds = metrics.get("elicitation_seconds") or {}
    if seconds:
        print(f"elicitation: {sum(seconds.values()):.1f} s")
    paid = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if paid:
        say(paid)
    print("\n".join(closing_lines(answer(metrics), Path(folder) / "report.html")))
