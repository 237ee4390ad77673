"""Epidemiology tasks as data: one JSON file per dataset, no Python to add a task.

Why one module: the task-file format (its schema, its checks, its loader) is one
contract with the files in ``resources/tasks``; a file is checked against one
place.

A file names its dataset, the population, and its survey-weight column,
stated explicitly: ``"weights": "PWGTP"``, or ``"weights": null`` together
with ``"unweighted_because"`` (why the sample's own shares are the truth).
A file that leaves the weights unsaid is refused (the authors' code weighted
NHANES by body weight and scored GSS unweighted by mistake).

Each task: an outcome column with its levels and their answer texts, an
optional conditioning column with its levels and texts (low-dimensional), or
2-5 ``conditions`` and a ``person`` template that describes one combination
of their levels, e.g. ``"{SEX} aged {AGEP} with {EDU}"`` (high-dimensional,
binary outcome, truth per person), an optional population subset, a QA question (``{condition}`` filled in) and a
likelihood question (``{condition}`` and ``{outcome}``). A level is
``{"value": v}``, ``{"values": [...]}`` or a range ``{"min": a, "max": b}``
(``min`` included, ``max`` excluded) or ``{"over": a, "upto": b}`` (``a < x
<= b``, the right-closed classes the papers cut with), each with its ``text``.

A file may name its own rows, ``"data": "rows.csv"`` (CSV or parquet,
relative to the task file or absolute): its tasks are then computed on that
file, with the file's ``"weights"`` column, so a new survey needs a task
file and its data, no Python. Such files are run with ``--task-file`` or
``--task-dir``.

Two other kinds of file hold ordinary tasks:

- generated ones (a top-level ``"generated"`` record, written by
  :func:`folkscope.epidemiology.phrases.generate_task_file` from a phrase
  table): their tasks are flagged ``generated``, and a default run leaves
  them out (they are asked by name, ``--dataset`` or ``--dimension``);
- published tables (:mod:`~folkscope.epidemiology.aggregate`): a ``"source"``
  citation and, per task, a ``"table"`` of proportions that is the truth;
  their levels are named by ``value`` (the table's keys).

Examples
--------
>>> task = get_task("acs_income_by_sex")
>>> task.dataset, [lv.text for lv in task.outcome.levels], task.condition.column
('nist-acs', ['less than $50,000', '$50,000 or more'], 'SEX')
>>> task.question("a woman")
'What is the yearly personal income of a woman aged 18 or over in the United States?'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from folkscope._json import read_data_file
from folkscope._names import did_you_mean
from folkscope.data.files import SUFFIXES
from folkscope.epidemiology.aggregate import AggregateTable, parse_source, parse_table
from folkscope.errors import ConfigError, DataError
from folkscope.prompting import format_slots

__all__ = [
    "Level",
    "Task",
    "TaskFile",
    "Variable",
    "get_task",
    "list_tasks",
    "load_task_file",
    "parse_task",
    "task_files",
    "user_task_files",
]

_BUNDLED = Path(__file__).with_name("resources") / "tasks"


def _shown(value: Any) -> str:
    """A level's value as the task file writes it (JSON: ``"1"`` is text, ``1`` a number)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _kind_of(value: Any) -> str | None:
    """``number``, ``text`` or ``true/false`` for a value a level may hold; None for anything else (null, a list)."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)) and not (isinstance(value, float) and np.isnan(value)):
        return "number"
    return "text" if isinstance(value, str) else None


def _column_kind(column: pd.Series) -> str:
    """What a column holds: ``number``, ``text``, ``true/false`` or ``mixed`` values (categories: their values')."""
    values = column.cat.categories if isinstance(column.dtype, pd.CategoricalDtype) else column
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred in ("integer", "floating", "mixed-integer-float", "decimal", "integer-na"):
        return "number"
    return {"string": "text", "boolean": "true/false", "empty": "nothing"}.get(inferred, "mixed")


def _compatible(value_kind: str | None, column_kind: str) -> bool:
    """Whether a value of ``value_kind`` can equal a value of a column holding ``column_kind`` (true/false counts as 1/0)."""
    if column_kind in ("mixed", "nothing"):
        return True
    numeric = {"number", "true/false"}
    return value_kind == column_kind or (value_kind in numeric and column_kind in numeric)


#: how an error message names a value's kind, and a column's
_KIND_NOUN = {"number": "the number", "text": "the text", "true/false": "the truth value"}
_KINDS_NOUN = {
    "number": "numbers",
    "text": "text",
    "true/false": "true/false values",
    "mixed": "mixed values",
    "nothing": "no value",
}


def _existing(column: pd.Series) -> str:
    """The values a column does hold, for an error message (their range where there are many numbers)."""
    present = [v.item() if isinstance(v, np.generic) else v for v in pd.unique(column.dropna())]
    if not present:
        return "no value here"
    if len(present) > 12 and _column_kind(column) == "number":
        return f"{len(present):,} values from {min(present)} to {max(present)}"
    shown = sorted(present, key=lambda v: (str(type(v)), v))[:12]
    return ", ".join(map(_shown, shown)) + (f", ... ({len(present):,} in all)" if len(present) > 12 else "")


@dataclass(frozen=True)
class Level:
    """One level of a variable: the values it covers and how a question says it."""

    text: str
    value: Any = None
    values: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    #: the right-closed bounds a < x <= b, as the papers' cuts are written (``pd.cut``'s default)
    over: float | None = None
    upto: float | None = None

    @property
    def is_range(self) -> bool:
        """A range of numbers (``min``/``over`` below, ``max``/``upto`` above) rather than listed values."""
        return any(b is not None for b in (self.min, self.over, self.max, self.upto))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Level:
        if not isinstance(data, Mapping):
            raise DataError(
                f"{where}: a level is an object with its 'text' and 'value', 'values' or 'min'/'max', got {_shown(data)[:60]}"
            )
        keys = set(data) - {"text"}
        if not isinstance(data.get("text"), str) or not data["text"].strip():
            raise DataError(f"{where}: every level needs a non-empty 'text'")
        if (
            not keys
            or not (keys <= {"value"} or keys <= {"values"} or keys <= {"min", "over", "max", "upto"})
            or {"min", "over"} <= keys
            or {"max", "upto"} <= keys
        ):
            raise DataError(
                f"{where}: level {data['text']!r} needs exactly one of 'value', 'values', or a range: 'min' (included) "
                "or 'over' (excluded) below, 'max' (excluded) or 'upto' (included) above"
            )
        values = data.get("values")
        if values is not None and (not isinstance(values, list) or not values):
            raise DataError(f"{where}: 'values' of level {data['text']!r} must be a non-empty list")
        for value in values if values is not None else [data["value"]] if "value" in data else []:
            if _kind_of(value) is None:
                raise DataError(
                    f"{where}: level {data['text']!r} has the value {_shown(value)}; a value is a number, a text or "
                    "true/false, as the column holds it"
                )
        for bound in ("min", "over", "max", "upto"):
            if bound in data and _kind_of(data[bound]) != "number":
                raise DataError(
                    f"{where}: '{bound}' of level {data['text']!r} must be a number, got {_shown(data[bound])}"
                )
        low = next((b for b in ("min", "over") if data.get(b) is not None), None)
        high = next((b for b in ("max", "upto") if data.get(b) is not None), None)
        if low and high and not (data[low] <= data[high] if (low, high) == ("min", "upto") else data[low] < data[high]):
            raise DataError(
                f"{where}: level {data['text']!r} is empty: '{low}' {data[low]} and '{high}' {data[high]} leave no number"
            )
        return cls(
            text=data["text"],
            value=data.get("value"),
            values=None if values is None else tuple(values),
            min=data.get("min"),
            max=data.get("max"),
            over=data.get("over"),
            upto=data.get("upto"),
        )

    def describe(self) -> str:
        """What the level covers, as a task file writes it (``= 1``, ``in [1, 2]``, ``18 <= x < 65``)."""
        if self.values is not None:
            return f"in [{', '.join(map(_shown, self.values))}]"
        if not self.is_range:
            return f"= {_shown(self.value)}"
        return " ".join(
            p
            for p in (
                f"{self.min} <=" if self.min is not None else f"{self.over} <" if self.over is not None else "",
                "x",
                f"< {self.max}" if self.max is not None else f"<= {self.upto}" if self.upto is not None else "",
            )
            if p
        )

    def check(self, column: pd.Series, *, task: str, role: str, empty_ok: bool = False) -> None:
        """Refuse a level whose values are of another type than ``column``'s, or (unless ``empty_ok``) that no row matches.

        Either would be scored without a word: ``"1"`` for a numeric column
        matches nobody, so that answer's respondents vanish from the truth.
        """
        where = f"task {task}: {role} level {self.text!r} of {column.name}"
        kind = _column_kind(column)
        if (
            self.values is None
            and self.value is None
            and kind == "text"
            and pd.to_numeric(column, errors="coerce").notna().any()
        ):
            kind = "number"  # codes stored as text ("00105") are ranged as the numbers they spell, as mask() does
        given = (
            (self.min, self.over, self.max, self.upto)
            if self.values is None and self.value is None
            else self.values
            if self.values is not None
            else (self.value,)
        )
        clash = [v for v in given if v is not None and not _compatible(_kind_of(v), kind)]
        if clash:
            raise DataError(
                f"{where} is {_KIND_NOUN[str(_kind_of(clash[0]))]} {_shown(clash[0])}, but {column.name} holds "
                f"{_KINDS_NOUN[kind]} ({column.dtype}): {_existing(column)}; write the level as the column holds it"
            )
        if not empty_ok and not self.mask(column).any():
            raise DataError(
                f"{where} ({self.describe()}) matches no respondent; {column.name} holds {_existing(column)}; "
                "fix or drop the level"
            )

    def mask(self, column: pd.Series) -> np.ndarray:
        """Which rows of ``column`` fall in this level."""
        if self.values is not None:
            return column.isin(self.values).to_numpy()
        if not self.is_range:
            return (column == self.value).fillna(False).to_numpy(dtype=bool)
        numbers = pd.to_numeric(column, errors="coerce")
        keep = numbers.notna().to_numpy().copy()  # pandas may hand out a read-only view
        if self.min is not None:
            keep &= (numbers >= self.min).fillna(False).to_numpy()
        if self.max is not None:
            keep &= (numbers < self.max).fillna(False).to_numpy()
        if self.over is not None:
            keep &= (numbers > self.over).fillna(False).to_numpy()
        if self.upto is not None:
            keep &= (numbers <= self.upto).fillna(False).to_numpy()
        return keep


@dataclass(frozen=True)
class Variable:
    """A column and its levels."""

    column: str
    levels: tuple[Level, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Variable:
        if not isinstance(data, Mapping) or not isinstance(data.get("column"), str):
            raise DataError(f"{where}: needs a 'column' and its 'levels'")
        levels = data.get("levels")
        if not isinstance(levels, list) or len(levels) < 1:
            raise DataError(f"{where}: column {data['column']!r} needs at least one level")
        parsed = tuple(Level.from_dict(lv, f"{where} ({data['column']})") for lv in levels)
        if len({lv.text for lv in parsed}) != len(parsed):
            raise DataError(f"{where}: two levels of {data['column']!r} share a text")
        return cls(column=data["column"], levels=parsed)

    def codes(self, frame: pd.DataFrame) -> np.ndarray:
        """Each row's level index, -1 for a row in no level; a row in two levels is a task error."""
        if self.column not in frame:
            raise DataError(f"the data has no column {self.column!r}; columns: {', '.join(map(str, frame.columns))}")
        masks = np.stack([lv.mask(frame[self.column]) for lv in self.levels])
        overlap = masks.sum(axis=0) > 1
        if overlap.any():
            raise DataError(f"levels of {self.column!r} overlap: a value falls in two of them; make them disjoint")
        return np.where(masks.any(axis=0), masks.argmax(axis=0), -1)


@dataclass(frozen=True)
class Task:
    """One epidemiology question: P(outcome | condition) in a dataset's population."""

    name: str
    dataset: str
    population: str
    weights: str | None
    outcome: Variable
    condition: Variable | None
    qa: str
    likelihood: str
    subset: Mapping[str, Level]
    conditions: tuple[Variable, ...] = ()
    person: str | None = None
    #: the published truth of a task on an aggregate table (no microdata), else None
    table: AggregateTable | None = field(default=None, repr=False)
    #: written by the phrase-table generator: left out of a default run
    generated: bool = field(default=False, repr=False)
    #: the rows the task file names for itself (``"data"``), else None: the dataset's own loader
    data_file: Path | None = field(default=None, repr=False)

    @property
    def rows_key(self) -> str:
        """Which table the task's rows come from: its own data file, else its dataset."""
        return str(self.data_file) if self.data_file is not None else self.dataset

    @property
    def dimension(self) -> str:
        """``low`` (zero or one conditioning variable, a distribution per level) or ``high`` (2-5, a binary truth per person)."""
        return "high" if self.conditions else "low"

    def cells(self, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """High-dimensional tasks: each row's level codes (rows x conditions; -1 where in no level), its cell
        index (-1 likewise) and the text of every cell present, from the ``person`` template."""
        codes = np.column_stack([v.codes(rows) for v in self.conditions])
        complete = (codes >= 0).all(axis=1)
        keys, cell = np.unique(codes[complete], axis=0, return_inverse=True)
        index = np.full(len(rows), -1)
        index[complete] = cell.ravel()
        texts = [
            str(self.person).format(**{v.column: v.levels[int(c)].text for v, c in zip(self.conditions, key)})
            for key in keys
        ]
        return codes, index, texts

    def question(self, condition_text: str | None) -> str:
        """The QA question for one condition level (or the unconditional one)."""
        return self.qa.format(condition=condition_text or "")

    def likelihood_question(self, condition_text: str | None, outcome_text: str) -> str:
        """The likelihood question for one condition and one outcome level."""
        return self.likelihood.format(condition=condition_text or "", outcome=outcome_text)

    def check_levels(self, frame: pd.DataFrame, *, empty_ok: bool = False) -> None:
        """Every level of the subset, the outcome and the conditions matches respondents of the task's population,
        with the column's type; checked before any model loads (:func:`~folkscope.epidemiology.truth.task_truth`).

        ``empty_ok`` checks the types only (the phrase-table generator skips a
        draw with an empty level rather than stopping).

        Raises
        ------
        DataError
            One line naming the task, the column, the level, its type against
            the column's and the values the column does hold.
        """
        if self.table is not None:
            return
        keep = np.ones(len(frame), dtype=bool)
        for column, level in self.subset.items():
            if column not in frame:
                raise DataError(f"task {self.name}: the subset names column {column!r}, which the data lacks")
            level.check(frame[column], task=self.name, role="subset", empty_ok=empty_ok)
            keep &= level.mask(frame[column])
        population = frame[keep]
        if self.outcome.column not in population:
            raise DataError(
                f"task {self.name}: the data has no column {self.outcome.column!r}; columns: "
                f"{', '.join(map(str, frame.columns))}"
            )
        for level in self.outcome.levels:
            level.check(population[self.outcome.column], task=self.name, role="outcome", empty_ok=empty_ok)
        rows = population[self.outcome.codes(population) >= 0]
        for variable in (self.condition,) if self.condition is not None else self.conditions:
            if variable.column not in rows:
                raise DataError(
                    f"task {self.name}: the data has no column {variable.column!r}; columns: "
                    f"{', '.join(map(str, frame.columns))}"
                )
            for level in variable.levels:
                level.check(rows[variable.column], task=self.name, role="condition", empty_ok=empty_ok)

    def rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The task's population: the subset's rows whose outcome is in one of its levels."""
        keep = np.ones(len(frame), dtype=bool)
        for column, level in self.subset.items():
            if column not in frame:
                raise DataError(f"task {self.name}: the subset names column {column!r}, which the data lacks")
            keep &= level.mask(frame[column])
        kept = frame[keep]
        return kept[self.outcome.codes(kept) >= 0]


@dataclass(frozen=True)
class TaskFile:
    """A dataset's task file."""

    dataset: str
    about: str
    weights: str | None
    unweighted_because: str | None
    tasks: tuple[Task, ...]
    path: Path
    source: Mapping[str, Any] | None = None
    generated: Mapping[str, Any] | None = None


def _check_template(text: Any, slots: Sequence[str], where: str) -> str:
    """A question template whose slots are among ``slots``, plain names only (``{condition.foo}``, ``{condition[0]}``, a stray brace:
    one line now, not a traceback or a wrong question when it is filled)."""
    if not isinstance(text, str) or not text.strip():
        raise DataError(f"{where}: a question template is missing")
    unknown = [s for s in format_slots(text, where, error=DataError) if s not in slots]
    if unknown:
        raise DataError(
            f"{where}: the template {text[:50]!r} may use only {', '.join('{' + s + '}' for s in slots)}, "
            f"not {{{unknown[0]}}}"
        )
    return text


def _check_high(conditions: tuple[Variable, ...], person: Any, condition: Any, at: str) -> None:
    """A high-dimensional task: 2-5 conditioning variables and a ``person`` template naming each of them once."""
    if condition is not None:
        raise DataError(f"{at}: give either 'condition' (low-dimensional) or 'conditions' (high-dimensional), not both")
    if not 2 <= len(conditions) <= 5:
        raise DataError(f"{at}: a high-dimensional task has 2 to 5 conditioning variables, got {len(conditions)}")
    columns = [v.column for v in conditions]
    if not isinstance(person, str) or sorted(format_slots(person, f"{at} person", error=DataError)) != sorted(columns):
        raise DataError(
            f"{at}: 'person' must describe a person with each condition once, as {', '.join('{' + c + '}' for c in columns)}"
        )


def parse_task(
    entry: Any,
    *,
    dataset: str,
    population: str,
    weights: str | None,
    where: str,
    source: Mapping[str, Any] | None = None,
    generated: bool = False,
) -> Task:
    """Read and check one task entry of a task file (also how the generator checks what it writes).

    ``where`` names the file in error messages; ``source`` is the file's
    citation, required when the entry holds a published ``table``.
    """
    if not isinstance(entry, Mapping):
        raise DataError(f"{where}: every entry of 'tasks' must be an object")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DataError(f"{where}: every task needs a 'name' (how --tasks and the run page call it)")
    at = f"{where}, {name}"
    condition = entry.get("condition")
    subset, conditions = entry.get("subset") or {}, entry.get("conditions") or []
    if not isinstance(subset, Mapping) or not all(isinstance(spec, Mapping) for spec in subset.values()):
        raise DataError(f'{at}: \'subset\' maps columns to a level, e.g. {{"AGEP": {{"min": 18}}}}')
    if not isinstance(conditions, list):
        raise DataError(f"{at}: 'conditions' is a list of conditioning variables (each a 'column' and its 'levels')")
    subset = {col: Level.from_dict({"text": col, **spec}, f"{at} subset") for col, spec in subset.items()}
    conditions = tuple(Variable.from_dict(c, f"{at} conditions") for c in conditions)
    person = entry.get("person")
    if conditions:
        _check_high(conditions, person, condition, f"{at}")
    task = Task(
        name=str(name),
        dataset=dataset,
        population=population,
        weights=weights,
        outcome=Variable.from_dict(entry.get("outcome"), f"{at} outcome"),
        condition=None if condition is None else Variable.from_dict(condition, f"{at} condition"),
        qa=_check_template(entry.get("qa"), ("condition",), f"{at} qa"),
        likelihood=_check_template(entry.get("likelihood"), ("condition", "outcome"), f"{at} likelihood"),
        subset=subset,
        conditions=conditions,
        person=person,
        generated=generated,
    )
    if conditions and len(task.outcome.levels) != 2:
        raise DataError(
            f"{at}: a high-dimensional task needs a binary outcome (two levels), got {len(task.outcome.levels)}"
        )
    if len(task.outcome.levels) < 2:
        raise DataError(f"{at}: the outcome needs at least two levels")
    if "{outcome}" not in task.likelihood:
        raise DataError(
            f"{at}: the likelihood question must name the answer ({{outcome}}), or every answer gets the same prompt"
        )
    if (condition is not None or conditions) and "{condition}" not in task.qa:
        raise DataError(
            f"{at}: the QA question must name the condition ({{condition}}), or every condition gets the same prompt"
        )
    if "table" in entry:
        return _with_table(task, entry["table"], source, at)
    return task


def _with_table(task: Task, table: Any, source: Mapping[str, Any] | None, at: str) -> Task:
    """A task whose truth is a published table: low-dimensional, no subset, levels keyed by ``value``."""
    if task.conditions or task.subset:
        raise DataError(
            f"{at}: a published table gives one condition at most and no 'subset' (the table is its population)"
        )
    variables = [task.outcome] + ([task.condition] if task.condition is not None else [])
    for variable in variables:
        if any(lv.values is not None or lv.is_range or lv.value is None for lv in variable.levels):
            raise DataError(
                f"{at}: in a published table each level of {variable.column!r} is named by one 'value' (the table's key)"
            )
    keys = [[str(lv.value) for lv in v.levels] for v in variables]
    parsed = parse_table(
        table, outcome=keys[0], condition=keys[1] if len(keys) > 1 else None, where=at, source=parse_source(source, at)
    )
    return replace(task, table=parsed)


def load_task_file(path: str | Path) -> TaskFile:
    """Read and check one dataset's task file (a clear :class:`DataError` naming the task and field otherwise)."""
    file = Path(path)
    data = read_data_file(file, "task file")
    where = file.name
    if not isinstance(data, Mapping):
        raise DataError(f"{where}: a task file is a JSON object with 'dataset', 'weights' and 'tasks'")
    if "weights" not in data:
        raise DataError(
            f"{where}: declare the survey-weight column ('weights': \"COLUMN\"), or 'weights': null with "
            "'unweighted_because'; a task without stated weights is refused"
        )
    weights, reason = data["weights"], data.get("unweighted_because")
    if weights is None and not (isinstance(reason, str) and reason.strip()):
        raise DataError(f"{where}: 'weights' is null, so say why the sample is its own truth in 'unweighted_because'")
    if weights is not None and not isinstance(weights, str):
        raise DataError(f"{where}: 'weights' must be a column name or null, got {weights!r}")
    generated = data.get("generated")
    if generated is not None and not isinstance(generated, Mapping):
        raise DataError(f"{where}: 'generated' records how the file was generated (an object), got {generated!r}")
    entries = data.get("tasks") or []
    if not isinstance(entries, list):
        raise DataError(f"{where}: 'tasks' is a list of task objects, got {type(entries).__name__}")
    tasks = tuple(
        parse_task(
            entry,
            dataset=str(data.get("dataset")),
            population=str(data.get("population", "")),
            weights=weights,
            where=where,
            source=data.get("source"),
            generated=generated is not None,
        )
        for entry in entries
    )
    if not tasks:
        raise DataError(f"{where} holds no tasks")
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        twice = ", ".join(sorted({n for n in names if names.count(n) > 1}))
        raise DataError(f"{where}: task name(s) {twice} appear twice; names must be unique")
    data_file = _data_file(data.get("data"), file)
    if data_file is not None:
        tasks = tuple(replace(t, data_file=data_file) for t in tasks)
    source = data.get("source") if isinstance(data.get("source"), Mapping) else None
    return TaskFile(
        str(data.get("dataset")), str(data.get("about", "")), weights, reason, tasks, file, source, generated
    )


def _data_file(value: Any, file: Path) -> Path | None:
    """The rows a task file names for itself, resolved against its folder; checked now, before any model loads."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{file.name}: 'data' names the rows' file (CSV or parquet), got {_shown(value)[:60]}")
    path = Path(value).expanduser()
    path = path if path.is_absolute() else file.parent / path
    if not path.name.lower().endswith(SUFFIXES):
        raise DataError(
            f"{file.name}: 'data' {value!r} is neither CSV nor parquet; use a file ending in {', '.join(SUFFIXES)}"
        )
    if not path.is_file():
        raise DataError(
            f"{file.name}: 'data' names {path}, which does not exist; give a path relative to the task file or absolute"
        )
    return path


def task_files(folder: str | Path | None = None) -> list[TaskFile]:
    """Every task file of the bundled folder (or of ``folder``)."""
    root = _BUNDLED if folder is None else Path(folder)
    return [load_task_file(p) for p in sorted(root.glob("*.json"))]


def user_task_files(files: Sequence[str | Path] = (), folder: str | Path | None = None) -> list[TaskFile]:
    """A user's task files: ``files`` and every ``*.json`` of ``folder`` (``--task-file``, ``--task-dir``).

    Raises
    ------
    ConfigError
        A file or folder that does not exist, or a folder without task files.
    """
    paths = [Path(f).expanduser() for f in files]
    for path in paths:
        if not path.is_file():
            raise ConfigError(
                f"--task-file {path} does not exist (or is not a file)", parameter="task_file", value=str(path)
            )
    if folder is not None:
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise ConfigError(f"--task-dir {root} is not a folder", parameter="task_dir", value=str(root))
        found = sorted(root.glob("*.json"))
        if not found:
            raise ConfigError(f"--task-dir {root} holds no task files (*.json)", parameter="task_dir", value=str(root))
        paths += [p for p in found if p not in paths]
    return [load_task_file(p) for p in paths]


def list_tasks(
    *, dataset: str | None = None, folder: str | Path | None = None, extra: Sequence[TaskFile] = ()
) -> list[Task]:
    """Every task (the bundled files, or ``folder``'s, and the ``extra`` files), or those of one dataset.

    A name that two files both define is refused: a run must know which one it asks.
    """
    files = [*task_files(folder), *extra]
    tasks = [t for f in files for t in f.tasks]
    owner: dict[str, Path] = {}
    for f in files:
        for t in f.tasks:
            if t.name in owner and owner[t.name] != f.path:
                raise DataError(
                    f"task {t.name!r} is in both {owner[t.name].name} and {f.path.name}; rename one of them"
                )
            owner[t.name] = f.path
    if dataset is not None:
        tasks = [t for t in tasks if t.dataset == dataset]
        if not tasks:
            known = sorted({f.dataset for f in files})
            raise ConfigError(
                f"no tasks of dataset {dataset!r}{did_you_mean(dataset, known)}; datasets: {', '.join(known)}",
                parameter="dataset",
                value=dataset,
            )
    return tasks


def get_task(name: str, *, folder: str | Path | None = None, extra: Sequence[TaskFile] = ()) -> Task:
    """The task called ``name`` (among the bundled files, or ``folder``'s, and the ``extra`` files)."""
    tasks = {t.name: t for t in list_tasks(folder=folder, extra=extra)}
    if name not in tasks:
        raise ConfigError(
            f"unknown epidemiology task {name!r}{did_you_mean(name, tasks)}; `folkscope epidemiology list` shows "
            f"the {len(tasks)} there are",
            parameter="task",
            value=name,
        )
    return tasks[name]
