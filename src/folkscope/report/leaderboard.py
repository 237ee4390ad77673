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
from folkscope.report.page import (
    LONG_TEXT,
    TextNotes,
    bullet_list,
    escape,
    figure_block,
    number,
    render_page,
    scroll_box,
    section,
    write_page,
)
from folkscope.runs.caveats import read_caveats
from folkscope.runs.manifest import CONFIG_FILE, MANIFEST_FILE, read_manifest

__all__ = ["Site", "find_runs", "write_leaderboard"]

#: the site folder when --output is not given, inside the results folder (and skipped when scanning it)
DEFAULT_SITE = "leaderboard"
_SITE_MARK = ".folkscope-leaderboard"

_CSS = """
table.sortable th{cursor:pointer;user-select:none;white-space:nowrap}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2"}table.sortable th[aria-sort=descending]::after{content:" \\25BC"}
table.sortable th:focus{outline:2px solid #4c78a8}
table.sortable .label{text-align:left}
tr.baseline td{background:#fafafa;font-style:italic}td.caveat{background:#fff4d6}.caveat-mark{color:#b26b00;cursor:help}
.caveats{font-size:.9em;border-left:3px solid #e0a800;padding-left:.6em}.ci{color:#777;font-size:.85em;white-space:nowrap}
nav ul{columns:2;font-size:.9em}.lead{font-size:1.05em}
"""

# Sorts a table by the clicked (or Enter/Space-pressed) column; numbers by their data-sort value, n/a last either way.
_SCRIPT = """
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) return cell.textContent.trim().toLowerCase();
    return v === "" ? null : parseFloat(v);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
          var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  });
})();
"""


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
#: the mark of a number whose run has caveats
_MARK = "\u26a0"


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


def _glance_caveats(t: BoardTable) -> str:
    """After a table's one-line answer at the top of the page: how many of its rows carry caveats."""
    n = len(_flagged(t))
    return f" ({_MARK} {n} row{'s' if n != 1 else ''} with caveats, marked in the table)" if n else ""


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


def _sort_value(value: Any) -> str:
    if value is None or isinstance(value, str):
        return "" if value is None else escape(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return escape(value)
    return "" if np.isnan(v) else repr(v)


def _cell(value: Any, *, low: Any = None, high: Any = None, digits: int = 3, caveat: str = "") -> str:
    shown = number(to_jsonable(value), digits=digits)
    if low is not None or high is not None:
        if not (pd.isna(low) and pd.isna(high)):
            shown += f' <span class="ci">[{number(to_jsonable(low), digits=digits)}, {number(to_jsonable(high), digits=digits)}]</span>'
    numeric = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) or value is None
    sort = f' data-sort="{_sort_value(value)}"' if numeric or (isinstance(value, float) and np.isnan(value)) else ""
    mark = f' class="caveat" title="{escape(caveat)}"' if caveat else ""
    return f"<td{sort}{mark}>{shown}</td>"


def _table_html(site: Path, t: BoardTable, notes: TextNotes) -> str:
    """One board table: labels first (the first links to its run), then each metric with its interval; free text
    longer than a cell should hold (a reason a number is missing) is a numbered note under the table."""
    metrics = t.metric_columns
    head = "".join(f'<th class="label">{escape(c)}</th>' for c in t.labels) + "".join(
        f"<th>{escape(c)}</th>" for c in metrics
    )
    rows = []
    for record in t.frame.to_dict(orient="records"):
        link = _link(site, record.get("run"))
        caveat = str(record.get("caveats") or "")
        cells = []
        for i, col in enumerate(t.labels):
            text = escape(record.get(col) if record.get(col) is not None else "")
            if i == 0 and link:
                text = f'<a href="{escape(link)}">{text}</a>'
            if i == 0 and caveat:
                text += f' <span class="caveat-mark" title="{escape(caveat)}">{_MARK}</span>'
            cells.append(f'<td class="label">{text}</td>')
        for col in metrics:
            value = record.get(col)
            if isinstance(value, str) and len(value) > LONG_TEXT:
                cells.append(f"<td>{notes.cell(value, column=col)}</td>")
                continue
            low, high = t.intervals.get(col, (None, None))
            cells.append(
                _cell(
                    record.get(col),
                    low=record.get(low) if low else None,
                    high=record.get(high) if high else None,
                    caveat=caveat,
                )
            )
        kind = ' class="baseline"' if record.get("kind") == "baseline" else ""
        rows.append(f"<tr{kind}>{''.join(cells)}</tr>")
    csv = f'<a href="tables/{escape(t.key)}.csv">CSV</a>'
    about = (f"<p><b>{escape(t.lead)}</b></p>" if t.lead else "") + f'<p class="sub">{escape(t.about)} {csv}</p>'
    return (
        f'<h3 id="{escape(t.key)}">{escape(t.title)}</h3>{about}'
        + scroll_box(
            f'<table class="sortable" data-key="{escape(t.key)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
        + notes.listing()
        + _caveat_list(t)
    )


def _caveat_list(t: BoardTable) -> str:
    """Under a table: what each marked row's caveats are, so the marks are read before the numbers are compared."""
    flagged = _flagged(t)
    if not flagged:
        return ""
    seen, items = set(), []
    for record in flagged:
        name = " ".join(str(record.get(c)) for c in t.labels if record.get(c) is not None)
        if (name, record["caveats"]) not in seen:
            seen.add((name, record["caveats"]))
            items.append(f"<li><b>{escape(name)}</b>: {escape(record['caveats'])}</li>")
    return (
        f'<div class="caveats"><p>{_MARK} Caveats: the marked numbers may not mean what they seem.</p>'
        f"<ul>{''.join(items)}</ul></div>"
    )


def _page(
    root: Path, site: Path, runs: Mapping[str, list[Path]], boards: Mapping[str, PartBoard], notes: Sequence[str]
) -> str:
    n_runs = sum(map(len, runs.values()))
    counts = ", ".join(f"{PARTS[p].title}: {len(v)}" for p, v in runs.items())
    lead = [
        f'<p class="lead">{n_runs} run{"s" if n_runs != 1 else ""} under {escape(root)}'
        f"{f' ({escape(counts)})' if counts else ''}. Click a column head to sort; a model links to its run page.</p>"
    ]
    if not n_runs:
        lead.append(
            "<p>No run folder was found. Run a part first (e.g. <code>folkscope run --model default --task NISTIncome"
            "</code>) with this folder as --results-dir.</p>"
        )
    glance = [
        f"<li><b>{escape(t.title)}</b>: {escape(t.lead)}{_glance_caveats(t)}</li>"
        for b in boards.values()
        for t in b.tables
        if t.lead
    ]
    if glance:
        lead.append(f"<ul>{''.join(glance)}</ul>")
    nav = [
        f'<li><a href="#{escape(t.key)}">{escape(PARTS[name].title)}: {escape(t.title)}</a></li>'
        for name, b in boards.items()
        for t in b.tables
    ]
    body = [*lead, f"<nav><ul>{''.join(nav)}</ul></nav>" if nav else ""]
    text_notes = TextNotes()  # one numbering for the page, so every note marker is unique
    for name, board in boards.items():
        if not board.tables and not board.figures:
            continue
        tables = "\n".join(_table_html(site, t, text_notes) for t in board.tables)
        figures = (
            figure_block(
                {f.title: f.path for f in board.figures},
                run_dir=site,
                captions={f.title: f"{f.title}. {f.about}" if f.about else f.title for f in board.figures},
            )
            if board.figures
            else ""
        )
        body.append(section(PARTS[name].title, tables, figures))
    if notes:
        body.append(section("Not shown", bullet_list(notes, css_class="warn")))
    body.append(
        f'<p class="sub">Tables as data: <a href="leaderboard.json">leaderboard.json</a> and tables/*.csv. '
        f"Written {escape(time.strftime('%Y-%m-%d %H:%M %Z'))}.</p>"
    )
    return render_page("folkscope leaderboard", heading="folkscope leaderboard", body=body, script=_SCRIPT, css=_CSS)
