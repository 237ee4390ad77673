"""Column-to-text mappings: how one survey value becomes a short English phrase.

A :class:`ColumnToText` is pure data (loaded from ``resources/*.json``), so
new columns or datasets are added by writing a file, not code. Rendering is
vectorised: a column is factorised, each *distinct* value is rendered once,
and the texts are gathered back, so 160,000 rows cost a few hundred string
formats rather than 160,000.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import numpy as np
import pandas as pd

from folkscope.errors import ConfigError, DataError, UnknownColumnError

__all__ = [
    "ColumnToText",
    "Granularity",
    "column_set",
    "folkscope_corrections",
    "folktexts_table",
    "get_column",
    "load_code_file",
]

Granularity = Literal["original", "low"]
_UNITS = ("years_old", "hours", "minutes", "dollars", "percent", "number")
#: values a survey can record, per unit (wide: PUMS top codes and negative incomes fit); outside them the data is wrong
PLAUSIBLE = {
    "years_old": (0.0, 130.0),
    "hours": (0.0, 168.0),
    "minutes": (0.0, 1440.0),
    "dollars": (-1e9, 1e9),
    "percent": (0.0, 1000.0),
    "number": (-1e12, 1e12),
}


def _format_number(value: float, unit: str) -> str:
    """Render one numeric value with its unit (the only numeric formats we allow)."""
    if unit == "dollars":
        sign = "-" if value < 0 else ""
        return f"{sign}${abs(int(round(value))):,}"
    if unit == "number":
        return f"{int(value)}" if float(value).is_integer() else f"{value:g}"
    whole = int(round(value))
    if unit == "years_old":
        return f"{whole} years old"
    if unit == "hours":
        return f"{whole} hours"
    if unit == "minutes":
        return f"{whole} minutes"
    return f"{whole}%"  # percent


@dataclass(frozen=True)
class LowGranularity:
    """Coarser bins for the ``granularity=low`` prompt variation.

    Exactly one of the four forms is set: numeric ``edges`` with ``labels``
    (left-closed bins ``[e_i, e_{i+1})``; an infinite edge is unbounded),
    code ``groups``, label-prefix ``prefix_groups`` (occupation families) or
    inclusive code ``ranges``. ``at_most`` (a value and its text) is checked
    before the bins: every number at or below it reads as that text (folktexts'
    "N/A" for working hours of 0 or less).
    """

    edges: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()
    groups: Mapping[int, str] = field(default_factory=dict)
    prefix_groups: Mapping[str, str] = field(default_factory=dict)
    ranges: tuple[tuple[int, int, str], ...] = ()
    at_most: tuple[float, str] | None = None

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> LowGranularity:
        edges = spec.get("edges", ())
        at_most = spec.get("at_most")
        return cls(
            # null ends a bin list without a bound: the first edge is -inf, the last +inf
            edges=tuple((-math.inf if i == 0 else math.inf) if e is None else float(e) for i, e in enumerate(edges)),
            labels=tuple(spec.get("labels", ())),
            groups={int(k): v for k, v in spec.get("groups", {}).items()},
            prefix_groups=dict(spec.get("prefix_groups", {})),
            ranges=tuple((int(lo), int(hi), str(lab)) for lo, hi, lab in spec.get("ranges", ())),
            at_most=(float(at_most[0]), str(at_most[1])) if at_most else None,
        )

    def retexted(self, fix: Mapping[str, str]) -> LowGranularity:
        """The same bins with each text that ``fix`` names replaced (a wording's corrections)."""
        return replace(
            self,
            labels=tuple(fix.get(t, t) for t in self.labels),
            groups={k: fix.get(v, v) for k, v in self.groups.items()},
            at_most=None if self.at_most is None else (self.at_most[0], fix.get(self.at_most[1], self.at_most[1])),
        )


@dataclass(frozen=True)
class ColumnToText:
    """How the values of one column read in a prompt.

    For a numeric column, ``values`` holds exact texts of particular values,
    used before the unit's format.

    Parameters
    ----------
    name : str
        Column name in the data (e.g. ``"AGEP"``).
    description : str
        Noun phrase used in ``"The <description> is: <value>."``.
    kind : {"categorical", "numeric"}
        Categorical values are codes looked up in ``values``; numeric values
        are formatted with ``unit`` (or ``value_format``).
    values : mapping of int to str
        Code labels (categorical only), from the Census codebook.
    unit : str, optional
        One of ``years_old, hours, minutes, dollars, percent, number``.
    missing : str, optional
        Text for a blank (not applicable) value. Without it a blank is an error.
    raw_labels : mapping of int to str
        Codebook labels before clean-up (used by prefix-based coarse groups).
    top_code : (int, str), optional
        A numeric top code with its own text (``501 -> "501% or more"``).
    low : LowGranularity, optional
        Coarse bins for ``granularity="low"``.
    value_format : str, optional
        A numeric column's text as a format, filled with ``value`` (the
        number truncated toward zero, as folktexts' ``int(x)``) and ``band``
        (see ``bands``): ``"{value} years old"``, ``"${value:,}"``. Used
        instead of ``unit``'s format (``unit`` still bounds plausible values).
    bands : tuple of (float, str)
        ``(bound, text)`` pairs, ascending: ``band`` is the text of the first
        bound above the exact number (folktexts' "below the poverty line").
    statement : bool
        The values are whole statements (``"Person has given birth within
        the last year"``): the line formats (``textbullet``, ``text``) show
        the statement as the line instead of ``"The <description> is: ..."``,
        while a blank still reads ``"The <description> is: <missing>."``.

    Examples
    --------
    >>> age = get_column("AGEP", columns="acs-codebook")
    >>> age.sentence(42)
    'The age is: 42 years old.'
    >>> list(age.render(pd.Series([18, 67]), granularity="low"))
    ['18 to 24 years old', '65 to 74 years old']
    >>> get_column("PINCP").value_text(-5000.7)
    '$-5,000'
    """

    name: str
    description: str
    kind: Literal["categorical", "numeric"]
    values: Mapping[int, str] = field(default_factory=dict)
    unit: str | None = None
    missing: str | None = None
    raw_labels: Mapping[int, str] = field(default_factory=dict)
    top_code: tuple[int, str] | None = None
    low: LowGranularity | None = None
    value_format: str | None = None
    bands: tuple[tuple[float, str], ...] = ()
    statement: bool = False

    def __post_init__(self) -> None:
        if self.kind not in ("categorical", "numeric"):
            raise ConfigError(
                f"column {self.name}: kind must be 'categorical' or 'numeric', got {self.kind!r}",
                parameter="kind",
                value=self.kind,
            )
        if self.kind == "numeric" and self.unit not in _UNITS:
            raise ConfigError(
                f"column {self.name}: numeric unit must be one of {', '.join(_UNITS)}; got {self.unit!r}",
                parameter="unit",
                value=self.unit,
            )
        if self.kind == "categorical" and not self.values:
            raise ConfigError(f"column {self.name}: a categorical column needs a 'values' map or 'codes_file'")
        if self.value_format is not None:
            try:
                self.value_format.format(value=0, band="")
            except (KeyError, IndexError, ValueError) as exc:
                raise ConfigError(
                    f"column {self.name}: value format {self.value_format!r} must use only {{value}} and {{band}} ({exc})",
                    parameter="value_format",
                    value=self.value_format,
                ) from None

    # -- one value -----------------------------------------------------------------
    def checked(self, series: pd.Series) -> pd.Series:
        """The column's values as they may go into prompts; one-line :class:`DataError` when they cannot.

        A numeric column must hold numbers (numeric text such as ``"42"``
        converts) within the plausible range of its unit: an age of 1e12 or
        ``"forty"`` is a data error, found before any model loads, not a
        strange prompt. Categorical columns are returned as they are.

        Examples
        --------
        >>> list(get_column("AGEP").checked(pd.Series(["42", 67])))
        [42, 67]
        >>> get_column("AGEP").checked(pd.Series([30, 1e12]))
        Traceback (most recent call last):
        ...
        folkscope.errors.DataError: column AGEP (age) has values outside 0..130 years_old in 1 row, e.g. 1e+12 at row 1; fix or drop those rows
        """
        if self.kind != "numeric":
            return series
        numbers = pd.to_numeric(series.astype("object").where(series.notna(), None), errors="coerce")
        text = series.notna() & numbers.isna()
        lo, hi = PLAUSIBLE[self.unit or "number"]
        outside = numbers.notna() & ~numbers.between(lo, hi)
        for bad, problem in ((text, "holds text in"), (outside, f"has values outside {lo:g}..{hi:g} {self.unit} in")):
            if bad.any():
                n = int(bad.sum())
                where = bad[bad].index[0]
                example = series.loc[where]
                shown = f"{example:g}" if isinstance(example, (int, float, np.number)) else repr(example)
                raise DataError(
                    f"column {self.name} ({self.description}) {problem} {n} row{'s' if n != 1 else ''}, "
                    f"e.g. {shown} at row {where}; fix or drop those rows"
                )
        if pd.api.types.is_numeric_dtype(series):
            return series  # already numbers: unchanged, so prompts and baselines see exactly what they saw before
        if not numbers.isna().any() and (numbers % 1 == 0).all():
            return numbers.astype(np.int64)
        return numbers

    def value_text(self, value: Any, *, granularity: Granularity = "original") -> str:
        """The phrase for a single value (see :meth:`render` for whole columns)."""
        return str(self.render(pd.Series([value]), granularity=granularity).iloc[0])

    def sentence(self, value: Any, *, granularity: Granularity = "original") -> str:
        """``"The <description> is: <value>."``, or the statement itself, for a single value."""
        text = self.value_text(value, granularity=granularity)
        if self.statements(pd.Series([value]), granularity=granularity)[0]:
            return f"{text}."
        return f"The {self.description} is: {text}."

    def statements(self, series: pd.Series, *, granularity: Granularity = "original") -> np.ndarray:
        """Per value: whether its text is a whole statement (a :attr:`statement` column's non-blank value at its own detail)."""
        if not self.statement or (granularity == "low" and self.low is not None):
            return np.zeros(len(series), dtype=bool)
        return series.notna().to_numpy()

    # -- whole columns -------------------------------------------------------------
    def render(self, series: pd.Series, *, granularity: Granularity = "original") -> pd.Series:
        """Render a whole column to text, one format per distinct value.

        Raises
        ------
        DataError
            If the column has blanks and no ``missing`` text, or codes the
            codebook does not list (the message lists them).
        """
        if granularity not in ("original", "low"):
            raise ConfigError(
                f"granularity must be 'original' or 'low', got {granularity!r}",
                parameter="granularity",
                value=granularity,
            )
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        texts = [self._render_one(u, granularity) for u in uniques]
        has_missing = bool((codes < 0).any())
        if has_missing:
            if self.missing is None:
                raise DataError(
                    f"column {self.name} has {(codes < 0).sum()} blank values and no text for "
                    "'missing'; filter those rows out or add a 'missing' label to the column definition"
                )
            texts.append(self.missing)
        lookup = np.array(texts, dtype=object)
        return pd.Series(lookup[codes], index=series.index, name=self.name, dtype=object)

    def _render_one(self, value: Any, granularity: Granularity) -> str:
        number = float(value)
        if math.isnan(number):  # float NaN that factorize kept (object columns)
            if self.missing is None:
                raise DataError(f"column {self.name} has blank values and no text for 'missing'")
            return self.missing
        if granularity == "low" and self.low is not None:
            return self._render_low(self.low, number)
        if self.kind == "numeric":
            if number.is_integer() and int(number) in self.values:
                return self.values[int(number)]
            if self.value_format is not None:
                band = next((text for bound, text in self.bands if number < bound), "")
                return self.value_format.format(value=int(number), band=band)
            if self.top_code is not None and number >= self.top_code[0]:
                return self.top_code[1]
            return _format_number(number, str(self.unit))
        code = int(number)
        if code != number or code not in self.values:
            raise DataError(
                f"column {self.name}: code {value!r} is not in its codebook "
                f"({len(self.values)} known codes); check the survey year's data dictionary "
                "or extend the column's 'values'"
            )
        return self.values[code]

    def _render_low(self, low: LowGranularity, number: float) -> str:
        if low.at_most is not None and number <= low.at_most[0]:
            return low.at_most[1]
        if low.edges:
            idx = int(np.searchsorted(low.edges, number, side="right")) - 1
            if 0 <= idx < len(low.labels):
                return low.labels[idx]
            raise DataError(f"column {self.name}: value {number} is outside its coarse bins {low.edges}")
        code = int(number)
        if low.groups:
            if code == number and code in low.groups:
                return low.groups[code]
        elif low.prefix_groups:
            raw = self.raw_labels.get(code, "")
            family = low.prefix_groups.get(raw[:3])
            if family is not None:
                return family
        elif low.ranges:
            for lo, hi, label in low.ranges:
                if lo <= code <= hi:
                    return label
        # a code without a coarse group keeps its detailed label
        return self._render_one(number, "original")


def load_code_file(
    path: str, *, strip_prefix: str | None = None, strip_suffix: str | None = None
) -> tuple[dict[int, str], dict[int, str]]:
    """Parse a PUMS code list (``"0010 .MGR-Chief Executives"``) into two maps.

    Returns the cleaned labels and the raw labels, both keyed by integer code.
    ``strip_prefix`` / ``strip_suffix`` are regular expressions removed from
    each label (occupation family prefixes, state abbreviations).
    """
    text = resources.files("folkscope.tasks").joinpath("resources", "codes", path).read_text("utf-8")
    clean: dict[int, str] = {}
    raw: dict[int, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = re.match(r"^\s*(\d+)\s+\.(.*)$", line)
        if match is None:
            raise DataError(f"code file {path}, line {lineno}: expected '<code> .<label>', got {line!r}")
        code, label = int(match.group(1)), match.group(2).strip()
        raw[code] = label
        if strip_prefix:
            label = re.sub(strip_prefix, "", label)
        if strip_suffix:
            label = re.sub(strip_suffix, "", label)
        clean[code] = label.strip()
    return clean, raw


def _from_json(name: str, spec: Mapping[str, Any]) -> ColumnToText:
    values = {int(k): v for k, v in spec.get("values", {}).items()}
    raw: dict[int, str] = {}
    if "codes_file" in spec:
        values, raw = load_code_file(
            spec["codes_file"], strip_prefix=spec.get("strip_prefix"), strip_suffix=spec.get("strip_suffix")
        )
    top = spec.get("top_code")
    unknown = set(spec) - {
        "description",
        "kind",
        "values",
        "codes_file",
        "strip_prefix",
        "strip_suffix",
        "unit",
        "missing",
        "top_code",
        "low",
    }
    if unknown:
        raise ConfigError(f"column {name}: unknown keys {sorted(unknown)} in its definition")
    return ColumnToText(
        name=name,
        description=spec["description"],
        kind=spec["kind"],
        values=values,
        unit=spec.get("unit"),
        missing=spec.get("missing"),
        raw_labels=raw,
        top_code=(int(top["value"]), str(top["label"])) if top else None,
        low=LowGranularity.from_json(spec["low"]) if "low" in spec else None,
    )


@lru_cache(maxsize=None)
def _load_json_columns(filename: str) -> dict[str, ColumnToText]:
    data = _resource_json(filename)
    return {name: _from_json(name, spec) for name, spec in data.items() if not name.startswith("_")}


#: column set -> (codebook files merged in order, the wording of its ACS columns: None keeps the codebook's)
_COLUMN_SETS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "acs": (("acs_columns.json",), "folktexts"),
    "acs-folkscope": (("acs_columns.json",), "folkscope"),
    "acs-codebook": (("acs_columns.json",), None),
    "nist": (("acs_columns.json", "nist_columns.json"), None),
}


@lru_cache(maxsize=None)
def _resource_json(*path: str) -> dict[str, Any]:
    text = resources.files("folkscope.tasks").joinpath("resources", *path).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def folktexts_table() -> dict[str, Any]:
    """folktexts 0.7.1's rendering table (``resources/folktexts/column_texts.json``, MIT; see its PROVENANCE.md)."""
    return _resource_json("folktexts", "column_texts.json")


@lru_cache(maxsize=1)
def folkscope_corrections() -> dict[str, str]:
    """Whole texts the ``folkscope`` wording replaces in folktexts' (``resources/folkscope_wording.json``): old -> new."""
    return {old: new for old, (new, _why) in _resource_json("folkscope_wording.json")["texts"].items()}


def _folktexts_column(spec: Mapping[str, Any], base: ColumnToText | None) -> ColumnToText:
    """A column as folktexts' prompts word it: ``"The <short description> is: <value-map text>."``.

    folktexts' prompt builder puts every column in that frame, also those
    it marks as whole statements (``use_value_map_only``), so FER reads
    ``"... is: Person has given birth within the last year.."`` (sic). Value
    maps that are functions are described in ``value_formats.json`` (numbers)
    or, for code files (OCCP, POBP, ST, ...), read from the table's line of
    every code. The codebook column (``base``) gives the unit that bounds
    plausible numbers; coarse values are folktexts' own
    (``low_granularity.json``; columns without them keep their text).
    """
    name, short = str(spec["name"]), str(spec["short_description"])
    low_spec = _resource_json("folktexts", "low_granularity.json").get(name)
    common: dict[str, Any] = {
        "name": name,
        "description": short,
        "missing": str(spec["missing_value_fill"]),
        "low": LowGranularity.from_json(low_spec) if low_spec else None,
    }
    value_map, rule = spec["value_map"], _resource_json("folktexts", "value_formats.json").get(name)
    if isinstance(value_map, dict):
        return ColumnToText(kind="categorical", values={int(k): str(v) for k, v in value_map.items()}, **common)
    if rule is not None:
        unit = base.unit if base is not None and base.kind == "numeric" else "number"
        bands = tuple((math.inf if b is None else float(b), str(t)) for b, t in rule.get("bands", ()))
        return ColumnToText(kind="numeric", unit=unit, value_format=str(rule["format"]), bands=bands, **common)
    head = f"The {short} {spec['connector_verb']} "
    values = {int(k): v[len(head) : -1] for k, v in spec["texts"].items() if v.startswith(head) and v.endswith(".")}
    if len(values) != len(spec["texts"]):
        raise ConfigError(
            f"column {name}: folktexts' value map is a function that value_formats.json does not describe"
        )
    return ColumnToText(kind="categorical", values=values, **common)


def _corrected(column: ColumnToText, statement: bool) -> ColumnToText:
    """folktexts' column with its inconsistencies corrected (the ``folkscope`` wording; see ``folkscope_wording.json``)."""
    fix = folkscope_corrections()
    values = {k: fix.get(v, v) for k, v in column.values.items()}
    value_format = column.value_format
    if statement:  # the statement is the line, which ends with its own period
        values = {k: v.removesuffix(".") for k, v in values.items()}
        value_format = value_format.removesuffix(".") if value_format is not None else None
    low = column.low.retexted(fix) if column.low is not None else None
    return replace(column, values=values, value_format=value_format, low=low, statement=statement)


@lru_cache(maxsize=None)
def _worded_columns(codebook_files: tuple[str, ...], wording: str) -> dict[str, ColumnToText]:
    base = _codebook_columns(codebook_files)
    worded = dict(base)
    for spec in folktexts_table()["columns"].values():
        name = str(spec["name"])
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):  # targets such as PINCP>50000
            continue
        column = _folktexts_column(spec, base.get(name))
        worded[name] = column if wording == "folktexts" else _corrected(column, bool(spec["use_value_map_only"]))
    return worded


def _codebook_columns(files: tuple[str, ...]) -> dict[str, ColumnToText]:
    """The codebook column definitions of ``files``, later files overriding earlier ones."""
    merged: dict[str, ColumnToText] = {}
    for filename in files:
        merged.update(_load_json_columns(filename))
    return merged


def column_set(name: str = "acs") -> dict[str, ColumnToText]:
    """All column mappings of a dataset family, as a fresh dict.

    ``"acs"`` words the ACS columns exactly as folktexts 0.7.1's prompts do
    (its texts and quirks, so prompts are byte-identical to folktexts');
    ``"acs-folkscope"`` is that wording with folktexts' inconsistencies
    corrected; ``"acs-codebook"`` uses the Census codebook's labels. The NIST
    excerpt (``"nist"``) shares PUMS columns (AGEP, SEX, ...) in the
    codebook's wording and overrides or adds its own recodes (HISP, EDU, ...).
    """
    if name not in _COLUMN_SETS:
        raise ConfigError(
            f"unknown column set {name!r}; known: {', '.join(_COLUMN_SETS)}", parameter="columns", value=name
        )
    files, wording = _COLUMN_SETS[name]
    return dict(_worded_columns(files, wording)) if wording else _codebook_columns(files)


def get_column(name: str, *, columns: str = "acs") -> ColumnToText:
    """Look up one column mapping, with an error listing the known columns."""
    known = column_set(columns)
    if name not in known:
        raise UnknownColumnError(
            f"no text mapping for column {name!r} in the {columns!r} column set; "
            f"known columns: {', '.join(sorted(known))}",
            parameter="column",
            value=name,
        )
    return known[name]
