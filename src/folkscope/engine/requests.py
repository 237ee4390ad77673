"""Frozen, backend-neutral request and response types: one pair per kind.

Why one module: these are the engine's boundary types, one frozen pair per
request kind plus the cache key they hash to; kept together so a new kind is
added in one place and every backend reads the same definitions.

=====================  =======================  ==========================================
request                response                 question asked of the model
=====================  =======================  ==========================================
:class:`ScoreRequest`  :class:`ScoreResult`     log P(continuation | prompt) per candidate
:class:`PrefixGroupRequest`  :class:`PrefixGroupResult`  the same for many suffixes of one prefix
:class:`NextTokenRequest`    :class:`NextTokenResult`    log P(next token = t | prompt) for given t
:class:`GenerateRequest`     :class:`GenerateResult`     a continuation, greedy or sampled
=====================  =======================  ==========================================

A prompt is plain text (``str``) or a :class:`ChatPrompt`, whose messages the
backend renders with its tokenizer's chat template (plus an optional assistant
prefill). Every request checks itself when built and raises
:class:`~folkscope.errors.ConfigError` naming the field, the value and the fix.

:func:`request_key` hashes the canonical JSON of a request; together with the
model identity and backend settings it keys the on-disk result cache.

Every request takes an optional ``context_size``: a prompt longer than that
many tokens is cut to its last ``context_size`` tokens (a token the tokenizer
puts before every text, such as a BOS, stays first), as folktexts'
transformers classifier truncates prompts (on the left, special tokens
counted). Backends that tokenize apply it; a web API takes the whole prompt.
:class:`~folkscope.engine.Engine` drops the limit from every request whose
prompt fits it, so the limit enters a cache key only where it changed what
the model saw.

Examples
--------
>>> req = ScoreRequest("Is the sky blue? Answer:", (" Yes", " No"))
>>> req.candidates
(' Yes', ' No')
>>> len(request_key(req))
64
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

import numpy as np

from folkscope._json import canonical_json
from folkscope.errors import ConfigError

__all__ = [
    "RESULT_TYPES",
    "ChatPrompt",
    "GenerateRequest",
    "GenerateResult",
    "GenerationSettings",
    "Message",
    "NextTokenRequest",
    "NextTokenResult",
    "PrefixGroupRequest",
    "PrefixGroupResult",
    "Prompt",
    "Request",
    "Result",
    "ScoreRequest",
    "ScoreResult",
    "canonical_json",
    "prompt_from_dict",
    "prompt_to_dict",
    "request_key",
]

_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class Message:
    """One chat message.

    Parameters
    ----------
    role : {"system", "user", "assistant"}
    content : str
    """

    role: str
    content: str

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ConfigError(
                f"chat message role must be one of {', '.join(_ROLES)}, got {self.role!r}",
                parameter="role",
                value=self.role,
            )
        if not isinstance(self.content, str):
            raise ConfigError(
                f"chat message content must be a string, got {type(self.content).__name__}",
                parameter="content",
                value=self.content,
            )


def _as_message(item: Message | Mapping[str, str] | Sequence[str]) -> Message:
    if isinstance(item, Message):
        return item
    if isinstance(item, Mapping):
        return Message(str(item.get("role")), item.get("content"))  # type: ignore[arg-type]
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return Message(item[0], item[1])
    raise ConfigError(
        f"a chat message must be a Message, a {{'role', 'content'}} dict or a (role, content) pair, got {item!r}",
        parameter="messages",
        value=item,
    )


@dataclass(frozen=True)
class ChatPrompt:
    """A chat conversation rendered by the backend's chat template.

    Parameters
    ----------
    messages : sequence of Message, dicts or (role, content) pairs
        At least one message; normalised to a tuple of :class:`Message`.
    prefill : str, default ""
        Text appended after the assistant header (the generation prompt), so
        the model continues an answer already begun, e.g. ``"Answer:"``.
    enable_thinking : bool, optional
        Passed to the chat template (Qwen3-style thinking mode); None leaves
        the template's own default.

    Examples
    --------
    >>> ChatPrompt([{"role": "user", "content": "Hi"}], prefill="Sure").messages
    (Message(role='user', content='Hi'),)
    """

    messages: tuple[Message, ...]
    prefill: str = ""
    enable_thinking: bool | None = None

    def __post_init__(self) -> None:
        if self.enable_thinking is not None and not isinstance(self.enable_thinking, bool):
            raise ConfigError(
                f"ChatPrompt.enable_thinking must be True, False or None, got {self.enable_thinking!r}",
                parameter="enable_thinking",
                value=self.enable_thinking,
            )
        if isinstance(self.messages, (str, bytes)) or not isinstance(self.messages, Sequence):
            raise ConfigError(
                f"ChatPrompt.messages must be a sequence of messages, got {type(self.messages).__name__}",
                parameter="messages",
                value=self.messages,
            )
        messages = tuple(_as_message(m) for m in self.messages)
        if not messages:
            raise ConfigError("ChatPrompt needs at least one message", parameter="messages", value=self.messages)
        object.__setattr__(self, "messages", messages)
        if not isinstance(self.prefill, str):
            raise ConfigError(
                f"ChatPrompt.prefill must be a string, got {type(self.prefill).__name__}",
                parameter="prefill",
                value=self.prefill,
            )


Prompt = Union[str, ChatPrompt]


def _check_prompt(prompt: object, parameter: str) -> None:
    if isinstance(prompt, str):
        if not prompt:
            raise ConfigError(
                f"{parameter} must be a non-empty string or a ChatPrompt", parameter=parameter, value=prompt
            )
        return
    if not isinstance(prompt, ChatPrompt):
        raise ConfigError(
            f"{parameter} must be a str or a ChatPrompt, got {type(prompt).__name__}", parameter=parameter, value=prompt
        )


def _check_context_size(value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(
            f"context_size must be a positive number of tokens or None, got {value!r}",
            parameter="context_size",
            value=value,
        )


def _with_context(out: dict[str, Any], context_size: int | None) -> dict[str, Any]:
    """A request's JSON with its context size, absent when unset, so older cache keys stay valid."""
    return out if context_size is None else {**out, "context_size": context_size}


def _text_tuple(values: object, parameter: str, *, allow_empty_strings: bool = False) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise ConfigError(
            f"{parameter} must be a sequence of strings (a tuple or list), got {values!r}",
            parameter=parameter,
            value=values,
        )
    out = tuple(values)
    if not out:
        raise ConfigError(f"{parameter} must not be empty", parameter=parameter, value=values)
    for item in out:
        if not isinstance(item, str) or (not item and not allow_empty_strings):
            raise ConfigError(
                f"every entry of {parameter} must be a non-empty string, got {item!r}",
                parameter=parameter,
                value=values,
            )
    if len(set(out)) != len(out):
        dupes = sorted({x for x in out if out.count(x) > 1})
        raise ConfigError(f"{parameter} has duplicates {dupes}; list each once", parameter=parameter, value=values)
    return out


def prompt_to_dict(prompt: Prompt) -> str | dict[str, Any]:
    """JSON-able form of a prompt (the text itself, or messages and prefill)."""
    if isinstance(prompt, str):
        return prompt
    out: dict[str, Any] = {"messages": [[m.role, m.content] for m in prompt.messages], "prefill": prompt.prefill}
    if prompt.enable_thinking is not None:  # absent when unset, so older cache keys stay valid
        out["enable_thinking"] = prompt.enable_thinking
    return out


def prompt_from_dict(data: str | Mapping[str, Any]) -> Prompt:
    """Inverse of :func:`prompt_to_dict`."""
    if isinstance(data, str):
        return data
    return ChatPrompt(
        tuple(Message(r, c) for r, c in data["messages"]),
        prefill=data.get("prefill", ""),
        enable_thinking=data.get("enable_thinking"),
    )


@dataclass(frozen=True)
class ScoreRequest:
    """Log-probability of each candidate continuation of a prompt.

    Multi-token candidates are scored as the full product of their token
    probabilities (the sum of token log-probabilities), never by their first
    token alone. Backends that tokenize do so for prompt and candidate
    separately and concatenate the ids, so the candidate's tokens are the
    same whatever precedes them.

    Parameters
    ----------
    prompt : str or ChatPrompt
    candidates : sequence of str
        Non-empty, distinct continuations, e.g. ``(" A", " B")``.
    context_size : int, optional
        Longest prompt in tokens; a longer one is cut to its last tokens (see the module docs).
    """

    prompt: Prompt
    candidates: tuple[str, ...]
    context_size: int | None = None
    kind: ClassVar[str] = "score"

    def __post_init__(self) -> None:
        _check_prompt(self.prompt, "prompt")
        object.__setattr__(self, "candidates", _text_tuple(self.candidates, "candidates"))
        _check_context_size(self.context_size)

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "prompt": prompt_to_dict(self.prompt), "candidates": list(self.candidates)}
        return _with_context(out, self.context_size)


@dataclass(frozen=True)
class ScoreResult:
    """Answer to a :class:`ScoreRequest`.

    Attributes
    ----------
    logprobs : tuple of float
        Natural-log probability of each candidate, in request order; ``<= 0``.
        NaN marks a candidate the backend could not score exactly (a web API
        that left it out of its top log-probabilities); never a silent 0.
    num_tokens : tuple of int
        Number of tokens of each candidate; 0 where it is not known (answers
        replayed from another harness's log, which records no tokenization).
    prompt_tokens : int
        Length of the tokenized prompt (0 where not known, as above).
    bound : float, optional
        When some logprobs are NaN: a log-probability that each of them is
        known not to exceed (the smallest one the API returned), so callers
        can tell whether leaving them out matters
        (:meth:`~folkscope.engine.VariantSet.merge_logprobs`).
    """

    logprobs: tuple[float, ...]
    num_tokens: tuple[int, ...]
    prompt_tokens: int
    bound: float | None = None

    @property
    def probs(self) -> np.ndarray:
        """Probabilities, shape (n_candidates,)."""
        return np.exp(np.asarray(self.logprobs, dtype=float))

    def normalized(self) -> np.ndarray:
        """Probabilities renormalised to sum to one over the candidates.

        Returns NaN entries when every candidate has probability zero.
        """
        lp = np.asarray(self.logprobs, dtype=float)
        top = lp.max()
        if not np.isfinite(top):
            return np.full(lp.shape, np.nan)
        p = np.exp(lp - top)
        return p / p.sum()

    def to_dict(self) -> dict[str, Any]:
        out = {
            "logprobs": list(self.logprobs),
            "num_tokens": list(self.num_tokens),
            "prompt_tokens": self.prompt_tokens,
        }
        return out if self.bound is None else {**out, "bound": self.bound}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreResult:
        bound = data.get("bound")
        return cls(
            tuple(float(x) for x in data["logprobs"]),
            tuple(int(x) for x in data["num_tokens"]),
            int(data["prompt_tokens"]),
            None if bound is None else float(bound),
        )


@dataclass(frozen=True)
class PrefixGroupRequest:
    """One shared prefix followed by many suffixes, each scored on the same candidates.

    The prompt of suffix ``i`` is ``prefix + suffixes[i]``. Sharing is explicit:
    backends that tokenize encode the prefix once and each suffix separately
    (so end the prefix at a natural boundary, e.g. a newline), and the
    transformers backend runs the prefix once and the suffixes as a batch
    against its key/value cache. Typical uses: the answer orderings of one row,
    the 120 permutations of a question's answers, one few-shot block reused by
    many questions.

    Parameters
    ----------
    prefix : str or ChatPrompt
        A chat prefix is rendered with the chat template (and prefill); the
        suffixes are then appended to the rendered text.
    suffixes : sequence of str
        Non-empty, distinct suffixes.
    candidates : sequence of str
        Candidates scored after every suffix.
    context_size : int, optional
        Longest prompt (prefix plus suffix) in tokens; each longer one is cut
        to its last tokens (see the module docs).
    """

    prefix: Prompt
    suffixes: tuple[str, ...]
    candidates: tuple[str, ...]
    context_size: int | None = None
    kind: ClassVar[str] = "prefix_group"

    def __post_init__(self) -> None:
        _check_prompt(self.prefix, "prefix")
        object.__setattr__(self, "suffixes", _text_tuple(self.suffixes, "suffixes"))
        object.__setattr__(self, "candidates", _text_tuple(self.candidates, "candidates"))
        _check_context_size(self.context_size)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "prefix": prompt_to_dict(self.prefix),
            "suffixes": list(self.suffixes),
            "candidates": list(self.candidates),
        }
        return _with_context(out, self.context_size)


@dataclass(frozen=True)
class PrefixGroupResult:
    """Answer to a :class:`PrefixGroupRequest`: one :class:`ScoreResult` per suffix."""

    results: tuple[ScoreResult, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PrefixGroupResult:
        return cls(tuple(ScoreResult.from_dict(r) for r in data["results"]))


@dataclass(frozen=True)
class NextTokenRequest:
    """Next-token log-probabilities restricted to a given set of tokens.

    Each entry of ``tokens`` must be exactly one token of the backend's
    vocabulary (e.g. ``"0"`` .. ``"9"``, or ``"A"`` and ``" A"``); a backend
    raises :class:`~folkscope.errors.ConfigError` otherwise. Use
    :class:`ScoreRequest` for multi-token continuations, and
    :func:`folkscope.engine.expand_variants` to sum ``"A"`` and ``" A"``.

    Parameters
    ----------
    prompt : str or ChatPrompt
    tokens : sequence of str
    context_size : int, optional
        Longest prompt in tokens; a longer one is cut to its last tokens (see the module docs).
    """

    prompt: Prompt
    tokens: tuple[str, ...]
    context_size: int | None = None
    kind: ClassVar[str] = "next_token"

    def __post_init__(self) -> None:
        _check_prompt(self.prompt, "prompt")
        object.__setattr__(self, "tokens", _text_tuple(self.tokens, "tokens"))
        _check_context_size(self.context_size)

    def to_dict(self) -> dict[str, Any]:
        return _with_context(
            {"kind": self.kind, "prompt": prompt_to_dict(self.prompt), "tokens": list(self.tokens)}, self.context_size
        )


@dataclass(frozen=True)
class NextTokenResult:
    """Answer to a :class:`NextTokenRequest`.

    Attributes
    ----------
    logprobs : tuple of float
        Natural-log probability of each token (normalised over the whole
        vocabulary, so the probabilities sum to at most one). NaN marks a
        token the backend could not score exactly, as in :class:`ScoreResult`.
    prompt_tokens : int
    bound : float, optional
        Upper bound of the NaN entries' log-probabilities, as in :class:`ScoreResult`.
    """

    logprobs: tuple[float, ...]
    prompt_tokens: int
    bound: float | None = None

    @property
    def probs(self) -> np.ndarray:
        """Probabilities, shape (n_tokens,)."""
        return np.exp(np.asarray(self.logprobs, dtype=float))

    def to_dict(self) -> dict[str, Any]:
        out = {"logprobs": list(self.logprobs), "prompt_tokens": self.prompt_tokens}
        return out if self.bound is None else {**out, "bound": self.bound}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NextTokenResult:
        bound = data.get("bound")
        return cls(
            tuple(float(x) for x in data["logprobs"]),
            int(data["prompt_tokens"]),
            None if bound is None else float(bound),
        )


@dataclass(frozen=True)
class GenerationSettings:
    """How to generate.

    Parameters
    ----------
    max_new_tokens : int, default 64
        At least 1.
    temperature : float, default 0.0
        0 means greedy decoding; otherwise sample from ``softmax(logits / temperature)``.
    seed : int, default 0
        Seed of this request's own random stream (sampling only), so a sampled
        answer does not depend on which other requests share its batch.
    stop : sequence of str, default ()
        Generation ends when the text contains one of these; the text is cut
        before it.
    """

    max_new_tokens: int = 64
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise ConfigError(
                f"max_new_tokens must be an integer >= 1, got {self.max_new_tokens!r}",
                parameter="max_new_tokens",
                value=self.max_new_tokens,
            )
        temp = self.temperature
        if isinstance(temp, bool) or not isinstance(temp, (int, float)) or not math.isfinite(temp) or temp < 0:
            raise ConfigError(
                f"temperature must be a finite number >= 0 (0 = greedy), got {temp!r}",
                parameter="temperature",
                value=temp,
            )
        object.__setattr__(self, "temperature", float(temp))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise ConfigError(
                f"seed must be an integer in [0, 2**63), got {self.seed!r}", parameter="seed", value=self.seed
            )
        stop = () if self.stop == () else _text_tuple(self.stop, "stop")
        object.__setattr__(self, "stop", stop)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
            "stop": list(self.stop),
        }


@dataclass(frozen=True)
class GenerateRequest:
    """Generate a continuation of a prompt.

    Parameters
    ----------
    prompt : str or ChatPrompt
        For a chat prompt the returned text excludes the prefill.
    settings : GenerationSettings, default greedy with 64 new tokens
    context_size : int, optional
        Longest prompt in tokens; a longer one is cut to its last tokens (see the module docs).
    """

    prompt: Prompt
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    context_size: int | None = None
    kind: ClassVar[str] = "generate"

    def __post_init__(self) -> None:
        _check_prompt(self.prompt, "prompt")
        if not isinstance(self.settings, GenerationSettings):
            raise ConfigError(
                f"settings must be a GenerationSettings, got {type(self.settings).__name__}",
                parameter="settings",
                value=self.settings,
            )
        _check_context_size(self.context_size)

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "prompt": prompt_to_dict(self.prompt), "settings": self.settings.to_dict()}
        return _with_context(out, self.context_size)


@dataclass(frozen=True)
class GenerateResult:
    """Answer to a :class:`GenerateRequest`.

    Attributes
    ----------
    text : str
        The generated continuation, cut before any stop string.
    finish_reason : {"stop", "eos", "length"}
    prompt_tokens : int
    completion_tokens : int
        Tokens generated, counting an end-of-sequence token or the token that
        completed a stop string.
    """

    text: str
    finish_reason: Literal["stop", "eos", "length"]
    prompt_tokens: int
    completion_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GenerateResult:
        return cls(str(data["text"]), data["finish_reason"], int(data["prompt_tokens"]), int(data["completion_tokens"]))


Request = Union[ScoreRequest, PrefixGroupRequest, NextTokenRequest, GenerateRequest]
Result = Union[ScoreResult, PrefixGroupResult, NextTokenResult, GenerateResult]

#: result type of each request kind, for decoding cached JSON
RESULT_TYPES: dict[str, Any] = {
    ScoreRequest.kind: ScoreResult,
    PrefixGroupRequest.kind: PrefixGroupResult,
    NextTokenRequest.kind: NextTokenResult,
    GenerateRequest.kind: GenerateResult,
}


def request_key(request: Request) -> str:
    """SHA-256 (hex) of the request's canonical JSON; equal requests give equal keys.

    Examples
    --------
    >>> request_key(ScoreRequest("Q:", ("A",))) == request_key(ScoreRequest("Q:", ["A"]))
    True
    """
    return hashlib.sha256(canonical_json(request.to_dict()).encode("utf-8")).hexdigest()
