"""Plain data that leaves the prompt layer: chat messages, prompts, rendered rows.

:class:`Prompt` is what the engine receives, backend-neutral: either a
complete ``text``, or chat ``messages`` plus an assistant ``prefill`` that
the backend renders through the tokenizer's own chat template (then appends
the prefill, so the model continues the assistant's turn).

:class:`RenderedPrompt` is one row rendered for every answer ordering, cut
where prompts stop being shared::

    full_text(o) = prefix + examples[o] + row_text + options[o] + prefill
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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from folkscope.errors import ConfigError
from folkscope.prompting.config import PromptConfig
from folkscope.prompting.orderings import AnswerOrdering

__all__ = ["ChatMessage", "Prompt", "RenderedPrompt"]

_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class ChatMessage:
    """One chat turn."""

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ConfigError(f"chat role must be one of {', '.join(_ROLES)}, got {self.role!r}", parameter="role", value=self.role)
        if not isinstance(self.content, str):
            raise ConfigError(f"chat message content must be text, got {type(self.content).__name__}", parameter="content")

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Prompt:
    """A prompt as the engine takes it: text, or chat messages plus an assistant prefill.

    Exactly one of ``text`` and ``messages`` is set. For chat prompts the
    backend renders ``messages`` with the tokenizer's chat template
    (``add_generation_prompt=True``, passing ``enable_thinking``) and appends
    ``prefill``; :func:`folkscope.prompting.render_chat` does exactly that.

    Examples
    --------
    >>> Prompt(text="Answer:").is_chat
    False
    >>> p = Prompt(messages=(ChatMessage("user", "Hi"),), prefill="Answer:")
    >>> p.is_chat, p.plain_text()
    (True, 'Hi\\n\\nAnswer:')
    """

    text: str | None = None
    messages: tuple[ChatMessage, ...] | None = None
    prefill: str = ""
    enable_thinking: bool = False

    def __post_init__(self) -> None:
        if (self.text is None) == (self.messages is None):
            raise ConfigError("a prompt has either text or chat messages, exactly one of them", parameter="prompt")
        if self.messages is not None:
            msgs = tuple(m if isinstance(m, ChatMessage) else ChatMessage(**m) for m in self.messages)
            if not msgs:
                raise ConfigError("a chat prompt needs at least one message", parameter="messages")
            object.__setattr__(self, "messages", msgs)
        elif self.prefill:
            raise ConfigError("a text prompt already ends with its prefill; leave prefill empty", parameter="prefill")

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    def plain_text(self) -> str:
        """The prompt as text without any chat template (message contents, blank-line separated, then the prefill)."""
        if self.messages is None:
            return str(self.text)
        body = "\n\n".join(m.content for m in self.messages)
        return f"{body}\n\n{self.prefill}" if self.prefill else body

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"text": ...}`` or ``{"messages": [...], "prefill": ..., "enable_thinking": ...}``."""
        if self.messages is None:
            return {"text": self.text}
        return {
            "messages": [m.to_dict() for m in self.messages],
            "prefill": self.prefill,
            "enable_thinking": self.enable_thinking,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Prompt:
        if "messages" in data:
            return cls(
                messages=tuple(ChatMessage(**m) for m in data["messages"]),
                prefill=data.get("prefill", ""),
                enable_thinking=bool(data.get("enable_thinking", False)),
            )
        return cls(text=data["text"])


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

    @property
    def n_slots(self) -> int:
        """How many prompts this row yields (orderings, or 1)."""
        return len(self.options)

    def _slot(self, ordering: int | AnswerOrdering | None) -> int:
        index = 0 if ordering is None else ordering.index if isinstance(ordering, AnswerOrdering) else int(ordering)
        if not 0 <= index < self.n_slots:
            raise ConfigError(f"ordering {index} does not exist; this prompt has {self.n_slots}", parameter="ordering", value=index)
        return index

    @property
    def suffixes(self) -> tuple[str, ...]:
        """Per ordering: everything after the row text (options, custom suffix, prefill)."""
        return tuple(opt + self.prefill for opt in self.options)

    def suffix(self, ordering: int | AnswerOrdering | None = None) -> str:
        return self.suffixes[self._slot(ordering)]

    def full_text(self, ordering: int | AnswerOrdering | None = None) -> str:
        """The complete plain-text prompt for one ordering (default: the task's own order)."""
        o = self._slot(ordering)
        examples = self.examples[o] if self.examples else ""
        return self.prefix + examples + self.row_text + self.options[o] + self.prefill

    def user_text(self, ordering: int | AnswerOrdering | None = None) -> str:
        """The text of the user turn in chat delivery (everything before the prefill, trailing newlines removed)."""
        o = self._slot(ordering)
        examples = self.examples[o] if self.examples else ""
        return (self.prefix + examples + self.row_text + self.options[o]).rstrip("\n")

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
        """The engine's :class:`Prompt` for one ordering: text, or chat messages and prefill."""
        cfg = self.config
        if not cfg.is_chat:
            return Prompt(text=self.full_text(ordering))
        messages = []
        if cfg.system_prompt is not None:
            messages.append(ChatMessage("system", cfg.system_prompt))
        messages.append(ChatMessage("user", self.user_text(ordering)))
        prefill = cfg.chat_prompt if cfg.chat_prompt is not None else self.prefill
        return Prompt(messages=tuple(messages), prefill=prefill, enable_thinking=cfg.enable_thinking)
