"""Reading the answers the prompts ask for: thinking blocks and "Probability: X%" lines.

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
# "Probability: 73%", "**Probability**: 73 %", "probability = 0.73", "Probability: 73.5 percent"
_PROBABILITY = re.compile(
    r"probability\**\s*(?:is|of|:|=|-)?\s*\**\s*:?\s*(?P<num>\d+(?:[.,]\d+)?|[.,]\d+)\s*(?P<pct>%|percent)?",
    re.IGNORECASE,
)


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
    fraction when it is at most 1 and as a percentage otherwise. Values
    outside [0, 100] %, and text without any such statement, give ``None``.

    Examples
    --------
    >>> parse_probability("Reasoning...\\nProbability: 35%")
    0.35
    >>> parse_probability("**Probability:** 7.5 %")
    0.075
    >>> parse_probability("Probability: 0.8")
    0.8
    >>> parse_probability("I cannot tell.") is None
    True
    """
    if strip_think:
        text = strip_thinking(text)
    matches = list(_PROBABILITY.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    number = float(last.group("num").replace(",", "."))
    value = number / 100.0 if last.group("pct") or number > 1.0 else number
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None
    return value
