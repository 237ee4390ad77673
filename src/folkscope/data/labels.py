"""Labels that come with the rows: folktexts' and folktables' formats, read as the task's label.

folktexts keeps a task's label in a column named by its rule
(``PINCP>50000``, ``MIG!=1``: target column, operator, threshold) and uses
such a column as the label when the data already holds it. folktables'
``df_to_pandas`` writes the label in the target's own column, as True/False
by its own rule (``PINCP`` > 50,000, ``PUBCOV``/``ESR``/``MIG`` == 1,
``JWMNP`` > 20). Rows in either format have no raw target to derive the
label from (and often no ``PWGTP``), and were filtered to the task's
population when they were written.

:func:`given_label` finds such a label for a task and says how it relates to
the task's own rule: the same rule, or its complement (a folktables
``MIG`` column is "lived in the same house", folktexts' ACSMobility asks
"has moved"). Which one is found by applying both rules to probe values of
the column (the task's codes, the threshold and its neighbours), so any way a
task writes its target is compared by what it means. A label that is
neither is refused: the task's label cannot be read from it.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from folkscope.errors import DataError
from folkscope.tasks.task import TaskMetadata

__all__ = ["FOLKTABLES_RULES", "GivenLabel", "given_label"]

_COMPARE = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
#: a label column named by its rule, as folktexts names it: COLUMN, operator, number
_RULE_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(==|!=|>=|<=|>|<)(-?\d+(?:\.\d+)?)$")
#: folktables 0.0.12's rule behind the True/False it writes in each ACS task's target column
FOLKTABLES_RULES: dict[str, tuple[str, float]] = {
    "PINCP": (">", 50000.0),
    "PUBCOV": ("==", 1.0),
    "MIG": ("==", 1.0),
    "ESR": ("==", 1.0),
    "JWMNP": (">", 20.0),
}


@dataclass(frozen=True)
class GivenLabel:
    """Where a task's label is in the rows, and how.

    Attributes
    ----------
    column : str
        The column holding it.
    rule : str
        The rule its values follow (``PINCP>50000``).
    complement : bool
        The task's label is 1 where this column says 0 (and the reverse).
    source : {"folktexts", "folktables"}
        Whose format: a column named by its rule, or True/False in the target column.
    """

    column: str
    rule: str
    complement: bool
    source: str

    def labels(self, frame: pd.DataFrame) -> np.ndarray:
        """The task's 0/1 label of every row, from this column; blanks and other values are refused."""
        values = frame[self.column]
        if values.isna().any():
            raise DataError(
                f"label column {self.column} has {int(values.isna().sum())} blank values in the population; "
                "every row needs its label (or give the raw target column instead)"
            )
        as_text = values.map(lambda v: str(v).strip().lower())
        read = as_text.map({"true": 1, "false": 0, "1": 1, "0": 0, "1.0": 1, "0.0": 0})
        if read.isna().any():
            shown = ", ".join(sorted(map(str, values[read.isna()].unique()))[:5])
            raise DataError(f"label column {self.column} must hold 0/1 or True/False, but it holds {shown}")
        labels = read.to_numpy(dtype=np.int8)
        return 1 - labels if self.complement else labels

    def restore_blanks(self, frame: pd.DataFrame, task: TaskMetadata) -> tuple[pd.DataFrame, int]:
        """folktables' rows with their blanks back, and how many: its ACS tasks write a blank feature as 0.

        (``np.nan_to_num(x, -1)`` in folktables 0.0.12 passes -1 as ``copy``,
        so a blank becomes 0.) Only coded columns whose codebook has no 0 are
        restored; a numeric column's 0 cannot be told from a blank and stays.
        """
        if self.source != "folktables":
            return frame, 0
        frame = frame.copy()
        restored = 0
        for column in task.features:
            texts = task.column_texts.get(column)
            if texts is None or texts.kind != "categorical" or column not in frame.columns or 0 in (texts.values or {}):
                continue
            zero = pd.to_numeric(frame[column], errors="coerce").eq(0)
            restored += int(zero.sum())
            frame.loc[zero, column] = np.nan
        return frame, restored


def _is_true_false(column: pd.Series) -> bool:
    """A column of True/False, as folktables writes a label (also read back from a CSV, blanks aside)."""
    if pd.api.types.is_bool_dtype(column):
        return True
    seen = {str(v).strip().lower() for v in column.dropna().unique()}
    return bool(seen) and seen <= {"true", "false"} and not pd.api.types.is_numeric_dtype(column)


def _relation(task: TaskMetadata, op: str, value: float) -> bool | None:
    """False: the rule ``target op value`` is the task's label; True: its complement; None: neither."""
    column = task.target.column
    codes = [
        float(c) for c in getattr(task.column_texts.get(column), "values", None) or {} if isinstance(c, (int, float))
    ]
    probe = np.unique(
        [*codes, *range(-1, 10), value - 1, value - 0.5, value, value + 0.5, value + 1, -value, 2 * value]
    )
    theirs = _COMPARE[op](probe, value).astype(np.int8)
    ours = task.target.labels(pd.DataFrame({column: probe}))
    if np.array_equal(ours, theirs):
        return False
    if np.array_equal(ours, 1 - theirs):
        return True
    return None


def given_label(data: pd.DataFrame, task: TaskMetadata) -> GivenLabel | None:
    """The task's label as the rows give it (folktexts' rule-named column, or folktables' True/False), or None.

    Raises
    ------
    DataError
        The rows hold a label for the task's target column by a rule the
        task's label cannot be read from (e.g. ``PINCP>30000`` for
        ``PINCP>50000``), or a True/False target column of a rule not known.
    """
    target = task.target
    if target.op is None and not target.positive:
        return None  # a target column that is already 0/1: read as it is
    for name in data.columns:
        match = _RULE_NAME.match(str(name))
        if match is None or match.group(1) != target.column:
            continue
        op, value = match.group(2), float(match.group(3))
        complement = _relation(task, op, value)
        if complement is None:
            raise DataError(
                f"the rows' label column {name} is another rule than task {task.name}'s label {target.name}, which "
                f"cannot be read from it; give the raw {target.column} column, or a label column named {target.name}"
            )
        return GivenLabel(str(name), str(name), complement, "folktexts")
    if target.column in data.columns and _is_true_false(data[target.column]):
        rule = FOLKTABLES_RULES.get(target.column)
        complement = None if rule is None else _relation(task, *rule)
        if rule is None or complement is None:
            known = (
                f"folktables' label {target.column}{rule[0]}{rule[1]:g}" if rule else "a label by a rule not known here"
            )
            raise DataError(
                f"column {target.column} holds True/False ({known}), from which task {task.name}'s label "
                f"{target.name} cannot be read; give the raw {target.column} values, or a label column named {target.name}"
            )
        return GivenLabel(target.column, f"{target.column}{rule[0]}{rule[1]:g}", complement, "folktables")
    return None
