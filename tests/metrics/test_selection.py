"""Top-k selection, allocation gaps, NDCG of model rankings, RMS bias, predictive validity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from folkscope.errors import ConfigError, UndefinedMetricWarning
from folkscope.metrics import (
    allocation_gaps,
    model_ranking_ndcg_score,
    predictive_validity,
    root_mean_square_bias,
    simulate_top_k_allocation,
    top_k_selection,
)

from .strategies import PROPERTY


def test_top_k_fractional_ties_by_hand():
    assert top_k_selection([0.9, 0.5, 0.5, 0.1], [0, 0, 0, 0], k=2).tolist() == [1.0, 0.5, 0.5, 0.0]
    sel = top_k_selection([3, 1, 2, 5, 5, 5], ["p", "p", "p", "q", "q", "q"], k=1)
    assert sel.tolist() == pytest.approx([1, 0, 0, 1 / 3, 1 / 3, 1 / 3])
    # quota larger than the pool selects everyone
    assert top_k_selection([1.0, 2.0], [0, 0], k=5).tolist() == [1.0, 1.0]


def test_top_k_random_tie_break_is_seeded_and_whole():
    s, pools = [0.5, 0.5, 0.5, 0.1], [0, 0, 0, 0]
    a = top_k_selection(s, pools, k=2, tie_break="random", random_state=3)
    b = top_k_selection(s, pools, k=2, tie_break="random", random_state=3)
    assert a.tolist() == b.tolist() and a.sum() == 2 and a[3] == 0
    mean = np.mean([top_k_selection(s, pools, k=2, tie_break="random", random_state=i) for i in range(300)], axis=0)
    assert mean[:3] == pytest.approx([2 / 3] * 3, abs=0.08)


@PROPERTY
@given(
    hnp.arrays(np.float64, st.integers(1, 25), elements=st.sampled_from([0.0, 1.0, 2.0, 3.0])),
    st.integers(1, 6),
    st.integers(1, 4),
)
def test_top_k_fills_exactly_the_quota(scores, k, n_pools):
    pools = np.arange(len(scores)) % n_pools
    sel = top_k_selection(scores, pools, k=k)
    for pool in np.unique(pools):
        m = pools == pool
        assert sel[m].sum() == pytest.approx(min(k, m.sum()))
        # a selected candidate never has a lower score than an unselected one
        assert scores[m][sel[m] > 0].min() >= scores[m][sel[m] < 1].max(initial=-np.inf)


def test_allocation_gaps_by_hand():
    res = allocation_gaps([1, 0, 1, 1], ["a", "a", "b", "b"], reference="b", qualified=[1, 1, 0, 1])
    assert res.loc["a", "selection_rate"] == 0.5 and res.loc["b", "selection_rate"] == 1.0
    assert res["dp_gap"].tolist() == [-0.5, 0.0]
    # qualified: a -> both, 1 selected ; b -> only the last, selected
    assert res["qualified_selection_rate"].tolist() == [0.5, 1.0]
    assert res["eo_gap"].tolist() == [-0.5, 0.0]
    with pytest.warns(UndefinedMetricWarning, match=r"\['a'\] have no qualified"):
        res = allocation_gaps([1, 0, 1], ["a", "a", "b"], reference="b", qualified=[0, 0, 1])
    assert np.isnan(res.loc["a", "eo_gap"])
    with pytest.raises(ConfigError) as info:
        allocation_gaps([1, 0], ["a", "b"], reference="White Male")
    assert info.value.parameter == "reference"


def test_simulation_one_candidate_per_group():
    # group a always outscores b: with k = 1 it wins every round
    res = simulate_top_k_allocation(
        [0.9, 0.8, 0.2, 0.1], ["a", "a", "b", "b"], k=1, reference="b", n_rounds=200, random_state=0
    )
    assert res.loc["a", "dp_gap"] == 1.0 and res.loc["a", "n"] == 200
    # k = 2 of 2 groups selects everyone: no gap
    res = simulate_top_k_allocation(
        [0.9, 0.8, 0.2, 0.1], ["a", "a", "b", "b"], k=2, reference="b", n_rounds=50, random_state=0
    )
    assert res["dp_gap"].tolist() == [0.0, 0.0]


def test_simulation_random_pools():
    s = [4.0, 3.0, 2.0, 1.0]
    g = ["a", "b", "a", "b"]
    # the pool is everyone: a gets rank 1 and 3, b ranks 2 and 4 -> top 2 is one of each
    res = simulate_top_k_allocation(
        s, g, k=2, reference="b", pool_size=4, n_rounds=10, qualified=[1, 1, 1, 0], random_state=0
    )
    assert res["selection_rate"].tolist() == [0.5, 0.5]
    assert res.loc["a", "eo_gap"] == pytest.approx(0.5 - 1.0)
    # seeded: same result twice, also on the large-population path
    rng = np.random.default_rng(0)
    big = rng.random(20_000)
    groups = np.where(rng.random(20_000) < 0.5, "x", "y")
    a = simulate_top_k_allocation(big, groups, k=2, reference="y", pool_size=10, n_rounds=1000, random_state=5)
    b = simulate_top_k_allocation(big, groups, k=2, reference="y", pool_size=10, n_rounds=1000, random_state=5)
    assert a.equals(b)
    assert a["selection_rate"].to_numpy() == pytest.approx([0.2, 0.2], abs=0.02)


def test_ndcg_by_hand():
    ref = [0.1, 0.2, 0.3]  # ideal order m1 m2 m3, relevance 3 2 1
    ideal = 3 + 2 / np.log2(3) + 1 / 2
    assert model_ranking_ndcg_score(ref, ref) == pytest.approx(1.0)
    # reversed ranking m3 m2 m1: 1/log2(2) + 2/log2(3) + 3/log2(4)
    assert model_ranking_ndcg_score(ref, [0.3, 0.2, 0.1]) == pytest.approx((1 + 2 / np.log2(3) + 3 / 2) / ideal)
    assert model_ranking_ndcg_score(ref, [0.3, 0.2, 0.1], n=1) == pytest.approx(1 / 3)
    # all tied in the metric: every model gets the mean discount
    mean_disc = (1 + 1 / np.log2(3) + 1 / 2) / 3
    assert model_ranking_ndcg_score(ref, [0.5, 0.5, 0.5]) == pytest.approx(6 * mean_disc / ideal)


@PROPERTY
@given(
    hnp.arrays(np.float64, st.integers(2, 8), elements=st.sampled_from([0.0, 0.1, 0.2, 0.4])),
    st.randoms(use_true_random=False),
)
def test_ndcg_bounds_and_order_invariance(values, rnd):
    other = np.array(rnd.sample(list(values), len(values)))
    score = model_ranking_ndcg_score(values, other)
    assert 0 < score <= 1 + 1e-12
    perm = np.array(rnd.sample(range(len(values)), len(values)))
    assert model_ranking_ndcg_score(values[perm], other[perm]) == pytest.approx(score)


def test_rms_bias():
    assert root_mean_square_bias([0.3, -0.4]) == pytest.approx(np.sqrt((0.09 + 0.16) / 2))
    with pytest.raises(ValueError, match="finite"):
        root_mean_square_bias([0.3, np.nan])


def test_predictive_validity():
    x = [0.1, 0.5, -0.2, 0.3]
    gap = [0.05, 0.3, -0.1, 0.1]
    res = predictive_validity(x, gap)
    ref = stats.pearsonr(x, gap)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert predictive_validity(x, gap, absolute_gap=True).statistic == pytest.approx(
        stats.pearsonr(x, np.abs(gap)).statistic
    )
    with pytest.warns(UndefinedMetricWarning, match="constant"):
        assert np.isnan(predictive_validity([1, 1, 1], [1, 2, 3]).statistic)


def test_impact_ratio_by_hand():
    from folkscope.metrics import impact_ratio

    assert impact_ratio([0.1, 0.4, 0.2]).tolist() == [0.25, 1.0, 0.5]  # 0.25 and 0.5 fail the four-fifths rule
    assert impact_ratio([0.3, 0.3]).tolist() == [1.0, 1.0]
    assert np.isnan(impact_ratio([0.0, 0.0])).all()  # nobody selected: no ratio
