"""``folkscope numeric``: part 4, numeric-context calibration. ``run`` scores a model, ``list`` shows the datasets."""

from __future__ import annotations

import argparse
import time

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.cli.tracker_args import add_tracker_arguments, tracked
from folkscope.numeric import NumericConfig, run_numeric
from folkscope.numeric.compare import attach_comparison, check_reference
from folkscope.numeric.summary import print_summary
from folkscope.paths import check_writable_dir

DESCRIPTION = (
    "Score option words after numeric-context prompts and measure how well the "
    "model's probabilities follow the numbers (PM, WD, RE, behaviours)."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("numeric", help="numeric-context calibration study", description=DESCRIPTION)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="numeric_command", metavar="SUBCOMMAND")
    listing = commands.add_parser(
        "list", help="the datasets, their templates and how many problems a default run scores"
    )
    listing.set_defaults(func=run_list)
    run_parser = commands.add_parser(
        "run", help="score a model's option probabilities after numeric-context prompts", description=DESCRIPTION
    )
    add_arguments(run_parser)
    run_parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``folkscope numeric run``: :class:`NumericConfig`'s fields, the engine's, and the command's own."""
    parser.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    add_config_flags(parser, NumericConfig)
    parser.add_argument(
        "--compare-to",
        default=None,
        metavar="RUN_FOLDER",
        help="a finished run folder of the same problems (e.g. the base form); "
        "paired differences of this run minus it, and the mode stability, "
        "go into comparison.json, metrics.json and the report",
    )
    parser.add_argument("--no-heatmap", action="store_true", help="skip the heatmap PNG")
    add_engine_arguments(parser)
    add_logger_level(parser)
    add_tracker_arguments(parser)


def config_from_args(args: argparse.Namespace) -> NumericConfig:
    """The :class:`NumericConfig` of parsed flags, its engine settings in it, checked (nothing loads)."""
    return NumericConfig(engine=engine_config_from_args(args), **config_values(args, NumericConfig))


@tracked
def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the model loads
    if args.compare_to is not None:  # not after every problem has been scored
        check_reference(args.compare_to, config.problems())
    start = time.perf_counter()
    result = run_numeric(config, args.results_dir, heatmap=not args.no_heatmap)
    m = result.metrics
    if args.compare_to is not None:
        m = attach_comparison(result.folder, args.compare_to, heatmap=not args.no_heatmap)
    print_summary(result.folder, m, wall_seconds=time.perf_counter() - start)
    return 0


def run_list(_args: argparse.Namespace) -> int:
    """One line per dataset: its bundled templates, the problems a default run scores (``--limit N`` for fewer), what it is."""
    from folkscope.numeric.problems import load_templates
    from folkscope.numeric.templates import DATASETS

    for name in DATASETS:
        source = load_templates(name, None)
        problems = len(NumericConfig(dataset=name).problems())
        print(
            f"{name:<14} {len(source.templates):>2} templates, {problems:>7,} problems by default  {source.description}"
        )
    return 0
