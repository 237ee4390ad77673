"""High-dimensional tasks: cross-fitted truth per person, references by hand, task-file checks, a run end to end."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pandas as pd
import pytest

import folkscope.learners as learners
from folkscope.engine import Engine, EngineConfig
from folkscope.engine.backends.fake import FakeBackend
from folkscope.epidemiology import EpidemiologyConfig, get_task, load_dataset, load_task_file, rescore, run_epidemiology
from folkscope.epidemiology.truth import HighTruth, high_references, high_truth
from folkscope.errors import DataError
from folkscope.runs import read_table


def test_learners_doctests_and_out_of_fold_predictions():
    assert doctest.testmod(learners).failed == 0
    from sklearn.model_selection import StratifiedKFold

    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(300, 2))
    y = (rng.random(300) < 0.2 + 0.2 * X[:, 0]).astype(int)
    w = rng.uniform(0.5, 2.0, 300)
    p = learners.crossfit_probabilities(X, y, w, folds=5, seed=3)
    manual = np.empty(300)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=3).split(
        X, y
    ):  # each row from a model that never saw it
        manual[test] = learners.fit_gbm(X[train], y[train], w[train], seed=3).predict_proba(X[test].astype(float))[:, 1]
    np.testing.assert_allclose(p, manual)
    with pytest.raises(DataError, match="at least 5 rows of each outcome"):
        learners.crossfit_probabilities(X[:10], np.r_[np.ones(3), np.zeros(7)].astype(int), np.ones(10))


def test_cross_fitted_truth_recovers_the_weighted_cell_shares():
    task = get_task("acs_income_by_sex_age_education")
    data = load_dataset("nist-acs")
    truth = high_truth(task, data)
    assert (
        task.dimension == "high"
        and len(truth.cell_texts) == 40
        and truth.cell_texts[0].startswith("a man aged 25 to 34 with")
    )
    rows = task.rows(data)
    codes, cell, _ = task.cells(rows)
    rows = rows[cell >= 0]
    rich = (rows["PINCP"] >= 50000).to_numpy()
    w = rows["PWGTP"].to_numpy(dtype=float)
    big = np.bincount(truth.cell) >= 300
    shares = np.bincount(truth.cell, weights=w * rich) / np.bincount(truth.cell, weights=w)
    means = np.bincount(truth.cell, weights=truth.weights * truth.p) / np.bincount(truth.cell, weights=truth.weights)
    assert (
        np.abs(means - shares)[big].max() < 0.03
    )  # the boosted model on the cell codes recovers each big cell's share


def test_references_by_hand():
    p = np.array([0.9, 0.8, 0.7, 0.2])
    truth = HighTruth(
        p=p,
        weights=np.ones(4),
        cell=np.array([0, 0, 1, 1]),
        cell_texts=["a", "b"],
        codes=np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 1),
        y=np.array([1, 1, 1, 0]),
    )
    assert truth.distance(np.full(4, 0.5)) == pytest.approx(2 * np.mean(np.abs(p - 0.5)))
    many = HighTruth(
        p=np.tile(p, 25),
        weights=np.ones(100),
        cell=np.tile([0, 0, 1, 1], 25),
        cell_texts=["a", "b"],
        codes=np.tile([[0, 0], [0, 1], [1, 0], [1, 1]], (25, 1)),
        y=np.tile([1, 1, 1, 0], 25),
    )
    refs = high_references(many, refits=4, seed=0)
    # uniform: 2 * mean |p - 0.5| = 0.6; the 0/1 guess (mean 0.65 > 0.5, so everyone 1): 2 * mean |p - 1| = 0.7; worst is the smaller
    assert refs.worst == pytest.approx(0.6)
    assert refs.mean_baseline == pytest.approx(2 * np.mean(np.abs(p - p.mean())))
    assert 0 <= refs.best < refs.worst


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"conditions": [{"column": "SEX", "levels": [{"value": 1, "text": "a man"}]}], "person": "{SEX}"},
            "2 to 5 conditioning",
        ),
        ({"person": "{SEX} aged {AGE}"}, "each condition once"),
        (
            {
                "outcome": {
                    "column": "EDU",
                    "levels": [{"value": 1, "text": "x"}, {"value": 2, "text": "y"}, {"value": 3, "text": "z"}],
                }
            },
            "binary outcome",
        ),
        ({"condition": {"column": "SEX", "levels": [{"value": 1, "text": "a man"}]}}, "not both"),
    ],
)
def test_bad_high_dimensional_task_files(tmp_path, change, message):
    task = {
        "name": "t",
        "outcome": {"column": "PINCP", "levels": [{"max": 50000, "text": "low"}, {"min": 50000, "text": "high"}]},
        "conditions": [
            {"column": "SEX", "levels": [{"value": 1, "text": "a man"}, {"value": 2, "text": "a woman"}]},
            {"column": "AGEP", "levels": [{"min": 18, "text": "18 or over"}]},
        ],
        "person": "{SEX} aged {AGEP}",
        "qa": "Income of {condition}?",
        "likelihood": "P({condition} has {outcome})?",
        **change,
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"dataset": "nist-acs", "weights": "PWGTP", "tasks": [task]}))
    with pytest.raises(DataError, match=message):
        load_task_file(path)


def test_a_high_dimensional_run_scores_persons_and_rescores(tmp_path):
    config = EpidemiologyConfig(
        tasks=("acs_walking_difficulty_by_sex_age",),
        engine=EngineConfig(model="m", backend="fake"),
        n_resamples=30,
        refits=3,
    )
    result = run_epidemiology(config, tmp_path, engine=Engine(FakeBackend(), cache=None))
    persons = read_table(result.folder, "persons")
    model = read_table(result.folder, "model")
    assert persons["condition"].nunique() == 8 and len(model) == 16  # 2 sexes x 4 ages, two answers each
    row = pd.DataFrame(result.metrics["scores"]).iloc[0]
    second = model[model["level"] == "has serious difficulty walking or climbing stairs"].set_index("condition")[
        "p_model"
    ]
    by_hand = np.average(
        2 * np.abs(persons["p_true"] - second.loc[persons["condition"]].to_numpy()), weights=persons["weight"]
    )
    assert row["dimension"] == "high" and row["distance"] == pytest.approx(by_hand) and 0 <= row["score"] <= 100
    assert rescore(result.folder)["scores"] == result.metrics["scores"]
