"""folkscope's metrics are folktexts' on the same (label, score, group) arrays, asked of folktexts itself (issue 29).

Arrays are generated with ties, scores on a 0.01 grid and at the ECE bin
edges (0.3, 0.6, 0.7, where netcal's linspace edges and exact m/10 differ),
scores of exactly 0 and 1, thresholds at score values (where ``>=`` and
``>`` differ), single-class arrays and groups, and groups under folktexts'
4% minimum size. Each example is evaluated by folktexts 0.7.1 through the
oracle and by folkscope; every shared number must agree to 1e-12.

On main before issue 29 (e5c2f1a) folkscope thresholded with ``score >
t`` (accuracy off by up to 0.4 on tied sets), binned scores of exactly 0.3
into another ECE bin, and had neither folktexts' flat evaluation functions
nor FNR, TNR, precision, PPR or the fairness ratios.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from folkscope import metrics as fm
from folkscope.errors import UndefinedMetricWarning

ORACLE = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

#: scores where folktexts' and folkscope's earlier rules part: bin edges, the 0.5 threshold, 0 and 1, a 0.01 grid
_EDGES = [0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.9, 1.0]
_score = st.one_of(
    st.sampled_from(_EDGES),
    st.integers(0, 100).map(lambda k: k / 100),
    st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False),
)


@st.composite
def evaluation_case(draw: st.DrawFn) -> dict:
    n = draw(st.integers(1, 60))
    pool = draw(st.lists(_score, min_size=1, max_size=8))  # few distinct scores: many ties
    scores = [draw(st.sampled_from(pool)) for _ in range(n)]
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    groups = draw(st.lists(st.sampled_from([1, 2, 3, 9]), min_size=n, max_size=n))
    threshold = draw(st.one_of(st.just(0.5), st.sampled_from(scores), _score))
    return {"y_true": labels, "y_pred_scores": scores, "sensitive_attribute": groups, "threshold": threshold}


def assert_same(ours: dict, theirs: dict) -> None:
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        a, b = ours[key], theirs[key]
        if isinstance(b, float) and isinstance(a, float):
            assert a == pytest.approx(b, abs=1e-12, nan_ok=True), key
        else:
            assert a == b, key


def quiet(fn, *args, **kwargs):
    """Call a folkscope metric; undefined values (NaN with a warning) are compared, not raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return fn(*args, **kwargs)


#: folktexts' flat key -> folkscope's own metric function (thresholded ones take threshold=)
OWN = {
    "accuracy": fm.accuracy_score,
    "tpr": fm.true_positive_rate,
    "fnr": fm.false_negative_rate,
    "fpr": fm.false_positive_rate,
    "tnr": fm.true_negative_rate,
    "balanced_accuracy": fm.balanced_accuracy_score,
    "precision": fm.precision_score,
    "ppr": fm.positive_prediction_rate,
}


@ORACLE
@given(
    case=evaluation_case(),
    min_group_size=st.sampled_from([0.0, 0.04, 0.3]),
    costs=st.sampled_from([(1.0, 1.0), (1.0, 3.0), (2.5, 1.0)]),
)
def test_metrics_are_folktexts(folktexts, case, min_group_size, costs):
    """One generated case through every function of folktexts.evaluation and folkscope's own metrics."""
    y, p, s, t = case["y_true"], case["y_pred_scores"], case["sensitive_attribute"], case["threshold"]
    predictions = (np.asarray(p) >= t).astype(int).tolist()

    # folktexts' flat dictionary, key for key
    flat = folktexts("evaluation", fn="evaluate_predictions", **case)
    assert_same(quiet(fm.evaluate_predictions, y, p, sensitive_attribute=s, threshold=t), flat)

    # fairness ratios and differences with every group's metrics, at another minimum group size
    ours = fm.evaluate_binary_predictions_fairness(
        y, predictions, s, return_groupwise_metrics=True, min_group_size=min_group_size
    )
    try:
        theirs = folktexts(
            "evaluation",
            fn="evaluate_binary_predictions_fairness",
            y_true=y,
            y_pred_scores=predictions,
            sensitive_attribute=s,
            return_groupwise_metrics=True,
            min_group_size=min_group_size,
        )
    except RuntimeError as err:  # every group under the minimum size: folktexts fails on a missing key
        assert "KeyError" in str(err) and ours == {}
    else:
        assert_same(ours, theirs)

    # the fitted threshold
    kw = {"false_pos_cost": costs[0], "false_neg_cost": costs[1]}
    theirs_t = folktexts("evaluation", fn="compute_best_threshold", y_true=y, y_pred_scores=p, **kw)
    ours_t = quiet(fm.compute_best_threshold, y, p, **kw)
    if len(set(y)) == 2:
        assert ours_t == theirs_t
    else:  # folktexts returns inf for one class (a NaN cost wins its argmin); folkscope says undefined
        assert theirs_t == math.inf and math.isnan(ours_t)

    # folkscope's own metric functions (NaN where a rate has no denominator) wherever both are defined
    for key, fn in OWN.items():
        value = quiet(fn, y, p, threshold=t)
        if not math.isnan(value):  # undefined here; folktexts' worst value there
            assert value == pytest.approx(flat[key], abs=1e-12), key
    assert fm.expected_calibration_error(y, p) == pytest.approx(flat["ece"], abs=1e-12)
    assert fm.brier_score_loss(y, p) == pytest.approx(flat["brier_score_loss"], abs=1e-12)
    assert quiet(fm.roc_auc_score, y, p) == pytest.approx(flat["roc_auc"], abs=1e-12, nan_ok=True)
    if flat["ece_quantile"] is not None:
        assert fm.expected_calibration_error(y, p, strategy="quantile") == pytest.approx(
            flat["ece_quantile"], abs=1e-12
        )
    res = quiet(fm.groupwise_metrics, y, p, s, threshold=t, metrics=["accuracy", "ppr", "ece"])
    for key in ("accuracy", "ppr", "ece"):
        assert res.overall[key] == pytest.approx(flat[key], abs=1e-12), key


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=evaluation_case(), k=st.integers(2, 12), seed=st.integers(0, 2**16))
def test_bootstrap_is_folktexts_on_the_numeric_metrics(folktexts, case, k, seed):
    """Same resamples (folktexts' seeded draws), same summaries; folktexts' own wrapper fails on model_name=None."""
    y, p, s, t = case["y_true"], case["y_pred_scores"], case["sensitive_attribute"], case["threshold"]
    if len(set(y)) < 2 or len(y) < 8:
        return  # a resample of one class fails in folktexts (AUC)
    try:
        theirs = folktexts(
            "bootstrap_numeric", y_true=y, y_pred_scores=p, sensitive_attribute=s, threshold=t, k=k, seed=seed
        )
    except RuntimeError:
        return  # some resample drew one class
    ours = fm.evaluate_predictions_bootstrap(y, p, sensitive_attribute=s, threshold=t, k=k, seed=seed)
    undefined = {key for key in ours if key.endswith("_n_undefined")}
    assert not undefined
    assert_same(ours, theirs)
