"""Tabular learners every part may use: the gradient-boosted classifier and out-of-fold cross-fitting.

Part 1's supervised baseline and part 3's high-dimensional ground truth fit
the same model, so it is built in one place: LightGBM when installed (one
thread and ``deterministic=True``, so every machine grows identical trees),
else scikit-learn's histogram GBM. :func:`crossfit_probabilities` gives each
row a prediction from a model that never saw it (stratified K folds, survey
weights as sample weights), the paper's out-of-fold truth.

Examples
--------
>>> rng = np.random.default_rng(0)
>>> X = rng.integers(0, 2, size=(400, 2))
>>> y = (rng.random(400) < np.where(X[:, 0] == 1, 0.8, 0.2)).astype(int)
>>> p = crossfit_probabilities(X, y, np.ones(400), seed=0)
>>> bool(p[X[:, 0] == 1].mean() > 0.6 > 0.4 > p[X[:, 0] == 0].mean())
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from folkscope.errors import ConfigError, DataError

__all__ = ["crossfit_probabilities", "fit_gbm", "gbm_classifier", "lightgbm_classifier"]


def lightgbm_classifier(seed: int) -> Any:
    """LightGBM's classifier as folkscope fits it: one thread, deterministic, quiet."""
    import lightgbm

    return lightgbm.LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1, deterministic=True)


def gbm_classifier(seed: int) -> tuple[Any, str]:
    """A gradient-boosted classifier and what it is: LightGBM when installed, else scikit-learn's histogram GBM."""
    try:
        import lightgbm
    except ImportError:
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(random_state=seed), "scikit-learn HistGradientBoosting"
    return lightgbm_classifier(seed), f"lightgbm {lightgbm.__version__}"


def fit_gbm(X: np.ndarray, y: np.ndarray, weights: np.ndarray, *, seed: int = 0) -> Any:
    """A gradient-boosted classifier fitted on categorical codes ``X`` (treated as ordered codes) with sample weights."""
    model, _ = gbm_classifier(seed)
    model.fit(np.asarray(X, dtype=float), np.asarray(y), sample_weight=np.asarray(weights, dtype=float))
    return model


def crossfit_probabilities(
    X: np.ndarray, y: np.ndarray, weights: np.ndarray, *, folds: int = 5, seed: int = 0
) -> np.ndarray:
    """P(y = 1 | x) for every row from a model fitted on the other folds (stratified by y, weighted).

    Raises
    ------
    DataError
        Fewer rows of either class than folds (the folds cannot all hold both).
    """
    from sklearn.model_selection import StratifiedKFold

    X, y, w = np.asarray(X, dtype=float), np.asarray(y).astype(int), np.asarray(weights, dtype=float)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"folds must be an integer >= 2, got {folds!r}", parameter="folds", value=folds)
    counts = np.bincount(y, minlength=2)
    if counts.min() < folds:
        raise DataError(
            f"cross-fitting needs at least {folds} rows of each outcome, got {counts.tolist()}; widen the task"
        )
    out = np.empty(len(y))
    for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y):
        out[test] = fit_gbm(X[train], y[train], w[train], seed=seed).predict_proba(X[test])[:, 1]
    return out
