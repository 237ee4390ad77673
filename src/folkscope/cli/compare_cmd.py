"""``folkscope compare RUN_A RUN_B``: is run B better than run A, on the units both scored?

Thin: checks ``--output`` before any work, calls
:func:`folkscope.report.compare.compare_runs`, prints the runs' caveats, the notes, the
table (fitted to the terminal) and the units that moved most, writes
``--output``, and ends with the answer (one sentence with the headline
differences and their intervals) and where to read more.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from folkscope.report.terminal import caveat_lines, closing_lines, fit_table, say

DESCRIPTION = (
    "Paired comparison of two run folders of the same part over the same rows (two models, or two prompt settings "
    "of one model): B minus A of every headline metric, with paired bootstrap intervals (both runs' metrics on the "
    "same resample), and the rows whose answers moved most. Runs over different parts, tasks or rows are refused."
)

#: columns of the differences table shown on the console (the rest go to --output)
_SHOWN = ["scope", "title", "a", "b", "difference", "low", "high", "favours"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare", help="paired comparison of two run folders of one part (B minus A)", description=DESCRIPTION
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the run folder compared against (A)")
    parser.add_argument("run_b", metavar="RUN_B", help="the run folder whose differences are reported (B minus A)")
    parser.add_argument(
        "--output",
        metavar="FILE",
        default=None,
        help="also write the results: FILE.json (everything), or FILE.csv (the differences; the moved "
        "rows go to FILE-moved.csv)",
    )
    parser.add_argument("--top", metavar="N", type=int, default=10, help="how many of the most-moved rows to list")
    parser.add_argument(
        "--replicates",
        metavar="B",
        type=int,
        default=1000,
        help="paired bootstrap resamples (0: differences without intervals)",
    )
    parser.add_argument("--seed", metavar="S", type=int, default=0, help="seed of the bootstrap resamples")
    parser.add_argument(
        "--shared-rows",
        action="store_true",
        help="compare on the shared rows even when the runs only partly overlap (say, two subsamples)",
    )
    parser.add_argument(
        "--survey-weighted",
        action="store_true",
        help="risk runs: survey-weighted metrics (the runs' weight column) instead of unweighted",
    )
    parser.set_defaults(func=run)


def _table(frame: pd.DataFrame) -> str:
    return "\n".join(fit_table(frame, float_format=lambda v: f"{v:.4g}", where="--output FILE.csv"))


def run(args: argparse.Namespace) -> int:
    from folkscope.paths import check_output_file
    from folkscope.report.compare import check_output, compare_runs

    output = check_output(args.output)
    if output is not None:
        check_output_file(output)
    result = compare_runs(
        args.run_a,
        args.run_b,
        replicates=args.replicates,
        seed=args.seed,
        top=args.top,
        shared_rows=args.shared_rows,
        survey_weighted=args.survey_weighted,
    )
    for line in caveat_lines(result.caveats):  # before the difference: it may compare numbers that mean little
        print(line)
    print(f"A: {result.run_a}")
    print(f"B: {result.run_b}")
    for note in result.notes:
        say(f"note: {note}")
    diffs = result.differences
    shown = _SHOWN + (["n_undefined"] if (diffs["n_undefined"] > 0).any() else [])
    print()
    print(_table(diffs[shown]))
    if len(result.moved):
        print()
        print(f"{result.moved_unit}s that moved most (B minus A):")
        print(_table(result.moved))
    if output is not None:
        written = result.write(output)
        print()
        print("written: " + ", ".join(map(str, written)))
        page = Path(written[0])
    else:  # no page of its own: how to keep this comparison, and B's run page
        print()
        say("this comparison is not saved (--output FILE.json keeps it); the report below is run B's page")
        page = Path(result.run_b) / "report.html"
    print("\n".join(closing_lines(result.lead(), page)))
    return 0
