"""Answer orderings: which letter stands for which choice, for order-bias correction.

A multiple-choice question is asked once per ordering of its choices; the
scores are averaged over orderings so a model's preference for "A" cancels
out. :func:`answer_orderings` lists the orderings (all permutations, or the
cyclic rotations, optionally capped with seeded random ones), identity first.
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from folkscope.errors import ConfigError

__all__ = ["LETTERS", "AnswerOrdering", "answer_orderings", "option_text"]

#: Letters used for answer options, in display order.
LETTERS = tuple(string.ascii_uppercase)


def option_text(text: str) -> str:
    """Choice text as listed after its letter: a trailing period is added unless it ends a sentence."""
    return text if text.endswith((".", "?", "!")) else f"{text}."


@dataclass(frozen=True)
class AnswerOrdering:
    """One ordering of a question's choices.

    Attributes
    ----------
    index : int
        Position in the list of orderings (0 is the task's own order).
    permutation : tuple of int
        ``permutation[i]`` is the index (in the task's choice list) of the
        choice shown under the i-th letter.
    letters, texts, labels : tuple
        Per displayed position: the letter, the choice text and its label.

    Examples
    --------
    >>> o = AnswerOrdering.make(1, (1, 0), texts=("Below $50,000", "Above $50,000"), labels=(0, 1))
    >>> o.letters, o.texts, o.letter_of(1), o.candidates
    (('A', 'B'), ('Above $50,000', 'Below $50,000'), 'A', (' A', ' B'))
    """

    index: int
    permutation: tuple[int, ...]
    letters: tuple[str, ...]
    texts: tuple[str, ...]
    labels: tuple[int, ...]

    @classmethod
    def make(
        cls, index: int, permutation: Sequence[int], *, texts: Sequence[str], labels: Sequence[int]
    ) -> AnswerOrdering:
        perm = tuple(int(p) for p in permutation)
        if sorted(perm) != list(range(len(texts))) or len(texts) != len(labels):
            raise ConfigError(f"ordering {perm} is not a permutation of {len(texts)} choices", parameter="ordering")
        if len(perm) > len(LETTERS):
            raise ConfigError(f"at most {len(LETTERS)} answer options can be lettered, got {len(perm)}")
        return cls(
            index=index,
            permutation=perm,
            letters=LETTERS[: len(perm)],
            texts=tuple(texts[p] for p in perm),
            labels=tuple(int(labels[p]) for p in perm),
        )

    @property
    def candidates(self) -> tuple[str, ...]:
        """Continuations to score after the prefill (``" A"``, ``" B"``; the engine adds tokenization variants)."""
        return tuple(f" {letter}" for letter in self.letters)

    @property
    def key(self) -> str:
        """Compact id of the permutation, e.g. ``"10"`` (``"1-0"`` beyond 10 choices)."""
        sep = "" if len(self.permutation) <= 10 else "-"
        return sep.join(map(str, self.permutation))

    def letter_of(self, label: int) -> str:
        """The letter under which the choice with ``label`` is shown."""
        try:
            return self.letters[self.labels.index(int(label))]
        except ValueError:
            raise ConfigError(f"label {label!r} is not one of the choices' labels {self.labels}", value=label) from None

    def label_of(self, letter: str) -> int:
        """The label of the choice shown under ``letter``."""
        return self.labels[self.letters.index(letter)]

    def options_block(self) -> str:
        """``"A. Below $50,000.\\nB. Above $50,000.\\n"``."""
        return "".join(f"{letter}. {option_text(text)}\n" for letter, text in zip(self.letters, self.texts))

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "permutation": list(self.permutation),
            "letters": list(self.letters),
            "texts": list(self.texts),
            "labels": list(self.labels),
        }


def _permutations(n: int, scheme: str, max_orderings: int | None, seed: int) -> list[tuple[int, ...]]:
    identity = tuple(range(n))
    if scheme == "identity":
        return [identity]
    if scheme == "cyclic":
        perms = [identity[k:] + identity[:k] for k in range(n)]
        return perms[:max_orderings] if max_orderings else perms
    if scheme != "all":
        raise ConfigError(
            f"ordering scheme must be 'all', 'cyclic' or 'identity', got {scheme!r}",
            parameter="ordering_scheme",
            value=scheme,
        )
    total = math.factorial(n)
    if max_orderings is None or total <= max_orderings:
        return list(itertools.permutations(identity))
    # too many to list: the identity plus distinct seeded random permutations
    rng = np.random.default_rng(seed)
    chosen = [identity]
    seen = {identity}
    while len(chosen) < max_orderings:
        perm = tuple(int(i) for i in rng.permutation(n))
        if perm not in seen:
            seen.add(perm)
            chosen.append(perm)
    return chosen


def answer_orderings(
    texts: Sequence[str],
    labels: Sequence[int] | None = None,
    *,
    scheme: str = "all",
    max_orderings: int | None = None,
    seed: int = 0,
) -> tuple[AnswerOrdering, ...]:
    """Every ordering of the choices to ask (identity first).

    Parameters
    ----------
    texts : sequence of str
        Choice texts in the task's order.
    labels : sequence of int, optional
        Label of each choice (default ``0..n-1``).
    scheme : {"all", "cyclic", "identity"}
        All ``n!`` permutations, the ``n`` rotations, or only the task's order.
    max_orderings : int, optional
        Cap: beyond it, ``"all"`` keeps the identity plus seeded random
        distinct permutations (the epidemiology part uses 120), ``"cyclic"``
        keeps the first rotations.
    seed : int
        Seed of the random permutations.

    Examples
    --------
    >>> [o.key for o in answer_orderings(["No", "Yes"])]
    ['01', '10']
    >>> [o.key for o in answer_orderings(["a", "b", "c"], scheme="cyclic")]
    ['012', '120', '201']
    >>> len(answer_orderings([str(i) for i in range(6)], max_orderings=120))
    120
    """
    labels = list(range(len(texts))) if labels is None else list(labels)
    if len(texts) < 1:
        raise ConfigError("a question needs at least one answer choice", parameter="choices")
    perms = _permutations(len(texts), scheme, max_orderings, seed)
    return tuple(AnswerOrdering.make(i, p, texts=texts, labels=labels) for i, p in enumerate(perms))
