"""Generation parsing: thinking blocks and "Probability: X%" lines in free text.

Chain-of-thought prompts end by asking for ``Probability: X%``.
:func:`strip_thinking` removes a ``<think>...</think>`` block first (thinking
mode); :func:`parse_probability` then reads the *last* stated probability.
An unparseable answer gives ``None``, never a default such as 0.5, so the
caller can count and report it.
"""

from __future__ import annotations

import math
import re

__all__ = ["parse_probability", "strip_thinking"]

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
#: matched on the original text: positions found in ``text.lower()`` drift wherever lowering changes a
#: character's length ("İ" lowers to two code points), so the number would be read at the wrong place
_KEYWORD = re.compile("probability", re.IGNORECASE)
#: what may stand between the keyword and the number: "**Probability**: ", "probability = ", "Probability is "
_SEPARATOR = frozenset(" \t\r\n*:=_")
_CONNECTORS = ("is", "of")
# The number itself, matched at one position only (anchored, no nested repetition: linear time).
# A sign right before the digits is kept so "-30%" is refused rather than read as 30 %; "3/4" is a fraction.
_NUMBER = re.compile(
    r"(?P<sign>[-+\u2212])?(?P<num>\d+(?:[.,]\d+)?|[.,]\d+)"
    r"(?:[ \t]*/[ \t]*(?P<den>\d+(?:[.,]\d+)?))?[ \t]*(?P<pct>%|percent)?",
    re.IGNORECASE,
)


def _statement_at(text: str, start: int) -> re.Match[str] | None:
    """The number stated after the keyword ending at ``start``, or None; each character is looked at once."""
    i, n = start, len(text)
    while True:
        while i < n and text[i] in _SEPARATOR:
            i += 1
        word = next(
            (
                w
                for w in _CONNECTORS
                if text[i : i + len(w)].lower() == w and not text[i + len(w) : i + len(w) + 1].isalpha()
            ),
            None,
        )
        if word is not None:
            i += len(word)
            continue
        if i < n and text[i] == "-" and (i + 1 >= n or not text[i + 1].isdigit()):
            i += 1  # a dash used as a separator ("Probability - 30%"), not a sign
            continue
        return _NUMBER.match(text, i)


def strip_thinking(text: str) -> str:
    """Remove the thinking part of a generation.

    Everything up to the last ``</think>`` is dropped (this also covers
    templates that put the opening tag in the prompt). An opening ``<think>``
    that is never closed means the answer was cut off while thinking: the
    rest is dropped and what came before it is returned.

    Examples
    --------
    >>> strip_thinking("<think>maybe 90%?</think>\\nProbability: 40%")
    'Probability: 40%'
    >>> strip_thinking("<think>still thinking")
    ''
    """
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :].strip()
    opened = _THINK_OPEN.search(text)
    if opened:
        return text[: opened.start()].strip()
    return text.strip()


def parse_probability(text: str, *, strip_think: bool = True) -> float | None:
    """The last probability stated as ``Probability: X%`` in ``text``, as a fraction in [0, 1].

    ``X%`` (or ``X percent``) is divided by 100; a bare number is read as a
    fraction when it is at most 1 and as a percentage otherwise; ``a/b`` is
    a fraction. Negative values, values outside [0, 100] %, and text
    without any such statement give ``None``. The text is scanned once
    (linear time, whatever a model generates).

    Examples
    --------
    >>> parse_probability("Reasoning...\\nProbability: 35%")
    0.35
    >>> parse_probability("**Probability:** 7.5 %")
    0.075
    >>> parse_probability("Probability: 0.8")
    0.8
    >>> parse_probability("Probability: 3/4"), parse_probability("Probability -30%")
    (0.75, None)
    >>> parse_probability("I cannot tell.") is None
    True
    >>> parse_probability("Born in İzmir (İİİ). Probability: 35%")  # letters whose lower case is longer
    0.35
    """
    if strip_think:
        text = strip_thinking(text)
    last: re.Match[str] | None = None
    for keyword in _KEYWORD.finditer(text):
        statement = _statement_at(text, keyword.end())
        if statement is not None:
            last = statement
    if last is None:
        return None
    return _value(last)


def _value(statement: re.Match[str]) -> float | None:
    """The fraction a matched statement says, or None when it is negative, divides by zero or leaves [0, 1]."""
    if statement.group("sign") in ("-", "\u2212"):
        return None
    number = float(statement.group("num").replace(",", "."))
    if statement.group("den") is not None:
        denominator = float(statement.group("den").replace(",", "."))
        if denominator == 0:
            return None
        number = number / denominator
        value = number / 100.0 if statement.group("pct") else number
    else:
        value = number / 100.0 if statement.group("pct") or number > 1.0 else number
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None
    return value
