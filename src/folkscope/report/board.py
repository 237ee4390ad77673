"""What a part hands the leaderboard: its tables across runs and the figures it drew.

Every part registers a ``leaderboard`` entry point (:mod:`folkscope.registry`)
that takes all of its run folders found under a results directory and
returns a :class:`PartBoard`. The site (:mod:`folkscope.report.leaderboard`)
only lays these out; what a number means, and which numbers belong side by
side, stays with the part that computed them.

A :class:`BoardTable` is a plain DataFrame, one row per model (or baseline,
or group) and one column per metric, plus which columns hold a metric's
interval. Its ``run`` column holds each row's run folder, which the site
turns into a link to that run's own page; an optional ``kind`` column says
``model`` or ``baseline`` (baselines are set apart on the page). The site
adds a ``caveats`` column, each row's run's caveats from its manifest
(:mod:`folkscope.runs.caveats`), and marks those rows' cells.

Examples
--------
>>> import pandas as pd
>>> t = BoardTable(part="risk", key="risk-demo", title="Demo",
...                frame=pd.DataFrame({"model": ["a"], "AUC": [0.7], "AUC low": [0.6], "AUC high": [0.8], "run": ["r"]}),
...                intervals={"AUC": ("AUC low", "AUC high")})
>>> t.metric_columns
['AUC']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope._json import read_json, to_jsonable
from folkscope._names import slug as _slug
from folkscope.errors import DataError
from folkscope.report.templating import NOTEBOOK, macro
from folkscope.runs import Manifest, read_manifest

__all__ = ["BoardFigure", "BoardTable", "PartBoard", "RunMetrics", "estimate", "run_metrics", "slug"]


def slug(text: str) -> str:
    """A file-name-safe key for ``text`` (lower case, runs of other characters as one ``-``).

    >>> slug("risk: NISTIncome (mc-zeroshot)")
    'risk-nistincome-mc-zeroshot'
    """
    return _slug(text, keep="a-z0-9", lower=True, fallback="table")


def estimate(value: Any, low: Any = None, high: Any = None) -> dict[str, Any]:
    """A number and its interval as the notebook template takes them (``interval`` false when there is none).

    >>> estimate(0.5, 0.4, 0.6)["interval"], estimate(0.5)["interval"]
    (True, False)
    """
    interval = bool((low is not None or high is not None) and not (pd.isna(low) and pd.isna(high)))
    return {"value": to_jsonable(value), "low": to_jsonable(low), "high": to_jsonable(high), "interval": interval}


@dataclass(frozen=True, eq=False)
class BoardTable:
    """One sortable table of the site.

    Attributes
    ----------
    part : str
        The part's registry name.
    key : str
        Unique in the site; names the table's CSV file (:func:`slug`-safe).
    title : str
        The heading, e.g. ``"NISTIncome"``.
    frame : DataFrame
        One row per model, baseline or group. ``run`` (the run folder, or
        empty for rows that come from no single run) is turned into a link.
    intervals : mapping of str to (str, str)
        Metric column -> its (low, high) columns, shown as ``[low, high]``
        beside the number in the page (and kept as columns in CSV/JSON).
    about : str
        One line under the heading: what the rows are, how intervals were made.
    labels : sequence of str
        The columns that name a row (model, prompt, group...) rather than measure it.
    lead : str
        The answer in one line (who is best, against what), shown first on the page.
    """

    part: str
    key: str
    title: str
    frame: pd.DataFrame
    intervals: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    about: str = ""
    labels: Sequence[str] = ("model",)
    lead: str = ""

    def __post_init__(self) -> None:
        if self.key != slug(self.key):
            raise DataError(f"leaderboard table key {self.key!r} is not file-safe; build it with report.board.slug")
        missing = [c for pair in self.intervals.values() for c in pair if c not in self.frame]
        missing += [c for c in (*self.intervals, *self.labels) if c not in self.frame]
        if missing:
            raise DataError(f"leaderboard table {self.key}: interval columns {missing} are not in its frame")

    @property
    def metric_columns(self) -> list[str]:
        """The columns shown as numbers, in order (labels and interval bounds left out)."""
        skip = {c for pair in self.intervals.values() for c in pair} | {*self.labels, "run", "kind", "caveats"}
        return [c for c in self.frame.columns if c not in skip]

    def display_context(self) -> dict[str, Any]:
        """The table as the notebook template takes it: label columns, then each metric with its interval."""
        metrics = self.metric_columns
        rows = []
        for record in self.frame.to_dict(orient="records"):
            cells = []
            for col in metrics:
                low, high = self.intervals.get(col, (None, None))
                cells.append(
                    estimate(record.get(col), record.get(low) if low else None, record.get(high) if high else None)
                )
            labels = [record.get(c) if record.get(c) is not None else "" for c in self.labels]
            rows.append({"labels": labels, "metrics": cells})
        return {
            "title": self.title,
            "about": self.about,
            "lead": self.lead,
            "labels": list(self.labels),
            "metrics": metrics,
            "rows": rows,
        }

    def _repr_html_(self) -> str:
        """In Jupyter: the table's one-line answer, then each row's metrics with their intervals."""
        return str(macro("board_table", NOTEBOOK)(self.display_context()))


@dataclass(frozen=True)
class BoardFigure:
    """A figure a part drew for the site: ``path`` is relative to the site folder."""

    part: str
    title: str
    path: str
    about: str = ""


@dataclass(frozen=True)
class PartBoard:
    """A part's contribution: its tables, its figures, and lines about runs it could not read."""

    tables: Sequence[BoardTable] = ()
    figures: Sequence[BoardFigure] = ()
    notes: Sequence[str] = ()

    def _repr_html_(self) -> str:
        """In Jupyter: each table, its answer first (:meth:`BoardTable._repr_html_`)."""
        return "\n".join(t._repr_html_() for t in self.tables)


@dataclass(frozen=True)
class RunMetrics:
    """One run folder as a part's leaderboard reads it: where, its manifest and its ``metrics.json``."""

    folder: Path
    manifest: Manifest
    metrics: Mapping[str, Any]


def run_metrics(folders: Sequence[Path]) -> tuple[list[RunMetrics], list[str]]:
    """Each folder's manifest and metrics, and one line per folder whose metrics cannot be read (it is left out, not fatal)."""
    read, notes = [], []
    for folder in folders:
        manifest = read_manifest(folder)
        try:
            metrics = read_json(folder / manifest.tables["metrics"]["file"])
        except (OSError, ValueError, KeyError) as exc:
            notes.append(
                f"{folder}: metrics unreadable ({type(exc).__name__}); rescore it with `folkscope rescore {folder}`"
            )
            continue
        read.append(RunMetrics(folder, manifest, metrics))
    return read, notes
