"""Every validation error: the right class, naming the argument, what is allowed, the value."""

from __future__ import annotations

import numpy as np
import pytest

from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning
from folkscope.metrics import (
    accuracy_score,
    bootstrap_ci,
    brier_score_loss,
    calibration_curve,
    expected_calibration_error,
    groupwise_metrics,
    jensen_shannon_divergence,
    log_loss,
    rabbi,
    roc_auc_score,
    score_summary,
    top_k_selection,
)
from folkscope.metrics._validation import check_random_state, weighted_quantile

Y = [0, 1, 1, 0]
P = [0.1, 0.8, 0.6, 0.3]


# ---------------------------------------------------------------------------- data errors
@pytest.mark.parametrize(
    ("y", "p", "kwargs", "match"),
    [
        ([0, 1, 1], P, {}, r"y_true has 3, y_prob has 4"),
        (Y, [0.1, 1.2, 0.6, 0.3], {}, r"y_prob must hold probabilities in \[0, 1\].*1\.2"),
        (Y, [0.1, -0.5, 0.6, 0.3], {}, r"y_prob .*-0\.5"),
        (Y, [0.1, np.inf, 0.6, 0.3], {}, r"y_prob .*inf"),
        ([0, 2, 1, 0], P, {}, r"y_true must hold binary labels 0/1.*\[2\]"),
        ([0, 0.5, 1, 0], P, {}, r"y_true .*0\.5"),
        ([0, np.nan, 1, 0], P, {}, r"y_true .*nan"),
        (Y, P, {"sample_weight": [1, -1, 1, 1]}, r"sample_weight must be non-negative.*-1"),
        (Y, P, {"sample_weight": [1, 1, 1]}, r"sample_weight has 3 rows but the data has 4"),
        (Y, P, {"sample_weight": [0, 0, 0, 0]}, r"sample_weight sums to 0"),
        (Y, P, {"sample_weight": [1, np.nan, 1, 1]}, r"sample_weight must be finite"),
        ([], [], {}, r"y_true is empty"),
        ([[0, 1]], [[0.2, 0.3]], {}, r"y_true must be a 1-d array .* shape \(1, 2\)"),
        (["a", "b", "a", "b"], P, {}, r"y_true must be numeric"),
    ],
)
@pytest.mark.parametrize("metric", [expected_calibration_error, brier_score_loss, log_loss, accuracy_score])
def test_bad_data_raises_data_error(metric, y, p, kwargs, match):
    with pytest.raises(DataError, match=match):
        metric(y, p, **kwargs)


def test_nan_scores_raise_by_default_and_name_the_rows():
    with pytest.raises(
        DataError,
        match=r"y_prob contains 2 NaN score\(s\) \(rows \[1, 3\]\).*"
        r"nan_policy='omit'",
    ):
        brier_score_loss(Y, [0.1, np.nan, 0.6, np.nan])


def test_nan_omit_drops_exactly_the_nan_rows():
    got = brier_score_loss(Y, [0.1, np.nan, 0.6, 0.3], nan_policy="omit")
    assert got == pytest.approx(brier_score_loss([0, 1, 0], [0.1, 0.6, 0.3]))


def test_all_nan_with_omit_is_undefined_not_an_error():
    with pytest.warns(UndefinedMetricWarning, match="no scored row"):
        assert np.isnan(brier_score_loss([0, 1], [np.nan, np.nan], nan_policy="omit"))


# ---------------------------------------------------------------------------- option errors
@pytest.mark.parametrize(
    ("kwargs", "parameter", "match"),
    [
        ({"n_bins": 0}, "n_bins", r"n_bins must be an integer in \[1, inf\]; got 0"),
        ({"n_bins": 2.5}, "n_bins", r"got 2\.5"),
        ({"n_bins": True}, "n_bins", r"got True"),
        (
            {"strategy": "kmeans"},
            "strategy",
            r"strategy must be one of .*'quantile'.*'uniform'.*"
            r"got 'kmeans'",
        ),
        ({"nan_policy": "drop"}, "nan_policy", r"nan_policy must be one of .*got 'drop'"),
    ],
)
def test_bad_options_raise_config_error_with_parameter_and_value(kwargs, parameter, match):
    with pytest.raises(ConfigError, match=match) as info:
        expected_calibration_error(Y, P, **kwargs)
    assert info.value.parameter == parameter
    assert info.value.value == next(iter(kwargs.values()))
    assert isinstance(info.value, ValueError)  # callers catching ValueError keep working


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda: calibration_curve(Y, P, interval="normal"), "interval"),
        (lambda: calibration_curve(Y, P, confidence=1.0), "confidence"),
        (lambda: accuracy_score(Y, P, threshold=1.5), "threshold"),
        (lambda: log_loss(Y, P, eps=0.0), "eps"),
        (lambda: score_summary(P, near=0.7), "near"),
        (lambda: score_summary(P, quantiles=[1.5]), "quantiles"),
        (lambda: groupwise_metrics(Y, P, ["a", "a", "b", "b"], metrics=["ece", "f1"]), "metrics"),
        (lambda: groupwise_metrics(Y, P, ["a", "a", "b", "b"], pair=("a", "c")), "pair"),
        (lambda: top_k_selection(P, [0, 0, 0, 0], k=0), "k"),
        (lambda: top_k_selection(P, [0, 0, 0, 0], k=1, tie_break="coin"), "tie_break"),
        (lambda: jensen_shannon_divergence(P, P, bins=[0.5, 0.2]), "bins"),
        (lambda: bootstrap_ci(brier_score_loss, Y, P, n_resamples=0), "n_resamples"),
        (lambda: bootstrap_ci("auc", Y, P), "metric"),
        (lambda: check_random_state(-1), "random_state"),
        (lambda: check_random_state("seed"), "random_state"),
    ],
)
def test_other_options_raise_config_error(call, parameter):
    with pytest.raises(ConfigError) as info:
        call()
    assert info.value.parameter == parameter
    assert parameter in str(info.value)


def test_groups_with_missing_labels_raise():
    with pytest.raises(DataError, match="groups contains 1 missing label"):
        groupwise_metrics(Y, P, ["a", None, "b", "b"])


def test_groups_length_mismatch_raises():
    with pytest.raises(DataError, match="groups has 3"):
        groupwise_metrics(Y, P, ["a", "b", "b"])


def test_rabbi_rejects_nan_and_empty_groups():
    with pytest.raises(DataError, match="scores_a contains 1 NaN"):
        rabbi([np.nan, 1.0], [0.5])
    with pytest.raises(DataError, match="scores_b is empty"):
        rabbi([1.0], [])
    with pytest.raises(DataError, match="no scored candidate left"):
        rabbi([np.nan], [1.0], nan_policy="omit")
    with pytest.raises(DataError, match="weights_a must be non-negative"):
        rabbi([1.0, 2.0], [1.0], weights_a=[1, -1])


def test_roc_auc_accepts_unbounded_scores_but_not_inf():
    assert roc_auc_score([0, 1], [-3.0, 7.0]) == 1.0
    with pytest.raises(DataError, match="must be finite"):
        roc_auc_score([0, 1], [-np.inf, 7.0])


def test_weighted_quantile_is_inverted_cdf():
    x = np.array([3.0, 1.0, 2.0, 4.0])
    levels = [0.0, 0.1, 0.25, 0.5, 0.51, 0.75, 1.0]
    assert weighted_quantile(x, levels).tolist() == np.quantile(x, levels, method="inverted_cdf").tolist()
    # weight 3 on the value 1 is the same as three copies of it
    xr = np.array([1.0, 1.0, 1.0, 2.0, 3.0])
    assert (
        weighted_quantile(np.array([1.0, 2.0, 3.0]), levels, np.array([3.0, 1.0, 1.0])).tolist()
        == weighted_quantile(xr, levels).tolist()
    )
