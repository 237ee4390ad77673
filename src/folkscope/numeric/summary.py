"""The console summary of a numeric run (``folkscope numeric run`` and ``folkscope rescore``): strict JSON, for scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from folkscope._json import to_jsonable
from folkscope.engine.usage import usage_line
from folkscope.runs import read_caveats

__all__ = ["print_summary"]


def print_summary(folder: str | Path, m: dict[str, Any], *, wall_seconds: float | None = None) -> None:
    """The run's headline numbers as strict JSON on stdout, caveats first (also ``folkscope rescore``'s summary)."""
    brief: dict[str, Any] = {
        "folder": str(folder),
        **({"caveats": [c.message for c in caveats]} if (caveats := read_caveats(folder)) else {}),
        "n_problems": m["n_problems"],
        "n_cells": m["n_cells"],
        **{
            name: round(entry["mean"], 4) if entry["mean"] == entry["mean"] else None
            for name, entry in m["summary"].items()
        },
        "ci95": {
            name: [round(entry["low"], 4), round(entry["high"], 4)] if entry["mean"] == entry["mean"] else None
            for name, entry in m["summary"].items()
        },
        "behaviour_shares": {k: round(v, 3) for k, v in m["behaviour_shares"].items() if v},
        "behaviour_shares_renormalised": {k: round(v, 3) for k, v in m["behaviour_shares_renormalised"].items() if v},
        "first_win_rate": m["order_bias"]["first_win_rate"],
    }
    if m.get("n_unscored"):
        brief["n_unscored"] = m["n_unscored"]
    if "frequency_effect" in m:
        fe = m["frequency_effect"]
        brief["frequency_effect"] = {
            part: {"spearman_rho": fe[part]["spearman_rho"], "p_value": fe[part]["p_value"], "n": fe[part]["n"]}
            for part in ("all_numbers", "measured_only")
        }
    if "distributions" in m:
        brief["distributions"] = {k: v for k, v in m["distributions"].items() if k != "mode_last_digit"}
    if "pennies" in m:
        brief["pennies"] = {
            k: m["pennies"][k]
            for k in (
                "n_games",
                "n_rounds",
                "win_rate",
                "runs_test_pass_rate",
                "heads_rate",
                "mean_probability_mass",
                "fallback_rounds",
            )
        }
    if "comparison" in m:
        brief["comparison"] = {
            "reference": m["comparison"]["base"],
            "mode_stability": m["comparison"]["mode_stability"],
            **{k: v["mean"] for k, v in m["comparison"]["differences"].items()},
        }
    paid = usage_line(m.get("engine_stats") or {}, m.get("backend_stats") or {})
    if paid:
        brief["web_api"] = paid
    if wall_seconds is not None:
        brief["wall_seconds"] = round(wall_seconds, 1)
    print(json.dumps(to_jsonable(brief), indent=2, allow_nan=False))
