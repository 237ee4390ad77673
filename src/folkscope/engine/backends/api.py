"""Web-API backend through litellm: any provider it supports, OpenAI-compatible servers included.

How each request kind is answered
---------------------------------
Two routes, chosen per prompt by ``mode``:

``"completions"`` (plain-text prompts; the default for them under ``"auto"``)
    Exact scoring by *echo*: the prompt followed by a candidate is sent to
    the text-completion endpoint with ``echo=True, logprobs=1,
    max_tokens=1``; the provider returns the log-probability of every
    prompt token, and the candidate's tokens are those whose text offset
    falls inside the candidate. Their sum is the exact log-probability of
    the candidate, however many tokens it has (a multi-token candidate is
    the full product, never its first token). All candidates of a request,
    and all suffixes x candidates of a prefix group, go out as one request
    with a list of prompts (chunks of 32). If the provider's tokenizer merges
    the end of the prompt with the start of the candidate (the boundary is
    not a token boundary, e.g. a prompt ending in a space before ``"A"``),
    the candidate cannot be scored as a continuation: it is NaN without a
    bound, and counted. Next-token requests are scored the same way; an entry
    that turns out to be more than one token is NaN as well.

``"chat"`` (chat prompts; plain text too when ``mode="chat"``, as one user message)
    ``logprobs=True, top_logprobs=k, max_tokens=1``: the candidates are
    looked up by exact string among the top-``k`` first tokens. A candidate
    found there gets its exact log-probability. A candidate not found is
    **NaN, never 0**, and the result's ``bound`` is a log-probability it
    cannot exceed: the smallest of the top-``k`` values, or, when a returned
    token is a proper prefix of the candidate (the candidate might be
    several tokens starting with it), that token's log-probability if larger.
    :meth:`~folkscope.engine.VariantSet.merge_logprobs` then leaves such
    entries out only when they cannot matter. Missing candidates and marked
    rows are counted in :attr:`stats`.

Generation uses either route with ``temperature``, ``max_tokens``, ``stop``
(the first four go to the provider, every one is applied locally) and
``seed``; finish reasons map to ``"stop"`` (a stop string), ``"eos"`` or
``"length"`` (a provider that does not say whether a stop string or the
end of text ended a generation is read as "stop" when stop strings were
given, else "eos").

Capabilities are checked before any request (:meth:`LiteLLMBackend.capabilities`):
litellm's parameter tables say whether the model returns log-probabilities
(a model known not to makes every scoring call fail at once with the modes
that still work; an unknown model is assumed to, and a response without
them raises :class:`~folkscope.errors.BackendError` naming the model), and
whether it accepts an assistant prefill (``ChatPrompt.prefill``).

Reliability
-----------
Requests run concurrently (``max_concurrency`` workers on an asyncio loop in
a background thread), spaced to ``max_rpm`` requests per minute, and every
completed answer is handed to the engine at once, so it reaches the result
cache as it arrives; requests marked done are never sent. 429, timeouts,
connection errors, 5xx and unreadable bodies are retried with exponential
backoff and jitter, honouring ``Retry-After`` (seconds or an HTTP date);
litellm's and the OpenAI client's own retries are off, so every retry is
counted. A 4xx that cannot succeed (400, 401, 403, 404, 422) stops the run
at once with a :class:`~folkscope.errors.BackendError` (or
:class:`~folkscope.errors.ConfigError` for credentials); requests already in
flight finish and are saved first, so a resumed run repeats none of them.

Security
--------
API keys come only from the environment: litellm's provider variables
(``OPENAI_API_KEY``, ...), or a variable named by ``api_key_env``; no option
takes a key, and the backend keeps none in its attributes (the HTTP clients
hold it in memory, as any client must). No key reaches :meth:`~LiteLLMBackend.identity`,
reprs, logs or error messages (messages are scrubbed of every secret-looking
environment value). litellm's debug output is off, and the ``LiteLLM``,
``openai``, ``httpx``/``httpx2`` and ``httpcore``/``httpcore2`` loggers are kept at WARNING unless the
user configured them (``httpx`` logs URLs, which some providers put keys in).

Examples
--------
>>> backend = LiteLLMBackend("openai/gpt-4o-mini")  # doctest: +SKIP
>>> backend.capabilities().logprobs  # doctest: +SKIP
True
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
import os
import queue
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from folkscope._deps import require
from folkscope.engine.backends._api_support import (
    _COMPATIBLE,
    _FEATURE,
    _MAX_STOP,
    _NO_LOGPROBS_MODES,
    _PROMPTS_PER_CALL,
    _TEXT_PROVIDERS,
    MODES,
    SCORING_VERSION,
    APIBackendStats,
    APICapabilities,
    APITokenizer,
    _as_dict,
    _Call,
    _check_int,
    _check_options,
    _check_seconds,
    _Control,
    _Garbage,
    _Job,
    _litellm,
    _LoopThread,
    _redact,
    _retry_after,
    _safe_base,
    _Stopped,
    escalated_warning,
    tolerate_warning,
)
from folkscope.engine.backends.base import Batches, stop_at
from folkscope.engine.ratelimit import RateLimiter, RetryPolicy
from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    GenerateResult,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    Prompt,
    ScoreRequest,
    ScoreResult,
)
from folkscope.engine.usage import Usage
from folkscope.errors import BackendError, ConfigError

__all__ = ["APIBackendStats", "APICapabilities", "APITokenizer", "LiteLLMBackend"]

log = logging.getLogger(__name__)
#: distinct escalated third-party warnings one request may get past (litellm builds dozens of models lazily)
_MAX_TOLERATED_WARNINGS = 256


# ---------------------------------------------------------------------- the backend
class LiteLLMBackend:
    """Web-API models through litellm (module docstring: routes, reliability, security).

    Parameters
    ----------
    model : str or object with ``.name``
        A litellm model id, e.g. ``"openai/gpt-4o-mini"``, ``"anthropic/claude-3-5-haiku-latest"``,
        or ``"openai/<served name>"`` with ``api_base`` for an OpenAI-compatible server (vLLM, ...).
    api_base : str, optional
        Base URL of an OpenAI-compatible server, e.g. ``"http://127.0.0.1:8000/v1"``.
    max_concurrency : int, default 8
        Requests in flight at once (1 to 1024).
    max_rpm : float, optional
        Requests per minute, retries included (evenly spaced); None: no limit.
    max_retries : int, default 6
        Retries of a request after transient failures (0: none).
    timeout : float, default 60
        Seconds a request may take before it is abandoned (and retried).
    top_logprobs : int, default 20
        ``k`` of chat scoring (1 to 20, OpenAI's maximum); larger ``k`` leaves fewer candidates unscored.
    mode : {"auto", "chat", "completions"}, default "auto"
        "auto": plain-text prompts by echo on the completions endpoint, chat
        prompts by chat completions. "chat": plain text goes as one user
        message. "completions": plain-text prompts only.
    api_key_env : str, optional
        Name of the environment variable holding the key (read when a request
        is sent, not kept by the backend); default: litellm's variable for the provider.
    assistant_prefill : bool, optional
        Whether ``ChatPrompt.prefill`` may be sent as a final assistant
        message; default: what litellm's model table says (an unknown model:
        no). Set True for OpenAI-compatible servers that continue a final
        assistant message (vLLM: ``continue_final_message`` is sent along).
    backoff_base, backoff_max : float, default 0.5 and 30
        Exponential backoff (seconds) of retries, with jitter (:class:`~folkscope.engine.ratelimit.RetryPolicy`).
    max_retry_after : float, default 300
        Longest ``Retry-After`` waited for; a longer one fails the request.
    jitter_seed : int, optional
        Seed of the backoff jitter (tests).
    litellm_options : mapping, optional
        Passed to every litellm call (e.g. ``{"reasoning_effort": "low"}``);
        part of :meth:`identity`. Credentials and options the backend
        controls are refused.

    Raises
    ------
    ConfigError
        An invalid option, a missing API key variable, ``mode="completions"``
        for a model without a completions endpoint.
    """

    name = "litellm"

    def __init__(
        self,
        model: Any,
        *,
        api_base: str | None = None,
        max_concurrency: int = 8,
        max_rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 60.0,
        top_logprobs: int = 20,
        mode: str = "auto",
        api_key_env: str | None = None,
        assistant_prefill: bool | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 300.0,
        jitter_seed: int | None = None,
        litellm_options: Mapping[str, Any] | None = None,
    ) -> None:
        name = getattr(model, "name", model)
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ConfigError(
                f"model must be a litellm model id such as 'openai/gpt-4o-mini', got {model!r}", parameter="model", value=model
            )
        self.model = name
        self.api_base = _safe_base(api_base)
        self.max_concurrency = _check_int(max_concurrency, "max_concurrency", 1, 1024)
        if max_rpm is not None and (isinstance(max_rpm, bool) or not isinstance(max_rpm, (int, float))):
            raise ConfigError(f"max_rpm must be a positive number or None, got {max_rpm!r}", parameter="max_rpm", value=max_rpm)
        self.max_rpm = None if max_rpm is None else float(max_rpm)
        self._limiter = RateLimiter(max_rpm) if max_rpm is not None else None
        self.retry = RetryPolicy(
            max_retries=max_retries, base_delay=backoff_base, max_delay=backoff_max, max_retry_after=max_retry_after, seed=jitter_seed
        )
        self.timeout = _check_seconds(timeout, "timeout")
        self.top_logprobs = _check_int(top_logprobs, "top_logprobs", 1, 20)
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", parameter="mode", value=mode)
        self.mode = mode
        if api_key_env is not None:
            if not isinstance(api_key_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
                raise ConfigError(
                    "api_key_env must be the NAME of an environment variable (e.g. 'MY_PROVIDER_KEY'), never the key itself",
                    parameter="api_key_env",
                )
        self.api_key_env = api_key_env
        if assistant_prefill is not None and not isinstance(assistant_prefill, bool):
            raise ConfigError(f"assistant_prefill must be True, False or None, got {assistant_prefill!r}", parameter="assistant_prefill")
        self.litellm_options = _check_options(dict(litellm_options or {}))
        self._litellm = _litellm()
        self.stats = APIBackendStats()
        self._usage: dict[int, Usage] = {}  # billing of answers yielded, until the engine takes it
        self._closed = False
        self._client: Any = None
        self._caps = self._probe(assistant_prefill)
        self.stats.cost_known = self._caps.cost_known
        self._check_key()
        if self.mode == "completions" and not self._caps.completions:
            raise ConfigError(
                f"mode='completions' needs a plain-text completions endpoint, which {self.model} does not have through "
                "litellm; use mode='auto' or 'chat'",
                parameter="mode",
                value=mode,
            )
        if self._caps.logprobs is False:
            log.warning("%s", self._caps.scoring_modes)
        self._tokenizer = APITokenizer(self._model_name, None if self._caps.exact_token_counts else self._fallback_encoding())

    @classmethod
    def from_model(
        cls,
        model: Any,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_tokens: int | None = None,
        **options: Any,
    ) -> LiteLLMBackend:
        """Build from :meth:`Engine.from_model <folkscope.engine.Engine.from_model>` arguments.

        ``device`` and ``dtype`` must be None (the provider runs the model);
        ``batch_tokens`` is accepted and ignored (there are no local batches;
        ``max_concurrency`` and ``max_rpm`` set the pace). Keywords naming a
        class parameter set it; any other keyword goes to litellm.
        """
        for param, value in (("device", device), ("dtype", dtype)):
            if value is not None:
                raise ConfigError(
                    f"{param}={value!r} means nothing for a web API (the provider runs the model); leave it unset",
                    parameter=param,
                    value=value,
                )
        if batch_tokens is not None:
            _check_int(batch_tokens, "batch_tokens", 1)
        own = set(inspect.signature(cls.__init__).parameters) - {"self", "model", "litellm_options"}
        mine = {k: options.pop(k) for k in list(options) if k in own}
        return cls(model, **mine, litellm_options=options)

    # ------------------------------------------------------------------ capabilities and identity
    def _probe(self, assistant_prefill: bool | None) -> APICapabilities:
        lt = self._litellm
        try:
            name, provider, _, _ = lt.get_llm_provider(model=self.model, api_base=self.api_base)
        except Exception as exc:
            raise ConfigError(
                f"litellm does not know how to reach model {self.model!r} ({_redact(str(exc))[:300]}); "
                "use '<provider>/<model>', e.g. 'openai/gpt-4o-mini', or 'openai/<name>' with api_base for an "
                "OpenAI-compatible server",
                parameter="model",
                value=self.model,
            ) from None
        self._model_name, self._provider = str(name), str(provider)
        try:
            params = lt.get_supported_openai_params(model=name, custom_llm_provider=provider)
        except Exception:  # unknown model or provider table: decide per response
            params = None
        self._params: set[str] | None = set(params) if params else None
        logprobs = None if self._params is None else ("logprobs" in self._params)
        if logprobs and self._params is not None and "top_logprobs" not in self._params and provider not in _TEXT_PROVIDERS:
            logprobs = None  # log-probabilities of the chosen token only; top-k is checked per response
        completions = provider in _TEXT_PROVIDERS and not (
            provider == "openai" and name in getattr(lt, "open_ai_chat_completion_models", ())
        )
        if assistant_prefill is None:
            try:
                from litellm.utils import supports_factory

                assistant_prefill = bool(supports_factory(name, provider, "supports_assistant_prefill"))
            except Exception:
                assistant_prefill = False
        try:
            lt.cost_per_token(model=name, custom_llm_provider=provider, prompt_tokens=1, completion_tokens=1)
            cost_known = True
        except Exception:
            cost_known = False
        return APICapabilities(
            model=self.model,
            provider=self._provider,
            logprobs=logprobs,
            completions=completions,
            assistant_prefill=bool(assistant_prefill),
            cost_known=cost_known,
            exact_token_counts=self._hf_tokenizer_kind(name) is None,
        )

    def _hf_tokenizer_kind(self, name: str) -> str | None:
        """Which Hugging Face tokenizer litellm would download to count tokens (None: a bundled one)."""
        fn = getattr(getattr(self._litellm, "utils", None), "huggingface_tokenizer_kind", None)
        if callable(fn):
            try:
                kind = fn(name)
                return None if kind is None else str(kind)
            except Exception:
                pass
        low = name.lower()
        return "hf" if any(s in low for s in ("llama-2", "llama-3", "replicate", "command-r", "claude-2", "claude-instant")) else None

    def _fallback_encoding(self) -> dict[str, Any]:
        from litellm.utils import _return_openai_tokenizer

        return dict(_return_openai_tokenizer(self._model_name))

    def _check_key(self) -> None:
        """Fail now, naming the variable (never its value), when no key is configured."""
        if self.api_key_env is not None:
            if not os.environ.get(self.api_key_env):
                raise ConfigError(
                    f"api_key_env names {self.api_key_env}, which is not set in the environment", parameter="api_key_env"
                )
            return
        try:
            report = self._litellm.validate_environment(model=self.model)
        except Exception:
            return
        missing = [k for k in report.get("missing_keys") or [] if not (self.api_base and k.endswith("_API_BASE"))]
        if self._provider in ("openai", "text-completion-openai") and not os.environ.get("OPENAI_API_KEY"):
            missing = sorted(set(missing) | {"OPENAI_API_KEY"})
        if missing and not any(os.environ.get(k) for k in missing):
            hint = " (any value works for a local server that does not check keys)" if self.api_base else ""
            raise ConfigError(
                f"no API key for {self.model}: set {' or '.join(missing)} in the environment{hint}, "
                "or name another variable with api_key_env",
                parameter="api_key",
            )

    def capabilities(self) -> APICapabilities:
        """What this model can do (known before any request); see :class:`APICapabilities`."""
        return self._caps

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": {"name": self.model, "source": "api", "provider": self._provider},
            "api_base": self.api_base,
            "mode": self.mode,
            "top_logprobs": self.top_logprobs,
            "options": dict(sorted(self.litellm_options.items())),
            "scoring": SCORING_VERSION,
        }

    def __repr__(self) -> str:
        return f"LiteLLMBackend(model={self.model!r}, api_base={self.api_base!r}, mode={self.mode!r})"

    # ------------------------------------------------------------------ tokenizer-like helpers
    @property
    def tokenizer(self) -> APITokenizer:
        return self._tokenizer

    def render(self, prompt: Prompt) -> str:
        """Plain text as is; a chat prompt as readable ``[role]`` blocks (for reports only: the provider renders it)."""
        if isinstance(prompt, str):
            return prompt
        if not isinstance(prompt, ChatPrompt):
            raise ConfigError(f"a prompt must be a str or a ChatPrompt, got {type(prompt).__name__}", parameter="prompt")
        conv = [{"role": m.role, "content": m.content} for m in prompt.messages]
        return self._tokenizer.apply_chat_template(conv) + prompt.prefill

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        """Prompt lengths by ``litellm.token_counter`` (estimates where the tokenizer is not bundled)."""
        out = []
        for p in prompts:
            if isinstance(p, str):
                out.append(self._tokenizer.count(text=p))
            else:
                msgs = [{"role": m.role, "content": m.content} for m in p.messages]
                if p.prefill:
                    msgs.append({"role": "assistant", "content": p.prefill})
                out.append(self._tokenizer.count(messages=msgs))
        return out

    def is_single_token(self, text: str) -> bool:
        """True for any non-empty text: the provider's vocabulary is unknown here.

        Keeping every variant is the safe choice: an entry that turns out not
        to be one token comes back NaN (and counted), never guessed, while
        dropping a variant that is a token would lose its probability silently.
        """
        return isinstance(text, str) and bool(text)

    def close(self) -> None:
        """Close this backend's HTTP client (the shared event loop lives until the interpreter exits)."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            _LoopThread.close_client(client)

    # ------------------------------------------------------------------ building requests
    def _require_logprobs(self) -> None:
        if self._caps.logprobs is False:
            raise BackendError(
                f"{self.model} cannot return log-probabilities (litellm's table for provider {self._provider!r} has "
                f"no 'logprobs' parameter), so it cannot score answers; {_NO_LOGPROBS_MODES}. No request was sent."
            )

    def _route(self, prompt: Prompt) -> Literal["text", "chat"]:
        if isinstance(prompt, ChatPrompt):
            if self.mode == "completions":
                raise ConfigError(
                    "mode='completions' takes plain-text prompts only; chat prompts need mode='auto' or 'chat'",
                    parameter="mode",
                    value=self.mode,
                )
            return "chat"
        if self.mode == "chat":
            return "chat"
        if not self._caps.completions:
            raise ConfigError(
                f"{self.model} has no plain-text completions endpoint through litellm, so plain-text prompts cannot be "
                "continued exactly; use chat prompts (use_chat_template=True / --use-chat-template), or mode='chat' "
                "to send plain text as one user message",
                parameter="mode",
                value=self.mode,
            )
        return "text"

    def _chat_fields(self, prompt: Prompt) -> dict[str, Any]:
        if isinstance(prompt, str):
            return {"messages": [{"role": "user", "content": prompt}]}
        messages = [{"role": m.role, "content": m.content} for m in prompt.messages]
        extra: dict[str, Any] = {}
        custom = self.api_base is not None and self._provider in _COMPATIBLE
        if prompt.prefill:
            if not self._caps.assistant_prefill:
                raise ConfigError(
                    f"{self.model} is not known to accept an assistant prefill, so ChatPrompt.prefill "
                    f"({prompt.prefill[:40]!r}; chat_prompt / --chat-prompt) cannot be sent. Drop the prefill, or pass "
                    "--assistant-prefill (assistant_prefill=True in Python) if the server continues a final assistant "
                    "message. No request was sent.",
                    parameter="prefill",
                    value=prompt.prefill,
                )
            messages.append({"role": "assistant", "content": prompt.prefill})
            if custom:  # vLLM's switches for continuing the final assistant message
                extra.update(continue_final_message=True, add_generation_prompt=False)
        if prompt.enable_thinking is not None:
            if custom:
                extra["chat_template_kwargs"] = {"enable_thinking": prompt.enable_thinking}
            elif prompt.enable_thinking:
                raise ConfigError(
                    f"enable_thinking=True cannot be passed to {self.model} through litellm; use the provider's "
                    "reasoning options (e.g. reasoning_effort) as a backend option instead",
                    parameter="enable_thinking",
                )
        out: dict[str, Any] = {"messages": messages}
        if extra:
            out["extra_body"] = extra
        return out

    def _no_logprobs(self) -> BackendError:
        return BackendError(
            f"{self.model} answered without log-probabilities, so answers cannot be scored from probabilities "
            f"(multiple-choice and numeric scoring need them); {_NO_LOGPROBS_MODES}. Answers already received are saved."
        )

    def _echo_calls(self, items: list[tuple[str, str]]) -> tuple[list[_Call], Callable[[list[Any]], list[tuple[float, int, int]]]]:
        """Echo requests scoring ``continuation`` after ``prompt`` for each item, in chunks."""
        calls = []
        for start in range(0, len(items), _PROMPTS_PER_CALL):
            chunk = items[start : start + _PROMPTS_PER_CALL]
            kwargs: dict[str, Any] = {"prompt": [p + c for p, c in chunk], "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0.0}
            calls.append(_Call("text", kwargs, functools.partial(self._parse_echo, chunk=chunk)))

        def flatten(parts: list[Any]) -> list[tuple[float, int, int]]:
            return [v for part in parts for v in part]

        return calls, flatten

    def _parse_echo(self, data: dict[str, Any], chunk: list[tuple[str, str]]) -> list[tuple[float, int, int]]:
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
                raise self._no_logprobs()
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
                start < len(offsets) and offsets[start] == lo and end > start
                and (end == len(offsets) or offsets[end] == hi)
                and all(isinstance(v, (int, float)) for v in values[start:end])
            )  # fmt: skip
            if exact:
                out.append((float(math.fsum(values[start:end])), end - start, start))
            else:  # the tokenizer merged prompt and continuation: not a continuation, cannot be scored
                out.append((math.nan, 0, start))
        return out

    def _chat_scoring_call(self, prompt: Prompt, read: Callable[[dict[str, float], int], Any]) -> _Call:
        kwargs = {**self._chat_fields(prompt), "logprobs": True, "top_logprobs": self.top_logprobs, "max_tokens": 1, "temperature": 0.0}
        return _Call("chat", kwargs, lambda data: read(*self._parse_top(data)))

    def _parse_top(self, data: dict[str, Any]) -> tuple[dict[str, float], int]:
        """The first generated position's top log-probabilities as {token text: log-probability}, and the prompt length."""
        choices = data.get("choices") or []
        if not choices:
            raise _Garbage("a chat response without choices")
        logprobs = choices[0].get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
        if content is None:
            raise self._no_logprobs()
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
            raise self._no_logprobs()
        return table, int(usage.get("prompt_tokens") or 0)

    def _top_result(self, table: dict[str, float], prompt_tokens: int, cands: Sequence[str], *, prefixes: bool) -> tuple[list[float], list[int], float | None]:
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

    def _count_marks(self, logprobs: Sequence[float]) -> None:
        missing = sum(1 for v in logprobs if math.isnan(v))
        if missing:
            self.stats.missing_candidates += missing
            self.stats.marked_rows += 1

    def _score_parts(self, prompt: Prompt, cands: Sequence[str]) -> tuple[list[_Call], Callable[[list[Any]], ScoreResult]]:
        if self._route(prompt) == "text":
            calls, flatten = self._echo_calls([(prompt, c) for c in cands])  # type: ignore[misc]

            def assemble(parts: list[Any]) -> ScoreResult:
                values = flatten(parts)
                lps = tuple(v[0] for v in values)
                self._count_marks(lps)
                return ScoreResult(lps, tuple(v[1] for v in values), values[0][2] if values else 0)

            return calls, assemble

        def read(table: dict[str, float], prompt_tokens: int) -> ScoreResult:
            lps, ntok, bound = self._top_result(table, prompt_tokens, cands, prefixes=True)
            self._count_marks(lps)
            return ScoreResult(tuple(lps), tuple(ntok), prompt_tokens, bound)

        return [self._chat_scoring_call(prompt, read)], lambda parts: parts[0]

    def _group_job(self, req: PrefixGroupRequest) -> _Job:
        prefix = req.prefix
        if isinstance(prefix, str) and self._route(prefix) == "text":
            items = [(prefix + s, c) for s in req.suffixes for c in req.candidates]
            calls, flatten = self._echo_calls(items)
            n = len(req.candidates)

            def assemble(parts: list[Any]) -> PrefixGroupResult:
                values = flatten(parts)
                results = []
                for k in range(len(req.suffixes)):
                    chunk = values[k * n : (k + 1) * n]
                    lps = tuple(v[0] for v in chunk)
                    self._count_marks(lps)
                    results.append(ScoreResult(lps, tuple(v[1] for v in chunk), chunk[0][2]))
                return PrefixGroupResult(tuple(results))

            return _Job(calls, assemble)
        calls = []
        finishers = []
        for s in req.suffixes:
            if isinstance(prefix, str):
                prompt: Prompt = prefix + s
            else:  # the suffix continues the rendered chat: it extends the assistant prefill
                prompt = ChatPrompt(prefix.messages, prefill=prefix.prefill + s, enable_thinking=prefix.enable_thinking)
            part_calls, finish = self._score_parts(prompt, req.candidates)
            calls.extend(part_calls)
            finishers.append((len(part_calls), finish))

        def assemble_chat(parts: list[Any]) -> PrefixGroupResult:
            out, pos = [], 0
            for size, finish in finishers:
                out.append(finish(parts[pos : pos + size]))
                pos += size
            return PrefixGroupResult(tuple(out))

        return _Job(calls, assemble_chat)

    def _next_token_job(self, req: NextTokenRequest) -> _Job:
        if self._route(req.prompt) == "text":
            calls, flatten = self._echo_calls([(req.prompt, t) for t in req.tokens])  # type: ignore[misc]

            def assemble(parts: list[Any]) -> NextTokenResult:
                values = flatten(parts)
                lps = tuple(v[0] if v[1] == 1 else math.nan for v in values)  # more than one token: not a next token
                self._count_marks(lps)
                return NextTokenResult(lps, values[0][2] if values else 0)

            return _Job(calls, assemble)

        def read(table: dict[str, float], prompt_tokens: int) -> NextTokenResult:
            lps, _, bound = self._top_result(table, prompt_tokens, req.tokens, prefixes=False)
            self._count_marks(lps)
            return NextTokenResult(tuple(lps), prompt_tokens, bound)

        return _Job([self._chat_scoring_call(req.prompt, read)], lambda parts: parts[0])

    def _generate_job(self, req: GenerateRequest) -> _Job:
        s = req.settings
        fields: dict[str, Any] = {"max_tokens": s.max_new_tokens, "temperature": s.temperature}
        if self._params is None or "seed" in self._params:
            fields["seed"] = s.seed
        if s.stop and (self._params is None or "stop" in self._params):
            fields["stop"] = list(s.stop[:_MAX_STOP])
        route = self._route(req.prompt)
        if route == "text":
            fields["prompt"] = req.prompt
        else:
            fields.update(self._chat_fields(req.prompt))

        def parse(data: dict[str, Any]) -> GenerateResult:
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
            cut = stop_at(text, s.stop)
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
            elif has_stop_reason or not s.stop:
                finish = "eos"
            else:
                finish = "stop" if reason == "stop" else "eos"
            return GenerateResult(text, finish, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))

        return _Job([_Call(route, fields, parse)], lambda parts: parts[0])

    # ------------------------------------------------------------------ the four request kinds
    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        todo = self._todo(len(requests), done)
        if not todo:
            return
        self._require_logprobs()
        jobs = {}
        for i in todo:
            calls, assemble = self._score_parts(requests[i].prompt, requests[i].candidates)
            jobs[i] = _Job(calls, assemble)
        yield from self._stream(jobs)

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        todo = self._todo(len(requests), done)
        if not todo:
            return
        self._require_logprobs()
        yield from self._stream({i: self._group_job(requests[i]) for i in todo})

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        todo = self._todo(len(requests), done)
        if not todo:
            return
        self._require_logprobs()
        yield from self._stream({i: self._next_token_job(requests[i]) for i in todo})

    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        todo = self._todo(len(requests), done)
        if not todo:
            return
        yield from self._stream({i: self._generate_job(requests[i]) for i in todo})

    @staticmethod
    def _todo(n: int, done: Sequence[bool] | None) -> list[int]:
        flags = list(done) if done is not None else [False] * n
        if len(flags) != n:
            raise ConfigError(f"done has {len(flags)} flags for {n} requests", parameter="done", value=len(flags))
        return [i for i in range(n) if not flags[i]]

    # ------------------------------------------------------------------ running: loop thread -> queue -> batches
    def _stream(self, jobs: dict[int, _Job]) -> Batches:
        """Run the jobs concurrently on the shared loop; yield each answer as soon as it is complete.

        A fatal error stops new requests, lets those in flight finish, yields
        their answers (so they are saved), then raises. So does a first
        Ctrl-C (KeyboardInterrupt) while waiting for answers: the requests in
        flight are already paid for, so their answers are awaited (within the
        request timeout) and handed over before the interrupt is raised again;
        a second Ctrl-C drops them. A consumer interrupted while it holds a
        batch may throw the KeyboardInterrupt in (``stream.throw``) for the
        same effect. Closing the generator early (a failing cache write)
        stops new requests; those in flight finish in the background and are
        dropped. What each answer was billed is kept for :meth:`take_usage`.
        """
        if self._closed:
            raise BackendError("this LiteLLMBackend is closed")
        results: queue.Queue[tuple[str, Any, Any]] = queue.Queue()
        control = _Control()
        loop = _LoopThread.get()

        def stop() -> None:
            if control.event is not None:
                control.event.set()
            else:
                control.stop_early = True

        self._usage = {}
        asyncio.run_coroutine_threadsafe(self._drive(jobs, results, control), loop)
        finished = False
        error: BaseException | None = None
        interrupted: KeyboardInterrupt | None = None

        def drain(exc: KeyboardInterrupt) -> None:
            """First Ctrl-C: stop sending, keep collecting what is in flight; a second one propagates."""
            nonlocal interrupted
            if interrupted is not None:
                raise exc
            interrupted = exc
            loop.call_soon_threadsafe(stop)
            log.warning(
                "interrupted: waiting up to %.0f s for the %d requests in flight (sent, so paid for) to save "
                "their answers; press Ctrl-C again to drop them",
                self.timeout, control.in_flight,
            )

        try:
            while not finished:
                try:
                    items = [results.get()]
                except KeyboardInterrupt as exc:
                    drain(exc)
                    continue
                while True:
                    try:
                        items.append(results.get_nowait())
                    except queue.Empty:
                        break
                batch = []
                for tag, a, b in items:
                    if tag == "done":
                        result, usage = b
                        self._usage[a] = usage
                        batch.append((a, result))
                    elif tag == "error" and error is None:
                        error = a
                    elif tag == "end":
                        finished = True
                if batch:
                    self.stats.requests += len(batch)
                    self.stats.batches += 1
                    try:
                        yield batch
                    except KeyboardInterrupt as exc:  # the consumer was interrupted and passed it on (Engine does)
                        drain(exc)
            if interrupted is not None:
                raise interrupted
            if error is not None:
                raise error
        finally:
            if not finished:
                # Stop starting requests; those in flight end by themselves within `timeout` and are
                # dropped. They are not cancelled: cancelling litellm mid-request leaks its coroutines.
                loop.call_soon_threadsafe(stop)

    def take_usage(self, indices: Sequence[int]) -> dict[int, Usage]:
        """What each of the answers just yielded (by request index) was billed; forgotten once taken."""
        return {i: self._usage.pop(i) for i in indices if i in self._usage}

    async def _drive(self, jobs: dict[int, _Job], results: queue.Queue[tuple[str, Any, Any]], control: _Control) -> None:
        stop = control.event = asyncio.Event()
        if control.stop_early:  # the consumer left before the run began
            stop.set()
        pending = [(j, k) for j, job in jobs.items() for k in range(len(job.calls))]
        pending.reverse()  # pop() from the end takes them in job order
        parts: dict[int, list[Any]] = {j: [None] * len(job.calls) for j, job in jobs.items()}
        left = {j: len(job.calls) for j, job in jobs.items()}
        spent = {j: Usage() for j in jobs}

        def fail(exc: BaseException) -> None:
            if not control.error_sent:
                control.error_sent = True
                results.put(("error", exc, None))
            stop.set()

        async def worker() -> None:
            while pending and not stop.is_set():
                j, k = pending.pop()
                control.in_flight += 1
                try:
                    value, usage = await self._attempts(jobs[j].calls[k], stop)
                except _Stopped:
                    return
                except (BackendError, ConfigError) as exc:
                    fail(exc)
                    return
                finally:
                    control.in_flight -= 1
                parts[j][k] = value
                spent[j].add(usage)
                left[j] -= 1
                if left[j] == 0:
                    try:
                        result = jobs[j].assemble(parts.pop(j))
                    except Exception as exc:  # a bug in reading: stop rather than guess
                        fail(BackendError(f"could not assemble an answer of {self.model}: {_redact(repr(exc))}"))
                        return
                    results.put(("done", j, (result, spent.pop(j))))

        try:
            n_calls = sum(len(job.calls) for job in jobs.values())
            await asyncio.gather(*(worker() for _ in range(min(self.max_concurrency, n_calls))))
        except Exception as exc:  # pragma: no cover - workers catch their own errors
            fail(BackendError(f"web-API worker failed: {_redact(repr(exc))}"))
        finally:
            results.put(("end", None, None))

    async def _sleep(self, seconds: float, stop: asyncio.Event) -> None:
        if seconds <= 0:
            return
        try:
            await asyncio.wait_for(stop.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            return
        raise _Stopped

    async def _attempts(self, call: _Call, stop: asyncio.Event) -> tuple[Any, Usage]:
        """Send one request until it succeeds, fails for good, or the run stops; return its answer and billing.

        The billing covers every response received for it, an unreadable one
        (retried) included.
        """
        attempt = 0
        tolerated: set[str] = set()
        spent = Usage()
        while True:
            if stop.is_set():
                raise _Stopped
            if self._limiter is not None:
                await self._sleep(self._limiter.reserve(), stop)
            self.stats.api_calls += 1
            try:
                data = _as_dict(await self._send(call))
                spent.add(self._account(data))
                return call.parse(data), spent
            except (BackendError, ConfigError, _Stopped, asyncio.CancelledError):
                raise
            except Exception as exc:
                warning = escalated_warning(exc)  # the caller's filters made a warning an error: not the request's fault
                seen = None if warning is None else f"{type(warning).__name__}: {warning}"
                if seen is not None and seen not in tolerated and len(tolerated) < _MAX_TOLERATED_WARNINGS:
                    tolerated.add(seen)  # the same warning twice means its filter did not hold: a real failure
                    tolerate_warning(warning)
                    self.stats.api_calls -= 1  # raised while litellm built the request: nothing reached the provider
                    continue
                kind, wait_hint, summary = self._classify(exc)
            if attempt >= self.retry.max_retries:
                raise BackendError(
                    f"{self.model}: a request failed {attempt + 1} times ({summary}); giving up after max_retries="
                    f"{self.retry.max_retries}. Answers already received are saved; rerun the same command to resume."
                )
            if wait_hint is not None and wait_hint > self.retry.max_retry_after:
                raise BackendError(
                    f"{self.model}: the provider asks to wait {wait_hint:.0f} s before retrying (over max_retry_after="
                    f"{self.retry.max_retry_after:.0f} s; quota exhausted?). Answers already received are saved; "
                    "rerun later to resume."
                )
            setattr(self.stats, kind, getattr(self.stats, kind) + 1)
            self.stats.retries += 1
            delay = self.retry.delay(attempt, wait_hint)
            log.info("%s: retry %d in %.2f s after %s", self.model, attempt + 1, delay, summary)
            await self._sleep(delay, stop)
            attempt += 1

    async def _send(self, call: _Call) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, **self.litellm_options, **call.kwargs}
        kwargs.update(timeout=self.timeout, num_retries=0, max_retries=0)
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(f"{self.api_key_env} is no longer set in the environment", parameter="api_key_env")
            kwargs["api_key"] = key
        if call.route == "text":
            if self._provider in ("openai", "text-completion-openai"):
                kwargs["client"] = self._text_client(kwargs.get("api_key"))
            return await self._litellm.atext_completion(**kwargs)
        return await self._litellm.acompletion(**kwargs)

    def _text_client(self, api_key: str | None) -> Any:
        """One OpenAI client for the text-completion route, reused across requests (runs on the loop thread).

        litellm builds (and never closes) a new client for every text
        completion, leaking a connection each time; handing it one client
        keeps connections pooled. Its own retries are off; the key is read
        from the environment by the client, or given from ``api_key_env``.
        """
        if self._client is None:
            openai = require("openai", feature=_FEATURE)
            self._client = openai.AsyncOpenAI(base_url=self.api_base, api_key=api_key, max_retries=0, timeout=self.timeout)
            _LoopThread.clients.append(self._client)
        return self._client

    def _account(self, data: Mapping[str, Any]) -> Usage:
        """Add one response's billed tokens and price to the session's stats; return them."""
        usage = data.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        self.stats.prompt_tokens += prompt
        self.stats.completion_tokens += completion
        cost: float | None = None
        if self.stats.cost_known:
            cost = 0.0
            if prompt or completion:
                try:
                    a, b = self._litellm.cost_per_token(
                        model=self._model_name, custom_llm_provider=self._provider, prompt_tokens=prompt, completion_tokens=completion
                    )
                    cost = float(a) + float(b)
                    self.stats.cost_usd += cost
                except Exception:
                    self.stats.cost_known = False
                    cost = None
        return Usage(1, prompt, completion, cost)

    def _classify(self, exc: BaseException) -> tuple[str, float | None, str]:
        """(stats counter, Retry-After seconds, summary) of a retryable failure; raises for the others."""
        lt = self._litellm
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        message = _redact(str(getattr(exc, "message", None) or exc))[:300]
        summary = f"{type(exc).__name__}{f' HTTP {status}' if status else ''}: {message}"
        if isinstance(exc, _Garbage):
            return "server_errors", None, f"unreadable response: {exc}"
        kinds = {c.__name__ for c in type(exc).__mro__}
        if isinstance(exc, getattr(lt, "Timeout", ())) or status == 408 or "APITimeoutError" in kinds:
            return "timeouts", None, summary
        if kinds & {"APIConnectionError", "ConnectError", "ConnectionError"} or "connection error" in message.lower():
            # no HTTP exchange took place: litellm files these under status 500, which would read as a server fault
            where = self.api_base or f"the {self._provider} API"
            return "connection_errors", None, f"could not connect to {where} ({type(exc).__name__}: {message})"
        if "missing credentials" in message.lower() or status in (401, 403) or isinstance(exc, getattr(lt, "AuthenticationError", ())):
            raise ConfigError(
                f"{self.model} refused the credentials (HTTP {status or 401}): {message}. Check the API key in the "
                f"environment ({self.api_key_env or 'the provider variable, e.g. OPENAI_API_KEY'}). No retry: it cannot succeed.",
                parameter="api_key",
            ) from None
        if status == 429 or isinstance(exc, getattr(lt, "RateLimitError", ())):
            return "rate_limited", _retry_after(exc), summary
        if status is not None and (status >= 500 or status in (409, 425)):
            return "server_errors", _retry_after(exc), summary
        if isinstance(exc, getattr(lt, "ContextWindowExceededError", ())):
            raise ConfigError(
                f"a prompt is longer than {self.model}'s context window ({message}); shorten the prompts", parameter="prompt"
            ) from None
        if status is not None and 400 <= status < 500:
            raise BackendError(
                f"{self.model} rejected a request with HTTP {status} ({message}); no retry, it cannot succeed. "
                "Answers already received are saved."
            ) from None
        if isinstance(exc, getattr(lt, "APIError", ())) or type(exc).__module__.startswith(("openai", "httpx", "aiohttp")):
            return "server_errors", None, summary
        raise BackendError(f"{self.model}: unexpected error from litellm: {summary}") from None
