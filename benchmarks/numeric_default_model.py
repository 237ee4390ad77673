"""Small grids of the numeric-calibration study on the default model, through the CLI.

Usage: ``python benchmarks/numeric_default_model.py RESULTS_DIR [--chat]``; prints one
JSON summary per dataset (PM, WD, RE means, behaviour shares, wall time).
"""

from __future__ import annotations

import argparse
import sys

from folkscope.cli import numeric_cmd

GRIDS = {
    # 12 ordered colour pairs x 16 number pairs = 192 problems, 12 cells of 16
    "colors": ["--words", "red,blue,green,white", "--templates", "marbles", "--scales", "small",
               "--n-numbers", "4"],
    # 2 templates x 8 ordered pairs x 9 number pairs = 144 problems, 16 cells of 9
    "wordproblems": ["--templates", "forest,cafe", "--scales", "medium", "--n-numbers", "3"],
    # 2 templates x 20 intervals = 40 problems
    "distributions": ["--templates", "generator,closed", "--n-intervals", "20"],
}


def main(argv: list[str]) -> int:
    results, *rest = argv
    parser = argparse.ArgumentParser(prog="folkscope")
    numeric_cmd.register(parser.add_subparsers(dest="command"))
    for dataset, grid in GRIDS.items():
        args = parser.parse_args(["numeric", "--dataset", dataset, "--results-dir", results,
                                  *grid, *rest])
        print(f"== {dataset}", flush=True)
        args.func(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
