"""Wald-Wolfowitz runs test and the matching-pennies n-gram guesser."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from folkscope.errors import DataError, UndefinedMetricWarning
from folkscope.metrics import (
    matching_pennies_win_rate,
    ngram_guesses,
    runs_test,
    runs_test_pass_rate,
)

from .strategies import PROPERTY


def _reference_guess(history: list[int], n: int) -> int:
    """The guesser rule of the paper's figure 24, recomputed from scratch for one prefix."""
    if not history:
        return 0
    if len(history) == 1:
        return 1 - history[0]
    if len(history) <= n:
        return _reference_guess(history, min(n - 1, len(history) - 1))
    follow = [0, 0]
    last = history[-n:]
    for i in range(len(history) - n):
        if history[i : i + n] == last:
            follow[history[i + n]] += 1
    return 1 if follow[1] > follow[0] else 0


def test_runs_test_by_hand():
    # 0 0 1 1 0: n1 = 3, n2 = 2, R = 3 ; mu = 2*3*2/5 + 1 = 3.4
    # var = 2*3*2*(12 - 5) / (25 * 4) = 0.84 ; z = -0.4 / sqrt(0.84)
    res = runs_test([0, 0, 1, 1, 0])
    z = -0.4 / np.sqrt(0.84)
    assert res.n_runs == 3 and res.expected_runs == pytest.approx(3.4)
    assert res.statistic == pytest.approx(z)
    assert res.pvalue == pytest.approx(2 * stats.norm.cdf(z))
    # continuity correction moves R by 0.5 towards mu: (-0.4 + 0.5) / sqrt(0.84)
    assert runs_test([0, 0, 1, 1, 0], correction=True).statistic == pytest.approx(0.1 / np.sqrt(0.84))
    # works on labels too
    assert runs_test(list("HHTTH")).statistic == pytest.approx(z)


def test_runs_test_extremes():
    assert runs_test([0, 1] * 50).pvalue < 1e-10  # too many runs
    assert runs_test([0] * 50 + [1] * 50).pvalue < 1e-10  # too few runs
    with pytest.warns(UndefinedMetricWarning, match="both values"):
        assert np.isnan(runs_test([1, 1, 1]).pvalue)
    with pytest.raises(DataError, match="two distinct values"):
        runs_test([0, 1, 2])


def test_runs_pass_rate_on_random_sequences():
    rng = np.random.default_rng(0)
    seqs = [rng.integers(0, 2, 100) for _ in range(300)]
    # about 95% of truly random sequences pass at the 5% level (paper: 0.98 for python's)
    assert runs_test_pass_rate(seqs) == pytest.approx(0.95, abs=0.04)
    assert runs_test_pass_rate([[1] * 10, [0, 1] * 5]) == 0.0


def test_ngram_guesser_by_hand():
    # empty -> 0 ; one move -> the opposite ; then counts of what followed the context
    assert ngram_guesses([0, 0, 0, 0, 0, 0], n=2).tolist() == [0, 1, 0, 0, 0, 0]
    # n = 1: move 2 sees [0, 1], context "1" never followed -> tie -> 0 ;
    # move 3 sees [0, 1, 0], "0" was followed by 1 -> 1 ; move 4 sees [0, 1, 0, 1],
    # "1" was followed by 0 once -> 0
    assert ngram_guesses([0, 1, 0, 1, 1], n=1).tolist() == [0, 1, 0, 1, 0]


@PROPERTY
@given(hnp.arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 1)), st.integers(1, 5))
def test_ngram_guesser_matches_the_published_rule(moves, n):
    expected = [_reference_guess(moves[:i].tolist(), n) for i in range(len(moves))]
    assert ngram_guesses(moves, n=n).tolist() == expected


def test_win_rates():
    rng = np.random.default_rng(1)
    random_moves = rng.integers(0, 2, 5000)
    assert matching_pennies_win_rate(random_moves) == pytest.approx(0.5, abs=0.03)
    # a periodic player is read by the 4-gram guesser after a few rounds
    assert matching_pennies_win_rate([0, 0, 1] * 33 + [0]) < 0.1
    assert matching_pennies_win_rate([0, 0, 0, 0, 0, 0], n=2) == pytest.approx(1 / 6)
    with pytest.raises(DataError, match="binary"):
        matching_pennies_win_rate([0, 2, 1])
