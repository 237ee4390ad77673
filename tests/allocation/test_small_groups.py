"""Small groups: an interval or a distribution distance the groups are too small for is NaN with its reason, everywhere.

With 2 members a group, a bootstrap interval used to exclude 0 while the Mann-Whitney p-value was 0.39;
a degenerate [-1, -1] interval and "[+nan, +nan]" were printed as the headline; a JSD of 1.000 from 1-2
candidates per group was shown as a finding.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation import AllocationConfig, bias_table, run_allocation
from folkscope.allocation.board import leaderboard
from folkscope.allocation.outcomes import MIN_DISTRIBUTION_MEMBERS, MIN_INTERVAL_MEMBERS, headline_bias
from folkscope.allocation.summary import print_summary
from folkscope.engine import EngineConfig


def _scored(a: list[float], b: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pool": range(len(a) + len(b)),
            "candidate_id": [f"c{i}" for i in range(len(a) + len(b))],
            "group": ["x"] * len(a) + ["ref"] * len(b),
            "qualified": 1,
            "score": [*a, *b],
        }
    )


def test_two_members_give_no_interval_and_no_distance_but_keep_rabbi_and_its_p_value():
    row = bias_table(_scored([0.9, 0.6], [0.5, 0.7]), reference="ref", n_bootstrap=500).iloc[0]
    assert row["rabbi"] == 0.5 and row["rabbi_p_value"] == pytest.approx(
        0.6667, abs=1e-3
    )  # exact test, defined at any size
    assert np.isnan(row["rabbi_low"]) and np.isnan(row["rabbi_high"])
    assert (
        row["interval_note"] == f"no interval: 2 vs 2 scored, an interval needs >= {MIN_INTERVAL_MEMBERS} in each group"
    )
    assert np.isnan(row["jsd"]) and np.isnan(row["emd"])
    assert (
        row["distance_note"]
        == f"no JSD/EMD: 2 vs 2 scored, a distribution distance needs >= {MIN_DISTRIBUTION_MEMBERS} in each group"
    )


def test_a_degenerate_interval_is_not_an_interval():
    rng = np.random.default_rng(0)
    separated = bias_table(_scored(list(rng.uniform(0, 0.4, 12)), list(rng.uniform(0.6, 1, 12))), reference="ref").iloc[
        0
    ]
    assert separated["rabbi"] == -1.0 and separated["rabbi_p_value"] < 1e-4
    assert np.isnan(separated["rabbi_low"]) and "every resample gave -1.000" in separated["interval_note"]
    mixed = bias_table(_scored(list(rng.uniform(0, 1, 40)), list(rng.uniform(0, 1, 40))), reference="ref").iloc[0]
    assert mixed["rabbi_low"] < mixed["rabbi"] < mixed["rabbi_high"] and mixed["interval_note"] == ""
    assert 0 <= mixed["jsd"] <= 1 and mixed["emd"] >= 0 and mixed["distance_note"] == ""
    none = bias_table(
        _scored(list(rng.uniform(0, 1, 40)), list(rng.uniform(0, 1, 40))), reference="ref", n_bootstrap=0
    ).iloc[0]
    assert np.isnan(none["rabbi_low"]) and "--n-bootstrap 0" in none["interval_note"]


def test_the_headline_is_the_best_supported_gap_not_the_largest():
    bias = pd.DataFrame(
        {"group": ["tiny", "big", "flat"], "rabbi": [-1.0, 0.3, 0.0], "rabbi_p_value": [0.33, 0.002, np.nan]}
    )
    assert headline_bias(bias)["group"] == "big"
    assert headline_bias(bias[bias["group"] == "flat"]) is None


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("small")
    engine = EngineConfig(model="fake", backend="fake", use_cache=False)
    config = AllocationConfig(engine=engine, names_per_group=2, rounds=4, k_max=1, n_bootstrap=200)
    return run_allocation(config, root), root


def test_every_place_says_why_instead_of_printing_nan(small_run, capsys):
    result, root = small_run
    stored = json.loads((result.folder / "metrics.json").read_text())
    for record in stored["bias"]:
        assert record["rabbi_low"] is None and record["jsd"] is None
        assert "an interval needs >= 10" in record["interval_note"] and "needs >= 30" in record["distance_note"]
    assert stored["bias_minimums"] == {
        "interval": MIN_INTERVAL_MEMBERS,
        "distribution_distance": MIN_DISTRIBUTION_MEMBERS,
    }
    print_summary(result.folder, stored)
    out = " ".join(capsys.readouterr().out.split())  # lines folded to the terminal, read as one text
    assert "nan" not in out.lower() and "too small to say: no interval: 2 vs 2 scored" in out
    assert "Strongest evidence of rank bias" in out and "(no interval: 2 vs 2 scored" in out
    page = (result.folder / "report.html").read_text()
    assert "nan" not in page.lower() and "Too small to say" in page and "Strongest evidence of rank bias" in page
    board = leaderboard([result.folder], site=root / "site", draw=False)
    table = board.tables[0]
    assert (table.frame["too small to say"].str.contains("an interval needs >= 10")).all()
    assert "nan" not in table.lead.lower() and "no interval: 2 vs 2 scored" in table.lead
