"""Supervised baselines on the model's own split, with LightGBM and with scikit-learn's GBM."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from folkscope.data import ACSDataset
from folkscope.errors import ConfigError
from folkscope.metrics import roc_auc_score
from folkscope.risk.baselines import fit_baselines


@pytest.fixture(scope="module")
def data():
    return ACSDataset.make_from_task("NISTIncome").subsample(0.15, seed=5)


def _check(results, data):
    _, y = data.get_test()
    assert [r.name for r in results] == ["logistic_regression", "gradient_boosting"]
    for r in results:
        assert r.scores.shape == (len(y),) and np.all((r.scores >= 0) & (r.scores <= 1))
        assert roc_auc_score(y.to_numpy(), r.scores) > 0.75  # income is predictable from these features


def test_baselines_with_the_installed_gbm(data):
    _check(fit_baselines(data, seed=1), data)


def test_baselines_fall_back_to_scikit_learn_without_lightgbm(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "lightgbm", None)  # import lightgbm now raises ImportError
    results = fit_baselines(data, seed=1)
    assert results[1].implementation == "scikit-learn HistGradientBoosting"
    _check(results, data)


def test_unknown_baseline_and_training_cap(data):
    with pytest.raises(ConfigError, match="unknown baseline"):
        fit_baselines(data, names=("svm",))
    capped = fit_baselines(data, names=("logistic_regression",), max_train=200)
    assert len(capped) == 1 and capped[0].scores.shape == (len(data.split_ids("test")),)
