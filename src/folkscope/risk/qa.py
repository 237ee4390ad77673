"""folktexts' question objects: :class:`MultipleChoiceQA`, :class:`DirectNumericQA`, :class:`ChainOfThoughtQA`.

In folktexts a question is an object a task holds (``task.question``) and a
classifier asks. In folkscope a task carries its question as data
(``question``, ``choices``, ``numeric_question``) and the prompt
configuration picks the mode; these classes are folktexts' view of the same
facts, built from a task (:meth:`QAInterface.from_task`) or by hand, and
turned back into folkscope's pieces: :meth:`QAInterface.apply_to` gives the
task asking this question, :meth:`QAInterface.prompt_config` the prompt
mode. Their texts come from the prompt layer (:mod:`folkscope.prompting`),
which renders every prompt, so ``get_question_prompt()`` is the question
block of the prompts folkscope sends.

Reading an answer (:meth:`get_answer_from_model_output`) follows folkscope's
readout, which differs from folktexts' in two documented ways: a letter's
tokenizations are summed (folktexts keeps the spelling with most mass), and
a chain-of-thought answer without a probability is NaN (folktexts: 0.5).

Examples
--------
>>> from folkscope.tasks import get_task
>>> qa = MultipleChoiceQA.from_task(get_task("ACSIncome"))
>>> [c.text for c in qa.choices], qa.answer_keys
(['Below $50,000', 'Above $50,000'], ('A', 'B'))
>>> len(list(MultipleChoiceQA.create_answer_keys_permutations(qa)))
2
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from folkscope.errors import ConfigError
from folkscope.prompting import PromptConfig
from folkscope.prompting.orderings import LETTERS, option_text
from folkscope.prompting.templates import (
    ANSWER_PREFILL,
    CHAT_PREFILLS,
    CHAT_SYSTEM_PROMPTS,
    COT_INSTRUCTION,
    NUMERIC_PREFILL,
    QUESTION_HEADER,
)
from folkscope.readout import parse_probability
from folkscope.tasks import Choice as TaskChoice
from folkscope.tasks.task import TaskMetadata

__all__ = ["ChainOfThoughtQA", "Choice", "DirectNumericQA", "MultipleChoiceQA", "QAInterface"]

#: spellings of a token that starts a word, by tokenizer family (GPT-2's Ġ, SentencePiece's ▁)
_WORD_STARTS = ("", " ", "\u0120", "\u2581")


@dataclass(frozen=True)
class Choice:
    """An answer option: its text, the data value it stands for and an optional number (folktexts' ``Choice``).

    The option with the highest :meth:`get_numeric_value` is the positive
    answer of a binary question.
    """

    text: str
    data_value: object
    numeric_value: float | None = None

    def get_numeric_value(self) -> float:
        """``numeric_value``, else the data value as a number."""
        return float(self.numeric_value if self.numeric_value is not None else self.data_value)  # type: ignore[arg-type]


@dataclass(frozen=True)
class QAInterface:
    """What every question kind shares: the target column and the question text."""

    column: str
    text: str
    num_forward_passes: int = 1

    #: the prompt mode (folkscope's PromptConfig.mode) this question asks in
    mode: ClassVar[str] = "multiple_choice"
    default_temperature: ClassVar[float] = 0.0

    @property
    def default_system_prompt(self) -> str | None:
        """The chat system prompt used unless one is given (folktexts' default for this mode)."""
        return CHAT_SYSTEM_PROMPTS[self.mode]

    @property
    def default_chat_prompt(self) -> str | None:
        """The assistant prefill of chat prompts unless one is given (folktexts' default for this mode)."""
        return CHAT_PREFILLS[self.mode] or None

    def get_answer_prefix(self) -> str:
        """The line the prompt ends on, which the model continues."""
        return ANSWER_PREFILL

    def get_question_prompt(self, with_answer_prefill: bool = True) -> str:
        """The question block of the prompt (with the answer prefill unless it goes to a chat's assistant turn)."""
        prompt = f"{QUESTION_HEADER}{self.text}"
        return f"{prompt}\n{self.get_answer_prefix()}" if with_answer_prefill else prompt

    def prompt_config(self, base: PromptConfig | None = None) -> PromptConfig:
        """``base`` (default: the paper's) asking in this question's mode."""
        return replace(
            base or PromptConfig(),
            numeric_risk_prompting=self.mode == "numeric",
            cot_prompting=self.mode == "cot",
            enable_thinking=bool(getattr(self, "enable_thinking", False)),
        )

    def apply_to(self, task: TaskMetadata) -> TaskMetadata:
        """``task`` asking this question (folktexts' ``task.set_question``; tasks here are immutable, so a new one)."""
        if self.column not in (task.target_name, task.target.column):
            raise ConfigError(
                f"this question is about {self.column}, but task {task.name}'s target is {task.target_name}",
                parameter="question",
                value=self.column,
            )
        field_name = "question" if self.mode == "multiple_choice" else "numeric_question"
        return replace(task, **{field_name: self.text})

    @classmethod
    def from_task(cls, task: TaskMetadata) -> Any:
        """The question ``task`` asks in this mode."""
        raise NotImplementedError  # each kind reads its own fields

    def get_answer_from_model_output(self, *args: Any, **kwargs: Any) -> float:
        raise NotImplementedError  # each kind reads its own output


def _numeric_text(task: TaskMetadata) -> str:
    if not task.numeric_question:
        raise ConfigError(f"task {task.name} has no numeric question", parameter="task", value=task.name)
    return task.numeric_question


@dataclass(frozen=True)
class DirectNumericQA(QAInterface):
    """A question answered with a probability: the prompt ends on ``"Answer (between 0 and 1): 0."``."""

    num_forward_passes: int = 2
    answer_probability: bool = True
    mode: ClassVar[str] = "numeric"

    def get_answer_prefix(self) -> str:
        return NUMERIC_PREFILL if self.answer_probability else "Answer: "

    @classmethod
    def from_task(cls, task: TaskMetadata) -> DirectNumericQA:
        return cls(column=task.target_name, text=_numeric_text(task))

    def get_answer_from_model_output(self, last_token_probs: np.ndarray, tokenizer_vocab: Mapping[str, int]) -> float:
        """The most likely digit at each forward pass, read as ``0.d1d2`` (folkscope's greedy readout).

        ``last_token_probs`` has one row of next-token probabilities per
        pass. Only the ten single digits count (folktexts also lets a
        multi-digit token or ``"."`` win).
        """
        probs = np.atleast_2d(np.asarray(last_token_probs, dtype=float))
        ids = [tokenizer_vocab.get(str(d)) for d in range(10)]
        if any(i is None or i >= probs.shape[1] for i in ids):
            raise ConfigError(
                "the tokenizer's vocabulary lacks a single-digit token for 0-9", parameter="tokenizer_vocab"
            )
        digits = "".join(str(int(np.argmax(row[ids]))) for row in probs[: self.num_forward_passes])
        return float(f"0.{digits}") if self.answer_probability else float(digits)


@dataclass(frozen=True)
class MultipleChoiceQA(QAInterface):
    """A question with lettered answer options; the risk score is the positive option's probability."""

    choices: tuple[Choice, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.choices:
            raise ConfigError("a multiple-choice question needs choices", parameter="choices")
        if len(self.choices) > len(LETTERS):
            raise ConfigError(
                f"at most {len(LETTERS)} answer options can be lettered, got {len(self.choices)}", parameter="choices"
            )

    @classmethod
    def from_task(cls, task: TaskMetadata) -> MultipleChoiceQA:
        if not task.choices:
            raise ConfigError(f"task {task.name} has no answer options", parameter="task", value=task.name)
        return cls(
            column=task.target_name, text=task.question, choices=tuple(Choice(c.text, c.label) for c in task.choices)
        )

    @classmethod
    def create_question_from_value_map(
        cls, column: str, value_map: Mapping[Any, str], attribute: str, **kwargs: Any
    ) -> MultipleChoiceQA:
        """One option per value of ``value_map``; the text defaults to "What is this person's <attribute>?"."""
        kwargs.setdefault("text", f"What is this person's {attribute}?")
        return cls(
            column=column, choices=tuple(Choice(text, str(value)) for value, text in value_map.items()), **kwargs
        )

    @classmethod
    def create_answer_keys_permutations(cls, question: MultipleChoiceQA) -> Iterator[MultipleChoiceQA]:
        """The question under every order of its options (order-bias correction averages over them)."""
        for order in itertools.permutations(question.choices):
            yield replace(question, choices=order)

    @property
    def answer_keys(self) -> tuple[str, ...]:
        return LETTERS[: len(self.choices)]

    @property
    def key_to_choice(self) -> dict[str, Choice]:
        return dict(zip(self.answer_keys, self.choices))

    @property
    def choice_to_key(self) -> dict[Choice, str]:
        return {choice: key for key, choice in self.key_to_choice.items()}

    def get_value_to_text_map(self) -> dict[object, str]:
        return {c.data_value: c.text for c in self.choices}

    def get_answer_key_from_value(self, value: object) -> str | None:
        """The letter of the option standing for ``value`` (None: no such option)."""
        return next((key for key, c in self.key_to_choice.items() if c.data_value == value), None)

    def get_answer_from_text(self, text: str) -> Choice | None:
        """The option a letter names (None: not a letter of this question)."""
        return self.key_to_choice.get(text.strip().upper())

    def get_question_prompt(self, with_answer_prefill: bool = True) -> str:
        options = "".join(f"\n{key}. {option_text(c.text)}" for key, c in self.key_to_choice.items())
        prompt = f"{QUESTION_HEADER}{self.text}{options}"
        return f"{prompt}\n{self.get_answer_prefix()}" if with_answer_prefill else prompt

    def positive_choice(self) -> Choice:
        """The option whose probability is the risk score: the highest numeric value."""
        return max(self.choices, key=lambda c: c.get_numeric_value())

    def apply_to(self, task: TaskMetadata) -> TaskMetadata:
        if len(self.choices) != 2:
            raise ConfigError(
                f"folkscope scores binary tasks; this question has {len(self.choices)} options", parameter="choices"
            )
        base = super().apply_to(task)
        positive = self.positive_choice()
        return replace(base, choices=tuple(TaskChoice(c.text, int(c is positive)) for c in self.choices))

    def get_answer_from_model_output(self, last_token_probs: np.ndarray, tokenizer_vocab: Mapping[str, int]) -> float:
        """The positive option's probability among the answer letters (first forward pass).

        Each letter's probability sums its tokenizations in the vocabulary
        (``"A"``, ``" A"``, ``"ĠA"``, ``"▁A"``); the letters are renormalised.
        A binary question gives the positive option's share; more options
        give the expected numeric value, as in folktexts. No mass on any
        letter gives NaN (folktexts: uniform).
        """
        probs = np.atleast_2d(np.asarray(last_token_probs, dtype=float))[0]
        mass = {}
        for key, choice in self.key_to_choice.items():
            ids = {tokenizer_vocab[s + key] for s in _WORD_STARTS if s + key in tokenizer_vocab}
            mass[choice] = float(sum(probs[i] for i in ids if i < len(probs)))
        total = sum(mass.values())
        if not total > 0:
            return float("nan")
        if len(self.choices) == 2:
            return mass[self.positive_choice()] / total
        return sum(c.get_numeric_value() * m for c, m in mass.items()) / total


@dataclass(frozen=True)
class ChainOfThoughtQA(QAInterface):
    """A question the model reasons about, ending in ``Probability: X%`` (read from the generated text)."""

    num_forward_passes: int = -1
    max_new_tokens: int = 8000
    enable_thinking: bool = False
    mode: ClassVar[str] = "cot"

    @property
    def default_temperature(self) -> float:  # type: ignore[override]
        """Greedy, except 1.0 in thinking mode (thinking models should not run greedy)."""
        return 1.0 if self.enable_thinking else 0.0

    @classmethod
    def from_task(cls, task: TaskMetadata) -> ChainOfThoughtQA:
        return cls(column=task.target_name, text=_numeric_text(task))

    def get_question_prompt(self, with_answer_prefill: bool = True) -> str:
        """The question and the instruction to reason and end with a probability (there is no prefill)."""
        return f"{QUESTION_HEADER}{self.text}\n\n{COT_INSTRUCTION}"

    @staticmethod
    def extract_probability_from_text(generated_text: str) -> float | None:
        """The probability the text ends with (``Probability: 80%``, ``0.8``, ...), or None (folkscope's parser)."""
        return parse_probability(generated_text, strip_think=True)

    def get_answer_from_model_output(
        self, generated_text: str, tokenizer_vocab: Mapping[str, int] | None = None
    ) -> float:
        """The probability in the generated text; NaN when there is none (never 0.5, which folktexts returns)."""
        value = parse_probability(generated_text, strip_think=self.enable_thinking)
        return float("nan") if value is None else value
