"""Supervised baselines on the same split as the language model (paper table 1).

Logistic regression (one-hot categorical codes, standardised numeric columns)
and gradient-boosted trees (LightGBM when installed, else scikit-learn's
histogram GBM with native categorical handling) are fitted on the training
split and scored on the test split, so their metrics sit beside the model's
in the same report.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.data.dataset import Dataset
from folkscope.errors import ConfigError
from folkscope.learners import lightgbm_classifier

__all__ = ["BASELINES", "BaselineResult", "fit_baselines"]

#: the supervised baselines :func:`fit_baselines` can fit, by name (``names=``)
BASELINES = ("logistic_regression", "gradient_boosting")


@dataclass(frozen=True)
class BaselineResult:
    """Test-split risk scores of one fitted baseline."""

    name: str
    scores: np.ndarray
    implementation: str


def _split_columns(dataset: Dataset) -> tuple[list[str], list[str]]:
    task = dataset.task
    categorical = [c for c in task.features if task.column_to_text(c).kind == "categorical"]
    numeric = [c for c in task.features if c not in categorical]
    return categorical, numeric


def _as_float(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns].astype("float64")


def _logistic_regression(dataset: Dataset, max_train: int | None, seed: int) -> BaselineResult:
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    categorical, numeric = _split_columns(dataset)
    X_train, y_train = _train(dataset, max_train, seed)
    X_test, _ = dataset.get_test()
    encode = ColumnTransformer(
        [
            (
                "cat",
                make_pipeline(
                    SimpleImputer(strategy="constant", fill_value=-1), OneHotEncoder(handle_unknown="ignore")
                ),
                categorical,
            ),
            ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
        ]
    )
    model = make_pipeline(encode, LogisticRegression(max_iter=2000))
    cols = categorical + numeric
    model.fit(_as_float(X_train, cols), y_train.to_numpy())
    return BaselineResult("logistic_regression", model.predict_proba(_as_float(X_test, cols))[:, 1], "scikit-learn")


def _gradient_boosting(dataset: Dataset, max_train: int | None, seed: int) -> BaselineResult:
    categorical, numeric = _split_columns(dataset)
    cols = categorical + numeric
    X_train, y_train = _train(dataset, max_train, seed)
    X_test, _ = dataset.get_test()
    try:
        import lightgbm
    except ImportError:
        from sklearn.ensemble import HistGradientBoostingClassifier

        mask = [c in categorical for c in cols]
        # categorical codes above 255 (occupations, birthplaces) exceed the native
        # categorical limit; those stay ordinal, which trees handle well enough
        cat_mask = [m and X_train[c].nunique() <= 255 for m, c in zip(mask, cols)]
        train = _as_float(X_train, cols)
        test = _as_float(X_test, cols)
        for col, is_cat in zip(cols, cat_mask):
            if is_cat:  # native categoricals must be small non-negative integers
                codes = {v: i for i, v in enumerate(sorted(train[col].dropna().unique()))}
                train[col] = train[col].map(codes)
                test[col] = test[col].map(codes)
        model = HistGradientBoostingClassifier(categorical_features=np.array(cat_mask), random_state=seed)
        model.fit(train, y_train.to_numpy())
        return BaselineResult("gradient_boosting", model.predict_proba(test)[:, 1], "scikit-learn HistGradientBoosting")
    train = _as_float(X_train, cols).astype({c: "category" for c in categorical})
    test = _as_float(X_test, cols)
    for col in categorical:  # a code never seen in training becomes missing, as LightGBM expects
        known = train[col].cat.categories
        test[col] = test[col].where(test[col].isin(known)).astype(pd.CategoricalDtype(known))
    # one thread: identical trees on every machine, and no OpenMP spin-waiting when cores are shared
    model = lightgbm_classifier(seed)
    model.fit(train, y_train.to_numpy())
    return BaselineResult("gradient_boosting", model.predict_proba(test)[:, 1], f"lightgbm {lightgbm.__version__}")


def _train(dataset: Dataset, max_train: int | None, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    X, y = dataset.get_train()
    if max_train is not None and len(X) > max_train:
        pick = np.sort(np.random.default_rng(seed).choice(len(X), size=max_train, replace=False))
        X, y = X.iloc[pick], y.iloc[pick]
    if y.nunique() < 2:
        raise ConfigError(
            f"the training split of {dataset.task.name} has a single class; baselines need both labels",
            parameter="baselines",
        )
    return X, y


def fit_baselines(
    dataset: Dataset, *, names: tuple[str, ...] = BASELINES, max_train: int | None = 1_000_000, seed: int = 42
) -> list[BaselineResult]:
    """Fit each baseline on the training split and score the test split.

    Parameters
    ----------
    dataset : Dataset
        Train and test rows of the task (the model's own split).
    names : tuple of str
        Which baselines, from :data:`BASELINES`.
    max_train : int or None
        Cap on training rows (the paper fits on up to 1.0M samples).
    """
    unknown = set(names) - set(BASELINES)
    if unknown:
        raise ConfigError(f"unknown baseline(s) {sorted(unknown)}; choose from {BASELINES}", parameter="baselines")
    fitters = {"logistic_regression": _logistic_regression, "gradient_boosting": _gradient_boosting}
    return [fitters[name](dataset, max_train, seed) for name in names]
