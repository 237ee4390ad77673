"""Re-scoring a numeric run from its tables, without the model: PM, WD, RE, behaviours, biases, caveats, page.

The run writes ``problems.parquet``, ``probabilities.parquet`` (and the
games' and timing files); :func:`analyse` computes everything else
(:mod:`~folkscope.numeric.measures`), records the run's caveats, and is all
that ``folkscope rescore`` (:func:`rescore`) repeats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._io import write_parquet
from folkscope._json import read_json, write_json
from folkscope.errors import DataError
from folkscope.numeric import measures
from folkscope.numeric.caveats import run_caveats
from folkscope.numeric.frequencies import BUNDLED_FREQUENCIES, load_number_frequencies
from folkscope.numeric.report import render_html, write_heatmap
from folkscope.report.page import write_page
from folkscope.runs import RunFolder, read_manifest, record_caveats

__all__ = ["analyse", "rescore"]


def rescore(folder: str | Path, *, heatmap: bool = True) -> dict[str, Any]:
    """(Re)compute metrics, cells, heatmap and report from a run folder's tables.

    Problems with an option the backend could not score (NaN, web backends)
    are left out of every statistic and counted in ``n_unscored``. The
    folder is updated as a whole (:class:`~folkscope.runs.RunFolder`).
    """
    with RunFolder(folder) as staging:
        manifest = read_manifest(staging)
        if manifest.legacy:  # a folder from before manifests gains one
            manifest.write(staging)
        return analyse(staging, heatmap=heatmap)


def analyse(folder: Path, *, heatmap: bool = True) -> dict[str, Any]:
    """:func:`rescore` inside a staging folder (also the end of every run)."""
    config = read_json(folder / "config.json")
    problems = pd.read_parquet(folder / "problems.parquet")
    probs, unscored = measures.split_unscored(pd.read_parquet(folder / "probabilities.parquet"))
    if probs.empty:
        name = folder.name.removeprefix(".").removesuffix(".staging")  # the run's name, not its staging folder's
        raise DataError(
            f"{name}: no problem has every option scored ({len(unscored)} left out), so there is "
            "nothing to analyse; the backend gave no probability for some option of each problem "
            "(a web API's chat endpoint returns only its top log-probabilities: try the base form)"
        )
    per_problem = measures.problem_metrics(probs).merge(problems[["problem_id", "pair", "cell"]], on="problem_id")
    cells = measures.classify_cells(probs, problems)
    bias, by_word = measures.order_bias(probs)
    metrics: dict[str, Any] = {
        "config": config,
        "n_problems": len(problems),
        "n_unscored": len(unscored),
        "n_cells": len(cells),
        "summary": measures.summarize_metrics(per_problem, per_problem["pair"]),
        "behaviour_shares": measures.behaviour_shares(cells),
        "behaviour_shares_renormalised": measures.behaviour_shares(cells, column="behaviour_renormalised"),
        "order_bias": bias,
        # 0 tokens: the count is unknown (answers replayed from another harness's log), so the share is too
        "multi_token_share": float((probs["min_tokens"] > 1).mean()) if (probs["min_tokens"] > 0).all() else None,
    }
    if unscored:
        metrics["unscored_problem_ids"] = unscored[:20]
    if config["dataset"] == "distributions":
        metrics["distributions"] = measures.distribution_summary(probs, problems)
    effects = _frequency_effects(config, per_problem, problems)
    if effects is not None:
        metrics["frequency_effect"] = effects
    for name in ("pennies", "comparison", "timing"):
        if (folder / f"{name}.json").exists():
            metrics[name] = read_json(folder / f"{name}.json")
    if (folder / "accounting.json").exists():
        metrics.update(read_json(folder / "accounting.json"))  # engine_stats, backend_stats
    write_parquet(folder / "problem_metrics.parquet", per_problem)
    write_parquet(folder / "cells.parquet", cells)
    write_parquet(folder / "order_bias.parquet", by_word)
    heat_name = None
    if heatmap and config["dataset"] != "distributions" and len(cells):
        heat = measures.heatmap_data(cells)
        renormalised = measures.heatmap_data(cells, column="behaviour_renormalised")
        write_parquet(folder / "heatmap.parquet", heat)
        write_parquet(folder / "heatmap_renormalised.parquet", renormalised)
        write_heatmap(
            {"behaviour (rate)": heat, "behaviour of Π / PM (share of cells)": renormalised},
            folder / "heatmap.png",
            title=f"{config['dataset']} / {config['model']} ({'chat' if config['chat'] else 'base'})",
        )
        heat_name = "heatmap.png"
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    page = render_html(metrics, cells, by_word, heatmap_file=heat_name)
    write_page(folder / "report.html", page)
    return metrics


def _frequency_effects(
    config: dict[str, Any], per_problem: pd.DataFrame, problems: pd.DataFrame
) -> dict[str, Any] | None:
    """Frequency effects with the run's table: over all its rows and over measured rows only."""
    source = config.get("frequency_table", BUNDLED_FREQUENCIES)
    if source is None:
        return None
    table = load_number_frequencies(source)
    return {
        "table": table.summary(),
        "all_numbers": measures.frequency_effect(per_problem, problems, table),
        "measured_only": measures.frequency_effect(per_problem, problems, table, measured_only=True),
    }
