"""One cell of a study in a process of its own, its model on a Ray cluster: ``python -m folkscope.study.worker``.

:mod:`folkscope.study.grid` starts one such process per cell when a study
runs on a cluster: a fresh process gives each cell a clean slate (logging,
plots, the loaded model) while several run at once. It re-reads the plan,
takes its cell by index, adds ``--ray-address`` so the model runs on the
cluster's workers, runs the cell's command here (this machine writes the
run folder and the result cache) and writes what it left as JSON for the
driver.

Usage: ``python -m folkscope.study.worker PLAN RESULTS_DIR INDEX RAY_ADDRESS OUT_JSON``
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Sequence

from folkscope._json import write_json
from folkscope.cli.main import build_parser
from folkscope.errors import CaveatWarning, FolkscopeError
from folkscope.logs import configure_cli
from folkscope.study.cells import expand, run_cell
from folkscope.study.plan import load_plan

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    plan_path, results_dir, index, address, out = list(sys.argv[1:] if argv is None else argv)
    configure_cli("WARNING", prog="folkscope study")
    parser = build_parser()
    plan = load_plan(plan_path)
    cell = expand(plan, results_dir, parser)[int(index)]
    if "--ray-address" not in cell.argv:
        cell = dataclasses.replace(cell, argv=(*cell.argv, "--ray-address", address))
    try:
        with warnings.catch_warnings():  # the run's caveats are in its folder and its summary
            warnings.simplefilter("ignore", CaveatWarning)
            ran = run_cell(cell, plan, parser)
    except FolkscopeError as exc:
        write_json(out, {"error": str(exc)})
        return 0
    write_json(out, {"folder": str(ran.folder), "answer": ran.answer, "output": ran.output})
    return 0


if __name__ == "__main__":
    sys.exit(main())
