"""Plain data that leaves the prompt layer: rendered rows, cut where they stop being shared.

The prompt a row becomes is the engine's own request prompt (one type at the
boundary, :data:`folkscope.engine.requests.Prompt`): a complete text
(``str``), or a :class:`~folkscope.engine.ChatPrompt` whose messages the
backend renders through the tokenizer's own chat template before appending
the assistant prefill, so the model continues the assistant's turn. Only
this layer builds them; parts pass them on.

:class:`RenderedPrompt` is one row rendered for every answer ordering, cut
where prompts stop being shared::

    full_text(o) = prefix + examples[o] + row_text + options[o] + prefill + custom_suffix
                   ~~~~~~                                                shared by every row and ordering
                   ~~~~~~~~~~~~~~~~~~~~~                                 shared by every row of ordering o
                                                                         (reused few-shot examples)
                   ~~~~~~   +   ~~~~~~~~                                 shared by every ordering of the row
                                                                         (zero-shot: examples are empty)

``row_text`` ends with the question line, so everything before the options
is shared by all orderings of a row (zero-shot); few-shot examples follow
the ordering of the final question, so their letters always mean the same
choice within one prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from folkscope.engine.requests import ChatPrompt, Message, Prompt
from folkscope.errors import ConfigError
from folkscope.prompting.config import PromptConfig
from folkscope.prompting.orderings import AnswerOrdering

__all__ = ["RenderedPrompt"]


def user_turn(body: str, prefill: str, custom_suffix: str, config: PromptConfig) -> str:
    """A chat user turn from the text before the answer prefill (see :meth:`RenderedPrompt.user_text`)."""
    tail = f"\n\n{prefill}" if prefill and not config.show_question else ""
    return body.rstrip("\n") + tail + custom_suffix


@dataclass(frozen=True)
class RenderedPrompt:
    """One row's prompt in every answer ordering, split at the points where it stops being shared.

    Attributes
    ----------
    row_id : object
        The row's id (index value of the data).
    prefix : str
        Shared by every row and ordering: task description and custom prefix.
    row_text : str
        This row's feature block and question line (the same in every ordering).
    options : tuple of str
        Per ordering slot: the lettered options, the custom suffix line.
        Numeric and chain-of-thought prompts have one slot.
    prefill : str
        The answer lead-in the text ends on (``"Answer:"``).
    orderings : tuple of AnswerOrdering
        The choice orderings (empty for numeric and chain-of-thought).
    examples : tuple of str
        Per ordering slot, the few-shot block placed between ``prefix`` and
        ``row_text``; empty when zero-shot.
    examples_shared : bool
        The few-shot block is the same for every row (reused examples).
    label : int or None
        The row's true label, when known.
    mode : str
        ``"multiple_choice"``, ``"numeric"`` or ``"cot"``.
    custom_suffix : str
        The ``custom_prompt_suffix`` variation. As in folktexts it follows the
        answer prefill in a plain-text prompt (the prompt ends on it), and
        ends the user turn in chat delivery.
    """

    row_id: Any
    prefix: str
    row_text: str
    options: tuple[str, ...]
    prefill: str
    orderings: tuple[AnswerOrdering, ...] = ()
    examples: tuple[str, ...] = ()
    examples_shared: bool = False
    label: int | None = None
    mode: str = "multiple_choice"
    config: PromptConfig = field(default_factory=PromptConfig, compare=False, repr=False)
    custom_suffix: str = ""

    @property
    def n_slots(self) -> int:
        """How many prompts this row yields (orderings, or 1)."""
        return len(self.options)

    def _slot(self, ordering: int | AnswerOrdering | None) -> int:
        index = 0 if ordering is None else ordering.index if isinstance(ordering, AnswerOrdering) else int(ordering)
        if not 0 <= index < self.n_slots:
            raise ConfigError(
                f"ordering {index} does not exist; this prompt has {self.n_slots}", parameter="ordering", value=index
            )
        return index

    @property
    def suffixes(self) -> tuple[str, ...]:
        """Per ordering: everything after the row text (options, prefill, custom suffix)."""
        return tuple(opt + self.prefill + self.custom_suffix for opt in self.options)

    def suffix(self, ordering: int | AnswerOrdering | None = None) -> str:
        return self.suffixes[self._slot(ordering)]

    def full_text(self, ordering: int | AnswerOrdering | None = None) -> str:
        """The complete plain-text prompt for one ordering (default: the task's own order)."""
        o = self._slot(ordering)
        examples = self.examples[o] if self.examples else ""
        return self.prefix + examples + self.row_text + self.options[o] + self.prefill + self.custom_suffix

    def user_text(self, ordering: int | AnswerOrdering | None = None) -> str:
        """The text of the user turn in chat delivery: everything before the prefill, trailing newlines removed.

        As folktexts writes it: the custom suffix follows; without the
        question (``show_question=False``) the answer prefill stays in the
        user turn too (``"...\\n\\nAnswer:"``).
        """
        o = self._slot(ordering)
        examples = self.examples[o] if self.examples else ""
        return user_turn(
            self.prefix + examples + self.row_text + self.options[o], self.prefill, self.custom_suffix, self.config
        )

    @property
    def row_shared_text(self) -> str:
        """The longest text every ordering of this row starts with."""
        return self.prefix if self.examples else self.prefix + self.row_text

    def ordering_split(self) -> tuple[str, tuple[str, ...]]:
        """``(shared, rests)``: the text every ordering starts with, and each ordering's remainder.

        ``shared + rests[o] == full_text(o)``; ``shared`` ends at a line break,
        a clean token boundary for scoring all orderings as one prefix group.
        """
        shared = self.row_shared_text
        return shared, tuple(self.full_text(o)[len(shared) :] for o in range(self.n_slots))

    def rows_shared_text(self, ordering: int | AnswerOrdering | None = None) -> str:
        """The text every row starts with, in the given ordering."""
        o = self._slot(ordering)
        return self.prefix + self.examples[o] if self.examples and self.examples_shared else self.prefix

    def answer(self, ordering: int | AnswerOrdering | None = None) -> str | None:
        """Letter of the true label in that ordering (None without a label or orderings)."""
        if self.label is None or not self.orderings:
            return None
        return self.orderings[self._slot(ordering)].letter_of(self.label)

    def to_prompt(self, ordering: int | AnswerOrdering | None = None) -> Prompt:
        """The engine prompt for one ordering: the full text, or a :class:`ChatPrompt` (messages and prefill).

        Examples
        --------
        >>> from folkscope.data import load_bundled
        >>> from folkscope.prompting import PromptConfig, render_prompts
        >>> rows = load_bundled("acs-income-10").iloc[:1]
        >>> chat = render_prompts("ACSIncome", rows, PromptConfig(use_chat_template=True))[0].to_prompt()
        >>> [m.role for m in chat.messages], chat.prefill
        (['system', 'user'], 'If had to select one of the options, my answer would be')

        The system message and the prefill are folktexts' defaults for the
        mode unless set (:attr:`PromptConfig.chat_system_prompt`,
        :attr:`PromptConfig.chat_prefill`).
        """
        cfg = self.config
        if not cfg.is_chat:
            return self.full_text(ordering)
        messages = []
        if cfg.chat_system_prompt is not None:
            messages.append(Message("system", cfg.chat_system_prompt))
        messages.append(Message("user", self.user_text(ordering)))
        return ChatPrompt(tuple(messages), prefill=cfg.chat_prefill, enable_thinking=cfg.enable_thinking)
