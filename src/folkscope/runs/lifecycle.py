"""The life of one run, written once for every part: open the folder, keep the log, write config and manifest, warn.

Every part's run goes through the same steps around its own work (see
``spec/architecture.md``, layer *runs*)::

    with open_run(folder_path, manifest, config=config.to_dict()) as folder:
        ...  # the part's tables, then its analysis (which records caveats)

:func:`open_run` stages the folder (:class:`~folkscope.runs.RunFolder`:
whole or not at all, one writer, another configuration refused), appends
everything logged meanwhile to its ``run.log``, writes ``config.json`` and
``manifest.json`` first (so an interrupted run is still identifiable), and,
once the folder is in place, raises each recorded caveat as a
:class:`~folkscope.errors.CaveatWarning`: a Python user who only reads the
returned numbers still hears why they may mislead. Who owns the engine is
the engine layer's business (:func:`folkscope.engine.engine_for_run`).

:func:`published_runs` lets a caller that starts a part's command without
knowing its folder layout (a study running a grid of commands) learn which
folders the command published, from the one place every part publishes
through, instead of parsing what the command printed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from folkscope._json import write_json
from folkscope.logs import log_to_file
from folkscope.runs.caveats import read_caveats, warn_caveats
from folkscope.runs.folder import RunFolder
from folkscope.runs.manifest import Manifest

__all__ = ["open_run", "published_runs"]

#: the lists :func:`published_runs` blocks collect into (per thread and task, as context variables are)
_WATCHERS: ContextVar[tuple[list[Path], ...]] = ContextVar("folkscope_published_runs", default=())


@contextmanager
def published_runs() -> Iterator[list[Path]]:
    """Collect the run folders published while the block runs, in order (nested blocks each see them all).

    Examples
    --------
    >>> with published_runs() as folders:
    ...     pass
    >>> folders
    []
    """
    folders: list[Path] = []
    token = _WATCHERS.set((*_WATCHERS.get(), folders))
    try:
        yield folders
    finally:
        _WATCHERS.reset(token)


@contextmanager
def open_run(final: str | Path, manifest: Manifest, *, config: Mapping[str, Any]) -> Iterator[Path]:
    """Stage ``final`` for one run of ``manifest.part``; yields the staging folder to write into.

    A failure inside the block leaves the staging folder for a rerun to
    continue, and no warning; success renames it into place, then warns once
    per caveat the analysis recorded.

    Parameters
    ----------
    final : path
        Where the finished folder goes (:func:`~folkscope.runs.run_path`).
    manifest : Manifest
        Written as ``manifest.json`` before anything else; its fingerprint
        guards the folder against another configuration.
    config : mapping
        Written as ``config.json`` (what the part's analysis reads back).
    """
    final = Path(final)
    with RunFolder(final, fingerprint=manifest.fingerprint) as folder, log_to_file(folder / "run.log"):
        write_json(folder / "config.json", dict(config))
        manifest.write(folder)
        yield folder
    for watcher in _WATCHERS.get():
        watcher.append(final.absolute())
    warn_caveats(read_caveats(final), final)
