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

Template files are JSON (schema in :func:`load_templates`, validated by
:mod:`folkscope.numeric.templates`); the bundled ones live in
``folkscope/numeric/resources``. Files in the layout of the paper's
released templates and prompts are converted by
:func:`folkscope.numeric.original.load_original_templates` (``load_templates`` detects them). Every
generator is a pure function of its arguments and ``seed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from folkscope.errors import ConfigError
from folkscope.metrics import ideal_distribution
from folkscope.numeric.original import load_original_templates
from folkscope.numeric.templates import (
    DATASETS,
    TemplateFile,
    bundled_templates,
    detect_template_format,
    read_templates,
)

__all__ = [
    "SCALES",
    "TEMPLATE_FORMATS",
    "NumericProblem",
    "generate_problems",
    "load_templates",
    "scale_numbers",
]

#: template file formats: folkscope's JSON, the paper's released layout, or detect
TEMPLATE_FORMATS = ("auto", "folkscope", "original")
#: number scales: name -> (low, high inclusive); ``small`` uses every number of its range
SCALES: dict[str, tuple[int, int]] = {"small": (1, 10), "medium": (10, 100), "large": (100, 999)}


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


def load_templates(
    dataset: str, path: str | Path | None = None, *, format: str = "auto", prompts: str | Path | None = None
) -> TemplateFile:
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
        raise ConfigError(
            f"dataset must be one of {', '.join(DATASETS)}, got {dataset!r}", parameter="dataset", value=dataset
        )
    if format not in TEMPLATE_FORMATS:
        raise ConfigError(
            f"template format must be one of {', '.join(TEMPLATE_FORMATS)}, got {format!r}",
            parameter="template_format",
            value=format,
        )
    if path is None:
        if prompts is not None:
            raise ConfigError(
                "a prompt file goes with an original-format template file "
                "(--template-file); the bundled templates carry their own "
                "instructions",
                parameter="prompt_file",
                value=str(prompts),
            )
        return bundled_templates(dataset)
    if format == "auto":
        format = detect_template_format(path)
    if format == "original":
        return load_original_templates(path, dataset, prompts=prompts)
    if prompts is not None:
        raise ConfigError(
            "a prompt file only goes with an original-format template file; "
            "folkscope's format keeps its instructions in the file itself",
            parameter="prompt_file",
            value=str(prompts),
        )
    return read_templates(path, dataset)


def scale_numbers(scale: str, *, n_numbers: int = 10, seed: int = 0) -> tuple[int, ...]:
    """The numbers of one scale, sorted: ``small`` takes evenly spread numbers of 1-10,
    the others ``n_numbers`` distinct numbers drawn with ``seed``.

    Examples
    --------
    >>> scale_numbers("small")
    (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    """
    if scale not in SCALES:
        raise ConfigError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}", parameter="scales", value=scale)
    low, high = SCALES[scale]
    if not isinstance(n_numbers, int) or not 2 <= n_numbers <= 10:
        raise ConfigError(
            f"n_numbers must be an integer in [2, 10], got {n_numbers!r}", parameter="n_numbers", value=n_numbers
        )
    if scale == "small":
        return tuple(int(x) for x in np.unique(np.linspace(low, high, n_numbers).round()))
    rng = np.random.default_rng([seed, list(SCALES).index(scale)])
    return tuple(sorted(int(x) for x in rng.choice(np.arange(low, high + 1), n_numbers, replace=False)))


def _pairs_of(tf: TemplateFile, template: Mapping[str, Any]) -> list[tuple[str, str]]:
    if tf.dataset == "colors":
        return [(a, b) for a in tf.words for b in tf.words if a != b]
    out: list[tuple[str, str]] = []
    for a, b in template["pairs"]:
        out += [(a, b), (b, a)]
    return out


def _two_option(tf: TemplateFile, numbers: Mapping[str, tuple[int, ...]]) -> list[NumericProblem]:
    problems: list[NumericProblem] = []
    ideal = {
        (a, b): tuple(float(x) for x in ideal_distribution([a, b]))
        for s in numbers
        for a in numbers[s]
        for b in numbers[s]
    }
    for t in tf.templates:
        for scale in numbers:
            for w1, w2 in _pairs_of(tf, t):
                for n1 in numbers[scale]:
                    for n2 in numbers[scale]:
                        k = len(problems) % len(tf.instructions)
                        text = t["text"].format(n1=n1, w1=w1, n2=n2, w2=w2)
                        problems.append(
                            NumericProblem(
                                id=f"{tf.dataset}:{t['id']}:{scale}:{w1}:{w2}:{n1}:{n2}",
                                dataset=tf.dataset,
                                template_id=t["id"],
                                scale=scale,
                                options=(w1, w2),
                                counts=(float(n1), float(n2)),
                                ideal=ideal[n1, n2],
                                text=text,
                                instruction=tf.instructions[k],
                                instruction_id=k,
                                cell=f"{t['id']}|{scale}|{w1}|{w2}",
                                pair="|".join(sorted((w1, w2))),
                                numbers=(n1, n2),
                            )
                        )
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
            problems.append(
                NumericProblem(
                    id=f"distributions:{t['id']}:{low}:{high}",
                    dataset="distributions",
                    template_id=t["id"],
                    scale=f"len{k}",
                    options=options,
                    counts=(1.0,) * k,
                    ideal=(1.0 / k,) * k,
                    text=t["text"].format(low=low, high=high),
                    instruction=tf.instructions[i],
                    instruction_id=i,
                    cell=f"{t['id']}|len{k}",
                    pair=f"{first}-{first + k - 1}",
                    numbers=(low, high),
                )
            )
    # the same interval can be drawn twice; keep ids unique (first occurrence wins)
    unique: dict[str, NumericProblem] = {}
    for p in problems:
        unique.setdefault(p.id, p)
    return list(unique.values())


def _custom_numbers(numbers: Sequence[int]) -> tuple[int, ...]:
    """Validate a user-chosen number set (the paper's appendix C uses 8, 9, 48, 51, 98, 99)."""
    if isinstance(numbers, (str, bytes)) or not isinstance(numbers, Sequence):
        raise ConfigError(f"numbers must be a list of integers, got {numbers!r}", parameter="numbers", value=numbers)
    bad = [n for n in numbers if not isinstance(n, int) or isinstance(n, bool) or n < 1]
    if bad or len(set(numbers)) < 2:
        raise ConfigError(
            f"numbers must hold at least two distinct positive integers; got {list(numbers)!r}",
            parameter="numbers",
            value=list(numbers),
        )
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
        raise ConfigError(f"limit must be a positive integer, got {limit!r}", parameter="limit", value=limit)
    tf = load_templates(dataset, template_file, format=template_format, prompts=prompt_file)
    if isinstance(scales, str) or not scales or any(s not in SCALES for s in scales):
        raise ConfigError(
            f"scales must be a non-empty list of {', '.join(SCALES)}, got {scales!r}", parameter="scales", value=scales
        )
    if templates is not None:
        known = [t["id"] for t in tf.templates]
        unknown = [t for t in templates if t not in known]
        if unknown or not templates:
            raise ConfigError(
                f"unknown template ids {unknown}; this file has {known}", parameter="templates", value=list(templates)
            )
        tf = TemplateFile(
            tf.dataset,
            tuple(t for t in tf.templates if t["id"] in templates),
            tf.instructions,
            tf.words,
            tf.source,
            tf.description,
        )
    if words is not None:
        if dataset != "colors":
            raise ConfigError("words only applies to the colors dataset", parameter="words", value=list(words))
        unknown = [w for w in words if w not in tf.words]
        if unknown or len(set(words)) < 2:
            raise ConfigError(
                f"words must name at least two colours of {list(tf.words)}; unknown: {unknown}",
                parameter="words",
                value=list(words),
            )
        tf = TemplateFile(
            tf.dataset,
            tf.templates,
            tf.instructions,
            tuple(w for w in tf.words if w in words),
            tf.source,
            tf.description,
        )
    if dataset == "distributions":
        if numbers is not None:
            raise ConfigError(
                "numbers only applies to the two-option datasets (colors, "
                "wordproblems); distributions draws its intervals",
                parameter="numbers",
                value=list(numbers),
            )
        if not isinstance(n_intervals, int) or n_intervals < 1:
            raise ConfigError(
                f"n_intervals must be a positive integer, got {n_intervals!r}",
                parameter="n_intervals",
                value=n_intervals,
            )
        problems = _distributions(tf, n_intervals, seed)
    elif numbers is not None:
        problems = _two_option(tf, {"custom": _custom_numbers(numbers)})
    else:
        problems = _two_option(tf, {s: scale_numbers(s, n_numbers=n_numbers, seed=seed) for s in dict.fromkeys(scales)})
    if limit is not None:
        if limit < len(problems):
            keep = np.random.default_rng([seed, 7]).choice(len(problems), limit, replace=False)
            problems = [problems[i] for i in sorted(keep)]
    return problems
