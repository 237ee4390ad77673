"""The leaderboard site: every part's runs under a results folder, side by side, as one static page.

:func:`find_runs` walks a results folder for run folders (each holds a
``manifest.json``, or a legacy ``config.json`` its part recognises) and sorts
them by part through their manifests; :func:`write_leaderboard` asks each
part, through its registry entry point, for its tables and figures
(:class:`folkscope.report.board.PartBoard`) and writes

- ``index.html``: the tables (sortable by clicking a column head), each
  number with its interval, each row linking to its run's own page, and
  the figures; self-contained (inline CSS and one inline script allowed by
  its hash; no request leaves the page, so it opens from the file system);
- ``tables/<key>.csv``, one per table, and ``leaderboard.json`` with all of
  them, for whoever wants the numbers rather than the page;
- ``figures/*.png`` when matplotlib is installed (the ``plots`` extra).

Examples
--------
>>> import tempfile
>>> site = write_leaderboard(tempfile.mkdtemp())  # an empty results folder
>>> site.n_runs, site.index.name
(0, 'index.html')
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_write
from folkscope._json import to_jsonable, write_json
from folkscope.errors import ConfigError, DataError
from folkscope.registry import PARTS
from folkscope.report.board import BoardFigure, BoardTable, PartBoard
from folkscope.report.page import LONG_TEXT, TextNotes, figure_block, render_page, write_page
from folkscope.report.templating import NOTEBOOK, macro
from folkscope.runs.caveats import read_caveats
from folkscope.runs.manifest import CONFIG_FILE, MANIFEST_FILE, read_manifest

__all__ = ["Site", "find_runs", "write_leaderboard"]

#: the site folder when --output is not given, inside the results folder (and skipped when scanning it)
DEFAULT_SITE = "leaderboard"
_SITE_MARK = ".folkscope-leaderboard"

#: the page's templates (:mod:`folkscope.report.templating`): its body, extra stylesheet and the sorting script
_TEMPLATE = "report/templates/leaderboard.html"
_STYLES = ("report/templates/leaderboard.css",)
_SCRIPT = "report/templates/sortable.js"


@dataclass(frozen=True)
class Site:
    """What :func:`write_leaderboard` wrote."""

    folder: Path
    index: Path
    n_runs: int
    runs_by_part: Mapping[str, int]
    tables: Sequence[BoardTable] = ()
    figures: Sequence[BoardFigure] = ()
    notes: Sequence[str] = ()
    files: Sequence[Path] = field(default_factory=tuple)

    def _repr_html_(self) -> str:
        """In Jupyter: every table of the site, each with its one-line answer first, then where the page is."""
        tables = "\n".join(t._repr_html_() for t in self.tables)
        return tables + str(macro("site_footer", NOTEBOOK)(self.n_runs, str(self.index)))


def find_runs(
    results_dir: str | os.PathLike[str], *, skip: Iterable[Path] = ()
) -> tuple[dict[str, list[Path]], list[str]]:
    """Every run folder under ``results_dir``, by part, and one line per folder that looked like a run but could not be read.

    Hidden folders (a run being written, ``.<name>.staging``; a replaced one,
    ``.<name>.old``) and leaderboard sites are not runs. The walk does not
    descend into a run folder.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise ConfigError(
            f"no results folder at {root}; pass the --results-dir your runs were written to",
            parameter="results_dir",
            value=str(root),
        )
    skipped = {p.resolve() for p in skip}
    runs: dict[str, list[Path]] = {}
    problems: list[str] = []
    for here, dirs, files in os.walk(root):
        folder = Path(here)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and (folder / d).resolve() not in skipped
            and not (folder / d / _SITE_MARK).exists()
        )
        if MANIFEST_FILE not in files and CONFIG_FILE not in files:
            continue
        dirs[:] = []  # a run folder's own subfolders (plots) are not runs
        try:
            manifest = read_manifest(folder)
        except DataError as exc:
            problems.append(f"{folder}: {exc}")
            continue
        if manifest.part not in PARTS:
            problems.append(
                f"{folder}: a run of part {manifest.part!r}, which this folkscope does not know; upgrade folkscope"
            )
            continue
        runs.setdefault(manifest.part, []).append(folder)
    return runs, problems


def write_leaderboard(
    results_dir: str | os.PathLike[str], output: str | os.PathLike[str] | None = None, *, draw: bool | None = None
) -> Site:
    """Scan ``results_dir`` and write the leaderboard site to ``output`` (default ``results_dir/leaderboard``).

    Parameters
    ----------
    results_dir : path-like
        Where the runs are (any depth; the layout of :mod:`folkscope.runs.layout`).
    output : path-like, optional
        The site folder; written afresh each time (the previous page, tables and
        figures are replaced, nothing else in the folder is touched).
    draw : bool, optional
        Draw figures; default: when matplotlib is installed.
    """
    root = Path(results_dir)
    site = Path(output) if output is not None else root / DEFAULT_SITE
    runs, problems = find_runs(root, skip=[site])
    site.mkdir(parents=True, exist_ok=True)
    (site / _SITE_MARK).touch()
    missing_plots = importlib.util.find_spec("matplotlib") is None
    if draw is None:
        draw = not missing_plots
    boards: dict[str, PartBoard] = {}
    for name, folders in runs.items():
        boards[name] = PARTS[name].load("leaderboard")(sorted(folders), site=site, draw=draw)
    known: dict[str, tuple[str, ...]] = {}  # run folder -> its caveats, read once per site
    boards = {
        name: dataclasses.replace(b, tables=[_with_caveats(t, known) for t in b.tables]) for name, b in boards.items()
    }
    tables = [t for b in boards.values() for t in b.tables]
    keys = [t.key for t in tables]
    if len(set(keys)) != len(keys):
        raise DataError(f"two leaderboard tables share a key: {sorted({k for k in keys if keys.count(k) > 1})}")
    notes = [*problems, *(n for b in boards.values() for n in b.notes)]
    if not draw and missing_plots:
        notes.append(
            "No figures: matplotlib is not installed (pip install 'folkscope[plots]'); the tables are complete."
        )
    files = _write_tables(site, tables)
    figures = [f for b in boards.values() for f in b.figures]
    page = _page(root, site, runs, boards, notes)
    index = write_page(site / "index.html", page)
    return Site(
        folder=site,
        index=index,
        n_runs=sum(map(len, runs.values())),
        runs_by_part={k: len(v) for k, v in runs.items()},
        tables=tables,
        figures=figures,
        notes=notes,
        files=(index, *files),
    )


# ----------------------------------------------------------------------------- caveats
def _run_caveats(run: Any) -> tuple[str, ...]:
    """The caveat messages a run folder's manifest records (none for a row of no single run, or an unreadable manifest)."""
    if not isinstance(run, str) or not run:
        return ()
    try:
        return tuple(c.message for c in read_caveats(run))
    except (DataError, OSError):  # the part's board reads the manifest too: a damaged one is its note to make
        return ()


def _with_caveats(t: BoardTable, known: dict[str, tuple[str, ...]]) -> BoardTable:
    """``t`` with a ``caveats`` column: the caveats of each row's run, one text (empty where there are none).

    Baseline rows stay unmarked: they link to a run for its rows, but the
    caveats are about that run's model.
    """
    if "run" not in t.frame.columns:
        return t
    kinds = t.frame["kind"] if "kind" in t.frame.columns else pd.Series("model", index=t.frame.index)
    texts = []
    for run, kind in zip(t.frame["run"], kinds):
        key = run if isinstance(run, str) and kind != "baseline" else ""
        if key not in known:
            known[key] = _run_caveats(key)
        texts.append(" ".join(known[key]))
    return dataclasses.replace(t, frame=t.frame.assign(caveats=texts))


def _flagged(t: BoardTable) -> list[dict[str, Any]]:
    """The rows of ``t`` whose run has caveats."""
    if "caveats" not in t.frame.columns:
        return []
    return [r for r in t.frame.to_dict(orient="records") if r.get("caveats")]


# ----------------------------------------------------------------------------- files
def _write_tables(site: Path, tables: Sequence[BoardTable]) -> list[Path]:
    folder = site / "tables"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.csv"):  # a table whose runs are gone must not linger
        if old.stem not in {t.key for t in tables}:
            old.unlink()
    written = [atomic_write(folder / f"{t.key}.csv", lambda fh, f=t.frame: f.to_csv(fh, index=False)) for t in tables]
    record = {
        "tables": [
            {
                "part": t.part,
                "key": t.key,
                "title": t.title,
                "about": t.about,
                "intervals": {k: list(v) for k, v in t.intervals.items()},
                "rows": to_jsonable(t.frame.replace({np.nan: None}).to_dict(orient="records")),
            }
            for t in tables
        ]
    }
    write_json(site / "leaderboard.json", record)
    return [*written, site / "leaderboard.json"]


# ----------------------------------------------------------------------------- page
def _link(site: Path, run: Any) -> str | None:
    """The relative link from the site to a run's page (its folder when it has no page), or None."""
    if not isinstance(run, str) or not run:
        return None
    folder = Path(run)
    target = folder / "report.html" if (folder / "report.html").is_file() else folder
    rel = os.path.relpath(target.resolve(), site.resolve())
    return Path(rel).as_posix()


def _sort_value(value: Any) -> str | None:
    """A number cell's ``data-sort`` key ("" for n/a, which sorts last); None for a text cell, sorted by its text."""
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) or value is None
    if not numeric:
        return None
    if value is None:
        return ""
    v = float(value)
    return "" if np.isnan(v) else repr(v)


def _metric_cell(value: Any, *, low: Any = None, high: Any = None, caveat: str = "") -> dict[str, Any]:
    shown = to_jsonable(value)
    return {
        "note": None,
        "value": shown,
        "interval": (low is not None or high is not None) and not (pd.isna(low) and pd.isna(high)),
        "low": to_jsonable(low),
        "high": to_jsonable(high),
        "sort": _sort_value(value),
        "caveat": caveat,
    }


def _table_context(site: Path, t: BoardTable, notes: TextNotes) -> dict[str, Any]:
    """One board table for the template: labels first (the first links to its run), then each metric with its
    interval; free text longer than a cell should hold (a reason a number is missing) is a numbered note under the
    table."""
    metrics = t.metric_columns
    rows = []
    for record in t.frame.to_dict(orient="records"):
        link = _link(site, record.get("run"))
        caveat = str(record.get("caveats") or "")
        labels = [
            {
                "text": record.get(col) if record.get(col) is not None else "",
                "link": link if i == 0 else None,
                "caveat": caveat if i == 0 else "",
            }
            for i, col in enumerate(t.labels)
        ]
        cells = []
        for col in metrics:
            value = record.get(col)
            if isinstance(value, str) and len(value) > LONG_TEXT:
                cells.append({"note": notes.cell(value, column=col)})
                continue
            low, high = t.intervals.get(col, (None, None))
            cells.append(
                _metric_cell(
                    value,
                    low=record.get(low) if low else None,
                    high=record.get(high) if high else None,
                    caveat=caveat,
                )
            )
        rows.append({"baseline": record.get("kind") == "baseline", "labels": labels, "metrics": cells})
    return {
        "key": t.key,
        "title": t.title,
        "lead": t.lead,
        "about": t.about,
        "labels": list(t.labels),
        "metrics": metrics,
        "rows": rows,
        "notes": notes.listing(),
        "caveats": _caveat_items(t),
    }


def _caveat_items(t: BoardTable) -> list[tuple[str, str]]:
    """Under a table: each marked row's name and caveats, once, so the marks are read before the numbers are compared."""
    items: list[tuple[str, str]] = []
    for record in _flagged(t):
        name = " ".join(str(record.get(c)) for c in t.labels if record.get(c) is not None)
        if (name, record["caveats"]) not in items:
            items.append((name, record["caveats"]))
    return items


def _page(
    root: Path, site: Path, runs: Mapping[str, list[Path]], boards: Mapping[str, PartBoard], notes: Sequence[str]
) -> str:
    text_notes = TextNotes()  # one numbering for the page, so every note marker is unique
    parts = [
        {
            "title": PARTS[name].title,
            "tables": [_table_context(site, t, text_notes) for t in board.tables],
            "figures": figure_block(
                {f.title: f.path for f in board.figures},
                run_dir=site,
                captions={f.title: f"{f.title}. {f.about}" if f.about else f.title for f in board.figures},
            )
            if board.figures
            else "",
        }
        for name, board in boards.items()
        if board.tables or board.figures
    ]
    body = macro("body", _TEMPLATE)(
        sum(map(len, runs.values())),
        str(root),
        ", ".join(f"{PARTS[p].title}: {len(v)}" for p, v in runs.items()),
        [(t.title, t.lead, len(_flagged(t))) for b in boards.values() for t in b.tables if t.lead],
        [(t.key, f"{PARTS[name].title}: {t.title}") for name, b in boards.items() for t in b.tables],
        parts,
        list(notes),
        time.strftime("%Y-%m-%d %H:%M %Z"),
    )
    return render_page(
        "folkscope leaderboard", heading="folkscope leaderboard", body=[body], script=_SCRIPT, styles=_STYLES
    )
