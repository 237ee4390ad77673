"""The data-source flags shared by ``folkscope run`` and ``folkscope prompts``.

One place maps ``--states``, ``--year``, ``--horizon``, ``--data-file`` and
``--subsampling`` to :meth:`ACSDataset.make_from_task
<folkscope.data.ACSDataset.make_from_task>` options, so both commands read
the same rows for the same flags.
"""

from __future__ import annotations

import argparse
from typing import Any

from folkscope._config import parse_subsampling

__all__ = ["add_data_source_arguments", "data_options", "parse_subsampling"]


def _states(text: str) -> list[str]:
    states = [s.strip().upper() for s in text.split(",") if s.strip()]
    if not states:
        raise argparse.ArgumentTypeError(f"expected USPS codes like CA or CA,TX,NY, got {text!r}")
    return states


def add_data_source_arguments(group: Any) -> None:
    """``--states``, ``--year``, ``--horizon`` (Census PUMS tasks) and ``--data-file`` (any task)."""
    group.add_argument(
        "--states",
        type=_states,
        default=None,
        metavar="CA,TX,...",
        help="PUMS tasks: states to load, as USPS codes (default: the 50 states and Puerto Rico)",
    )
    group.add_argument("--year", type=int, default=None, help="PUMS tasks: survey year (default: the task's, 2018)")
    group.add_argument(
        "--horizon", default=None, metavar="1-Year|5-Year", help="PUMS tasks: survey horizon (default 1-Year)"
    )
    group.add_argument(
        "--replicate-weights",
        action="store_true",
        help="PUMS tasks: also read the 80 replicate weights (PWGTP1-80) for survey standard errors "
        "(successive difference replication); a --data-file's are used whenever it has them",
    )
    group.add_argument(
        "--data-file",
        default=None,
        metavar="PATH",
        help="your own rows (CSV or parquet) instead of a download; it needs the task's columns",
    )


def data_options(args: argparse.Namespace) -> dict[str, Any]:
    """The data-source flags as keyword arguments of ``make_from_task`` / ``make_benchmark``."""
    options = {"states": args.states, "survey_year": args.year, "horizon": args.horizon, "data_file": args.data_file}
    return options | ({"replicate_weights": True} if args.replicate_weights else {})
