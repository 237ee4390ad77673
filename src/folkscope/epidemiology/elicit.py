"""The model's distribution P̂(outcome | condition), elicited through the engine two ways.

qa
    The question with the outcome levels as lettered answers; each letter's
    next-token probability (tokenizations summed), renormalised over the
    letters and averaged over every ordering of the letters when there are
    at most 128 (5 levels: 120), else over 128 seeded random orderings. The
    orderings of one condition share the question and go to the engine as
    one prefix group, so the question is computed once per condition.
likelihood
    "What is the probability that ...?" with the 22 answers A. 0%, B. 0-5%,
    ..., V. 100%; the most probable answer's value (the bin midpoint; 0 and 1
    for the point answers), as the paper reads it, or
    (``likelihood_readout="expected"``) the expectation over the 22 answers.
    Which levels are asked (``likelihood_levels``):

    - ``"paper"`` (default, the authors' code): the first k - 1 outcome
      levels; the last level gets 1 - the sum of the others (a binary task:
      one question; a high-dimensional task asks about its outcome, the
      second level, and the first gets the rest). The remainder is negative
      when the stated values sum above 1; it is kept, as the authors keep it,
      and counted (:func:`likelihood_distribution`, the run's caveats).
    - ``"all"``: every level is asked and the values renormalised to sum to
      1; a condition whose every level states 0% is NaN.

    :func:`likelihood_answers` gives the bin chosen for every question, which
    the run keeps (``bins.parquet``) so a strange score can be traced.
sampling
    For models without log-probabilities (closed web APIs): the QA question
    is asked ``n_samples`` times at temperature 1, each time in the next
    ordering of its letters (seeded per sample), and the answer letter each
    generation states (:func:`folkscope.readout.parse_choice`) is counted;
    P̂ is the frequencies over the answers that named a letter. A condition
    where no generation named one is NaN.

A condition whose answers the backend could not score is NaN, never a guess.

Examples
--------
>>> from folkscope.engine import Engine, GenerateRequest, GenerationSettings
>>> from folkscope.epidemiology.tasks import get_task
>>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
>>> qa = elicit(engine, get_task("acs_income_by_sex"), mode="qa")
>>> qa.shape, bool(np.allclose(qa.sum(axis=1), 1.0))
((2, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from folkscope.engine import Engine, GenerateRequest, GenerationSettings
from folkscope.epidemiology.tasks import Task
from folkscope.errors import ConfigError
from folkscope.prompting import LIKELIHOOD_BINS, PromptConfig, likelihood_prompt, qa_prompt
from folkscope.readout import most_likely, parse_choice, read_choices, read_rendered

__all__ = [
    "LIKELIHOOD_LEVELS",
    "LIKELIHOOD_READOUTS",
    "MAX_ORDERINGS",
    "MODES",
    "condition_texts",
    "elicit",
    "likelihood_answers",
    "likelihood_distribution",
]

#: how the model's distribution is elicited (``mode=``)
MODES = ("qa", "likelihood", "sampling")
#: the likelihood mode's answer per condition: the most likely level or the expectation over them
LIKELIHOOD_READOUTS = ("argmax", "expected")
#: which outcome levels the likelihood mode asks: the first k - 1 (the paper) or all of them
LIKELIHOOD_LEVELS = ("paper", "all")
#: orderings of a QA question: all of them up to this many, else this many seeded at random (the authors' 128)
MAX_ORDERINGS = 128


def condition_texts(task: Task) -> list[str | None]:
    """What a low-dimensional task's questions say about each condition (one None: the unconditional question)."""
    return [None] if task.condition is None else [lv.text for lv in task.condition.levels]


def elicit(
    engine: Engine,
    task: Task,
    *,
    mode: str = "qa",
    chat: bool = False,
    likelihood_readout: str = "argmax",
    likelihood_levels: str = "paper",
    seed: int = 0,
    n_samples: int = 50,
    conditions: Sequence[str] | None = None,
) -> np.ndarray:
    """The model's distribution, shape (n_conditions, n_levels); rows NaN where it could not be read.

    ``conditions``: the condition texts to ask about, in place of the task's
    own levels (a high-dimensional task's cells, :meth:`Task.cells`).
    """
    if conditions is None and task.dimension == "high":
        raise ConfigError(
            f"task {task.name} is high-dimensional: pass the cells to ask about (conditions=)", parameter="conditions"
        )
    asked = list(conditions) if conditions is not None else condition_texts(task)
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", parameter="mode", value=mode)
    _check_readout(likelihood_readout)
    config = PromptConfig(use_chat_template=chat)
    answers = [lv.text for lv in task.outcome.levels]
    if mode == "qa":
        rendered = [
            qa_prompt(task.question(c), answers, max_orderings=MAX_ORDERINGS, seed=seed, config=config) for c in asked
        ]
        return read_rendered(engine, rendered, unit="conditions", description=f"{task.name} (QA)").probs
    if mode == "sampling":
        return _sampled(engine, task, config, answers, asked, seed=seed, n_samples=n_samples)
    answers_table = likelihood_answers(
        engine, task, asked, chat=chat, readout=likelihood_readout, levels=likelihood_levels
    )
    return likelihood_distribution(answers_table, task, asked, levels=likelihood_levels)


def _check_readout(readout: str) -> None:
    """An unknown readout is refused, never read as the expectation."""
    if readout not in LIKELIHOOD_READOUTS:
        raise ConfigError(
            f"likelihood_readout must be one of {', '.join(LIKELIHOOD_READOUTS)}, got {readout!r}",
            parameter="likelihood_readout",
            value=readout,
        )


def _asked_levels(task: Task, levels: str) -> list[int]:
    """The outcome levels the likelihood mode asks about (see the module docstring)."""
    if levels not in LIKELIHOOD_LEVELS:
        raise ConfigError(
            f"likelihood_levels must be one of {', '.join(LIKELIHOOD_LEVELS)}, got {levels!r}",
            parameter="likelihood_levels",
            value=levels,
        )
    k = len(task.outcome.levels)
    if levels == "all":
        return list(range(k))
    return [1] if task.dimension == "high" else list(range(k - 1))


def likelihood_answers(
    engine: Engine,
    task: Task,
    conditions: Sequence[str | None],
    *,
    chat: bool = False,
    readout: str = "argmax",
    levels: str = "paper",
) -> pd.DataFrame:
    """Every likelihood question asked and the bin it was answered with, one row per (condition, level asked).

    Columns: ``condition`` (index into ``conditions``), ``level`` (index of
    the outcome level asked about), ``bin`` (the most probable answer's
    letter, None where unread), ``bin_probability`` (its renormalised
    probability) and ``stated`` (the value read: the bin midpoint, or the
    expectation with ``readout="expected"``; NaN where unread).
    """
    _check_readout(readout)
    asked_levels = _asked_levels(task, levels)
    config = PromptConfig(use_chat_template=chat)
    texts = [lv.text for lv in task.outcome.levels]
    plan = [(c, j) for c in range(len(conditions)) for j in asked_levels]
    rendered = [likelihood_prompt(task.likelihood_question(conditions[c], texts[j]), config=config) for c, j in plan]
    letters = tuple(b.letter for b in LIKELIHOOD_BINS)
    probs = read_choices(
        engine, [[r.to_prompt()] for r in rendered], letters, unit="questions", description=f"{task.name} (likelihood)"
    ).probs
    values = np.asarray([b.value for b in LIKELIHOOD_BINS])
    read = np.isfinite(probs).all(axis=1)
    chosen = np.nan_to_num(probs, nan=-1.0).argmax(axis=1)
    stated = most_likely(probs, values) if readout == "argmax" else probs @ values
    return pd.DataFrame(
        {
            "condition": [c for c, _ in plan],
            "level": [j for _, j in plan],
            "bin": [letters[i] if ok else None for i, ok in zip(chosen, read)],
            "bin_probability": np.where(read, probs[np.arange(len(plan)), chosen], np.nan),
            "stated": np.where(read, stated, np.nan),
        }
    )


def likelihood_distribution(
    answers: pd.DataFrame, task: Task, conditions: Sequence[str | None], *, levels: str = "paper"
) -> np.ndarray:
    """P̂(outcome | condition) from :func:`likelihood_answers`, shape (n_conditions, n_levels).

    ``"paper"``: the level left unasked gets 1 - the sum of the stated
    values (negative when they sum above 1, kept as the authors' code keeps
    it); ``"all"``: the stated values renormalised (NaN where all are 0). A
    condition with an unread question is NaN.
    """
    k = len(task.outcome.levels)
    stated = np.full((len(conditions), k), np.nan)
    stated[answers["condition"].to_numpy(int), answers["level"].to_numpy(int)] = answers["stated"].to_numpy(float)
    if levels == "all":
        total = stated.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, stated / total, np.nan)
    asked = _asked_levels(task, levels)
    rest = next(j for j in range(k) if j not in asked)
    stated[:, rest] = 1.0 - stated[:, asked].sum(axis=1)
    return stated


def _sampled(
    engine: Engine,
    task: Task,
    config: PromptConfig,
    answers: list[str],
    asked: list[str | None],
    *,
    seed: int,
    n_samples: int,
) -> np.ndarray:
    """Answer frequencies of ``n_samples`` generations per condition (see the module docstring)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
        raise ConfigError(
            f"n_samples must be an integer >= 1, got {n_samples!r}", parameter="n_samples", value=n_samples
        )
    rendered = [
        qa_prompt(task.question(c), answers, max_orderings=MAX_ORDERINGS, seed=seed, config=config) for c in asked
    ]
    k = rendered[0].n_slots
    plan = [(c, s % k, seed * 1_000_003 + s) for c in range(len(rendered)) for s in range(n_samples)]
    requests = [
        GenerateRequest(
            rendered[c].to_prompt(o), GenerationSettings(max_new_tokens=8, temperature=1.0, seed=sample_seed)
        )
        for c, o, sample_seed in plan
    ]
    results = engine.generate(requests, unit="samples", description=f"{task.name} (sampling)")
    counts = np.zeros((len(rendered), len(answers)))
    for (c, o, _), result in zip(plan, results):
        ordering = rendered[c].orderings[o]
        picked = parse_choice(result.text, ordering.letters)
        if picked is not None:
            counts[c, ordering.permutation[picked]] += 1
    totals = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, counts / totals, np.nan)
