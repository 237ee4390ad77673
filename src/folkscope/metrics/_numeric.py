"""Calibration of next-token probabilities to numbers stated in the context.

Source: Lovering et al., "Language Model Probabilities are Not Calibrated in
Numeric Contexts" (section 3, table 2, appendices F and G);
``spec/numeric-calibration.md``.

Arrays of shape (n_problems, n_options): ``model_probs`` holds the raw
(not renormalised) probabilities Π of the valid options, ``ideal_probs`` the
implied distribution P (e.g. counts 51 and 98 give 51/149 and 98/149). A 1-d
array is a single problem.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from folkscope.errors import DataError
from folkscope.metrics._validation import (
    FloatArray,
    check_number,
    check_option,
    check_random_state,
    undefined,
)

__all__ = [
    "REFERENCE_BEHAVIOURS",
    "BehaviourClassification",
    "calibration_distance",
    "classify_behaviour",
    "ideal_distribution",
    "mode_frequency",
    "mode_probability",
    "mode_stability",
    "numeric_calibration_table",
    "pick_higher_baseline",
    "probability_mass",
    "random_baseline",
    "reference_behaviour",
    "relative_entropy",
]

#: Reference behaviours, in the paper's order (also the tie-break order).
REFERENCE_BEHAVIOURS = ("null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second")


def _probs(values: ArrayLike, name: str, *, simplex: bool) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        raise DataError(f"{name} must have shape (n_problems, n_options) with n_options >= 2; got {np.shape(values)}.")
    if not np.isfinite(arr).all() or (arr < 0).any() or (arr > 1).any():
        raise DataError(f"{name} must hold finite probabilities in [0, 1].")
    sums = arr.sum(axis=1)
    if simplex and (np.abs(sums - 1) > 1e-6).any():
        raise DataError(f"{name} rows must sum to 1 (the implied distribution P).")
    if (sums > 1 + 1e-6).any():
        raise DataError(
            f"{name}: option probabilities of a problem sum to more than 1 "
            f"(max {sums.max():.6g}); they are next-token probabilities of "
            "distinct continuations."
        )
    return arr


def _pair(model_probs: ArrayLike, ideal_probs: ArrayLike) -> tuple[FloatArray, FloatArray]:
    pi = _probs(model_probs, "model_probs", simplex=False)
    p = _probs(ideal_probs, "ideal_probs", simplex=True)
    if pi.shape != p.shape:
        raise DataError(f"model_probs has shape {pi.shape} but ideal_probs has {p.shape}.")
    return pi, p


def _out(values: FloatArray, like: ArrayLike) -> float | FloatArray:
    return float(values[0]) if np.ndim(like) == 1 else values


def ideal_distribution(counts: ArrayLike) -> FloatArray:
    """Implied distribution P from the counts in the context, ``counts / counts.sum()``.

    Examples
    --------
    >>> ideal_distribution([51, 98]).round(3).tolist()
    [0.342, 0.658]
    """
    c = np.asarray(counts, dtype=np.float64)
    if not np.isfinite(c).all() or (c < 0).any() or not (c.sum(axis=-1) > 0).all():
        raise DataError("counts must be finite, non-negative and not all zero.")
    return np.asarray(c / c.sum(axis=-1, keepdims=True))


def probability_mass(model_probs: ArrayLike) -> float | FloatArray:
    r"""Probability mass on the valid options, :math:`PM = \sum_{t\in T}\pi_t`.

    Examples
    --------
    >>> round(probability_mass([0.3, 0.6]), 6)
    0.9
    """
    pi = _probs(model_probs, "model_probs", simplex=False)
    return _out(pi.sum(axis=1), model_probs)


def calibration_distance(model_probs: ArrayLike, ideal_probs: ArrayLike) -> float | FloatArray:
    r"""Calibration distance WD between P and the raw Π, lower is better.

    The paper calls scipy's ``wasserstein_distance_nd`` with P and Π each taken
    as a single point; the distance between two point masses is the Euclidean
    distance, so :math:`WD = \|P - \Pi\|_2`, computed directly (vectorised).
    Mass off the valid options counts (Null gives ``‖P‖₂``).

    Parameters
    ----------
    model_probs, ideal_probs : array-like of shape (n_problems, n_options)

    Returns
    -------
    float or ndarray of shape (n_problems,)

    Examples
    --------
    >>> round(calibration_distance([1.0, 0.0], [51 / 149, 98 / 149]), 2)   # Pick First, table 2
    0.93
    """
    pi, p = _pair(model_probs, ideal_probs)
    return _out(np.sqrt(((p - pi) ** 2).sum(axis=1)), model_probs)


def _entropy_bits(p: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return np.asarray(terms.sum(axis=1))


def relative_entropy(model_probs: ArrayLike, ideal_probs: ArrayLike) -> float | FloatArray:
    r"""Relative entropy :math:`RE = H(\Pi / PM) - H(P)` in bits.

    Negative: over-concentrated (mode collapse); positive: too diffuse.
    Undefined when PM = 0: NaN with an
    :class:`~folkscope.errors.UndefinedMetricWarning` saying how many problems
    (:func:`numeric_calibration_table` records the reason per problem).

    Parameters
    ----------
    model_probs, ideal_probs : array-like of shape (n_problems, n_options)

    Returns
    -------
    float or ndarray of shape (n_problems,)

    Examples
    --------
    >>> round(relative_entropy([0.3, 0.7], [51 / 149, 98 / 149]), 2)   # Pick Higher p=0.7
    -0.05
    """
    pi, p = _pair(model_probs, ideal_probs)
    pm = pi.sum(axis=1)
    zero = pm == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = pi / pm[:, None]
    h_model = _entropy_bits(np.where(zero[:, None], 0.0, norm))
    re = np.where(zero, np.nan, h_model - _entropy_bits(p))
    if zero.any():
        undefined(
            f"relative_entropy is undefined for {int(zero.sum())} problem(s) with probability mass 0; returned NaN."
        )
    return _out(np.asarray(re), model_probs)


def numeric_calibration_table(model_probs: ArrayLike, ideal_probs: ArrayLike) -> pd.DataFrame:
    """PM, WD and RE per problem, with the reason wherever a value is undefined.

    Returns
    -------
    pandas.DataFrame
        Columns ``probability_mass, calibration_distance, relative_entropy,
        undefined_reason`` (empty string when defined), one row per problem.

    Examples
    --------
    >>> t = numeric_calibration_table([[0.0, 0.0], [0.3, 0.7]], [[0.5, 0.5], [0.5, 0.5]])
    >>> t["undefined_reason"].tolist()
    ['probability mass is 0: relative entropy undefined', '']
    """
    pi, p = _pair(model_probs, ideal_probs)
    pm = pi.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        norm = np.where((pm == 0)[:, None], 0.0, pi / np.where(pm == 0, 1.0, pm)[:, None])
    re = np.where(pm == 0, np.nan, _entropy_bits(norm) - _entropy_bits(p))
    return pd.DataFrame(
        {
            "probability_mass": pm,
            "calibration_distance": np.sqrt(((p - pi) ** 2).sum(axis=1)),
            "relative_entropy": re,
            "undefined_reason": np.where(pm == 0, "probability mass is 0: relative entropy undefined", ""),
        }
    )


def _on_extreme(p: FloatArray, mass: FloatArray, which: str) -> FloatArray:
    """Put ``mass`` (per row) on the max/min of P, split over ties; the rest evenly elsewhere."""
    target = p.max(axis=1, keepdims=True) if which == "max" else p.min(axis=1, keepdims=True)
    hit = np.isclose(p, target, rtol=0, atol=1e-12)
    n_hit = hit.sum(axis=1, keepdims=True)
    n_rest = p.shape[1] - n_hit
    rest = np.where(n_rest > 0, (1 - mass) / np.maximum(n_rest, 1), 0.0)
    on_hit = np.where(n_rest > 0, mass, 1.0) / n_hit
    return np.asarray(np.where(hit, on_hit, rest))


def reference_behaviour(name: str, ideal_probs: ArrayLike) -> FloatArray:
    """Output Π of a reference behaviour for each problem.

    ``null``: all mass off the options (Π = 0); ``calibrated``: Π = P;
    ``pick_higher`` / ``pick_lower``: all mass on argmax / argmin P (split evenly
    when several options tie); ``pick_first`` / ``pick_second``: all mass on the
    option listed first / second.

    Parameters
    ----------
    name : {"null", "calibrated", "pick_higher", "pick_lower", "pick_first", "pick_second"}
    ideal_probs : array-like of shape (n_problems, n_options)

    Returns
    -------
    ndarray of shape (n_problems, n_options)

    Examples
    --------
    >>> reference_behaviour("pick_higher", [[0.3, 0.7]]).tolist()
    [[0.0, 1.0]]
    """
    check_option(name, "name", REFERENCE_BEHAVIOURS)
    p = _probs(ideal_probs, "ideal_probs", simplex=True)
    if name == "null":
        return np.zeros_like(p)
    if name == "calibrated":
        return p.copy()
    if name in ("pick_higher", "pick_lower"):
        return _on_extreme(p, np.ones((len(p), 1)), "max" if name == "pick_higher" else "min")
    out = np.zeros_like(p)
    out[:, 0 if name == "pick_first" else 1] = 1.0
    return out


def pick_higher_baseline(ideal_probs: ArrayLike, *, q: float = 0.7) -> FloatArray:
    """Baseline Pick Higher_{p=q}: q on argmax P, the rest spread evenly over the others.

    Examples
    --------
    >>> pick_higher_baseline([[0.342, 0.658]], q=0.7).round(2).tolist()
    [[0.3, 0.7]]
    """
    check_number(q, "q", low=0, high=1)
    p = _probs(ideal_probs, "ideal_probs", simplex=True)
    return _on_extreme(p, np.full((len(p), 1), float(q)), "max")


def random_baseline(
    n_problems: int, n_options: int = 2, *, tau: float = 1.0, random_state: int | np.random.Generator | None = None
) -> FloatArray:
    r"""Baseline Random_τ: softmax of uniform draws at temperature τ, :math:`\mathrm{softmax}(u/τ)`.

    Returns
    -------
    ndarray of shape (n_problems, n_options), rows sum to 1

    Examples
    --------
    >>> random_baseline(3, tau=0.5, random_state=0).sum(axis=1).round(12).tolist()
    [1.0, 1.0, 1.0]
    """
    n = int(check_number(n_problems, "n_problems", integer=True, low=1))
    k = int(check_number(n_options, "n_options", integer=True, low=2))
    t = float(check_number(tau, "tau", low=0, low_open=True))
    z = check_random_state(random_state).random((n, k)) / t
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


class BehaviourClassification(NamedTuple):
    """Result of :func:`classify_behaviour`."""

    behaviour: str
    rates: dict[str, float]
    mean_probability_mass: float


def classify_behaviour(
    model_probs: ArrayLike, ideal_probs: ArrayLike, *, null_mass: float = 0.5
) -> BehaviourClassification:
    """Name the reference behaviour a grid cell's outputs match most often.

    Per problem, the matching behaviours are those whose output is nearest to
    Π by WD (several when they coincide, e.g. Pick First = Pick Higher when the
    first number is larger; balanced cells keep them apart). The rate of a
    behaviour is the share of problems it matches; the cell gets the behaviour
    with the highest rate (ties: order of :data:`REFERENCE_BEHAVIOURS`). A cell
    whose mean PM is below ``null_mass`` is Null (appendix G).

    Parameters
    ----------
    model_probs, ideal_probs : array-like of shape (n_problems, n_options)
    null_mass : float in [0, 1], default=0.5

    Returns
    -------
    BehaviourClassification
        ``(behaviour, rates, mean_probability_mass)``.

    Examples
    --------
    >>> ideal = [[0.3, 0.7], [0.7, 0.3]]
    >>> classify_behaviour([[0.95, 0.0], [0.9, 0.05]], ideal).behaviour
    'pick_first'
    """
    check_number(null_mass, "null_mass", low=0, high=1)
    pi, p = _pair(model_probs, ideal_probs)
    dist = np.stack(
        [np.sqrt(((reference_behaviour(b, p) - pi) ** 2).sum(axis=1)) for b in REFERENCE_BEHAVIOURS], axis=1
    )
    match = dist <= dist.min(axis=1, keepdims=True) + 1e-12
    rates = {b: float(r) for b, r in zip(REFERENCE_BEHAVIOURS, match.mean(axis=0), strict=True)}
    mean_pm = float(pi.sum(axis=1).mean())
    label = "null" if mean_pm < null_mass else max(REFERENCE_BEHAVIOURS, key=lambda b: rates[b])
    return BehaviourClassification(label, rates, mean_pm)


def mode_probability(model_probs: ArrayLike) -> float:
    r"""Mean over problems of :math:`\max_t \pi_t` (distributions dataset).

    Examples
    --------
    >>> mode_probability([[0.2, 0.5, 0.1], [0.3, 0.3, 0.3]])
    0.4
    """
    pi = _probs(model_probs, "model_probs", simplex=False)
    return float(pi.max(axis=1).mean())


def mode_stability(base_probs: ArrayLike, chat_probs: ArrayLike) -> float:
    """Share of problems whose most likely option agrees between two models (ties: first).

    Examples
    --------
    >>> mode_stability([[0.6, 0.4], [0.2, 0.8]], [[0.9, 0.1], [0.7, 0.3]])
    0.5
    """
    a = _probs(base_probs, "base_probs", simplex=False)
    b = _probs(chat_probs, "chat_probs", simplex=False)
    if a.shape != b.shape:
        raise DataError(f"base_probs has shape {a.shape} but chat_probs has {b.shape}.")
    return float((a.argmax(axis=1) == b.argmax(axis=1)).mean())


def mode_frequency(model_probs: ArrayLike, groups: ArrayLike) -> float:
    r"""Mode frequency, how often the most frequent greedy choice is chosen, per interval shape.

    .. math:: \mathrm{AVG}_g \max_{t} \mathrm{AVG}_{i\in g} \mathbb 1(t = \arg\max \Pi_i)

    Problems are grouped by interval shape (e.g. [2, 5) with [132, 135)) so
    that option positions align; greedy (temperature-0) choices are averaged
    within a group, the most frequent position is kept, then groups are
    averaged. A calibrated model scores about 1 / n_options.

    Parameters
    ----------
    model_probs : array-like of shape (n_problems, n_options)
    groups : array-like of shape (n_problems,)

    Returns
    -------
    float in (0, 1]

    Examples
    --------
    >>> mode_frequency([[0.6, 0.4], [0.7, 0.3], [0.1, 0.9], [0.8, 0.2]], ["a", "a", "b", "b"])
    0.75
    """
    pi = _probs(model_probs, "model_probs", simplex=False)
    g: Any = np.asarray(groups)
    if g.shape != (len(pi),):
        raise DataError(f"groups must have shape ({len(pi)},); got {g.shape}.")
    _, codes = np.unique(g, return_inverse=True)
    onehot = np.zeros_like(pi)
    onehot[np.arange(len(pi)), pi.argmax(axis=1)] = 1.0
    sums = np.zeros((codes.max() + 1, pi.shape[1]))
    np.add.at(sums, codes, onehot)
    freq = sums / np.bincount(codes)[:, None]
    return float(freq.max(axis=1).mean())
