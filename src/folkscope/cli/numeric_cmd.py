"""``folkscope numeric``: the numeric-context calibration study (part 4)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from folkscope._json import to_jsonable
from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.engine.config import EngineConfig
from folkscope.engine.usage import usage_line
from folkscope.paths import check_writable_dir
from folkscope.runs import read_caveats
from folkscope.numeric.run import NumericConfig, attach_comparison, check_reference, run_numeric

DESCRIPTION = ("Score option words after numeric-context prompts and measure how well the "
               "model's probabilities follow the numbers (PM, WD, RE, behaviours).")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("numeric", help="numeric-context calibration study",
                                   description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``folkscope numeric``: :class:`NumericConfig`'s fields, the engine's, and the command's own."""
    parser.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    add_config_flags(parser, NumericConfig)
    parser.add_argument("--compare-to", default=None, metavar="RUN_FOLDER",
                        help="a finished run folder of the same problems (e.g. the base form); "
                             "paired differences of this run minus it, and the mode stability, "
                             "go into comparison.json, metrics.json and the report")
    parser.add_argument("--no-heatmap", action="store_true", help="skip the heatmap PNG")
    add_engine_arguments(parser)
    add_logger_level(parser)


def config_from_args(args: argparse.Namespace) -> tuple[EngineConfig, NumericConfig]:
    """The engine settings and the :class:`NumericConfig` of parsed flags, both checked (nothing loads)."""
    engine_config = engine_config_from_args(args)
    config = NumericConfig(model=engine_config.model, backend=engine_config.backend, **config_values(args, NumericConfig))
    return engine_config, config


def run(args: argparse.Namespace) -> int:
    engine_config, config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the model loads
    if args.compare_to is not None:  # not after every problem has been scored
        check_reference(args.compare_to, config.problems())
    start = time.perf_counter()
    result = run_numeric(config, args.results_dir, engine_config=engine_config, heatmap=not args.no_heatmap)
    m = result.metrics
    if args.compare_to is not None:
        m = attach_comparison(result.folder, args.compare_to, heatmap=not args.no_heatmap)
    print_brief(result.folder, m, wall_seconds=time.perf_counter() - start)
    return 0


def print_brief(folder: Path, m: dict[str, Any], *, wall_seconds: float | None = None) -> None:
    """The run's headline numbers as strict JSON on stdout (also ``folkscope rescore``'s summary of a numeric run)."""
    brief: dict[str, Any] = {
        "folder": str(folder),
        **({"caveats": [c.message for c in caveats]} if (caveats := read_caveats(folder)) else {}),
        "n_problems": m["n_problems"],
        "n_cells": m["n_cells"],
        **{name: round(entry["mean"], 4) if entry["mean"] == entry["mean"] else None
           for name, entry in m["summary"].items()},
        "ci95": {name: [round(entry["low"], 4), round(entry["high"], 4)]
                 if entry["mean"] == entry["mean"] else None
                 for name, entry in m["summary"].items()},
        "behaviour_shares": {k: round(v, 3) for k, v in m["behaviour_shares"].items() if v},
        "behaviour_shares_renormalised": {
            k: round(v, 3) for k, v in m["behaviour_shares_renormalised"].items() if v},
        "first_win_rate": m["order_bias"]["first_win_rate"],
    }
    if m.get("n_unscored"):
        brief["n_unscored"] = m["n_unscored"]
    if "frequency_effect" in m:
        fe = m["frequency_effect"]
        brief["frequency_effect"] = {
            part: {"spearman_rho": fe[part]["spearman_rho"], "p_value": fe[part]["p_value"],
                   "n": fe[part]["n"]} for part in ("all_numbers", "measured_only")}
    if "distributions" in m:
        brief["distributions"] = {k: v for k, v in m["distributions"].items()
                                  if k != "mode_last_digit"}
    if "pennies" in m:
        brief["pennies"] = {k: m["pennies"][k] for k in (
            "n_games", "n_rounds", "win_rate", "runs_test_pass_rate", "heads_rate",
            "mean_probability_mass", "fallback_rounds")}
    if "comparison" in m:
        brief["comparison"] = {"reference": m["comparison"]["base"],
                               "mode_stability": m["comparison"]["mode_stability"],
                               **{k: v["mean"] for k, v in m["comparison"]["differences"].items()}}
    paid = usage_line(m.get("engine_stats") or {}, m.get("backend_stats") or {})
    if paid:
        brief["web_api"] = paid
    if wall_seconds is not None:
        brief["wall_seconds"] = round(wall_seconds, 1)
    print(json.dumps(to_jsonable(brief), indent=2, allow_nan=False))
