"""``folkscope epidemiology``: part 3. ``list`` shows the tasks, ``run`` scores a model on them, ``generate`` writes
high-dimensional tasks from a phrase table; ``folkscope rescore`` re-scores."""

from __future__ import annotations

import argparse
from typing import Any

from folkscope._config import comma_ints
from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.cli.engine_args import add_engine_arguments, engine_config_from_args
from folkscope.cli.parser import add_logger_level
from folkscope.cli.tracker_args import add_tracker_arguments, tracked

__all__ = ["DESCRIPTION", "config_from_args", "register", "run_epidemiology_cmd", "run_generate", "run_list"]

DESCRIPTION = "Epidemiology: does the model know how outcomes are distributed in real surveys? Scores 0-100 per task."


def register(subparsers: argparse._SubParsersAction) -> None:
    from folkscope.epidemiology import EpidemiologyConfig

    parser = subparsers.add_parser(
        "epidemiology", help="does the model know P(Y | X) of real surveys", description=DESCRIPTION
    )
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="epidemiology_command", metavar="SUBCOMMAND")
    listing = commands.add_parser("list", help="the tasks there are, by dataset")
    listing.add_argument("--dataset", default=None, help="only this dataset's tasks")
    listing.add_argument("--task-file", default=None, metavar="PATH,...", help="your own task file(s) as well")
    listing.add_argument("--task-dir", default=None, metavar="PATH", help="every task file of this folder as well")
    listing.set_defaults(func=run_list)
    run = commands.add_parser("run", help="score a model on tasks (all bundled ones, a --dataset, or --tasks)")
    run.add_argument("--results-dir", default="results", help="parent folder of the run folder")
    add_config_flags(run, EpidemiologyConfig)
    add_engine_arguments(run)
    add_logger_level(run)
    add_tracker_arguments(run)
    run.set_defaults(func=run_epidemiology_cmd)
    generate = commands.add_parser(
        "generate",
        help="write high-dimensional tasks drawn from a phrase table by a seed",
        description="Draw N distinct high-dimensional tasks (a binary outcome, 2-5 conditions) from a "
        "dataset's phrase table by SEED and write them as a task file; the same arguments give the "
        "same bytes.",
    )
    generate.add_argument(
        "--dataset", default=None, help="use the bundled phrase table of this dataset (nist-acs, anes96)"
    )
    generate.add_argument("--phrases", default=None, metavar="FILE", help="a phrase table of your own instead")
    generate.add_argument("--n", type=int, default=20, help="how many tasks (default 20)")
    generate.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    generate.add_argument(
        "--dims",
        type=comma_ints,
        default=(2, 5),
        metavar="LOW,HIGH",
        help="fewest and most conditions per task, both in 2-5 (default 2,5)",
    )
    generate.add_argument(
        "--min-persons",
        type=int,
        default=1,
        help="keep a task only when every combination of its condition "
        "levels holds this many people in the data (default 1; 0: do not read the data)",
    )
    generate.add_argument(
        "--data-dir", default=None, metavar="PATH", help="folder of your copy of a dataset that is not bundled"
    )
    generate.add_argument("--output", required=True, metavar="FILE", help="the task file to write (.json)")
    generate.set_defaults(func=run_generate)


def run_list(args: argparse.Namespace) -> int:
    from folkscope._config import comma_names
    from folkscope.data.public_datasets import PUBLIC_DATASETS
    from folkscope.epidemiology import DATASETS, list_tasks, task_files, user_task_files

    user = user_task_files(comma_names(args.task_file) if args.task_file else (), args.task_dir)
    tasks = list_tasks(dataset=args.dataset, extra=user)
    files = {f.dataset: f for f in [*task_files(), *user]}
    mine_files = {f.dataset: f for f in user}
    for dataset in dict.fromkeys(t.dataset for t in tasks):
        mine = sorted((t for t in tasks if t.dataset == dataset), key=lambda t: t.generated)  # hand-written first
        weights = files[dataset].weights or "unweighted (declared)"
        where = (
            f" (your task file {mine_files[dataset].path}{_data_of(mine_files[dataset])})"
            if dataset in mine_files
            else ""
            if dataset in DATASETS
            else " (public files: downloaded on first use, or your copy under --data-dir)"
            if dataset in PUBLIC_DATASETS
            else " (your copy: --data-dir)"
        )
        source, generated = files[dataset].source, sum(t.generated for t in mine)
        if source is not None:  # a published table: nothing to load
            weights, where = (
                "none: published proportions",
                f" ({source['publisher']}, {source['title']}, {source['url']})",
            )
        elif generated:
            where += f"; {generated} generated, asked with --dataset or --dimension high"
        print(f"{dataset}: {len(mine)} tasks, weights {weights}{where}")
        for task in mine:
            if task.conditions:
                where = f"conditions {', '.join(v.column for v in task.conditions)} (high-dimensional)"
            else:
                where = f"condition {task.condition.column if task.condition else 'none'}"
            print(f"  {task.name:<40} outcome {task.outcome.column} ({len(task.outcome.levels)} answers), {where}")
    return 0


def _data_of(file: Any) -> str:
    data = file.tasks[0].data_file
    return f", rows {data}" if data is not None else ""


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~folkscope.epidemiology.EpidemiologyConfig` of parsed flags, its engine settings in it (nothing loads)."""
    from folkscope.epidemiology import EpidemiologyConfig
    from folkscope.paths import check_folder_path

    config = EpidemiologyConfig(engine=engine_config_from_args(args), **config_values(args, EpidemiologyConfig))
    if config.data_dir is not None:
        check_folder_path(config.data_dir, flag="--data-dir")
    return config


@tracked
def run_epidemiology_cmd(args: argparse.Namespace) -> int:
    from folkscope.epidemiology import run_epidemiology
    from folkscope.epidemiology.summary import print_summary
    from folkscope.paths import check_writable_dir

    config = config_from_args(args)
    check_writable_dir(args.results_dir)
    result = run_epidemiology(config, args.results_dir)
    print_summary(result.folder, result.metrics)
    return 0


def run_generate(args: argparse.Namespace) -> int:
    """Draw the tasks, check them against the data (unless ``--min-persons 0``), write the file, say what it holds."""
    from collections import Counter

    from folkscope.epidemiology import list_tasks, load_dataset
    from folkscope.epidemiology.phrases import (
        bundled_phrases,
        generate_task_file,
        load_phrases,
        write_task_file,
    )
    from folkscope.errors import ConfigError
    from folkscope.paths import check_folder_path, check_output_file

    check_output_file(args.output)
    if args.data_dir is not None:
        check_folder_path(args.data_dir, flag="--data-dir")
    if (args.dataset is None) == (args.phrases is None):
        raise ConfigError("give --dataset (a bundled phrase table) or --phrases FILE, one of them", parameter="dataset")
    if len(args.dims) != 2:
        raise ConfigError(
            f"--dims takes LOW,HIGH, got {','.join(map(str, args.dims))}", parameter="dims", value=args.dims
        )
    if args.min_persons < 0:
        raise ConfigError(
            f"--min-persons must be 0 or more, got {args.min_persons}", parameter="min_persons", value=args.min_persons
        )
    phrases = load_phrases(bundled_phrases(args.dataset) if args.phrases is None else args.phrases)
    data = load_dataset(phrases.dataset, data_dir=args.data_dir) if args.min_persons > 0 else None
    # a generated task never repeats a hand-written one of its dataset (the same outcome by the same conditions)
    avoid = {
        (t.outcome.column, frozenset(v.column for v in t.conditions))
        for t in list_tasks()
        if t.dataset == phrases.dataset and t.dimension == "high" and not t.generated
    }
    task_file = generate_task_file(
        phrases, args.n, args.seed, tuple(args.dims), data=data, min_persons=args.min_persons, avoid=avoid
    )
    path = write_task_file(args.output, task_file)
    dims = Counter(len(t["conditions"]) for t in task_file["tasks"])
    print(
        f"wrote {len(task_file['tasks'])} {phrases.dataset} tasks to {path} "
        f"({', '.join(f'{dims[k]} with {k} conditions' for k in sorted(dims))})"
    )
    return 0
