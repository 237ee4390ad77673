"""ACS allocation candidates: the respondents of a finished part-1 run with its risk scores, read through its manifest.

Parts never import each other: the run folder's manifest and its declared
``scores`` table are all this needs (:func:`folkscope.runs.read_table`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope.allocation.candidates import CandidateSet
from folkscope.errors import ConfigError, DataError
from folkscope.runs import engine_model_name, read_manifest, read_table
from folkscope.tasks import get_column

__all__ = ["acs_candidates"]

# ---------------------------------------------------------------------------------------------------------------
# ACS respondents of a finished part-1 (risk) run


def _labeller(column: str, column_set: str) -> Mapping[int, str]:
    """Code -> label of a categorical census column ({} when the codebook has none)."""
    try:
        mapping = get_column(column, columns=column_set)
    except ConfigError:
        return {}
    return mapping.values if mapping.kind == "categorical" else {}


def _label(column: str, value: Any, labels: Mapping[int, str]) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return f"{column}=missing"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"{column}={value}"
    if number.is_integer() and int(number) in labels:
        return labels[int(number)]
    return f"{column}={int(number) if number.is_integer() else value}"


def _group_labels(frame: pd.DataFrame, columns: tuple[str, ...], column_set: str) -> np.ndarray:
    """One readable label per row, built once per distinct combination of values (ACS runs have millions of rows)."""
    codes, texts = [], []
    for column in columns:
        code, uniques = pd.factorize(frame[column], use_na_sentinel=True)
        labels = _labeller(column, column_set)
        texts.append([_label(column, u, labels) for u in uniques] + [f"{column}=missing"])  # code -1: the last
        codes.append(code)
    combos, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    joined = np.array([", ".join(texts[k][i] for k, i in enumerate(combo)) for combo in combos], dtype=object)
    return joined[inverse.ravel()]


def acs_candidates(
    run_folder: str | Path, *, group_columns: tuple[str, ...] = ("RAC1P", "SEX")
) -> tuple[CandidateSet, np.ndarray]:
    """ACS respondents of a finished part-1 run and their risk scores: who would a scarce benefit reach?

    The run is read through its manifest and declared ``scores`` table
    (:func:`folkscope.runs.read_manifest`, :func:`folkscope.runs.read_table`),
    never through the risk part's code. Each scored row is a candidate; its
    group joins the readable codebook labels of ``group_columns`` with ``", "``
    (``"White, Female"``; a code the codebook lacks reads ``"RAC1P=10"``), the
    true label is its qualification, and rows without a risk score are
    dropped (counted in ``provenance['dropped_nan_scores']``). The run's
    survey weights (PWGTP) travel as the candidates' ``weight``: selection
    rates and their gaps are then population shares, each respondent standing
    for the people it represents; RABBI, δ, JSD and EMD stay over candidates,
    as the paper defines them.

    Parameters
    ----------
    run_folder : str or Path
        A folder a part-1 (risk) run wrote.
    group_columns : tuple of str
        Columns of the scores table that define the groups.

    Returns
    -------
    candidates : CandidateSet
        Task ``"acs"``, subtask the part-1 task's name, ids ``str(row_id)``,
        ``name``, ``text`` and ``context`` empty.
    scores : ndarray of float
        The risk scores, row for row with ``candidates.frame``.

    Raises
    ------
    DataError
        Not a run folder, a run of another part, or a scores table without
        ``row_id``, ``label`` or ``risk_score``.
    ConfigError
        No group column, or one the scores table lacks (the error lists them).

    Examples
    --------
    >>> cs, scores = acs_candidates("results/NISTIncome/demo/mc-zeroshot-...")  # doctest: +SKIP
    >>> cs.groups()[:2], scores[:2]  # doctest: +SKIP
    (['Asian, Female', 'Asian, Male'], array([0.31, 0.77]))
    """
    folder = Path(run_folder)
    if isinstance(group_columns, str) or not group_columns or not all(isinstance(c, str) and c for c in group_columns):
        raise ConfigError(
            f"group_columns must be a non-empty tuple of column names, got {group_columns!r}",
            parameter="group_columns",
            value=group_columns,
        )
    manifest = read_manifest(folder)
    if manifest.part != "risk":
        raise DataError(f"{folder} is a {manifest.part} run; ACS candidates come from a risk (part 1) run folder")
    scores = read_table(folder, "scores")
    absent = [c for c in group_columns if c not in scores.columns]
    if absent:
        raise ConfigError(
            f"group column(s) {', '.join(absent)} not in the scores table of {folder}; "
            f"available: {', '.join(map(str, scores.columns))}",
            parameter="group_columns",
            value=group_columns,
        )
    needed = [c for c in ("row_id", "label", "risk_score") if c not in scores.columns]
    if needed:
        raise DataError(f"the scores table of {folder} lacks {', '.join(needed)}; run part 1 again with this folkscope")
    config = manifest.config if isinstance(manifest.config, Mapping) else {}
    task = config.get("task")
    task = task if isinstance(task, Mapping) else {"name": task}
    name = str(task.get("name") or (manifest.data or {}).get("task") or "acs")
    column_set = str(task.get("columns") or "acs")
    risk = pd.to_numeric(scores["risk_score"], errors="coerce")
    keep = risk.notna().to_numpy()
    kept = scores.loc[keep].reset_index(drop=True)
    if kept.empty:
        raise DataError(
            f"no row of the scores table of {folder} has a risk score; the part-1 run scored nothing usable"
        )
    frame = pd.DataFrame(
        {
            "candidate_id": kept["row_id"].astype(str),
            "group": _group_labels(kept, group_columns, column_set),
            "qualified": kept["label"],
            "name": "",
            "text": "",
        }
    )
    weight = pd.to_numeric(kept["weight"], errors="coerce") if "weight" in kept else None
    weighted = weight is not None and bool(np.isfinite(weight).all() and (weight >= 0).all() and weight.sum() > 0)
    if weighted:
        frame["weight"] = weight.to_numpy(dtype=float)
    provenance = {
        "source": "a folkscope part-1 (risk) run: its scores table",
        "path": str(folder.resolve()),
        "run_fingerprint": manifest.fingerprint,
        "model": engine_model_name(manifest.engine),
        "group_columns": ",".join(group_columns),
        "group_labels": f"codebook labels of the {column_set!r} column set, joined with ', '",
        "rows": str(len(scores)),
        "dropped_nan_scores": str(int((~keep).sum())),
        "weights": "the run's survey weights: selection rates and gaps are population shares"
        if weighted
        else "none in the run (each respondent is one candidate)",
    }
    return CandidateSet("acs", name, "", frame, provenance), risk[keep].to_numpy(dtype=float)
