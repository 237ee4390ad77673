"""Part 1 in ``folkscope compare``: two of its run folders, paired unit by unit (B minus A).

Units are test rows (``row_id``; label, weight and group columns must agree). Every metric of the
run's table (:data:`RISK_METRICS`, each one of :data:`folkscope.metrics.GROUP_METRICS`), each run at its own threshold
and bins (from its ``metrics.json``), with rows resampled; rows either run could not score are left
out of both.

The paired bootstrap, unit matching and output are shared (:mod:`folkscope.report.paired`,
:mod:`folkscope.report.matching`, :mod:`folkscope.report.compare`); the floor plan (:mod:`folkscope.registry`) makes
:func:`compare` this part's ``compare`` entry point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from folkscope.errors import ConfigError, DataError
from folkscope.metrics import GROUP_METRICS
from folkscope.metrics._validation import check_binary
from folkscope.report.matching import check_same_subject, match_units
from folkscope.report.paired import Options, PairedMetric, PartComparison, metrics_json, paired_differences, top_moved
from folkscope.risk.evaluate import GROUP_NAME, METRICS, TABLE_COLUMNS
from folkscope.runs import read_manifest, read_table

__all__ = ["compare"]

#: how each metric of the risk table reads (folkscope.report.paired.BETTER); names and titles are risk.evaluate's
_BETTER = {
    "ece": "lower",
    "ece_quantile": "lower",
    "ece_equal_count": "lower",
    "brier": "lower",
    "log_loss": "lower",
    "roc_auc": "higher",
    "accuracy": "higher",
    "balanced_accuracy": "higher",
    "tpr": "higher",
    "fpr": "lower",
    "fnr": "lower",
    "tnr": "higher",
    "precision": "higher",
    "ppr": "none",
    "confidence_bias": "zero",
    "sce": "zero",
}
#: metrics.json key -> (GROUP_METRICS name, title, better), in the risk table's order
RISK_METRICS: dict[str, tuple[str, str, str]] = {m: (GROUP_NAME[m], TABLE_COLUMNS[m], _BETTER[m]) for m in METRICS}


def _risk_task(config: dict[str, Any]) -> Any:
    task = config.get("task")
    return task.get("name") if isinstance(task, dict) else task


def compare(a: Path, b: Path, opts: Options) -> PartComparison:
    """Paired differences of every risk metric over the test rows both runs scored."""
    check_same_subject(_risk_task(dict(read_manifest(a).config)), _risk_task(dict(read_manifest(b).config)), "task")
    settings = [(metrics_json(f).get("model") or {}).get("settings") or {} for f in (a, b)]
    ta, tb = read_table(a, "scores"), read_table(b, "scores")
    groups = [c for c in settings[0].get("group_cols") or [] if c in ta.columns and c in tb.columns]
    weighted = "weight" in ta.columns and "weight" in tb.columns
    if opts.survey_weighted and not weighted:
        raise ConfigError(
            "--survey-weighted needs survey weights, and a run's scores table has no weight column; "
            "leave out --survey-weighted",
            parameter="survey_weighted",
            value=True,
        )
    same = ["label", *(["weight"] if weighted else []), *groups]
    cols = ["row_id", *same, "risk_score"]
    matched = match_units(
        ta.reindex(columns=cols),
        tb.reindex(columns=cols),
        keys=["row_id"],
        same=same,
        unit="row",
        shared_rows=opts.shared_rows,
    )
    rows = matched.shared
    notes = [matched.note] if matched.note else []
    pa, pb = (rows[f"risk_score_{s}"].to_numpy(np.float64) for s in "ab")
    scored = ~np.isnan(pa) & ~np.isnan(pb)
    if not scored.all():
        notes.append(f"{int((~scored).sum()):,} shared rows without a score in A or B are left out of both")
    if not scored.any():
        raise DataError("no shared row has a score in both runs; nothing to compare")
    y = check_binary(rows["label"].to_numpy()[scored], "label")
    p = (pa[scored], pb[scored])
    w = rows["weight"].to_numpy(np.float64)[scored] if opts.survey_weighted else None
    thresholds = [float(s.get("threshold", 0.5)) for s in settings]
    bins = [int(s.get("n_bins", 10)) for s in settings]
    rules = [str(s.get("threshold_rule", ">=")) for s in settings]
    if thresholds[0] != thresholds[1]:
        notes.append(
            f"each run's accuracy, TPR and FPR use its own threshold (A {thresholds[0]:.3f}, B {thresholds[1]:.3f})"
        )
    if opts.survey_weighted:
        notes.append("survey-weighted metrics")

    def metric(key: str) -> PairedMetric:
        name, title, better = RISK_METRICS[key]
        fn = GROUP_METRICS[name]

        def value(side: int, counts: np.ndarray) -> float:
            return float(fn(y, p[side], counts if w is None else counts * w, thresholds[side], bins[side], rules[side]))

        return PairedMetric(key, title, better, value)

    table = paired_differences(
        [metric(k) for k in RISK_METRICS],
        int(scored.sum()),
        replicates=opts.replicates,
        seed=opts.seed,
        confidence=opts.confidence,
    )
    moved = rows.loc[scored, ["row_id", "label", *groups]].assign(score_a=p[0], score_b=p[1])
    moved["difference"] = moved["score_b"] - moved["score_a"]
    return PartComparison(
        "row",
        matched.n_a,
        matched.n_b,
        int(scored.sum()),
        table,
        top_moved(moved.reset_index(drop=True), moved["difference"].reset_index(drop=True), opts.top),
        (("roc_auc", "overall"), ("ece", "overall"), ("brier", "overall"), ("accuracy", "overall")),
        tuple(notes),
    )
