"""The data layer's one parquet cache: a sidecar that vouches for each file, and one converter at a time.

Every survey file folkscope converts (a Census PUMS state, a public survey's
files) is cached as parquet beside a JSON sidecar, ``<name>.parquet.json``,
written last: it names the cache's format and the parquet's size, so a cache
interrupted mid-write, or of an older layout, is never read as whole
(:func:`read_sidecar` returns None and the caller converts again). A
:func:`cache_lock` per file serialises processes converting the same data; a
read-only folder (a shared copy) is only read, so it needs none.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

from folkscope._json import read_json, write_json

__all__ = ["cache_lock", "read_sidecar", "writable", "write_sidecar"]


def _sidecar(parquet: Path) -> Path:
    return parquet.with_name(parquet.name + ".json")


def read_sidecar(parquet: str | os.PathLike[str], fmt: int) -> dict[str, Any] | None:
    """The sidecar record of ``parquet`` if it is of format ``fmt`` and matches the file beside it, else None.

    >>> import tempfile
    >>> cache = Path(tempfile.mkdtemp()) / "x.parquet"
    >>> _ = cache.write_bytes(b"1234")
    >>> write_sidecar(cache, {"format": 1, "rows": 2})
    >>> read_sidecar(cache, 1)["rows"], read_sidecar(cache, 2)
    (2, None)
    >>> _ = cache.write_bytes(b"123")  # replaced after the sidecar was written
    >>> read_sidecar(cache, 1) is None
    True
    """
    parquet = Path(parquet)
    try:
        record = read_json(_sidecar(parquet))
        size = parquet.stat().st_size
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != fmt or record.get("parquet_bytes") != size:
        return None
    return record


def write_sidecar(parquet: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Commit the cache ``parquet``: its sidecar with ``record`` and the parquet's size (call it after the parquet)."""
    parquet = Path(parquet)
    write_json(_sidecar(parquet), {**record, "parquet_bytes": parquet.stat().st_size})


def writable(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` exists and this process may write there (a shared read-only copy may not)."""
    return Path(folder).is_dir() and os.access(folder, os.W_OK)


@contextmanager
def cache_lock(folder: str | os.PathLike[str], name: str) -> Iterator[None]:
    """Serialise processes converting ``name`` in ``folder`` (created if it can be; a read-only one gets no lock)."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # a folder we cannot create: the caller says where the files should be
    if not writable(folder):
        yield
        return
    with FileLock(str(folder / f"{name}.lock")):
        yield
