"""``folkscope rescore RUN_DIR``: recompute a run's metrics, plots and report without the model, for a run of any part.

The run folder's manifest names the part that wrote it; the part registry
says how that part re-scores a folder and prints its summary, so this
command knows no part by name.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "rescore", help="recompute metrics, plots and report of a finished run folder (any part)"
    )
    parser.add_argument("run_dir", help="a run folder written by `folkscope run` or any `folkscope <part> run`")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from folkscope.registry import part
    from folkscope.runs import read_manifest

    folder = Path(args.run_dir)
    entry = part(read_manifest(folder).part)
    metrics = entry.load("rescore")(folder)
    entry.load("summarise")(folder, metrics)
    return 0
