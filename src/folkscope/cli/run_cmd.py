"""``folkscope run`` / ``run_acs_benchmark``: benchmark a model's risk scores on a survey task.

Every folktexts ``run_acs_benchmark`` flag is accepted with the same meaning;
they all go into one :class:`~folkscope.risk.BenchmarkConfig`, which checks
every option and combination before any data or model is loaded.
"""

from __future__ import annotations

import argparse
from typing import Any

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.data_args import add_data_source_arguments, data_options
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.cli.prompts_cmd import prompt_config_from_args
from folkscope.cli.tracker_args import add_tracker_arguments, tracked
from folkscope.paths import check_folder_path, check_writable_dir

__all__ = ["DESCRIPTION", "add_arguments", "benchmark_options", "config_from_args", "register", "run"]

DESCRIPTION = "Benchmark risk scores produced by a language model on ACS data."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Every flag of ``run_acs_benchmark`` (folktexts names) plus folkscope's own.

    The run's options are generated from :class:`~folkscope.risk.BenchmarkConfig`'s
    fields and the engine's from :class:`~folkscope.engine.EngineConfig`'s; only
    the task, the folders and the data source are this command's own.
    """
    from folkscope.risk.config import INFERENCE, PROMPTS, RUN, BenchmarkConfig

    core = parser.add_argument_group("model, task and folders")
    core.add_argument(
        "--task", default="ACSIncome", help="task name (ACS* download Census PUMS data; NIST* use bundled rows offline)"
    )
    core.add_argument("--results-dir", default="results", help="directory under which the run folder is written")
    core.add_argument(
        "--data-dir", default=None, help="root folder for downloaded survey data (default $FOLKSCOPE_HOME/data)"
    )
    add_data_source_arguments(
        parser.add_argument_group(
            "data source (default: Census PUMS download for ACS tasks, bundled rows for NIST tasks)"
        )
    )
    engine = parser.add_argument_group("inference")
    prompts = parser.add_argument_group("prompts")
    add_config_flags(parser, BenchmarkConfig, groups={RUN: core, INFERENCE: engine, PROMPTS: prompts})
    add_engine_arguments(parser, model_group=core, inference_group=engine)
    add_logger_level(parser)
    add_tracker_arguments(parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    """``folkscope risk run|list``, the grammar of every part, and ``folkscope run``, folktexts' spelling of ``risk run``."""
    from folkscope.cli import tasks_cmd

    folktexts = subparsers.add_parser(
        "run",
        help="benchmark risk scores of a model on a task (= risk run, run_acs_benchmark)",
        description=DESCRIPTION,
    )
    add_arguments(folktexts)
    folktexts.set_defaults(func=run)
    parser = subparsers.add_parser("risk", help="risk scores (folktexts): run, list", description=DESCRIPTION)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="risk_command", metavar="SUBCOMMAND")
    listing = commands.add_parser("list", help="the predefined tasks (= folkscope tasks)")
    tasks_cmd.add_arguments(listing)
    listing.set_defaults(func=tasks_cmd.run)
    run_parser = commands.add_parser("run", help="benchmark risk scores of a model on a task", description=DESCRIPTION)
    add_arguments(run_parser)
    run_parser.set_defaults(func=run)


def config_from_args(args: argparse.Namespace) -> tuple[Any, Any]:
    """The engine settings and the :class:`BenchmarkConfig` of parsed flags, both checked once (nothing loads)."""
    from folkscope.risk.config import BenchmarkConfig

    engine_config = engine_config_from_args(args)
    if args.data_dir is not None:
        check_folder_path(args.data_dir, flag="--data-dir")
    prompt_config_from_args(args)  # the prompt flags' own checks and warnings (few-shot options without --few-shot)
    return engine_config, BenchmarkConfig(**config_values(args, BenchmarkConfig))


def benchmark_options(args: argparse.Namespace, engine_config: Any) -> dict[str, Any]:
    """The engine settings and data flags as :meth:`Benchmark.make_benchmark <folkscope.risk.Benchmark.make_benchmark>`
    keywords (``run`` and ``evidence``): folktexts calls the engine ``model``."""
    return {"model": engine_config, "data_dir": args.data_dir, **data_options(args)}


@tracked
def run(args: argparse.Namespace) -> int:
    from folkscope.risk.run import Benchmark
    from folkscope.risk.summary import print_summary

    engine_config, config = config_from_args(args)
    check_writable_dir(args.results_dir)  # before the data and the model load
    bench = Benchmark.make_benchmark(args.task, config=config, **benchmark_options(args, engine_config))
    metrics = bench.run(args.results_dir)
    print_summary(bench.run_dir, metrics)
    return 0
