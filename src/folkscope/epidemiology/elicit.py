"""The model's distribution P̂(outcome | condition), elicited through the engine two ways.

qa
    The question with the outcome levels as lettered answers; each letter's
    next-token probability (tokenizations summed), renormalised over the
    letters and averaged over every ordering of the letters when there are
    at most 128 (5 levels: 120), else over 128 seeded random orderings. The
    orderings of one condition share the question and go to the engine as
    one prefix group, so the question is computed once per condition.
likelihood
    For every outcome level, "What is the probability that ...?" with the 22
    answers A. 0%, B. 0-5%, ..., V. 100%; the most probable answer's value
    (the bin midpoint; 0 and 1 for the point answers), as the paper reads it,
    or (``likelihood_readout="expected"``) the expectation over the 22
    answers. The values of a condition's levels are renormalised to sum to 1
    (they are asked one at a time, so nothing makes them add up).
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

from folkscope.engine import Engine, GenerateRequest, GenerationSettings
from folkscope.epidemiology.tasks import Task
from folkscope.errors import ConfigError
from folkscope.prompting import LIKELIHOOD_BINS, PromptConfig, likelihood_prompt, qa_prompt
from folkscope.readout import most_likely, parse_choice, read_choices, read_rendered

__all__ = ["LIKELIHOOD_READOUTS", "MAX_ORDERINGS", "MODES", "elicit"]

MODES = ("qa", "likelihood", "sampling")
LIKELIHOOD_READOUTS = ("argmax", "expected")
#: orderings of a QA question: all of them up to this many, else this many seeded at random (the authors' 128)
MAX_ORDERINGS = 128


def _conditions(task: Task) -> list[str | None]:  # a low-dimensional task's condition texts (None: unconditional)
    return [None] if task.condition is None else [lv.text for lv in task.condition.levels]


def elicit(
    engine: Engine,
    task: Task,
    *,
    mode: str = "qa",
    chat: bool = False,
    likelihood_readout: str = "argmax",
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
    asked = list(conditions) if conditions is not None else _conditions(task)
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", parameter="mode", value=mode)
    if likelihood_readout not in LIKELIHOOD_READOUTS:
        raise ConfigError(
            f"likelihood_readout must be one of {', '.join(LIKELIHOOD_READOUTS)}, got {likelihood_readout!r}",
            parameter="likelihood_readout",
            value=likelihood_readout,
        )
    config = PromptConfig(use_chat_template=chat)
    answers = [lv.text for lv in task.outcome.levels]
    if mode == "qa":
        rendered = [
            qa_prompt(task.question(c), answers, max_orderings=MAX_ORDERINGS, seed=seed, config=config) for c in asked
        ]
        return read_rendered(engine, rendered, unit="conditions", description=f"{task.name} (QA)").probs
    if mode == "sampling":
        return _sampled(engine, task, config, answers, asked, seed=seed, n_samples=n_samples)
    rendered = [likelihood_prompt(task.likelihood_question(c, a), config=config) for c in asked for a in answers]
    letters = tuple(b.letter for b in LIKELIHOOD_BINS)
    probs = read_choices(
        engine, [[r.to_prompt()] for r in rendered], letters, unit="questions", description=f"{task.name} (likelihood)"
    ).probs
    values = np.asarray([b.value for b in LIKELIHOOD_BINS])
    stated = most_likely(probs, values) if likelihood_readout == "argmax" else probs @ values
    stated = stated.reshape(len(asked), len(answers))
    total = stated.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, stated / total, np.nan)


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
