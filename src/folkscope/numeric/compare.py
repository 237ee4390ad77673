"""Part 4 in ``folkscope compare``: two of its run folders, paired unit by unit (B minus A).

Units are problems (``problem_id``, same option pair); the problem-level means of PM, WD and RE,
resampling whole option pairs as the part's own intervals cluster by them. RE is left out where
either run leaves it undefined (PM = 0).

The paired bootstrap, unit matching and output are shared (:mod:`folkscope.report.paired`,
:mod:`folkscope.report.matching`, :mod:`folkscope.report.compare`); the registry names
:func:`compare_numeric` as this part's ``compare`` entry point.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.errors import DataError
from folkscope.report.matching import check_same_subject, match_units
from folkscope.report.paired import Options, PairedMetric, PartComparison, paired_differences, top_moved
from folkscope.runs import read_manifest, read_table

__all__ = ["compare_numeric"]

#: problem_metrics column -> (title, better)
NUMERIC_METRICS: dict[str, tuple[str, str]] = {
    "calibration_distance": ("WD", "lower"),
    "probability_mass": ("PM", "higher"),
    "relative_entropy": ("RE", "zero"),
}


def compare_numeric(a: Path, b: Path, opts: Options) -> PartComparison:
    """Paired differences of the problem-level means of PM, WD and RE, resampling option pairs."""
    check_same_subject(read_manifest(a).config.get("dataset"), read_manifest(b).config.get("dataset"), "dataset")
    keys = ["problem_id", "pair"]
    matched = match_units(read_table(a, "problems")[keys], read_table(b, "problems")[keys], keys=["problem_id"],
                          same=["pair"], unit="problem", shared_rows=opts.shared_rows)  # fmt: skip
    notes = [matched.note] if matched.note else []
    cols = ["problem_id", *NUMERIC_METRICS, "cell"]
    per = [read_table(f, "problem_metrics").reindex(columns=cols) for f in (a, b)]
    both = matched.shared.merge(per[0], on="problem_id").merge(per[1].drop(columns="cell"), on="problem_id",
                                                               suffixes=("_a", "_b"))  # fmt: skip
    if len(both) < len(matched.shared):
        notes.append(f"{len(matched.shared) - len(both):,} shared problems that A or B could not score are left out")
    if both.empty:
        raise DataError("no shared problem is scored in both runs; nothing to compare")
    metrics = []
    for col, (title, better) in NUMERIC_METRICS.items():
        values = (both[f"{col}_a"].to_numpy(np.float64), both[f"{col}_b"].to_numpy(np.float64))
        ok = np.isfinite(values[0]) & np.isfinite(values[1])
        if not ok.all():
            notes.append(f"{title} is undefined (PM = 0) in A or B on {int((~ok).sum()):,} problems, left out of {title}")

        def value(side: int, counts: np.ndarray, values: tuple[np.ndarray, ...] = values, ok: np.ndarray = ok) -> float:
            c = counts[ok]
            return float(np.dot(values[side][ok], c) / c.sum()) if c.sum() > 0 else float("nan")

        metrics.append(PairedMetric(col, title, better, value))
    table = paired_differences(metrics, len(both), clusters=both["pair"].to_numpy(), replicates=opts.replicates,
                               seed=opts.seed, confidence=opts.confidence)  # fmt: skip
    moved = pd.DataFrame({"problem_id": both["problem_id"], "pair": both["pair"], "cell": both["cell"],
                          "wd_a": both["calibration_distance_a"], "wd_b": both["calibration_distance_b"]})  # fmt: skip
    moved["difference"] = moved["wd_b"] - moved["wd_a"]
    moved["pm_a"], moved["pm_b"] = both["probability_mass_a"], both["probability_mass_b"]
    moved["re_a"], moved["re_b"] = both["relative_entropy_a"], both["relative_entropy_b"]
    return PartComparison("problem", matched.n_a, matched.n_b, len(both), table, top_moved(moved, moved["difference"], opts.top),
                          tuple((k, "overall") for k in NUMERIC_METRICS), tuple(notes))  # fmt: skip
