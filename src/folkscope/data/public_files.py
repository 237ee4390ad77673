"""Full public survey files: the user's copy when there is one, else the publisher's download, converted once to parquet.

A :class:`PublicDataset` describes one survey as its publisher distributes
it: its files (:class:`PublicFile`: the name as published, the format, the
member of a zip archive, the columns kept), the folder URL they are published
under, the weight column, and columns derived after loading. The catalogue is
:data:`folkscope.data.public_datasets.PUBLIC_DATASETS`.

:meth:`PublicDataset.load` looks in ``<root>/epidemiology/<dataset>/``, where
``<root>`` is ``--data-dir`` or :func:`folkscope.paths.data_home`:

1. the parquet cache ``<dataset>.parquet``, when its sidecar
   ``<dataset>.parquet.json`` says it holds the kept columns and the files
   beside it are the ones it was made from: no archive is opened;
2. else each published file under its published name (any letter case: your
   copy, or an earlier download); a missing one is downloaded there with
   :func:`~folkscope.data.download.download_file` (resumed, checked, renamed
   into place only when whole) from ``base_url=``, else
   ``$FOLKSCOPE_<DATASET>_BASE_URL`` (a mirror), else the publisher;
3. the kept columns are read (matched in any letter case, named as declared:
   NORC writes ``wtssps``, its codebook ``WTSSPS``), the files joined on the
   dataset's key, the cache written, and the derived columns added.

Values stay the publisher's numeric codes: Stata value labels are not
applied (labels are reworded between releases, codes are documented).

Examples
--------
>>> file = PublicFile("DEMO_J.xpt", "xport", ("SEQN", "WTINT2YR"))
>>> dataset = PublicDataset("demo", "about", "https://example.org/page", "https://example.org/files", (file,), weight="WTINT2YR")
>>> dataset.url(file, base_url="http://mirror.example/nhanes/")
'http://mirror.example/nhanes/DEMO_J.xpt'
>>> dataset.base_url_env
'FOLKSCOPE_DEMO_BASE_URL'
"""

from __future__ import annotations

import logging
import os
import re
import struct
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pandas as pd

from folkscope._io import write_parquet
from folkscope.data.cache import cache_lock, read_sidecar, writable, write_sidecar
from folkscope.data.download import download_file
from folkscope.errors import ConfigError, DataError, DownloadError, IntegrityError
from folkscope.paths import data_home

__all__ = ["FORMATS", "PublicDataset", "PublicFile"]

log = logging.getLogger(__name__)

#: how a file (or the zip member holding it) is read
FORMATS = ("xport", "stata", "tsv")

_CACHE_FORMAT = 1  # bump when the cache layout changes, so old caches are rebuilt
_CHUNK_ROWS = 50_000  # rows per read: bounds memory on wide files (BRFSS keeps 10 of its 326 columns)
_XPORT_MAGIC = b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!"
# SAS writes 0 in a way pandas reads as 5.4e-79 in some NHANES files; no survey code or weight is that small
_SAS_ZERO = 1e-70


@dataclass(frozen=True)
class PublicFile:
    """One file as its publisher distributes it.

    Attributes
    ----------
    name : str
        File name as published (also its name in the data folder, any letter case).
    format : {"xport", "stata", "tsv"}
        SAS transport (v5), Stata ``.dta``, or tab-delimited text with a header row.
    columns : tuple of str
        Columns kept, as the codebook spells them.
    member : str, optional
        For a zip archive: a regular expression matching the name of the one
        member to read (the folder part and surrounding blanks ignored,
        case-insensitive).
    """

    name: str
    format: str
    columns: tuple[str, ...]
    member: str | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(
                f"file {self.name}: format must be one of {', '.join(FORMATS)}, got {self.format!r}",
                parameter="format",
                value=self.format,
            )
        if (self.member is None) == self.name.lower().endswith(".zip"):
            raise ConfigError(
                f"file {self.name}: a zip archive needs the 'member' to read, and only a zip archive has one",
                parameter="member",
                value=self.member,
            )


@dataclass(frozen=True)
class PublicDataset:
    """A survey's public files, where they are published, and what is kept of them.

    Attributes
    ----------
    name : str
        Dataset name (``load_dataset(name)``; the folder ``epidemiology/<name>/``).
    about : str
        One line: survey, edition, rows, weight.
    page : str
        The publisher's page for the files (where to download them by hand).
    base_url : str
        Folder URL the files are published under (file URL: ``<base_url>/<name>``).
    files : tuple of PublicFile
        The first is the base table; the others are joined to it on ``key``.
    weight : str
        The survey-weight column its task file declares.
    key : str, optional
        Respondent identifier joining ``files`` (one row per value in each).
    derive : callable, optional
        ``derive(frame) -> frame``: columns computed after loading (from the cache too).
    """

    name: str
    about: str
    page: str
    base_url: str
    files: tuple[PublicFile, ...]
    weight: str
    key: str | None = None
    derive: Callable[[pd.DataFrame], pd.DataFrame] | None = None

    @property
    def base_url_env(self) -> str:
        """Environment variable naming a mirror of :attr:`base_url`."""
        return "FOLKSCOPE_" + re.sub(r"\W", "_", self.name.upper()) + "_BASE_URL"

    @property
    def columns(self) -> list[str]:
        """Every kept column, the key once."""
        return list(dict.fromkeys(c for f in self.files for c in f.columns))

    def url(self, file: PublicFile, *, base_url: str | None = None) -> str:
        """Where ``file`` is downloaded from: ``base_url``, else ``$<base_url_env>``, else the publisher."""
        base = base_url or os.environ.get(self.base_url_env) or self.base_url
        return f"{base.rstrip('/')}/{file.name}"

    def folder(self, data_dir: str | os.PathLike[str] | None = None) -> Path:
        """``<data_dir or data_home()>/epidemiology/<name>``: the files, the cache and its sidecar."""
        root = Path(data_dir).expanduser() if data_dir is not None else data_home()
        return root / "epidemiology" / self.name

    def load(
        self, data_dir: str | os.PathLike[str] | None = None, *, base_url: str | None = None, download: bool = True
    ) -> pd.DataFrame:
        """The kept and derived columns, one row per respondent (see the module docstring for where from).

        Raises
        ------
        DownloadError
            A file is neither in the folder nor downloadable (``download=False``,
            offline, refused); the message names the URL and where to put a copy.
        IntegrityError
            A file in the folder, or the one downloaded twice, is damaged.
        DataError
            A file lacks a kept column or cannot be parsed.
        """
        folder = self.folder(data_dir)
        cache = folder / f"{self.name}.parquet"
        frame = self._cached(folder, cache)
        if frame is None:
            with cache_lock(folder, self.name):
                frame = self._cached(folder, cache)
                if frame is None:
                    frame = self._convert(folder, cache, base_url=base_url, download=download)
        if self.derive is None:
            return frame
        try:
            return self.derive(frame)
        except (KeyError, ValueError, TypeError) as exc:  # a damaged file's values (a missing family number, ...)
            raise DataError(
                f"the {self.name} columns cannot be derived from the files in {folder} ({type(exc).__name__}: "
                f"{str(exc)[:80]}); replace them with the published files"
            ) from None

    # --- cache ------------------------------------------------------------------

    def _cached(self, folder: Path, cache: Path) -> pd.DataFrame | None:
        """The cache if its sidecar vouches for it and the files beside it are those it was made from."""
        record = read_sidecar(cache, _CACHE_FORMAT)
        if (
            record is None
            or record.get("columns") != self.columns
            or set(record.get("sources", {})) != {f.name for f in self.files}
        ):
            return None
        for file in self.files:
            path = _find(folder, file.name)
            if path is not None and path.stat().st_size != record["sources"][file.name]:
                return None  # the copy was replaced (another release): convert it again
        try:
            return pd.read_parquet(cache)
        except (OSError, ValueError) as exc:
            log.warning("the %s cache %s is unreadable (%s); converting the files again", self.name, cache, exc)
            return None

    def _convert(self, folder: Path, cache: Path, *, base_url: str | None, download: bool) -> pd.DataFrame:
        paths = [self._ensure(folder, file, base_url=base_url, download=download) for file in self.files]
        frame = _read(paths[0], self.files[0], self.name)
        for path, file in zip(paths[1:], self.files[1:]):
            frame = self._join(frame, _read(path, file, self.name), path)
        if writable(folder):
            write_parquet(cache, frame)
            sources = {f.name: p.stat().st_size for f, p in zip(self.files, paths)}
            write_sidecar(
                cache,
                {
                    "format": _CACHE_FORMAT,
                    "dataset": self.name,
                    "columns": self.columns,
                    "rows": len(frame),
                    "sources": sources,
                },
            )
        else:
            log.info("%s is read-only: %s is read from its files each time", folder, self.name)
        return frame

    def _join(self, left: pd.DataFrame, right: pd.DataFrame, path: Path) -> pd.DataFrame:
        if self.key is None:
            raise ConfigError(f"dataset {self.name} has several files but no key to join them on", parameter="key")
        for side, where in ((left, "the base file"), (right, str(path))):
            if side[self.key].duplicated().any():
                raise DataError(
                    f"{where} holds {self.key} values twice; it is not the published {self.name} file, replace it"
                )
        return left.merge(right, on=self.key, how="left", validate="one_to_one")

    # --- files ------------------------------------------------------------------

    def _ensure(self, folder: Path, file: PublicFile, *, base_url: str | None, download: bool) -> Path:
        """The file in the folder, checked; downloaded there first when it is missing and ``download``."""
        found = _find(folder, file.name)
        if found is not None:
            try:
                _check(found, file)
            except IntegrityError as exc:
                raise IntegrityError(
                    f"your copy {found} is damaged ({exc}); delete it to download it again, or replace it "
                    f"with the original from {self.page}"
                ) from None
            return found
        url = self.url(file, base_url=base_url)
        dest = folder / file.name
        if not download or not writable(folder):
            why = "download=False" if not download else "that folder is read-only"
            raise DownloadError(
                f"{self.name}: {file.name} is not at {dest} and {why}; {self._by_hand(file, url, dest)}"
            )
        try:
            return download_file(url, dest, validate=lambda part: _check(part, file))
        except IntegrityError as exc:
            raise IntegrityError(
                f"{self.name}: the download is damaged ({exc}); try again later, or {self._by_hand(file, url, dest)}"
            ) from exc
        except DownloadError as exc:
            raise DownloadError(f"{self.name}: {exc}; {self._by_hand(file, url, dest)}") from exc

    def _by_hand(self, file: PublicFile, url: str, dest: Path) -> str:
        return (
            f"download {url} (or from {self.page}) by hand and put it at {dest} (--data-dir: the folder holding "
            f"epidemiology/{self.name}/{file.name}), or set ${self.base_url_env} to a mirror"
        )


def _find(folder: Path, name: str) -> Path | None:
    """``folder/name`` in any letter case (CDC links ``DEMO_J.xpt``, older pages ``DEMO_J.XPT``)."""
    exact = folder / name
    if exact.is_file():
        return exact
    if not folder.is_dir():
        return None
    matches = sorted(p for p in folder.iterdir() if p.name.lower() == name.lower() and p.is_file())
    return matches[0] if matches else None


def _check(path: Path, file: PublicFile) -> None:
    """Raise IntegrityError unless ``path`` is a sound zip holding the member, or starts as its format does."""
    if file.member is None:
        with open(path, "rb") as fh:
            head = fh.read(len(_XPORT_MAGIC))
        if file.format == "xport" and head != _XPORT_MAGIC:
            raise IntegrityError(f"{path.name} is not a SAS transport file (it starts {head[:20]!r})")
        return
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
            _member(zf, file)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise IntegrityError(f"{path.name} is not a readable zip archive ({exc})") from None
    if bad is not None:
        raise IntegrityError(f"{path.name}: member {bad} fails its CRC check")


def _member(zf: zipfile.ZipFile, file: PublicFile) -> str:
    """The one member matching ``file.member`` (BRFSS names it with a trailing blank, NORC inside a folder)."""
    pattern = re.compile(str(file.member), re.IGNORECASE)
    every = zf.namelist()
    names = [n for n in every if pattern.fullmatch(n.rsplit("/", 1)[-1].strip())]
    if not names:
        shown = ", ".join(every[:5]) + (", ..." if len(every) > 5 else "")
        raise IntegrityError(f"{file.name} holds no file matching {file.member} (it holds: {shown or 'nothing'})")
    if len(names) > 1:
        raise IntegrityError(f"{file.name} holds several files matching {file.member}: {', '.join(names)}")
    return names[0]


def _read(path: Path, file: PublicFile, dataset: str) -> pd.DataFrame:
    """The kept columns of ``path`` (of its member, for an archive), named as declared."""
    try:
        if file.member is None:
            with open(path, "rb") as fh:
                return _READERS[file.format](fh, file.columns, str(path))
        with zipfile.ZipFile(path) as zf:
            member = _member(zf, file)
            with zf.open(member) as fh:
                return _READERS[file.format](fh, file.columns, f"{path}:{member.strip()}")
    except DataError:
        raise
    # Warning: pandas' "xport file may be corrupted", which _read_xport raises (and any warning run as an error)
    except (
        OSError,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        EOFError,
        struct.error,
        zipfile.BadZipFile,
        zlib.error,
        Warning,
    ) as exc:
        raise DataError(
            f"{path} cannot be read as the {dataset} {file.format} file ({type(exc).__name__}: {str(exc)[:80]}); "
            "replace it with the published file"
        ) from None


def _names(found: list[Any], wanted: tuple[str, ...], where: str) -> dict[Any, str]:
    """Which found column is each wanted one (letter case ignored), or one DataError naming those missing."""
    by_upper = {str(c).strip().upper(): c for c in found}
    missing = [w for w in wanted if w.upper() not in by_upper]
    if missing:
        raise DataError(
            f"{where} lacks the column(s) {', '.join(missing)}; it is not the expected table, replace it with "
            "the published file"
        )
    return {by_upper[w.upper()]: w for w in wanted}


def _read_xport(fh: IO[bytes], columns: tuple[str, ...], where: str) -> pd.DataFrame:
    chunks, rename = [], None
    with warnings.catch_warnings():
        # pandas warns "xport file may be corrupted" and reads on; a damaged file must stop here instead
        warnings.filterwarnings("error", message=".*may be corrupted", category=UserWarning)
        with pd.read_sas(fh, format="xport", chunksize=_CHUNK_ROWS, encoding="latin-1") as reader:
            for chunk in reader:
                rename = rename or _names(list(chunk.columns), columns, where)
                chunks.append(chunk[list(rename)].rename(columns=rename))
    if rename is None:
        raise DataError(f"{where} holds no rows; replace it with the published file")
    frame = pd.concat(chunks, ignore_index=True)
    for name in frame.columns:
        if frame[name].dtype.kind == "f":
            frame[name] = frame[name].mask(frame[name].abs() < _SAS_ZERO, 0.0)
    return frame


def _read_stata(fh: IO[bytes], columns: tuple[str, ...], where: str) -> pd.DataFrame:
    chunks = []
    with pd.read_stata(fh, iterator=True, convert_categoricals=False) as reader:
        rename = _names(list(reader.variable_labels()), columns, where)
        while True:
            try:
                chunk = reader.read(nrows=_CHUNK_ROWS, columns=list(rename), convert_categoricals=False)
            except StopIteration:
                break
            chunks.append(chunk.rename(columns=rename))
            if len(chunk) < _CHUNK_ROWS:
                break
    if not chunks:
        raise DataError(f"{where} holds no rows; replace it with the published file")
    return pd.concat(chunks, ignore_index=True)


def _read_tsv(fh: IO[bytes], columns: tuple[str, ...], where: str) -> pd.DataFrame:
    header = fh.readline().decode("latin-1").rstrip("\r\n").split("\t")
    rename = _names(header, columns, where)
    frame = pd.read_csv(
        fh, sep="\t", header=None, names=header, usecols=list(rename), encoding="latin-1", low_memory=False
    )
    return frame.rename(columns=rename)[list(columns)]


_READERS: dict[str, Callable[[IO[bytes], tuple[str, ...], str], pd.DataFrame]] = {
    "xport": _read_xport,
    "stata": _read_stata,
    "tsv": _read_tsv,
}
