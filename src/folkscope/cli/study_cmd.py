"""``folkscope study``: a whole grid of runs from one plan file. ``run`` runs (or resumes) it, ``list`` shows the
bundled plans; the work is :mod:`folkscope.study`'s."""

from __future__ import annotations

import argparse

from folkscope.cli.parser import add_logger_level

__all__ = ["register"]

DESCRIPTION = (
    "Run a study plan (TOML or YAML: models with their engine settings, parts, tasks, settings) as a grid of "
    "ordinary run folders: resumable, with its cost said first, ending with the leaderboard."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("study", help="a whole grid of runs from one plan file", description=DESCRIPTION)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)
    commands = parser.add_subparsers(dest="study_command", metavar="SUBCOMMAND")
    listing = commands.add_parser("list", help="the bundled plans (the four papers' grids and an offline demo)")
    listing.set_defaults(func=run_list)
    run = commands.add_parser("run", help="run the cells of a plan not done yet", description=DESCRIPTION)
    run.add_argument("plan", metavar="PLAN", help="a plan file (.toml, .yaml) or a bundled plan's name (study list)")
    run.add_argument(
        "--results-dir",
        default=None,
        help="where the run folders go (default: the plan's results_dir, else results/<plan name>)",
    )
    run.add_argument(
        "--dry-run", action="store_true", help="list the cells, what is done and their commands; run nothing"
    )
    run.add_argument("--no-estimate", action="store_true", help="start without measuring the cost of the cells first")
    run.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="run the cells' models on this Ray cluster (auto, ray://head:10001, or local to start one here); "
        "this machine keeps the run folders and the result cache",
    )
    run.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="cells at once on a Ray cluster (default: its GPUs, or its CPUs when it has none)",
    )
    run.add_argument("--no-leaderboard", action="store_true", help="do not write the leaderboard at the end")
    add_logger_level(run)
    run.set_defaults(func=run_plan)


def run_list(_args: argparse.Namespace) -> int:
    from folkscope.cli.main import build_parser
    from folkscope.study import bundled_plans, expand, load_plan
    from folkscope.study.grid import default_results_dir

    parser = build_parser()
    for name, path in bundled_plans().items():
        plan = load_plan(path)
        cells = expand(plan, default_results_dir(plan), parser)
        models = len(plan.models)
        print(f"{name:<13} {len(cells):>4} cells, {models:>2} models  {plan.description}")
    print("run one: folkscope study run NAME (--dry-run to see its cells first)")
    return 0


def run_plan(args: argparse.Namespace) -> int:
    from folkscope.cli.main import build_parser
    from folkscope.errors import ConfigError
    from folkscope.study import load_plan, run_study

    if args.jobs is not None and args.jobs < 1:
        raise ConfigError(f"--jobs must be 1 or more, got {args.jobs}", parameter="jobs", value=args.jobs)
    if args.jobs is not None and args.ray_address is None:
        raise ConfigError("--jobs applies with --ray-address (cells run one at a time otherwise)", parameter="jobs")
    plan = load_plan(args.plan)
    result = run_study(
        plan,
        build_parser(),
        results_dir=args.results_dir,
        dry_run=args.dry_run,
        ray_address=args.ray_address,
        jobs=args.jobs,
        estimate=not args.no_estimate,
        leaderboard=not args.no_leaderboard,
    )
    return 1 if result.failed else 0
