"""A study plan: the grid of runs a paper (or a user) needs, read from a TOML or YAML file and checked as a whole.

A plan names its models, with each model's engine settings, and, per part,
the tasks and the settings to run them with::

    name = "demo"
    description = "Every part on the default model, offline"

    [[models]]
    model = "default"            # what --model takes: a name, a Hub id, a folder
    label = "SmolLM2-135M"       # optional: how listings name it
    batch_tokens = 4096          # any engine flag of `folkscope <part> run`

    [risk]
    tasks = ["NISTIncome"]                       # one cell per task (--task)
    options = { subsampling = 0.05 }             # flags of every cell of the part
    vary = { numeric_risk_prompting = [false, true] }   # a grid axis per key
    variants = [{}, { few_shot = 3 }]            # settings that go together

The cells are models × tasks × the product of ``vary`` × ``variants``; each
cell is one ordinary ``folkscope <part> run`` command (keys are the
command's flags without the dashes, ``no_baselines = true`` for
``--no-baselines``), so a plan can say nothing the command line cannot, and
every check of the command applies to it. This module only reads and shapes
the file; :mod:`folkscope.study.cells` turns the cells into commands and
checks them with the commands' own parsers.

Why a file and not flags: a paper's grid is 17 models × 5 tasks × several
prompt settings; written down once, it is reviewed, versioned, resumed and
shared as one object, and its name keys the study's folder.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from folkscope._deps import require
from folkscope._names import did_you_mean, slug
from folkscope.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["BUNDLED", "PART_KEYS", "ModelSpec", "PartSpec", "Plan", "PlanError", "bundled_plans", "load_plan"]

#: the parts a plan may name, in the order a study runs them
PART_KEYS = ("risk", "allocation", "epidemiology", "numeric")
#: the plans shipped with folkscope (``folkscope study list``)
BUNDLED = "folkscope.study.resources"
_TOP = ("name", "description", "source", "results_dir", "models", *PART_KEYS)
_MODEL = ("model", "label", "parts")
_PART = ("tasks", "options", "vary", "variants")


class PlanError(ConfigError):
    """The plan file cannot be read or says something folkscope cannot run (the message names where)."""


@dataclass(frozen=True)
class ModelSpec:
    """One model of a plan: what ``--model`` gets, the engine flags that go with it, and the parts it takes part in."""

    model: str
    label: str
    engine: Mapping[str, Any] = field(default_factory=dict)
    parts: tuple[str, ...] = PART_KEYS


@dataclass(frozen=True)
class PartSpec:
    """One part of a plan: its tasks, the flags every cell gets, and the settings that vary between cells."""

    part: str
    tasks: tuple[str | None, ...]
    options: Mapping[str, Any]
    settings: tuple[Mapping[str, Any], ...]
    """One mapping of flags per setting: the product of ``vary`` times each of ``variants``."""


@dataclass(frozen=True)
class Plan:
    """A whole study: models × parts × tasks × settings, each combination one run."""

    name: str
    description: str
    source: str
    models: tuple[ModelSpec, ...]
    parts: tuple[PartSpec, ...]
    path: str
    results_dir: str | None = None

    @property
    def n_cells(self) -> int:
        """How many runs the plan makes."""
        return sum(len(p.tasks) * len(p.settings) for m in self.models for p in self.parts if p.part in m.parts)


def bundled_plans() -> dict[str, Path]:
    """The plans folkscope ships, by name (the file name without ``.toml``)."""
    folder = resources.files(BUNDLED)
    return {
        Path(item.name).stem: Path(str(item))
        for item in sorted(folder.iterdir(), key=lambda i: i.name)
        if item.name.endswith(".toml")
    }


def load_plan(where: str | Path) -> Plan:
    """Read and check a plan: a file (``.toml``, ``.yaml``/``.yml``) or the name of a bundled plan.

    Raises
    ------
    PlanError
        In one line naming the file, the place in it and the fix.
    """
    path = Path(where)
    bundled = bundled_plans()
    if not path.is_file():
        if str(where) in bundled:
            path = bundled[str(where)]
        else:
            raise PlanError(
                f"no plan file {where}{did_you_mean(str(where), bundled)}; pass a .toml or .yaml file, or one of the "
                f"bundled plans: {', '.join(bundled)} (folkscope study list)",
                parameter="plan",
                value=str(where),
            )
    raw = _read(path)
    return _plan(raw, str(path))


def _read(path: Path) -> Mapping[str, Any]:
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"plan {path}: cannot be read ({exc}); pass a UTF-8 text file") from None
    if suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PlanError(f"plan {path}: not valid TOML ({exc}); fix the line it names") from None
    elif suffix in (".yaml", ".yml"):
        yaml = require("yaml", feature="YAML study plans (or write the plan as TOML)")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            at = f" at line {where.line + 1}" if where is not None else ""
            raise PlanError(f"plan {path}: not valid YAML{at} ({getattr(exc, 'problem', exc)}); fix it") from None
    else:
        raise PlanError(f"plan {path}: unknown format {suffix or '(no suffix)'}; name it .toml, .yaml or .yml")
    if not isinstance(data, Mapping):
        raise PlanError(
            f"plan {path}: the file must hold a table of settings (name, models, parts), not {type(data).__name__}"
        )
    return data


def _plan(raw: Mapping[str, Any], path: str) -> Plan:
    _known_keys(raw, _TOP, path, "the top level")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise PlanError(f"plan {path}: `name` is missing; give the study a name (it names the study's folder)")
    if slug(name) != name:
        raise PlanError(
            f"plan {path}: name {name!r} is not a plain folder name; use letters, digits, '.', '_' and '-' "
            f"(e.g. {slug(name, fallback='study')!r})"
        )
    models_raw = raw.get("models")
    if not isinstance(models_raw, Sequence) or isinstance(models_raw, str) or not models_raw:
        raise PlanError(f'plan {path}: no models; add at least one [[models]] table with model = "..."')
    models = tuple(_model(m, path, i) for i, m in enumerate(models_raw))
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise PlanError(f"plan {path}: two models are labelled {twice[0]!r}; give each a distinct label")
    parts = tuple(_part(key, raw[key], path) for key in PART_KEYS if key in raw)
    if not parts:
        raise PlanError(f"plan {path}: no part to run; add a section [risk], [allocation], [epidemiology] or [numeric]")
    for text, what in ((raw.get("description", ""), "description"), (raw.get("source", ""), "source")):
        if not isinstance(text, str):
            raise PlanError(f"plan {path}: `{what}` must be text")
    results_dir = raw.get("results_dir")
    if results_dir is not None and not isinstance(results_dir, str):
        raise PlanError(f"plan {path}: `results_dir` must be a folder path as text")
    return Plan(
        name=name,
        description=raw.get("description", ""),
        source=raw.get("source", ""),
        models=models,
        parts=parts,
        path=path,
        results_dir=results_dir,
    )


def _known_keys(table: Mapping[str, Any], known: Sequence[str], path: str, where: str) -> None:
    for key in table:
        if key not in known:
            raise PlanError(
                f"plan {path}: unknown key {key!r} in {where}{did_you_mean(str(key), known)} (known: {', '.join(known)})"
            )


def _model(raw: Any, path: str, index: int) -> ModelSpec:
    where = f"models[{index}]"
    if not isinstance(raw, Mapping):
        raise PlanError(f'plan {path}: {where} must be a table with model = "..."')
    model = raw.get("model")
    if not isinstance(model, str) or not model.strip():
        raise PlanError(f"plan {path}: {where} has no `model`; give what --model takes (a name, a Hub id, a folder)")
    label = raw.get("label", model)
    if not isinstance(label, str) or not label.strip():
        raise PlanError(f"plan {path}: {where} `label` must be non-empty text")
    parts = raw.get("parts", PART_KEYS)
    if isinstance(parts, str) or not isinstance(parts, Sequence) or not all(p in PART_KEYS for p in parts):
        raise PlanError(f"plan {path}: {where} `parts` must list some of {', '.join(PART_KEYS)} (got {parts!r})")
    engine = {k: v for k, v in raw.items() if k not in _MODEL}
    for key in ("results_dir", "task"):
        if key in engine:
            raise PlanError(f"plan {path}: {where} sets {key!r}; a model carries engine settings only")
    return ModelSpec(model=model, label=label, engine=engine, parts=tuple(parts))


def _part(key: str, raw: Any, path: str) -> PartSpec:
    where = f"[{key}]"
    if not isinstance(raw, Mapping):
        raise PlanError(f"plan {path}: {where} must be a table (tasks, options, vary, variants)")
    _known_keys(raw, _PART, path, where)
    tasks_raw = raw.get("tasks")
    if tasks_raw is None:
        tasks: tuple[str | None, ...] = (None,)  # the command's own default task
    elif isinstance(tasks_raw, str) or not isinstance(tasks_raw, Sequence) or not tasks_raw:
        raise PlanError(f"plan {path}: {where} tasks must be a non-empty list of task names (got {tasks_raw!r})")
    else:
        if not all(isinstance(t, str) and t for t in tasks_raw):
            raise PlanError(f"plan {path}: {where} tasks must be names (text)")
        tasks = tuple(dict.fromkeys(tasks_raw))
    options = raw.get("options", {})
    vary = raw.get("vary", {})
    variants = raw.get("variants", [{}])
    for value, what in ((options, "options"), (vary, "vary")):
        if not isinstance(value, Mapping):
            raise PlanError(f"plan {path}: {where} {what} must be a table of flag = value")
    if isinstance(variants, str) or not isinstance(variants, Sequence) or not variants:
        raise PlanError(f"plan {path}: {where} variants must be a non-empty list of tables of flag = value")
    for axis, values in vary.items():
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise PlanError(f"plan {path}: {where} vary.{axis} must be a non-empty list of values (got {values!r})")
    for i, variant in enumerate(variants):
        if not isinstance(variant, Mapping):
            raise PlanError(f"plan {path}: {where} variants[{i}] must be a table of flag = value")
    for flag in ("task", "results_dir", "model"):
        if flag in options or flag in vary or any(flag in v for v in variants):
            raise PlanError(
                f"plan {path}: {where} sets {flag!r}; "
                + (
                    "list tasks in `tasks`"
                    if flag == "task"
                    else "models go in [[models]]"
                    if flag == "model"
                    else "the study chooses the results folder (--results-dir of `study run`)"
                )
            )
    axes = list(vary.items())
    settings = []
    for combo in itertools.product(*(values for _, values in axes)):
        for variant in variants:
            settings.append({**dict(zip((a for a, _ in axes), combo)), **variant})
    keys = [tuple(sorted(s.items(), key=lambda kv: kv[0])) for s in settings]
    if len({repr(k) for k in keys}) != len(keys):
        raise PlanError(f"plan {path}: {where} two settings of vary/variants are the same; each cell must differ")
    return PartSpec(part=key, tasks=tasks, options=dict(options), settings=tuple(settings))
