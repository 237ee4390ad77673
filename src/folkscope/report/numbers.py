"""Numbers as text for consoles and sentences: one rule for decimals, undefined values and intervals.

Every console summary and page sentence used its own helper (``_fmt``,
``_number``, ``_value``, ``_num``, a local ``fmt``), each deciding anew how
an undefined value reads. Here it is decided once: undefined (None or NaN,
which JSON stores as null) is ``n/a``, never a number; an interval follows
its value in brackets when both ends are defined. HTML cells have their own
(:func:`folkscope.report.page.number`: escaping, separators, ∞).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fixed", "format_number"]


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fixed(value: Any, low: Any = None, high: Any = None, *, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``n/a`` where undefined, and ``[low, high]`` when both ends are defined.

    Examples
    --------
    >>> fixed(0.03125), fixed(None), fixed(float("nan")), fixed(0.5, 0.41, 0.6), fixed(0.5, float("nan"), 0.6)
    ('0.031', 'n/a', 'n/a', '0.500 [0.410, 0.600]', '0.500')
    >>> fixed(21.6, digits=1)
    '21.6'
    """
    if _undefined(value):
        return "n/a"
    text = f"{value:.{digits}f}"
    if not (_undefined(low) or _undefined(high)):
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def format_number(value: float) -> str:
    """A metric value for a sentence: three decimals, or two significant digits when smaller.

    Examples
    --------
    >>> format_number(0.03125), format_number(4.2e-07), format_number(21.6116), format_number(float("nan"))
    ('0.031', '4.2e-07', '21.612', 'n/a')
    """
    if not math.isfinite(value):
        return "n/a" if math.isnan(value) else str(value)
    return f"{value:.3f}" if value == 0 or abs(value) >= 0.001 else f"{value:.2g}"
