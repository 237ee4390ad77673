"""Model probabilities of each option word after a numeric-calibration prompt.

For an option word t, π_t is the sum of the model's probabilities of its
common tokenizations (:func:`word_variants`: as written, lower-case and
capitalised, each with and without a leading space). Every variant is scored
as a full continuation (:func:`folkscope.readout.score_options`), i.e. the
product of its tokens' next-token probabilities, so words spanning several
tokens are never reduced to their first token. Variants are distinct token
sequences, hence disjoint events, and their probabilities add up.

Caveat (as in the paper): the probability of a full continuation does not
require the word to end there, e.g. ``" 12"`` also covers ``" 123"``; options
of one problem never extend one another, so options stay disjoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from folkscope.engine import Engine, word_variants
from folkscope.engine.requests import Prompt
from folkscope.numeric.problems import NumericProblem
from folkscope.prompting import numeric_problem_prompt
from folkscope.readout import score_options

__all__ = ["PROBABILITY_COLUMNS", "engine_prompt", "score_problems", "word_variants"]

#: columns of the tidy table :func:`score_problems` returns
PROBABILITY_COLUMNS = (
    "problem_id",
    "position",
    "option",
    "count",
    "ideal_prob",
    "model_prob",
    "n_variants",
    "min_tokens",
)

#: requests sent to the engine per call; the engine caches each answer, so an
#: interrupted run resumes from the last finished chunk
_CHUNK = 512


def engine_prompt(problem: NumericProblem, *, chat: bool) -> Prompt:
    """The prompt of a problem, from the prompt layer: the scenario text, or (``chat``) the
    calibration instruction as the user turn with the scenario as assistant prefill."""
    return numeric_problem_prompt(problem.text, instruction=problem.instruction if chat else None)


def score_problems(
    engine: Engine,
    problems: Sequence[NumericProblem],
    *,
    chat: bool = False,
    variants: Callable[[str], Sequence[str]] = word_variants,
) -> pd.DataFrame:
    """Probability of every option of every problem, as a tidy table.

    Parameters
    ----------
    engine : Engine
        Any backend; answers are cached and reused by the engine.
    problems : sequence of NumericProblem
    chat : bool, default False
        Chat form (instruction user turn, scenario as assistant prefill).
    variants : callable, default :func:`word_variants`
        Tokenization variants of one word, summed into its probability.

    Returns
    -------
    pandas.DataFrame
        One row per (problem, option), columns :data:`PROBABILITY_COLUMNS`:
        ``position`` (0 = listed first), ``count`` (weight in the context),
        ``ideal_prob`` (P), ``model_prob`` (π, raw, not renormalised; NaN
        when a web backend could not score the option's variants and they
        could matter, see :meth:`~folkscope.engine.VariantSet.merge_probs`;
        the analyses then leave the problem out and count it),
        ``n_variants`` (tokenizations summed) and ``min_tokens`` (fewest
        tokens among them; > 1 means the word is multi-token for this model).
    """
    prompts = [engine_prompt(p, chat=chat) for p in problems]
    scored = score_options(
        engine,
        prompts,
        [p.options for p in problems],
        variants=variants,
        unit="problems",
        description="scoring",
        chunk=_CHUNK,
    )
    rows: dict[str, list[object]] = {c: [] for c in PROBABILITY_COLUMNS}
    for problem, options in zip(problems, scored):
        for j, option in enumerate(problem.options):
            rows["problem_id"].append(problem.id)
            rows["position"].append(j)
            rows["option"].append(option)
            rows["count"].append(problem.counts[j])
            rows["ideal_prob"].append(problem.ideal[j])
            rows["model_prob"].append(float(options.probs[j]))
            rows["n_variants"].append(int(options.n_variants[j]))
            rows["min_tokens"].append(int(options.min_tokens[j]))
    return pd.DataFrame(rows, columns=list(PROBABILITY_COLUMNS))
