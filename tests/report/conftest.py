"""One small scored table, its plots and its metrics, shared by the report tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from folkscope.risk.evaluate import evaluate_baselines, evaluate_scores
from folkscope.risk.plots import make_all_plots

EVIL = "<script>alert(1)</script>"
GROUP_LABELS = {"RAC1P": {1: "White", 2: "Black", 6: "<b>Asian</b> $x$"}, "SEX": {1: "Male", 2: "Female"}}


@pytest.fixture(scope="session")
def scores() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 240
    p = rng.beta(2, 3, n)
    frame = pd.DataFrame(
        {
            "label": (rng.random(n) < p).astype(int),
            "risk_score": p,
            "weight": rng.integers(1, 50, n).astype(float),
            "RAC1P": rng.choice([1, 2, 6], n),
            "SEX": rng.choice([1, 2], n),
        }
    )
    frame.loc[:2, "risk_score"] = np.nan
    return frame


@pytest.fixture(scope="session")
def baseline_scores(scores: pd.DataFrame) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    return {"logistic_regression": rng.random(len(scores)), EVIL: rng.random(len(scores))}


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory: pytest.TempPathFactory, scores, baseline_scores) -> tuple[Path, dict[str, str]]:
    """A run folder with every plot drawn once (matplotlib is the slow part)."""
    run = tmp_path_factory.mktemp("run")
    plots = make_all_plots(scores, run / "plots", baselines=baseline_scores, group_labels=GROUP_LABELS, model_name=EVIL)
    return run, plots


@pytest.fixture(scope="session")
def model_metrics(scores):
    return evaluate_scores(scores, group_labels=GROUP_LABELS, n_bootstrap=50)


@pytest.fixture(scope="session")
def baseline_metrics(scores, baseline_scores):
    return evaluate_baselines(scores, baseline_scores, group_labels=GROUP_LABELS, n_bootstrap=50)
