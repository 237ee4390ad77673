"""Thresholded metrics, ROC AUC, fitted threshold and selective accuracy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as skm

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    best_accuracy_threshold,
    false_negative_rate,
    false_positive_rate,
    positive_prediction_rate,
    precision_score,
    roc_auc_score,
    selective_accuracy_score,
    true_negative_rate,
    true_positive_rate,
)

from .strategies import PROPERTY, binary_data, int_weights

THRESHOLDED = [accuracy_score, balanced_accuracy_score, true_positive_rate, false_positive_rate]
NEW_RATES = [false_negative_rate, true_negative_rate, precision_score, positive_prediction_rate]

Y = np.array([1, 1, 1, 0, 0, 0, 0, 1])
P = np.array([0.9, 0.6, 0.4, 0.7, 0.2, 0.5, 0.1, 0.5])


def test_thresholded_metrics_by_hand():
    # predictions r >= 0.5 (folktexts): 1 1 0 1 0 1 0 1 ; tp = 3 of 4 positives, fp = 2 of 4 negatives
    assert accuracy_score(Y, P) == pytest.approx(5 / 8)
    assert true_positive_rate(Y, P) == pytest.approx(3 / 4)
    assert false_positive_rate(Y, P) == pytest.approx(2 / 4)
    assert balanced_accuracy_score(Y, P) == pytest.approx((0.75 + 0.5) / 2)
    # r > 0.5 (threshold_rule=">"): 1 1 0 1 0 0 0 0 ; tp = 2 of 4, fp = 1 of 4
    assert true_positive_rate(Y, P, threshold_rule=">") == pytest.approx(2 / 4)
    assert false_positive_rate(Y, P, threshold_rule=">") == pytest.approx(1 / 4)
    assert balanced_accuracy_score(Y, P, threshold_rule=">") == pytest.approx((0.5 + 0.75) / 2)
    # threshold 0.45: 0.5 counts as positive under either rule
    for rule in (">=", ">"):
        assert true_positive_rate(Y, P, threshold=0.45, threshold_rule=rule) == pytest.approx(3 / 4)
        assert false_positive_rate(Y, P, threshold=0.45, threshold_rule=rule) == pytest.approx(2 / 4)


def test_new_rates_by_hand():
    # r >= 0.5: tp 3, fn 1, fp 2, tn 2
    assert false_negative_rate(Y, P) == pytest.approx(1 / 4)
    assert true_negative_rate(Y, P) == pytest.approx(2 / 4)
    assert precision_score(Y, P) == pytest.approx(3 / 5)
    assert positive_prediction_rate(Y, P) == pytest.approx(5 / 8)
    with pytest.warns(UndefinedMetricWarning, match="no row is predicted positive"):
        assert np.isnan(precision_score(Y, P, threshold=1.0, threshold_rule=">"))


def test_unknown_threshold_rule_is_one_clear_error():
    from folkscope.errors import ConfigError

    with pytest.raises(ConfigError, match="threshold_rule must be one of"):
        accuracy_score(Y, P, threshold_rule="=>")


def test_thresholded_metrics_match_sklearn_with_weights():
    w = np.array([1, 2, 3, 1, 2, 3, 1, 2])
    pred = (P >= 0.5).astype(int)
    assert accuracy_score(Y, P, sample_weight=w) == pytest.approx(skm.accuracy_score(Y, pred, sample_weight=w))
    assert balanced_accuracy_score(Y, P, sample_weight=w) == pytest.approx(
        skm.balanced_accuracy_score(Y, pred, sample_weight=w)
    )
    assert true_positive_rate(Y, P, sample_weight=w) == pytest.approx(skm.recall_score(Y, pred, sample_weight=w))


def test_roc_auc_by_hand_with_ties():
    # positives 0.8, 0.4 ; negatives 0.4, 0.1 -> pairs: (0.8>0.4) (0.8>0.1) (0.4=0.4) (0.4>0.1)
    assert roc_auc_score([1, 1, 0, 0], [0.8, 0.4, 0.4, 0.1]) == pytest.approx(3.5 / 4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roc_auc_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 300)
    p = np.round(rng.random(300), 1)  # many ties
    w = rng.integers(1, 5, 300).astype(float)
    assert roc_auc_score(y, p) == pytest.approx(skm.roc_auc_score(y, p))
    assert roc_auc_score(y, p, sample_weight=w) == pytest.approx(skm.roc_auc_score(y, p, sample_weight=w))


@pytest.mark.parametrize(
    ("metric", "y"),
    [
        (roc_auc_score, [1, 1, 1]),
        (roc_auc_score, [0, 0, 0]),
        (balanced_accuracy_score, [1, 1, 1]),
        (true_positive_rate, [0, 0, 0]),
        (false_positive_rate, [1, 1, 1]),
    ],
)
def test_single_class_is_nan_with_warning(metric, y):
    with pytest.warns(UndefinedMetricWarning, match="undefined"):
        assert np.isnan(metric(y, [0.2, 0.5, 0.9]))


def test_best_accuracy_threshold_by_hand():
    # sorted scores 0.1(0) 0.2(0) 0.3(1) 0.4(0) 0.8(1): best split between 0.2 and 0.3 (4/5)
    # or between 0.4 and 0.8 (4/5); the tie goes to the one nearer 0.5
    t = best_accuracy_threshold([0, 0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.8])
    assert t == pytest.approx(0.6)
    assert accuracy_score([0, 0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.8], threshold=t) == 0.8


def test_best_accuracy_threshold_extremes():
    assert best_accuracy_threshold([1, 1], [0.3, 0.6]) == 0.0  # all positive
    assert best_accuracy_threshold([0, 0], [0.3, 0.6]) == 0.8  # all negative: above the top score under >=
    assert best_accuracy_threshold([0, 0], [0.3, 0.6], threshold_rule=">") == 0.6
    # a score of 1 cannot be predicted negative under >= with a threshold in [0, 1]
    assert best_accuracy_threshold([0, 1, 0], [0.2, 0.6, 1.0]) == pytest.approx(0.4)
    # weights flip the decision
    assert best_accuracy_threshold([0, 1], [0.3, 0.6], sample_weight=[1, 5]) == pytest.approx(0.45)


# ---------------------------------------------------------------------------- properties
@PROPERTY
@given(binary_data(both_classes=True))
def test_auc_is_brute_force_pair_count(data):
    y, p = data
    pos, neg = p[y == 1], p[y == 0]
    diff = pos[:, None] - neg[None, :]
    brute = ((diff > 0) + 0.5 * (diff == 0)).mean()
    assert roc_auc_score(y, p) == pytest.approx(brute, abs=1e-12)


@PROPERTY
@given(binary_data(both_classes=True), st.sampled_from([">=", ">"]))
def test_best_threshold_is_optimal(data, rule):
    y, p = data
    t = best_accuracy_threshold(y, p, threshold_rule=rule)
    candidates = np.unique(np.concatenate([[0.0, 1.0], p, (p[:, None] + p[None, :]).ravel() / 2, (p + 1) / 2]))
    decide = np.greater_equal if rule == ">=" else np.greater
    brute = (decide(p[None, :], candidates[:, None]) == (y[None, :] == 1)).mean(axis=1).max()
    assert accuracy_score(y, p, threshold=t, threshold_rule=rule) == pytest.approx(brute, abs=1e-12)


@PROPERTY
@given(binary_data(both_classes=True), st.randoms(use_true_random=False))
def test_permutation_invariance(data, rnd):
    y, p = data
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    for metric in [*THRESHOLDED, roc_auc_score, best_accuracy_threshold, selective_accuracy_score]:
        assert metric(y[perm], p[perm]) == pytest.approx(metric(y, p), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # precision without a positive prediction
        for metric in NEW_RATES:
            assert metric(y[perm], p[perm]) == pytest.approx(metric(y, p), abs=1e-12, nan_ok=True)


@PROPERTY
@given(binary_data(both_classes=True).flatmap(lambda d: st.tuples(st.just(d), int_weights(len(d[0])))))
def test_integer_weights_equal_row_repetition(args):
    (y, p), w = args
    yr, pr = np.repeat(y, w), np.repeat(p, w)
    if len(np.unique(yr)) < 2:  # weights may remove a class; covered by the warning tests
        return
    for metric in [*THRESHOLDED, roc_auc_score, best_accuracy_threshold, selective_accuracy_score]:
        assert metric(y, p, sample_weight=w) == pytest.approx(metric(yr, pr), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # precision without a positive prediction
        for metric in NEW_RATES:
            assert metric(y, p, sample_weight=w) == pytest.approx(metric(yr, pr), abs=1e-12, nan_ok=True)
        assert metric(y, p, sample_weight=np.ones(len(y))) == pytest.approx(metric(y, p), abs=1e-12)
