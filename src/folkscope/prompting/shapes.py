"""Prompt shapes of the other parts: epidemiology QA and likelihood prompts, numeric-calibration problems.

These reuse the survey prompts' pieces (lettered options, orderings, the
``Answer:`` prefill, :class:`RenderedPrompt`'s sharing split) so that every
part's prompts are built the same way. Their parts' own data files supply
the questions, answers, scenarios and instructions.

- :func:`qa_prompt`: a question with lettered answers, in every ordering
  (all permutations up to ``max_orderings``, default 120, then seeded random
  ones), scored like the survey prompts.
- :func:`likelihood_prompt`: "What is the probability that ...?" with the 22
  probability bins of :data:`LIKELIHOOD_BINS` (A. 0%, B. 0-5%, ..., V. 100%).
- :func:`numeric_problem_prompt`: a numeric-calibration scenario the model
  continues (base models), optionally after an instruction turn (chat).
- :func:`matching_pennies_prompt`: one round of the numeric part's
  randomness game, the transcript of the model's earlier calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from folkscope.engine.requests import ChatPrompt, Message, Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.config import PromptConfig
from folkscope.prompting.orderings import LETTERS, answer_orderings
from folkscope.prompting.templates import ANSWER_PREFILL, QUESTION_HEADER
from folkscope.prompting.types import RenderedPrompt

__all__ = [
    "LIKELIHOOD_BINS",
    "PENNY_FACES",
    "LikelihoodBin",
    "likelihood_prompt",
    "matching_pennies_prompt",
    "numeric_problem_prompt",
    "qa_prompt",
]

#: the two calls of the matching-pennies game, in move order (move 1 is the first)
PENNY_FACES = ("Heads", "Tails")
_PENNIES_INTRO = (
    "We are playing matching pennies for {rounds} rounds. Each round you call Heads or "
    "Tails; your opponent tries to predict your call from your earlier calls and wins if "
    "it guesses right. Be as unpredictable as you can."
)


@dataclass(frozen=True)
class LikelihoodBin:
    """One answer of a likelihood prompt: its letter, text, range and the value it maps to."""

    letter: str
    text: str
    low: float
    high: float

    @property
    def value(self) -> float:
        """The probability a chosen bin stands for: its midpoint (0 and 1 for the point bins)."""
        return (self.low + self.high) / 2.0


def _make_bins() -> tuple[LikelihoodBin, ...]:
    bins = [LikelihoodBin(LETTERS[0], "0%", 0.0, 0.0)]
    for i in range(20):
        lo, hi = 5 * i, 5 * (i + 1)
        bins.append(LikelihoodBin(LETTERS[i + 1], f"{lo}-{hi}%", lo / 100.0, hi / 100.0))
    bins.append(LikelihoodBin(LETTERS[21], "100%", 1.0, 1.0))
    return tuple(bins)


#: The 22 answers of a likelihood prompt (A. 0%, B. 0-5%, ..., U. 95-100%, V. 100%).
LIKELIHOOD_BINS = _make_bins()


def qa_prompt(
    question: str,
    answers: Sequence[str],
    *,
    context: str | None = None,
    correct_order_bias: bool = True,
    max_orderings: int | None = 120,
    seed: int = 0,
    config: PromptConfig | None = None,
    row_id: object = None,
) -> RenderedPrompt:
    """A question with lettered answers, rendered in every ordering of the answers.

    The answers' labels are their positions in ``answers``; each ordering's
    :class:`~folkscope.prompting.AnswerOrdering` maps letters back to them.

    Examples
    --------
    >>> p = qa_prompt("Has a person aged 25 ever used marijuana?", ["Yes", "No"])
    >>> print(p.full_text(1))
    Question: Has a person aged 25 ever used marijuana?
    A. No.
    B. Yes.
    Answer:
    """
    if not question.strip():
        raise ConfigError("a QA prompt needs a question", parameter="question")
    if len(answers) < 2:
        raise ConfigError(f"a QA prompt needs at least two answers, got {len(answers)}", parameter="answers")
    orderings = answer_orderings(
        list(answers), scheme="all" if correct_order_bias else "identity", max_orderings=max_orderings, seed=seed
    )
    return RenderedPrompt(
        row_id=row_id,
        prefix=f"{context}\n\n" if context else "",
        row_text=f"{QUESTION_HEADER}{question}\n",
        options=tuple(o.options_block() for o in orderings),
        prefill=ANSWER_PREFILL,
        orderings=orderings,
        mode="multiple_choice",
        config=config if config is not None else PromptConfig(),
    )


def likelihood_prompt(
    question: str, *, context: str | None = None, config: PromptConfig | None = None
) -> RenderedPrompt:
    """A "What is the probability that ...?" question with the 22 bins of :data:`LIKELIHOOD_BINS`, in fixed order.

    Examples
    --------
    >>> p = likelihood_prompt("What is the probability that a person aged 25 has ever used marijuana?")
    >>> p.full_text().splitlines()[1:3], p.full_text().splitlines()[-2:]
    (['A. 0%', 'B. 0-5%'], ['V. 100%', 'Answer:'])
    """
    if not question.strip():
        raise ConfigError("a likelihood prompt needs a question", parameter="question")
    options = "".join(f"{b.letter}. {b.text}\n" for b in LIKELIHOOD_BINS)
    orderings = answer_orderings([b.text for b in LIKELIHOOD_BINS], scheme="identity")
    return RenderedPrompt(
        row_id=None,
        prefix=f"{context}\n\n" if context else "",
        row_text=f"{QUESTION_HEADER}{question}\n",
        options=(options,),
        prefill=ANSWER_PREFILL,
        orderings=orderings,
        mode="multiple_choice",
        config=config if config is not None else PromptConfig(),
    )


def numeric_problem_prompt(scenario: str, *, instruction: str | None = None) -> Prompt:
    """A numeric-calibration problem: the model's next token after ``scenario`` is scored.

    Without ``instruction`` (base models) the prompt is the scenario text.
    With it (instruction-tuned models) the instruction is the user turn and
    the scenario is the assistant prefill, so the model still continues the
    scenario itself.

    Examples
    --------
    >>> numeric_problem_prompt("A bag holds 17 red and 99 blue marbles. I draw one blindly; it is")[-5:]
    'it is'
    >>> numeric_problem_prompt("... it is", instruction="Answer with the colour only.").prefill
    '... it is'
    """
    if not scenario.strip():
        raise ConfigError("a numeric problem needs a scenario", parameter="scenario")
    if instruction is None:
        return scenario
    return ChatPrompt((Message("user", instruction),), prefill=scenario)


def matching_pennies_prompt(history: Sequence[int], *, rounds: int, chat: bool = False) -> Prompt:
    """The prompt of the next round of matching pennies: the rules, then the model's calls so far.

    ``history`` holds the earlier moves (1 = Heads, 0 = Tails). The prompt
    ends on ``"Round r:"`` so the next word is the model's call. With
    ``chat`` the rules are the user turn and the transcript is the assistant
    prefill.

    Examples
    --------
    >>> print(matching_pennies_prompt([1, 0], rounds=3).splitlines()[-3:])
    ['Round 1: Heads', 'Round 2: Tails', 'Round 3:']
    """
    lines = [f"Round {i + 1}: {PENNY_FACES[1 - int(m)]}" for i, m in enumerate(history)]
    lines.append(f"Round {len(history) + 1}:")
    transcript = "\n".join(lines)
    intro = _PENNIES_INTRO.format(rounds=rounds)
    if chat:
        return ChatPrompt((Message("user", intro),), prefill=transcript)
    return f"{intro}\n\n{transcript}"
