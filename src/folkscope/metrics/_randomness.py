"""Randomness of generated binary sequences: runs test and the matching-pennies guesser.

Source: Lovering et al., "Language Model Probabilities are Not Calibrated in
Numeric Contexts", appendix I (human study; n-gram guesser of figure 24).
Moves are 0/1 (0 = heads, 1 = tails).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from folkscope.errors import DataError
from folkscope.metrics._validation import as_1d, check_binary, check_number, undefined

__all__ = [
    "RunsTestResult",
    "matching_pennies_win_rate",
    "ngram_guesses",
    "runs_test",
    "runs_test_pass_rate",
]


class RunsTestResult(NamedTuple):
    """Wald-Wolfowitz runs test (see :func:`runs_test`)."""

    statistic: float
    pvalue: float
    n_runs: int
    expected_runs: float


def runs_test(sequence: ArrayLike, *, correction: bool = False) -> RunsTestResult:
    r"""Two-sided Wald-Wolfowitz runs test of independence for a two-valued sequence.

    With :math:`n_1, n_2` the counts of the two values, :math:`N = n_1 + n_2`
    and R the number of runs,

    .. math:: \mu = \frac{2 n_1 n_2}{N} + 1,\quad
              \sigma^2 = \frac{2 n_1 n_2 (2 n_1 n_2 - N)}{N^2 (N - 1)},\quad
              z = \frac{R - \mu}{\sigma}

    and the p-value is :math:`2(1 - \Phi(|z|))` (normal approximation).

    Parameters
    ----------
    sequence : array-like of shape (n,)
        Exactly two distinct values (e.g. 0/1 moves).
    correction : bool, default=False
        Move R by 0.5 towards μ when N < 50 (continuity correction; the paper's
        sequences have N = 100, where it has no effect).

    Returns
    -------
    RunsTestResult
        NaN statistic and p-value (with a warning) when σ = 0, e.g. a sequence
        of one value only.

    References
    ----------
    Wald & Wolfowitz (1940), Ann. Math. Stat. 11(2).

    Examples
    --------
    >>> res = runs_test([0, 1] * 10)   # perfectly alternating: too many runs
    >>> res.n_runs, res.pvalue < 0.05
    (20, True)
    """
    from scipy.stats import norm

    x = np.asarray(sequence)
    if x.ndim != 1 or len(x) == 0:
        raise DataError(f"sequence must be a non-empty 1-d array; got shape {x.shape}.")
    values = np.unique(x)
    if len(values) > 2:
        raise DataError(f"sequence must hold two distinct values; got {len(values)}: {values[:5].tolist()}.")
    first = x == values[0]
    n1 = float(first.sum())
    n2 = float(len(x) - n1)
    n = n1 + n2
    runs = int(1 + np.count_nonzero(first[1:] != first[:-1]))
    mu = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1)) if n > 1 else 0.0
    if not var > 0:
        nan = undefined(
            "runs_test is undefined: the sequence needs both values and a non-zero variance of the run count."
        )
        return RunsTestResult(nan, nan, runs, mu)
    diff = runs - mu
    if correction and n < 50 and diff != 0:
        diff -= 0.5 * np.sign(diff)
    z = diff / np.sqrt(var)
    return RunsTestResult(float(z), float(2 * norm.sf(abs(z))), runs, float(mu))


def runs_test_pass_rate(sequences: Sequence[ArrayLike], *, alpha: float = 0.05) -> float:
    """Share of sequences the runs test cannot reject as random at level ``alpha`` (WW).

    Sequences where the test is undefined (one value only) count as rejected:
    a constant sequence is not random.

    Examples
    --------
    >>> runs_test_pass_rate([[0, 1] * 10, [0, 0, 1, 0, 1, 1, 0, 1, 1, 0]])
    0.5
    """
    check_number(alpha, "alpha", low=0, high=1, low_open=True, high_open=True)
    if len(sequences) == 0:
        raise DataError("sequences is empty; pass at least one sequence.")
    passed = 0
    for seq in sequences:
        x = np.asarray(seq)
        if len(np.unique(x)) < 2:
            continue
        passed += runs_test(x).pvalue >= alpha
    return passed / len(sequences)


def ngram_guesses(moves: ArrayLike, *, n: int = 4) -> NDArray[np.int64]:
    """The n-gram guesser's prediction of every move from the moves before it.

    For the history of the first i moves: with none it guesses 0; with one it
    guesses the opposite move; otherwise it uses order ``k = n`` (or ``i - 1``
    while ``i <= n``), counts which move followed each earlier occurrence of
    the last ``k`` moves, and guesses the more frequent one (0 on a tie). This
    is the rule of the paper's figure 24, written incrementally in O(i * n).

    Parameters
    ----------
    moves : array-like of shape (n_rounds,)
        0/1 moves of the player.
    n : int >= 1, default=4
        The paper reports n = 4.

    Returns
    -------
    ndarray of shape (n_rounds,)
        Guess (0/1) made before each move.

    Examples
    --------
    >>> ngram_guesses([0, 0, 0, 0, 0, 0], n=2).tolist()
    [0, 1, 0, 0, 0, 0]
    """
    order_max = int(check_number(n, "n", integer=True, low=1))
    m = check_binary(moves, "moves").astype(np.int64)
    counts = [np.zeros((1 << k, 2), dtype=np.int64) for k in range(order_max + 1)]
    guesses = np.zeros(len(m), dtype=np.int64)
    for i in range(len(m)):
        if i == 1:
            guesses[i] = 1 - m[0]
        elif i >= 2:
            k = order_max if i > order_max else i - 1
            ctx = 0
            for v in m[i - k : i]:
                ctx = (ctx << 1) | int(v)
            c0, c1 = counts[k][ctx]
            guesses[i] = 1 if c1 > c0 else 0
        # record every window that ends with move i (context of length k, then m[i])
        ctx = 0
        for k in range(1, min(order_max, i) + 1):
            ctx |= int(m[i - k]) << (k - 1)  # same code as above: oldest move highest bit
            counts[k][ctx, m[i]] += 1
    return guesses


def matching_pennies_win_rate(moves: ArrayLike, *, n: int = 4) -> float:
    """Player win rate against the n-gram guesser: share of rounds the guess misses.

    0.5 is the Nash equilibrium (random play); the paper reports 0.33 for humans.

    Parameters
    ----------
    moves : array-like of shape (n_rounds,)
        0/1 moves of the player (the "misleader").
    n : int, default=4

    Returns
    -------
    float in [0, 1]

    Examples
    --------
    >>> matching_pennies_win_rate([0, 0, 0, 0, 0, 0], n=2)   # only the 2nd guess misses
    0.16666666666666666
    """
    m = as_1d(moves, "moves")
    return float(np.mean(ngram_guesses(m, n=n) != m))
