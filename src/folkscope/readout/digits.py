"""Digit readouts: a number the model states, read digit by digit from its next-token probabilities.

A numeric answer is prefilled up to ``"0."``; the next token's distribution
over ``0``-``9`` (renormalised over the digits) is the first digit's, and the
prompt continued with a first digit gives the second's. Two readings:

greedy (the folktexts paper's)
    the most likely digit twice: ``0.d1d2``.
expected
    the exact two-digit expectation
    ``sum_d1 p(d1) (d1/10 + sum_d2 p(d2|d1) d2/100)``.

A digit distribution the backend could not score (a web API left digits out
of its top log-probabilities) is NaN, never read as some digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from folkscope.engine import Engine, NextTokenRequest, expand_variants
from folkscope.engine.requests import Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.chat import continue_prompt

__all__ = ["DIGITS", "DIGIT_READOUTS", "TwoDigitReadout", "read_digit", "read_two_digits"]

#: the ten one-token answers a digit readout scores
DIGITS = tuple(str(d) for d in range(10))
#: :func:`read_two_digits`' ``how``: the most likely digit then the next, or the exact expectation over both
DIGIT_READOUTS = ("greedy", "expected")
_DIGIT_SET = expand_variants(DIGITS, variants=lambda d: (d,))  # digits as written: one variant each


def read_digit(
    engine: Engine,
    prompts: Sequence[Prompt],
    *,
    unit: str = "rows",
    description: str = "next digit",
    context_size: int | None = None,
) -> np.ndarray:
    """Distribution of the next token over the ten digits, renormalised, shape (n, 10); NaN rows where unscored.

    ``context_size``: prompts longer than this many tokens are cut to their last ones (as folktexts truncates).

    Examples
    --------
    >>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
    >>> p = read_digit(engine, ["Risk: 0."])
    >>> p.shape, round(float(p.sum()), 6)
    ((1, 10), 1.0)
    """
    results = engine.next_token(
        [NextTokenRequest(p, DIGITS, context_size) for p in prompts], unit=unit, description=description
    )
    logp = np.array([_DIGIT_SET.merge_logprobs(r.logprobs, bound=r.bound) for r in results], dtype=float).reshape(
        -1, 10
    )
    top = logp.max(axis=1, keepdims=True)
    p = np.exp(logp - np.where(np.isfinite(top), top, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return p / p.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class TwoDigitReadout:
    """A two-digit answer ``0.d1d2`` read from the model.

    Attributes
    ----------
    values : ndarray
        The number read per prompt; NaN where a needed digit had no usable probabilities.
    first : ndarray of shape (n, 10)
        The first digit's distribution.
    first_ok, second_ok : ndarray of bool
        The first digit's, and the needed second digits', distributions were usable.
    """

    values: np.ndarray
    first: np.ndarray
    first_ok: np.ndarray
    second_ok: np.ndarray

    @property
    def first_digit(self) -> np.ndarray:
        """The most likely first digit, -1 where its distribution was unusable."""
        return np.where(self.first_ok, np.nan_to_num(self.first, nan=-1.0).argmax(axis=1), -1)


def read_two_digits(
    engine: Engine,
    prompts: Sequence[Prompt],
    *,
    how: str = "greedy",
    unit: str = "rows",
    description: str = "scoring",
    context_size: int | None = None,
) -> TwoDigitReadout:
    """Read ``0.d1d2`` after each prompt (which ends on ``"0."``), greedily or as the exact expectation.

    ``context_size`` cuts every prompt read, the first digit's and each
    continued with a first digit, to its last tokens (as folktexts' second
    forward pass re-truncates the prompt plus its first digit).

    Examples
    --------
    >>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
    >>> out = read_two_digits(engine, ["Risk: 0."], how="expected")
    >>> bool(0.0 <= out.values[0] <= 0.99), out.first_digit.shape
    (True, (1,))
    """
    if how not in DIGIT_READOUTS:
        raise ConfigError(f"how must be one of {', '.join(DIGIT_READOUTS)}, got {how!r}", parameter="how", value=how)
    prompts = list(prompts)
    first = read_digit(
        engine, prompts, unit=unit, description=f"{description} (first digit)", context_size=context_size
    )
    first_ok = np.isfinite(first).all(axis=1)
    d1 = np.where(first_ok, np.nan_to_num(first, nan=-1.0).argmax(axis=1), 0)
    if how == "greedy":
        continued = [continue_prompt(p, str(d)) for p, d in zip(prompts, d1)]
        second = read_digit(
            engine, continued, unit=unit, description=f"{description} (second digit)", context_size=context_size
        )
        second_ok = np.isfinite(second).all(axis=1)
        values = d1 / 10 + np.nan_to_num(second, nan=-1.0).argmax(axis=1) / 100
    else:
        seconds = np.stack(
            [
                read_digit(
                    engine,
                    [continue_prompt(p, d) for p in prompts],
                    unit=unit,
                    description=f"{description} (second digit after {d})",
                    context_size=context_size,
                )
                for d in DIGITS
            ],
            axis=1,
        )
        # a second-digit distribution that is missing matters unless its first digit has probability 0
        known = np.isfinite(seconds).all(axis=2)
        second_ok = (known | (np.nan_to_num(first, nan=1.0) == 0)).all(axis=1)
        tenths = np.arange(10) / 10 + (np.where(known[:, :, None], seconds, 0.0) @ (np.arange(10) / 100))
        values = (np.nan_to_num(first) * tenths).sum(axis=1)
    usable = first_ok & second_ok  # a digit without probabilities is never read as some digit
    return TwoDigitReadout(np.where(usable, values, np.nan).astype(float), first, first_ok, second_ok)
