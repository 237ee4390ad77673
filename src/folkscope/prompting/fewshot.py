"""Few-shot examples: which training rows are shown, in which order, and how they read.

Which rows, by :attr:`FewShotConfig.draw`:

``"folktexts"`` (default), as folktexts 0.7.1's Benchmark chooses them:
    examples are reused for every row when ``reuse_examples`` is set *or*
    answer-order bias is corrected (folktexts forces reuse then, so that all
    orderings of a row see the same examples); reused examples are the first
    rows of the pool in its order: the first ``n`` (random composition) or
    the first ``k`` of each class (per-class compositions; folktexts then
    shuffles them afresh at every call from its dataset's running generator,
    folkscope once, seeded by ``seed``). A training split in random order
    makes its first rows a random sample (:func:`shuffled_pool`).
``"seeded"``, folkscope's own:
    with ``reuse_examples`` one random draw (seeded by ``seed``) serves every
    row; otherwise each row gets its own draw, whatever the order-bias
    setting.

Rows that are not given reused examples get their own draw, a pure function
of ``(seed, row id)`` computed for all rows at once (a counter-based hash
stream per row, :func:`row_uniforms`), so a row's examples do not depend on
which other rows are rendered with it (folktexts draws from a running
generator instead, which no other program can reproduce); a row that is
itself in the pool (rendering the training split) is never its own example.

Each example shows the row's information, the question with its options
(unless ``hide_question``) and ``Answer: <letter>`` for its true label, with
the options in the same ordering as the final question.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError
from folkscope.prompting.config import FewShotConfig

__all__ = [
    "ExamplePool",
    "class_counts",
    "draw_examples",
    "draw_for_rows",
    "first_examples",
    "row_keys",
    "row_uniforms",
    "shuffled_pool",
]


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser, element-wise on uint64 arrays (a stateless, well-mixed hash)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def row_keys(row_ids: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Stable 64-bit key of each row id: non-negative integers as they are, anything else via CRC-32 of its text."""
    ids = np.asarray(row_ids)
    if ids.dtype.kind in "iu" and (ids.size == 0 or ids.min() >= 0):
        return ids.astype(np.uint64)
    out = []
    for rid in ids.tolist():
        if isinstance(rid, int) and not isinstance(rid, bool) and rid >= 0:
            out.append(rid & ((1 << 64) - 1))
        else:
            out.append((1 << 63) | zlib.crc32(str(rid).encode("utf-8")))
    return np.array(out, dtype=np.uint64)


def row_uniforms(
    seed: int, row_ids: Sequence[Any] | np.ndarray, stream: int, count: int, *, start: int = 0
) -> np.ndarray:
    """Uniform numbers in [0, 1), shape ``(n_rows, count)``, a pure function of (seed, row id, stream, position).

    Each row owns an endless stream per ``stream`` number; positions
    ``start .. start+count-1`` are returned, so asking for more extends a
    row's stream without changing what it already gave.
    """
    base = _mix(_mix(np.array([seed], dtype=np.uint64)) ^ row_keys(row_ids))
    counters = (np.uint64(stream) << np.uint64(32)) + np.arange(start, start + count, dtype=np.uint64)
    bits = _mix(base[:, None] ^ _mix(counters)[None, :]) >> np.uint64(11)
    return bits.astype(np.float64) * (1.0 / (1 << 53))


def class_counts(config: FewShotConfig, classes: Sequence[int]) -> tuple[int, ...] | None:
    """Examples per class in label order (``None`` for random composition)."""
    comp = config.composition
    if comp == "random":
        return None
    k = len(classes)
    if comp == "balanced":
        base, extra = divmod(config.n_shots, k)
        return tuple(base + (1 if i < extra else 0) for i in range(k))
    counts = tuple(comp)  # type: ignore[arg-type]
    if len(counts) != k:
        raise ConfigError(
            f"composition gives {len(counts)} counts but the task has {k} classes "
            f"(labels {', '.join(map(str, classes))}); give one count per class in label order",
            parameter="composition",
            value=comp,
        )
    return counts


@dataclass(frozen=True, eq=False)
class ExamplePool:
    """Training rows examples are drawn from.

    Attributes
    ----------
    X : pandas.DataFrame
        Feature rows (index = row ids).
    y : numpy.ndarray of int
        Their labels.
    """

    X: pd.DataFrame
    y: np.ndarray

    @classmethod
    def make(cls, X: pd.DataFrame, y: pd.Series | np.ndarray | Sequence[int]) -> ExamplePool:
        labels = np.asarray(y)
        if len(labels) != len(X):
            raise ConfigError(f"few-shot pool has {len(X)} rows but {len(labels)} labels", parameter="examples")
        if not X.index.is_unique:
            raise ConfigError("few-shot pool row ids (the index) must be unique", parameter="examples")
        return cls(X=X, y=labels.astype(np.int64))

    def __len__(self) -> int:
        return len(self.X)

    def positions_by_class(self, classes: Sequence[int]) -> list[np.ndarray]:
        return [np.flatnonzero(self.y == c) for c in classes]

    def check(self, config: FewShotConfig, classes: Sequence[int]) -> None:
        """Raise :class:`ConfigError` when the pool cannot supply the examples asked for."""
        if config.n_shots > len(self):
            raise ConfigError(
                f"few-shot needs {config.n_shots} examples but the training split has only {len(self)} rows; "
                "lower --few-shot or use more data",
                parameter="few_shot",
                value=config.n_shots,
            )
        counts = class_counts(config, classes)
        if counts is None:
            return
        for c, need, have in zip(classes, counts, self.positions_by_class(classes)):
            if need > len(have):
                raise ConfigError(
                    f"few-shot composition needs {need} examples of class {c} but the training split has "
                    f"only {len(have)}; change --compose-few-shot-examples or --few-shot",
                    parameter="composition",
                    value=config.composition,
                )


def _take(rng: np.random.Generator, candidates: np.ndarray | int, k: int, exclude: int) -> np.ndarray:
    """``k`` distinct positions from ``candidates`` (an array, or ``range(n)`` given as ``n``) in random
    order, never ``exclude`` (-1: none)."""
    size = candidates if isinstance(candidates, int) else len(candidates)
    if k == 0:
        return np.empty(0, dtype=np.int64)
    extra = 1 if exclude >= 0 and size > k else 0
    drawn = rng.choice(candidates, size=k + extra, replace=False)
    if extra:
        drawn = drawn[drawn != exclude][:k]
    return drawn


def draw_examples(
    pool: ExamplePool,
    config: FewShotConfig,
    classes: Sequence[int],
    rng: np.random.Generator,
    *,
    exclude: int = -1,
    by_class: list[np.ndarray] | None = None,
) -> np.ndarray:
    """Pool positions of one prompt's examples, in display order.

    Random composition lists examples in draw order. Per-class compositions
    draw class by class (label order); ``example_order`` then permutes that
    list, and without it the list is shuffled so no class always comes last.
    """
    counts = class_counts(config, classes)
    if counts is None:
        drawn = _take(rng, len(pool), config.n_shots, exclude)
    else:
        by_class = by_class if by_class is not None else pool.positions_by_class(classes)
        drawn = np.concatenate([_take(rng, cand, k, exclude) for cand, k in zip(by_class, counts)])
        if config.example_order is None:
            drawn = drawn[rng.permutation(len(drawn))]
    if config.example_order is not None:
        drawn = drawn[list(config.example_order)]
    return drawn


def first_examples(pool: ExamplePool, config: FewShotConfig, classes: Sequence[int]) -> np.ndarray:
    """Pool positions of folktexts' reused examples, in display order.

    The first ``n_shots`` rows of the pool (random composition), or the first
    rows of each class in label order (per-class compositions), shuffled by
    ``seed`` unless ``example_order`` is given; ``example_order`` then
    permutes the list.
    """
    counts = class_counts(config, classes)
    if counts is None:
        drawn = np.arange(config.n_shots)
    else:
        drawn = np.concatenate([have[:k] for have, k in zip(pool.positions_by_class(classes), counts)])
        if config.example_order is None:
            drawn = drawn[np.random.default_rng(config.seed).permutation(len(drawn))]
    if config.example_order is not None:
        drawn = drawn[list(config.example_order)]
    return drawn


def shuffled_pool(X: pd.DataFrame, y: pd.Series | np.ndarray, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Training rows in a seeded random order, so that folktexts' "first rows" are a random sample.

    folktexts' training split lists its rows in the random order of the
    split; folkscope's lists them by row id, whose first rows are not random
    (e.g. one state's).
    """
    order = np.random.default_rng(seed).permutation(len(X))
    return X.iloc[order], np.asarray(y)[order]


def _first_occurrences(values: np.ndarray) -> np.ndarray:
    """Mask of the first occurrence of each value within each row of a 2-D array."""
    order = np.argsort(values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    first_sorted = np.ones(values.shape, dtype=bool)
    first_sorted[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.empty(values.shape, dtype=bool)
    np.put_along_axis(first, order, first_sorted, axis=1)
    return first


def _distinct_per_row(
    seed: int, row_ids: np.ndarray, stream: int, candidates: np.ndarray, k: int, exclude: np.ndarray
) -> np.ndarray:
    """For every row, ``k`` distinct entries of ``candidates`` drawn uniformly in order, never ``exclude[row]``.

    Sequential uniform draws with duplicates (and the excluded position)
    skipped, which is sampling without replacement; a row whose first draws
    do not yield ``k`` distinct values reads further along its own stream.
    """
    n, size = len(row_ids), len(candidates)
    out = np.empty((n, k), dtype=np.int64)
    if k == 0 or n == 0:
        return out
    if size <= k:  # every candidate is needed: the row cannot be left out
        exclude = np.full(n, -1, dtype=np.int64)
    todo = np.arange(n)
    width = 2 * k + 4
    while todo.size:
        u = row_uniforms(seed, row_ids[todo], stream, width)
        drawn = candidates[np.minimum((u * size).astype(np.int64), size - 1)]
        ok = _first_occurrences(drawn) & (drawn != exclude[todo, None])
        rank = np.cumsum(ok, axis=1)
        done = rank[:, -1] >= k
        keep = ok & (rank <= k)
        out[todo[done]] = drawn[done][keep[done]].reshape(-1, k)
        todo = todo[~done]
        width *= 2
    return out


def draw_for_rows(
    pool: ExamplePool,
    config: FewShotConfig,
    classes: Sequence[int],
    row_ids: Sequence[Any],
    *,
    correct_order_bias: bool = False,
) -> np.ndarray:
    """Example positions for every row, shape ``(n_rows, n_shots)`` (one row when reused).

    Whether examples are reused: :meth:`FewShotConfig.reused` (folktexts'
    rule reuses them under ``correct_order_bias`` too). Reused examples are
    the pool's first rows (:func:`first_examples`) or, with ``draw="seeded"``,
    one draw from a generator seeded by ``seed``. Per-row examples are a pure
    function of ``(seed, row id)``, computed for all rows at once
    (:func:`row_uniforms`), so a row gets the same examples whatever else is
    rendered with it. A row that is itself in the pool is never its own
    example.
    """
    pool.check(config, classes)
    if config.reused(correct_order_bias):
        if config.draw == "folktexts":
            return first_examples(pool, config, classes)[None, :]
        return draw_examples(pool, config, classes, np.random.default_rng(config.seed))[None, :]
    ids = np.asarray(list(row_ids), dtype=object) if not isinstance(row_ids, np.ndarray) else row_ids
    own = pool.X.index.get_indexer(pd.Index(ids)).astype(np.int64)
    counts = class_counts(config, classes)
    if counts is None:
        drawn = _distinct_per_row(config.seed, ids, 0, np.arange(len(pool)), config.n_shots, own)
    else:
        parts = [
            _distinct_per_row(config.seed, ids, 1 + c, cand, k, own)
            for c, (cand, k) in enumerate(zip(pool.positions_by_class(classes), counts))
        ]
        drawn = np.concatenate(parts, axis=1)
        if config.example_order is None:
            shuffle = np.argsort(row_uniforms(config.seed, ids, 1 << 20, config.n_shots), axis=1)
            drawn = np.take_along_axis(drawn, shuffle, axis=1)
    if config.example_order is not None:
        drawn = drawn[:, list(config.example_order)]
    return drawn
