"""The study's model selection is the paper's NDCG@N (section 5.2), by hand on fixed points: models ranked by the RMS
of a metric over groups, relevance their reverse rank in the ideal ranking by the RMS of the gap, averaged over
subtasks; and table 1 keeps the modes apart."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from folkscope.allocation.study import _correlations, _selection, _table1


def _points() -> pd.DataFrame:
    rows = []
    # subtask s1: gaps rank A < B < C, RABBI ranks them backwards; s2: RABBI agrees with the gaps
    for subtask, rabbi in (("s1", {"A": 0.3, "B": 0.2, "C": 0.1}), ("s2", {"A": 0.1, "B": 0.2, "C": 0.3})):
        for model, gap in (("A", 0.1), ("B", 0.2), ("C", 0.3)):
            for group, sign in (("g1", 1.0), ("g2", -1.0)):  # RMS over groups ignores the sign
                rows.append(
                    {
                        "run": f"{model}-{subtask}",
                        "model": model,
                        "subtask": subtask,
                        "mode": "pointwise",
                        "group": group,
                        "k": 1,
                        "dp_gap": sign * gap,
                        "eo_gap": sign * gap,
                        "rabbi": sign * rabbi[model],
                        "rabbi_qualified": sign * rabbi[model],
                        "delta": sign * gap,
                        "delta_qualified": sign * gap,
                        "jsd": np.nan,
                        "jsd_qualified": np.nan,
                        "emd": np.nan,
                        "emd_qualified": np.nan,
                    }
                )
    points = pd.DataFrame(rows)
    return pd.concat([points, points.assign(mode="pairwise", rabbi=-points["rabbi"])], ignore_index=True)


def test_ndcg_at_n_is_the_papers_mean_over_subtasks_by_hand():
    table = _selection(_points()).set_index(["mode", "metric", "gap", "n"]).sort_index()["ndcg"]
    ideal = 3 + 2 / np.log2(3) + 1 / 2  # relevance 3, 2, 1 (reverse ideal rank), discount log2(i + 1)
    backwards = {1: 1 / 3, 2: (1 + 2 / np.log2(3)) / (3 + 2 / np.log2(3)), 3: (1 + 2 / np.log2(3) + 3 / 2) / ideal}
    for n, s1 in backwards.items():
        assert table[("pointwise", "rabbi", "dp_gap", n)] == pytest.approx((s1 + 1.0) / 2)  # s2 is perfect
        assert table[("pointwise", "delta", "dp_gap", n)] == pytest.approx(1.0)  # delta is the gap here
    assert sorted(table.loc[("pointwise", "rabbi", "dp_gap")].index) == [1, 2, 3]


def test_table1_keeps_pointwise_and_pairwise_apart():
    points = _points()
    table = _table1(_correlations(points)).set_index(["k", "mode", "metric"])
    # the pairwise rows negate RABBI: pooled, the two modes would cancel; apart, each has its own sign
    assert table.loc[(1, "pointwise", "rabbi"), "r_dp_gap"] == pytest.approx(
        np.corrcoef(
            points.loc[points["mode"] == "pointwise", "rabbi"], points.loc[points["mode"] == "pointwise", "dp_gap"]
        )[0, 1]
    )
    assert table.loc[(1, "pairwise", "rabbi"), "r_dp_gap"] == pytest.approx(
        -table.loc[(1, "pointwise", "rabbi"), "r_dp_gap"]
    )
    assert table.loc[(1, "pointwise", "rabbi"), "n_dp_gap"] == 12
