"""One numeric-calibration run: problems, scoring and games, in a run folder.

Run folder ``<results_dir>/numeric-<dataset>/<model>/<chat|base>-<hash8>/`` (:func:`folkscope.runs.run_path`):

``config.json``          the :class:`NumericConfig`
``problems.parquet``     one row per problem (:func:`~folkscope.numeric.measures.problems_frame`)
``probabilities.parquet``  one row per (problem, option) (:func:`~folkscope.numeric.scoring.score_problems`)
``problem_metrics.parquet``  PM, WD, RE per problem
``cells.parquet``        behaviour classification per grid cell
``metrics.json``         summaries with 95% clustered intervals, behaviour shares, order bias,
                         frequency effects, and the game / comparison results below
``heatmap.png``          ordered option pairs by dominant behaviour (two-option datasets)
``pennies.parquet``      matching-pennies rounds (only with ``pennies_games > 0``)
``pennies.json``         the games' summary (win rate, runs test, fallback rounds)
``comparison.json``      paired differences against a reference run (:func:`~folkscope.numeric.compare.attach_comparison`)
``timing.json``          seconds spent scoring and playing
``report.html``

The folder appears whole or not at all: it is written in a staging folder
beside it and renamed into place (:class:`~folkscope.runs.RunFolder`).
The folder can be re-analysed without the model (:func:`~folkscope.numeric.analysis.rescore`). A
rerun resumes through the engine's result cache: finished answers are read
back, not recomputed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope._io import write_parquet
from folkscope._json import write_json
from folkscope.engine import Engine, engine_for_run, run_accounting
from folkscope.numeric import measures
from folkscope.numeric.analysis import analyse
from folkscope.numeric.config import PROMPT_VERSION, NumericConfig
from folkscope.numeric.frequencies import load_number_frequencies
from folkscope.numeric.games import play_matching_pennies
from folkscope.numeric.problems import NumericProblem
from folkscope.numeric.scoring import score_problems
from folkscope.report.notebook import open_result
from folkscope.runs import Manifest, engine_model_name, open_run

__all__ = ["NumericRun", "run_numeric"]


@dataclass(frozen=True)
class NumericRun:
    """Where a run was written and its headline numbers."""

    folder: Path
    metrics: dict[str, Any]

    def _repr_html_(self) -> str:
        """In Jupyter: the answer, the headline metrics with intervals and the caveats, read from the folder
        (:func:`folkscope.report.open_result`)."""
        return open_result(self.folder)._repr_html_()


def _data_record(config: NumericConfig, problems: list[NumericProblem]) -> dict[str, Any]:
    """Where the run's problems came from, for its manifest."""
    return {
        "dataset": config.dataset,
        "template_file": config.template_file,
        "prompt_file": config.prompt_file,
        "frequency_table": config.frequency_table,
        "n_problems": len(problems),
    }


def run_numeric(
    config: NumericConfig,
    results_dir: str | Path,
    *,
    engine: Engine | None = None,
    heatmap: bool = True,
) -> NumericRun:
    """Generate, score and analyse one run; returns its folder and metrics.

    With ``config.pennies_games > 0`` the same engine then plays the
    matching-pennies games (chat form when ``config.chat``), seeded by
    ``config.seed``; the rounds go to ``pennies.parquet`` and the summary to
    ``pennies.json`` and ``metrics["pennies"]``.

    Problems with an unscored option are the run's caveat: recorded in its
    manifest and raised as a :class:`~folkscope.errors.CaveatWarning`.

    Parameters
    ----------
    config : NumericConfig
    results_dir : path
        Parent folder of the run folder.
    engine : Engine, optional
        A ready engine, borrowed and left open; otherwise one is built from
        ``config.engine`` (every engine setting: device, dtype, batch budget,
        web-API and vLLM options) and closed at the end.
    heatmap : bool, default True
        Draw ``heatmap.png`` (needs matplotlib).
    """
    problems = config.problems()
    if config.frequency_table is not None:
        load_number_frequencies(config.frequency_table)  # a bad table fails before any scoring
    with engine_for_run(engine, config.engine, prompt_version=PROMPT_VERSION) as engine:
        return _write(config, problems, engine, results_dir, heatmap=heatmap)


def _write(
    config: NumericConfig, problems: list[NumericProblem], engine: Engine, results_dir: str | Path, *, heatmap: bool
) -> NumericRun:
    """Score (and play) into the run's folder through the shared lifecycle, then analyse."""
    identity = engine.identity()
    key = config.run_key(identity)
    final = config.run_folder(results_dir, key, engine_model_name(identity) or config.engine.model)
    manifest = Manifest(
        part="numeric", fingerprint=key, config=config.to_dict(), engine=identity, data=_data_record(config, problems)
    )
    with open_run(final, manifest, config=config.to_dict()) as folder:
        write_parquet(folder / "problems.parquet", measures.problems_frame(problems))
        timing: dict[str, float] = {}
        start = time.perf_counter()
        probs = score_problems(engine, problems, chat=config.chat)
        timing["scoring_seconds"] = time.perf_counter() - start
        write_parquet(folder / "probabilities.parquet", probs)
        if config.pennies_games > 0:
            start = time.perf_counter()
            games = play_matching_pennies(
                engine,
                n_games=config.pennies_games,
                n_rounds=config.pennies_rounds,
                n=config.pennies_n,
                chat=config.chat,
                seed=config.seed,
            )
            timing["pennies_seconds"] = time.perf_counter() - start
            write_parquet(folder / "pennies.parquet", games.rounds_frame())
            write_json(folder / "pennies.json", {**games.to_dict(), "chat": config.chat, "seed": config.seed})
        write_json(folder / "timing.json", timing)
        write_json(
            folder / "accounting.json", run_accounting(engine)
        )  # what the answers cost, as every part records it
        metrics = analyse(folder, heatmap=heatmap)
    metrics["scoring_seconds"] = timing["scoring_seconds"]
    return NumericRun(final, metrics)
