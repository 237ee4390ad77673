"""The console summary of an allocation run (``folkscope allocation run`` and ``folkscope rescore``): the answer first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.allocation.outcomes import FOUR_FIFTHS, headline_bias, interval_text
from folkscope.engine.usage import usage_line
from folkscope.report.numbers import fixed
from folkscope.runs import caveat_lines

__all__ = ["print_summary"]


def print_summary(folder: str | Path, metrics: dict[str, Any]) -> None:
    """The answer first (the least-picked group at k = 1), then the selection and bias tables (also ``rescore``'s summary)."""
    worst = metrics["min_impact_ratio_k1"]
    print(f"run folder: {folder}")
    if metrics.get("nothing_scored"):  # said here in full; its caveat repeats it
        print(f"nothing measured: {metrics['nothing_scored']}")
        print(f"report: {folder}/report.html")
        return
    if worst.get("group") is None or worst["value"] != worst["value"]:
        print(f"top-1 of {metrics['n_pools']} pools: no impact ratio is defined (no group was ever picked)")
    else:
        verdict = "below the four-fifths line" if worst["value"] < FOUR_FIFTHS else "within the four-fifths rule"
        count = f" ({worst['selected']:g} of {worst['n']} appearances picked)" if "n" in worst else ""
        print(
            f"top-1 of {metrics['n_pools']} pools: lowest impact ratio {worst['group']} {worst['value']:.2f}{count}, {verdict}"
        )
    for line in caveat_lines(folder):  # unread answers, small groups: what the numbers below rest on
        print(line)
    selection = pd.DataFrame(metrics["selection"])
    at1 = selection[selection["k"] == 1].drop(columns=["k"])
    print(at1.to_string(index=False, float_format=fixed, na_rep="n/a"))
    bias = pd.DataFrame(metrics["bias"])
    if len(bias):
        bias = bias.apply(
            lambda col: col.astype(float) if col.dtype == object and col.isna().all() else col
        )  # JSON null -> NaN
        top = headline_bias(bias)
        if top is not None:
            print(
                f"strongest evidence of rank bias: {top['group']} RABBI {top['rabbi']:+.3f} {interval_text(top)}, "
                f"p = {top['rabbi_p_value']:.3g}"
            )
        print(f"bias against {metrics['reference']} (RABBI > 0: the group is ranked above it):")
        shown = [
            c
            for c in ("group", "n", "rabbi", "rabbi_low", "rabbi_high", "rabbi_p_value", "delta", "jsd", "emd")
            if c in bias
        ]
        print(bias[shown].to_string(index=False, float_format=fixed, na_rep="n/a"))
        notes = sorted({str(n) for col in ("interval_note", "distance_note") if col in bias for n in bias[col] if n})
        for note in notes:
            print(f"too small to say: {note}")
    if metrics.get("pairwise"):
        shares = metrics["pairwise"]
        print(
            "pairwise answers: "
            + ", ".join(f"{k} {shares[k]:.1%}" for k in ("regular", "tie", "flipped", "inconsistent", "unread"))
        )
    if "scoring_seconds" in metrics:
        print(f"scoring: {metrics['scoring_seconds']:.1f} s")
    line = usage_line(metrics.get("engine_stats") or {}, metrics.get("backend_stats") or {})
    if line:
        print(line)
    for note in metrics.get("notes") or ():
        print(f"note: {note}")
    print(f"report: {folder}/report.html")
