"""Rankings a model states in free text: "1. Jane Doe ... 2. Tom Lee ...", or just the order it names them.

A listwise prompt (the design of Bloomberg's 2024 GPT hiring audit) asks the
model to rank a pool of candidates; the answer is prose. :func:`parse_ranking`
reads it back:

1. a numbered list ("1. ...", "2) ...", "#3: ...") wins: each numbered line
   ranks the candidate it names first, in the order of the numbers;
2. otherwise the order in which the candidates are first mentioned;
3. candidates never mentioned tie below every mentioned one (they share the
   average of the remaining ranks).

Names match case-insensitively as whole words. A candidate whose full name
does not occur is also found by its last name, then its first name, when no
other candidate of the pool shares that word ("Smith" for "Jane Smith"). A
response naming no candidate gives ``None``, so the caller counts it as
unparseable and never scores it as a tie of everyone.

Examples
--------
>>> text = "Here is my ranking:\\n1. tom lee - strong Python\\n2. Jane Smith\\nAnn Wu was not a fit."
>>> parse_ranking(text, ["Jane Smith", "Ann Wu", "Tom Lee", "Bo Park"]).ranks.tolist()
[2.0, 3.5, 1.0, 3.5]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from folkscope.errors import ConfigError

__all__ = ["Ranking", "parse_ranking"]

#: a numbered line: "1. x", "2) x", "3: x", "#4 - x", "**5.** x"
_NUMBERED = re.compile(r"^\s*(?:[*_#]+\s*)?(\d{1,3})\s*(?:[.):]|\s-)[*_]*\s*(.*)$")


@dataclass(frozen=True, eq=False)
class Ranking:
    """A pool's ranking read from a response.

    Attributes
    ----------
    ranks : ndarray of float, shape (n_candidates,)
        1 is best; unmentioned candidates share the average of the ranks below
        the mentioned ones.
    mentioned : int
        How many candidates the response ranks explicitly.
    numbered : bool
        The ranking came from a numbered list (else from the order of first mention).
    """

    ranks: np.ndarray
    mentioned: int
    numbered: bool

    @property
    def scores(self) -> np.ndarray:
        """Rank scores comparable across pool sizes: 1 for first place down to 0 for last (1 in a pool of one).

        Examples
        --------
        >>> parse_ranking("1. Bo Lee", ["Ann Wu", "Bo Lee", "Cy Ng"]).scores.tolist()
        [0.25, 1.0, 0.25]
        """
        n = len(self.ranks)
        return np.ones(n) if n == 1 else 1.0 - (self.ranks - 1.0) / (n - 1.0)


def _aliases(candidates: Sequence[str]) -> list[list[str]]:
    """Per candidate: its full name, then its last and first names where no other candidate shares them."""
    words = [name.split() for name in candidates]
    counts: dict[str, int] = {}
    for parts in words:
        for w in {p.casefold() for p in parts}:
            counts[w] = counts.get(w, 0) + 1
    out = []
    for name, parts in zip(candidates, words):
        names = [name.strip()]
        for w in (parts[-1], parts[0]) if len(parts) > 1 else ():
            if counts[w.casefold()] == 1 and w not in names:
                names.append(w)
        out.append(names)
    return out


def _first_mentions(text: str, aliases: list[list[str]]) -> dict[int, int]:
    """Position of each candidate's first mention in ``text`` (full name first, then its unique parts)."""
    found: dict[int, int] = {}
    for i, names in enumerate(aliases):
        for alias in names:
            hit = re.search(r"(?<!\w)" + re.escape(alias) + r"(?!\w)", text, re.IGNORECASE)
            if hit:
                found[i] = hit.start()
                break
    return found


def parse_ranking(text: str, candidates: Sequence[str]) -> Ranking | None:
    """Read the ranking of ``candidates`` (their names) stated in ``text``; None when it names none of them.

    Raises
    ------
    ConfigError
        The pool is empty or names a candidate twice (its mentions could not be told apart).
    """
    names = [str(c).strip() for c in candidates]
    if not names or any(not n for n in names):
        raise ConfigError("a pool needs at least one candidate, each with a non-blank name", parameter="candidates", value=list(candidates))
    if len({n.casefold() for n in names}) != len(names):
        raise ConfigError(f"a pool names a candidate twice: {names}", parameter="candidates", value=names)
    aliases = _aliases(names)
    order: list[int] = []
    numbered_lines = []
    for line in str(text).splitlines():
        match = _NUMBERED.match(line)
        if match:
            numbered_lines.append((int(match.group(1)), len(numbered_lines), match.group(2)))
    for _, _, line in sorted(numbered_lines):
        hits = {i: pos for i, pos in _first_mentions(line, aliases).items() if i not in order}
        if hits:
            order.append(min(hits, key=hits.__getitem__))
    numbered = bool(order)
    if not numbered:
        hits = _first_mentions(str(text), aliases)
        order = sorted(hits, key=hits.__getitem__)
    if not order:
        return None
    n, m = len(names), len(order)
    ranks = np.full(n, (m + 1 + n) / 2.0)  # the unmentioned share ranks m+1..n
    ranks[order] = np.arange(1, m + 1, dtype=float)
    return Ranking(ranks, m, numbered)
