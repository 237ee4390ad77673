"""What ``folkscope export`` was pointed at: run folders, or study folders standing for their finished cells.

A run folder holds ``manifest.json`` (:func:`folkscope.runs.read_manifest`);
a study folder (``<results>/study-<name>/``) holds ``cells.json``, whose
finished cells name their run folders relative to the results folder. The
ledger is read as the file it is, not through the study layer, which sits
above this one. Anything else is refused in one line before anything is
written, so a typo never yields an empty dataset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope._json import read_json
from folkscope.errors import ConfigError, DataError
from folkscope.runs import MANIFEST_FILE, Manifest, read_manifest

__all__ = ["ExportedRun", "resolve_runs", "run_id"]

#: the study ledger's file name (:mod:`folkscope.study.ledger`)
STUDY_LEDGER = "cells.json"


@dataclass(frozen=True)
class ExportedRun:
    """One run folder as the export reads it: where it is, what it is, and its ``metrics.json``."""

    folder: Path
    manifest: Manifest
    metrics: Mapping[str, Any]

    @property
    def id(self) -> str:
        return run_id(self.folder)

    @property
    def subject(self) -> str:
        """The run's subject as its folder layout names it (``NISTIncome``, ``numeric-colors``...)."""
        return self.folder.parent.parent.name

    @property
    def model(self) -> str:
        return self.manifest.model_name


def run_id(folder: Path) -> str:
    """``<subject>/<model>/<variant>-<hash8>``: the folder's place under its results folder, the same on any machine."""
    return "/".join(folder.parts[-3:])


def _read_run(folder: Path) -> ExportedRun:
    manifest = read_manifest(folder)
    path = folder / manifest.tables["metrics"]["file"]
    try:
        metrics = read_json(path)
    except (OSError, ValueError):
        raise DataError(f"{folder}: {path.name} is missing or damaged; rescore it with `folkscope rescore {folder}`")
    if not isinstance(metrics, dict):
        raise DataError(f"{path} does not hold a run's metrics; rescore it with `folkscope rescore {folder}`")
    return ExportedRun(folder, manifest, metrics)


def _study_runs(folder: Path) -> list[Path]:
    """The run folders of a study's finished cells (a study with none is refused: there is nothing to export)."""
    ledger = folder / STUDY_LEDGER
    try:
        cells = read_json(ledger)["cells"]
        done = [c for c in cells if c.get("status") == "done" and c.get("folder")]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise DataError(f"{ledger} is damaged; run the study again with `folkscope study run` to rewrite it") from None
    if not done:
        raise ConfigError(
            f"study folder {folder} has no finished cell yet; run it with `folkscope study run` first",
            parameter="runs",
            value=str(folder),
        )
    root = folder.parent  # cells name their folders relative to the results folder that holds the study's
    return [root / str(c["folder"]) for c in done]


def resolve_runs(paths: Sequence[str | Path]) -> list[ExportedRun]:
    """The runs named by ``paths`` (each a run folder or a study folder), in order, each once.

    Raises
    ------
    ConfigError
        A path that does not exist or is neither a run nor a study folder.
    DataError
        A run folder whose manifest or metrics cannot be read.
    """
    if not paths:
        raise ConfigError("name at least one run or study folder to export", parameter="runs", value=[])
    folders: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser().absolute()
        if not path.is_dir():
            state = "is a file" if path.exists() else "does not exist"
            raise ConfigError(
                f"{path} {state}; pass a run folder (it holds {MANIFEST_FILE}) or a study folder (it holds "
                f"{STUDY_LEDGER})",
                parameter="runs",
                value=str(raw),
            )
        if (path / STUDY_LEDGER).is_file():
            folders += _study_runs(path)
        elif (path / MANIFEST_FILE).is_file() or (path / "config.json").is_file():
            folders.append(path)
        else:
            raise ConfigError(
                f"{path} is neither a run folder (no {MANIFEST_FILE}) nor a study folder (no {STUDY_LEDGER}); "
                "pass the folder a run printed after 'run folder:', or results/<name>/study-<name>",
                parameter="runs",
                value=str(raw),
            )
    unique = list(dict.fromkeys(folders))
    return [_read_run(folder) for folder in unique]
