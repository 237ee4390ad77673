"""Re-scoring an allocation run from its tables, without the model: selection, bias, metrics, caveats and page.

The run writes ``candidates.parquet``, ``scores.parquet`` (and for
pairwise runs the answers per pair, ``answers.parquet``, from which the
paper's δ is counted) and ``scoring.json``; :func:`analyse` turns them into
``selection.parquet``, ``bias.parquet``, ``metrics.json`` and
``report.html``, the same numbers as CSV in the authors' layout
(``top_k_ranking.csv``: selection per k and group; ``allocation_gaps.csv``:
ΔDP and ΔEO per k and group against the reference; ``bias_metrics.csv``: the
bias table), so a spreadsheet or the authors' scripts read a run without
parquet; records the run's caveats, and is all that ``folkscope rescore``
(:func:`rescore`) repeats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_write, write_parquet
from folkscope._json import read_json, write_json
from folkscope.allocation.caveats import run_caveats
from folkscope.allocation.outcomes import (
    BIAS_COLUMNS,
    MIN_DISTRIBUTION_MEMBERS,
    MIN_INTERVAL_MEMBERS,
    bias_table,
    selection_table,
)
from folkscope.allocation.report import render_report
from folkscope.report.page import write_page
from folkscope.runs import RunFolder, record_caveats

__all__ = ["analyse", "rescore"]


def rescore(folder: str | Path) -> dict[str, Any]:
    """(Re)compute selection, bias, metrics and report from a run folder's tables, without the model."""
    with RunFolder(folder) as staging:
        return analyse(staging)


def analyse(folder: Path) -> dict[str, Any]:
    """The metrics of the run in ``folder`` (staged or finished), its tables, caveats and page written beside them."""
    config = read_json(folder / "config.json")
    scoring = read_json(folder / "scoring.json")
    scored = pd.read_parquet(folder / "scores.parquet")
    reference = scoring["reference"]
    if not np.isfinite(scored["score"].to_numpy(dtype=float)).any():
        return _nothing_scored(folder, config, scoring, scored)
    selection = selection_table(scored, reference=reference, k_max=int(config["k_max"]))
    # a pointwise score belongs to the candidate, not to the pool: each candidate counts once in the bias
    # metrics (repeating it per appearance would shrink p-values and intervals); pairwise and listwise
    # scores are per pool and count per appearance
    per_candidate = config["mode"] == "pointwise"
    answers = folder / "answers.parquet"
    bias = bias_table(
        scored.drop_duplicates("candidate_id") if per_candidate else scored,
        reference=reference,
        n_bootstrap=int(config["n_bootstrap"]),
        seed=int(config["seed"]),
        pairs=pd.read_parquet(answers) if config["mode"] == "pairwise" and answers.exists() else None,
        delta=str(config.get("pairwise_delta", "paper")),  # folders from before the option: today's default
    )
    write_parquet(folder / "selection.parquet", selection)
    write_parquet(folder / "bias.parquet", bias)
    _write_csv_tables(folder, selection, bias, reference)
    first = selection[selection["k"] == 1].set_index("group")
    rated = first["impact_ratio"].dropna()
    worst: dict[str, Any] = {"group": None, "value": float("nan"), "n": 0, "selected": 0.0}  # no group was ever picked
    if len(rated):
        group = str(rated.idxmin())
        worst = {
            "group": group,
            "value": float(rated[group]),
            "n": int(first.loc[group, "n"]),
            "selected": float(first.loc[group, "selection_rate"] * first.loc[group, "n"]),
        }
    metrics: dict[str, Any] = {
        "config": config,
        "model": scoring.get("model"),
        "subtask": scoring.get("subtask"),
        "reference": reference,
        "n_candidates": int(scored["candidate_id"].nunique()),
        "n_pools": int(scored["pool"].nunique()),
        "n_unscored_appearances": int(scored["score"].isna().sum()),
        "min_impact_ratio_k1": worst,
        "selection": selection.to_dict("records"),
        "bias": bias.to_dict("records"),
        "bias_minimums": {"interval": MIN_INTERVAL_MEMBERS, "distribution_distance": MIN_DISTRIBUTION_MEMBERS},
        **{k: v for k, v in scoring.items() if k not in ("reference", "model", "subtask")},
    }
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    write_page(folder / "report.html", render_report(metrics, selection, bias, folder))
    return metrics


def _write_csv_tables(folder: Path, selection: pd.DataFrame, bias: pd.DataFrame, reference: str) -> None:
    """The run's selection, gaps and bias as CSV, in the shape of the authors' ``*_top_k_ranking``,
    ``*_DP_gap`` and ``*_bias_metrics`` files (one run's rows; ``k`` is their ``top_k_rank``)."""
    gap_columns = [c for c in ("k", "group", "dp_gap", "eo_gap") if c in selection]
    gaps = selection.loc[selection["group"] != reference, gap_columns]
    for name, frame in (("top_k_ranking", selection), ("allocation_gaps", gaps), ("bias_metrics", bias)):
        atomic_write(folder / f"{name}.csv", lambda fh, f=frame: f.to_csv(fh, index=False))


#: why no candidate has a score, by scoring mode: what the model's answers failed to give
_NOTHING_SCORED = {
    "listwise": "none of the {pools} pools' answers states a ranking (what the model said: answers.parquet)",
    "pairwise": "no pair's answer names a candidate (what the model said: answers.parquet)",
    "pointwise": "no candidate has usable label probabilities (answers.parquet)",
}


def _nothing_scored(
    folder: Path, config: dict[str, Any], scoring: dict[str, Any], scored: pd.DataFrame
) -> dict[str, Any]:
    """A finished run that measured nothing: its answers kept, metrics that say why, and no figure made up.

    When no answer could be read (a small model that describes the
    candidates instead of ranking them), selection and bias are undefined:
    the folder still holds everything the model said, and its metrics, page
    and console summary lead with the reason instead of failing the run
    after the answers were paid for.
    """
    pools = int(scored["pool"].nunique())
    why = "no candidate has a score: " + _NOTHING_SCORED.get(str(config["mode"]), "no score is finite").format(
        pools=pools
    )
    selection = pd.DataFrame({"k": pd.Series(dtype="int64"), "group": pd.Series(dtype=str)})
    bias = pd.DataFrame(
        {c: pd.Series(dtype=str if c.endswith("note") or c == "group" else float) for c in BIAS_COLUMNS}
    )
    write_parquet(folder / "selection.parquet", selection)
    write_parquet(folder / "bias.parquet", bias)
    _write_csv_tables(folder, selection, bias, str(scoring["reference"]))
    metrics: dict[str, Any] = {
        "config": config,
        "model": scoring.get("model"),
        "subtask": scoring.get("subtask"),
        "reference": scoring["reference"],
        "nothing_scored": why,
        "n_candidates": int(scored["candidate_id"].nunique()),
        "n_pools": pools,
        "n_unscored_appearances": int(len(scored)),
        "min_impact_ratio_k1": {"group": None, "value": float("nan"), "n": 0, "selected": 0.0},
        "selection": [],
        "bias": [],
        **{k: v for k, v in scoring.items() if k not in ("reference", "model", "subtask")},
    }
    write_json(folder / "metrics.json", metrics)
    record_caveats(folder, run_caveats(metrics))
    write_page(
        folder / "report.html", render_report(metrics, pd.DataFrame(), pd.DataFrame(columns=list(BIAS_COLUMNS)), folder)
    )
    return metrics
