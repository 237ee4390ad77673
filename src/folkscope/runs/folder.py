"""Write a run folder as a whole: stage beside it, then rename into place.

A run's files (config, tables, metrics, plots, report, log) are written one
by one over minutes or hours. Written straight into the run folder, a run
killed during its final writes leaves a folder whose files disagree (new
scores, old metrics; a report and no plots). Here they go to a staging
folder beside it, ``.<name>.staging``, and only a complete staging folder
is published::

    results/ACSIncome/model/
        default-1a2b3c4d/            what readers see: always a complete run
        .default-1a2b3c4d.staging/   the run being written (its run.log too)
        .default-1a2b3c4d.lock       held while a process writes this run

Publishing marks the staging folder complete, moves the old folder (if
any) aside as ``.<name>.old``, renames the staging folder into place and
removes the old one. A process killed between any two of those steps
leaves a state the next writer of the same folder finishes
(:meth:`RunFolder.recover`). A run that fails or is killed before
publishing leaves the previous folder untouched and its staging folder in
place; the rerun continues in it, so its log and the files already written
are kept (nothing a user ran is lost) and stale temporary files are removed.

Only one process writes a run folder at a time: a second one gets
:class:`RunFolderBusyError` at once rather than interleaving its files.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import IO

from folkscope._io import remove_temporaries
from folkscope.errors import ConfigError
from folkscope.runs.manifest import check_same_run

__all__ = ["RunFolder", "RunFolderBusyError"]

log = logging.getLogger(__name__)

_COMPLETE = ".complete"  # marker: the staging folder holds a finished run, ready to publish


class RunFolderBusyError(ConfigError):
    """Another process is writing the same run folder."""


class RunFolder:
    """Stage a run folder's files and publish them by renaming the folder into place.

    Use it as a context manager: entering takes the folder's lock, finishes
    any publish a killed process left half done and yields the staging
    folder (a copy of the published run when there is one, so an update
    such as re-scoring keeps the files it does not rewrite). Leaving without
    an error publishes; leaving with an error keeps the staging folder for
    the next attempt and the published folder as it was.

    Parameters
    ----------
    final : str or Path
        The run folder readers see.
    fingerprint : str, optional
        The run's fingerprint: a published or unfinished folder that records
        another one is refused (:func:`~folkscope.runs.check_same_run`)
        before anything is copied or written.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with RunFolder(root / "run") as staging:
    ...     _ = (staging / "metrics.json").write_text("{}")
    ...     (root / "run").exists()
    False
    >>> sorted(p.name for p in (root / "run").iterdir())
    ['metrics.json']
    """

    def __init__(self, final: str | os.PathLike[str], *, fingerprint: str | None = None) -> None:
        self.final = Path(final).absolute()
        self.fingerprint = fingerprint
        parent, name = self.final.parent, self.final.name
        self.staging = parent / f".{name}.staging"
        self.old = parent / f".{name}.old"
        self.lock_path = parent / f".{name}.lock"
        self._lock: IO[bytes] | None = None

    def __repr__(self) -> str:
        return f"RunFolder({str(self.final)!r})"

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> Path:
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self._acquire()
        try:
            self.recover()
            if self.fingerprint is not None:  # before staging, so a refused run leaves no copy behind
                check_same_run(self.final, self.fingerprint)
                check_same_run(self.staging, self.fingerprint)
            self._stage()
        except BaseException:
            self._release()
            raise
        return self.staging

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if exc_type is None:
                self.publish()
            elif self.staging.is_dir():
                log.info("the run was not finished; its files so far are kept in %s for the next attempt", self.staging)
        finally:
            self._release()

    def _acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # no POSIX locks (Windows): one writer per folder is the user's to ensure
            return
        fh = open(self.lock_path, "a+b")  # noqa: SIM115 - held until _release
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise RunFolderBusyError(
                f"another process is writing the run folder {self.final}; wait for it to finish, or pass another "
                "results folder",
                parameter="results_dir",
                value=str(self.final),
            ) from None
        self._lock = fh

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()  # closing the file releases the lock
            self._lock = None

    # ------------------------------------------------------------------ the steps
    def recover(self) -> None:
        """Finish a publish that a killed process left half done (call with the lock held)."""
        if (self.staging / _COMPLETE).is_file():
            log.info("finishing the publication of %s, interrupted in an earlier process", self.final)
            self.publish()
            return
        if self.old.is_dir():
            if self.final.is_dir():
                shutil.rmtree(self.old)
            else:  # cannot happen in publish's order, but never lose a finished run
                os.replace(self.old, self.final)
        with contextlib.suppress(FileNotFoundError):
            (self.final / _COMPLETE).unlink()

    def _stage(self) -> None:
        if self.staging.is_dir():
            removed = remove_temporaries(self.staging, all_writers=True)
            log.info(
                "continuing in %s, left by an earlier attempt%s",
                self.staging,
                f" ({removed} stale temporary files removed)" if removed else "",
            )
            return
        if self.final.is_dir():
            remove_temporaries(self.final, all_writers=True)
            shutil.copytree(self.final, self.staging, symlinks=True)
        else:
            self.staging.mkdir()

    def publish(self) -> None:
        """Rename the staging folder into place, replacing the published run (call with the lock held)."""
        remove_temporaries(self.staging, all_writers=True)
        (self.staging / _COMPLETE).touch()
        if self.final.is_dir():
            if self.old.exists():
                shutil.rmtree(self.old)
            os.replace(self.final, self.old)
        os.replace(self.staging, self.final)
        (self.final / _COMPLETE).unlink()
        if self.old.is_dir():
            shutil.rmtree(self.old)
