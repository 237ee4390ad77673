"""``folkscope export RUN_OR_STUDY... --hf DIR``: finished runs as a Hugging Face dataset, on disk, the Hub or a tracker.

Every path is checked before anything is written: each must be a run folder
or a study folder, ``DIR`` must be new, empty or an earlier export, the Hub
needs a token, a tracker its library. Then the runs' tables become one
dataset at ``DIR`` (:mod:`folkscope.export.hf`, layout in its docstring)
with its card, optionally pushed to the Hub, and the runs are optionally
logged to W&B or MLflow (``folkscope export RUN --wandb-project P`` logs a
run made without the flag).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from folkscope.cli.tracker_args import add_tracker_arguments, tracker_options
from folkscope.errors import ConfigError
from folkscope.report.terminal import say

__all__ = ["DESCRIPTION", "register", "run"]

DESCRIPTION = (
    "Export finished runs (run folders, or study folders for all their finished cells) as one Hugging Face "
    "dataset with a dataset card, loadable with datasets.load_from_disk(DIR); push it to the Hub; log the runs "
    "to Weights & Biases or MLflow."
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export", help="runs as a Hugging Face dataset (disk, Hub) or into W&B/MLflow", description=DESCRIPTION
    )
    parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN_OR_STUDY",
        help="a run folder (holds manifest.json) or a study folder results/<name>/study-<name> (holds cells.json)",
    )
    parser.add_argument(
        "--hf", default=None, metavar="DIR", help="save the dataset here (new, empty, or an earlier export: replaced)"
    )
    parser.add_argument(
        "--push-to-hub",
        default=None,
        metavar="REPO",
        help="also upload it to this Hub dataset repo, OWNER/NAME (token: HF_TOKEN or `hf auth login`)",
    )
    parser.add_argument("--private", action="store_true", help="with --push-to-hub: create the repo private")
    add_tracker_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.export import check_export_dir, export_runs, push_export, resolve_runs
    from folkscope.export.hf import check_hub_access
    from folkscope.export.trackers import log_runs

    options = tracker_options(args)
    if args.push_to_hub is not None and args.hf is None:
        raise ConfigError("--push-to-hub uploads the dataset --hf DIR writes; add --hf DIR", parameter="push_to_hub")
    if args.hf is None and not options.requested:
        raise ConfigError(
            "nothing to do: pass --hf DIR (a dataset), --wandb-project or --mlflow-uri (a tracker)",
            parameter="hf",
            value=None,
        )
    if args.private and args.push_to_hub is None:
        raise ConfigError("--private applies to --push-to-hub; add --push-to-hub REPO or drop it", parameter="private")
    if args.hf is not None:
        check_export_dir(args.hf)
    if args.push_to_hub is not None:
        check_hub_access(args.push_to_hub)
    runs = resolve_runs(args.runs)  # every path checked before anything is written
    if args.hf is not None:
        _refuse_inside_a_run(Path(args.hf).expanduser().absolute(), runs)
    if args.push_to_hub is not None and not args.private:
        _refuse_public_unlicensed(runs)
    if args.hf is not None:
        command = shlex.join(["folkscope", "export", *(r.id for r in runs), "--hf", Path(args.hf).name])
        folder = export_runs(runs, args.hf, command=command)
        say(f"exported {len(runs)} run(s) with a dataset card; load it with datasets.load_from_disk(DIR)")
        print(f"dataset: {folder}")  # a path is never wrapped
        if args.push_to_hub is not None:
            push_export(folder, args.push_to_hub, private=args.private, say=say)
    if options.requested:
        log_runs(runs, options, say=say)
    return 0


def _refuse_inside_a_run(out: Path, runs: list[Any]) -> None:
    """A dataset written into a run folder would become part of the run it exports."""
    for run in runs:
        if out == run.folder or run.folder in out.parents:
            raise ConfigError(
                f"--hf {out} lies inside the run folder {run.folder}; pass a folder outside it",
                parameter="hf",
                value=str(out),
            )


def _refuse_public_unlicensed(runs: list[Any]) -> None:
    """Rows derived from data without a licence (the RABBI resumes) are not published openly by folkscope."""
    from folkscope.data.terms import data_terms

    bare = [r.id for r in runs if any(t.unlicensed for t in data_terms(r.manifest.part, r.manifest.data))]
    if bare:
        raise ConfigError(
            f"{bare[0]} was made from data that carries no licence, so its rows must not be published openly; "
            "add --private, or export without that run",
            parameter="push_to_hub",
            value=bare[0],
        )
