"""Atomic file writes for report artefacts (write a temporary file, then rename).

A temporary file is named ``.<name>.<pid>.<random>.tmp`` beside its
destination. A process killed while writing (``kill -9``) leaves it behind;
:func:`remove_temporaries` deletes those whose writer is gone, so no rerun
trips over them and none end up among the results.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__: list[str] = []  # private helpers

_TEMPORARY = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")


@contextlib.contextmanager
def atomic_binary(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """Open a temporary file beside ``path``; on success it replaces ``path`` atomically.

    A crash or an exception while writing leaves ``path`` as it was (absent or
    the previous version) and removes the temporary file.
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.{os.getpid()}.", suffix=".tmp")
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


@contextlib.contextmanager
def staged_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty folder beside ``path``; on success it replaces ``path`` whole (an earlier one is removed).

    An exception while writing leaves ``path`` as it was and removes the
    staging folder, so a reader never finds half of a new folder mixed with
    the old one (a dataset export replaced by another).
    """
    import shutil

    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.{os.getpid()}.", dir=final.parent))
    try:
        yield staging
        if final.exists():
            old = final.with_name(f".{final.name}.{os.getpid()}.replaced")
            final.rename(old)
            staging.rename(final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_parquet(path: str | os.PathLike[str], frame: Any) -> Path:
    """Write a DataFrame as parquet (no index), atomically; return ``path``."""
    return atomic_write(path, lambda fh: frame.to_parquet(fh, index=False))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except (OverflowError, OSError):
        return False
    return True


def remove_temporaries(folder: str | os.PathLike[str], *, all_writers: bool = False) -> int:
    """Delete the temporary files that killed writers left under ``folder``; return how many.

    Only files named the way :func:`atomic_binary` names them are touched.
    By default a file whose writer is still running is kept; with
    ``all_writers=True`` (the caller holds the folder's lock, so no one else
    writes there) every one goes.
    """
    root = Path(folder)
    if not root.is_dir():
        return 0
    removed = 0
    for path in root.rglob(".*.tmp"):
        match = _TEMPORARY.match(path.name)
        if match is None or not path.is_file() or (not all_writers and _alive(int(match.group(1)))):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    return removed
