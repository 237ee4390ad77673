"""Text for the terminal: every command's summary fits the window and ends with the answer and the page.

A person reads a summary in an 80-column window: a 225-character table row
wraps into noise, a paragraph-long caveat pushes the numbers off screen, and
a summary that ends on a table leaves them hunting for the answer. So every
console summary is built from these few rules, decided here once:

- :func:`fit_table` drops a table's last columns (callers order them by
  importance) until its rows fit, and says how many more the page has;
- :func:`wrap` folds a sentence into lines that fit, :func:`caveat_lines`
  keeps each caveat to one line (never hidden: its start, and where the
  rest is);
- :func:`closing_lines` is every command's last block: ``answer: ...`` (the
  page's headline in plain text), then ``report: <page>``.

The width is :func:`shutil.get_terminal_size`'s: ``COLUMNS`` when set, the
window when there is one, 80 otherwise (a pipe or a log file). A path is
never cut: a line holding one may be wider than the window, since a cut path
cannot be opened.
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

__all__ = ["caveat_lines", "closing_lines", "fit_line", "fit_table", "say", "terminal_width", "wrap"]

#: the narrowest width the helpers lay text out for, however small the window says it is
_MIN_WIDTH = 40
#: the ending of a line cut short
_CUT = "…"


def terminal_width() -> int:
    """Columns of the terminal (``COLUMNS``, the window, or 80 when there is none), at least 40."""
    return max(_MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def _width(width: int | None) -> int:
    return terminal_width() if width is None else max(_MIN_WIDTH, int(width))


def wrap(text: str, *, width: int | None = None, indent: str = "  ") -> list[str]:
    """``text`` folded at spaces into lines of at most ``width``, the follow-on lines indented by ``indent``.

    Words are never split (a path or a long number stays whole, on a line of its own when it must).

    Examples
    --------
    >>> wrap("selective accuracy: 10% most confident 0.600, all rows 0.609", width=40)
    ['selective accuracy: 10% most confident', '  0.600, all rows 0.609']
    """
    return textwrap.wrap(
        text,
        width=_width(width),
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [""]


def fit_line(text: str, *, width: int | None = None, tail: str = "") -> str:
    """``text`` whole when it fits, else cut at a word and ended with ``…`` and ``tail``, to ``width`` characters.

    Examples
    --------
    >>> fit_line("Answer order drives the answer: a score changes by 0.33", width=48, tail=" (more)")
    'Answer order drives the answer: a score… (more)'
    """
    return _cut(text, _width(width), tail)


def _cut(text: str, limit: int, tail: str = "") -> str:
    """:func:`fit_line` at exactly ``limit`` characters, however small (table cells)."""
    if len(text) <= limit:
        return text
    room = max(1, limit - len(tail) - len(_CUT))
    cut = text[:room]
    space = cut.rfind(" ")
    if space > room // 2:  # cut at a word, unless that loses most of the room
        cut = cut[:space]
    return cut.rstrip(" ,;:") + _CUT + tail


def caveat_lines(messages: Iterable[str], *, width: int | None = None) -> list[str]:
    """One line per caveat: ``caveat: <message>`` whole when it fits, else its start and where the rest is.

    A caveat is never hidden, only shortened: asides in brackets go first,
    then the end of the sentence. Caveats whose shortened lines would read the
    same are said once, with how many they are.

    Examples
    --------
    >>> caveat_lines(["Scores collapse."])
    ['caveat: Scores collapse.']
    >>> caveat_lines(["The model puts a median 0% (of 5 letters) of its probability on the answer letters."], width=60)
    ['caveat: The model puts a median 0%… (details in the report)']
    """
    limit = _width(width)
    tail = "details in the report"
    first: dict[str, str] = {}  # a shortened line -> the text it was cut from
    counts: dict[str, int] = {}
    for message in messages:
        text = f"caveat: {message}"
        if len(text) > limit:
            text = re.sub(r" \([^()]*\)", "", text)
        line = fit_line(text, width=limit, tail=f" ({tail})")
        first.setdefault(line, text)
        counts[line] = counts.get(line, 0) + 1
    return [
        line if counts[line] == 1 else fit_line(text, width=limit, tail=f" ({counts[line]} caveats; {tail})")
        for line, text in first.items()
    ]


def fit_table(
    frame: pd.DataFrame,
    *,
    width: int | None = None,
    index: bool = False,
    keep: int = 1,
    formatters: Mapping[str, Callable[[Any], str]] | None = None,
    float_format: Callable[[float], str] | None = None,
    na_rep: str = "n/a",
    where: str = "the report",
) -> list[str]:
    """``frame`` as text lines no wider than ``width``: its last columns dropped until it fits, and said so.

    Columns are dropped from the right, so a caller orders them most important
    first; the first ``keep`` (and the index, when shown) always stay. Text
    cells of a table still too wide are cut with ``…``. A note line
    ``(3 more columns in the report: FPR, FNR, TNR)`` follows a cut table
    (``(12 more columns in the report)`` when the names do not fit).

    Examples
    --------
    >>> frame = pd.DataFrame({"model": ["a", "b"], "AUC": [0.61, 0.85], "ECE": [0.2, 0.13], "Brier": [0.27, 0.16]})
    >>> print("\\n".join(fit_table(frame, width=40)))
    model  AUC  ECE  Brier
        a 0.61 0.20   0.27
        b 0.85 0.13   0.16
    >>> fit_table(frame[["model", "AUC"]].assign(note="x" * 50), width=40, keep=2)[-1]
    '(1 more column in the report: note)'
    """
    limit = _width(width)
    formatters = dict(formatters or {})

    def render(table: pd.DataFrame) -> list[str]:
        shown = {k: v for k, v in formatters.items() if k in table.columns}
        text = table.to_string(index=index, formatters=shown or None, float_format=float_format, na_rep=na_rep)
        return text.splitlines()

    columns = list(frame.columns)
    n = len(columns)
    lines = render(frame)
    while n > keep and max(map(len, lines), default=0) > limit:
        n -= 1
        lines = render(frame[columns[:n]])
    table = frame[columns[:n]]
    cap = 40
    while max(map(len, lines), default=0) > limit and cap > 8:  # long names: cut the text cells, never a number
        cap -= 4
        table = table.copy()
        if index and not pd.api.types.is_numeric_dtype(table.index):
            table.index = [_cut(str(v), cap) for v in table.index]
        for column in table.columns:
            if not pd.api.types.is_numeric_dtype(table[column]):
                table[column] = [_cut(v, cap) if isinstance(v, str) else v for v in table[column]]
        lines = render(table)
    dropped = columns[n:]
    if dropped:
        more = f"{len(dropped)} more column{'s' if len(dropped) > 1 else ''} in {where}"
        named = f"({more}: {', '.join(map(str, dropped))})"
        lines.append(named if len(named) <= limit else f"({more})")
    return lines


def closing_lines(answer: str, page: str | os.PathLike[str], *, width: int | None = None) -> list[str]:
    """Every command's last block: ``answer: <the one-line answer>`` (folded to the width), then ``report: <page>``.

    The answer comes last but one so that it is what stays on screen; the
    page, last, is where every number and caveat behind it is.

    Examples
    --------
    >>> closing_lines("AUC 0.545 [0.424, 0.680]: no signal", "results/run/report.html")
    ['', 'answer: AUC 0.545 [0.424, 0.680]: no signal', 'report: results/run/report.html']
    """
    return ["", *wrap(f"answer: {answer}", width=width, indent=" " * len("answer: ")), f"report: {page}"]


def say(text: str, *, width: int | None = None) -> None:
    """Print ``text`` folded to the width (:func:`wrap`)."""
    print("\n".join(wrap(text, width=width)))
