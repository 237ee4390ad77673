"""The OpenAI wire format of the web-API backend: request payloads built, responses read.

Why it exists
-------------
How an answer is read from a response (which echoed tokens belong to a
candidate, what a top-log-probability table bounds) decides the numbers a
run reports, so it is kept as plain functions on JSON-like data, apart from
sending (:mod:`._api_transport`) and billing (:mod:`._api_billing`). The
backend (:mod:`folkscope.engine.backends.api`) turns each engine request into
:class:`_Call` objects built here and assembles their parsed answers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from folkscope.engine.backends._api_support import _NO_LOGPROBS_MODES
from folkscope.engine.backends.base import stop_at
from folkscope.engine.requests import GenerateResult, GenerationSettings, Prompt
from folkscope.errors import BackendError, ConfigError

__all__ = [
    "chat_fields",
    "echo_calls",
    "generation_call",
    "no_logprobs_error",
    "parse_echo",
    "parse_generation",
    "parse_text_top",
    "parse_top",
    "text_top_call",
    "top_result",
]

_PROMPTS_PER_CALL = 32
_MAX_STOP = 4  # OpenAI's limit on stop sequences; the rest are applied locally


class _Garbage(Exception):
    """A response that cannot be read (wrong shape); retried like a server error."""


@dataclass
class _Call:
    """One HTTP request: its route, its own arguments, and how to read the response."""

    route: Literal["text", "chat"]
    kwargs: dict[str, Any]
    parse: Callable[[dict[str, Any]], Any]


@dataclass
class _Job:
    """The HTTP requests answering one engine request, and how their answers combine.

    ``assemble`` returns the answer, or a follow-up :class:`_Job` with more
    requests (whose own ``assemble`` then gives the answer): top-k scoring
    asks for echo only after reading the table.
    """

    calls: list[_Call]
    assemble: Callable[[list[Any]], Any]


def _as_dict(response: Any) -> dict[str, Any]:
    """A litellm response object as plain JSON-like data."""
    if isinstance(response, Mapping):
        return dict(response)
    for method in ("model_dump", "dict", "to_dict"):
        fn = getattr(response, method, None)
        if callable(fn):
            data = fn()
            if isinstance(data, Mapping):
                return dict(data)
    raise _Garbage(f"unreadable response of type {type(response).__name__}")


def no_logprobs_error(model: str) -> BackendError:
    """The error for a response of ``model`` that carries no log-probabilities."""
    return BackendError(
        f"{model} answered without log-probabilities, so answers cannot be scored from probabilities "
        f"(multiple-choice and numeric scoring need them); {_NO_LOGPROBS_MODES}. Answers already received are saved."
    )


def chat_fields(prompt: Prompt, *, model: str, assistant_prefill: bool, compatible_server: bool) -> dict[str, Any]:
    """``messages`` (and vLLM's ``extra_body`` switches) of a chat request for ``prompt``.

    ``compatible_server``: an OpenAI-compatible server reached through
    ``api_base``, which accepts vLLM's extra fields.
    """
    if isinstance(prompt, str):
        return {"messages": [{"role": "user", "content": prompt}]}
    messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
    extra: dict[str, Any] = {}
    if prompt.prefill:
        if not assistant_prefill:
            raise ConfigError(
                f"{model} is not known to accept an assistant prefill, so ChatPrompt.prefill "
                f"({prompt.prefill[:40]!r}; chat_prompt / --chat-prompt) cannot be sent. Drop the prefill, or pass "
                "--assistant-prefill (assistant_prefill=True in Python) if the server continues a final assistant "
                "message. No request was sent.",
                parameter="prefill",
                value=prompt.prefill,
            )
        messages.append({"role": "assistant", "content": prompt.prefill})
        if compatible_server:  # vLLM's switches for continuing the final assistant message
            extra.update(continue_final_message=True, add_generation_prompt=False)
    if prompt.enable_thinking is not None:
        if compatible_server:
            extra["chat_template_kwargs"] = {"enable_thinking": prompt.enable_thinking}
        elif prompt.enable_thinking:
            raise ConfigError(
                f"enable_thinking=True cannot be passed to {model} through litellm; use the provider's "
                "reasoning options (e.g. reasoning_effort) as a backend option instead",
                parameter="enable_thinking",
            )
    out: dict[str, Any] = {"messages": messages}
    if extra:
        out["extra_body"] = extra
    return out


# ---------------------------------------------------------------------- echo scoring (text route)
def echo_calls(
    items: list[tuple[str, str]], *, model: str
) -> tuple[list[_Call], Callable[[list[Any]], list[tuple[float, int, int]]]]:
    """Echo requests scoring ``continuation`` after ``prompt`` for each item, in chunks."""
    calls = []
    for start in range(0, len(items), _PROMPTS_PER_CALL):
        chunk = items[start : start + _PROMPTS_PER_CALL]
        kwargs: dict[str, Any] = {
            "prompt": [p + c for p, c in chunk],
            "echo": True,
            "logprobs": 1,
            "max_tokens": 1,
            "temperature": 0.0,
        }
        calls.append(_Call("text", kwargs, functools.partial(parse_echo, chunk=chunk, model=model)))

    def flatten(parts: list[Any]) -> list[tuple[float, int, int]]:
        return [v for part in parts for v in part]

    return calls, flatten


def parse_echo(data: dict[str, Any], chunk: list[tuple[str, str]], *, model: str) -> list[tuple[float, int, int]]:
    """(log-probability or NaN, candidate tokens, prompt tokens) per item of one echo response."""
    choices = sorted(data.get("choices") or [], key=lambda c: int(c.get("index") or 0))
    if len(choices) != len(chunk):
        raise _Garbage(f"expected {len(chunk)} choices, got {len(choices)}")
    out = []
    for choice, (prompt, cont) in zip(choices, chunk):
        lp = choice.get("logprobs") or {}
        values = lp.get("token_logprobs")
        tokens = lp.get("tokens") or []
        if not values:
            raise no_logprobs_error(model)
        offsets = lp.get("text_offset")
        if not offsets or len(offsets) != len(values):
            offsets, pos = [], 0
            for t in tokens:
                offsets.append(pos)
                pos += len(t)
            if len(offsets) != len(values):
                raise _Garbage("echo log-probabilities without matching tokens or text offsets")
        echoed = choice.get("text")
        base = echoed.find(prompt + cont) if isinstance(echoed, str) else 0  # a server may echo a BOS text first
        lo = max(base, 0) + len(prompt)
        hi = lo + len(cont)
        start = next((i for i, o in enumerate(offsets) if o >= lo), len(offsets))
        end = next((i for i, o in enumerate(offsets) if o >= hi), len(offsets))
        exact = (
            start < len(offsets)
            and offsets[start] == lo
            and end > start
            and (end == len(offsets) or offsets[end] == hi)
            and all(isinstance(v, (int, float)) for v in values[start:end])
            # the tokens found there must spell the continuation: a server whose offsets drift (byte tokens of a
            # non-ASCII character reported as one replacement character each) would otherwise give another
            # token's log-probability, silently
            and (len(tokens) != len(values) or "".join(str(t) for t in tokens[start:end]) == cont)
        )
        if exact:
            out.append((float(math.fsum(values[start:end])), end - start, start))
        else:  # the tokenizer merged prompt and continuation: not a continuation, cannot be scored
            out.append((math.nan, 0, start))
    return out


# ---------------------------------------------------------------------- top-log-probability scoring (chat route)
def parse_top(data: dict[str, Any], *, model: str) -> tuple[dict[str, float], int]:
    """The first generated position's top log-probabilities as {token text: log-probability}, and the prompt length."""
    choices = data.get("choices") or []
    if not choices:
        raise _Garbage("a chat response without choices")
    logprobs = choices[0].get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    if content is None:
        raise no_logprobs_error(model)
    usage = data.get("usage") or {}
    if not content:  # the answer ended at once and the provider listed no token: nothing to read
        return {}, int(usage.get("prompt_tokens") or 0)
    first = content[0]
    table: dict[str, float] = {}
    for entry in [first, *(first.get("top_logprobs") or [])]:
        token, value = entry.get("token"), entry.get("logprob")
        if isinstance(token, str) and isinstance(value, (int, float)) and math.isfinite(value):
            table[token] = max(float(value), table.get(token, -math.inf))
    if len(table) < 2 and not first.get("top_logprobs"):
        raise no_logprobs_error(model)
    return table, int(usage.get("prompt_tokens") or 0)


def text_top_call(prompt: str, *, k: int, model: str) -> _Call:
    """One completions request for the top-``k`` first tokens after ``prompt`` (no echo: the prompt is sent once).

    Its answer is ``(table, prompt_tokens)`` as :func:`parse_top` gives for chat.
    """
    kwargs: dict[str, Any] = {"prompt": prompt, "logprobs": k, "max_tokens": 1, "temperature": 0.0}
    return _Call("text", kwargs, functools.partial(parse_text_top, model=model))


def parse_text_top(data: dict[str, Any], *, model: str) -> tuple[dict[str, float], int]:
    """The generated position's top log-probabilities of a completions answer, and the prompt length.

    The legacy completions format lists, per generated token, a
    ``{token text: log-probability}`` mapping; the chosen token itself is in
    ``tokens`` / ``token_logprobs``. A provider that lists no generated token
    (the answer ended at once) gives an empty table: nothing is known, no bound.

    Examples
    --------
    >>> data = {"choices": [{"logprobs": {"tokens": [" A"], "token_logprobs": [-0.5],
    ...          "top_logprobs": [{" A": -0.5, " B": -1.5}]}}], "usage": {"prompt_tokens": 12}}
    >>> parse_text_top(data, model="m")
    ({' A': -0.5, ' B': -1.5}, 12)
    """
    choices = data.get("choices") or []
    if len(choices) != 1:
        raise _Garbage(f"expected 1 choice, got {len(choices)}")
    lp = choices[0].get("logprobs")
    if not isinstance(lp, Mapping):
        raise no_logprobs_error(model)
    usage = data.get("usage") or {}
    prompt_tokens = int(usage.get("prompt_tokens") or 0)
    tops = lp.get("top_logprobs")
    tokens = lp.get("tokens") or []
    values = lp.get("token_logprobs") or []
    if tops is None:
        raise no_logprobs_error(model)
    if not tokens and not tops:
        return {}, prompt_tokens
    first = tops[0] if tops and isinstance(tops[0], Mapping) else {}
    entries = list(first.items())
    if tokens and values:
        entries.append((tokens[0], values[0]))
    table: dict[str, float] = {}
    for token, value in entries:
        if isinstance(token, str) and isinstance(value, (int, float)) and math.isfinite(value):
            table[token] = max(float(value), table.get(token, -math.inf))
    if not first:
        raise no_logprobs_error(model)
    return table, prompt_tokens


def top_result(
    table: dict[str, float], prompt_tokens: int, cands: Sequence[str], *, prefixes: bool
) -> tuple[list[float], list[int], float | None]:
    """Log-probabilities of ``cands`` from a top-k table: exact when present, else NaN with an upper bound."""
    if not table:  # nothing returned: no bound is known
        return [math.nan] * len(cands), [0] * len(cands), None
    floor = min(table.values())
    lps: list[float] = []
    ntok: list[int] = []
    bound: float | None = None
    for c in cands:
        if c in table:
            lps.append(table[c])
            ntok.append(1)
            continue
        lps.append(math.nan)
        ntok.append(0)
        mine = floor
        if prefixes:  # the candidate may be several tokens starting with a returned one
            mine = max([floor] + [v for t, v in table.items() if t and c.startswith(t)])
        bound = mine if bound is None else max(bound, mine)
    return lps, ntok, bound


# ---------------------------------------------------------------------- generation (either route)
def generation_call(
    settings: GenerationSettings, route: Literal["text", "chat"], prompt_fields: dict[str, Any], params: set[str] | None
) -> _Call:
    """The request generating from ``prompt_fields`` (``prompt``, or chat fields) with ``settings``.

    ``params``: the provider's supported OpenAI parameters (None: unknown,
    so ``seed`` and ``stop`` are sent).
    """
    fields: dict[str, Any] = {"max_tokens": settings.max_new_tokens, "temperature": settings.temperature}
    if params is None or "seed" in params:
        fields["seed"] = settings.seed
    if settings.stop and (params is None or "stop" in params):
        fields["stop"] = list(settings.stop[:_MAX_STOP])
    fields.update(prompt_fields)
    return _Call(route, fields, functools.partial(parse_generation, route=route, stop=settings.stop))


def parse_generation(data: dict[str, Any], *, route: Literal["text", "chat"], stop: Sequence[str]) -> GenerateResult:
    """The generated text (cut at the first stop string) and why it ended."""
    choices = data.get("choices") or []
    if not choices:
        raise _Garbage("a response without choices")
    choice = choices[0]
    if route == "text":
        text = choice.get("text")
    else:
        text = (choice.get("message") or {}).get("content")
    text = "" if text is None else str(text)
    usage = data.get("usage") or {}
    cut = stop_at(text, stop)
    reason = choice.get("finish_reason")
    specific = choice.get("provider_specific_fields") or {}
    has_stop_reason = "stop_reason" in choice or "stop_reason" in specific
    stop_reason = choice.get("stop_reason", specific.get("stop_reason"))
    finish: Literal["stop", "eos", "length"]
    if cut is not None:
        text, finish = text[:cut], "stop"
    elif reason == "length":
        finish = "length"
    elif isinstance(stop_reason, str):
        finish = "stop"
    elif has_stop_reason or not stop:
        finish = "eos"
    else:
        finish = "stop" if reason == "stop" else "eos"
    return GenerateResult(text, finish, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
