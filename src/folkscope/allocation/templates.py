"""Prompt wording of the allocation tasks, as data: the bundled ``templates.json`` or a user's file.

One entry per task family (``resumes``, ``essays``): the system turn (with
``{context}``), the pointwise question (``{candidate}``) with its answer
labels and their relevance values γ (Yes/No -> 1/0; grades 1-5 -> 1..5), the
pairwise question (``{first}``, ``{second}``; A, B, or C for "equally good")
and the listwise request (``{candidates}``, each an ``entry`` with
``{name}`` and ``{candidate}``). The prompt layer assembles them
(:mod:`folkscope.prompting.screening`).

Examples
--------
>>> t = load_template("resumes")
>>> t.labels, t.relevance
(('No', 'Yes'), (0.0, 1.0))
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope._json import read_data_file
from folkscope.errors import ConfigError, DataError
from folkscope.prompting import check_screening_template

__all__ = ["TEMPLATE_FAMILIES", "TaskTemplate", "load_template"]

_BUNDLED = Path(__file__).with_name("resources") / "templates.json"
#: task families of the bundled file
TEMPLATE_FAMILIES = ("resumes", "essays")
_KEYS = ("system", "pointwise", "labels", "relevance", "pairwise", "listwise", "entry")
_TEXTS = ("system", "pointwise", "pairwise", "listwise", "entry")


@dataclass(frozen=True)
class TaskTemplate:
    """The wording of one task family (see the module docstring).

    Checked whole when made, so a template file is refused in one line
    before any model loads: every text's slots (a missing ``{candidate}``
    or ``{second}`` would give every candidate the same prompt and a
    perfect parity that measures nothing; a misspelt slot would fail only
    when prompts are filled), two or more distinct labels with one finite
    relevance value each, and relevance values that are not all equal (else
    every candidate scores the same).
    """

    system: str
    pointwise: str
    labels: tuple[str, ...]
    relevance: tuple[float, ...]
    pairwise: str
    listwise: str
    entry: str
    where: str = "template"

    def __post_init__(self) -> None:
        for key in _TEXTS:
            check_screening_template(key, getattr(self, key), f"{self.where}.{key}")
        labels, relevance = self.labels, self.relevance
        if (
            isinstance(labels, (str, bytes))
            or not isinstance(labels, (list, tuple))
            or not all(isinstance(x, str) and x.strip() for x in labels)
        ):
            raise ConfigError(
                f'{self.where}.labels must be a list of non-blank answer words such as ["No", "Yes"], '
                f"got {_short(labels)}",
                parameter="labels",
                value=labels,
            )
        if (
            isinstance(relevance, (str, bytes))
            or not isinstance(relevance, (list, tuple))
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in relevance)
        ):
            raise ConfigError(
                f"{self.where}.relevance must be a list of finite numbers, one per label (such as [0, 1]), "
                f"got {_short(relevance)}",
                parameter="relevance",
                value=relevance,
            )
        labels, relevance = tuple(labels), tuple(float(x) for x in relevance)
        if len(labels) < 2 or len(labels) != len(relevance) or len(set(labels)) != len(labels):
            raise ConfigError(
                f"{self.where} needs two or more distinct labels, one relevance value each; got {labels} / {relevance}",
                parameter="labels",
            )
        if len(set(relevance)) < 2:
            raise ConfigError(
                f"{self.where}.relevance gives every label the same value {relevance[0]:g}, so every candidate "
                "would score the same; give the labels different values",
                parameter="relevance",
                value=relevance,
            )
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "relevance", relevance)

    def to_dict(self) -> dict[str, Any]:
        """The wording as the template file spells it (what a run fingerprints), without ``where``."""
        return {k: list(getattr(self, k)) if k in ("labels", "relevance") else getattr(self, k) for k in _KEYS}

    @classmethod
    def from_dict(cls, data: Any, where: str = "template") -> TaskTemplate:
        if not isinstance(data, Mapping):
            raise DataError(
                f"{where} must be a JSON object with the keys {', '.join(_KEYS)}, got {type(data).__name__}"
            )
        missing = [k for k in _KEYS if k not in data]
        if missing:
            raise DataError(f"{where} lacks {', '.join(missing)}; a task template needs {', '.join(_KEYS)}")
        return cls(**{k: data[k] for k in _KEYS}, where=where)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def load_template(family: str, path: str | Path | None = None) -> TaskTemplate:
    """The wording of ``family`` from the bundled templates, or from ``path`` (a JSON file of the same shape).

    Raises
    ------
    DataError
        The file is missing, not JSON, or not an object of task templates.
    ConfigError
        No task ``family`` in it, or its template fails a check of :class:`TaskTemplate`.
    """
    file = _BUNDLED if path is None else Path(path).expanduser()
    data = read_data_file(file, "template file")
    if not isinstance(data, Mapping):
        raise DataError(
            f"template file {file.name} must be a JSON object of task templates (keys such as "
            f"{', '.join(TEMPLATE_FAMILIES)}), got a JSON {type(data).__name__}"
        )
    if family not in data:
        known = ", ".join(str(k) for k in data if not str(k).startswith("_")) or "none"
        raise ConfigError(
            f"template file {file.name} has no task {family!r}; it has {known}", parameter="template", value=family
        )
    return TaskTemplate.from_dict(data[family], where=f"{file.name}[{family!r}]")
