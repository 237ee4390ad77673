"""Results leave the project: run folders as a Hugging Face dataset with a card, and runs logged to trackers.

- :func:`export_runs`: runs (or studies' runs) as one ``datasets.DatasetDict``
  saved at a folder, loadable with ``datasets.load_from_disk``, with a
  dataset card (:mod:`~folkscope.export.hf`, :mod:`~folkscope.export.card`);
  :func:`~folkscope.export.hf.push_export` uploads it to the Hub;
- :func:`log_runs` (:mod:`~folkscope.export.trackers`): a run's config,
  metrics, tables, figures and page logged to Weights & Biases or MLflow
  through their own libraries, after the run folder is published.

This layer reads run folders only through :mod:`folkscope.runs` and reaches
a part only through :mod:`folkscope.registry`; nothing below the command
line imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from folkscope.export.card import render_card
from folkscope.export.hf import check_export_dir, push_export, run_tables, save_dataset
from folkscope.export.sources import ExportedRun, resolve_runs
from folkscope.export.trackers import TrackerOptions, check_trackers, log_runs

__all__ = [
    "ExportedRun",
    "TrackerOptions",
    "check_export_dir",
    "check_trackers",
    "export_runs",
    "log_runs",
    "push_export",
    "resolve_runs",
]


def export_runs(runs: Sequence[ExportedRun], folder: str | Path, *, command: str = "") -> Path:
    """Save ``runs`` (from :func:`resolve_runs`) as one dataset with its card at ``folder``; returns the folder.

    Examples
    --------
    >>> import datasets  # doctest: +SKIP
    >>> export_runs(resolve_runs(["results/NISTIncome/m/mc-zeroshot-1234abcd"]), "export")  # doctest: +SKIP
    >>> datasets.load_from_disk("export")["scores"]  # doctest: +SKIP
    """
    target = check_export_dir(folder)
    tables = run_tables(runs)
    card = render_card(runs, {split: len(frame) for split, frame in tables.items()}, command=command)
    return save_dataset(tables, target, card)
