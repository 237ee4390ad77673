"""ACS PUMS person records: fetch the Census Bureau's archives once, keep parquet.

Why one module: it owns one source's whole lifecycle (archive names by year,
fetch with checksums, convert to parquet, the sidecar that says what a
parquet file holds), and each step reads the others' file conventions.

The Census Bureau publishes one zip per state, survey year and horizon at
``{base}/{year}/{horizon}/csv_p{state}.zip`` (``csv_pca.zip`` for California),
holding ``psam_p{fips}.csv`` (``ss{yy}p{state}.csv`` before 2017). These are
the files folktables reads. Converting them to compactly typed parquet once
makes later loads take seconds instead of minutes.

Cache layout under ``<data_dir>/pums/{year}/{horizon}/``::

    csv_p{state}.zip           the archive as published (kept so a wider
                               column selection never needs the network)
    psam_p{fips}.parquet       the typed copy that :func:`load_pums` reads
    psam_p{fips}.parquet.json  sidecar: source URL, size, SHA-256, rows,
                               columns; written last, so it commits the cache
    psam_p{fips}.lock          serialises processes building the same state

Every file appears by atomic rename, so a run killed at any moment leaves
either a complete, verified cache entry or none.
"""

from __future__ import annotations

import math
import os
import re
import urllib.error
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from folkscope.data.cache import cache_lock, read_sidecar, write_sidecar
from folkscope.data.download import download_file, sha256_file
from folkscope.errors import ConfigError, DownloadError, IntegrityError, UnknownColumnError
from folkscope.paths import data_home

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "FIRST_YEAR",
    "HORIZONS",
    "default_states",
    "download_pums",
    "load_pums",
    "pums_url",
    "state_fips",
]

#: Where the Census Bureau publishes PUMS files.
DEFAULT_BASE_URL = "https://www2.census.gov/programs-surveys/acs/data/pums"
#: Environment variable that replaces :data:`DEFAULT_BASE_URL` (mirrors, tests).
BASE_URL_ENV = "FOLKSCOPE_PUMS_BASE_URL"
#: Survey horizons the Census Bureau publishes person files for.
HORIZONS = ("1-Year", "5-Year")
#: Earliest survey year whose archives use the layout this module reads.
FIRST_YEAR = 2014

_FORMAT = 1  # bump when the parquet layout changes, so old caches are rebuilt
# Alphanumeric in the codebook; kept as text even when a file holds only digits.
_TEXT_COLUMNS = frozenset({"RT", "SERIALNO", "NAICSP", "SOCP"})
# Few distinct values: categorical after loading saves memory on millions of rows.
_CATEGORY_COLUMNS = ("RT", "NAICSP", "SOCP")
_BLOCK_BYTES = 16 << 20  # CSV bytes per batch: bounds conversion memory
_INT_TYPES = tuple((name, np.iinfo(name)) for name in ("int8", "int16", "int32", "int64"))
_PERSON_CSV = re.compile(r"(psam_p\d{2}|ss\d{2}p[a-z]{2})\.csv", re.IGNORECASE)
_ST_LINE = re.compile(r"(\d{2}) \.([^/\n]+)/([A-Z]{2})")


def pums_url(year: int, horizon: str, state: str, *, base_url: str | None = None) -> str:
    """Address of one state's person-record archive.

    Parameters
    ----------
    year : int
        Survey year, from 2014 to last year.
    horizon : {"1-Year", "5-Year"}
        Survey horizon.
    state : str
        Two-letter USPS abbreviation (case-insensitive), e.g. ``"CA"``.
    base_url : str, optional
        Replaces ``$FOLKSCOPE_PUMS_BASE_URL``, itself replacing the Census URL.

    Examples
    --------
    >>> pums_url(2018, "1-Year", "CA", base_url="https://www2.census.gov/programs-surveys/acs/data/pums")
    'https://www2.census.gov/programs-surveys/acs/data/pums/2018/1-Year/csv_pca.zip'
    """
    _check_year(year)
    _check_horizon(horizon)
    abbr = _check_states([state])[0]
    base = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    return f"{base.rstrip('/')}/{year}/{horizon}/csv_p{abbr.lower()}.zip"


def download_pums(
    states: str | Iterable[str] | None = None,
    year: int = 2018,
    horizon: str = "1-Year",
    data_dir: str | os.PathLike[str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    force: bool = False,
    progress: bool | None = None,
    base_url: str | None = None,
) -> list[Path]:
    """Make sure each state's person records are cached as parquet.

    Nothing is downloaded or converted when the cache already covers the
    request; a cached archive is reconverted (without the network) when a
    wider column selection is asked for.

    Parameters
    ----------
    states : str or iterable of str, optional
        USPS abbreviations. Default: the 50 states and Puerto Rico, as in
        folktables (``"DC"`` is available on request).
    year : int, default 2018
        Survey year, from 2014 to last year.
    horizon : {"1-Year", "5-Year"}
        Survey horizon.
    data_dir : path-like, optional
        Cache root (the CLI's ``--data-dir``); default :func:`folkscope.paths.data_home`.
    columns : sequence of str, optional
        Keep only these columns (``ST`` is always kept) to save disk; default all.
    force : bool, default False
        Download and convert again even if cached.
    progress : bool, optional
        Progress bar on stderr; default only on an interactive terminal.
    base_url : str, optional
        Mirror of the Census PUMS folder, see :func:`pums_url`.

    Returns
    -------
    list of pathlib.Path
        ``<data_dir>/pums/{year}/{horizon}/psam_p{fips}.parquet``, one per state.

    Raises
    ------
    ConfigError
        Unknown state, horizon or year, or malformed ``columns``.
    UnknownColumnError
        A requested column is not in the survey file.
    DownloadError
        The archive could not be fetched (offline, refused); the message says how
        to work offline.
    IntegrityError
        The archive was damaged twice in a row.
    """
    abbrs, keep = _check_request(states, year, horizon, columns)
    folder = _folder(data_dir, year, horizon)
    folder.mkdir(parents=True, exist_ok=True)
    return [_ensure_state(folder, year, horizon, abbr, keep, force, progress, base_url) for abbr in abbrs]


def load_pums(
    states: str | Iterable[str] | None = None,
    year: int = 2018,
    horizon: str = "1-Year",
    data_dir: str | os.PathLike[str] | None = None,
    *,
    columns: Sequence[str] | None = None,
    download: bool = True,
    base_url: str | None = None,
) -> pd.DataFrame:
    """Person records of the given states as one table, from the parquet cache.

    Parameters
    ----------
    states, year, horizon, data_dir, base_url
        As in :func:`download_pums`.
    columns : sequence of str, optional
        Read only these columns, in this order; default all (``ST`` included,
        so concatenated states stay distinguishable).
    download : bool, default True
        Fetch what is missing. With False, only the cache is read and a missing
        state raises :class:`~folkscope.errors.DownloadError`.

    Returns
    -------
    pandas.DataFrame
        One row per person. Integer codes use the smallest integer dtype that
        holds them (nullable ``Int*`` where the file has blanks, so ``PINCP``
        and ``PWGTP`` stay exact); ``SERIALNO`` is text; ``RT``, ``NAICSP`` and
        ``SOCP`` are categorical.
    """
    abbrs, keep = _check_request(states, year, horizon, columns)
    if download:
        paths = download_pums(abbrs, year, horizon, data_dir, columns=keep, base_url=base_url)
    else:
        folder = _folder(data_dir, year, horizon)
        paths = [_cached_parquet(folder, year, horizon, abbr, keep) for abbr in abbrs]
    frames = [_read_parquet(path, keep) for path in paths]
    table = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    for name in _CATEGORY_COLUMNS:
        if name in table.columns:
            table[name] = table[name].astype("category")
    return table


# --- validation --------------------------------------------------------------


def state_fips(state: str) -> str:
    """Two-digit FIPS code of a USPS state abbreviation (case-insensitive).

    Examples
    --------
    >>> state_fips("ca"), state_fips("PR")
    ('06', '72')
    """
    return _fips_table()[_check_states([state])[0]]


def default_states() -> list[str]:
    """The states loaded when none are named: the 50 states and Puerto Rico.

    This is folktables' list, so results compare with work built on it; the
    District of Columbia (``"DC"``) is available on request.
    """
    return [abbr for abbr in _fips_table() if abbr != "DC"]


@lru_cache(maxsize=1)
def _fips_table() -> dict[str, str]:
    """USPS abbreviation -> two-digit FIPS code, from the bundled codebook list."""
    text = (files("folkscope") / "tasks" / "resources" / "codes" / "ST.txt").read_text(encoding="utf-8")
    return {abbr: fips for fips, _name, abbr in _ST_LINE.findall(text)}


def _check_request(
    states: str | Iterable[str] | None, year: int, horizon: str, columns: Sequence[str] | None
) -> tuple[list[str], list[str] | None]:
    """Validate everything before touching disk or network."""
    _check_year(year)
    _check_horizon(horizon)
    return _check_states(states), _check_columns(columns)


def _check_year(year: int) -> None:
    latest = date.today().year - 1  # a survey year is published the autumn after it ends
    if isinstance(year, bool) or not isinstance(year, (int, np.integer)) or not FIRST_YEAR <= year <= latest:
        raise ConfigError(
            f"year must be an integer from {FIRST_YEAR} to {latest} (the latest survey that can be out), got {year!r}",
            parameter="year",
            value=year,
        )


def _check_horizon(horizon: str) -> None:
    if horizon not in HORIZONS:
        raise ConfigError(
            f"horizon must be one of {', '.join(map(repr, HORIZONS))}, got {horizon!r}",
            parameter="horizon",
            value=horizon,
        )


def _check_states(states: str | Iterable[str] | None) -> list[str]:
    if states is None:
        return default_states()
    given = [states] if isinstance(states, str) else list(states)
    known = _fips_table()
    abbrs: list[str] = []
    for state in given:
        abbr = state.upper() if isinstance(state, str) else ""
        if abbr not in known:
            raise ConfigError(
                f"unknown state abbreviation {state!r}; use two-letter USPS codes: {', '.join(known)}",
                parameter="states",
                value=state,
            )
        if abbr not in abbrs:
            abbrs.append(abbr)
    if not abbrs:
        raise ConfigError(
            "states is empty; name at least one state, or pass None for all", parameter="states", value=states
        )
    return abbrs


def _check_columns(columns: Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    given = [columns] if isinstance(columns, str) else list(columns)
    if isinstance(columns, str) or not given or not all(isinstance(c, str) for c in given):
        raise ConfigError(
            f"columns must be a non-empty list of column names such as ['AGEP', 'PINCP'], got {columns!r}",
            parameter="columns",
            value=columns,
        )
    return list(dict.fromkeys(given))


# --- cache -------------------------------------------------------------------


def _folder(data_dir: str | os.PathLike[str] | None, year: int, horizon: str) -> Path:
    root = Path(data_dir) if data_dir is not None else data_home()
    return root / "pums" / str(year) / horizon


def _ensure_state(
    folder: Path,
    year: int,
    horizon: str,
    abbr: str,
    keep: list[str] | None,
    force: bool,
    progress: bool | None,
    base_url: str | None,
) -> Path:
    """Return the state's parquet, fetching and converting only what the cache lacks."""
    fips = _fips_table()[abbr]
    parquet = folder / f"psam_p{fips}.parquet"
    with cache_lock(folder, f"psam_p{fips}"):
        record = None if force else read_sidecar(parquet, _FORMAT)
        if record is not None and _covers(record, keep):
            return parquet
        if keep is not None and record is not None:
            keep = [*record["columns"], *keep]  # widen, never narrow, what is cached
        url = pums_url(year, horizon, abbr, base_url=base_url)
        archive = folder / f"csv_p{abbr.lower()}.zip"
        _ensure_archive(url, archive, force=force, progress=progress, folder=folder)
        try:
            rows, stored = _convert(archive, parquet, int(fips), keep)
        except pa.ArrowInvalid as exc:  # sound zip, unparseable CSV: re-fetching may help
            raise IntegrityError(
                f"{archive}: the person CSV cannot be parsed ({exc}); call download_pums(force=True)"
            ) from exc
        source = {"source_url": url, "source_bytes": archive.stat().st_size, "source_sha256": sha256_file(archive)}
        record = {"format": _FORMAT, **source, "rows": rows, "columns": stored, "complete": keep is None}
        write_sidecar(parquet, record)
    return parquet


def _cached_parquet(folder: Path, year: int, horizon: str, abbr: str, keep: list[str] | None) -> Path:
    """The state's parquet if the cache covers ``keep``; never touches the network."""
    parquet = folder / f"psam_p{_fips_table()[abbr]}.parquet"
    record = read_sidecar(parquet, _FORMAT)
    if record is None or not _covers(record, keep):
        what = "is not cached" if record is None else "is cached without some requested columns"
        raise DownloadError(
            f"PUMS {year} {horizon} for {abbr} {what} under {folder} and download=False. "
            "Call download_pums() where the network is available, or pass --data-dir (data_dir=) "
            "pointing at a folder that holds the cache; the bundled sample data works offline."
        )
    return parquet


def _covers(record: dict[str, Any], keep: list[str] | None) -> bool:
    if record.get("complete"):
        return True
    return keep is not None and set(keep) <= set(record.get("columns", ()))


def _ensure_archive(url: str, archive: Path, *, force: bool, progress: bool | None, folder: Path) -> None:
    """Reuse a sound cached archive, else download a verified one."""
    if archive.exists() and not force:
        try:
            _check_archive(archive)
            return
        except IntegrityError:
            archive.unlink()
    try:
        download_file(url, archive, validate=_check_archive, progress=progress)
    except DownloadError as exc:
        raise type(exc)(f"{exc} {_download_hint(exc, folder)}") from exc


def _download_hint(exc: DownloadError, folder: Path) -> str:
    if isinstance(exc, IntegrityError):
        return "The server sent a damaged archive; try again later."
    if isinstance(exc.__cause__, urllib.error.HTTPError):
        return "Check that the Census Bureau publishes this year and horizon."
    return (
        f"If this machine is offline, pass --data-dir (data_dir=) pointing at a folder that already "
        f"holds the PUMS cache (looked in {folder}); the bundled sample data works offline."
    )


def _check_archive(path: Path) -> None:
    """Raise IntegrityError unless ``path`` is a zip whose CRCs match and holds a person CSV."""
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            _person_member(zf)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise IntegrityError(f"{path.name} is not a readable zip archive ({exc})") from exc
    if bad is not None:
        raise IntegrityError(f"{path.name}: member {bad} fails its CRC check (corrupt download)")


def _person_member(zf: zipfile.ZipFile) -> str:
    names = [n for n in zf.namelist() if _PERSON_CSV.fullmatch(n.rsplit("/", 1)[-1])]
    if len(names) != 1:
        raise IntegrityError(f"expected one person CSV (psam_pNN.csv or ssYYpXX.csv) in the archive, found {names}")
    return names[0]


# --- conversion --------------------------------------------------------------


@dataclass
class _ColumnStats:
    """What pass one learns about a column, to choose its compact dtype."""

    text: bool = False
    low: float = math.inf
    high: float = -math.inf
    nulls: bool = False
    integral: bool = True

    def update(self, values: pa.Array) -> None:
        self.nulls |= values.null_count > 0
        if self.text:
            return
        try:
            numbers = pc.cast(values, pa.float64())
        except pa.ArrowInvalid:
            self.text = True
            return
        bounds = pc.min_max(numbers)
        if bounds["min"].is_valid:
            self.low = min(self.low, bounds["min"].as_py())
            self.high = max(self.high, bounds["max"].as_py())
        self.integral &= pc.all(pc.equal(pc.floor(numbers), numbers)).as_py() is not False

    def dtype(self) -> Any:
        if self.text:
            return pd.StringDtype()
        if not self.integral:
            return "float64"  # no PUMS person column has fractions; keep any that appear exact
        for name, info in _INT_TYPES:
            if info.min <= self.low and self.high <= info.max:
                return name.capitalize() if self.nulls else name  # "Int16" keeps blanks as <NA>
        return "float64"


def _convert(archive: Path, parquet: Path, fips: int, keep: list[str] | None) -> tuple[int, list[str]]:
    """Write the archive's person CSV as compact parquet; return rows and columns."""
    with zipfile.ZipFile(archive) as zf:
        member = _person_member(zf)
        columns = _pick_columns(_csv_header(zf, member), keep)
        stats = {c: _ColumnStats(text=c in _TEXT_COLUMNS) for c in columns}
        for batch in _csv_batches(zf, member, {c: pa.string() for c in columns}):
            for name, values in zip(batch.schema.names, batch.columns):
                stats[name].update(values)
        dtypes = {c: s.dtype() for c, s in stats.items()}
        add_state = "ST" not in dtypes
        if add_state:
            dtypes["ST"] = "int8"
        empty = pd.DataFrame({c: pd.Series([], dtype=d) for c, d in dtypes.items()})
        schema = pa.Schema.from_pandas(empty, preserve_index=False)
        types = {c: pa.string() if s.text else pa.float64() for c, s in stats.items()}
        rows = _write_parquet(_csv_batches(zf, member, types), schema, parquet, fips if add_state else None)
    return rows, list(dtypes)


def _csv_header(zf: zipfile.ZipFile, member: str) -> list[str]:
    with zf.open(member) as fh:
        line = fh.readline().decode("utf-8-sig").strip()
    return [name.strip().strip('"') for name in line.split(",")]


def _pick_columns(header: list[str], keep: list[str] | None) -> list[str]:
    if keep is None:
        return header
    missing = [c for c in keep if c not in header and c != "ST"]
    if missing:
        raise UnknownColumnError(
            f"columns {missing} are not in the PUMS person file; it has {len(header)} columns, "
            f"e.g. {', '.join(header[:8])}",
            parameter="columns",
            value=missing,
        )
    wanted = {*keep, "ST"}
    return [c for c in header if c in wanted]


def _csv_batches(zf: zipfile.ZipFile, member: str, types: dict[str, pa.DataType]) -> Iterable[pa.RecordBatch]:
    """Stream the CSV in bounded batches, parsing each column as ``types`` says."""
    with zf.open(member) as fh:
        reader = pacsv.open_csv(
            fh,
            read_options=pacsv.ReadOptions(block_size=_BLOCK_BYTES),
            convert_options=pacsv.ConvertOptions(
                include_columns=list(types), column_types=types, strings_can_be_null=True
            ),
        )
        yield from reader


def _write_parquet(batches: Iterable[pa.RecordBatch], schema: pa.Schema, parquet: Path, fips: int | None) -> int:
    """Cast batches to ``schema`` into ``parquet`` atomically; return the row count."""
    tmp = parquet.with_name(parquet.name + ".tmp")
    rows = 0
    try:
        with pq.ParquetWriter(tmp, schema) as writer:
            for batch in batches:
                table = pa.Table.from_batches([batch])
                if fips is not None:  # older files lack ST; the archive name says the state
                    table = table.append_column("ST", pa.array(np.full(len(table), fips, np.int8)))
                writer.write_table(table.cast(schema))
                rows += len(table)
        os.replace(tmp, parquet)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return rows


def _read_parquet(path: Path, keep: list[str] | None) -> pd.DataFrame:
    try:
        names = pq.read_schema(path).names
        if keep is not None and (missing := [c for c in keep if c not in names]):
            raise UnknownColumnError(
                f"columns {missing} are not in {path.name}; available: {', '.join(names)}",
                parameter="columns",
                value=missing,
            )
        table = pq.read_table(path, columns=keep)
    except (pa.ArrowInvalid, OSError) as exc:
        raise IntegrityError(
            f"cached {path} is unreadable ({exc}); delete it or call download_pums(force=True)"
        ) from exc
    # One block per column and Arrow buffers freed as they are converted: peak
    # memory stays near the size of the result rather than twice it.
    return table.to_pandas(split_blocks=True, self_destruct=True)
