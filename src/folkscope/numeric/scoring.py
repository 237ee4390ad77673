"""Model probabilities of each option word after a numeric-calibration prompt.

For an option word t, π_t is the sum of the model's probabilities of its
common tokenizations (:func:`word_variants`: as written, lower-case and
capitalised, each with and without a leading space). Every variant is scored
as a full continuation through :meth:`folkscope.engine.Engine.score`, i.e. the
product of its tokens' next-token probabilities, so words spanning several
tokens are never reduced to their first token. Variants are distinct token
sequences, hence disjoint events, and their probabilities add up.

Caveat (as in the paper): the probability of a full continuation does not
require the word to end there, e.g. ``" 12"`` also covers ``" 123"``; options
of one problem never extend one another, so options stay disjoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from folkscope.engine import ChatPrompt, Engine, Message, ScoreRequest, expand_variants
from folkscope.engine.requests import Prompt as EnginePrompt
from folkscope.numeric.problems import NumericProblem
from folkscope.prompting import numeric_problem_prompt

__all__ = ["PROBABILITY_COLUMNS", "engine_prompt", "score_problems", "word_variants"]

#: columns of the tidy table :func:`score_problems` returns
PROBABILITY_COLUMNS = ("problem_id", "position", "option", "count", "ideal_prob", "model_prob",
                       "n_variants", "min_tokens")

#: requests sent to the engine per call; the engine caches each answer, so an
#: interrupted run resumes from the last finished chunk
_CHUNK = 512


def word_variants(word: str) -> tuple[str, ...]:
    """Common tokenizations of an option word: as written, lower-case, capitalised, ± leading space.

    Examples
    --------
    >>> word_variants("red")
    ('red', ' red', 'Red', ' Red')
    >>> word_variants("42")
    ('42', ' 42')
    """
    base = word.strip()
    forms = dict.fromkeys([base, base.lower(), base[:1].upper() + base[1:]])
    return tuple(dict.fromkeys(v for f in forms for v in (f, " " + f)))


def engine_prompt(problem: NumericProblem, *, chat: bool) -> EnginePrompt:
    """The engine prompt of a problem: the scenario text, or (``chat``) the
    calibration instruction as the user turn with the scenario as assistant prefill."""
    prompt = numeric_problem_prompt(problem.text, instruction=problem.instruction if chat else None)
    if not prompt.is_chat:
        return str(prompt.text)
    return ChatPrompt(tuple(Message(m.role, m.content) for m in prompt.messages or ()),
                      prefill=prompt.prefill)


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
    sets = [expand_variants(p.options, variants=variants) for p in problems]
    requests = [ScoreRequest(engine_prompt(p, chat=chat), vs.tokens)
                for p, vs in zip(problems, sets)]
    results = []
    for start in range(0, len(requests), _CHUNK):
        chunk = requests[start:start + _CHUNK]
        part = "" if len(requests) <= _CHUNK else f" ({start + 1}-{start + len(chunk)} of {len(requests)})"
        results.extend(engine.score(chunk, unit="problems", description=f"scoring{part}"))
    rows: dict[str, list[object]] = {c: [] for c in PROBABILITY_COLUMNS}
    for problem, vs, res in zip(problems, sets, results):
        probs = vs.merge_probs(res.logprobs, bound=res.bound)
        owner = np.asarray(vs.owner)
        n_tok = np.asarray(res.num_tokens)
        for j, option in enumerate(problem.options):
            rows["problem_id"].append(problem.id)
            rows["position"].append(j)
            rows["option"].append(option)
            rows["count"].append(problem.counts[j])
            rows["ideal_prob"].append(problem.ideal[j])
            rows["model_prob"].append(float(probs[j]))
            rows["n_variants"].append(int((owner == j).sum()))
            rows["min_tokens"].append(int(n_tok[owner == j].min()))
    return pd.DataFrame(rows, columns=list(PROBABILITY_COLUMNS))
