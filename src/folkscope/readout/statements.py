"""The option a free-text answer states: "Answer: B", "C is better than A", "**B**", "I would choose option A".

A generated answer names option letters in two ways: as the answer
("Answer: C", "B is stronger", a line that is just "(B)") and in passing
("between A and B", "stronger than A", "Candidate A: 5 years"). Reading the
first capital letter confuses the two, and so does skipping every letter
followed by a lower-case word (that also skips "C is better"). Each
mention of a letter is therefore read in its place:

1. **Is it a letter at all?** Only "A" (the article) and "I" (the pronoun)
   are also English words. When a lower-case word follows on its line,
   "A" is the option only if that word is a verb or a coordinator ("A is",
   "A would", "A and B"; not "A good fit", "A better choice") and "I" only
   if it is a third-person verb or a comparison ("I is", "I has", "I over
   H"; not "I think", "I would"); "I'd", "I'm" are words. After a noun
   naming an option ("candidate I", "option A") it is always the letter, and
   so is every other capital letter.
2. **Stated**: a cue ("answer", "choice", "choose", "pick", "select",
   "prefer", "recommend", "go with") followed, through filler ("is",
   "would be", "the", "option", ":", markdown), by the letter. A lower-case
   letter counts here too ("the answer is b."), unless a word follows it
   ("the answer is a tie").
3. **In passing**: the object of a comparison or a pair ("than A", "over A",
   "between A", "nor B", "A and B", "A or B", "A, B"), or a label
   ("Candidate A:"). A letter after "and"/"or" that a verb follows is the
   subject of its own clause ("... and B is stronger"), so it is not in
   passing.
4. Every other mention is in an answer position ("B.", "(B)", "B\\n",
   "C is better", "Definitely B").

The earliest stated answer wins; without one, the earliest mention in an
answer position; without either, ``None``. Options longer than one
character (names, "Yes") are matched case-insensitively as whole words
and are stated or in an answer position. The text is tokenised once and
each mention looks at a few tokens around it: linear time.

What it does not read: negations and inverted comparisons ("A is weaker
than B" gives A; "the answer is not B" gives B), and a pronoun "I" set off
by a comma ("I, for one, ...") when "I" is an option.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from folkscope.readout.generation import strip_thinking

__all__ = ["parse_choice"]

#: words (with an inner apostrophe: "I'd", "A's"), numbers, and every other non-space character on its own
_TOKEN = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|\S")
#: after these (through filler) the option named next is the stated answer
_CUES = frozenset(
    {
        "answer",
        "answers",
        "choice",
        "choose",
        "chose",
        "chosen",
        "pick",
        "picks",
        "picked",
        "select",
        "selects",
        "selected",
        "prefer",
        "prefers",
        "preferred",
        "recommend",
        "recommends",
        "recommended",
    }
)
_GO = frozenset({"go", "going", "goes", "went", "gone"})  # "go with B"
#: nouns that name an option ("option B", "Candidate A"), skipped like markup
_NOUNS = frozenset({"option", "candidate", "resume", "letter", "applicant", "response", "profile"})
#: what may stand between a cue and its letter: "The answer is **(B)**", "I would choose candidate C"
_FILLER = (
    frozenset({"is", "would", "will", "should", "be", "the", "my", "final", "clearly", "definitely", "probably"})
    | _NOUNS
)
_OPENING = frozenset("*_([{\"'\u201c\u2018`:-=>")
_CLOSING = frozenset("*_)]}\"'\u201d\u2019`")
#: third-person verbs: the letter before one is the subject of a sentence ("B has more", "I is better")
_VERBS = frozenset(
    {
        "is",
        "was",
        "has",
        "does",
        "seems",
        "appears",
        "looks",
        "shows",
        "demonstrates",
        "offers",
        "brings",
        "fits",
        "wins",
        "beats",
        "edges",
        "stands",
        "ranks",
        "comes",
        "outperforms",
        "outshines",
        "possesses",
        "provides",
        "matches",
        "meets",
        "exceeds",
        "performs",
        "holds",
        "because",
        "since",
    }
)
_MODALS = frozenset({"would", "will", "should", "could", "can", "may", "might", "must", "did", "had"})
_ADVERBS = frozenset({"clearly", "also", "definitely", "certainly", "obviously", "better", "stronger"})
_COORDINATORS = frozenset({"and", "or", "nor", "vs", "versus", "&", "/"})
_COMPARING = frozenset({"than", "over", "with"})  # "A over B": never the article ("a over") nor the pronoun
#: a letter after one of these is the object of a comparison or one of a pair: named in passing
_RELATIONAL = frozenset(
    {
        "than",
        "over",
        "vs",
        "versus",
        "between",
        "unlike",
        "against",
        "and",
        "or",
        "nor",
        "neither",
        "either",
        "both",
        "compared",
        "to",
        "from",
        "with",
        "of",
        "like",
    }
)
_LEAVE = 8  # tokens a cue may stand before its letter


def _word(token: str) -> str:
    """A token as a word to look up: lower case, a possessive "'s" dropped."""
    token = token.lower()
    return token[:-2] if token.endswith(("'s", "\u2019s")) else token


class _Answer:
    """The tokens of one answer and the reading of each mention (see the module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        self.starts = [start for _, start, _ in self.tokens]
        self.line = []  # the line each token is on
        line, after = 0, 0
        for _, start, end in self.tokens:
            line += text.count("\n", after, start)
            self.line.append(line)
            after = end

    def next_mark(self, i: int) -> tuple[str | None, int]:
        """The token after token ``i`` on its line (closing markup skipped) and its index; None at the line's end."""
        j = i + 1
        while j < len(self.tokens) and self.tokens[j][0] in _CLOSING and self.line[j] == self.line[i]:
            j += 1
        if j >= len(self.tokens) or self.line[j] != self.line[i]:
            return None, j
        return self.tokens[j][0], j

    def next_word(self, i: int) -> str | None:
        """The word (or "&", "/") after token ``i`` on its line, lower-cased; None for another mark or the line's end."""
        token, _ = self.next_mark(i)
        if token is None or not (token[0].isalpha() or token in ("&", "/")):
            return None
        return _word(token)

    def previous(self, i: int, *, nouns: bool = True) -> tuple[str | None, int]:
        """The word before token ``i`` (opening markup, and option nouns when ``nouns``, skipped) and its index."""
        j = i - 1
        while j >= 0 and (self.tokens[j][0] in _OPENING or (nouns and _word(self.tokens[j][0]) in _NOUNS)):
            j -= 1
        return (None, -1) if j < 0 else (_word(self.tokens[j][0]), j)

    def stated(self, i: int) -> bool:
        """Token ``i`` follows a cue ("answer", "choose", "go with") through filler."""
        j, steps = i - 1, 0
        while j >= 0 and steps < _LEAVE:
            word = _word(self.tokens[j][0])
            if word in _CUES:
                return True
            if word == "with":
                return j > 0 and _word(self.tokens[j - 1][0]) in _GO
            if word not in _FILLER and self.tokens[j][0] not in _OPENING:
                return False
            j, steps = j - 1, steps + 1
        return False

    def is_letter(self, i: int) -> bool:
        """A capital that is a word in English ("A good fit", "I think", "I'd") is not the option letter."""
        token = self.tokens[i][0]
        if token not in ("A", "I"):
            return True
        following, _ = self.next_mark(i)
        if following is None or following[0].isupper():
            return True  # "A\n", "A.", "A B", "Answer: A Candidate B lacks SQL": an article is followed by a lower-case word
        if self.previous(i, nouns=False)[0] in _NOUNS:
            return True  # "candidate I over H"
        after = self.next_word(i)
        return after is None or after in (
            _VERBS | _COMPARING if token == "I" else _VERBS | _MODALS | _COORDINATORS | _COMPARING
        )

    def in_passing(self, i: int, letters: frozenset[str]) -> bool:
        """The letter is the object of a comparison, one of a pair or list, or a label ("Candidate A:")."""
        after = self.next_word(i)
        if after in _VERBS or after in _MODALS or after in _ADVERBS:
            before, _ = self.previous(i)
            return before in _RELATIONAL - {"and", "or"}  # "... and B is stronger" is a clause of its own
        mark, j = self.next_mark(i)
        if after in _COORDINATORS or mark == ",":
            if after in _COORDINATORS:
                return True
            following, _ = self.next_mark(j)
            if following in letters or _word(following or "") in ("and", "or"):
                return True  # "A, B and C"
        if mark == ":" and self.previous(i, nouns=False)[0] in _NOUNS:
            return True  # a label: "Candidate A: 5 years"
        before, k = self.previous(i)
        if before in _RELATIONAL or before in ("&", "/"):
            return True
        if before == ",":
            earlier, _ = self.previous(k)
            return earlier is not None and earlier.upper() in letters
        return False


def parse_choice(text: str, options: Sequence[str], *, strip_think: bool = True) -> int | None:
    """Index of the option a free-text answer states, or None when it states none.

    Single capital letters (``"A"``, ``"B"``) are read in their place (see
    :mod:`folkscope.readout.statements`): the earliest stated answer
    ("Answer: C", "I would choose B") wins, else the earliest letter in an
    answer position ("B.", "(B)", "C is better than A"); letters named in
    passing ("than A", "between A and B", "Candidate A:"), the article "A"
    and the pronoun "I" are not answers. Longer options (names, "Yes") are
    matched case-insensitively as whole words, the earliest winning.

    Examples
    --------
    >>> parse_choice("Answer: B. Candidate B is stronger than A.", ["A", "B", "C"])
    1
    >>> parse_choice("Answer: C is better than B.", ["A", "B", "C"]), parse_choice("B\\nbecause B has more than A.", "ABC")
    (2, 1)
    >>> parse_choice("A good candidate is B", ["A", "B"]), parse_choice("Answer: A\\nwhich is the stronger resume", ["A", "B"])
    (1, 0)
    >>> parse_choice("I think this is a close call; both are fine.", ["A", "B"]) is None
    True
    >>> parse_choice("Between A and B, neither stands out.", ["A", "B"]) is None
    True
    >>> parse_choice("yes, definitely", ["No", "Yes"])
    1
    >>> parse_choice("I think the answer is E.", list("ABCDEFGHI"))
    4
    """
    if strip_think:
        text = strip_thinking(text)
    answer = _Answer(text)
    letters = frozenset(o for o in options if len(o) == 1 and o.isupper())
    index = {o: i for i, o in reversed(list(enumerate(options)))}
    stated: tuple[int, int] | None = None
    plain: tuple[int, int] | None = None
    for t, (token, start, _) in enumerate(answer.tokens):
        letter = token[:-2] if token.endswith(("'s", "\u2019s")) else token
        if letter in letters:
            if not answer.is_letter(t):
                continue
            if answer.stated(t):
                stated = (start, index[letter])
                break  # nothing later can come before it
            if plain is None and not answer.in_passing(t, letters):
                plain = (start, index[letter])
        elif (
            len(letter) == 1
            and letter.islower()
            and letter.upper() in letters
            and answer.stated(t)
            and answer.next_word(t) is None
        ):
            stated = (start, index[letter.upper()])  # "the answer is b."
            break
    for i, option in enumerate(options):
        if option in letters or not option.strip():
            continue
        for found in re.finditer(r"(?<!\w)" + re.escape(option) + r"(?!\w)", text, re.IGNORECASE):
            t = bisect.bisect_left(answer.starts, found.start())
            if t < len(answer.tokens) and answer.stated(t):
                if stated is None or found.start() < stated[0]:
                    stated = (found.start(), i)
                break
            if plain is None or found.start() < plain[0]:
                plain = (found.start(), i)
    best = stated or plain
    return None if best is None else best[1]
