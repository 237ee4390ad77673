"""Population filters: small, parsed (never eval'd) conditions on columns.

Syntax, one condition per string (combine several with ``&``, with commas
as folktexts writes them, ``SEX=2,RAC1P=1``, or pass a list):

============================  =========================================
``COL=V``                     equal to V (``COL==V`` too)
``COL!=V``                    not equal to V
``COL>V``, ``COL>=V``         greater than (or equal)
``COL<V``, ``COL<=V``         less than (or equal)
``COL=LO..HI``                inclusive range
``COL=V1|V2|V3``              one of several values
============================  =========================================

Values are numbers, or bare strings for text columns; ``true`` and ``false``
are 1 and 0 (folktexts reads them as Python booleans, which compare so). A
comma starts a new condition only where a ``COLUMN<op>`` follows it, so a
text value keeps its commas (``CITY=Boston, MA``) and folktexts' comma lists
(``--use-population-filter SEX=2,RAC1P=1``) read as they do there: every
condition must hold. A row with a blank in the filtered column never passes
(a blank is not ``< 65``), unless the filter is declared with
``keep_blank=True`` (see :class:`PopulationFilter`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.errors import FilterSyntaxError, UnknownColumnError

__all__ = ["PopulationFilter", "apply_filters", "parse_filters"]

_PATTERN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(==|=|!=|>=|<=|>|<)\s*(.+?)\s*$")
#: where one condition ends and the next begins: ``&``, or a comma followed by ``COLUMN<op>`` (folktexts' lists)
_SEPARATOR = re.compile(r"&|,(?=\s*[A-Za-z_][A-Za-z0-9_]*\s*(?:==|=|!=|>=|<=|>|<))")
#: folktexts reads these values as booleans, which equal 1 and 0
_BOOLEANS = {"true": 1.0, "false": 0.0}


def _parse_value(text: str, source: str) -> float | str:
    text = text.strip()
    if not text:
        raise FilterSyntaxError(f"population filter {source!r} has an empty value", parameter="filter", value=source)
    try:
        number = float(text)
    except ValueError:
        return _BOOLEANS.get(text.lower(), text)
    return text if math.isnan(number) else number  # 'nan' equals nothing: as a number it would keep no row, unsaid


def _number(value: float) -> str:
    """The text of a filter value that reads back as exactly ``value``.

    ``{:g}`` where that is exact (so ``AGEP>16`` and every filter text
    recorded so far stay as they were, fingerprints included), whole numbers
    in full (``PINCP>1234567``, not ``1.23457e+06``, which reads back as
    1234570), anything else as Python's shortest round-trip form.

    Examples
    --------
    >>> _number(16.0), _number(1234567.0), _number(0.1 + 0.2), _number(float("inf"))
    ('16', '1234567', '0.30000000000000004', 'inf')
    """
    short = f"{value:g}"
    if float(short) == value:
        return short
    return str(int(value)) if value.is_integer() else repr(value)


def _parse_cell(value: object) -> float | str:
    """A cell read the way filter values are (numbers and true/false as floats, the rest as text), so '=' compares like with like."""
    try:
        return float(str(value))
    except ValueError:
        return _BOOLEANS.get(str(value).lower(), str(value))


@dataclass(frozen=True)
class PopulationFilter:
    """One parsed condition.

    ``keep_blank`` says what a blank cell in ``column`` does: by default it
    fails the condition (the row leaves the population); with
    ``keep_blank=True`` it passes. The second is how folktables 0.0.12's
    ACSMobility population reads: folktables *drops* the rows whose age is
    at most 18 or at least 35, and a blank age is neither, so it stays
    (folktables' other filters *keep* the rows that pass, so blanks leave).
    Only task definitions declare it (``{"condition": ..., "keep_blank":
    true}`` in ``tasks.json``); filter strings never do.

    Examples
    --------
    >>> PopulationFilter.parse("AGEP=18..35")
    PopulationFilter(column='AGEP', op='range', values=(18.0, 35.0), keep_blank=False)
    >>> PopulationFilter.parse("AGEP>16").to_string()
    'AGEP>16'
    """

    column: str
    op: str  # one of = != > >= < <= range in
    values: tuple[float | str, ...]
    keep_blank: bool = False

    @classmethod
    def parse(cls, text: str) -> PopulationFilter:
        """Parse ``COL<op>VALUE``; raise :class:`FilterSyntaxError` naming the problem."""
        if not isinstance(text, str):
            raise FilterSyntaxError(
                f"a population filter must be a string, got {text!r}", parameter="filter", value=text
            )
        match = _PATTERN.match(text)
        if match is None:
            raise FilterSyntaxError(
                f"cannot parse population filter {text!r}: expected COLUMN<op>VALUE with op one of "
                "= != > >= < <=, e.g. 'AGEP>16', 'SEX=2', 'AGEP=18..35' or 'RAC1P=1|2'",
                parameter="filter",
                value=text,
            )
        column, op, raw = match.groups()
        op = "=" if op == "==" else op
        if op == "=" and ".." in raw:
            lo_text, _, hi_text = raw.partition("..")
            lo, hi = _parse_value(lo_text, text), _parse_value(hi_text, text)
            if not isinstance(lo, float) or not isinstance(hi, float):
                raise FilterSyntaxError(
                    f"population filter {text!r}: range bounds must be numbers", parameter="filter", value=text
                )
            if lo > hi:
                raise FilterSyntaxError(
                    f"population filter {text!r}: empty range, {_number(lo)} > {_number(hi)}",
                    parameter="filter",
                    value=text,
                )
            return cls(column, "range", (lo, hi))
        if op == "=" and "|" in raw:
            return cls(column, "in", tuple(_parse_value(v, text) for v in raw.split("|")))
        value = _parse_value(raw, text)
        if op in (">", ">=", "<", "<=") and not isinstance(value, float):
            raise FilterSyntaxError(
                f"population filter {text!r}: {op} needs a number, got {raw!r}", parameter="filter", value=text
            )
        return cls(column, op, (value,))

    def to_string(self) -> str:
        """The canonical text form (stable, used in config fingerprints); :meth:`parse` reads it back as this filter exactly."""

        def fmt(v: float | str) -> str:
            return _number(v) if isinstance(v, float) else v

        if self.op == "range":
            return f"{self.column}={fmt(self.values[0])}..{fmt(self.values[1])}"
        if self.op == "in":
            return f"{self.column}=" + "|".join(fmt(v) for v in self.values)
        return f"{self.column}{self.op}{fmt(self.values[0])}"

    def describe(self) -> str:
        """:meth:`to_string`, marked ``(or blank)`` for a filter a blank passes (task descriptions, fingerprints).

        Examples
        --------
        >>> PopulationFilter("AGEP", ">", (18.0,), keep_blank=True).describe()
        'AGEP>18 (or blank)'
        """
        return self.to_string() + (" (or blank)" if self.keep_blank else "")

    def require_numbers(self, why: str, example: str = "30") -> None:
        """Refuse a text value for a column that ``why`` says holds numbers (``AGEP=abc`` would keep no row)."""
        text = [value for value in self.values if not isinstance(value, float)]
        if text:
            several = f" (one of several values: '{self.column}={text[0].replace(',', '|')}')" if "," in text[0] else ""
            raise FilterSyntaxError(
                f"population filter {self.to_string()!r}: column {self.column} {why}, but {text[0]!r} is not a number; "
                f"write e.g. '{self.column}={example}'{several}",
                parameter="filter",
                value=self.to_string(),
            )

    def _comparable(self, col: pd.Series) -> pd.Series:
        """The column as numbers where the condition compares numbers; text codes like PUMA '00105' convert.

        Raises
        ------
        FilterSyntaxError
            The condition orders or ranges values (``>``, ``..``) or compares
            with a number, but the column holds text that is not numeric.
        """
        numeric_values = all(isinstance(value, float) for value in self.values)
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col) and not numeric_values:
            self.require_numbers("holds numbers")
        if pd.api.types.is_numeric_dtype(col) or not numeric_values:
            return col
        converted = pd.to_numeric(col.astype("object").where(col.notna(), None), errors="coerce")
        text = col.notna() & converted.isna()
        if text.any():
            example = str(col[text].iloc[0])
            if self.op in ("=", "!=", "in"):
                return col.astype("object").map(lambda x: x if pd.isna(x) else _parse_cell(x))
            raise FilterSyntaxError(
                f"population filter {self.to_string()!r}: column {self.column} holds text (e.g. {example!r}), which "
                f"{'a range' if self.op == 'range' else self.op} cannot order; use = or | with its values",
                parameter="filter",
                value=self.to_string(),
            )
        return converted

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the rows that pass (blanks pass only with ``keep_blank``)."""
        if self.column not in frame.columns:
            raise UnknownColumnError(
                f"population filter {self.to_string()!r} names column {self.column!r}, which the data "
                f"does not have; available: {', '.join(map(str, frame.columns))}",
                parameter="filter",
                value=self.column,
            )
        col = self._comparable(frame[self.column])
        v = self.values
        if self.op == "range":
            result = (col >= v[0]) & (col <= v[1])
        elif self.op == "in":
            result = col.isin(list(v))
        elif self.op == "=":
            result = col == v[0]
        elif self.op == "!=":
            result = (col != v[0]) & col.notna()
        elif self.op == ">":
            result = col > v[0]
        elif self.op == ">=":
            result = col >= v[0]
        elif self.op == "<":
            result = col < v[0]
        else:
            result = col <= v[0]
        passed = np.array(pd.Series(result).fillna(False), dtype=bool)
        if self.keep_blank:
            passed |= np.asarray(frame[self.column].isna(), dtype=bool)
        return passed


def parse_filters(spec: str | Iterable[str] | None) -> tuple[PopulationFilter, ...]:
    """Parse one string (conditions joined by ``&`` or folktexts' commas) or a sequence of such strings.

    Examples
    --------
    >>> [f.to_string() for f in parse_filters("SEX=2,RAC1P=1|2 & AGEP>16")]
    ['SEX=2', 'RAC1P=1|2', 'AGEP>16']
    >>> parse_filters("CITY=Boston, MA")[0].values
    ('Boston, MA',)
    """
    if spec is None:
        return ()
    parts: Sequence[str] = (
        _SEPARATOR.split(spec) if isinstance(spec, str) else [p for s in spec for p in _SEPARATOR.split(str(s))]
    )
    parsed = tuple(PopulationFilter.parse(p) for p in parts if p.strip())
    if isinstance(spec, str) and spec.strip() and not parsed:
        raise FilterSyntaxError(f"population filter {spec!r} holds no condition", parameter="filter", value=spec)
    return parsed


def apply_filters(frame: pd.DataFrame, filters: Iterable[PopulationFilter]) -> np.ndarray:
    """Combined boolean mask of several filters (all must pass)."""
    mask = np.ones(len(frame), dtype=bool)
    for flt in filters:
        mask &= flt.mask(frame)
    return mask
