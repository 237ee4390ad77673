"""Risk-score evaluation of one run: every metric of the paper, overall and per group.

Why one module: every number of a risk run's metrics.json (overall, per group,
intervals, baselines, the report's plot data) is computed here from one
validated table by the same helpers (column checks, NaN accounting, group
naming), so the JSON layout (:data:`SCHEMA`) has one author.

Turns a table of row-level scores (label, risk score, survey weight, sensitive
attributes) into the ``metrics.json`` of a run folder, plus the arrays the
plots are drawn from. All formulas come from :mod:`folkscope.metrics`; this
module only selects rows, loops over groups and weightings and records what was
excluded or undefined (``spec/risk-scores.md``, "Evaluation";
``spec/reliability.md``, "Numbers are honest").

JSON conventions (:func:`to_jsonable`): an undefined metric (NaN, e.g. the AUC
of a single-class group) is written as ``null``; an infinite value (log loss of
a score of exactly 0 or 1 on the wrong label) as the string ``"inf"`` /
``"-inf"``. Nothing is replaced by 0 or 0.5.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope import metrics as fm
from folkscope._json import to_jsonable
from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning, UnknownColumnError
from folkscope.metrics._thresholds import check_threshold_rule
from folkscope.metrics._validation import check_binary, check_number

__all__ = [
    "GROUP_NAME",
    "INTERVAL_METRICS",
    "METRICS",
    "SCHEMA",
    "TABLE_COLUMNS",
    "calibration_data",
    "codebook_group_labels",
    "compare_table",
    "evaluate_baselines",
    "evaluate_scores",
    "group_name",
    "histogram_data",
    "roc_data",
    "selective_accuracy_data",
    "to_jsonable",
]

#: Identifies the layout of the results dict (bump on incompatible changes).
SCHEMA = "folkscope.risk.metrics/1"

#: Metric key in the results -> function computing it on validated arrays, as a
#: ``(y, p, w, threshold, n_bins, threshold_rule) -> float`` closure over the public metric.
_OVERALL: dict[str, Callable[..., float]] = {
    "ece": lambda y, p, w, t, b, r: fm.expected_calibration_error(y, p, n_bins=b, sample_weight=w),
    "ece_quantile": lambda y, p, w, t, b, r: fm.expected_calibration_error(
        y, p, n_bins=b, strategy="quantile", sample_weight=w
    ),
    "ece_equal_count": lambda y, p, w, t, b, r: fm.expected_calibration_error(
        y, p, n_bins=b, strategy="equal_count", sample_weight=w
    ),
    "brier": lambda y, p, w, t, b, r: fm.brier_score_loss(y, p, sample_weight=w),
    "log_loss": lambda y, p, w, t, b, r: fm.log_loss(y, p, sample_weight=w),
    "roc_auc": lambda y, p, w, t, b, r: fm.roc_auc_score(y, p, sample_weight=w),
    "accuracy": lambda y, p, w, t, b, r: fm.accuracy_score(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "balanced_accuracy": lambda y, p, w, t, b, r: fm.balanced_accuracy_score(
        y, p, threshold=t, threshold_rule=r, sample_weight=w
    ),
    "tpr": lambda y, p, w, t, b, r: fm.true_positive_rate(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "fpr": lambda y, p, w, t, b, r: fm.false_positive_rate(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "fnr": lambda y, p, w, t, b, r: fm.false_negative_rate(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "tnr": lambda y, p, w, t, b, r: fm.true_negative_rate(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "precision": lambda y, p, w, t, b, r: fm.precision_score(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "ppr": lambda y, p, w, t, b, r: fm.positive_prediction_rate(y, p, threshold=t, threshold_rule=r, sample_weight=w),
    "confidence_bias": lambda y, p, w, t, b, r: fm.confidence_bias(y, p, sample_weight=w),
    "sce": lambda y, p, w, t, b, r: fm.signed_calibration_error(y, p, sample_weight=w),
}
#: Every metric reported overall and per group, in report order.
METRICS: tuple[str, ...] = tuple(_OVERALL)
#: Our key -> the name used by :data:`folkscope.metrics.GROUP_METRICS`.
GROUP_NAME = {m: ("brier_score" if m == "brier" else m) for m in METRICS}
#: Metrics that get a bootstrap interval.
INTERVAL_METRICS: tuple[str, ...] = ("ece", "brier", "roc_auc", "accuracy")
#: Metric key -> column title of the comparison table (paper table 1).
TABLE_COLUMNS: dict[str, str] = {
    "ece": "ECE",
    "ece_quantile": "ECE (quantile)",
    "ece_equal_count": "ECE (equal count)",
    "brier": "Brier",
    "log_loss": "Log loss",
    "roc_auc": "AUC",
    "accuracy": "Accuracy",
    "balanced_accuracy": "Balanced accuracy",
    "tpr": "TPR",
    "fpr": "FPR",
    "fnr": "FNR",
    "tnr": "TNR",
    "precision": "Precision",
    "ppr": "Positive rate",
    "confidence_bias": "Confidence bias",
    "sce": "SCE",
}
_MAX_LISTED_ROWS = 100
_CONFIDENCE = 0.95


# ----------------------------------------------------------------------------- helpers
def _plain(code: Any) -> Any:
    """A group code as a plain Python value (1.0 -> 1 for integral float codes)."""
    if isinstance(code, np.generic):
        code = code.item()
    if isinstance(code, float) and code.is_integer():
        return int(code)
    return code


def group_name(column: str, code: Any, group_labels: Mapping[str, Mapping[Any, Any]] | None) -> str:
    """Readable name of a group code: ``group_labels[column][code]`` (int or str key), else the code.

    Examples
    --------
    >>> group_name("RAC1P", 1.0, {"RAC1P": {"1": "White"}})
    'White'
    >>> group_name("SEX", 3, None)
    '3'
    """
    code = _plain(code)
    mapping = (group_labels or {}).get(column) or {}
    for key in (code, str(code)):
        if key in mapping:
            return str(mapping[key])
    return str(code)


def codebook_group_labels(group_cols: Sequence[str], *, columns: str = "acs") -> dict[str, dict[Any, str]]:
    """Readable group names of categorical columns from the codebook of a column set.

    Columns without a categorical mapping in ``columns`` are left out (their
    codes stay as they are).

    Examples
    --------
    >>> codebook_group_labels(["SEX", "not_a_column"])
    {'SEX': {1: 'Male', 2: 'Female'}}
    """
    from folkscope.tasks.columns import column_set

    known = column_set(columns)
    return {c: dict(known[c].values) for c in group_cols if c in known and known[c].kind == "categorical"}


def _names(column: str, codes: Sequence[Any], labels: Mapping[str, Mapping[Any, Any]] | None) -> dict[Any, str]:
    names = {c: group_name(column, c, labels) for c in codes}
    counts = pd.Series(list(names.values())).value_counts()
    # two codes with one label (coarse label maps) would merge in the tables: keep them apart
    return {c: (f"{n} ({_plain(c)})" if counts[n] > 1 else n) for c, n in names.items()}


def _quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, bool]:
    """Call ``fn``; return its value and whether it reported an undefined case.

    The undefined cases are recorded in the results (``undefined``), so the
    warning itself is not propagated.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        value = fn(*args, **kwargs)
    bad = False
    for c in caught:
        if issubclass(c.category, UndefinedMetricWarning):
            bad = True
        else:  # not ours to swallow
            warnings.warn_explicit(c.message, c.category, c.filename, c.lineno)
    return value, bad


def _column(frame: pd.DataFrame, name: str, role: str) -> pd.Series:
    if name not in frame.columns:
        raise UnknownColumnError(
            f"{role} column {name!r} is not in the scores table; columns are "
            f"{list(map(str, frame.columns))}. Pass {role}_col=<name>."
        )
    return frame[name]


def _prepare(
    scores: pd.DataFrame, label_col: str, score_col: str, weight_col: str | None, group_cols: Sequence[str]
) -> dict[str, Any]:
    if not isinstance(scores, pd.DataFrame):
        raise DataError(f"scores must be a pandas DataFrame; got {type(scores).__name__}.")
    if len(scores) == 0:
        raise DataError("scores has no rows; nothing to evaluate.")
    y = check_binary(_column(scores, label_col, "label").to_numpy(), f"label column {label_col!r}")
    p = pd.to_numeric(_column(scores, score_col, "score"), errors="raise").to_numpy(np.float64)
    nan = np.isnan(p)
    bad_p = ~nan & ~((p >= 0) & (p <= 1))
    if bad_p.any():
        raise DataError(
            f"score column {score_col!r} has {int(bad_p.sum())} value(s) outside "
            f"[0, 1] (e.g. {p[bad_p][0]!r}); risk scores are probabilities. NaN "
            "marks a row without a score."
        )
    w = None
    if weight_col is not None and weight_col in scores.columns:
        w = pd.to_numeric(scores[weight_col], errors="raise").to_numpy(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(w) & (w >= 0))
        if (bad & ~nan).any():
            raise DataError(
                f"weight column {weight_col!r} has {int((bad & ~nan).sum())} missing, "
                "infinite or negative value(s) on scored rows; survey weights must "
                "be finite and >= 0."
            )
        # rows without a score are excluded before any metric, so their weight is never used
        w = np.where(bad, 0.0, w)
    groups = {}
    for col in group_cols:
        g = _column(scores, col, "group")
        if g.isna().any():
            raise DataError(
                f"group column {col!r} has {int(g.isna().sum())} missing value(s); "
                "give those rows an explicit group (e.g. 'unknown')."
            )
        groups[col] = g.to_numpy()
    return {"y": y, "p": p, "nan": nan, "w": w, "groups": groups, "index": scores.index[nan]}


# ----------------------------------------------------------------------------- metrics
def _overall(
    y: Any, p: Any, w: Any, threshold: float, rule: str, n_bins: int, undefined: list[dict[str, Any]], weighting: str
) -> dict[str, Any]:
    ww = np.ones_like(p) if w is None else w
    tot = float(ww.sum())
    out: dict[str, Any] = {
        "n": len(y),
        "weight": tot,
        "n_positive": int((y == 1).sum()),
        "n_negative": int((y == 0).sum()),
        "prevalence": float(np.dot(ww, y) / tot) if tot > 0 else float("nan"),
    }
    for name, fn in _OVERALL.items():
        if len(y) == 0:
            value, bad = float("nan"), True
        else:
            value, bad = _quiet(fn, y, p, w, threshold, n_bins, rule)
        out[name] = value
        if bad or np.isnan(value):
            undefined.append({"weighting": weighting, "scope": "overall", "group": None, "metric": name})
    out["threshold"] = threshold
    return out


def _summary(p: Any, w: Any) -> dict[str, float]:
    value, _ = _quiet(fm.score_summary, p, sample_weight=w)
    return dict(value)


def _intervals(
    y: Any,
    p: Any,
    w: Any,
    threshold: float,
    rule: str,
    n_bins: int,
    n_bootstrap: int,
    seed: int,
    undefined: list[dict[str, Any]],
    weighting: str,
) -> dict[str, Any]:
    """Percentile bootstrap of the main metrics, one seeded resample set shared by all.

    A resample with replacement is a vector of row multiplicities, and integer
    weights equal repeated rows in every folkscope metric; so each resample is
    evaluated as ``sample_weight = counts * w`` on the score-sorted rows
    instead of gathering copies (same values, less memory, faster sorts).
    """
    if n_bootstrap == 0 or len(y) == 0:
        return {m: None for m in INTERVAL_METRICS}
    order = np.argsort(p, kind="stable")
    y, p = y[order], p[order]
    w = None if w is None else w[order]
    n = len(y)
    out: dict[str, Any] = {}
    for name in INTERVAL_METRICS:
        # GROUP_METRICS are the library's metrics on arrays validated once (above, by
        # _overall on the same rows); counts * w stays finite and >= 0
        fn = fm.GROUP_METRICS[GROUP_NAME[name]]

        def metric(idx: Any, fn: Callable[..., float] = fn) -> float:
            counts = np.bincount(idx, minlength=n).astype(np.float64)
            return fn(y, p, counts if w is None else counts * w, threshold, n_bins, rule)

        res, _ = _quiet(
            fm.bootstrap_ci, metric, np.arange(n), n_resamples=n_bootstrap, confidence=_CONFIDENCE, random_state=seed
        )
        out[name] = {
            "low": res.low,
            "high": res.high,
            "std_error": res.std_error,
            "confidence": res.confidence,
            "n_resamples": res.n_resamples,
            "n_undefined": res.n_undefined,
        }
        if res.n_undefined:
            undefined.append(
                {
                    "weighting": weighting,
                    "scope": "bootstrap",
                    "group": None,
                    "metric": name,
                    "n_resamples_undefined": res.n_undefined,
                }
            )
    return out


#: Per-group metrics whose bootstrap intervals the run reports (with their gaps and ΔSCE).
GROUP_INTERVAL_METRICS = ("ece", "brier", "roc_auc", "accuracy", "sce")


def _group_intervals(
    y: Any,
    p: Any,
    g: Any,
    w: Any,
    threshold: float,
    rule: str,
    n_bins: int,
    n_bootstrap: int,
    seed: int,
    names: dict[Any, str],
    pair: tuple[Any, Any] | None,
) -> dict[str, Any] | None:
    """Percentile bootstrap of per-group metrics, their max − min gaps and the pair's difference (ΔSCE).

    Rows are resampled jointly (not within groups), so a gap's interval
    carries the sampling noise of both groups and of their sizes. A resample
    in which a group's metric is undefined (no row, or one class for AUC) is
    left out of that quantity's interval and counted.
    """
    if n_bootstrap == 0 or len(y) == 0:
        return None
    codes = [c for c in names if (g == c).any()]
    masks = [g == c for c in codes]
    rng = np.random.default_rng([seed, 1])  # its own stream: the overall intervals keep theirs
    n = len(y)
    draws = {m: np.full((n_bootstrap, len(codes)), np.nan) for m in GROUP_INTERVAL_METRICS}
    fns = {m: fm.GROUP_METRICS[GROUP_NAME[m]] for m in GROUP_INTERVAL_METRICS}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # counted below instead
        for b in range(n_bootstrap):
            counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
            ww = counts if w is None else counts * w
            for j, sel in enumerate(masks):
                if ww[sel].sum() <= 0:
                    continue
                for m, fn in fns.items():
                    draws[m][b, j] = fn(y[sel], p[sel], ww[sel], threshold, n_bins, rule)

    def interval(values: np.ndarray) -> dict[str, Any]:
        ok = values[np.isfinite(values)]
        if len(ok) == 0:
            return {"low": None, "high": None, "n_undefined": int(len(values))}
        low, high = np.percentile(ok, [2.5, 97.5])
        return {"low": float(low), "high": float(high), "n_undefined": int(len(values) - len(ok))}

    out: dict[str, Any] = {"groups": {}, "gaps": {}, "delta_sce": None, "n_resamples": n_bootstrap}
    for j, code in enumerate(codes):
        out["groups"][names[code]] = {m: interval(draws[m][:, j]) for m in GROUP_INTERVAL_METRICS}
    index = {code: j for j, code in enumerate(codes)}
    for m in GROUP_INTERVAL_METRICS:
        d = draws[m]
        enough = np.isfinite(d).sum(axis=1) >= 2
        spread = np.where(
            enough,
            np.nanmax(np.where(np.isfinite(d), d, -np.inf), axis=1)
            - np.nanmin(np.where(np.isfinite(d), d, np.inf), axis=1),
            np.nan,
        )
        gap = {"max_minus_min": interval(spread)}
        if pair is not None and all(c in index for c in pair):
            gap["a_minus_b"] = interval(d[:, index[pair[0]]] - d[:, index[pair[1]]])
        out["gaps"][m] = gap
    if pair is not None and "a_minus_b" in out["gaps"]["sce"]:
        out["delta_sce"] = out["gaps"]["sce"]["a_minus_b"]
    return out


def _groupwise(
    y: Any, p: Any, g: Any, w: Any, threshold: float, rule: str, n_bins: int, pair: tuple[Any, Any] | None
) -> Any:
    kw = dict(sample_weight=w, threshold=threshold, threshold_rule=rule, n_bins=n_bins, pair=pair, nan_policy="omit")
    return _quiet(fm.groupwise_metrics, y, p, g, **kw)[0]


def _groups(
    col: str,
    y_all: Any,
    p_all: Any,
    w_all: Any,
    g_all: Any,
    threshold: float,
    rule: str,
    n_bins: int,
    names: dict[Any, str],
    pair: tuple[Any, Any] | None,
    undefined: list[dict[str, Any]],
    weighting: str,
) -> dict[str, Any]:
    res = _groupwise(y_all, p_all, g_all, w_all, threshold, rule, n_bins, pair)
    rows = []
    scored = ~np.isnan(p_all)
    for code, row in res.per_group.iterrows():
        sel = (g_all == code) & scored
        entry: dict[str, Any] = {
            "code": _plain(code),
            "name": names[code],
            "n": int(row["n"]),
            "n_nan": int(row["n_nan"]),
            "n_scored": int(row["n"] - row["n_nan"]),
            "weight": row["weight"],
            "n_positive": int(row["n_positive"]),
            "n_negative": int(row["n_negative"]),
            "prevalence": row["prevalence"],
            "mean_score": row["mean_score"],
        }
        entry.update({m: row[GROUP_NAME[m]] for m in METRICS})
        entry["score_summary"] = _summary(p_all[sel], None if w_all is None else w_all[sel]) if sel.any() else None
        rows.append(entry)
    ours = {v: k for k, v in GROUP_NAME.items()}
    for code, metric in res.undefined:
        if code != "__all__":
            undefined.append({"weighting": weighting, "scope": col, "group": names[code], "metric": ours[metric]})
    gaps: dict[str, Any] = {}
    for metric, g in res.gaps.iterrows():
        gaps[ours[str(metric)]] = {
            "max_minus_min": g["max_minus_min"],
            "max_group": None if pd.isna(g["max_group"]) else names[g["max_group"]],
            "min_group": None if pd.isna(g["min_group"]) else names[g["min_group"]],
            "n_groups_defined": int(g["n_groups_defined"]),
            "a_minus_b": g["a_minus_b"] if "a_minus_b" in g.index else None,
        }
    return {
        "pair": None if res.pair is None else [names[c] for c in res.pair],
        "pair_codes": None if res.pair is None else [_plain(c) for c in res.pair],
        "groups": rows,
        "gaps": gaps,
        "delta_sce": gaps["sce"]["a_minus_b"] if res.pair is not None else None,
    }


def evaluate_scores(
    scores: pd.DataFrame,
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    weight_col: str | None = "weight",
    group_cols: Sequence[str] = ("RAC1P", "SEX"),
    threshold: float = 0.5,
    threshold_rule: str = ">=",
    n_bins: int = 10,
    n_bootstrap: int = 1000,
    seed: int = 42,
    group_labels: Mapping[str, Mapping[Any, Any]] | None = None,
    group_pairs: Mapping[str, tuple[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Every risk-score metric of a run, unweighted and survey-weighted, as plain JSON.

    Parameters
    ----------
    scores : pandas.DataFrame
        One row per test example with the label (0/1), the risk score in [0, 1]
        (NaN where no score could be extracted), optional survey weights and
        the group columns.
    label_col, score_col : str
        Column names of the label and the risk score.
    weight_col : str or None, default="weight"
        Survey-weight column; ``survey_weighted`` is computed when it is present
        (``None`` in the results otherwise).
    group_cols : sequence of str, default=("RAC1P", "SEX")
        Sensitive attributes for per-group metrics and gaps.
    threshold : float in [0, 1], default=0.5
        Threshold of accuracy, TPR, FPR, ... (``1{r >= threshold}``); pass a
        fitted one for ``--fit-threshold``.
    threshold_rule : {">=", ">"}, default=">="
        ``">="``: folktexts' ``score >= threshold``; ``">"``: ``score > threshold``.
    n_bins : int, default=10
        Bins of both ECEs.
    n_bootstrap : int, default=1000
        Resamples of the 95% percentile intervals of ECE, Brier, AUC and
        accuracy (0 skips them). All metrics share one resample set.
    seed : int, default=42
        Seed of the bootstrap.
    group_labels : mapping of column -> {code: name}, optional
        Readable group names (e.g. ``{"SEX": {1: "Male", 2: "Female"}}``); codes
        may be keyed as ints or strings. Unlabelled codes keep their code.
    group_pairs : mapping of column -> (code A, code B), optional
        Groups of the ``A - B`` gaps (incl. ΔSCE = SCE_A - SCE_B). Two-group
        columns default to their two codes in sorted order.

    Returns
    -------
    dict
        JSON-ready (``json.dumps(..., allow_nan=False)`` works): undefined
        metrics are ``None`` and listed in ``undefined``, infinities are
        ``"inf"``. Keys: ``schema, settings, counts, excluded, undefined,
        single_class_groups, unweighted, survey_weighted``; each weighting holds
        ``overall`` (metrics + ``score_summary``), ``intervals`` and ``groups``
        (per column: ``pair``, ``groups`` rows, ``gaps``, ``delta_sce``). Rows
        with a NaN score are excluded from every metric and counted in
        ``excluded`` (overall and per group), never imputed.

    Examples
    --------
    >>> df = pd.DataFrame({"label": [1, 0, 1, 0], "risk_score": [0.9, 0.2, 0.6, float("nan")],
    ...                    "SEX": [1, 1, 2, 2]})
    >>> res = evaluate_scores(df, group_cols=["SEX"], n_bootstrap=0,
    ...                       group_labels={"SEX": {1: "Male", 2: "Female"}})
    >>> res["excluded"]["nan_score"], res["unweighted"]["overall"]["accuracy"]
    (1, 1.0)
    >>> res["unweighted"]["groups"]["SEX"]["groups"][1]["roc_auc"] is None   # one class left
    True
    """
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 0:
        raise ConfigError(
            f"n_bootstrap must be an integer >= 0; got {n_bootstrap!r}.", parameter="n_bootstrap", value=n_bootstrap
        )
    check_number(threshold, "threshold", low=0.0, high=1.0)
    rule = check_threshold_rule(threshold_rule)
    check_number(n_bins, "n_bins", integer=True, low=1)
    check_number(seed, "seed", integer=True, low=0)
    if isinstance(group_cols, str):
        group_cols = [group_cols]
    d = _prepare(scores, label_col, score_col, weight_col, group_cols)
    y_all, p_all, nan, w_all = d["y"], d["p"], d["nan"], d["w"]
    keep = ~nan
    y = np.asarray(y_all[keep])
    p = p_all[keep]
    n_nan = int(nan.sum())
    names = {c: _names(c, sorted(pd.unique(g)), group_labels) for c, g in d["groups"].items()}
    pairs = {}
    for col, pair in (group_pairs or {}).items():
        if col not in d["groups"]:
            raise ConfigError(
                f"group_pairs names column {col!r}, which is not in group_cols {list(group_cols)}.",
                parameter="group_pairs",
                value=group_pairs,
            )
        by_name = {v: k for k, v in names[col].items()}
        # a pair may be given by code (1, 2) or by readable name ("Male", "Female")
        pairs[col] = tuple(by_name.get(g, g) if g not in names[col] else g for g in pair)
    result: dict[str, Any] = {
        "schema": SCHEMA,
        "settings": {
            "label_col": label_col,
            "score_col": score_col,
            "weight_col": weight_col if w_all is not None else None,
            "group_cols": list(group_cols),
            "threshold": float(threshold),
            "threshold_rule": rule,
            "n_bins": n_bins,
            "n_bootstrap": int(n_bootstrap),
            "seed": seed,
            "confidence": _CONFIDENCE,
        },
        "counts": {"n_rows": len(p_all), "n_scored": int(keep.sum()), "n_excluded": n_nan},
        "excluded": {
            "nan_score": n_nan,
            "share_nan_score": n_nan / len(p_all),
            "rows": [_plain(i) for i in d["index"][:_MAX_LISTED_ROWS]],
            "rows_truncated": n_nan > _MAX_LISTED_ROWS,
            "by_group": {
                c: {names[c][k]: int(v) for k, v in pd.Series(g[nan]).value_counts().sort_index().items()}
                for c, g in d["groups"].items()
            },
        },
        "single_class_groups": [],
        "undefined": [],
    }
    weightings = {"unweighted": None, "survey_weighted": w_all}
    for weighting, w_full in weightings.items():
        if weighting == "survey_weighted" and w_all is None:
            result[weighting] = None
            continue
        w = None if w_full is None else w_full[keep]
        undefined: list[dict[str, Any]] = []
        section: dict[str, Any] = {"overall": _overall(y, p, w, float(threshold), rule, n_bins, undefined, weighting)}
        section["overall"]["score_summary"] = _summary(p_all, w_full)
        section["intervals"] = _intervals(
            y, p, w, float(threshold), rule, n_bins, int(n_bootstrap), seed, undefined, weighting
        )
        section["groups"] = {
            col: _groups(
                col,
                y_all,
                p_all,
                w_full,
                g,
                float(threshold),
                rule,
                n_bins,
                names[col],
                pairs.get(col),
                undefined,
                weighting,
            )
            for col, g in d["groups"].items()
        }
        for col, g in d["groups"].items():
            block = section["groups"][col]
            pair = tuple(block["pair_codes"]) if block["pair_codes"] else None
            block["intervals"] = _group_intervals(
                y, p, np.asarray(g)[keep], w, float(threshold), rule, n_bins, int(n_bootstrap), seed, names[col], pair
            )
        for m, iv in section["intervals"].items():
            if iv is not None:
                iv["estimate"] = section["overall"][m]
        section["undefined"] = undefined
        result["undefined"].extend(undefined)
        result[weighting] = section
    single = result["unweighted"]["overall"]
    if single["n_positive"] == 0 or single["n_negative"] == 0:
        result["single_class_groups"].append(
            {
                "column": None,
                "group": "overall",
                "code": None,
                "n_positive": single["n_positive"],
                "n_negative": single["n_negative"],
            }
        )
    for col, block in result["unweighted"]["groups"].items():
        for row in block["groups"]:
            if row["n_positive"] == 0 or row["n_negative"] == 0:
                result["single_class_groups"].append(
                    {
                        "column": col,
                        "group": row["name"],
                        "code": row["code"],
                        "n_positive": row["n_positive"],
                        "n_negative": row["n_negative"],
                    }
                )
    return to_jsonable(result)  # type: ignore[no-any-return]


def evaluate_baselines(
    scores: pd.DataFrame, baselines: Mapping[str, ArrayLike], *, score_col: str = "risk_score", **kwargs: Any
) -> dict[str, dict[str, Any]]:
    """:func:`evaluate_scores` of each baseline's scores on the same rows, labels and weights.

    Parameters
    ----------
    scores : pandas.DataFrame
        The model's scores table (its score column is replaced per baseline).
    baselines : mapping of name -> array-like of shape (n_rows,)
        Test-split scores of each baseline, aligned to the rows of ``scores``.
    score_col : str, default="risk_score"
    **kwargs
        Passed to :func:`evaluate_scores`.

    Returns
    -------
    dict of name -> results dict

    Examples
    --------
    >>> df = pd.DataFrame({"label": [0, 1], "risk_score": [0.4, 0.6], "SEX": [1, 2]})
    >>> out = evaluate_baselines(df, {"lr": [0.1, 0.9]}, group_cols=[], n_bootstrap=0)
    >>> out["lr"]["unweighted"]["overall"]["accuracy"]
    1.0
    """
    out = {}
    for name, values in baselines.items():
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
        if len(arr) != len(scores):
            raise DataError(
                f"baseline {name!r} has {len(arr)} scores but the table has "
                f"{len(scores)} rows; pass one score per row, in row order."
            )
        out[str(name)] = evaluate_scores(scores.assign(**{score_col: arr}), score_col=score_col, **kwargs)
    return out


def compare_table(
    results: Mapping[str, Mapping[str, Any]], *, weighting: str = "unweighted", intervals: bool = False
) -> pd.DataFrame:
    """Model-vs-baselines table (paper table 1): one row per model, one column per metric.

    Parameters
    ----------
    results : mapping of name -> results
        Each value is an :func:`evaluate_scores` result, one weighting's section
        of it, or a flat ``{metric: value}`` dict.
    weighting : {"unweighted", "survey_weighted"}, default="unweighted"
    intervals : bool, default=False
        Add ``"<title> low"`` / ``"<title> high"`` columns for the bootstrapped metrics.

    Returns
    -------
    pandas.DataFrame
        Index: names; columns ``n`` (scored rows) then the titles of
        :data:`TABLE_COLUMNS` (missing or undefined values NaN, ``"inf"`` back
        to ``inf``).

    Examples
    --------
    >>> t = compare_table({"model": {"ece": 0.1, "roc_auc": 0.8}, "lr": {"ece": 0.02}})
    >>> float(t.loc["model", "AUC"]), bool(np.isnan(t.loc["lr", "AUC"]))
    (0.8, True)
    """
    if weighting not in ("unweighted", "survey_weighted"):
        raise ConfigError(
            f"weighting must be 'unweighted' or 'survey_weighted'; got {weighting!r}.",
            parameter="weighting",
            value=weighting,
        )
    rows = {}
    for name, res in results.items():
        section: Any = res.get(weighting, res) if isinstance(res, Mapping) else None
        if section is None:  # e.g. survey_weighted of a table without weights
            section = {}
        overall = section.get("overall", section)
        row = {
            "n": _number(overall.get("n")),
            **{title: _number(overall.get(key)) for key, title in TABLE_COLUMNS.items()},
        }
        if intervals:
            ivs = section.get("intervals") or {}
            for key in INTERVAL_METRICS:
                iv = ivs.get(key) or {}
                row[f"{TABLE_COLUMNS[key]} low"] = _number(iv.get("low"))
                row[f"{TABLE_COLUMNS[key]} high"] = _number(iv.get("high"))
        rows[str(name)] = row
    return pd.DataFrame.from_dict(rows, orient="index", dtype=np.float64)


def _number(value: Any) -> float:
    if value is None:
        return float("nan")
    return float(value)  # float("inf") parses the JSON spelling of infinity


# ----------------------------------------------------------------------------- plot data
def _scored(scores: pd.DataFrame, label_col: str, score_col: str, weight_col: str | None) -> tuple[Any, Any, Any, Any]:
    d = _prepare(scores, label_col, score_col, weight_col, ())
    keep = ~d["nan"]
    w = None if weight_col is None or d["w"] is None else d["w"][keep]
    return d["y"][keep], d["p"][keep], w, keep


#: Coverages at which the run reports selective accuracy.
COVERAGES = (0.1, 0.25, 0.5, 0.75, 1.0)


def selective_accuracy_data(
    scores: pd.DataFrame,
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    weight_col: str | None = None,
    max_points: int = 101,
) -> dict[str, Any]:
    """Accuracy on the most confident rows at each coverage: the curve (thinned) and its values at :data:`COVERAGES`.

    A useful risk score is most accurate where it is most confident; a flat
    curve means confidence says nothing about correctness.

    Examples
    --------
    >>> t = pd.DataFrame({"label": [1, 0, 1, 0], "risk_score": [0.9, 0.2, 0.4, 0.55]})
    >>> selective_accuracy_data(t)["at_coverage"]
    {'0.1': 1.0, '0.25': 1.0, '0.5': 1.0, '0.75': 0.6666666666666666, '1.0': 0.5}
    """
    y, p, w, _ = _scored(scores, label_col, score_col, weight_col)
    if len(y) == 0:
        return {"curve": {"coverage": [], "selective_accuracy": [], "confidence": []}, "at_coverage": {}}
    full = fm.selective_accuracy_curve(y, p, sample_weight=w)
    at = {}
    for c in COVERAGES:  # the smallest kept set that reaches the coverage (ties are never split)
        hit = full[full["coverage"] >= c - 1e-12]
        at[str(c)] = float(hit["selective_accuracy"].iloc[0]) if len(hit) else None
    curve = full
    if len(curve) > max_points:
        curve = curve.iloc[np.unique(np.linspace(0, len(curve) - 1, max_points).round().astype(int))]
    return {
        "curve": {k: curve[k].to_numpy(np.float64) for k in ("coverage", "selective_accuracy", "confidence")},
        "at_coverage": at,
    }


def _curve(y: Any, p: Any, w: Any, n_bins: int, strategy: str) -> dict[str, Any]:
    if len(y) == 0:  # no scored row: empty bins (count 0, rates NaN), as for any empty bin
        table = pd.DataFrame(
            {
                c: np.full(n_bins, np.nan)
                for c in ("lower", "upper", "mean_predicted", "fraction_positive", "ci_low", "ci_high")
            }
        )
        table["count"] = table["weight"] = 0.0
        if strategy == "uniform":
            table["lower"], table["upper"] = np.arange(n_bins) / n_bins, np.arange(1, n_bins + 1) / n_bins
    else:
        table = fm.calibration_curve(
            y, p, n_bins=n_bins, strategy=strategy, sample_weight=w, interval="wilson", confidence=_CONFIDENCE
        )
    return {
        c: table[c].to_numpy(np.float64)
        for c in ("lower", "upper", "count", "weight", "mean_predicted", "fraction_positive", "ci_low", "ci_high")
    }


def calibration_data(
    scores: pd.DataFrame,
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    weight_col: str | None = None,
    group_cols: Sequence[str] = (),
    n_bins: int = 10,
    strategy: str = "uniform",
    group_labels: Mapping[str, Mapping[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Reliability-diagram arrays (per bin) overall and per group, for the plots.

    Parameters
    ----------
    scores : pandas.DataFrame
    label_col, score_col : str
    weight_col : str or None, default=None
        Survey weights for a weighted curve (``None``: unweighted).
    group_cols : sequence of str, default=()
    n_bins : int, default=10
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-count bins (see
        :func:`folkscope.metrics.calibration_curve`).
    group_labels : mapping, optional
        As in :func:`evaluate_scores`.

    Returns
    -------
    dict
        ``strategy, n_bins, n_excluded, overall, groups``; ``overall`` and each
        ``groups[col][i]["curve"]`` map ``lower, upper, count, weight,
        mean_predicted, fraction_positive, ci_low, ci_high`` (Wilson 95%) to
        arrays of shape (n_bins,); empty bins have count 0 and NaN rates.

    Examples
    --------
    >>> df = pd.DataFrame({"label": [0, 0, 1, 1], "risk_score": [0.1, 0.2, 0.7, 0.8]})
    >>> calibration_data(df, n_bins=2)["overall"]["fraction_positive"].tolist()
    [0.0, 1.0]
    """
    y, p, w, keep = _scored(scores, label_col, score_col, weight_col)
    out: dict[str, Any] = {
        "strategy": strategy,
        "n_bins": n_bins,
        "n_excluded": int((~keep).sum()),
        "overall": _curve(y, p, w, n_bins, strategy),
        "groups": {},
    }
    for col in group_cols:
        g = _column(scores, col, "group").to_numpy()[keep]
        codes = sorted(pd.unique(g))
        names = _names(col, codes, group_labels)
        out["groups"][col] = [
            {
                "code": _plain(c),
                "name": names[c],
                "n": int((g == c).sum()),
                "curve": _curve(y[g == c], p[g == c], None if w is None else w[g == c], n_bins, strategy),
            }
            for c in codes
        ]
    return out


def roc_data(
    scores: pd.DataFrame,
    *,
    label_col: str = "label",
    score_col: str = "risk_score",
    baselines: Mapping[str, ArrayLike] | None = None,
    model_name: str = "model",
) -> dict[str, dict[str, Any]]:
    """ROC curve points (``fpr, tpr, thresholds``) and AUC of the model and each baseline.

    Each curve uses the rows where that scorer has a score (``n_excluded`` counts
    the others). A single-class label set gives empty arrays and ``auc`` NaN.

    Examples
    --------
    >>> df = pd.DataFrame({"label": [0, 0, 1, 1], "risk_score": [0.1, 0.4, 0.35, 0.8]})
    >>> roc_data(df)["model"]["auc"]
    0.75
    """
    from sklearn.metrics import roc_curve

    y_all = check_binary(_column(scores, label_col, "label").to_numpy(), label_col)
    scorers = {model_name: _column(scores, score_col, "score").to_numpy(np.float64)}
    for name, values in (baselines or {}).items():
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
        if len(arr) != len(y_all):
            raise DataError(f"baseline {name!r} has {len(arr)} scores for {len(y_all)} rows.")
        scorers[str(name)] = arr
    out = {}
    for name, p_all in scorers.items():
        keep = ~np.isnan(p_all)
        y, p = y_all[keep], p_all[keep]
        auc, _ = _quiet(fm.roc_auc_score, y, p) if len(y) else (float("nan"), True)
        if np.isnan(auc):
            fpr = tpr = thr = np.empty(0)
        else:
            fpr, tpr, thr = roc_curve(y, p, drop_intermediate=True)
        out[name] = {
            "fpr": fpr,
            "tpr": tpr,
            "thresholds": thr,
            "auc": auc,
            "n": int(keep.sum()),
            "n_excluded": int((~keep).sum()),
        }
    return out


def histogram_data(
    scores: pd.DataFrame, *, label_col: str = "label", score_col: str = "risk_score", bins: int = 20
) -> dict[str, Any]:
    """Score histogram on [0, 1], overall and by label (counts of scored rows).

    Examples
    --------
    >>> df = pd.DataFrame({"label": [0, 1, 1], "risk_score": [0.1, 0.9, float("nan")]})
    >>> h = histogram_data(df, bins=2)
    >>> h["overall"].tolist(), h["by_label"][1].tolist(), h["n_excluded"]
    ([1, 1], [0, 1], 1)
    """
    check_number(bins, "bins", integer=True, low=1)
    y, p, _, keep = _scored(scores, label_col, score_col, None)
    edges = np.arange(bins + 1) / bins
    counts = {lab: np.histogram(p[y == lab], bins=edges)[0] for lab in (0, 1)}
    return {
        "edges": edges,
        "overall": np.histogram(p, bins=edges)[0],
        "by_label": counts,
        "n": int(keep.sum()),
        "n_excluded": int((~keep).sum()),
    }
