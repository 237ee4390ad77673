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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope._json import read_data_file
from folkscope.errors import ConfigError, DataError

__all__ = ["TEMPLATE_FAMILIES", "TaskTemplate", "load_template"]

_BUNDLED = Path(__file__).with_name("resources") / "templates.json"
#: task families of the bundled file
TEMPLATE_FAMILIES = ("resumes", "essays")
_KEYS = ("system", "pointwise", "labels", "relevance", "pairwise", "listwise", "entry")


@dataclass(frozen=True)
class TaskTemplate:
    """The wording of one task family (see the module docstring)."""

    system: str
    pointwise: str
    labels: tuple[str, ...]
    relevance: tuple[float, ...]
    pairwise: str
    listwise: str
    entry: str

    def __post_init__(self) -> None:
        labels, relevance = tuple(str(x) for x in self.labels), tuple(float(x) for x in self.relevance)
        if len(labels) < 2 or len(labels) != len(relevance) or len(set(labels)) != len(labels):
            raise ConfigError(f"a template needs two or more distinct labels, one relevance value each; got {labels} / {relevance}",
                              parameter="labels")  # fmt: skip
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "relevance", relevance)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "template") -> TaskTemplate:
        missing = [k for k in _KEYS if k not in data]
        if missing:
            raise DataError(f"{where} lacks {', '.join(missing)}; a task template needs {', '.join(_KEYS)}")
        return cls(**{k: data[k] for k in _KEYS})


def load_template(family: str, path: str | Path | None = None) -> TaskTemplate:
    """The wording of ``family`` from the bundled templates, or from ``path`` (a JSON file of the same shape)."""
    file = _BUNDLED if path is None else Path(path).expanduser()
    data = read_data_file(file, "template file")
    if family not in data:
        known = ", ".join(k for k in data if not k.startswith("_"))
        raise ConfigError(f"template file {file.name} has no task {family!r}; it has {known}", parameter="template", value=family)
    return TaskTemplate.from_dict(data[family], where=f"{file.name}[{family!r}]")
