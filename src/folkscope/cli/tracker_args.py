"""``--wandb-project``, ``--mlflow-uri`` and ``--tracker-run-name``: the same tracker flags on every part's ``run`` and on ``export``.

A part's ``run`` command is wrapped by :func:`tracked`: the flags are
checked before anything loads (a missing library is one line naming
``pip install 'folkscope[wandb]'``), the command runs as it always does,
and the run folders it published (:func:`folkscope.runs.published_runs`)
are logged afterwards, from the folders, through
:mod:`folkscope.export.trackers`. Because the wrapper sits on the command's
function, a study cell (which calls that function) logs its run too.

Why a failed log makes the command fail (one line, exit status 2) rather
than warn: a user or a CI job that asked for the run in W&B or MLflow and
got a green exit would look for it there; the run folder is already
published and intact, and the line gives the ``folkscope export`` command
that logs it again.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

from folkscope.report.terminal import say

__all__ = ["add_tracker_arguments", "tracked", "tracker_options"]


def add_tracker_arguments(parser: argparse.ArgumentParser) -> None:
    """The tracker flags, in a group of their own."""
    group = parser.add_argument_group("experiment trackers (optional: pip install 'folkscope[wandb]' or '[mlflow]')")
    group.add_argument(
        "--wandb-project",
        default=None,
        metavar="PROJECT",
        help="log the run (config, metrics, tables, figures, page) to this Weights & Biases project "
        "(default: none; WANDB_MODE=offline logs locally)",
    )
    group.add_argument(
        "--mlflow-uri",
        default=None,
        metavar="URI",
        help="log the run to this MLflow tracking URI, e.g. file:./mlruns or http://localhost:5000 "
        "(default: none; experiment from MLFLOW_EXPERIMENT_NAME, else folkscope)",
    )
    group.add_argument(
        "--tracker-run-name",
        default=None,
        metavar="NAME",
        help="the tracker run's name (default: the run's id, <subject>/<model>/<folder>)",
    )


def tracker_options(args: argparse.Namespace) -> Any:
    """The :class:`~folkscope.export.trackers.TrackerOptions` of parsed flags, checked (nothing loads a model)."""
    from folkscope.export.trackers import TrackerOptions, check_trackers

    options = TrackerOptions(
        wandb_project=getattr(args, "wandb_project", None),
        mlflow_uri=getattr(args, "mlflow_uri", None),
        run_name=getattr(args, "tracker_run_name", None),
    )
    if options.requested:
        check_trackers(options)
    return options


def tracked(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with its published run folders logged to the trackers its flags name (see the module doc)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        options = tracker_options(args)
        if not options.requested:
            return command(args)
        from folkscope.export import resolve_runs
        from folkscope.export.trackers import log_runs
        from folkscope.runs import published_runs

        with published_runs() as folders:
            code = command(args)
        if not code and folders:
            log_runs(resolve_runs(folders), options, say=say)
        return code

    return run
