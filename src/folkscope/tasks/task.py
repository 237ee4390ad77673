"""Prediction tasks as immutable data: features, a binary target, a population, a question.

The five folktables ACS tasks and the offline NIST-excerpt tasks are defined
in ``resources/tasks.json``; :func:`get_task` returns them and
:meth:`TaskMetadata.make_task` builds custom ones (any column as target, any
feature subset, any population). Tasks are frozen: deriving a variant
(:meth:`TaskMetadata.with_features`, :meth:`TaskMetadata.with_filters`)
returns a new object and never changes the registry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from folkscope._names import did_you_mean
from folkscope.errors import ConfigError, TargetError, UnknownColumnError, UnknownTaskError
from folkscope.tasks.columns import ColumnToText, column_set, folkscope_corrections, folktexts_table
from folkscope.tasks.filters import PopulationFilter, apply_filters, parse_filters

__all__ = ["WORDINGS", "ACSTaskMetadata", "Choice", "Target", "TaskMetadata", "get_task", "list_tasks"]

_OPS = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal}
_OP_WORDS = {">": "above", ">=": "at least", "<": "below", "<=": "at most", "==": "equal to", "!=": "other than"}


@dataclass(frozen=True)
class Choice:
    """One answer option of a multiple-choice question and the label it stands for."""

    text: str
    label: int


@dataclass(frozen=True)
class Target:
    """How a column becomes the binary label: a threshold, or a set of positive codes.

    Parameters
    ----------
    column : str
        The column the label is derived from.
    op, value : str and float, optional
        A threshold (``op`` one of ``> >= < <= == !=``): label 1 where
        ``column op value`` holds.
    positive : tuple of float
        Codes that count as 1 (instead of a threshold).
    blank_label : {None, 0, 1}
        What a blank target cell means. ``None`` (the default, and what a
        custom task gets): a blank label is a data problem, and
        :meth:`labels` raises :class:`~folkscope.errors.TargetError` naming a
        filter to add. ``0``: a blank is a negative, as folktables 0.0.12
        reads it: folktables applies its target rule to the raw column,
        where a blank compares false (``blank > 20`` and ``blank == 1`` are
        both false), so e.g. an ACSTravelTime worker who works from home
        (at work, ESR = 1, with a blank commute JWMNP) is labelled 0, and an
        ACSEmployment child under 16 (blank ESR) too. ``1``: a blank is a
        positive, as in folktexts' ACSMobility (``MIG != 1``, which a blank
        satisfies, so folktexts labels a blank ``MIG`` "has moved"). The ACS
        tasks declare what their reference does, so their labels match
        folktables' and folktexts' on real PUMS rows.

    Examples
    --------
    >>> Target("PINCP", op=">", value=50000).name
    'PINCP>50000'
    >>> Target("MIG", positive=(1,)).name
    'MIG==1'
    >>> Target("MIG", op="!=", value=1).name
    'MIG!=1'
    >>> Target("JWMNP", op=">", value=20, blank_label=0).labels(pd.DataFrame({"JWMNP": [45, None, 5]})).tolist()
    [1, 0, 0]
    """

    column: str
    op: str | None = None
    value: float | None = None
    positive: tuple[float, ...] = ()
    blank_label: int | None = None

    def __post_init__(self) -> None:
        if self.op is not None and self.op not in _OPS:
            raise ConfigError(
                f"target threshold operator must be one of {', '.join(_OPS)}, got {self.op!r}",
                parameter="threshold",
                value=self.op,
            )
        if (self.op is None) != (self.value is None):
            raise ConfigError("a target threshold needs both an operator and a value", parameter="threshold")
        if self.op is not None and self.positive:
            raise ConfigError("give a target either a threshold or positive values, not both", parameter="target")
        if self.blank_label is not None and (isinstance(self.blank_label, bool) or self.blank_label not in (0, 1)):
            raise ConfigError(
                f"a target's blank_label must be 0, 1 or None (blanks are an error), got {self.blank_label!r}",
                parameter="blank_label",
                value=self.blank_label,
            )

    @property
    def name(self) -> str:
        """Column name of the label in row-level outputs (``PINCP>50000``)."""
        if self.op is not None:
            return f"{self.column}{self.op}{self.value:g}"
        if self.positive:
            return f"{self.column}==" + "|".join(f"{v:g}" for v in self.positive)
        return self.column

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; ``blank_label`` only where declared, so tasks without it describe as before."""
        out = asdict(self)
        if self.blank_label is None:
            out.pop("blank_label")
        return out

    def labels(self, frame: pd.DataFrame) -> np.ndarray:
        """The 0/1 label of every row; a blank target is ``blank_label``, or raises where that is None."""
        if self.column not in frame.columns:
            raise UnknownColumnError(
                f"target column {self.column!r} is not in the data", parameter="target", value=self.column
            )
        col = frame[self.column]
        blank = col.isna().to_numpy()
        if blank.any() and self.blank_label is None:
            raise TargetError(
                f"target column {self.column} has {int(blank.sum())} blank values in the population; "
                "add a population filter that excludes them"
            )
        values = col.to_numpy(dtype=float, na_value=np.nan)
        if self.op is not None:
            labels = _OPS[self.op](values, float(self.value)).astype(np.int8)  # type: ignore[arg-type]
        elif self.positive:
            labels = np.isin(values, np.asarray(self.positive, dtype=float)).astype(np.int8)
        else:
            distinct = np.unique(values[~blank])
            if not np.all(np.isin(distinct, (0.0, 1.0))):
                shown = ", ".join(f"{v:g}" for v in distinct[:8]) + (" ..." if len(distinct) > 8 else "")
                raise TargetError(
                    f"target column {self.column} is not binary (values: {shown}); give a threshold "
                    f"(e.g. threshold=('>', 50000)) or the positive codes (e.g. positive=[1])"
                )
            labels = np.where(blank, 0.0, values).astype(np.int8)
        if blank.any():
            labels[blank] = self.blank_label
        return labels


@dataclass(frozen=True)
class TaskMetadata:
    """A binary prediction task on survey data.

    Parameters
    ----------
    name : str
        Task name (``"ACSIncome"``).
    features : tuple of str
        Columns shown to the model, in prompt order.
    target : Target
        How the label is derived.
    filters : tuple of PopulationFilter
        Who is in the population.
    question, choices, numeric_question
        The multiple-choice question with its answer options (label order
        does not matter; the prompt layer shuffles for order-bias correction)
        and the question used for numeric risk prompting.
    source : {"pums", "nist", "custom"}
        Where the rows come from: the Census PUMS download, the bundled
        NIST excerpt, or a frame the user supplies.
    columns : str
        Column-text mapping set (``"acs"`` or ``"nist"``).
    survey_year : int, optional
        Year quoted in the prompt's task description.
    sensitive_attributes : tuple of str
        Group columns reported by fairness metrics (default race and sex).
    description : str
        One line for humans (reports, ``folkscope tasks``).
    use_numeric_qa : bool
        folktexts' switch to numeric risk prompting, carried by the task
        (``get_task(name, use_numeric_qa=True)``): a classifier built without
        its own prompt config asks this task numerically.
    """

    name: str
    features: tuple[str, ...]
    target: Target
    filters: tuple[PopulationFilter, ...] = ()
    question: str = ""
    choices: tuple[Choice, ...] = ()
    numeric_question: str = ""
    source: str = "custom"
    columns: str = "acs"
    survey_year: int | None = None
    sensitive_attributes: tuple[str, ...] = ("RAC1P", "SEX")
    description: str = ""
    column_texts: Mapping[str, ColumnToText] = field(default_factory=dict, repr=False, compare=False)
    use_numeric_qa: bool = False

    def __post_init__(self) -> None:
        if not self.features:
            raise ConfigError(f"task {self.name}: needs at least one feature", parameter="features")
        if len(set(self.features)) != len(self.features):
            raise ConfigError(f"task {self.name}: duplicate features in {self.features}", parameter="features")
        if self.target.column in self.features:
            raise ConfigError(
                f"task {self.name}: the target column {self.target.column} cannot also be a feature",
                parameter="features",
                value=self.target.column,
            )
        labels = sorted(c.label for c in self.choices)
        if self.choices and labels != [0, 1]:
            raise ConfigError(f"task {self.name}: choices must cover labels 0 and 1 once each, got {labels}")
        if not self.column_texts:
            object.__setattr__(self, "column_texts", column_set(self.columns))
        missing = [c for c in self.features if c not in self.column_texts]
        if missing:
            raise UnknownColumnError(
                f"task {self.name}: no text mapping for feature(s) {', '.join(missing)} in the "
                f"{self.columns!r} column set; known: {', '.join(sorted(self.column_texts))}",
                parameter="features",
                value=missing,
            )

    # -- derived views -------------------------------------------------------------
    @property
    def target_name(self) -> str:
        """Name of the label column (``PINCP>50000``)."""
        return self.target.name

    @property
    def needed_columns(self) -> tuple[str, ...]:
        """Every column the task reads: features, target, filters, groups, weight."""
        cols = [*self.features, self.target.column, *(f.column for f in self.filters), *self.sensitive_attributes]
        return tuple(dict.fromkeys(cols))

    def column_to_text(self, column: str) -> ColumnToText:
        """The text mapping of one feature column."""
        if column not in self.column_texts:
            raise UnknownColumnError(f"task {self.name} has no text mapping for column {column!r}", value=column)
        return self.column_texts[column]

    def population_mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows of ``frame`` inside the task's population."""
        return apply_filters(frame, self.filters)

    def labels(self, frame: pd.DataFrame) -> np.ndarray:
        """0/1 labels of ``frame`` (rows assumed inside the population)."""
        return self.target.labels(frame)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (for run configs and fingerprints)."""
        out = asdict(self)
        out.pop("column_texts")
        out.pop("use_numeric_qa")  # a prompt option: the prompt config records it
        out["target"] = self.target.to_dict()
        out["filters"] = [f.describe() for f in self.filters]
        out["target_name"] = self.target_name
        return out

    # -- variants ------------------------------------------------------------------
    def with_features(self, features: Sequence[str] | str) -> TaskMetadata:
        """Same task with another feature subset (``--use-feature-subset``)."""
        if isinstance(features, str):
            features = [f.strip() for f in features.split(",") if f.strip()]
        if not features:
            raise ConfigError("feature subset is empty", parameter="use_feature_subset", value=features)
        return replace(self, features=tuple(features))

    def create_task_with_feature_subset(self, feature_subset: Iterable[str]) -> TaskMetadata:
        """folktexts' feature subset: some of this task's features, named ``<task>_<sorted features>``.

        Raises
        ------
        ConfigError
            A feature that is not one of this task's.
        """
        subset = list(feature_subset)
        extra = [f for f in subset if f not in self.features]
        if extra or not subset:
            raise ConfigError(
                f"feature_subset must be some of task {self.name}'s features ({', '.join(self.features)}); "
                f"{'got none' if not subset else 'not among them: ' + ', '.join(extra)}",
                parameter="feature_subset",
                value=extra or subset,
            )
        return replace(self.with_features(subset), name=f"{self.name}_" + "_".join(sorted(subset)))

    @classmethod
    def get_task(cls, name: str | TaskMetadata, use_numeric_qa: bool = False) -> TaskMetadata:
        """A predefined task by name (folktexts' ``ACSTaskMetadata.get_task``); see :func:`get_task`.

        ``use_numeric_qa=True`` marks it for numeric risk prompting, as in folktexts.

        Examples
        --------
        >>> TaskMetadata.get_task("ACSIncome", use_numeric_qa=True).use_numeric_qa
        True
        """
        task = get_task(name)
        return replace(task, use_numeric_qa=True) if use_numeric_qa else task

    def with_wording(self, wording: str) -> TaskMetadata:
        """Same task worded as folktexts 0.7.1 words it (``"folktexts"``), corrected (``"folkscope"``) or by the Census codebook.

        ``"folktexts"`` reproduces folktexts' prompts byte for byte, its
        quirks included (FER's ``"... is: Person has given birth within the
        last year.."``); ``"folkscope"`` is that wording with the
        inconsistencies listed in ``resources/folkscope_wording.json``
        corrected; ``"codebook"`` uses the Census codebook's labels. Only ACS
        tasks have several wordings: the column texts, and for the predefined
        tasks that folktexts defines with the same target, the question,
        answer options and numeric question. Other tasks are returned as
        they are.

        Examples
        --------
        >>> get_task("ACSIncome").with_wording("folkscope").numeric_question[-14:]
        'above $50,000?'
        """
        if wording not in WORDINGS:
            raise ConfigError(
                f"wording must be one of {', '.join(WORDINGS)}; got {wording!r}", parameter="wording", value=wording
            )
        if self.columns not in _WORDING_COLUMNS.values():
            return self
        texts: dict[str, Any] = {}
        original = _codebook_registry().get(self.name)
        if original is not None and original.target == self.target:
            codebook = {
                "question": original.question,
                "choices": original.choices,
                "numeric_question": original.numeric_question,
            }
            texts = (
                codebook
                if wording == "codebook"
                else _folktexts_texts(original, corrected=wording == "folkscope") or codebook
            )
        return replace(self, columns=_WORDING_COLUMNS[wording], column_texts={}, **texts)

    @property
    def wording(self) -> str | None:
        """``"folktexts"``, ``"folkscope"`` or ``"codebook"`` for an ACS task, None for tasks with one wording."""
        return next((w for w, c in _WORDING_COLUMNS.items() if c == self.columns), None)

    def with_filters(self, filters: str | Iterable[str]) -> TaskMetadata:
        """Same task with extra population filters (``--use-population-filter``)."""
        parsed = parse_filters(filters)
        for flt in parsed:  # checked now, before any data is read: a text value would keep no row
            column = self.column_texts.get(flt.column)
            if column is not None and column.kind == "numeric":
                flt.require_numbers(f"is numeric ({column.description})", "18..35" if flt.column == "AGEP" else "30")
            elif column is not None and column.values:
                codes = ", ".join(f"{code} {label}" for code, label in list(column.values.items())[:4])
                flt.require_numbers(
                    f"holds codes ({codes}{', ...' if len(column.values) > 4 else ''})", str(next(iter(column.values)))
                )
        return replace(self, filters=(*self.filters, *parsed))

    @classmethod
    def make_task(
        cls,
        name: str,
        *,
        features: Sequence[str],
        target: str,
        threshold: tuple[str, float] | None = None,
        positive: Sequence[float] | None = None,
        blank_label: int | None = None,
        filters: str | Iterable[str] | None = None,
        question: str | None = None,
        choices: Sequence[tuple[str, int]] | None = None,
        numeric_question: str | None = None,
        columns: str = "acs",
        source: str = "custom",
        survey_year: int | None = None,
        sensitive_attributes: Sequence[str] = ("RAC1P", "SEX"),
        description: str = "",
    ) -> TaskMetadata:
        """Build a custom task; the question is written from the target's text mapping if not given.

        A blank target cell raises when labels are made (a blank label is a
        data problem: filter those rows out), unless ``blank_label`` (0 or 1)
        declares what a blank means, as the folktables tasks declare 0
        (see :class:`Target`).

        Examples
        --------
        >>> t = TaskMetadata.make_task("Old", features=["SEX", "SCHL"], target="AGEP", threshold=(">", 40))
        >>> t.target_name, t.question
        ('AGEP>40', "Is this person's age above 40 years old?")
        """
        tgt = Target(
            target,
            op=threshold[0] if threshold else None,
            value=float(threshold[1]) if threshold else None,
            positive=tuple(float(p) for p in positive) if positive else (),
            blank_label=blank_label,
        )
        subject, predicate = _phrase(tgt, column_set(columns).get(target))
        question = question or f"Is {subject} {predicate}?"
        numeric_question = numeric_question or f"What is the probability that {subject} is {predicate}?"
        choice_objs = (
            tuple(Choice(t, int(lab)) for t, lab in choices) if choices else (Choice("No", 0), Choice("Yes", 1))
        )
        return cls(
            name=name,
            features=tuple(features),
            target=tgt,
            filters=parse_filters(filters),
            question=question,
            choices=choice_objs,
            numeric_question=numeric_question,
            source=source,
            columns=columns,
            survey_year=survey_year,
            sensitive_attributes=tuple(sensitive_attributes),
            description=description or f"Custom task: predict {tgt.name}.",
        )


def _phrase(tgt: Target, col: ColumnToText | None) -> tuple[str, str]:
    """Subject and predicate of a generated question: ("this person's age", "above 40 years old")."""
    subject = f"this person's {col.description if col else tgt.column}"
    if tgt.op is not None and tgt.value is not None:
        shown = col.value_text(tgt.value) if col is not None and col.kind == "numeric" else f"{tgt.value:g}"
        return subject, f"{_OP_WORDS[tgt.op]} {shown}"
    positive = tgt.positive or (1.0,)
    if col is not None and col.kind == "categorical":
        return subject, " or ".join(f'"{col.value_text(v)}"' for v in positive)
    return subject, " or ".join(f"{v:g}" for v in positive)


def _filters_from_json(entries: Sequence[str | Mapping[str, Any]]) -> tuple[PopulationFilter, ...]:
    """Filter strings, or ``{"condition": "AGEP>18", "keep_blank": true}`` for one a blank passes."""
    out: list[PopulationFilter] = []
    for entry in entries:
        if isinstance(entry, str):
            out.extend(parse_filters(entry))
        else:
            keep_blank = bool(entry.get("keep_blank", False))
            out.extend(replace(f, keep_blank=keep_blank) for f in parse_filters(entry["condition"]))
    return tuple(out)


def _task_from_json(name: str, spec: Mapping[str, Any]) -> TaskMetadata:
    tgt_spec = spec["target"]
    thr = tgt_spec.get("threshold")
    target = Target(
        tgt_spec["column"],
        op=thr["op"] if thr else None,
        value=float(thr["value"]) if thr else None,
        positive=tuple(float(p) for p in tgt_spec.get("positive", ())),
        blank_label=tgt_spec.get("blank_label"),
    )
    return TaskMetadata(
        name=name,
        features=tuple(spec["features"]),
        target=target,
        filters=_filters_from_json(spec.get("filters", [])),
        question=spec["question"],
        choices=tuple(Choice(c["text"], int(c["label"])) for c in spec["choices"]),
        numeric_question=spec["numeric_question"],
        source=spec["source"],
        columns=spec.get("columns", "acs"),
        survey_year=spec.get("survey_year"),
        description=spec.get("description", ""),
    )


#: the wordings of the ACS tasks: folktexts 0.7.1's (the default), the same corrected, and the Census codebook's
WORDINGS = ("folktexts", "folkscope", "codebook")
_WORDING_COLUMNS = {"folktexts": "acs", "folkscope": "acs-folkscope", "codebook": "acs-codebook"}


def _folktexts_texts(task: TaskMetadata, *, corrected: bool = False) -> dict[str, Any]:
    """folktexts' question, answer options and numeric question of a task it defines with the same target.

    ``corrected``: with the ``folkscope`` wording's corrections (a space
    before a question mark dropped, whole texts replaced as
    ``folkscope_wording.json`` lists). Choices keep folktexts' order, which
    is the order of the answer orderings (folktexts' permutations).
    """
    spec = folktexts_table()["tasks"].get(task.name)
    if spec is None or spec["multiple_choice_qa"]["column"] != task.target_name:
        return {}  # not a folktexts task, or another target: the codebook's texts
    fix = folkscope_corrections() if corrected else {}

    def text(t: str) -> str:
        return fix.get(t, t).replace(" ?", "?") if corrected else t

    mc = spec["multiple_choice_qa"]
    return {
        "question": text(mc["text"]),
        "choices": tuple(Choice(text(c["text"]), int(c["key"])) for c in mc["choices"]),
        "numeric_question": text(spec["direct_numeric_qa"]["text"]),
    }


@lru_cache(maxsize=1)
def _codebook_registry() -> Mapping[str, TaskMetadata]:
    text = resources.files("folkscope.tasks").joinpath("resources", "tasks.json").read_text("utf-8")
    data = json.loads(text)
    return {name: _task_from_json(name, spec) for name, spec in data.items() if not name.startswith("_")}


@lru_cache(maxsize=1)
def _registry() -> Mapping[str, TaskMetadata]:
    """The predefined tasks in their default wording (folktexts' for the ACS tasks)."""
    return {name: task.with_wording("folktexts") for name, task in _codebook_registry().items()}


#: folktexts' name of the task class
ACSTaskMetadata = TaskMetadata


def list_tasks() -> list[str]:
    """Names of the predefined tasks."""
    return list(_registry())


def get_task(name: str | TaskMetadata) -> TaskMetadata:
    """A predefined task by name (tasks are immutable, so the registry cannot be altered)."""
    if isinstance(name, TaskMetadata):
        return name
    registry = _registry()
    if name not in registry:
        raise UnknownTaskError(
            f"unknown task {name!r}{did_you_mean(name, registry)}; known tasks: {', '.join(registry)} "
            "(or build one with TaskMetadata.make_task)",
            parameter="task",
            value=name,
        )
    return registry[name]
