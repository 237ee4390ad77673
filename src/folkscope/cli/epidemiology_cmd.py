"""``folkscope epidemiology``: part 3. ``list`` shows the tasks, ``run`` scores a model on them; ``folkscope rescore`` re-scores."""

from __future__ import annotations

import argparse
from typing import Any

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args

__all__ = ["DESCRIPTION", "config_from_args", "print_run", "register", "run_epidemiology_cmd", "run_list"]

DESCRIPTION = "Epidemiology: does the model know how outcomes are distributed in real surveys? Scores 0-100 per task."


def register(subparsers: argparse._SubParsersAction) -> None:
    from folkscope.epidemiology import EpidemiologyConfig

    parser = subparsers.add_parser("epidemiology", help="does the model know P(Y | X) of real surveys", description=DESCRIPTION)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="epidemiology_command", metavar="SUBCOMMAND")
    listing = commands.add_parser("list", help="the tasks there are, by dataset")
    listing.add_argument("--dataset", default=None, help="only this dataset's tasks")
    listing.set_defaults(func=run_list)
    run = commands.add_parser("run", help="score a model on tasks (all bundled ones, a --dataset, or --tasks)")
    run.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    add_config_flags(run, EpidemiologyConfig)
    add_engine_arguments(run)
    run.set_defaults(func=run_epidemiology_cmd)


def run_list(args: argparse.Namespace) -> int:
    from folkscope.epidemiology import DATASETS, list_tasks, task_files

    tasks = list_tasks(dataset=args.dataset)
    files = {f.dataset: f for f in task_files()}
    for dataset in dict.fromkeys(t.dataset for t in tasks):
        mine = [t for t in tasks if t.dataset == dataset]
        weights = files[dataset].weights or "unweighted (declared)"
        where = "" if dataset in DATASETS else " (your copy: --data-dir)"
        print(f"{dataset}: {len(mine)} tasks, weights {weights}{where}")
        for task in mine:
            if task.conditions:
                where = f"conditions {', '.join(v.column for v in task.conditions)} (high-dimensional)"
            else:
                where = f"condition {task.condition.column if task.condition else 'none'}"
            print(f"  {task.name:<40} outcome {task.outcome.column} ({len(task.outcome.levels)} answers), {where}")
    return 0


def config_from_args(args: argparse.Namespace) -> tuple[Any, Any]:
    """The engine settings and the :class:`~folkscope.epidemiology.EpidemiologyConfig` of parsed flags (nothing loads)."""
    from folkscope.epidemiology import EpidemiologyConfig

    engine_config = engine_config_from_args(args)
    return engine_config, EpidemiologyConfig(model=engine_config.model, backend=engine_config.backend,
                                             **config_values(args, EpidemiologyConfig))  # fmt: skip


def print_run(folder: Any, metrics: dict[str, Any]) -> None:
    """The answer first (the mean score), then one line per task (also ``rescore``'s summary)."""
    import pandas as pd

    print(f"run folder: {folder}")
    mean = metrics.get("mean_score")
    print(f"mean score {mean:.1f} of 100 over {metrics['n_tasks']} tasks ({metrics['mode']})" if mean is not None
          else "no task could be scored: the answers were unreadable, or (likelihood) 0% for every answer of a condition")  # fmt: skip
    scores = pd.DataFrame(metrics["scores"])[["task", "score", "score_low", "score_high", "distance", "worst", "best", "mean_baseline"]]
    print(scores.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    seconds = metrics.get("elicitation_seconds") or {}
    if seconds:
        print(f"elicitation: {sum(seconds.values()):.1f} s")
    print(f"report: {folder}/report.html")


def run_epidemiology_cmd(args: argparse.Namespace) -> int:
    from folkscope.epidemiology import run_epidemiology
    from folkscope.logs import check_writable_dir

    engine_config, config = config_from_args(args)
    check_writable_dir(args.results_dir)
    result = run_epidemiology(config, args.results_dir, engine_config=engine_config)
    print_run(result.folder, result.metrics)
    return 0
