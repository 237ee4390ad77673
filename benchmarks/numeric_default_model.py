"""Small grids of the numeric-calibration study on the default model, through the CLI.

Usage: ``python benchmarks/numeric_default_model.py RESULTS_DIR [--chat] [--cache-dir DIR]``;
prints one JSON summary per dataset (PM, WD, RE means and 95% intervals, behaviour
shares, frequency effects, the distributions extras and games, wall time). Each grid
takes a few minutes on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import sys

from folkscope.cli import numeric_cmd

GRIDS = {
    # 20 ordered colour pairs x 2 scales x 16 number pairs = 640 problems, 40 cells of 16
    "colors": [
        "--words",
        "red,blue,green,white,black",
        "--templates",
        "marbles",
        "--scales",
        "small,medium",
        "--n-numbers",
        "4",
    ],
    # 5 templates x 8 ordered pairs x 16 number pairs = 640 problems, 40 cells of 16
    "wordproblems": ["--templates", "forest,staff,shelter,crate,cafe", "--scales", "medium", "--n-numbers", "4"],
    # 5 templates x 60 intervals = 300 problems, plus 4 matching-pennies games of 100 rounds
    "distributions": ["--n-intervals", "60", "--pennies-games", "4", "--pennies-rounds", "100"],
}


def main(argv: list[str]) -> int:
    results, *rest = argv
    parser = argparse.ArgumentParser(prog="folkscope")
    numeric_cmd.register(parser.add_subparsers(dest="command"))
    for dataset, grid in GRIDS.items():
        args = parser.parse_args(["numeric", "--dataset", dataset, "--results-dir", results, *grid, *rest])
        print(f"== {dataset}", flush=True)
        args.func(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
