"""Matching pennies against the n-gram guesser, on fake models."""

from __future__ import annotations

import numpy as np
import pytest

from folkscope.engine import Engine
from folkscope.errors import ConfigError
from folkscope.numeric import play_matching_pennies


def _engine(rule):
    return Engine.from_model("pennies", backend="fake", use_cache=False, progress=False, next_token_probs=rule)


def _always_heads(text):
    # " H" then "eads": the spaced "Heads" continuation gets all the mass
    if text.endswith(":"):
        return {" H": 1.0}
    if text.endswith((" H", " He", " Hea", " Head")):
        return (
            {"e": 1.0}
            if text.endswith(" H")
            else {"a": 1.0}
            if text.endswith(" He")
            else {"d": 1.0}
            if text.endswith(" Hea")
            else {"s": 1.0}
        )
    return None


def test_predictable_player_always_loses():
    res = play_matching_pennies(_engine(_always_heads), n_games=2, n_rounds=12)
    assert res.moves.shape == (2, 12) and res.heads_rate == 1.0
    assert res.mean_probability_mass == pytest.approx(1.0)
    assert res.win_rate <= 0.25 and res.runs_test_pass_rate == 0.0


def test_fair_coin_player_is_deterministic_and_wins_about_half():
    def fair(text):
        if text.endswith(":"):
            return {" H": 0.5, " T": 0.5, "H": 0.0, "T": 0.0, " h": 0.0, " t": 0.0, "h": 0.0, "t": 0.0}
        for prefix, nxt in (
            (" H", "e"),
            (" He", "a"),
            (" Hea", "d"),
            (" Head", "s"),
            (" T", "a"),
            (" Ta", "i"),
            (" Tai", "l"),
            (" Tail", "s"),
        ):
            if text.endswith(prefix):
                return {nxt: 1.0}
        return None

    a = play_matching_pennies(_engine(fair), n_games=4, n_rounds=16, seed=1)
    b = play_matching_pennies(_engine(fair), n_games=4, n_rounds=16, seed=1)
    np.testing.assert_array_equal(a.moves, b.moves)
    assert 0.3 < a.win_rate < 0.7 and 0.2 < a.heads_rate < 0.8
    assert set(a.to_dict()) == {
        "n_games",
        "n_rounds",
        "guesser_n",
        "win_rate",
        "runs_test_pass_rate",
        "mean_probability_mass",
        "heads_rate",
        "fallback_rounds",
        "fallback_nan_rounds",
        "fallback_zero_rounds",
    }
    assert a.fallback_rounds == 0 and np.allclose(a.p_heads, 0.5)


def test_bad_arguments():
    with pytest.raises(ConfigError):
        play_matching_pennies(_engine(None), n_rounds=1)
