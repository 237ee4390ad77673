"""A user's own rows from a CSV or parquet file (``--data-file``).

Researchers often hold their own PUMS extract, a state agency's copy, or a
synthetic table; reading it here (rather than asking them to convert it to
the download cache's layout) lets any task run on it. The file's SHA-256 goes
into the run's provenance, so edited rows never share a run folder with the
old ones.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.errors import ConfigError, DataError

__all__ = ["SUFFIXES", "file_provenance", "read_rows"]

#: File endings read by :func:`read_rows` (compressed CSV included).
SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".parquet", ".pq")


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if any(name.endswith(s) for s in SUFFIXES if s.startswith(".csv")):
        return "csv"
    raise ConfigError(
        f"--data-file {path}: cannot tell the format from the name; use a file ending in {', '.join(SUFFIXES)}",
        parameter="data_file",
        value=str(path),
    )


def read_rows(path: str | Path) -> pd.DataFrame:
    """The rows of a CSV or parquet file, index reset to 0..n-1 (the row ids of a run).

    Columns a task needs but the file lacks are listed by the
    :class:`~folkscope.data.Dataset` built on these rows, in one error.

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> _ = pd.DataFrame({"AGEP": [30, 41], "SEX": [1, 2]}).to_csv(os.path.join(folder, "rows.csv"), index=False)
    >>> read_rows(os.path.join(folder, "rows.csv")).shape
    (2, 2)
    """
    path = Path(path).expanduser()
    kind = _kind(path)
    if not path.is_file():
        raise ConfigError(
            f"--data-file {path} does not exist (or is not a file)", parameter="data_file", value=str(path)
        )
    try:
        frame = pd.read_parquet(path) if kind == "parquet" else pd.read_csv(path, low_memory=False)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"--data-file {path} cannot be read as {kind}: {str(exc).splitlines()[0][:200]}") from None
    if frame.empty:
        raise DataError(f"--data-file {path} has no rows")
    return frame.reset_index(drop=True).rename_axis("row_id")


def file_provenance(path: str | Path) -> dict[str, Any]:
    """``source``, resolved ``path`` and ``sha256`` of a data file, for the run's config."""
    path = Path(path).expanduser().resolve()
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return {"source": "file", "path": str(path), "sha256": digest.hexdigest()}
