"""Number-frequency tables for the frequency-effects analysis.

The paper (section 6) correlates calibration with the gap between how often
the two numbers of a problem occur in pre-training text. What that frequency
is depends on a corpus, so it is pluggable here: a :class:`NumberFrequencies`
table comes from a CSV file (yours, e.g. counts from an n-gram index of a
pre-training corpus) or from the small table bundled with folkscope.

CSV format (``load_number_frequencies``): lines starting with ``#`` are
comments; a header row with ``number`` (non-negative integers, each once)
and ``frequency`` (finite, >= 0; counts or relative frequencies, only ratios
and ranks matter) and optionally ``measured`` (true/false: whether the value
was counted in a corpus rather than estimated; default true, since a table
you bring is normally a count).

The bundled table (``resources/number_frequencies.csv``, built by
``scripts/build_number_frequencies.py``) holds wordfreq 3.1.1's English
frequency of the numeral of every integer 0-1000. Only 0-9 are measured:
wordfreq keeps no per-number entry for longer digit strings and estimates
them from the frequency of their digit shape (``00``, ``000``) times a
Benford share of the first digit (a year curve for 4 digits), so 51 and 59
get the same value. Its rows are marked accordingly and the analysis reports
both all rows and measured rows only. Data: CC-BY-SA 4.0, see
``resources/number_frequencies.PROVENANCE.md``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from folkscope._json import read_text_file
from folkscope.errors import ConfigError

__all__ = ["BUNDLED_FREQUENCIES", "NumberFrequencies", "load_number_frequencies"]

#: the name that selects the bundled table
BUNDLED_FREQUENCIES = "bundled"
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


@dataclass(frozen=True)
class NumberFrequencies:
    """Frequency of each number and whether it was measured or estimated.

    Attributes
    ----------
    values : mapping of int to float
        Frequency (count or share) of each number in the table.
    measured : frozenset of int
        Numbers whose value was counted in a corpus (the rest are estimates).
    source : str
        ``"bundled"`` or the file path.
    note : str
        The file's ``#`` comment lines: where the numbers come from.
    """

    values: Mapping[int, float]
    measured: frozenset[int]
    source: str
    note: str = field(default="", compare=False)

    def get(self, number: int) -> float | None:
        """Frequency of ``number``, or None when the table does not have it."""
        return self.values.get(int(number))

    def fingerprint(self) -> str:
        """SHA-256 of the sorted rows, so edited tables are told apart."""
        rows = ";".join(f"{n}:{self.values[n]!r}:{int(n in self.measured)}" for n in sorted(self.values))
        return hashlib.sha256(rows.encode()).hexdigest()

    def summary(self) -> dict[str, object]:
        """JSON-ready description (source, size, measured range)."""
        return {
            "source": self.source,
            "n_numbers": len(self.values),
            "n_measured": len(self.measured),
            "measured_range": ([min(self.measured), max(self.measured)] if self.measured else None),
            "note": self.note,
        }


def _bad(msg: str, source: str, value: object = None) -> ConfigError:
    return ConfigError(f"number-frequency table {source}: {msg}", parameter="frequency_table", value=value)


def _parse(text: str, source: str) -> NumberFrequencies:
    try:
        return _parse_rows(text, source)
    except csv.Error as exc:  # a NUL character, a field of over 128 KiB: not a table anyone wrote
        raise _bad(f"is not a CSV table folkscope can read ({exc})", source) from None


def _parse_rows(text: str, source: str) -> NumberFrequencies:
    note_lines = [ln[1:].strip() for ln in text.splitlines() if ln.lstrip().startswith("#")]
    body = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not body:
        raise _bad("holds no rows; expected a header 'number,frequency[,measured]' and rows", source)
    reader = csv.DictReader(io.StringIO("\n".join(body)))
    header = [h.strip() for h in (reader.fieldnames or [])]
    reader.fieldnames = header
    if "number" not in header or "frequency" not in header:
        raise _bad(f"needs the columns 'number' and 'frequency' (optional 'measured'); got {header}", source, header)
    values: dict[int, float] = {}
    measured: set[int] = set()
    for line, row in enumerate(reader, start=2):
        raw_n, raw_f = (row.get("number") or "").strip(), (row.get("frequency") or "").strip()
        try:
            number = int(raw_n)
        except ValueError:
            raise _bad(f"row {line}: number must be a non-negative integer, got {raw_n!r}", source, raw_n) from None
        if number < 0:
            raise _bad(f"row {line}: number must be non-negative, got {number}", source, number)
        if number in values:
            raise _bad(f"row {line}: number {number} appears twice", source, number)
        try:
            freq = float(raw_f)
        except ValueError:
            raise _bad(f"row {line}: frequency must be a number, got {raw_f!r}", source, raw_f) from None
        if not math.isfinite(freq) or freq < 0:
            raise _bad(f"row {line}: frequency must be finite and >= 0, got {raw_f!r}", source, raw_f)
        flag = (row.get("measured") or "true").strip().lower()
        if flag not in _TRUE | _FALSE:
            raise _bad(f"row {line}: measured must be true or false, got {flag!r}", source, flag)
        values[number] = freq
        if flag in _TRUE:
            measured.add(number)
    if len(values) < 2:
        raise _bad("needs at least two numbers to compare frequencies", source, len(values))
    return NumberFrequencies(values, frozenset(measured), source, "\n".join(note_lines))


def load_number_frequencies(source: str | Path = BUNDLED_FREQUENCIES) -> NumberFrequencies:
    """Load a number-frequency table: ``"bundled"`` or a CSV path (format in the module doc).

    Raises
    ------
    ConfigError
        Unreadable file, missing columns, a malformed, negative, non-finite or
        repeated row, or fewer than two numbers.

    Examples
    --------
    >>> table = load_number_frequencies()
    >>> table.get(7) > table.get(8), 7 in table.measured, 51 in table.measured
    (True, True, False)
    """
    if str(source) == BUNDLED_FREQUENCIES:
        ref = resources.files("folkscope.numeric").joinpath("resources").joinpath("number_frequencies.csv")
        return _parse(ref.read_text(encoding="utf-8"), BUNDLED_FREQUENCIES)
    text = read_text_file(
        source,
        "number-frequency table",
        error=lambda message: ConfigError(message, parameter="frequency_table", value=str(source)),
    )
    return _parse(text, str(source))
