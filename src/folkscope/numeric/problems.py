"""Numeric-calibration problems: template files and deterministic generators.

Three datasets (``spec/numeric-calibration.md``; Lovering et al., section 3):

``colors``
    Two counts and two colours in a short draw story; every ordered pair of
    distinct colours of the template file, three number scales.
``wordproblems``
    The same numbers in varied scenes, each template listing its own word
    pairs (both orders are used).
``distributions``
    A uniform draw from an integer interval with fewer than 10 valid options.

Number scales (``colors`` and ``wordproblems``): ``small`` uses the numbers
1-10, ``medium`` ten distinct numbers drawn from 10-100 and ``large`` ten from
100-999. A scale's configurations are the full grid of ordered number pairs
(100 with ten numbers), so every grid cell (template x scale x ordered option
pair) sees each number pair exactly once: half the off-diagonal pairs put the
larger count first, half second, which keeps the reference behaviours apart.

Template files are JSON (schema in :func:`load_templates`); the bundled ones
live in ``folkscope/numeric/resources``. Files in the layout of the paper's
released templates and prompts are converted by
:func:`folkscope.numeric.original.load_original_templates` (``load_templates`` detects them). Every
generator is a pure function of its arguments and ``seed``.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from folkscope.errors import ConfigError
from folkscope.metrics import ideal_distribution

__all__ = [
    "DATASETS",
    "SCALES",
    "TEMPLATE_FORMATS",
    "NumericProblem",
    "TemplateFile",
    "detect_template_format",
    "generate_problems",
    "load_templates",
    "scale_numbers",
]

#: dataset names, in the order the CLI lists them
DATASETS = ("colors", "wordproblems", "distributions")
#: template file formats: folkscope's JSON, the paper's released layout, or detect
TEMPLATE_FORMATS = ("auto", "folkscope", "original")
#: number scales: name -> (low, high inclusive); ``small`` uses every number of its range
SCALES: dict[str, tuple[int, int]] = {"small": (1, 10), "medium": (10, 100), "large": (100, 999)}

_FORMAT_VERSION = 1
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_TOP_KEYS = {
    "colors": {"dataset", "format_version", "description", "words", "instructions", "templates"},
    "wordproblems": {"dataset", "format_version", "description", "instructions", "templates"},
    "distributions": {"dataset", "format_version", "description", "instructions", "templates"},
}
_TEMPLATE_KEYS = {
    "colors": ({"id", "text"}, {"id", "text"}),
    "wordproblems": ({"id", "text", "pairs"}, {"id", "text", "pairs"}),
    "distributions": ({"id", "text", "low_inclusive", "high_inclusive"},
                      {"id", "text", "low_inclusive", "high_inclusive"}),
}
_SLOTS = {"colors": {"n1", "w1", "n2", "w2"}, "wordproblems": {"n1", "w1", "n2", "w2"},
          "distributions": {"low", "high"}}


@dataclass(frozen=True)
class NumericProblem:
    """One problem: a scenario whose next word should follow ``ideal``.

    Attributes
    ----------
    id : str
        Unique and stable (dataset, template, scale, options, numbers).
    dataset, template_id, scale : str
        ``scale`` is the number scale, or ``"len{k}"`` (k options) for distributions.
    options : tuple of str
        The valid next words T, in the order the text lists them.
    counts : tuple of float
        Weight of each option in the context (all 1 for distributions).
    ideal : tuple of float
        The implied distribution P, ``counts / sum(counts)``.
    text : str
        The scenario: the base-model prompt, and the assistant prefill in chat form.
    instruction : str
        The calibration instruction used as the user turn in chat form.
    instruction_id : int
        Index of ``instruction`` in the template file's list.
    cell : str
        Grid cell for behaviour classification (template, scale, ordered options).
    pair : str
        Unordered option pair (the cluster for confidence intervals).
    numbers : tuple of int
        The two numbers the text shows, in text order: the counts of a
        two-option problem, the interval ends ``(low, high)`` of a
        distributions problem. The frequency-effects analysis compares them.
    """

    id: str
    dataset: str
    template_id: str
    scale: str
    options: tuple[str, ...]
    counts: tuple[float, ...]
    ideal: tuple[float, ...]
    text: str
    instruction: str
    instruction_id: int
    cell: str
    pair: str
    numbers: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples become lists)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class TemplateFile:
    """A validated template file (see :func:`load_templates`)."""

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
        raise _bad(f"{where} must be a non-blank word without surrounding spaces or braces, "
                   f"got {value!r}", source, value)
    return value


def _check_distinct(words: Sequence[str], where: str, source: str) -> None:
    seen: dict[str, str] = {}
    for w in words:
        key = w.casefold()
        if key in seen:
            raise _bad(f"{where} has {seen[key]!r} and {w!r}, which only differ in case; their "
                       "probabilities could not be told apart", source, list(words))
        seen[key] = w


def _slots_of(text: str, tid: str, source: str) -> list[str]:
    """The placeholders of a template text, read the way ``str.format`` will read them.

    A stray brace, a format spec, a conversion or attribute/index access
    (``{n1.__class__}``, ``{n1[0]}``) is refused here, at load, with the
    template named, rather than failing (or leaking) when problems are made.
    """
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise _bad(f"template {tid!r}: {exc} in its text; write {{{{ or }}}} for a literal brace", source, text) from None
    slots = []
    for _, field_name, spec, conversion in parts:
        if field_name is None:
            continue
        if not re.fullmatch(r"[a-z][a-z0-9]*", field_name) or spec or conversion:
            shown = "{" + field_name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise _bad(f"template {tid!r}: placeholder {shown} is not allowed; use plain names such as {{n1}}",
                       source, text)
        slots.append(field_name)
    return slots


def _validate(data: Any, source: str, dataset: str | None) -> TemplateFile:
    if not isinstance(data, Mapping):
        raise _bad(f"the top level must be a JSON object, got {type(data).__name__}", source)
    name = data.get("dataset")
    if name not in DATASETS:
        raise _bad(f"'dataset' must be one of {', '.join(DATASETS)}, got {name!r}", source, name)
    if dataset is not None and name != dataset:
        raise _bad(f"it holds dataset {name!r} but {dataset!r} was requested", source, name)
    unknown = set(data) - _TOP_KEYS[name]
    if unknown:
        raise _bad(f"unknown keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS[name])}", source,
                   sorted(unknown))
    if data.get("format_version", _FORMAT_VERSION) != _FORMAT_VERSION:
        raise _bad(f"format_version must be {_FORMAT_VERSION}", source, data.get("format_version"))
    instructions = data.get("instructions")
    if (not isinstance(instructions, list) or not instructions
            or not all(isinstance(s, str) and s.strip() for s in instructions)):
        raise _bad("'instructions' must be a non-empty list of non-blank strings (the chat "
                   "calibration instructions)", source, instructions)
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
            raise _bad(f"template {i} has missing keys {sorted(missing)} / unknown keys "
                       f"{sorted(extra)}; expected {sorted(required)}", source, dict(t))
        tid = t["id"]
        if not isinstance(tid, str) or not re.fullmatch(r"[A-Za-z0-9_]+", tid) or tid in ids:
            raise _bad(f"template {i} needs a unique id of letters, digits and '_', got {tid!r}",
                       source, tid)
        ids.add(tid)
        text = t["text"]
        if not isinstance(text, str) or not text.strip():
            raise _bad(f"template {tid!r} needs a non-blank 'text'", source, text)
        slots = _slots_of(text, tid, source)
        if sorted(slots) != sorted(_SLOTS[name]):
            raise _bad(f"template {tid!r} must use each placeholder of {sorted(_SLOTS[name])} "
                       f"exactly once, found {slots}", source, text)
        if text != text.rstrip():
            raise _bad(f"template {tid!r} must not end with whitespace (the option word follows "
                       "with its own leading space)", source, text)
        if name == "wordproblems":
            pairs = t["pairs"]
            if not isinstance(pairs, list) or not pairs:
                raise _bad(f"template {tid!r}: 'pairs' must be a non-empty list", source, pairs)
            for pair in pairs:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise _bad(f"template {tid!r}: every pair must be a list of two words, got "
                               f"{pair!r}", source, pair)
                _check_distinct([_word(w, f"template {tid!r} pair", source) for w in pair],
                                f"template {tid!r} pair", source)
        if name == "distributions":
            for key in ("low_inclusive", "high_inclusive"):
                if not isinstance(t[key], bool):
                    raise _bad(f"template {tid!r}: {key!r} must be true or false", source, t[key])
    return TemplateFile(name, tuple(dict(t) for t in templates), tuple(instructions), words,
                        source, str(data.get("description", "")))


def _bundled(dataset: str) -> TemplateFile:
    ref = resources.files("folkscope.numeric").joinpath("resources").joinpath(f"{dataset}.json")
    return _validate(json.loads(ref.read_text(encoding="utf-8")), "bundled", dataset)


def _read_json(path: str | Path) -> Any:
    source = str(path)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise _bad(f"cannot be read ({exc.strerror or exc})", source, source) from exc
    except json.JSONDecodeError as exc:
        raise _bad(f"is not valid JSON ({exc.msg} at line {exc.lineno})", source, source) from exc


def _looks_like_folkscope(data: Any) -> bool:
    """folkscope's own format: an object naming its dataset, templates as ``{"id", "text"}`` objects."""
    return (isinstance(data, Mapping) and "dataset" in data
            and isinstance(data.get("templates"), list)
            and all(isinstance(t, Mapping) and "id" in t for t in data["templates"]))


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
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "folkscope"  # let the folkscope loader report the read/parse error
    return "folkscope" if _looks_like_folkscope(data) else "original"


def load_templates(dataset: str, path: str | Path | None = None, *, format: str = "auto",
                   prompts: str | Path | None = None) -> TemplateFile:
    """Load and validate the template file of ``dataset`` (bundled when ``path`` is None).

    folkscope's schema (JSON object): ``dataset`` (name), ``format_version``
    (1, optional), ``description`` (optional), ``instructions`` (list of chat
    calibration instructions), ``templates`` (list of ``{"id", "text", ...}``).
    ``colors`` adds ``words`` (the option words; every ordered pair of
    distinct words is used); each ``wordproblems`` template adds ``pairs``
    (list of two-word lists); each ``distributions`` template adds
    ``low_inclusive`` and ``high_inclusive`` booleans. Texts use the
    placeholders ``{n1} {w1} {n2} {w2}`` (``{low} {high}`` for distributions)
    once each, and end right before the option word.

    Parameters
    ----------
    dataset : {"colors", "wordproblems", "distributions"}
    path : path, optional
        The template file; the bundled one when None.
    format : {"auto", "folkscope", "original"}, default "auto"
        ``"original"`` reads the paper's released layout through
        :func:`~folkscope.numeric.original.load_original_templates`; ``"auto"`` decides with
        :func:`detect_template_format`.
    prompts : path, optional
        Original-layout chat prompts (only with the original format).

    Raises
    ------
    ConfigError
        Unknown dataset or format, unreadable file or any schema violation
        (the message names the template and the rule).

    Examples
    --------
    >>> len(load_templates("colors").words)
    11
    """
    if dataset not in DATASETS:
        raise ConfigError(f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}",
                          parameter="dataset", value=dataset)
    if format not in TEMPLATE_FORMATS:
        raise ConfigError(f"template format must be one of {', '.join(TEMPLATE_FORMATS)}, got "
                          f"{format!r}", parameter="template_format", value=format)
    if path is None:
        if prompts is not None:
            raise ConfigError("a prompt file goes with an original-format template file "
                              "(--template-file); the bundled templates carry their own "
                              "instructions", parameter="prompt_file", value=str(prompts))
        return _bundled(dataset)
    if format == "auto":
        format = detect_template_format(path)
    if format == "original":
        from folkscope.numeric.original import (
            load_original_templates,  # it builds on this module
        )

        return load_original_templates(path, dataset, prompts=prompts)
    if prompts is not None:
        raise ConfigError("a prompt file only goes with an original-format template file; "
                          "folkscope's format keeps its instructions in the file itself",
                          parameter="prompt_file", value=str(prompts))
    return _validate(_read_json(path), str(path), dataset)


def scale_numbers(scale: str, *, n_numbers: int = 10, seed: int = 0) -> tuple[int, ...]:
    """The numbers of one scale, sorted: ``small`` takes evenly spread numbers of 1-10,
    the others ``n_numbers`` distinct numbers drawn with ``seed``.

    Examples
    --------
    >>> scale_numbers("small")
    (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    """
    if scale not in SCALES:
        raise ConfigError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}",
                          parameter="scales", value=scale)
    low, high = SCALES[scale]
    if not isinstance(n_numbers, int) or not 2 <= n_numbers <= 10:
        raise ConfigError(f"n_numbers must be an integer in [2, 10], got {n_numbers!r}",
                          parameter="n_numbers", value=n_numbers)
    if scale == "small":
        return tuple(int(x) for x in np.unique(np.linspace(low, high, n_numbers).round()))
    rng = np.random.default_rng([seed, list(SCALES).index(scale)])
    return tuple(sorted(int(x) for x in rng.choice(np.arange(low, high + 1), n_numbers,
                                                   replace=False)))


def _pairs_of(tf: TemplateFile, template: Mapping[str, Any]) -> list[tuple[str, str]]:
    if tf.dataset == "colors":
        return [(a, b) for a in tf.words for b in tf.words if a != b]
    out: list[tuple[str, str]] = []
    for a, b in template["pairs"]:
        out += [(a, b), (b, a)]
    return out


def _two_option(tf: TemplateFile, numbers: Mapping[str, tuple[int, ...]]) -> list[NumericProblem]:
    problems: list[NumericProblem] = []
    ideal = {(a, b): tuple(float(x) for x in ideal_distribution([a, b]))
             for s in numbers for a in numbers[s] for b in numbers[s]}
    for t in tf.templates:
        for scale in numbers:
            for w1, w2 in _pairs_of(tf, t):
                for n1 in numbers[scale]:
                    for n2 in numbers[scale]:
                        k = len(problems) % len(tf.instructions)
                        text = t["text"].format(n1=n1, w1=w1, n2=n2, w2=w2)
                        problems.append(NumericProblem(
                            id=f"{tf.dataset}:{t['id']}:{scale}:{w1}:{w2}:{n1}:{n2}",
                            dataset=tf.dataset, template_id=t["id"], scale=scale,
                            options=(w1, w2), counts=(float(n1), float(n2)),
                            ideal=ideal[n1, n2],
                            text=text, instruction=tf.instructions[k], instruction_id=k,
                            cell=f"{t['id']}|{scale}|{w1}|{w2}",
                            pair="|".join(sorted((w1, w2))), numbers=(n1, n2)))
    return problems


def _intervals(n_intervals: int, seed: int) -> list[tuple[int, int]]:
    """(first valid integer, number of valid integers in 2..9), first in 10..990."""
    rng = np.random.default_rng([seed, 99])
    firsts = rng.integers(10, 991, n_intervals)
    sizes = rng.integers(2, 10, n_intervals)
    return [(int(a), int(k)) for a, k in zip(firsts, sizes)]


def _distributions(tf: TemplateFile, n_intervals: int, seed: int) -> list[NumericProblem]:
    problems: list[NumericProblem] = []
    spans = _intervals(n_intervals, seed)
    for t in tf.templates:
        for first, k in spans:
            low = first if t["low_inclusive"] else first - 1
            high = first + k - 1 if t["high_inclusive"] else first + k
            options = tuple(str(v) for v in range(first, first + k))
            i = len(problems) % len(tf.instructions)
            problems.append(NumericProblem(
                id=f"distributions:{t['id']}:{low}:{high}", dataset="distributions",
                template_id=t["id"], scale=f"len{k}", options=options, counts=(1.0,) * k,
                ideal=(1.0 / k,) * k, text=t["text"].format(low=low, high=high),
                instruction=tf.instructions[i], instruction_id=i,
                cell=f"{t['id']}|len{k}", pair=f"{first}-{first + k - 1}", numbers=(low, high)))
    # the same interval can be drawn twice; keep ids unique (first occurrence wins)
    unique: dict[str, NumericProblem] = {}
    for p in problems:
        unique.setdefault(p.id, p)
    return list(unique.values())


def _custom_numbers(numbers: Sequence[int]) -> tuple[int, ...]:
    """Validate a user-chosen number set (the paper's appendix C uses 8, 9, 48, 51, 98, 99)."""
    if isinstance(numbers, (str, bytes)) or not isinstance(numbers, Sequence):
        raise ConfigError(f"numbers must be a list of integers, got {numbers!r}",
                          parameter="numbers", value=numbers)
    bad = [n for n in numbers if not isinstance(n, int) or isinstance(n, bool) or n < 1]
    if bad or len(set(numbers)) < 2:
        raise ConfigError("numbers must hold at least two distinct positive integers; "
                          f"got {list(numbers)!r}", parameter="numbers", value=list(numbers))
    return tuple(sorted(set(numbers)))


def generate_problems(
    dataset: str,
    *,
    seed: int = 0,
    scales: Sequence[str] = tuple(SCALES),
    n_numbers: int = 10,
    n_intervals: int = 320,
    templates: Sequence[str] | None = None,
    words: Sequence[str] | None = None,
    template_file: str | Path | None = None,
    limit: int | None = None,
    numbers: Sequence[int] | None = None,
    template_format: str = "auto",
    prompt_file: str | Path | None = None,
) -> list[NumericProblem]:
    """Generate the problems of one dataset, deterministically from ``seed``.

    Parameters
    ----------
    dataset : {"colors", "wordproblems", "distributions"}
    seed : int, default 0
        Draws the medium/large scale numbers, the intervals and the ``limit`` sample.
    scales : sequence of {"small", "medium", "large"}
    n_numbers : int in [2, 10], default 10
        Numbers per scale; a scale has ``n_numbers**2`` configurations (100 by default).
    n_intervals : int, default 320
        Intervals of the distributions dataset (each used by every template).
    templates : sequence of str, optional
        Keep only these template ids (default: all).
    words : sequence of str, optional
        colors only: keep only these colours (every ordered pair among them).
    template_file : path, optional
        Your own template file instead of the bundled one, in folkscope's
        format or the paper's original layout (:func:`load_templates`).
    limit : int, optional
        Keep a seeded random sample of this many problems (in generation order).
        Cells stay balanced only in expectation; for small balanced grids
        shrink ``n_numbers``, ``scales``, ``templates`` or ``words`` instead.
    numbers : sequence of int, optional
        Two-option datasets: use exactly these numbers (every ordered pair of
        them, ties included) as one scale named ``"custom"`` instead of
        ``scales``, e.g. the paper's demonstration set 8, 9, 48, 51, 98, 99.
    template_format : {"auto", "folkscope", "original"}, default "auto"
        Format of ``template_file`` (:func:`load_templates`).
    prompt_file : path, optional
        Chat prompts in the paper's original layout (:func:`~folkscope.numeric.original.load_original_templates`).

    Returns
    -------
    list of NumericProblem

    Examples
    --------
    >>> ps = generate_problems("colors", n_numbers=2, scales=["small"], templates=["marbles"])
    >>> len(ps), ps[0].options, ps[0].counts
    (440, ('red', 'blue'), (1.0, 1.0))
    >>> generate_problems("colors", numbers=[51, 98], words=["red", "blue"],
    ...                   templates=["marbles"])[1].numbers
    (51, 98)
    """
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ConfigError(f"limit must be a positive integer, got {limit!r}",
                          parameter="limit", value=limit)
    tf = load_templates(dataset, template_file, format=template_format, prompts=prompt_file)
    if isinstance(scales, str) or not scales or any(s not in SCALES for s in scales):
        raise ConfigError(f"scales must be a non-empty list of {', '.join(SCALES)}, got {scales!r}",
                          parameter="scales", value=scales)
    if templates is not None:
        known = [t["id"] for t in tf.templates]
        unknown = [t for t in templates if t not in known]
        if unknown or not templates:
            raise ConfigError(f"unknown template ids {unknown}; this file has {known}",
                              parameter="templates", value=list(templates))
        tf = TemplateFile(tf.dataset, tuple(t for t in tf.templates if t["id"] in templates),
                          tf.instructions, tf.words, tf.source, tf.description)
    if words is not None:
        if dataset != "colors":
            raise ConfigError("words only applies to the colors dataset", parameter="words",
                              value=list(words))
        unknown = [w for w in words if w not in tf.words]
        if unknown or len(set(words)) < 2:
            raise ConfigError(f"words must name at least two colours of {list(tf.words)}; "
                              f"unknown: {unknown}", parameter="words", value=list(words))
        tf = TemplateFile(tf.dataset, tf.templates, tf.instructions,
                          tuple(w for w in tf.words if w in words), tf.source, tf.description)
    if dataset == "distributions":
        if numbers is not None:
            raise ConfigError("numbers only applies to the two-option datasets (colors, "
                              "wordproblems); distributions draws its intervals",
                              parameter="numbers", value=list(numbers))
        if not isinstance(n_intervals, int) or n_intervals < 1:
            raise ConfigError(f"n_intervals must be a positive integer, got {n_intervals!r}",
                              parameter="n_intervals", value=n_intervals)
        problems = _distributions(tf, n_intervals, seed)
    elif numbers is not None:
        problems = _two_option(tf, {"custom": _custom_numbers(numbers)})
    else:
        problems = _two_option(tf, {s: scale_numbers(s, n_numbers=n_numbers, seed=seed)
                                    for s in dict.fromkeys(scales)})
    if limit is not None:
        if limit < len(problems):
            keep = np.random.default_rng([seed, 7]).choice(len(problems), limit, replace=False)
            problems = [problems[i] for i in sorted(keep)]
    return problems
