"""Atomic file writes for report artefacts (write a temporary file, then rename)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__: list[str] = []  # private helpers


@contextlib.contextmanager
def atomic_binary(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` atomically.

    A crash or an exception while writing leaves ``path`` as it was (absent or
    the previous version) and removes the temporary file.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a report is meant to be read by others
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> Path:
    """Call ``write(fh)`` on a temporary file and move it to ``path``; return ``path``."""
    with atomic_binary(path) as fh:
        write(fh)
    return Path(path)
