"""Rankings a model states in free text, or ``None`` when the text does not rank.

A listwise prompt (the design of Bloomberg's 2024 GPT hiring audit) asks the
model to rank a pool of candidates; the answer is prose. :func:`parse_ranking`
reads the places it states:

1. a numbered list ("1. ...", "2) ...", "#3: ...", "1st: ...") wins: each
   numbered line places the candidate it names first, in the order of the
   numbers;
2. else a list of names: two or more lines, one after the other (blank
   lines between allowed), that each hold nothing but a candidate's name
   (a bullet or markdown around it allowed), in line order;
3. else prose that ranks: the candidates named in a sentence that uses
   ranking language, in the order of their first mention there. Ranking
   language is "rank(ed/ing)", an ordinal ("first", "2nd", "last"), "then",
   "followed", "next", a comparative or superlative ("better", "stronger",
   "worse", "best", "strongest", "most/least <adjective>", "highest",
   "lowest"), "above", "below", "ahead", "behind", "order", "X > Y" or a
   word that picks (below); a heading such as "My ranking:" lends it to
   the next line. "I would rank X first, then Y" and "X is stronger than
   Y" rank; "X has five years of SQL" does not.

Candidates not placed (never named, or only described) tie below every
placed one: they share the average of the remaining ranks.

**An answer that does not rank is no ranking.** It must place at least two
candidates, or put one first: a list whose line 1 names it ("1. Jane Doe",
the rest cut off) or a sentence that picks it ("best", "strongest", "top",
"first", "most <adjective>", "highest", "prefer", "the only", "hire",
"choose", "pick", "select", "recommend", "winner", "stands out": "the most
qualified candidate is Jane Doe", "I would hire Jane Doe"). A description
of the candidates in the order shown, an echoed resume (one name, no
ranking language), a refusal or text naming nobody gives ``None``: callers
count it as unparsed and never score it (reading any text by order of first
mention turned descriptions into rankings).

Names match case-insensitively, word by word: a hyphen, an underscore or
an apostrophe inside a word joins it ("Smith" is not found in "Smith-Jones"
or "O'Smith"; "Smith's" is Smith), an apostrophe in a name is optional on
either side ("OCONNELL" finds "O'Connell"), marks between the words must be
the same ("J. Smith"), and where names overlap the longest wins ("Ann Lee
Park" is not a mention of "Ann Lee"). A candidate whose full name
does not occur anywhere in the text is also found by its last name, then its
first name, when no other candidate of the pool shares that word ("Smith"
for "Jane Smith", "Natalia Vu" for a misspelt "Natalie Vu"). One whose full
name does occur is found by it alone, so a line naming someone else with its
surname (a hallucinated "1. Maria Yang" above "4. Maya Yang") is not
credited to it. The text is split into words once: linear time.

Examples
--------
>>> text = "Here is my ranking:\\n1. tom lee - strong Python\\n2. Jane Smith\\nAnn Wu was not a fit."
>>> parse_ranking(text, ["Jane Smith", "Ann Wu", "Tom Lee", "Bo Park"]).ranks.tolist()
[2.0, 3.5, 1.0, 3.5]
>>> parse_ranking("I would rank Bo Park first, then Ann Wu.", ["Jane Smith", "Ann Wu", "Tom Lee", "Bo Park"]).ranks.tolist()
[3.5, 2.0, 3.5, 1.0]
>>> parse_ranking("Jane Smith has five years of SQL; Ann Wu knows Python.", ["Jane Smith", "Ann Wu"]) is None
True
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from folkscope.errors import ConfigError

__all__ = ["Ranking", "parse_ranking"]

#: a numbered line: "1. x", "2) x", "3: x", "#4 - x", "**5.** x", "1st: x"
_NUMBERED = re.compile(r"^\s*(?:[*_#]+\s*)?(\d{1,3})(?:st|nd|rd|th)?\s*(?:[.):]|\s-)[*_]*\s*(.*)$", re.IGNORECASE)
#: what may stand before and after a name alone on its line: bullets and markdown, markdown and a closing mark
_BEFORE_NAME = " \t*_#>+-\u2022\u00b7"
_AFTER_NAME = " \t*_.,:;"
#: words that pick one candidate: a sentence using one places the candidate it names first
_TOP_WORDS = (
    r"best",
    r"strongest",
    r"top(?!\s*\d)",
    r"first",
    r"1st",
    r"most\s+(?!of\b)[a-z]+",
    r"highest",
    r"prefer(?:s|red)?",
    r"the\s+only",
    r"hire",
    r"choose",
    r"pick",
    r"select",
    r"recommend(?:ed)?",
    r"winner",
    r"stands?\s+out",
    r"number\s+one",
)
#: ranking language: a sentence using any of these (or a top word) places the candidates it names, in order
_RANKING_WORDS = _TOP_WORDS + (
    r"rank(?:s|ed|ing|ings)?",
    r"second",
    r"third",
    r"fourth",
    r"fifth",
    r"sixth",
    r"seventh",
    r"eighth",
    r"last",
    r"\d+(?:nd|rd|th)",
    r"then",
    r"followed",
    r"next",
    r"better",
    r"stronger",
    r"weaker",
    r"weakest",
    r"worse",
    r"lowest",
    r"least\s+[a-z]+",
    r"above",
    r"below",
    r"ahead",
    r"behind",
    r"order(?:ed)?",
)
_TOP = re.compile(r"\b(?:" + "|".join(_TOP_WORDS) + r")\b", re.IGNORECASE)
_RANKING = re.compile(r"\b(?:" + "|".join(_RANKING_WORDS) + r")\b|(?<=\S)\s+-?>\s+(?=\S)", re.IGNORECASE)  # or "X > Y"
#: sentences within a line end at ".", "!" or "?" followed by a space
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, eq=False)
class Ranking:
    """A pool's ranking read from a response.

    Attributes
    ----------
    ranks : ndarray of float, shape (n_candidates,)
        1 is best; candidates not placed share the average of the ranks below
        the placed ones.
    mentioned : int
        How many candidates the response places (ranks explicitly).
    numbered : bool
        The ranking came from a list (numbered lines, or lines that each hold
        one name), else from ranking prose.
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


#: a word of a name or a text: letters and digits, joined by "-", "_" or an apostrophe ("Smith-Jones", "O'Brien")
_WORD = re.compile(r"[^\W_]+(?:[-_'\u2019][^\W_]+)*")
_APOSTROPHES = str.maketrans("", "", "'\u2019")

#: a name as mentions are compared: its words (case folded, apostrophes dropped) and the marks between them
_Key = tuple[tuple[str, ...], tuple[str, ...]]


def _words(text: str) -> list[tuple[str, int, int]]:
    """Each word of ``text`` as ``(comparable form, start, end)``; a possessive "'s" is not part of the word."""
    out = []
    for m in _WORD.finditer(text):
        word, end = m.group(), m.end()
        if len(word) > 2 and word[-2] in "'\u2019" and word[-1] in "sS":
            word, end = word[:-2], end - 2
        out.append((word.casefold().translate(_APOSTROPHES), m.start(), end))
    return out


def _key(text: str, words: list[tuple[str, int, int]]) -> _Key:
    """The words of a name and the marks between them (spaces ignored: "J. Smith" and "J.Smith" are one name).

    A line break is kept: the words of one name never span two lines ("Tom Lee\nPark" is two lines of a list).
    """
    gaps = tuple("\n" if "\n" in text[a[2] : b[1]] else text[a[2] : b[1]].strip() for a, b in pairwise(words))
    return tuple(w for w, _, _ in words), gaps


def _find(text: str, words: list[tuple[str, int, int]], names: dict[_Key, int]) -> list[tuple[int, int, int]]:
    """Mentions of ``names`` (key -> candidate) as ``(start, end, candidate)``, left to right, the longest name first.

    Names are compared word by word, so "Smith" is never found inside "Smith-Jones" or "O'Smith", and
    "Ann Lee Park" is not a mention of "Ann Lee".
    """
    by_first: dict[str, list[tuple[_Key, int]]] = {}
    for key, i in sorted(names.items(), key=lambda item: -len(item[0][0])):
        by_first.setdefault(key[0][0], []).append((key, i))
    found, at = [], 0
    while at < len(words):
        for (key_words, gaps), i in by_first.get(words[at][0], ()):
            span = words[at : at + len(key_words)]
            if tuple(w for w, _, _ in span) == key_words and _key(text, span)[1] == gaps:
                found.append((span[0][1], span[-1][2], i))
                at += len(key_words)
                break
        else:
            at += 1
    return found


def _mentions(text: str, keys: Sequence[_Key]) -> list[tuple[int, int, int]]:
    """Every mention of a candidate in ``text`` as ``(start, end, candidate)``, in order.

    A candidate whose full name occurs is found by it alone; the others also by their last, then first,
    word where no other candidate of the pool has that word.
    """
    words = _words(text)
    present = {i for _, _, i in _find(text, words, {key: i for i, key in enumerate(keys)})}
    counts: dict[str, int] = {}
    for key_words, _ in keys:
        for w in set(key_words):
            counts[w] = counts.get(w, 0) + 1
    names = {key: i for i, key in enumerate(keys)}
    for i, (key_words, _) in enumerate(keys):
        if i not in present and len(key_words) > 1:
            for w in (key_words[-1], key_words[0]):
                if counts[w] == 1:
                    names.setdefault(((w,), ()), i)
    return _find(text, words, names)


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line with the position it starts at."""
    out, at = [], 0
    for line in text.splitlines(keepends=True):
        out.append((at, line.rstrip("\r\n")))
        at += len(line)
    return out


def _in(mentions: list[tuple[int, int, int]], start: int, end: int) -> list[tuple[int, int, int]]:
    """The mentions within ``[start, end)`` (``mentions`` is in order and without overlaps: a bisection finds them)."""
    out = []
    for k in range(bisect.bisect_left(mentions, (start,)), len(mentions)):
        if mentions[k][1] > end:
            break
        out.append(mentions[k])
    return out


def _numbered(lines: list[tuple[int, str]], mentions: list[tuple[int, int, int]]) -> list[int] | None:
    """The numbered list's order, or None when it places fewer than two candidates and puts none on line 1."""
    numbered = []
    for at, line in lines:
        match = _NUMBERED.match(line)
        if match:
            numbered.append((int(match.group(1)), len(numbered), at + match.start(2), at + len(line)))
    order: list[int] = []
    top = None  # the number of the line that places the first candidate
    for number, _, start, end in sorted(numbered):
        named = [i for _, _, i in _in(mentions, start, end) if i not in order]
        if named:
            order.append(named[0])
            top = number if top is None else top
    return order if len(order) >= 2 or top == 1 else None


def _name_list(lines: list[tuple[int, str]], mentions: list[tuple[int, int, int]]) -> list[int] | None:
    """The order of the first run of two or more lines that each hold just one candidate's name, or None."""
    run: list[int] = []
    for at, line in lines:
        if not line.strip():
            continue
        named = _in(mentions, at, at + len(line))
        bare = (at + len(line) - len(line.lstrip(_BEFORE_NAME)), at + len(line.rstrip(_AFTER_NAME)))
        alone = len(named) == 1 and bare == named[0][:2]
        if alone and named[0][2] not in run:
            run.append(named[0][2])
            continue
        if len(run) >= 2:
            return run
        run = []
    return run if len(run) >= 2 else None


def _prose(lines: list[tuple[int, str]], mentions: list[tuple[int, int, int]]) -> list[int] | None:
    """Candidates named in sentences with ranking language, in order; None unless two are placed or one is picked."""
    order: list[int] = []
    picked: set[int] = set()
    lent: tuple[bool, bool] | None = None  # a heading's ("My ranking:") language, for the next line
    for at, line in lines:
        if not line.strip():
            continue
        starts = [0] + [m.end() for m in _SENTENCE_END.finditer(line)]
        ends = [m.start() for m in _SENTENCE_END.finditer(line)] + [len(line)]
        lending, lent = lent, None
        for start, end in zip(starts, ends):
            sentence = line[start:end]
            ranking, top = bool(_RANKING.search(sentence)), bool(_TOP.search(sentence))
            if lending:
                ranking, top = ranking or lending[0], top or lending[1]
            named = _in(mentions, at + start, at + end)
            if ranking and not named and sentence.rstrip(" *_").endswith(":"):
                lent = (ranking, top)
            if not ranking:
                continue
            for _, _, i in named:
                if i not in order:
                    order.append(i)
                if top:
                    picked.add(i)
    return order if len(order) >= 2 or (order and order[0] in picked) else None


def parse_ranking(text: str, candidates: Sequence[str]) -> Ranking | None:
    """The ranking of ``candidates`` (their names) that ``text`` states; None when it states none.

    See :mod:`folkscope.readout.rankings` for what counts as a ranking. ``None``
    (a description, an echoed resume, a refusal, no candidate named) is for
    the caller to count as unparsed, never to score.

    Raises
    ------
    ConfigError
        The pool is empty or names a candidate twice (its mentions could not be told apart).

    Examples
    --------
    >>> pool = ["Li Smith", "Li Smith-Jones"]
    >>> parse_ranking("1) Li Smith-Jones\\n2) Li Smith", pool).ranks.tolist()
    [2.0, 1.0]
    >>> parse_ranking("Li Smith has five years of Python.", pool) is None
    True
    """
    names = [str(c).strip() for c in candidates]
    keys = [_key(name, _words(name)) for name in names]
    if not names or any(not key_words for key_words, _ in keys):
        raise ConfigError(
            "a pool needs at least one candidate, each with a name of letters or digits",
            parameter="candidates",
            value=list(candidates),
        )
    if len(set(keys)) != len(keys):
        raise ConfigError(f"a pool names a candidate twice: {names}", parameter="candidates", value=names)
    text = str(text)
    mentions = _mentions(text, keys)
    lines = _lines(text)
    numbered = True
    order = _numbered(lines, mentions) or _name_list(lines, mentions)
    if order is None:
        numbered, order = False, _prose(lines, mentions)
    if order is None:
        return None
    n, m = len(names), len(order)
    ranks = np.full(n, (m + 1 + n) / 2.0)  # the unplaced share ranks m+1..n
    ranks[order] = np.arange(1, m + 1, dtype=float)
    return Ranking(ranks, m, numbered)
