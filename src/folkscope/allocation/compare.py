"""Part 2 in ``folkscope compare``: two of its run folders, paired unit by unit (B minus A).

Units are candidates when both runs score pointwise (a pointwise score is the candidate's), else
pool appearances (pool and candidate), as the part's own bias table counts them. A candidate is
matched on what it is, not on its id (an id such as ``software-engineer/White men/0/resume-0`` names
no person): its name and item (the resume) where it has an item, else its id (an essay, a survey row),
and the text the model read, its group and its qualification must agree. Two runs that drew other
names are refused, not paired person to stranger. RABBI of every group against the reference, their mean absolute value, and
(when both runs score the same way, so on one scale) the mean score, resampling candidates or whole
pools. RABBI compares ranks, so it is comparable across scoring modes; scores are not.

The paired bootstrap, unit matching and output are shared (:mod:`folkscope.report.paired`,
:mod:`folkscope.report.matching`, :mod:`folkscope.report.compare`); the floor plan (:mod:`folkscope.registry`) makes
:func:`compare` this part's ``compare`` entry point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError, DataError
from folkscope.metrics import rabbi
from folkscope.report.matching import check_same_subject, match_units
from folkscope.report.paired import Options, PairedMetric, PartComparison, metrics_json, paired_differences, top_moved
from folkscope.runs import read_manifest, read_table

__all__ = ["compare"]


def _units(folder: Path) -> pd.DataFrame:
    """Per candidate id of a run: ``unit`` (what the candidate is) and ``text`` (a digest of what the model read).

    ``unit`` is "name / item" for a crossed design (a name on a resume; the
    job is the run's subtask, checked apart), else the id, which for essays
    and survey rows names the essay or the respondent itself.
    """
    cands = read_table(folder, "candidates")
    item = cands["item"].astype(str) if "item" in cands else pd.Series("", index=cands.index)  # folders before items
    unit = np.where(item != "", cands["name"].astype(str) + " / " + item, cands["candidate_id"].astype(str))
    digest = [
        hashlib.sha256(f"{n}\0{t}".encode()).hexdigest()[:16]
        for n, t in zip(cands["name"].astype(str), cands["text"].astype(str))
    ]
    return pd.DataFrame({"candidate_id": cands["candidate_id"].astype(str), "unit": unit, "text": digest})


def _rabbi_value(
    scores: tuple[np.ndarray, np.ndarray], in_group: np.ndarray, in_ref: np.ndarray
) -> Callable[[int, np.ndarray], float]:
    def value(side: int, counts: np.ndarray) -> float:
        g, r = in_group & (counts > 0), in_ref & (counts > 0)
        if not (g.any() and r.any()):
            return float("nan")
        s = scores[side]
        return rabbi(s[g], s[r], weights_a=counts[g], weights_b=counts[r])

    return value


def compare(a: Path, b: Path, opts: Options) -> PartComparison:
    """Paired differences of RABBI per group (and of the mean score on one scale).

    As the part itself counts them: two pointwise runs are paired per
    candidate (a pointwise score is the candidate's, whatever the pool) and
    candidates are resampled; otherwise per pool appearance (pairwise and
    listwise scores depend on the pool), resampling whole pools.
    """
    ca, cb = (dict(read_manifest(f).config) for f in (a, b))
    check_same_subject((ca.get("task"), ca.get("subtask")), (cb.get("task"), cb.get("subtask")), "task")
    refs = [metrics_json(f).get("reference") for f in (a, b)]
    if refs[0] != refs[1]:
        raise ConfigError(
            f"run A measures RABBI against {refs[0]!r} and run B against {refs[1]!r}; compare two runs with "
            "the same --reference",
            parameter="reference",
            value=refs,
        )
    ref = str(refs[0])
    modes = (ca.get("mode"), cb.get("mode"))
    per_candidate = modes == ("pointwise", "pointwise")
    keys, same = (["unit"] if per_candidate else ["pool", "unit"]), ["group", "qualified", "text"]
    cols = [*keys, *same, "score"]
    tables = []
    for folder in (a, b):
        scores = read_table(folder, "scores")
        if per_candidate:
            scores = scores.drop_duplicates("candidate_id")
        named = scores.assign(candidate_id=scores["candidate_id"].astype(str)).merge(
            _units(folder), on="candidate_id", how="left"
        )
        if named["unit"].isna().any():
            raise DataError(
                f"{folder}: {int(named['unit'].isna().sum()):,} scored rows name a candidate its candidates table "
                "lacks; the run folder is damaged: run it again"
            )
        tables.append(named)
    unit = "candidate" if per_candidate else "appearance"
    matched = match_units(
        tables[0].reindex(columns=cols),
        tables[1].reindex(columns=cols),
        keys=keys,
        same=same,
        unit=unit,
        shared_rows=opts.shared_rows,
    )
    notes = [matched.note] if matched.note else []
    rows = matched.shared
    scored = np.isfinite(rows["score_a"].to_numpy(np.float64)) & np.isfinite(rows["score_b"].to_numpy(np.float64))
    if not scored.all():
        notes.append(f"{int((~scored).sum()):,} shared {unit}s without a score in A or B are left out of both")
    rows = rows[scored].reset_index(drop=True)
    s = (rows["score_a"].to_numpy(np.float64), rows["score_b"].to_numpy(np.float64))
    group = rows["group"].astype(str).to_numpy()
    in_ref = group == ref
    if not in_ref.any():
        raise DataError(f"no shared {unit} of the reference group {ref!r} is scored in both runs; nothing to compare")
    metrics = [
        PairedMetric("rabbi", "RABBI", "zero", _rabbi_value(s, group == g, in_ref), scope=g)
        for g in sorted(set(group))
        if g != ref
    ]
    per_group = [m.value for m in metrics]

    def mean_abs(side: int, counts: np.ndarray) -> float:
        values = np.array([v(side, counts) for v in per_group])
        return float(np.mean(np.abs(values[np.isfinite(values)]))) if np.isfinite(values).any() else float("nan")

    metrics.insert(0, PairedMetric("mean_abs_rabbi", "mean |RABBI|", "lower", mean_abs))
    one_scale = modes[0] == modes[1]
    headline = [("mean_abs_rabbi", "overall")]
    if one_scale:
        metrics.insert(
            1,
            PairedMetric(
                "mean_score",
                "mean score",
                "none",
                lambda side, c: float(np.dot(s[side], c) / c.sum()) if c.sum() > 0 else float("nan"),
            ),
        )
        headline.append(("mean_score", "overall"))
    else:
        notes.append(
            f"A scores {modes[0]} and B {modes[1]}: their scores are on different scales, so only RABBI (ranks) "
            "is compared, per pool appearance, and rows are ranked by how far they moved within their pool"
        )
    table = paired_differences(
        metrics,
        len(rows),
        clusters=None if per_candidate else rows["pool"].to_numpy(),
        replicates=opts.replicates,
        seed=opts.seed,
        confidence=opts.confidence,
    )
    moved = rows[[*keys, "group", "qualified"]].assign(score_a=s[0], score_b=s[1])
    moved["difference"] = moved["score_b"] - moved["score_a"] if one_scale else np.nan
    if not per_candidate:
        for side in "ab":  # 1 = the pool's best score
            moved[f"rank_{side}"] = moved.groupby("pool")[f"score_{side}"].rank(ascending=False, method="min")
    by = moved["difference"] if one_scale else moved["rank_b"] - moved["rank_a"]
    return PartComparison(
        unit, matched.n_a, matched.n_b, len(rows), table, top_moved(moved, by, opts.top), tuple(headline), tuple(notes)
    )
