"""``folkscope rescore RUN_DIR``: recompute a run's metrics, plots and report without the model."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("rescore", help="recompute metrics, plots and report of a finished run folder")
    parser.add_argument("run_dir", help="a run folder written by `folkscope run`")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.cli.run_cmd import print_summary
    from folkscope.risk.benchmark import rescore

    metrics = rescore(args.run_dir)
    print_summary(Path(args.run_dir), metrics)
    return 0
