"""Which training rows folktexts' ``Dataset.sample_n_train_examples`` returns: the positions, from the labels alone.

Reused examples are the first rows of a fixed random order (per label for a
composed draw); new examples come from a generator the dataset keeps, so
successive draws differ and a rerun repeats them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from folkscope.errors import ConfigError, DataError

__all__ = ["sample_rows"]


def sample_rows(
    labels: np.ndarray,
    n: int,
    *,
    order: np.ndarray,
    reuse: bool,
    composition: str | Sequence[int],
    rng: np.random.Generator,
) -> np.ndarray:
    """Positions of ``n`` rows of ``labels``: ``"random"``, ``"balanced"`` or per-label counts (in label order).

    Raises
    ------
    ConfigError
        A bad ``n`` or ``composition``.
    DataError
        Fewer rows (of a label) than asked for.

    Examples
    --------
    >>> sample_rows(np.array([0, 1, 0, 1]), 2, order=np.arange(4), reuse=True, composition="random", rng=np.random.default_rng(0))
    array([0, 1])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ConfigError(f"n must be a positive number of rows, got {n!r}", parameter="n", value=n)
    if isinstance(composition, str) and composition == "random":
        if n > len(labels):
            raise DataError(f"{n} examples asked for, but the training split holds {len(labels)} rows")
        return order[:n] if reuse else rng.choice(len(labels), size=n, replace=False)
    classes = np.unique(labels)
    if isinstance(composition, str) and composition == "balanced":
        counts = [n // len(classes) + (1 if i < n % len(classes) else 0) for i in range(len(classes))]
    elif not isinstance(composition, str) and len(composition) == len(classes) and sum(composition) == n:
        counts = [int(c) for c in composition]
    else:
        raise ConfigError(
            f"composition must be 'random', 'balanced' or one count per label ({len(classes)}) summing to {n}; "
            f"got {composition!r}",
            parameter="composition",
            value=composition,
        )
    short = [
        f"label {c}: {int((labels == c).sum())} rows, {k} asked for"
        for c, k in zip(classes, counts)
        if (labels == c).sum() < k
    ]
    if short:
        raise DataError(f"not enough training rows to draw from ({'; '.join(short)})")
    parts = [
        order[labels[order] == c][:k] if reuse else rng.choice(np.flatnonzero(labels == c), size=k, replace=False)
        for c, k in zip(classes, counts)
    ]
    return rng.permutation(np.concatenate(parts))
