"""Numeric-calibration template files: the schema, its validation and the bundled files.

folkscope's own format is described in
:func:`~folkscope.numeric.problems.load_templates`; files in the layout of
the paper's released templates are converted by
:mod:`folkscope.numeric.original` and then validated here by the same rules.
Both loaders build on this module, which imports neither, so there is no
import cycle between them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from folkscope._json import read_data_file
from folkscope.errors import ConfigError
from folkscope.prompting import format_slots

__all__ = [
    "DATASETS",
    "PLACEHOLDER",
    "TemplateFile",
    "bundled_templates",
    "detect_template_format",
    "file_error",
    "is_folkscope_format",
    "read_templates",
    "validate_templates",
]

#: dataset names, in the order the CLI lists them
DATASETS = ("colors", "wordproblems", "distributions")
#: a ``{name}`` placeholder of a template text (any name, for error messages)
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")

_FORMAT_VERSION = 1
_TOP_KEYS = {
    "colors": {"dataset", "format_version", "description", "words", "instructions", "templates"},
    "wordproblems": {"dataset", "format_version", "description", "instructions", "templates"},
    "distributions": {"dataset", "format_version", "description", "instructions", "templates"},
}
_TEMPLATE_KEYS = {
    "colors": ({"id", "text"}, {"id", "text"}),
    "wordproblems": ({"id", "text", "pairs"}, {"id", "text", "pairs"}),
    "distributions": (
        {"id", "text", "low_inclusive", "high_inclusive"},
        {"id", "text", "low_inclusive", "high_inclusive"},
    ),
}
_SLOTS = {
    "colors": {"n1", "w1", "n2", "w2"},
    "wordproblems": {"n1", "w1", "n2", "w2"},
    "distributions": {"low", "high"},
}


@dataclass(frozen=True)
class TemplateFile:
    """A validated template file (see :func:`~folkscope.numeric.problems.load_templates`)."""

    dataset: str
    templates: tuple[Mapping[str, Any], ...]
    instructions: tuple[str, ...]
    words: tuple[str, ...] = ()
    source: str = "bundled"
    description: str = field(default="", compare=False)


def _bad(msg: str, source: str, value: Any = None) -> ConfigError:
    return ConfigError(f"template file {source}: {msg}", parameter="template_file", value=value)


def _word(value: Any, where: str, source: str) -> str:
    if not isinstance(value, str) or not value.strip() or value != value.strip() or "{" in value:
        raise _bad(
            f"{where} must be a non-blank word without surrounding spaces or braces, got {value!r}", source, value
        )
    return value


def _check_distinct(words: Sequence[str], where: str, source: str) -> None:
    seen: dict[str, str] = {}
    for w in words:
        key = w.casefold()
        if key in seen:
            raise _bad(
                f"{where} has {seen[key]!r} and {w!r}, which only differ in case; their "
                "probabilities could not be told apart",
                source,
                list(words),
            )
        seen[key] = w


def _slots_of(text: str, tid: str, source: str) -> list[str]:
    """The placeholders of a template text (:func:`~folkscope.prompting.format_slots`: a stray brace, a format spec, a
    conversion or attribute/index access such as ``{n1.__class__}`` is refused at load, with the template named,
    rather than failing, or leaking, when problems are made)."""
    return format_slots(
        text,
        f"template file {source}: template {tid!r}",
        error=lambda message: ConfigError(message, parameter="template_file", value=text),
    )


def validate_templates(data: Any, source: str, dataset: str | None) -> TemplateFile:
    """Check a parsed template file against the schema of ``dataset`` (any dataset when None).

    Raises
    ------
    ConfigError
        The first rule broken, naming ``source``, the template and the rule.
    """
    if not isinstance(data, Mapping):
        raise _bad(f"the top level must be a JSON object, got {type(data).__name__}", source)
    name = data.get("dataset")
    if name not in DATASETS:
        raise _bad(f"'dataset' must be one of {', '.join(DATASETS)}, got {name!r}", source, name)
    if dataset is not None and name != dataset:
        raise _bad(f"it holds dataset {name!r} but {dataset!r} was requested", source, name)
    unknown = set(data) - _TOP_KEYS[name]
    if unknown:
        raise _bad(f"unknown keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS[name])}", source, sorted(unknown))
    if data.get("format_version", _FORMAT_VERSION) != _FORMAT_VERSION:
        raise _bad(f"format_version must be {_FORMAT_VERSION}", source, data.get("format_version"))
    instructions = data.get("instructions")
    if (
        not isinstance(instructions, list)
        or not instructions
        or not all(isinstance(s, str) and s.strip() for s in instructions)
    ):
        raise _bad(
            "'instructions' must be a non-empty list of non-blank strings (the chat calibration instructions)",
            source,
            instructions,
        )
    words: tuple[str, ...] = ()
    if name == "colors":
        raw = data.get("words")
        if not isinstance(raw, list) or len(raw) < 2:
            raise _bad("'words' must list at least two option words", source, raw)
        words = tuple(_word(w, "'words'", source) for w in raw)
        _check_distinct(words, "'words'", source)
    templates = data.get("templates")
    if not isinstance(templates, list) or not templates:
        raise _bad("'templates' must be a non-empty list of objects", source, templates)
    required, allowed = _TEMPLATE_KEYS[name]
    ids: set[str] = set()
    for i, t in enumerate(templates):
        if not isinstance(t, Mapping):
            raise _bad(f"template {i} must be an object, got {type(t).__name__}", source, t)
        missing, extra = required - set(t), set(t) - allowed
        if missing or extra:
            raise _bad(
                f"template {i} has missing keys {sorted(missing)} / unknown keys "
                f"{sorted(extra)}; expected {sorted(required)}",
                source,
                dict(t),
            )
        tid = t["id"]
        if not isinstance(tid, str) or not re.fullmatch(r"[A-Za-z0-9_]+", tid) or tid in ids:
            raise _bad(f"template {i} needs a unique id of letters, digits and '_', got {tid!r}", source, tid)
        ids.add(tid)
        text = t["text"]
        if not isinstance(text, str) or not text.strip():
            raise _bad(f"template {tid!r} needs a non-blank 'text'", source, text)
        slots = _slots_of(text, tid, source)
        if sorted(slots) != sorted(_SLOTS[name]):
            raise _bad(
                f"template {tid!r} must use each placeholder of {sorted(_SLOTS[name])} exactly once, found {slots}",
                source,
                text,
            )
        if text != text.rstrip():
            raise _bad(
                f"template {tid!r} must not end with whitespace (the option word follows with its own leading space)",
                source,
                text,
            )
        if name == "wordproblems":
            pairs = t["pairs"]
            if not isinstance(pairs, list) or not pairs:
                raise _bad(f"template {tid!r}: 'pairs' must be a non-empty list", source, pairs)
            for pair in pairs:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _bad(f"template {tid!r}: every pair must be a list of two words, got {pair!r}", source, pair)
                _check_distinct(
                    [_word(w, f"template {tid!r} pair", source) for w in pair], f"template {tid!r} pair", source
                )
        if name == "distributions":
            for key in ("low_inclusive", "high_inclusive"):
                if not isinstance(t[key], bool):
                    raise _bad(f"template {tid!r}: {key!r} must be true or false", source, t[key])
    return TemplateFile(
        name, tuple(dict(t) for t in templates), tuple(instructions), words, source, str(data.get("description", ""))
    )


def bundled_templates(dataset: str) -> TemplateFile:
    """The template file shipped with folkscope for ``dataset``."""
    ref = resources.files("folkscope.numeric").joinpath("resources").joinpath(f"{dataset}.json")
    return validate_templates(json.loads(ref.read_text(encoding="utf-8")), "bundled", dataset)


def file_error(source: str, parameter: str = "template_file") -> Callable[[str], ConfigError]:
    """How a reader of :mod:`folkscope._json` reports a numeric input file it cannot read: a ConfigError on ``parameter``."""
    return lambda message: ConfigError(message, parameter=parameter, value=source)


def read_templates(path: str | Path, dataset: str) -> TemplateFile:
    """Read and validate a template file in folkscope's own format (any encoding, shape or nesting: one line)."""
    source = str(path)
    return validate_templates(read_data_file(path, "template file", error=file_error(source)), source, dataset)


def is_folkscope_format(data: Any) -> bool:
    """folkscope's own format: an object naming its dataset, templates as ``{"id", "text"}`` objects."""
    return (
        isinstance(data, Mapping)
        and "dataset" in data
        and isinstance(data.get("templates"), list)
        and all(isinstance(t, Mapping) and "id" in t for t in data["templates"])
    )


def detect_template_format(path: str | Path) -> str:
    """``"folkscope"`` or ``"original"``: which loader reads the template file at ``path``.

    A JSON object with a ``dataset`` key whose ``templates`` are objects with
    an ``id`` is folkscope's format; anything else (a list of template
    strings, the paper's ``{number_1}`` placeholders, a ``.py``/``.txt``
    listing) is taken as the paper's original layout, whose loader then says
    precisely what it could not read.
    """
    path = Path(path)
    if path.suffix.lower() != ".json":
        return "original"
    try:
        data = read_data_file(path, "template file", error=ConfigError)
    except ConfigError:
        return "folkscope"  # let the folkscope loader report the read/parse error
    return "folkscope" if is_folkscope_format(data) else "original"
