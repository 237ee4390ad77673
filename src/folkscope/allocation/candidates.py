"""Who competes for the slots: the candidate table every allocation task hands the scoring code.

A :class:`CandidateSet` is one row per candidate with its group, whether it
is qualified (the ground truth the equal-opportunity gap needs), the name
shown to the model and the full text the model reads, plus the context shown
before every candidate (a job description, an essay task with its rubric).
Its sources each have their module: :mod:`~folkscope.allocation.resumes`
(bundled Bloomberg resumes, the RABBI authors' folder),
:mod:`~folkscope.allocation.essays` (ICNALE) and
:mod:`~folkscope.allocation.acs` (a part-1 run's respondents).

Group labels of the resume tasks are the readable race x gender labels of
:data:`RACE_GENDER_GROUPS`; the paper's reference group is
:data:`DEFAULT_REFERENCE` (White men), for essays :data:`ICNALE_REFERENCE`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from folkscope.errors import DataError

__all__ = [
    "CANDIDATE_COLUMNS",
    "DEFAULT_REFERENCE",
    "ICNALE_REFERENCE",
    "RACE_GENDER_GROUPS",
    "CandidateSet",
    "check_balanced",
]

#: the columns of :attr:`CandidateSet.frame`, in this order (``item`` may be left out of a frame given: it is then "");
#: survey candidates (ACS) may add a ``weight`` column, which the selection rates then use
CANDIDATE_COLUMNS = ("candidate_id", "group", "qualified", "name", "text", "item")
#: race x gender groups of the resume tasks, in the order candidates are listed
RACE_GENDER_GROUPS = (
    "White men",
    "White women",
    "Black men",
    "Black women",
    "Asian men",
    "Asian women",
    "Hispanic men",
    "Hispanic women",
)
#: the reference group of the resume tasks (the paper's "White Male")
DEFAULT_REFERENCE = "White men"
#: the reference group of the essay task (the paper's L1 English speakers)
ICNALE_REFERENCE = "L1 English speakers"


@dataclass(frozen=True, eq=False)
class CandidateSet:
    """The candidates of one allocation subtask.

    Parameters
    ----------
    task : str
        Which source: ``"resumes"`` (bundled Bloomberg), ``"rabbi-resumes"``,
        ``"essays"`` or ``"acs"``.
    subtask : str
        The job (``"software engineer"``), the essay topic (``"PTJ"``) or
        the part-1 task name.
    context : str
        Text shown before every candidate: the job description, or the essay
        task with its rubric ("" for ACS rows, which are scored already).
    frame : DataFrame
        One row per candidate, columns exactly :data:`CANDIDATE_COLUMNS`:
        ``candidate_id`` (str, unique), ``group`` (str, non-empty),
        ``qualified`` (0/1), ``name`` (str, "" when there is none), ``text``
        (str, what the model reads) and ``item`` (str: what the text is apart
        from the name, such as ``"resume-3"``; "" when the text is the
        candidate's own, as an essay or a survey row is). Candidates with items
        are a crossed design: every group must hold the same items, so that a
        gap between groups cannot come from the items (checked by
        :meth:`check_balanced`). ``item`` may be left out (all ""). Stored as a
        normalised copy.
    provenance : dict of str to str
        Where the candidates came from: source, licence, citation, path read
        and the sampling settings, so a run records what it measured.

    Raises
    ------
    DataError
        A column missing or extra, no rows, a repeated id, an empty group,
        a missing value, or ``qualified`` outside {0, 1}.

    Examples
    --------
    >>> frame = pd.DataFrame({"candidate_id": ["a", "b"], "group": ["X", "Y"], "qualified": [1, 0],
    ...                       "name": ["Ann", "Bo"], "text": ["Resume of Ann", "Resume of Bo"]})
    >>> cs = CandidateSet("demo", "job", "A job.", frame, {"source": "hand-made"})
    >>> cs.groups(), len(cs)
    (['X', 'Y'], 2)
    >>> CandidateSet("demo", "job", "", frame.assign(qualified=[1, 2]), {})
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: candidate set demo/job: 'qualified' must be 0 or 1, found 2; mark each candidate qualified (1) or not (0)
    """

    task: str
    subtask: str
    context: str
    frame: pd.DataFrame
    provenance: dict[str, str]

    def __post_init__(self) -> None:
        where = f"candidate set {self.task}/{self.subtask}"
        for field_name in ("task", "subtask"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value.strip():
                raise DataError(f"candidate set: {field_name} must be a non-empty string, got {value!r}")
        if not isinstance(self.context, str):
            raise DataError(f"{where}: context must be a string, got {type(self.context).__name__}")
        if not isinstance(self.provenance, Mapping):
            raise DataError(f"{where}: provenance must be a mapping of strings, got {type(self.provenance).__name__}")
        object.__setattr__(self, "provenance", {str(k): str(v) for k, v in self.provenance.items()})
        object.__setattr__(self, "frame", _checked_frame(self.frame, where))

    def __len__(self) -> int:
        return len(self.frame)

    def groups(self) -> list[str]:
        """The distinct group labels, sorted."""
        return sorted(self.frame["group"].unique().tolist())

    def check_balanced(self) -> None:
        """Refuse (one line) a crossed design whose groups do not hold the same items; see :func:`check_balanced`."""
        check_balanced(self.frame, f"candidate set {self.task}/{self.subtask}")


def check_balanced(frame: pd.DataFrame, where: str = "candidates") -> None:
    """Every group holds the same multiset of items, or a DataError naming two groups that differ.

    When groups hold different resumes, a gap between groups is a gap
    between resumes as much as between names: group and item are confounded
    and no metric can tell them apart. Candidates without items (all "") are
    not a crossed design and pass.

    Examples
    --------
    >>> frame = pd.DataFrame({"group": ["x", "x", "y", "y"], "item": ["r0", "r1", "r1", "r0"]})
    >>> check_balanced(frame)
    >>> check_balanced(frame.assign(item=["r0", "r1", "r1", "r2"]))
    Traceback (most recent call last):
    ...
    folkscope.errors.DataError: candidates: group 'x' holds items r0, r1 but group 'y' holds r1, r2; every group must hold the same items (resumes), or group and item are confounded
    """
    items = frame["item"].astype(str) if "item" in frame else pd.Series("", index=frame.index)
    if not (items != "").any():
        return
    if (items == "").any():
        raise DataError(
            f"{where}: {int((items == '').sum())} candidate(s) have no item while others do; give every "
            "candidate its item, or none"
        )
    held = {str(g): sorted(part.tolist()) for g, part in items.groupby(frame["group"].astype(str), sort=True)}
    (first, want), *rest = held.items()
    for group, got in rest:
        if got != want:
            raise DataError(
                f"{where}: group {first!r} holds items {_items(want)} but group {group!r} holds {_items(got)}; "
                "every group must hold the same items (resumes), or group and item are confounded"
            )


def _items(items: list[str]) -> str:
    """A multiset of items, short: ``r0, r1 x2``, the first few only."""
    counts = pd.Series(items).value_counts(sort=False).sort_index()
    shown = [f"{item}" + (f" x{n}" if n > 1 else "") for item, n in counts.items()]
    return ", ".join(shown[:6]) + (f", ... ({len(shown)} in all)" if len(shown) > 6 else "")


def _checked_frame(frame: Any, where: str) -> pd.DataFrame:
    """A normalised copy of a candidate table, or a DataError naming the first problem."""
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{where}: frame must be a pandas DataFrame, got {type(frame).__name__}")
    columns = [str(c) for c in frame.columns]
    if "item" not in columns:
        frame = frame.assign(item="")
        columns.append("item")
    missing = [c for c in CANDIDATE_COLUMNS if c not in columns]
    extra = [c for c in columns if c not in (*CANDIDATE_COLUMNS, "weight")]
    if missing or extra or len(columns) != len(set(columns)):
        raise DataError(
            f"{where}: columns must be exactly {', '.join(CANDIDATE_COLUMNS)}; "
            f"missing: {', '.join(missing) or 'none'}, extra: {', '.join(extra) or 'none'}; rename or drop them"
        )
    if frame.empty:
        raise DataError(f"{where}: no candidates; a candidate set needs at least one row")
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for column in ("candidate_id", "group", "name", "text", "item"):
        values = frame[column].reset_index(drop=True)
        if values.isna().any():
            raise DataError(
                f"{where}: {int(values.isna().sum())} missing value(s) in {column!r}; use '' for an empty name or text"
            )
        out[column] = values.astype(str)
    repeated = out["candidate_id"][out["candidate_id"].duplicated()].unique().tolist()
    if repeated:
        raise DataError(
            f"{where}: candidate_id must be unique, repeated: {', '.join(map(str, repeated[:3]))}; give every candidate its own id"
        )
    if (out["group"].str.strip() == "").any():
        raise DataError(
            f"{where}: {int((out['group'].str.strip() == '').sum())} candidate(s) have an empty group; label every candidate's group"
        )
    qualified = pd.to_numeric(frame["qualified"].reset_index(drop=True), errors="coerce")
    bad = frame["qualified"].reset_index(drop=True)[~qualified.isin([0, 1])]
    if len(bad):
        raise DataError(
            f"{where}: 'qualified' must be 0 or 1, found {bad.tolist()[0]!r}; mark each candidate qualified (1) or not (0)"
        )
    out["qualified"] = qualified.astype(np.int64)
    if "weight" not in columns:
        return out[list(CANDIDATE_COLUMNS)]
    weight = pd.to_numeric(frame["weight"].reset_index(drop=True), errors="coerce")
    if not (np.isfinite(weight).all() and (weight >= 0).all() and weight.sum() > 0):
        raise DataError(
            f"{where}: 'weight' must be finite survey weights >= 0 with a positive sum; fix or drop the column"
        )
    out["weight"] = weight.astype(np.float64)
    return out[[*CANDIDATE_COLUMNS, "weight"]]
