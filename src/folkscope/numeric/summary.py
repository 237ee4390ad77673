"""The console summary of a numeric run (``folkscope numeric run`` and ``folkscope rescore``).

For a person, not a script: caveats, the PM/WD/RE table and one line per
extra analysis, fitted to the terminal, and last the answer
(:func:`folkscope.numeric.answer.answer`) and the page. Scripts read the
run folder's ``metrics.json``, which holds every number printed here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.engine.usage import usage_line
from folkscope.numeric.answer import answer, estimate
from folkscope.report.numbers import fixed, format_number
from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say
from folkscope.runs import read_caveats

__all__ = ["print_summary"]

#: the summary metrics as the table names them
_METRICS = {
    "probability_mass": "PM (mass on the options)",
    "calibration_distance": "WD (from the stated odds)",
    "relative_entropy": "RE (bits)",
}


def _shares(shares: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v:.1%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]) if v)


def _extras(m: dict[str, Any]) -> list[str]:
    """One sentence per extra analysis the run has (frequency effects, distributions, pennies, a comparison)."""
    lines = []
    if "frequency_effect" in m:
        fe = m["frequency_effect"]
        lines.append(
            "frequency effect (Spearman rho of WD with the log frequency gap): "
            + ", ".join(
                f"{part.replace('_', ' ')} {fixed(fe[part]['spearman_rho'])} (n {fe[part]['n']})"
                for part in ("all_numbers", "measured_only")
            )
        )
    if "distributions" in m:
        dist = m["distributions"]
        lines.append(
            f"distributions: mode probability {fixed(dist.get('mode_probability'))}, mode frequency "
            f"{fixed(dist.get('mode_frequency'))} against {fixed(dist.get('uniform_rate'))} for a uniform choice"
        )
    if "pennies" in m:
        pen = m["pennies"]
        lines.append(
            f"matching pennies: {pen['n_games']} games of {pen['n_rounds']} rounds, win rate {fixed(pen['win_rate'])} "
            f"(0.5 is random play), runs-test pass rate {fixed(pen['runs_test_pass_rate'])}, heads rate "
            f"{fixed(pen['heads_rate'])}, {pen['fallback_rounds']} rounds played as a fair coin"
        )
    if "comparison" in m:
        comp = m["comparison"]
        diffs = ", ".join(f"{k} {estimate(v)}" for k, v in comp["differences"].items())
        lines.append(f"this run minus {comp['base']}: {diffs}; mode stability {fixed(comp['mode_stability'])}")
    return lines


def print_summary(folder: str | Path, m: dict[str, Any], *, wall_seconds: float | None = None) -> None:
    """Caveats, PM/WD/RE with their intervals, the behaviours, the extras, then the answer and the page
    (also ``folkscope rescore``'s summary)."""
    print(f"run folder: {folder}")
    for line in caveat_lines(c.message for c in read_caveats(folder)):
        print(line)
    left_out = f"; {m['n_unscored']} left out (an option could not be scored)" if m.get("n_unscored") else ""
    say(f"{m['n_problems']:,} problems in {m['n_cells']:,} grid cells{left_out}")
    table = pd.DataFrame(
        [
            {"metric": _METRICS.get(name, name), "mean": e["mean"], "low": e["low"], "high": e["high"], "n": e["n"]}
            for name, e in m["summary"].items()
        ]
    )
    print("\n".join(fit_table(table, float_format=format_number)))
    say(f"grid cells by behaviour: {_shares(m['behaviour_shares']) or 'none'}")
    renormalised = _shares(m.get("behaviour_shares_renormalised") or {})
    if renormalised:
        say(f"by behaviour of the renormalised odds (Π / PM): {renormalised}")
    bias = m["order_bias"]
    say(
        f"order bias: the option listed first wins {fixed(bias['first_win_rate'])} of {bias['n']:,} two-option "
        "problems (0.5 is unbiased)"
    )
    for line in _extras(m):
        say(line)
    paid = usage_line(m.get("engine_stats") or {}, m.get("backend_stats") or {})
    if paid:
        say(paid)
    if wall_seconds is not None:
        print(f"wall time: {wall_seconds:.1f} s")
    print("\n".join(closing_lines(answer(m), Path(folder) / "report.html")))
