"""Which features a language model's risk scores depend on: permutation importance.

The importance of a column is the drop in ROC AUC when that column's values
are shuffled across rows (the other columns untouched), averaged over
``n_repeats`` seeded shuffles. Each permuted table is just another set of
prompts, so every request goes through the engine's result cache: a rerun
(or a run interrupted half-way) costs nothing for what was already scored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError
from folkscope.metrics import roc_auc_score
from folkscope.risk.classifier import LLMClassifier

__all__ = ["permutation_importance"]


def _auc(y: np.ndarray, scores: np.ndarray) -> float:
    keep = ~np.isnan(scores)
    return float(roc_auc_score(y[keep], scores[keep]))


def permutation_importance(
    classifier: LLMClassifier,
    X: pd.DataFrame,
    y: pd.Series | np.ndarray,
    *,
    columns: Sequence[str] | None = None,
    n_repeats: int = 1,
    max_rows: int | None = None,
    seed: int = 42,
) -> pd.DataFrame:
    """Drop in AUC when each feature is permuted.

    Parameters
    ----------
    classifier : LLMClassifier
    X : DataFrame, shape (n_rows, n_features)
        Rows to score (usually the test split or a subsample of it).
    y : array-like of shape (n_rows,)
        Their 0/1 labels (both classes must occur).
    columns : sequence of str, optional
        Features to permute (default: all of ``X``'s columns).
    n_repeats : int, default 1
        Shuffles per column; the table reports their mean and standard deviation.
    max_rows : int, optional
        Use a seeded sample of at most this many rows (each repeat of each
        column scores every kept row once more, so the cost is
        ``rows x (1 + columns x repeats)`` answers).
    seed : int, default 42
        Seed of the shuffles (the same seed reuses the same cached prompts).

    Returns
    -------
    DataFrame indexed by column with ``importance`` (baseline AUC minus mean
    permuted AUC), ``std``, ``baseline_auc`` and ``permuted_auc``, sorted by
    importance, largest first.
    """
    y_arr = np.asarray(y, dtype=int)
    if len(y_arr) != len(X):
        raise ConfigError(f"{len(X)} rows but {len(y_arr)} labels", parameter="y")
    if len(np.unique(y_arr)) < 2:
        raise ConfigError(
            "permutation importance needs rows of both classes (AUC is undefined otherwise)", parameter="y"
        )
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, int) or n_repeats < 1:
        raise ConfigError(
            f"n_repeats must be an integer >= 1, got {n_repeats!r}", parameter="n_repeats", value=n_repeats
        )
    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 2):
        raise ConfigError(
            f"max_rows must be an integer >= 2 or None, got {max_rows!r}", parameter="max_rows", value=max_rows
        )
    rng = np.random.default_rng(seed)
    if max_rows is not None and len(X) > max_rows:
        keep = np.sort(rng.choice(len(X), size=max_rows, replace=False))
        X, y_arr = X.iloc[keep], y_arr[keep]
        if len(np.unique(y_arr)) < 2:
            raise ConfigError(
                f"the {max_rows} sampled rows hold one class only; raise max_rows", parameter="max_rows", value=max_rows
            )
    columns = list(X.columns) if columns is None else list(columns)
    unknown = [c for c in columns if c not in X.columns]
    if unknown:
        raise ConfigError(f"cannot permute {unknown}: not columns of X ({', '.join(X.columns)})", parameter="columns")
    baseline = _auc(y_arr, classifier.predict_proba(X)[:, 1])
    rows = []
    for col in columns:
        aucs = []
        for _ in range(n_repeats):
            shuffled = X.copy()
            shuffled[col] = X[col].to_numpy()[rng.permutation(len(X))]
            aucs.append(_auc(y_arr, classifier.predict_proba(shuffled)[:, 1]))
        rows.append(
            {
                "column": col,
                "importance": baseline - float(np.mean(aucs)),
                "std": float(np.std(aucs)),
                "baseline_auc": baseline,
                "permuted_auc": float(np.mean(aucs)),
                "n_repeats": n_repeats,
                "rows": len(X),
            }
        )
    return pd.DataFrame(rows).set_index("column").sort_values("importance", ascending=False)
