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

__all__ = ["ColumnToText", "Granularity", "column_set", "folktexts_table", "get_column", "load_code_file"]

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
    (left-closed bins ``[e_i, e_{i+1})``), code ``groups``, label-prefix
    ``prefix_groups`` (occupation families) or inclusive code ``ranges``.
    """

    edges: tuple[float, ...] = ()
    labels: tuple[str, ...] = ()
    groups: Mapping[int, str] = field(default_factory=dict)
    prefix_groups: Mapping[str, str] = field(default_factory=dict)
    ranges: tuple[tuple[int, int, str], ...] = ()

    @classmethod
    def from_json(cls, spec: Mapping[str, Any]) -> LowGranularity:
        return cls(
            edges=tuple(spec.get("edges", ())),
            labels=tuple(spec.get("labels", ())),
            groups={int(k): v for k, v in spec.get("groups", {}).items()},
            prefix_groups=dict(spec.get("prefix_groups", {})),
            ranges=tuple((int(lo), int(hi), str(lab)) for lo, hi, lab in spec.get("ranges", ())),
        )


@dataclass(frozen=True)
class ColumnToText:
    """How the values of one column read in a prompt.

    Parameters
    ----------
    name : str
        Column name in the data (e.g. ``"AGEP"``).
    description : str
        Noun phrase used in ``"The <description> is: <value>."``.
    kind : {"categorical", "numeric"}
        Categorical values are codes looked up in ``values``; numeric values
        are formatted with ``unit``.
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
    sentences : mapping of int to str
        Whole lines that replace ``"The <description> is: <value>."`` for
        these values (folktexts words some columns as statements, e.g.
        ``"Person has given birth within the last year."``); formats other
        than the sentence formats use them as values.
    missing_sentence : str, optional
        The whole line of a blank value, for a column with ``sentences``.
    sign_after_dollar : bool
        Negative dollars as ``$-5,000`` (folktexts) instead of ``-$5,000``.

    For a numeric column, ``values`` holds exact texts of particular values
    (folktexts' wording of, e.g., an income-to-poverty ratio of 99%), used
    before the unit's format.

    Examples
    --------
    >>> age = get_column("AGEP")
    >>> age.sentence(42)
    'The age is: 42 years old.'
    >>> list(age.render(pd.Series([18, 67]), granularity="low"))
    ['18 to 24 years old', '65 to 74 years old']
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
    sentences: Mapping[int, str] = field(default_factory=dict)
    missing_sentence: str | None = None
    sign_after_dollar: bool = False

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
        if self.kind == "categorical" and not self.values and not self.sentences:
            raise ConfigError(f"column {self.name}: a categorical column needs a 'values' map or 'codes_file'")

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
        """``"The <description> is: <value>."`` (or the column's own line) for a single value."""
        whole = self.whole_lines(pd.Series([value]), granularity=granularity)[0]
        return whole if whole is not None else f"The {self.description} is: {self.value_text(value, granularity=granularity)}."

    def whole_lines(self, series: pd.Series, *, granularity: Granularity = "original") -> list[str | None]:
        """The column's own line for each value that has one (:attr:`sentences`), None for the others."""
        if not self.sentences or (granularity == "low" and self.low is not None):
            return [None] * len(series)
        out: list[str | None] = []
        for value in series:
            number = pd.to_numeric(value, errors="coerce") if value is not None else float("nan")
            if pd.isna(number):
                out.append(self.missing_sentence)
            else:
                out.append(self.sentences.get(int(number)) if float(number).is_integer() else None)
        return out

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
            if self.top_code is not None and number >= self.top_code[0]:
                return self.top_code[1]
            if self.sign_after_dollar and self.unit == "dollars" and number < 0:
                return "$-" + _format_number(-number, "dollars")[1:]
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
        if low.edges:
            idx = int(np.searchsorted(low.edges, number, side="right")) - 1
            if 0 <= idx < len(low.labels):
                return low.labels[idx]
            raise DataError(f"column {self.name}: value {number} is outside its coarse bins {low.edges}")
        code = int(number)
        if low.groups:
            if code in low.groups:
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


def load_code_file(path: str, *, strip_prefix: str | None = None, strip_suffix: str | None = None) -> tuple[dict[int, str], dict[int, str]]:
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
        "description", "kind", "values", "codes_file", "strip_prefix", "strip_suffix",
        "unit", "missing", "top_code", "low",
    }  # fmt: skip
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
    text = resources.files("folkscope.tasks").joinpath("resources", filename).read_text("utf-8")
    data = json.loads(text)
    return {name: _from_json(name, spec) for name, spec in data.items() if not name.startswith("_")}


#: column set -> (codebook files merged in order, whether folktexts' wording overrides the ACS columns)
_COLUMN_SETS = {
    "acs": (("acs_columns.json",), True),
    "acs-codebook": (("acs_columns.json",), False),
    "nist": (("acs_columns.json", "nist_columns.json"), False),
}
#: folktexts words these with a code inside a fixed text (one example value only): the codebook keeps them
_TEMPLATED = ("PUMA", "POWPUMA")


@lru_cache(maxsize=1)
def folktexts_table() -> dict[str, Any]:
    """folktexts 0.7.1's rendering table (``resources/folktexts/column_texts.json``, MIT; see its PROVENANCE.md)."""
    text = resources.files("folkscope.tasks").joinpath("resources", "folktexts", "column_texts.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _folktexts_column(spec: Mapping[str, Any], base: ColumnToText | None) -> ColumnToText:
    """A column worded as folktexts words it, keeping the codebook's kind, unit and coarse bins."""
    name, short = str(spec["name"]), str(spec["short_description"])
    head = f"The {short} {spec['connector_verb']} "
    texts = {int(k): str(v) for k, v in spec["texts"].items()}
    missing_text = str(spec["missing_text"])
    common: dict[str, Any] = {"low": base.low if base else None, "raw_labels": base.raw_labels if base else {}}
    if spec.get("use_value_map_only"):  # whole statements ("Person has given birth within the last year.")
        return ColumnToText(
            name=name, description=short, kind="categorical", values={k: v.rstrip(".") for k, v in texts.items()},
            missing=missing_text.rstrip("."), sentences=texts, missing_sentence=missing_text, **common,
        )  # fmt: skip
    values = {k: v[len(head) : -1] for k, v in texts.items() if v.startswith(head) and v.endswith(".")}
    missing = missing_text[len(head) : -1] if missing_text.startswith(head) else missing_text
    if base is not None and base.kind == "numeric":
        return replace(base, description=short, values=values, missing=missing, sign_after_dollar=True)
    return ColumnToText(name=name, description=short, kind="categorical", values=values, missing=missing, **common)


def _codebook_columns(files: tuple[str, ...]) -> dict[str, ColumnToText]:
    """The codebook column definitions of ``files``, later files overriding earlier ones."""
    merged: dict[str, ColumnToText] = {}
    for filename in files:
        merged.update(_load_json_columns(filename))
    return merged


@lru_cache(maxsize=None)
def _folktexts_columns(codebook_files: tuple[str, ...]) -> dict[str, ColumnToText]:
    base = _codebook_columns(codebook_files)
    worded = dict(base)
    for spec in folktexts_table()["columns"].values():
        name = str(spec["name"])
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or name in _TEMPLATED:  # targets such as PINCP>50000
            continue
        worded[name] = _folktexts_column(spec, base.get(name))
    return worded


def column_set(name: str = "acs") -> dict[str, ColumnToText]:
    """All column mappings of a dataset family, as a fresh dict.

    ``"acs"`` words the ACS columns exactly as folktexts 0.7.1 does (its
    rendering table, so prompts are byte-identical to folktexts');
    ``"acs-codebook"`` uses the Census codebook's labels instead. The NIST
    excerpt (``"nist"``) shares PUMS columns (AGEP, SEX, ...) and overrides
    or adds its own recodes (HISP, EDU, ...).
    """
    if name not in _COLUMN_SETS:
        raise ConfigError(
            f"unknown column set {name!r}; known: {', '.join(_COLUMN_SETS)}", parameter="columns", value=name
        )
    files, folktexts = _COLUMN_SETS[name]
    return dict(_folktexts_columns(files)) if folktexts else _codebook_columns(files)


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
