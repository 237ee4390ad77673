"""Two run folders of one part, compared unit by unit: is B better than A, by how much, and where did it move?

A leaderboard puts runs side by side; this answers the question a user asks
of two of them (two models, or two prompt settings of one model): the paired
difference B - A of every headline metric, with a paired bootstrap interval
(:mod:`folkscope.report.paired`), on the units both runs scored
(:mod:`folkscope.report.matching` decides which, and refuses runs that are
not over the same units), plus the units whose answers moved most. What each
part compares is its own (``<part>/compare.py``), reached through the
registry's ``compare`` entry point, so this module imports no part.

Examples
--------
>>> check_output("diff.json").suffix, check_output(None)
('.json', None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._io import atomic_write
from folkscope._json import to_jsonable, write_json
from folkscope.errors import ConfigError
from folkscope.metrics._validation import check_number
from folkscope.registry import part
from folkscope.report.board import estimate
from folkscope.report.numbers import format_number
from folkscope.report.paired import Options
from folkscope.report.templating import NOTEBOOK, macro
from folkscope.runs import read_caveats, read_manifest

__all__ = ["Comparison", "check_output", "compare_runs"]

#: differences shown in a notebook (:meth:`Comparison._repr_html_`); all of them stay in ``differences``
_SHOWN = 25

_OUTPUTS = (".csv", ".json")


def check_output(path: str | PathLike[str] | None) -> Path | None:
    """The ``--output`` file, refused up front unless it ends in ``.csv`` or ``.json``."""
    if path is None:
        return None
    out = Path(path)
    if out.suffix.lower() not in _OUTPUTS:
        raise ConfigError(f"--output must end in .csv or .json; got {str(out)!r}", parameter="output", value=str(out))
    return out


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_runs`.

    Attributes
    ----------
    part : str
        The part both runs belong to.
    run_a, run_b : Path
    unit : str
        What the runs were paired on (``"row"``, ``"problem"``, ``"appearance"``, ``"task"``).
    n_a, n_b, n_shared : int
        Units each run holds, and those compared.
    differences : pandas.DataFrame
        One row per metric (and scope: a group, a task) with
        :data:`folkscope.report.paired.COLUMNS`: ``a``, ``b``, ``difference``
        (B - A), ``low``/``high`` (paired bootstrap interval), ``favours``.
    moved : pandas.DataFrame
        The units whose answers changed most, largest first.
    moved_unit : str
        What a row of ``moved`` is (the unit, or a finer one: a task's condition).
    headline : tuple of (metric, scope)
        The differences the console leads with.
    notes : tuple of str
        What the reader must know (fewer units than a run holds, rows left out, ...).
    settings : mapping
        ``replicates, seed, confidence, top, shared_rows, survey_weighted``.
    caveats : tuple of str
        Each run's caveats (:mod:`folkscope.runs.caveats`), as ``"A: ..."``
        and ``"B: ..."``: read before the difference, which may compare numbers
        that mean little (a run whose scores collapse has a small ECE for no good reason).
    """

    part: str
    run_a: Path
    run_b: Path
    unit: str
    n_a: int
    n_b: int
    n_shared: int
    differences: pd.DataFrame
    moved: pd.DataFrame
    moved_unit: str = ""
    headline: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    caveats: tuple[str, ...] = ()

    def _clause(self, row: pd.Series, first: bool) -> str:
        d = float(row["difference"])
        title = row["title"]
        if math.isnan(d):
            return f"{title} is undefined in A or B" if first else f"{title} undefined"
        how = "the same" if d == 0 else f"{format_number(abs(d))} {'higher' if d > 0 else 'lower'}"
        text = f"B's {title} is {how}" if first else f"{title} {how}"
        if math.isfinite(row["low"]) and math.isfinite(row["high"]):
            text += (
                f" ({self.settings.get('confidence', 0.95):.0%} CI {format_number(row['low'])} to "
                f"{format_number(row['high'])})"
            )
        return text

    def lead(self) -> str:
        """The answer in one sentence: the headline differences with their intervals.

        For example ``B's AUC is 0.031 higher (95% CI 0.012 to 0.049) on 1,000
        shared rows; ECE 0.020 lower (95% CI 0.004 to 0.035); ...``.
        """
        clauses = []
        for metric, scope in self.headline:
            hit = self.differences[(self.differences["metric"] == metric) & (self.differences["scope"] == scope)]
            if len(hit):
                clauses.append(self._clause(hit.iloc[0], first=not clauses))
        units = f"{self.n_shared:,} shared {self.unit}{'' if self.n_shared == 1 else 's'}"
        if not clauses:
            return f"compared on {units}"
        clauses[0] += f" on {units}"
        return "; ".join(clauses)

    def _repr_html_(self) -> str:
        """In Jupyter: the answer, the caveats, then B − A per metric with its interval, the headline differences
        first (the first rows; all of them are in :attr:`differences`)."""
        frame = self.differences
        first = pd.Series(False, index=frame.index)
        for metric, scope in self.headline:
            first |= (frame["metric"] == metric) & (frame["scope"] == scope)
        rows = [
            {
                **estimate(d["difference"], d["low"], d["high"]),
                "scope": d["scope"],
                "title": d["title"],
                "a": to_jsonable(d["a"]),
                "b": to_jsonable(d["b"]),
                "favours": d["favours"] if isinstance(d["favours"], str) else "",
            }
            for d in pd.concat([frame[first], frame[~first]]).head(_SHOWN).to_dict(orient="records")
        ]
        context = {
            "lead": self.lead(),
            "part_title": part(self.part).title,
            "n_shared": f"{self.n_shared:,}",
            "unit": self.unit,
            "confidence": f"{self.settings.get('confidence', 0.95):.0%}",
            "run_a": str(self.run_a),
            "run_b": str(self.run_b),
            "caveats": list(self.caveats),
            "rows": rows,
            "more": max(0, len(frame) - _SHOWN),
            "notes": list(self.notes),
        }
        return str(macro("comparison", NOTEBOOK)(context))

    def to_dict(self) -> dict[str, Any]:
        """Everything, as plain data (the ``--output FILE.json`` layout)."""
        return {
            "part": self.part,
            "run_a": str(self.run_a),
            "run_b": str(self.run_b),
            "unit": self.unit,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "n_shared": self.n_shared,
            "moved_unit": self.moved_unit,
            "lead": self.lead(),
            "caveats": list(self.caveats),
            "notes": list(self.notes),
            "settings": dict(self.settings),
            "differences": self.differences.to_dict("records"),
            "moved": self.moved.to_dict("records"),
        }

    def write(self, path: str | PathLike[str]) -> list[Path]:
        """Write ``path`` (``.json``: :meth:`to_dict`; ``.csv``: the differences, and the moved units beside it
        as ``<name>-moved.csv``); return the files written."""
        out = check_output(path)
        if out is None:
            raise ConfigError("write needs a file ending in .csv or .json; got None", parameter="path", value=None)
        if out.suffix.lower() == ".json":
            write_json(out, self.to_dict())
            return [out]
        moved = out.with_name(f"{out.stem}-moved{out.suffix}")
        for frame, target in ((self.differences, out), (self.moved, moved)):
            text = frame.to_csv(index=False).encode("utf-8")
            atomic_write(target, lambda fh, text=text: fh.write(text))
        return [out, moved]


def compare_runs(
    run_a: str | PathLike[str],
    run_b: str | PathLike[str],
    *,
    replicates: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    top: int = 10,
    shared_rows: bool = False,
    survey_weighted: bool = False,
) -> Comparison:
    """Paired comparison of two run folders of the same part over the same units (B minus A).

    Parameters
    ----------
    run_a, run_b : path
        Run folders (each with its ``manifest.json``) of one part.
    replicates : int, default 1000
        Paired bootstrap resamples; 0 gives the differences without intervals.
    seed : int, default 0
        Seed of the resamples (the same seed, the same numbers).
    confidence : float in (0, 1), default 0.95
    top : int, default 10
        How many of the most-moved units to list.
    shared_rows : bool, default False
        Compare on the shared units even when the runs only partly overlap
        (see :mod:`folkscope.report.matching`).
    survey_weighted : bool, default False
        Risk runs: survey-weighted metrics (the ``weight`` column), as the
        run's ``survey_weighted`` section; otherwise unweighted.

    Returns
    -------
    Comparison

    Raises
    ------
    ConfigError
        The folders are runs of different parts or subjects (tasks,
        datasets), or an option is out of range.
    DataError
        A folder is not a run folder, or the runs are not over the same units.
    """
    check_number(replicates, "replicates", integer=True, low=0)
    check_number(seed, "seed", integer=True, low=0)
    check_number(top, "top", integer=True, low=0)
    check_number(confidence, "confidence", low=0, high=1, low_open=True, high_open=True)
    a, b = Path(run_a), Path(run_b)
    parts = (read_manifest(a).part, read_manifest(b).part)
    if parts[0] != parts[1]:
        raise ConfigError(
            f"run A ({a}) is of part {parts[0]!r} and run B ({b}) of part {parts[1]!r}; compare two runs of "
            "the same part",
            parameter="runs",
            value=[str(a), str(b)],
        )
    opts = Options(
        replicates=int(replicates),
        seed=int(seed),
        confidence=float(confidence),
        top=int(top),
        shared_rows=bool(shared_rows),
        survey_weighted=bool(survey_weighted),
    )
    if survey_weighted and parts[0] != "risk":
        raise ConfigError(
            f"--survey-weighted is for risk runs; these are {parts[0]} runs", parameter="survey_weighted", value=True
        )
    res = part(parts[0]).load("compare")(a, b, opts)
    settings = {
        "replicates": opts.replicates,
        "seed": opts.seed,
        "confidence": opts.confidence,
        "top": opts.top,
        "shared_rows": opts.shared_rows,
        "survey_weighted": opts.survey_weighted,
    }
    differences = res.differences.astype({c: np.float64 for c in ("a", "b", "difference", "low", "high", "std_error")})
    caveats = tuple(f"{name}: {c.message}" for name, run in (("A", a), ("B", b)) for c in read_caveats(run))
    return Comparison(
        parts[0],
        a,
        b,
        res.unit,
        res.n_a,
        res.n_b,
        res.n_shared,
        differences,
        res.moved,
        res.moved_unit or res.unit,
        res.headline,
        res.notes,
        settings,
        caveats,
    )
