"""``folkscope numeric``: the numeric-context calibration study (part 4)."""

from __future__ import annotations

import argparse
import json
import time

from folkscope.numeric.problems import DATASETS, SCALES
from folkscope.numeric.run import NumericConfig, run_numeric
from folkscope.prompting.config import field_doc

DESCRIPTION = ("Score option words after numeric-context prompts and measure how well the "
               "model's probabilities follow the numbers (PM, WD, RE, behaviours).")


def _doc(name: str) -> str:
    return field_doc(NumericConfig, name)


def _names(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("numeric", help="numeric-context calibration study",
                                   description=DESCRIPTION)
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``folkscope numeric`` (help read from :class:`NumericConfig`)."""
    parser.add_argument("--dataset", choices=DATASETS, default="colors", help=_doc("dataset"))
    parser.add_argument("--model", default="default", help=_doc("model"))
    parser.add_argument("--inference-backend", dest="backend", default="transformers",
                        help=_doc("backend"))
    parser.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    parser.add_argument("--limit", type=int, default=None, help=_doc("limit"))
    parser.add_argument("--seed", type=int, default=0, help=_doc("seed"))
    parser.add_argument("--chat", action=argparse.BooleanOptionalAction, default=False,
                        help=_doc("chat"))
    parser.add_argument("--scales", type=_names, default=tuple(SCALES),
                        help=_doc("scales") + " Comma-separated.")
    parser.add_argument("--n-numbers", type=int, default=10, help=_doc("n_numbers"))
    parser.add_argument("--n-intervals", type=int, default=320, help=_doc("n_intervals"))
    parser.add_argument("--templates", type=_names, default=None,
                        help=_doc("templates") + " Comma-separated.")
    parser.add_argument("--words", type=_names, default=None, help=_doc("words") + " Comma-separated.")
    parser.add_argument("--template-file", default=None, help=_doc("template_file"))
    parser.add_argument("--cache-dir", default=None, help="engine result cache folder")
    parser.add_argument("--no-cache", action="store_true", help="compute everything, store nothing")
    parser.add_argument("--no-heatmap", action="store_true", help="skip the heatmap PNG")


def run(args: argparse.Namespace) -> int:
    config = NumericConfig(
        dataset=args.dataset, model=args.model, backend=args.backend, chat=args.chat,
        seed=args.seed, scales=args.scales, n_numbers=args.n_numbers,
        n_intervals=args.n_intervals, templates=args.templates, words=args.words,
        template_file=args.template_file, limit=args.limit)
    start = time.perf_counter()
    result = run_numeric(config, args.results_dir, cache_dir=args.cache_dir,
                         use_cache=not args.no_cache, heatmap=not args.no_heatmap)
    m = result.metrics
    brief = {
        "folder": str(result.folder),
        "n_problems": m["n_problems"],
        "n_cells": m["n_cells"],
        **{name: round(entry["mean"], 4) if entry["mean"] == entry["mean"] else None
           for name, entry in m["summary"].items()},
        "behaviour_shares": {k: round(v, 3) for k, v in m["behaviour_shares"].items() if v},
        "behaviour_shares_renormalised": {
            k: round(v, 3) for k, v in m["behaviour_shares_renormalised"].items() if v},
        "first_win_rate": m["order_bias"]["first_win_rate"],
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(brief, indent=2))
    return 0
