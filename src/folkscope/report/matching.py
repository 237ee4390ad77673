"""Whether two run folders can be compared unit by unit, decided before any metric is computed.

A paired comparison is only meaningful when both runs answered the same
units: the same people (rows of a risk task), problems, pool appearances or
survey tasks, with the same ground truth. This module pairs them by their
keys and refuses in one line, with both counts and the shared count, when
they are not the same:

- no unit shared, or a shared unit whose ground truth differs (another
  label, weight, group, truth): the runs are over different data, refused;
- the same units: compared;
- one run's units are a subset of the other's (a smaller ``--subsampling``
  of the same split, a run whose other rows were never scored): compared
  on the shared units, with a note, since the metrics then differ from the
  ones each run reports for itself;
- overlapping, neither a subset (say two subsamples drawn with different
  seeds): refused unless ``shared_rows=True`` (``--shared-rows``) asks for
  the shared units anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError, DataError

__all__ = ["Matched", "check_same_subject", "match_units"]


@dataclass(frozen=True)
class Matched:
    """The units both runs hold.

    Attributes
    ----------
    shared : pandas.DataFrame
        One row per shared unit, in key order: the keys, the ``same``
        columns once, every other column of A suffixed ``_a`` and of B ``_b``.
    n_a, n_b : int
        Units each run holds.
    note : str or None
        Said when the comparison covers fewer units than a run holds.
    """

    shared: pd.DataFrame
    n_a: int
    n_b: int
    note: str | None


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit if n == 1 else unit + 's'}"


def _differs(left: pd.Series, right: pd.Series) -> np.ndarray:
    """Where two aligned columns disagree (floats to within rounding, NaN equal to NaN)."""
    if pd.api.types.is_float_dtype(left) or pd.api.types.is_float_dtype(right):
        x, y = left.to_numpy(np.float64), right.to_numpy(np.float64)
        return ~(np.isclose(x, y, rtol=1e-9, atol=1e-12) | (np.isnan(x) & np.isnan(y)))
    return (left.astype(str) != right.astype(str)).to_numpy()


def match_units(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    keys: Sequence[str],
    same: Sequence[str] = (),
    unit: str = "row",
    shared_rows: bool = False,
) -> Matched:
    """Pair the units of two runs' tables by ``keys``; refuse (one line) where they are not the same units.

    Parameters
    ----------
    a, b : pandas.DataFrame
        One row per unit of run A and B.
    keys : sequence of str
        Columns naming a unit (``row_id``; ``pool, candidate_id``).
    same : sequence of str
        Ground-truth columns a shared unit must agree on (``label``, ``weight``).
    unit : str
        What a unit is called in messages (``"row"``, ``"problem"``).
    shared_rows : bool, default False
        Compare on the shared units even when neither run holds all of the other's.

    Raises
    ------
    DataError
        A key is missing or repeated, no unit is shared, a shared unit's ground
        truth differs, or the units only overlap and ``shared_rows`` is False.

    Examples
    --------
    >>> a = pd.DataFrame({"row_id": [1, 2, 3], "label": [0, 1, 1], "p": [0.1, 0.8, 0.7]})
    >>> m = match_units(a, a.iloc[:2], keys=["row_id"], same=["label"])
    >>> m.n_a, m.n_b, list(m.shared.columns)
    (3, 2, ['row_id', 'label', 'p_a', 'p_b'])
    >>> m.note
    'compared on the 2 rows both runs hold (A 3 rows, B 2 rows), so the metrics are not the ones each run reports for itself'
    """
    keys = list(keys)
    for name, frame in (("A", a), ("B", b)):
        missing = [c for c in (*keys, *same) if c not in frame.columns]
        if missing:
            raise DataError(
                f"run {name}'s table has no column {', '.join(map(repr, missing))}; it was written by another "
                "folkscope version: rerun it, or `folkscope rescore` it"
            )
        repeated = int(frame.duplicated(keys).sum())
        if repeated:
            raise DataError(
                f"run {name} holds {_count(repeated, unit)} twice (same {', '.join(keys)}); the run folder is "
                "damaged: run it again"
            )
    n_a, n_b = len(a), len(b)
    tagged = [
        f.rename(columns={c: f"{c}_{side}" for c in f.columns if c not in keys}) for f, side in ((a, "a"), (b, "b"))
    ]
    shared = tagged[0].merge(tagged[1], on=keys, how="inner", sort=True)
    n_shared = len(shared)
    counts = f"A holds {_count(n_a, unit)}, B {_count(n_b, unit)}"
    if n_shared == 0:
        raise DataError(
            f"the runs share no {unit}: {counts}, none of them the same; compare two runs over the same task and data"
        )
    for col in same:
        bad = _differs(shared[f"{col}_a"], shared[f"{col}_b"])
        if bad.any():
            raise DataError(
                f"the runs are not over the same {unit}s: {counts}, {n_shared:,} shared by key, but "
                f"{int(bad.sum()):,} of those have another {col} in B (other data or task); compare two runs "
                "over the same task and data"
            )
        shared[col] = shared.pop(f"{col}_a")
        shared.pop(f"{col}_b")
    others = [c for c in shared.columns if c not in keys and c not in same]
    shared = shared[[*keys, *same, *others]]
    note = None
    if n_shared < max(n_a, n_b):
        subset = n_shared == min(n_a, n_b)
        if not subset and not shared_rows:
            raise DataError(
                f"the runs only partly overlap: {counts}, {n_shared:,} shared, and neither holds all of the "
                f"other's {unit}s (another sample?); pass --shared-rows to compare on the {n_shared:,} shared "
                f"{unit}s"
            )
        note = (
            f"compared on the {_count(n_shared, unit)} both runs hold (A {_count(n_a, unit)}, B {_count(n_b, unit)}), "
            "so the metrics are not the ones each run reports for itself"
        )
    return Matched(shared.reset_index(drop=True), n_a, n_b, note)


def check_same_subject(a: object, b: object, what: str) -> None:
    """Refuse two runs of different subjects (tasks, datasets) in one line; ``None`` means unknown and passes.

    Examples
    --------
    >>> check_same_subject("ACSIncome", None, "task")
    >>> check_same_subject("ACSIncome", "ACSPublicCoverage", "task")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: run A is of task 'ACSIncome' and run B of task 'ACSPublicCoverage'; compare two runs of the same task
    """
    if a is not None and b is not None and a != b:
        raise ConfigError(
            f"run A is of {what} {a!r} and run B of {what} {b!r}; compare two runs of the same {what}",
            parameter="runs",
            value=[a, b],
        )
