"""folktexts' :class:`Threshold`: a comparison that turns a column into 0/1 labels (``PINCP > 50000``).

folkscope's tasks hold the same fact in their :class:`~folkscope.tasks.Target`
(``threshold=(">", 50000)``); a :class:`Threshold` converts to and from
that pair, so a folktexts script that builds one keeps working.

Examples
--------
>>> t = Threshold(50000, ">")
>>> str(t), t.apply_to_column_name("PINCP"), t.apply_to_column_data(75000)
('>50000', 'PINCP>50000', 1)
>>> t.as_pair()
('>', 50000)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from folkscope.errors import ConfigError

__all__ = ["Threshold"]


@dataclass(frozen=True)
class Threshold:
    """``value`` and the comparison ``op`` (one of ``>``, ``<``, ``>=``, ``<=``, ``==``, ``!=``)."""

    value: float | int
    op: str

    valid_ops: ClassVar[dict[str, Callable[[Any, Any], Any]]] = {
        ">": operator.gt,
        "<": operator.lt,
        ">=": operator.ge,
        "<=": operator.le,
        "==": operator.eq,
        "!=": operator.ne,
    }

    def __post_init__(self) -> None:
        if self.op not in self.valid_ops:
            raise ConfigError(
                f"comparison must be one of {', '.join(self.valid_ops)}, got {self.op!r}", parameter="op", value=self.op
            )

    def __str__(self) -> str:
        return f"{self.op}{self.value}"

    def apply_to_column_data(self, data: float | int | pd.Series) -> int | pd.Series:
        """1 where the comparison holds, else 0 (a Series stays a Series)."""
        if isinstance(data, pd.Series):
            return self.valid_ops[self.op](data, self.value).astype(int)
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return int(self.valid_ops[self.op](data, self.value))
        raise ConfigError(
            f"a threshold applies to a number or a pandas Series, got {type(data).__name__}", parameter="data"
        )

    def apply_to_column_name(self, column_name: str) -> str:
        """The label column's name, e.g. ``PINCP>50000``."""
        return f"{column_name}{self}"

    def as_pair(self) -> tuple[str, float | int]:
        """``(op, value)``, as :meth:`TaskMetadata.make_task <folkscope.tasks.TaskMetadata.make_task>` takes ``threshold=``."""
        return self.op, self.value
