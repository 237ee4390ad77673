"""The backend contract: what every backend implements, and nothing more.

A backend answers the four request kinds. Each method takes the requests
and, optionally, which of them are already answered (``done``, from the
result cache), and yields *batches* of ``(index, result)`` pairs as they
complete, so the engine can persist each batch before the next one starts.
A backend plans its work over all requests, done or not, and skips batches
whose requests are all done: a resumed run rebuilds the batches of the
first run and computes only what is missing.

Backends are looked up by name in :mod:`folkscope.engine.backends`, and
parts never import one directly.

A backend that leaves candidates it cannot score as NaN (a web API whose
top log-probabilities leave one out) says so with a class attribute
``marks_unscored = True``; from any other backend a NaN in the result cache
is implausible and recomputed (:mod:`folkscope.engine.plausibility`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    NextTokenRequest,
    PrefixGroupRequest,
    Prompt,
    ScoreRequest,
)
from folkscope.engine.tokens import TokenizerLike
from folkscope.errors import ConfigError

__all__ = ["Backend", "BackendStats", "Batches", "render_prompt", "stop_at"]

#: What a backend method yields: one list of ``(request index, result)`` per completed batch.
Batches = Iterator[list[tuple[int, Any]]]


@dataclass
class BackendStats:
    """Counters a backend keeps while it works (for benchmarks and progress).

    Attributes
    ----------
    requests : int
        Requests answered (computed, not served from a cache).
    batches : int
        Batches run (an out-of-memory retry counts again).
    forward_passes : int
    tokens_run : int
        Tokens fed through the model, padding excluded.
    tokens_padded : int
        Tokens fed including padding.
    logical_tokens : int
        Tokens of all sequences as written (prompt plus candidate tokens
        scored), i.e. what a path without any prefix reuse would run.
    generated_tokens : int
    reused_prefix_tokens : int
        Tokens not run because a key/value cache kept from an earlier batch
        already held them (a task description shared by every batch).
    oom_backoffs : int
        Times the batch budget was halved after running out of memory.
    """

    requests: int = 0
    batches: int = 0
    forward_passes: int = 0
    tokens_run: int = 0
    tokens_padded: int = 0
    logical_tokens: int = 0
    generated_tokens: int = 0
    reused_prefix_tokens: int = 0
    oom_backoffs: int = 0

    @property
    def unique_token_ratio(self) -> float:
        """``tokens_run / logical_tokens`` (NaN before any work)."""
        return self.tokens_run / self.logical_tokens if self.logical_tokens else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "unique_token_ratio": self.unique_token_ratio}


@runtime_checkable
class Backend(Protocol):
    """What the engine needs from a backend.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"transformers"`` or ``"fake"``.
    stats : BackendStats
    """

    name: str
    stats: BackendStats

    @property
    def tokenizer(self) -> TokenizerLike:
        """The tokenizer (for chat templates and prompt-length checks)."""
        ...

    def identity(self) -> dict[str, Any]:
        """Model identity and every setting that changes the numbers (keys the result cache)."""
        ...

    def render(self, prompt: Prompt) -> str:
        """The text a prompt becomes (chat template applied, prefill appended)."""
        ...

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        """Prompt lengths in tokens, as the backend would feed them."""
        ...

    def is_single_token(self, text: str) -> bool:
        """Whether ``text`` is exactly one token (usable in a NextTokenRequest)."""
        ...

    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        """Yield batches of ``(index, ScoreResult)``."""
        ...

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        """Yield batches of ``(index, PrefixGroupResult)``."""
        ...

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        """Yield batches of ``(index, NextTokenResult)``."""
        ...

    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        """Yield batches of ``(index, GenerateResult)``."""
        ...

    def close(self) -> None:
        """Release the model and its memory."""
        ...


def render_prompt(tokenizer: TokenizerLike, prompt: Prompt, *, model: str = "this model") -> str:
    """Render a prompt to text: plain text as is, chat messages through the chat template.

    The template is applied with ``add_generation_prompt=True`` and the
    prefill appended after it.

    Raises
    ------
    ConfigError
        The tokenizer has no chat template.
    """
    if isinstance(prompt, str):
        return prompt
    if not isinstance(prompt, ChatPrompt):
        raise ConfigError(
            f"a prompt must be a str or a ChatPrompt, got {type(prompt).__name__}", parameter="prompt", value=prompt
        )
    conversation = [{"role": m.role, "content": m.content} for m in prompt.messages]
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(
            f"{model} has no chat template, so chat prompts cannot be rendered; pass plain-text prompts "
            "or use an instruction-tuned model",
            parameter="prompt",
            value=prompt,
        )
    options = {} if prompt.enable_thinking is None else {"enable_thinking": prompt.enable_thinking}
    text = tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True, **options)
    return str(text) + prompt.prefill


def stop_at(text: str, stops: Sequence[str]) -> int | None:
    """Index where the earliest stop string starts in ``text``, or None.

    >>> stop_at("4 because 2+2", ["because", "+"])
    2
    """
    hits = [i for i in (text.find(s) for s in stops) if i >= 0]
    return min(hits) if hits else None
