"""Permutation importance finds the feature a model reads; recalibration is reported beside raw scores."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from folkscope.data import ACSDataset
from folkscope.engine import Engine
from folkscope.engine.backends.fake import FakeBackend
from folkscope.errors import ConfigError
from folkscope.risk import Benchmark, LLMClassifier
from folkscope.risk.importance import permutation_importance


def reads_education(text: str):
    """A fake model whose answer depends only on the education line: degree holders get 'Above'."""
    if not text.endswith("Answer:"):
        return None
    degree = any(d in text for d in ("Bachelor's degree", "Master's degree", "Professional degree", "Doctorate degree"))
    above_is_a = "A. Above" in text
    p_first = 0.8 if degree == above_is_a else 0.2
    return {" A": p_first, "A": 0.0, " B": 1 - p_first, "B": 0.0}


@pytest.fixture(scope="module")
def data():
    return ACSDataset.make_from_task("NISTIncome").subsample(120, seed=1)


def test_importance_is_the_auc_drop_of_the_feature_the_model_reads(data, tmp_path):
    engine = Engine(FakeBackend("edu-reader", next_token_probs=reads_education), cache=None)
    clf = LLMClassifier(engine, "NISTIncome")
    X, y = data.get_test()
    table = permutation_importance(clf, X, y, columns=["EDU", "SEX", "ST"], seed=3)
    assert table.index[0] == "EDU"
    assert table.loc["EDU", "importance"] > 0.05
    assert table.loc["SEX", "importance"] == pytest.approx(0.0) and table.loc["ST", "importance"] == pytest.approx(0.0)
    assert np.allclose(table["baseline_auc"] - table["permuted_auc"], table["importance"])


def test_importance_reruns_are_served_from_the_cache(data, tmp_path):
    engine = Engine(FakeBackend("edu-reader", next_token_probs=reads_education), cache=None)
    X, y = data.get_test()
    from folkscope.engine import ResultCache

    cached = Engine(engine.backend, cache=ResultCache(tmp_path / "cache"))
    clf = LLMClassifier(cached, "NISTIncome")
    first = permutation_importance(clf, X, y, columns=["EDU"], seed=3)
    computed = cached.stats.computed
    again = permutation_importance(clf, X, y, columns=["EDU"], seed=3)
    assert cached.stats.computed == computed and again.equals(first)


def test_importance_bad_input(data):
    clf = LLMClassifier(Engine.from_model("x", backend="fake", use_cache=False), "NISTIncome")
    X, y = data.get_test()
    with pytest.raises(ConfigError, match="both classes"):
        permutation_importance(clf, X, np.zeros(len(X)))
    with pytest.raises(ConfigError, match="cannot permute"):
        permutation_importance(clf, X, y, columns=["NOPE"])
    with pytest.raises(ConfigError, match="n_repeats"):
        permutation_importance(clf, X, y, n_repeats=0)


def test_benchmark_reports_recalibrated_scores_and_importance(data, tmp_path):
    engine = Engine(FakeBackend("edu-reader", next_token_probs=reads_education), cache=None)
    bench = Benchmark.make_benchmark(
        "NISTIncome",
        dataset=data,
        model=engine,
        recalibrate=80,
        feature_importance=True,
        baselines=False,
        n_bootstrap=10,
    )
    metrics = bench.run(tmp_path)
    assert set(metrics["recalibrated"]) == {"model (platt)", "model (isotonic)"}
    # The fake model has two score levels (0.8 with a degree, else 0.2). With two levels, Platt's
    # maximum-likelihood fit and isotonic regression both map each level to its observed rate of
    # positives among the training rows used for the fit.
    X_fit, y_fit = data.subsample(80, seed=bench.config.seed).get_train()
    degree = X_fit["EDU"].isin([9, 10, 11, 12]).to_numpy()
    rate_high, rate_low = y_fit.to_numpy()[degree].mean(), y_fit.to_numpy()[~degree].mean()
    table = pd.read_parquet(bench.run_dir / "scores.parquet")
    high = table["risk_score"] > 0.5
    for name in ("platt", "isotonic"):
        assert np.allclose(table.loc[high, f"recalibrated_{name}"], rate_high, atol=1e-3)
        assert np.allclose(table.loc[~high, f"recalibrated_{name}"], rate_low, atol=1e-3)
    assert next(iter(metrics["feature_importance"])) == "EDU"
    assert (bench.run_dir / "feature_importance.csv").is_file()
    on_disk = json.loads((bench.run_dir / "metrics.json").read_text())
    assert on_disk["recalibrated"].keys() == metrics["recalibrated"].keys()
