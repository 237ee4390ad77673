"""A study's own folder: which cells are done, where their runs are, and what each printed.

``<results>/study-<name>/`` beside the study's run folders holds:

- ``cells.json``: one entry per cell (its command, status, run folder
  relative to the results folder, one-line answer or error), rewritten
  atomically after every cell, so a study killed at any moment restarts
  from the last finished cell. It holds no clock times: a study run straight
  through and one killed and resumed leave the same bytes;
- ``study.log``: every cell's printed summary, appended as cells finish;
- ``plan.<toml|yaml>``: the plan as it was last run.

A cell counts as done only while its run folder is still there (a deleted
folder is run again). An unfinished cell leaves nothing here, but its part
kept what it computed (the engine's result cache, the run's staging folder),
so running it again continues rather than restarts. One process runs a
study at a time (a lock beside the ledger).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from folkscope._json import write_json
from folkscope.errors import ConfigError
from folkscope.runs import MANIFEST_FILE
from folkscope.study.cells import Cell
from folkscope.study.plan import Plan

__all__ = ["Ledger", "study_folder"]

LEDGER = "cells.json"
LOG = "study.log"
DONE, FAILED, TO_RUN = "done", "failed", "to run"


def study_folder(results_dir: str | Path, plan: Plan) -> Path:
    """Where the study keeps its ledger: ``<results>/study-<name>``."""
    return Path(results_dir) / f"study-{plan.name}"


class Ledger:
    """The status of every cell of one study in one results folder; open it with :meth:`open` (takes the lock)."""

    def __init__(self, results_dir: str | Path, plan: Plan) -> None:
        self.results_dir = Path(results_dir)
        self.plan = plan
        self.folder = study_folder(results_dir, plan)
        self.entries: dict[str, dict[str, Any]] = {}
        path = self.folder / LEDGER
        if path.is_file():
            try:
                recorded = json.loads(path.read_text(encoding="utf-8"))
                self.entries = {e["id"]: e for e in recorded["cells"]}
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(
                    f"the study ledger {path} is damaged ({exc}); move it aside to run every cell again "
                    "(finished runs are served from the result cache)"
                ) from None

    @contextmanager
    def open(self) -> Iterator[Ledger]:
        """Hold the study's lock while the block runs; a second process gets one line at once."""
        self.folder.mkdir(parents=True, exist_ok=True)
        plan = Path(self.plan.path)
        shutil.copyfile(plan, self.folder / f"plan{plan.suffix.lower()}")
        handle: IO[bytes] = open(self.folder / ".lock", "a+b")  # noqa: SIM115 - held for the block
        try:
            try:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except ImportError:  # no POSIX locks (Windows): one study per folder is the user's to ensure
                pass
            except BlockingIOError:
                raise ConfigError(
                    f"another process is running study {self.plan.name!r} in {self.results_dir}; wait for it, "
                    "or pass another --results-dir"
                ) from None
            yield self
        finally:
            handle.close()

    def status(self, cell: Cell) -> str:
        """``done`` (its folder is there), ``failed`` (last attempt) or ``to run``."""
        entry = self.entries.get(cell.id)
        if entry is None:
            return TO_RUN
        if entry["status"] == DONE and not (self.results_dir / entry["folder"] / MANIFEST_FILE).is_file():
            return TO_RUN
        return str(entry["status"])

    def folder_of(self, cell: Cell) -> Path | None:
        entry = self.entries.get(cell.id)
        return self.results_dir / entry["folder"] if entry and entry.get("folder") else None

    def record(
        self,
        cells: list[Cell],
        cell: Cell,
        *,
        folder: Path | None = None,
        answer: str | None = None,
        error: str | None = None,
        output: str = "",
    ) -> None:
        """Record how ``cell`` ended and rewrite the ledger (in plan order) atomically."""
        entry: dict[str, Any] = {
            "id": cell.id,
            "part": cell.part,
            "model": cell.model,
            "task": cell.task,
            "settings": dict(cell.settings),
            "command": cell.command(),
            "status": FAILED if error is not None else DONE,
        }
        if folder is not None:
            entry["folder"] = _relative(folder, self.results_dir)
        if answer is not None:
            entry["answer"] = answer
        if error is not None:
            entry["error"] = error
        self.entries[cell.id] = entry
        order = {c.id: c.index for c in cells}
        kept = sorted(self.entries.values(), key=lambda e: (order.get(e["id"], len(order)), e["id"]))
        write_json(self.folder / LEDGER, {"study": self.plan.name, "source": self.plan.source, "cells": kept})
        if output:
            with open(self.folder / LOG, "a", encoding="utf-8") as log:
                log.write(f"== {cell.id}\n$ {cell.command()}\n{output.rstrip()}\n\n")

    def summary(self, cells: list[Cell]) -> Mapping[str, int]:
        """How many of ``cells`` are done, failed and to run."""
        counts = {DONE: 0, FAILED: 0, TO_RUN: 0}
        for cell in cells:
            counts[self.status(cell)] += 1
        return counts


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:  # not under the results folder (cannot happen for a cell's own run): keep it absolute
        return str(folder.resolve())
