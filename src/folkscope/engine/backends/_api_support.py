"""Pieces of the web-API backend that do not talk to a provider: secrets, the loop thread, stats,
option checks, response helpers and the tokenizer stand-in (see :mod:`folkscope.engine.backends.api`)."""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import math
import os
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from folkscope._deps import require
from folkscope.engine.backends.base import BackendStats
from folkscope.engine.ratelimit import parse_retry_after
from folkscope.errors import ConfigError

__all__ = ["APIBackendStats", "APICapabilities", "APITokenizer"]

log = logging.getLogger(__name__)

_FEATURE = "the web-API backend (litellm)"
#: bump when the way answers are read from responses changes (part of the cache namespace)
SCORING_VERSION = 1
MODES = ("auto", "chat", "completions")
#: providers whose text-completion endpoint litellm calls natively (so echo and logprobs reach it)
_TEXT_PROVIDERS = ("openai", "text-completion-openai", "azure_text")
#: providers that are OpenAI-compatible servers when given an api_base (they accept vLLM's extra fields)
_COMPATIBLE = ("openai", "text-completion-openai", "hosted_vllm")
_PROMPTS_PER_CALL = 32
_MAX_STOP = 4  # OpenAI's limit on stop sequences; the rest are applied locally
_CONTROLLED = {
    "model": "the model argument", "messages": "the request", "prompt": "the request", "logprobs": "the request kind",
    "top_logprobs": "top_logprobs", "echo": "the scoring route", "max_tokens": "GenerationSettings.max_new_tokens",
    "max_completion_tokens": "GenerationSettings.max_new_tokens", "temperature": "GenerationSettings.temperature",
    "seed": "GenerationSettings.seed", "stop": "GenerationSettings.stop", "n": "one answer per request",
    "stream": "whole answers only", "num_retries": "max_retries", "max_retries": "max_retries", "timeout": "timeout",
    "api_base": "api_base", "base_url": "api_base", "client": "the backend's own clients",
}  # fmt: skip
_OTHER_BACKENDS = ("share_prefixes", "strategy", "window", "attn_implementation", "self_check", "revision")
_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|credential|authorization", re.IGNORECASE)
_NO_LOGPROBS_MODES = (
    "modes that only generate text still work: chain-of-thought (cot_prompting=True / --cot-prompting), "
    "which reads 'Probability: X%' from the generated answer"
)


# ---------------------------------------------------------------------- secrets and logging
def _secret_values() -> list[str]:
    """Values of environment variables that look like credentials (to scrub from messages)."""
    out = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and v and len(v) >= 6]
    return sorted(set(out), key=len, reverse=True)


def _redact(text: str, extra: Sequence[str] = ()) -> str:
    """``text`` with every secret-looking environment value (and ``extra``) replaced by ``[redacted]``."""
    for secret in (*extra, *_secret_values()):
        if secret:
            text = text.replace(secret, "[redacted]")
    return re.sub(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{6,}", r"\1[redacted]", text)


def _quiet_third_party_loggers() -> None:
    """Keep loggers that may print request details (headers, URLs with keys) at WARNING unless configured."""
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "openai", "httpx", "httpcore", "httpx2", "httpcore2"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)


def _litellm() -> Any:
    """Import litellm with its bundled cost map (offline, reproducible) and its debug output off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm: Any = require("litellm", feature=_FEATURE)
    litellm.suppress_debug_info = True
    _quiet_third_party_loggers()
    return litellm


def escalated_warning(exc: BaseException) -> Warning | None:
    """The warning behind ``exc``, if a warning raised as an error caused it (litellm re-wraps it).

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise UserWarning("a note")
    ...     except UserWarning as inner:
    ...         raise ConnectionError("wrapped") from inner
    ... except ConnectionError as outer:
    ...     print(repr(escalated_warning(outer)))
    UserWarning('a note')
    >>> escalated_warning(ValueError("no warning here")) is None
    True
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Warning):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def tolerate_warning(exc: Warning) -> None:
    """Stop a third-party warning that the caller's filters turned into an exception from doing so again.

    Under ``-W error`` or pytest's ``filterwarnings = error``, a warning raised
    deep inside litellm or pydantic (e.g. pydantic's note on ``ReadOnly``
    TypedDict items, emitted when litellm builds a response model lazily)
    aborts the request it happened in. It says nothing about the request,
    so the caller logs it, ignores exactly that message from then on, and
    sends the request again. The filter is a plain process-wide entry rather
    than ``catch_warnings``, which is not safe with concurrent requests.
    """
    log.debug("third-party warning during a web-API request, ignored from now on: %s: %s", type(exc).__name__, exc)
    warnings.filterwarnings("ignore", message=re.escape(str(exc)), category=type(exc))


# ---------------------------------------------------------------------- the shared event loop
class _LoopThread:
    """One asyncio loop in a daemon thread, shared by every backend in the process.

    litellm caches its async HTTP clients per event loop; a loop per call or
    per backend would leave clients bound to dead loops, so there is one,
    closed at interpreter exit.
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _registered = False
    clients: list[Any] = []

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._thread is None or not cls._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="folkscope-api-loop", daemon=True)
                thread.start()
                cls._loop, cls._thread = loop, thread
            if not cls._registered:  # after litellm's own exit hook, so this one runs first (LIFO)
                atexit.register(cls.shutdown)
                cls._registered = True
            return cls._loop

    @classmethod
    def close_client(cls, client: Any) -> None:
        """Close an async HTTP client on the loop it was used on."""
        if client in cls.clients:
            cls.clients.remove(client)
        loop = cls._loop
        if loop is None or not loop.is_running():
            return
        try:
            asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5)
        except Exception:  # closing is best effort
            log.debug("could not close a web-API client", exc_info=True)

    @classmethod
    def shutdown(cls) -> None:
        """At exit: close every client (ours and litellm's cached ones) on the loop, then stop it."""
        for client in list(cls.clients):
            cls.close_client(client)
        with cls._lock:
            loop, thread = cls._loop, cls._thread
            cls._loop = cls._thread = None
        if loop is None or thread is None:
            return
        try:
            from litellm.llms.custom_httpx.async_client_cleanup import (
                close_litellm_async_clients,
            )

            asyncio.run_coroutine_threadsafe(close_litellm_async_clients(), loop).result(timeout=5)
        except Exception:
            log.debug("could not close litellm's clients", exc_info=True)

        async def cancel_rest() -> None:  # e.g. litellm's logging worker, requests left by a closed stream
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_rest(), loop).result(timeout=5)
        except Exception:
            log.debug("could not cancel pending web-API tasks", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()


# ---------------------------------------------------------------------- stats and capabilities
@dataclass
class APIBackendStats(BackendStats):
    """:class:`BackendStats` plus what a web API costs and how it behaved.

    Attributes
    ----------
    api_calls : int
        HTTP requests sent (retries included).
    retries : int
        Requests sent again after a transient failure.
    rate_limited, timeouts, server_errors, connection_errors : int
        Transient failures by kind (server errors include unreadable bodies).
    prompt_tokens, completion_tokens : int
        As the provider reported them (billed tokens).
    cost_usd : float
        litellm's price of those tokens; 0 when the price is unknown.
    cost_known : bool
        False when litellm has no price for this model (``cost_usd`` is then not the cost).
    missing_candidates : int
        Candidates left NaN (not among the top log-probabilities, or not a continuation).
    marked_rows : int
        Results with at least one NaN candidate.
    """

    api_calls: int = 0
    retries: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    server_errors: int = 0
    connection_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    missing_candidates: int = 0
    marked_rows: int = 0


@dataclass(frozen=True)
class APICapabilities:
    """What a web-API model can do, known before any request.

    Attributes
    ----------
    model, provider : str
    logprobs : bool or None
        False: litellm says the provider returns no log-probabilities (no
        probability scoring); None: unknown (assumed yes, checked on every response).
    completions : bool
        A plain-text completions endpoint with echo (exact scoring of any continuation).
    assistant_prefill : bool
        ``ChatPrompt.prefill`` can be sent as a final assistant message.
    cost_known : bool
        litellm has a price for this model.
    exact_token_counts : bool
        :meth:`LiteLLMBackend.count_tokens` uses the model's own tokenizer
        family (False: litellm's bundled cl100k encoding as an estimate).
    """

    model: str
    provider: str
    logprobs: bool | None
    completions: bool
    assistant_prefill: bool
    cost_known: bool
    exact_token_counts: bool

    @property
    def scoring_modes(self) -> str:
        """One line: which prompting modes work with this model."""
        if self.logprobs is False:
            return f"{self.model} returns no log-probabilities: multiple-choice and numeric scoring are unavailable; {_NO_LOGPROBS_MODES}"
        how = "exact echo scoring of plain-text prompts" if self.completions else "top-log-probability scoring of chat prompts"
        return f"{self.model}: every mode works ({how}{', chat prompts with prefill' if self.assistant_prefill else ''})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Stopped(Exception):
    """A worker noticed that the run is stopping (another request failed, or the consumer left)."""


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
    """The HTTP requests answering one engine request, and how their answers combine."""

    calls: list[_Call]
    assemble: Callable[[list[Any]], Any]


@dataclass
class _Control:
    """Shared between the consumer and the loop: the stop signal and whether an error was reported."""

    event: asyncio.Event | None = None
    stop_early: bool = False
    error_sent: bool = False
    in_flight: int = 0  # requests sent and not yet answered (touched on the loop thread only)


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


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        items = headers.items()
    except AttributeError:
        return None
    for key, value in items:
        if str(key).lower() == name:
            return str(value)
    return None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a failed response's ``Retry-After`` / ``retry-after-ms`` header, if any."""
    sources = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    )
    for headers in sources:
        ms = _header(headers, "retry-after-ms")
        if ms is not None:
            value = parse_retry_after(ms)
            if value is not None:
                return value / 1000.0
        value = parse_retry_after(_header(headers, "retry-after"))
        if value is not None:
            return value
    return None


def _check_int(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ConfigError(f"{name} must be an integer {rng}, got {value!r}", parameter=name, value=value)
    return value


def _check_seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a finite number of seconds > 0, got {value!r}", parameter=name, value=value)
    return float(value)


def _safe_base(api_base: object) -> str | None:
    """The API base URL, checked: http(s), a host, no credentials or query in it."""
    if api_base is None:
        return None
    if not isinstance(api_base, str) or not api_base.strip():
        raise ConfigError(f"api_base must be a URL string, got {type(api_base).__name__}", parameter="api_base")
    parts = urlsplit(api_base.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"api_base must be an http(s) URL such as 'http://127.0.0.1:8000/v1', got {_redact(api_base)!r}", parameter="api_base"
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError(
            "api_base must not carry credentials, a query or a fragment (keys come only from the environment)",
            parameter="api_base",
        )
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def _check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """litellm pass-through options: no keys, nothing the backend controls, JSON-able (they key the cache)."""
    out: dict[str, Any] = {}
    for name, value in options.items():
        if name in ("device", "dtype"):
            raise ConfigError(
                f"{name}={value!r} means nothing for a web API (the provider runs the model); leave it unset",
                parameter=name,
                value=value,
            )
        if name in _CONTROLLED:
            raise ConfigError(
                f"option {name!r} is set by the web-API backend (from {_CONTROLLED[name]}); do not pass it",
                parameter=name,
            )
        if name in _OTHER_BACKENDS:
            raise ConfigError(f"{name!r} is an option of the local backends, not of the web-API backend", parameter=name)
        if _SECRET_NAME.search(name):
            raise ConfigError(
                f"option {name!r} looks like a credential; API keys come only from the environment "
                "(the provider's variable, e.g. OPENAI_API_KEY, or api_key_env='VARIABLE_NAME')",
                parameter=name,
            )
        if name in ("extra_headers", "headers") and isinstance(value, Mapping):
            bad = [h for h in value if _SECRET_NAME.search(str(h))]
            if bad:
                raise ConfigError(
                    f"header(s) {bad} look like credentials; API keys come only from the environment", parameter=name
                )
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise ConfigError(
                f"option {name!r} must be JSON data (it is part of the result-cache key), got {type(value).__name__}",
                parameter=name,
            ) from None
        out[name] = value
    return out


# ---------------------------------------------------------------------- tokenizer stand-in
class APITokenizer:
    """What a web API offers in place of a tokenizer: token counts and a readable rendering.

    The provider's tokenizer is not available locally. Counts come from
    ``litellm.token_counter``: the model's own tiktoken encoding where litellm
    bundles it, else litellm's bundled cl100k encoding as an estimate
    (litellm would otherwise download a Hugging Face tokenizer; this never
    reaches the network). Token ids from :meth:`__call__` are from the same
    encoding: fine for lengths, not the provider's real ids.
    """

    chat_template = "(applied by the provider)"

    def __init__(self, model: str, custom: dict[str, Any] | None) -> None:
        self._model = model
        self._custom = custom
        self._litellm = _litellm()

    def count(self, text: str | None = None, messages: list[dict[str, str]] | None = None) -> int:
        kwargs: dict[str, Any] = {"model": self._model}
        if self._custom is not None:
            kwargs["custom_tokenizer"] = self._custom
        return int(self._litellm.token_counter(text=text, messages=messages, **kwargs))

    def __call__(self, text: str | Sequence[str], add_special_tokens: bool = True, **kwargs: Any) -> dict[str, Any]:
        def one(t: str) -> list[int]:
            return [int(i) for i in self._litellm.encode(model=self._model, text=t, custom_tokenizer=self._custom)]

        return {"input_ids": one(text) if isinstance(text, str) else [one(t) for t in text]}

    def decode(self, ids: Sequence[int], **kwargs: Any) -> str:
        return str(self._litellm.decode(model=self._model, tokens=list(ids), custom_tokenizer=self._custom))

    def apply_chat_template(self, conversation: Any, tokenize: bool = False, add_generation_prompt: bool = True, **kwargs: Any) -> str:
        text = "".join(f"[{m['role']}]\n{m['content']}\n" for m in conversation)
        return text + ("[assistant]\n" if add_generation_prompt else "")


