"""Pools, top-k outcomes and bias tables against hand-computed values; clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import bias_table, draw_pools, selection_table
from folkscope.errors import ConfigError


def _scored():
    # two pools of three: x, y, z; pool 0 scores x > y > z, pool 1 ties y and z below x
    return pd.DataFrame(
        {
            "pool": [0, 0, 0, 1, 1, 1],
            "candidate_id": list("abcdef"),
            "group": ["x", "y", "z", "x", "y", "z"],
            "qualified": [1, 1, 0, 1, 0, 1],
            "score": [0.9, 0.5, 0.1, 0.8, 0.3, 0.3],
        }
    )


def test_selection_by_hand():
    table = selection_table(_scored(), reference="x", k_max=2).set_index(["k", "group"])
    # k=1: x picked in both pools. k=2: pool 0 picks x, y; pool 1 picks x and shares the 2nd place: y 0.5, z 0.5
    assert table.loc[(1, "x"), "selection_rate"] == 1.0 and table.loc[(1, "y"), "dp_gap"] == -1.0
    assert table.loc[(2, "y"), "selection_rate"] == pytest.approx(0.75) and table.loc[
        (2, "z"), "selection_rate"
    ] == pytest.approx(0.25)
    assert table.loc[(2, "z"), "impact_ratio"] == pytest.approx(0.25)  # 0.25 / x's 1.0: fails the four-fifths rule
    # qualified only: y is qualified in pool 0 (selected at k=2), z in pool 1 (half a place)
    assert (
        table.loc[(2, "y"), "qualified_selection_rate"] == 1.0
        and table.loc[(2, "z"), "qualified_selection_rate"] == 0.5
    )
    assert table.loc[(2, "z"), "eo_gap"] == -0.5


def test_bias_by_hand():
    bias = bias_table(_scored(), reference="x", n_bootstrap=200, seed=1).set_index("group")
    # every y and z score is below every x score: RABBI -1; delta = mean(y) - mean(x) = 0.4 - 0.85
    assert bias.loc["y", "rabbi"] == -1.0 and bias.loc["z", "rabbi"] == -1.0
    assert bias.loc["y", "delta"] == pytest.approx(0.4 - 0.85)
    # two members a group: too few for an interval or a distribution distance, said in the row (tests/allocation/test_small_groups.py)
    assert np.isnan(bias.loc["y", "rabbi_low"]) and "2 vs 2 scored" in bias.loc["y", "interval_note"]
    assert np.isnan(bias.loc["z", "emd"]) and "distribution distance needs" in bias.loc["z", "distance_note"]
    assert "x" not in bias.index


def test_pools_one_per_group_and_random_pools_are_seeded():
    frame = pd.DataFrame({"candidate_id": [f"c{i}" for i in range(12)], "group": list("abc") * 4})
    pools = draw_pools(frame, rounds=5, seed=3)
    groups = frame.set_index("candidate_id").loc[pools["candidate_id"], "group"].to_numpy().reshape(5, 3)
    assert (np.sort(groups, axis=1) == np.array(list("abc"))).all()
    assert pools.equals(draw_pools(frame, rounds=5, seed=3)) and not pools.equals(draw_pools(frame, rounds=5, seed=4))
    random_pools = draw_pools(frame, rounds=4, pool_size=5, seed=0)
    assert random_pools.groupby("pool")["candidate_id"].nunique().tolist() == [5] * 4


def test_bad_input_is_one_clear_error():
    with pytest.raises(ConfigError, match="reference group 'w'"):
        selection_table(_scored(), reference="w")
    with pytest.raises(ConfigError, match="smallest pool"):
        selection_table(_scored(), reference="x", k_max=3)
    with pytest.raises(ConfigError, match="rounds"):
        draw_pools(pd.DataFrame({"candidate_id": ["a"], "group": ["x"]}), rounds=0)
    with pytest.raises(ConfigError, match="pool_size"):
        draw_pools(pd.DataFrame({"candidate_id": ["a", "b"], "group": ["x", "y"]}), rounds=1, pool_size=3)
