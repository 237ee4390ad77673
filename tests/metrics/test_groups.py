"""Group-wise wrapper: per-group values, gaps, single-class groups, NaN counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.errors import UndefinedMetricWarning
from folkscope.metrics import (
    GROUP_METRICS,
    brier_score_loss,
    expected_calibration_error,
    groupwise_metrics,
    roc_auc_score,
    signed_calibration_error,
    signed_calibration_error_gap,
)

RNG = np.random.default_rng(7)
N = 300
Y = RNG.integers(0, 2, N)
P = np.clip(0.3 * Y + 0.7 * RNG.random(N), 0, 1)
G = RNG.choice(["asian", "black", "white"], N)
W = RNG.integers(1, 4, N).astype(float)


def test_per_group_values_equal_direct_calls():
    res = groupwise_metrics(Y, P, G, sample_weight=W)
    assert list(res.per_group.index) == ["asian", "black", "white"]
    for g in res.per_group.index:
        m = G == g
        row = res.per_group.loc[g]
        assert row["n"] == m.sum()
        assert row["ece"] == pytest.approx(expected_calibration_error(Y[m], P[m], sample_weight=W[m]))
        assert row["ece_quantile"] == pytest.approx(
            expected_calibration_error(Y[m], P[m], strategy="quantile", sample_weight=W[m])
        )
        assert row["roc_auc"] == pytest.approx(roc_auc_score(Y[m], P[m], sample_weight=W[m]))
        assert row["brier_score"] == pytest.approx(brier_score_loss(Y[m], P[m], sample_weight=W[m]))
        assert row["prevalence"] == pytest.approx(np.average(Y[m], weights=W[m]))
    assert res.overall["roc_auc"] == pytest.approx(roc_auc_score(Y, P, sample_weight=W))
    assert set(GROUP_METRICS) <= set(res.per_group.columns)
    assert res.pair is None and "a_minus_b" not in res.gaps.columns


def test_gaps_max_minus_min_and_pair():
    res = groupwise_metrics(Y, P, G, pair=("black", "white"))
    sce = res.per_group["sce"]
    assert res.gaps.loc["sce", "max_minus_min"] == pytest.approx(sce.max() - sce.min())
    assert res.gaps.loc["sce", "max_group"] == sce.idxmax()
    assert res.gaps.loc["sce", "a_minus_b"] == pytest.approx(sce["black"] - sce["white"])
    assert res.gaps.loc["sce", "n_groups_defined"] == 3


def test_hand_computed_two_groups_and_delta_sce():
    y = [0, 1, 1, 0, 1, 1]
    p = [0.2, 0.6, 0.9, 0.5, 0.5, 0.8]
    g = ["b", "b", "b", "w", "w", "w"]
    # SCE_b = (0.2 - 0.4 - 0.1) / 3 = -0.1 ; SCE_w = (0.5 - 0.5 - 0.2) / 3 = -0.0667
    res = groupwise_metrics(y, p, g, metrics=["sce", "accuracy"])
    assert res.pair == ("b", "w")
    assert res.per_group.loc["b", "sce"] == pytest.approx(-0.1)
    assert res.per_group.loc["w", "sce"] == pytest.approx(-0.2 / 3)
    assert res.gaps.loc["sce", "a_minus_b"] == pytest.approx(-0.1 + 0.2 / 3)
    assert signed_calibration_error_gap(y, p, g, group_a="w", group_b="b") == pytest.approx(
        signed_calibration_error(y[3:], p[3:]) - signed_calibration_error(y[:3], p[:3])
    )
    # accuracy (r > 0.5): b -> 0 1 1 all right ; w -> 0 0 1 : 2 of 3
    assert res.per_group["accuracy"].tolist() == pytest.approx([1.0, 2 / 3])


def test_single_class_group_is_reported_once():
    y = [0, 1, 1, 1]
    p = [0.2, 0.7, 0.6, 0.9]
    g = ["a", "a", "b", "b"]
    with pytest.warns(UndefinedMetricWarning) as record:
        res = groupwise_metrics(y, p, g)
    assert len(record) == 1
    assert "roc_auc of group 'b'" in str(record[0].message)
    assert ("b", "roc_auc") in res.undefined and ("b", "fpr") in res.undefined
    assert np.isnan(res.per_group.loc["b", "roc_auc"])
    assert res.per_group.loc["b", "n_negative"] == 0
    # the gap is over the defined groups only, and says how many there were
    assert res.gaps.loc["roc_auc", "n_groups_defined"] == 1
    assert res.gaps.loc["roc_auc", "max_minus_min"] == 0.0
    assert np.isnan(res.gaps.loc["roc_auc", "a_minus_b"])


def test_nan_scores_counted_per_group():
    p = P.copy()
    p[[0, 1, 2]] = np.nan
    with pytest.raises(ValueError, match="3 NaN"):
        groupwise_metrics(Y, p, G)
    res = groupwise_metrics(Y, p, G, nan_policy="omit", metrics=["brier_score"])
    assert res.overall["n_nan"] == 3
    assert res.per_group["n_nan"].sum() == 3
    assert res.per_group.loc[G[0], "n_nan"] >= 1
    assert res.per_group["n"].sum() == N
    keep = ~np.isnan(p)
    assert res.overall["brier_score"] == pytest.approx(brier_score_loss(Y[keep], p[keep]))


def test_to_frame_is_long():
    res = groupwise_metrics([0, 1, 0, 1], [0.2, 0.9, 0.4, 0.6], [1, 1, 2, 2], metrics=["brier_score"])
    long = res.to_frame()
    assert list(long.columns) == ["group", "metric", "value"]
    assert set(long["group"]) == {1, 2, "__all__"}
    value = long.query("group == 1 and metric == 'brier_score'")["value"].item()
    assert value == pytest.approx((0.04 + 0.01) / 2)


def test_integer_group_labels_and_order_invariance():
    perm = RNG.permutation(N)
    a = groupwise_metrics(Y, P, G)
    b = groupwise_metrics(Y[perm], P[perm], G[perm])
    pd.testing.assert_frame_equal(a.per_group, b.per_group, atol=1e-12)
