"""Studies: a whole grid of runs (models × parts × tasks × settings) from one plan file, resumable, on one machine or
a Ray cluster, ending with the leaderboard.

- :func:`load_plan` reads and checks a plan (:mod:`~folkscope.study.plan`);
  :func:`bundled_plans` lists the plans folkscope ships (the four papers'
  grids and an offline demo);
- :func:`expand` turns it into cells, each one ordinary ``folkscope <part>
  run`` command (:mod:`~folkscope.study.cells`);
- :func:`run_study` runs the cells not done yet, says what they cost first
  (:mod:`~folkscope.study.estimate`), records each in the study's ledger
  (:mod:`~folkscope.study.ledger`) and writes the leaderboard
  (:mod:`~folkscope.study.grid`).

A study is a layer above the command line: it drives every part through the
commands' own parsers and checks, so it can ask nothing a command cannot.
"""

from folkscope.study.cells import Cell, expand
from folkscope.study.grid import StudyResult, default_results_dir, run_study
from folkscope.study.plan import Plan, PlanError, bundled_plans, load_plan

__all__ = [
    "Cell",
    "Plan",
    "PlanError",
    "StudyResult",
    "bundled_plans",
    "default_results_dir",
    "expand",
    "load_plan",
    "run_study",
]
