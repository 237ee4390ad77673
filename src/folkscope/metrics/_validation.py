"""Input checks shared by every metric; each constraint is stated once, here.

Data problems (wrong shape, labels that are not 0/1, scores outside [0, 1],
negative weights, NaN scores) raise :class:`~folkscope.errors.DataError`;
bad options (``n_bins=0``, an unknown ``strategy``) raise
:class:`~folkscope.errors.ConfigError` carrying ``parameter`` and ``value``.
Every message names the argument, what is allowed, the value received and
the fix. Nothing is clipped, coerced or dropped silently.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Collection
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from folkscope.errors import ConfigError, DataError, UndefinedMetricWarning

__all__: list[str] = []  # private helpers; the public API lives in folkscope.metrics

NanPolicy = Literal["raise", "omit"]
FloatArray = NDArray[np.float64]
_NAN_POLICIES = ("raise", "omit")


def _preview(values: NDArray[Any], limit: int = 5) -> str:
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return f"[{shown}{', ...' if values.size > limit else ''}]"


# ----------------------------------------------------------------------------- options
def check_option(value: object, name: str, allowed: Collection[object]) -> Any:
    """Return ``value`` if it is one of ``allowed``, else raise ConfigError."""
    if not isinstance(value, (str, int, float, bool, type(None))) or value not in allowed:
        raise ConfigError(
            f"{name} must be one of {sorted(map(repr, allowed))}; got {value!r}.",
            parameter=name,
            value=value,
        )
    return value


def check_nan_policy(value: object) -> NanPolicy:
    """Validate ``nan_policy`` ('raise' or 'omit')."""
    return check_option(value, "nan_policy", _NAN_POLICIES)  # type: ignore[no-any-return]


def check_number(
    value: object,
    name: str,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> Any:
    """Check a scalar option against a type and an interval; return it unchanged."""
    ok_type = (
        isinstance(value, numbers.Integral)
        if integer
        else isinstance(value, numbers.Real) and math.isfinite(float(value))
    )
    if isinstance(value, bool):
        ok_type = False
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    interval = f"{lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    kind = "an integer" if integer else "a finite number"
    if ok_type:
        v = float(value)  # type: ignore[arg-type]
        below = low is not None and (v <= low if low_open else v < low)
        above = high is not None and (v >= high if high_open else v > high)
        if not (below or above):
            return value
    raise ConfigError(f"{name} must be {kind} in {interval}; got {value!r}.", parameter=name, value=value)


def check_random_state(random_state: object) -> np.random.Generator:
    """Turn ``None``, an int seed or a Generator into a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) >= 0:
        return np.random.default_rng(int(random_state))
    raise ConfigError(
        f"random_state must be None, a non-negative int seed or a numpy.random.Generator; got {random_state!r}.",
        parameter="random_state",
        value=random_state,
    )


# ----------------------------------------------------------------------------- arrays
def as_1d(values: ArrayLike, name: str, *, allow_empty: bool = False) -> FloatArray:
    """Return ``values`` as a 1-d float64 array or raise DataError."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise DataError(f"{name} must be a 1-d array of shape (n_samples,); got shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise DataError(f"{name} is empty; at least one row is needed.")
    if arr.dtype.kind not in "biuf":
        raise DataError(f"{name} must be numeric (bool, int or float); got dtype {arr.dtype}.")
    return arr.astype(np.float64, copy=False)


def check_same_length(**arrays: NDArray[Any] | None) -> int:
    """Raise DataError unless all given arrays have the same length; return it."""
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise DataError(f"Inconsistent numbers of rows: {desc}. Pass arrays of equal length.")
    return next(iter(lengths.values()))


def check_binary(values: ArrayLike, name: str = "y_true") -> FloatArray:
    """Labels must be 0/1 (or False/True), without NaN; return them as float64."""
    arr = as_1d(values, name)
    bad = (arr != 0) & (arr != 1)  # NaN compares unequal, so it is caught here too
    if bad.any():
        odd = np.unique(np.asarray(values)[bad])  # show the values as given, not as floats
        raise DataError(
            f"{name} must hold binary labels 0/1 (or False/True); got {int(bad.sum())} other "
            f"value(s), e.g. {_preview(odd)}. Threshold the target first."
        )
    return arr


def check_scores(
    values: ArrayLike, name: str = "y_prob", *, nan_policy: NanPolicy = "raise", unit_interval: bool = True
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Check scores; return them and the mask of NaN rows.

    NaN raises unless ``nan_policy='omit'``, in which case the caller drops the
    masked rows and can report how many it dropped. Infinite scores, and scores
    outside [0, 1] when ``unit_interval``, always raise.
    """
    arr = as_1d(values, name)
    nan = np.isnan(arr)
    n_nan = int(nan.sum())
    if n_nan and nan_policy == "raise":
        rows = np.flatnonzero(nan)
        raise DataError(
            f"{name} contains {n_nan} NaN score(s) (rows {_preview(rows)}). NaN scores are "
            "never dropped silently: fix them, or pass nan_policy='omit' to exclude them "
            "explicitly (score_summary reports the count)."
        )
    finite = arr[~nan] if n_nan else arr
    if unit_interval:
        bad = (finite < 0) | (finite > 1) | ~np.isfinite(finite)
        if bad.any():
            raise DataError(
                f"{name} must hold probabilities in [0, 1]; got {int(bad.sum())} value(s) "
                f"outside, e.g. {_preview(np.unique(finite[bad]))}."
            )
    elif not np.isfinite(finite).all():
        n_inf = int((~np.isfinite(finite)).sum())
        raise DataError(f"{name} must be finite; got {n_inf} inf value(s).")
    return arr, nan


def check_sample_weight(sample_weight: ArrayLike | None, n: int, name: str = "sample_weight") -> FloatArray | None:
    """Weights must be finite and >= 0 with a positive sum; ``None`` stays ``None``."""
    if sample_weight is None:
        return None
    w = as_1d(sample_weight, name)
    if len(w) != n:
        raise DataError(f"{name} has {len(w)} rows but the data has {n}; pass one weight per row.")
    if not np.isfinite(w).all():
        n_bad = int((~np.isfinite(w)).sum())
        raise DataError(f"{name} must be finite; got {n_bad} NaN/inf value(s).")
    if (w < 0).any():
        raise DataError(
            f"{name} must be non-negative (survey weights); got {int((w < 0).sum())} negative "
            f"value(s), e.g. {_preview(np.unique(w[w < 0]))}."
        )
    if not w.sum() > 0:
        raise DataError(f"{name} sums to 0; at least one row needs a positive weight.")
    return w


class BinaryInput(NamedTuple):
    """Validated (labels, scores, weights) with NaN rows removed under 'omit'."""

    y: FloatArray
    p: FloatArray
    w: FloatArray | None
    n_nan: int


def check_binary_input(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    sample_weight: ArrayLike | None,
    nan_policy: object = "raise",
    *,
    unit_interval: bool = True,
) -> BinaryInput:
    """Validate the usual (y_true, y_prob, sample_weight) triple of a risk-score metric."""
    policy = check_nan_policy(nan_policy)
    y = check_binary(y_true, "y_true")
    p, nan = check_scores(y_prob, "y_prob", nan_policy=policy, unit_interval=unit_interval)
    check_same_length(y_true=y, y_prob=p)
    w = check_sample_weight(sample_weight, len(y))
    n_nan = int(nan.sum())
    if n_nan:
        keep = ~nan
        y, p = y[keep], p[keep]
        # may leave no row (or zero total weight): callers then return NaN with a warning
        w = None if w is None else w[keep]
    return BinaryInput(y, p, w, n_nan)


# ----------------------------------------------------------------------------- helpers
def factorize_labels(groups: ArrayLike, name: str = "groups") -> tuple[NDArray[np.intp], list[Any]]:
    """Integer codes and sorted labels (as plain Python objects) of a 1-d label array."""
    import pandas as pd

    arr = np.asarray(groups)
    if arr.ndim != 1:
        raise DataError(f"{name} must be a 1-d array of shape (n_samples,); got shape {arr.shape}.")
    codes, uniques = pd.factorize(arr, sort=True, use_na_sentinel=True)
    if (codes < 0).any():
        raise DataError(
            f"{name} contains {int((codes < 0).sum())} missing label(s) (NaN/None); "
            "give those rows an explicit group such as 'unknown'."
        )
    labels = [u.item() if isinstance(u, np.generic) else u for u in uniques]
    return np.asarray(codes, dtype=np.intp), labels


def undefined(message: str, *, stacklevel: int = 3) -> float:
    """Warn with UndefinedMetricWarning and return NaN (the one undefined-case path)."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=stacklevel)
    return float("nan")


def total_weight(n: int, w: FloatArray | None) -> float:
    return float(n) if w is None else float(w.sum())


def wsum(x: FloatArray, w: FloatArray | None) -> float:
    return float(x.sum()) if w is None else float(np.dot(x, w))


def wmean(x: FloatArray, w: FloatArray | None) -> float:
    """Weighted mean; NaN (no warning) when there is no weight; callers warn."""
    tot = total_weight(len(x), w)
    return wsum(x, w) / tot if tot > 0 else float("nan")


def weighted_quantile(x: FloatArray, q: ArrayLike, w: FloatArray | None = None) -> FloatArray:
    """Quantiles by the inverted empirical CDF (numpy's ``method='inverted_cdf'``).

    For level ``q`` returns the smallest ``x`` whose cumulative weight reaches
    ``q * total``. Integer weights give the same result as repeating rows, and
    all-ones weights the same as no weights. Rows of weight 0 are ignored.
    """
    levels = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if w is None:
        # same rule as below with unit weights, by selection instead of a full sort: O(n)
        k = np.clip(np.ceil(levels * len(x) * (1 - 1e-12)).astype(np.intp) - 1, 0, len(x) - 1)
        ks = np.unique(k)
        return np.asarray(np.partition(x, ks)[k], dtype=np.float64)
    keep = w > 0
    x, w = x[keep], w[keep]
    order = np.argsort(x)  # ties need no stable order: equal values, same result
    xs = x[order]
    cw = np.cumsum(w[order])
    total = cw[-1]
    # relative tolerance so that e.g. 0.1 * 30 == 3 up to rounding selects the 3rd value
    target = levels * total * (1 - 1e-12)
    idx = np.searchsorted(cw, target, side="left")
    return np.asarray(xs[np.clip(idx, 0, len(xs) - 1)], dtype=np.float64)
