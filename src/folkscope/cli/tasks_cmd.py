"""``folkscope tasks``: list the predefined tasks and what they read."""

from __future__ import annotations

import argparse
import json

from folkscope.tasks import get_task, list_tasks


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tasks", help="list predefined tasks (features, target, population; = risk list)")
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of the listing (``folkscope tasks`` and ``folkscope risk list``)."""
    parser.add_argument("--json", action="store_true", help="print the full definitions as JSON")


def run(args: argparse.Namespace) -> int:
    tasks = [get_task(name) for name in list_tasks()]
    if args.json:
        print(json.dumps([t.to_dict() for t in tasks], indent=2, default=str))
        return 0
    width = max(len(task.name) for task in tasks) + 1
    for task in tasks:
        filters = " & ".join(f.to_string() for f in task.filters) or "everyone"
        print(f"{task.name:<{width}} [{task.source}] target {task.target_name}; population {filters}")
        print(f"{'':<{width}} features: {', '.join(task.features)}")
    return 0
