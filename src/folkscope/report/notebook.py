"""Results in Jupyter: a run's result, a comparison and a leaderboard table show themselves as HTML.

Jupyter calls an object's ``_repr_html_`` to display it; a
:class:`RunResult` (here), a :class:`folkscope.report.compare.Comparison`
and a :class:`folkscope.report.board.BoardTable` (and a leaderboard
:class:`folkscope.report.leaderboard.Site`) answer with markup rendered by the same template engine as the pages
(:mod:`folkscope.report.templating`, ``report/templates/notebook.html``), so
a model name or a note is escaped there as it is on a page. Each display
leads with the answer in one line, then the numbers with their intervals,
then the caveats to read them with.

A run's folder is the result every part writes, so :func:`open_result` is
the one way to hold a finished run in a notebook, whatever its part: it
reads the folder (no model), asks the part for its leaderboard table of
that one run (the part's own headline metrics, its intervals and its
answer line, through the registry) and the run's caveats from its manifest.

Examples
--------
>>> import tempfile
>>> open_result(tempfile.mkdtemp())
Traceback (most recent call last):
...
folkscope.errors.DataError: ...
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from folkscope._json import read_json
from folkscope.registry import PARTS
from folkscope.report.board import BoardTable
from folkscope.report.templating import NOTEBOOK, macro
from folkscope.runs.caveats import read_caveats
from folkscope.runs.manifest import engine_model_name, read_manifest

__all__ = ["RunResult", "open_result"]


@dataclass(frozen=True)
class RunResult:
    """A finished run, read from its folder: the answer, the headline metrics with intervals, the caveats.

    ``title`` and ``table`` are the part's leaderboard table of this one run
    (the model's row, and its baselines' where the part has them); ``answer``
    is that table's one-line answer. Built by :func:`open_result`. In Jupyter it displays itself (answer
    first); its ``repr`` is one short line. ``metrics`` is the run's
    ``metrics.json``, read when first asked for.
    """

    folder: Path
    part: str
    model: str
    title: str
    answer: str
    table: BoardTable = field(repr=False)
    caveats: tuple[str, ...] = ()

    @cached_property
    def metrics(self) -> Mapping[str, Any]:
        """The run's ``metrics.json``, as the part wrote it."""
        manifest = read_manifest(self.folder)
        return read_json(self.folder / manifest.tables["metrics"]["file"])  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        answer = self.answer if len(self.answer) <= 80 else self.answer[:79] + "…"
        return f"<RunResult {self.part} · {self.model} · {self.title}: {answer}>"

    def _repr_html_(self) -> str:
        context = {
            "answer": self.answer,
            "part_title": PARTS[self.part].title,
            "model": self.model,
            "title": self.title,
            "folder": str(self.folder),
            "table": self.table.display_context(),
            "caveats": list(self.caveats),
        }
        return str(macro("run_result", NOTEBOOK)(context))


def open_result(folder: str | os.PathLike[str]) -> RunResult:
    """The result of the finished run in ``folder``, of any part, read without a model.

    Raises
    ------
    DataError
        ``folder`` is not a run folder (no readable manifest), or its
        metrics cannot be read (rescore it: ``folkscope rescore FOLDER``).
    """
    from folkscope.errors import DataError

    path = Path(folder)
    manifest = read_manifest(path)
    with tempfile.TemporaryDirectory() as site:  # the board draws nothing here, but takes a site folder
        board = PARTS[manifest.part].load("leaderboard")([path], site=Path(site), draw=False)
    if not board.tables:
        notes = "; ".join(board.notes) or "the part made no table of it"
        raise DataError(f"{path}: no result to show ({notes})")
    table = board.tables[0]
    model = engine_model_name(manifest.engine) or _first_label(table)
    return RunResult(
        folder=path,
        part=manifest.part,
        model=model,
        title=table.title,
        answer=table.lead or f"{model} on {table.title}",
        table=table,
        caveats=tuple(c.message for c in read_caveats(path)),
    )


def _first_label(table: BoardTable) -> str:
    """The name of the run's own row (a model), not a baseline's."""
    frame = table.frame
    rows = frame[frame["kind"] != "baseline"] if "kind" in frame.columns else frame
    if not len(rows) or not table.labels:
        return "model"
    return " ".join(str(rows.iloc[0][c]) for c in table.labels[:1])
