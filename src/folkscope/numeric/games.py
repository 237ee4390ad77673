"""Randomness game: the model plays matching pennies against an n-gram guesser.

The model is the "misleader": each round it sees its own earlier calls and
names the next coin face. Its move is drawn at temperature 1 from its
next-word probabilities of the two faces, renormalised over them (both
faces scored as full continuations, each summed over its tokenizations, as
in :mod:`folkscope.numeric.scoring`); the probability left on other words
is reported as ``mean_probability_mass``, so the draw never depends on
parsing free text. The guesser (:func:`folkscope.metrics.ngram_guesses`,
n = 4) predicts each move from the earlier ones; the player wins a round the
guess misses. Games run in lockstep, one engine call per round.

A round where the two faces have no usable probability (NaN, when a web
backend could not score them, or zero mass on both) is still played, as a
fair coin flip, so the game keeps its length; such rounds are counted in
:attr:`PenniesResult.fallback_rounds` and flagged per round, and the win rate
and runs test are also reported without the games that had any.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.engine import Engine, word_variants
from folkscope.errors import ConfigError
from folkscope.metrics import matching_pennies_win_rate, ngram_guesses, runs_test_pass_rate
from folkscope.prompting import PENNY_FACES, matching_pennies_prompt
from folkscope.readout import read_choices

__all__ = ["PenniesResult", "play_matching_pennies"]


@dataclass(frozen=True, eq=False)
class PenniesResult:
    """Outcome of :func:`play_matching_pennies`.

    Attributes
    ----------
    moves : ndarray of shape (n_games, n_rounds)
        1 for Heads, 0 for Tails.
    win_rate : float
        Player win rate against the guesser, averaged over games.
    runs_test_pass_rate : float
        Share of games whose sequence the runs test cannot reject as random (p = 0.05).
    mean_probability_mass : float
        Mean probability the model put on the two faces (rounds with a
        usable probability only; NaN when there is none).
    heads_rate : float
    p_heads : ndarray of shape (n_games, n_rounds)
        Probability of Heads each move was drawn with (0.5 in fallback rounds).
    mass : ndarray of shape (n_games, n_rounds)
        Probability on the two faces (NaN where the backend could not score them).
    fallback : ndarray of bool, shape (n_games, n_rounds)
        Rounds played as a fair coin because the faces had no usable probability.
    fallback_nan_rounds, fallback_zero_rounds : int
        Fallback rounds by cause: unscored (NaN) or no mass on either face.
    guesser_n : int
        Order of the n-gram guesser the games were scored against.
    """

    moves: np.ndarray
    win_rate: float
    runs_test_pass_rate: float
    mean_probability_mass: float
    heads_rate: float
    p_heads: np.ndarray
    mass: np.ndarray
    fallback: np.ndarray
    fallback_nan_rounds: int = 0
    fallback_zero_rounds: int = 0
    guesser_n: int = 4

    @property
    def fallback_rounds(self) -> int:
        """Rounds played as a fair coin flip instead of the model's probabilities."""
        return int(self.fallback.sum())

    def _clean(self) -> tuple[float, float, int]:
        """Win rate and runs-test pass rate over the games without fallback rounds."""
        clean = ~self.fallback.any(axis=1)
        if not clean.any():
            return float("nan"), float("nan"), 0
        moves = self.moves[clean]
        win = float(np.mean([matching_pennies_win_rate(m, n=self.guesser_n) for m in moves]))
        return win, runs_test_pass_rate(list(moves)), int(clean.sum())

    def to_dict(self) -> dict[str, float | int]:
        """Summary numbers (per-round arrays left out)."""
        out: dict[str, float | int] = {
            "n_games": int(self.moves.shape[0]),
            "n_rounds": int(self.moves.shape[1]),
            "guesser_n": self.guesser_n,
            "win_rate": self.win_rate,
            "runs_test_pass_rate": self.runs_test_pass_rate,
            "mean_probability_mass": self.mean_probability_mass,
            "heads_rate": self.heads_rate,
            "fallback_rounds": self.fallback_rounds,
            "fallback_nan_rounds": self.fallback_nan_rounds,
            "fallback_zero_rounds": self.fallback_zero_rounds,
        }
        if self.fallback_rounds:
            win, passed, n_clean = self._clean()
            out.update(
                win_rate_without_fallback_games=win,
                runs_test_pass_rate_without_fallback_games=passed,
                n_games_without_fallback=n_clean,
            )
        return out

    def rounds_frame(self) -> pd.DataFrame:
        """One row per (game, round): move (1 = Heads), p_heads, mass, fallback, guess, won."""
        guesses = np.stack([ngram_guesses(m, n=self.guesser_n) for m in self.moves])
        g, r = np.indices(self.moves.shape)
        return pd.DataFrame(
            {
                "game": g.ravel(),
                "round": r.ravel(),
                "move": self.moves.ravel(),
                "p_heads": self.p_heads.ravel(),
                "mass": self.mass.ravel(),
                "fallback": self.fallback.ravel(),
                "guess": guesses.ravel(),
                "player_won": (guesses != self.moves).ravel(),
            }
        )


def play_matching_pennies(
    engine: Engine, *, n_games: int = 10, n_rounds: int = 100, n: int = 4, chat: bool = False, seed: int = 0
) -> PenniesResult:
    """Play ``n_games`` games of ``n_rounds`` rounds and score them.

    Parameters
    ----------
    engine : Engine
    n_games : int >= 1, default 10
    n_rounds : int >= 2, default 100 (the paper's game length)
    n : int >= 1, default 4
        Order of the n-gram guesser.
    chat : bool, default False
        Instructions as a user turn, the transcript as assistant prefill.
    seed : int, default 0
        Seeds the draws of the moves.
    """
    for name, value, low in (("n_games", n_games, 1), ("n_rounds", n_rounds, 2), ("n", n, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}", parameter=name, value=value)
    rng = np.random.default_rng(seed)
    moves = np.zeros((n_games, n_rounds), dtype=np.int64)
    mass = np.zeros((n_games, n_rounds))
    p_heads = np.full((n_games, n_rounds), 0.5)
    fallback = np.zeros((n_games, n_rounds), dtype=bool)
    n_nan = n_zero = 0
    for r in range(n_rounds):
        prompts = [[matching_pennies_prompt(moves[g, :r].tolist(), rounds=n_rounds, chat=chat)] for g in range(n_games)]
        readout = read_choices(
            engine,
            prompts,
            PENNY_FACES,
            variants=word_variants,
            unit="games",
            description=f"matching pennies (round {r + 1} of {n_rounds})",
        )
        mass[:, r] = readout.mass[:, 0]
        for g in range(n_games):
            if np.isnan(mass[g, r]):
                fallback[g, r], n_nan = True, n_nan + 1
            elif mass[g, r] <= 0:
                fallback[g, r], n_zero = True, n_zero + 1
            else:
                p_heads[g, r] = readout.probs[g, 0]
            # one draw per round in every case, so the random stream (and every
            # later move) does not depend on whether a round fell back
            moves[g, r] = int(rng.random() < p_heads[g, r])
    win = float(np.mean([matching_pennies_win_rate(m, n=n) for m in moves]))
    usable = mass[~np.isnan(mass)]
    return PenniesResult(
        moves=moves,
        win_rate=win,
        runs_test_pass_rate=runs_test_pass_rate(list(moves)),
        mean_probability_mass=float(usable.mean()) if usable.size else float("nan"),
        heads_rate=float(moves.mean()),
        p_heads=p_heads,
        mass=mass,
        fallback=fallback,
        fallback_nan_rounds=n_nan,
        fallback_zero_rounds=n_zero,
        guesser_n=n,
    )
