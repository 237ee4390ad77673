"""What the web-API backend settles before it sends anything: checked options, secrets, capabilities.

Why it exists
-------------
Everything here is decided once, when a backend is built, and never talks
to a provider: option and URL checks (no key ever in an option), scrubbing
secrets from messages, what litellm's tables say the model can do
(:class:`APICapabilities`), the stats type and the tokenizer stand-in.
Sending is :mod:`._api_transport`, the wire format :mod:`._api_wire`,
billing :mod:`._api_billing`; the backend itself is
:mod:`folkscope.engine.backends.api`.

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
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from folkscope._deps import require
from folkscope.engine.backends.base import BackendStats
from folkscope.engine.config import API_SCORE_MODES
from folkscope.errors import ConfigError

__all__ = [
    "APIBackendStats",
    "APICapabilities",
    "APITokenizer",
    "check_key",
    "fallback_encoding",
    "hf_tokenizer_kind",
    "probe",
]

_FEATURE = "the web-API backend (litellm)"
#: bump when the way answers are read from responses changes (part of the cache namespace)
SCORING_VERSION = 1
MODES = ("auto", "chat", "completions")
#: providers whose text-completion endpoint litellm calls natively (so echo and logprobs reach it)
_TEXT_PROVIDERS = ("openai", "text-completion-openai", "azure_text")
#: providers that are OpenAI-compatible servers when given an api_base (they accept vLLM's extra fields)
_COMPATIBLE = ("openai", "text-completion-openai", "hosted_vllm")
_CONTROLLED = {
    "model": "the model argument",
    "messages": "the request",
    "prompt": "the request",
    "logprobs": "the request kind",
    "top_logprobs": "top_logprobs",
    "echo": "the scoring route",
    "max_tokens": "GenerationSettings.max_new_tokens",
    "max_completion_tokens": "GenerationSettings.max_new_tokens",
    "temperature": "GenerationSettings.temperature",
    "seed": "GenerationSettings.seed",
    "stop": "GenerationSettings.stop",
    "n": "one answer per request",
    "stream": "whole answers only",
    "num_retries": "max_retries",
    "max_retries": "max_retries",
    "timeout": "timeout",
    "api_base": "api_base",
    "base_url": "api_base",
    "client": "the backend's own clients",
}
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
    echo_candidates : int
        Candidates of plain-text prompts scored by echo after a top-k request left them open
        (missing, and able to matter by the bound rule).
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
    echo_candidates: int = 0


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
        how = (
            "exact echo scoring of plain-text prompts"
            if self.completions
            else "top-log-probability scoring of chat prompts"
        )
        return (
            f"{self.model}: every mode works ({how}{', chat prompts with prefill' if self.assistant_prefill else ''})"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------- what litellm's tables say, before any request
def probe(
    litellm: Any, model: str, api_base: str | None, assistant_prefill: bool | None
) -> tuple[APICapabilities, str, str, set[str] | None]:
    """What litellm's tables say about ``model``, before any request.

    Returns its capabilities, litellm's model name and provider for it, and
    the OpenAI parameters the provider supports (None: unknown, decided per response).
    """
    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception as exc:
        raise ConfigError(
            f"litellm does not know how to reach model {model!r} ({_redact(str(exc))[:300]}); "
            "use '<provider>/<model>', e.g. 'openai/gpt-4o-mini', or 'openai/<name>' with api_base for an "
            "OpenAI-compatible server",
            parameter="model",
            value=model,
        ) from None
    model_name, provider_name = str(name), str(provider)
    try:
        params = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:  # unknown model or provider table: decide per response
        params = None
    supported: set[str] | None = set(params) if params else None
    logprobs = None if supported is None else ("logprobs" in supported)
    if logprobs and supported is not None and "top_logprobs" not in supported and provider not in _TEXT_PROVIDERS:
        logprobs = None  # log-probabilities of the chosen token only; top-k is checked per response
    completions = provider in _TEXT_PROVIDERS and not (
        provider == "openai" and name in getattr(litellm, "open_ai_chat_completion_models", ())
    )
    if assistant_prefill is None:
        try:
            from litellm.utils import supports_factory

            assistant_prefill = bool(supports_factory(name, provider, "supports_assistant_prefill"))
        except Exception:
            assistant_prefill = False
    try:
        litellm.cost_per_token(model=name, custom_llm_provider=provider, prompt_tokens=1, completion_tokens=1)
        cost_known = True
    except Exception:
        cost_known = False
    caps = APICapabilities(
        model=model,
        provider=provider_name,
        logprobs=logprobs,
        completions=completions,
        assistant_prefill=bool(assistant_prefill),
        cost_known=cost_known,
        exact_token_counts=hf_tokenizer_kind(litellm, name) is None,
    )
    return caps, model_name, provider_name, supported


def hf_tokenizer_kind(litellm: Any, name: str) -> str | None:
    """Which Hugging Face tokenizer litellm would download to count tokens (None: a bundled one)."""
    fn = getattr(getattr(litellm, "utils", None), "huggingface_tokenizer_kind", None)
    if callable(fn):
        try:
            kind = fn(name)
            return None if kind is None else str(kind)
        except Exception:
            pass
    low = name.lower()
    return (
        "hf"
        if any(s in low for s in ("llama-2", "llama-3", "replicate", "command-r", "claude-2", "claude-instant"))
        else None
    )


def fallback_encoding(model_name: str) -> dict[str, Any]:
    """litellm's bundled OpenAI encoding, to count tokens of a model whose own tokenizer it would download."""
    from litellm.utils import _return_openai_tokenizer

    return dict(_return_openai_tokenizer(model_name))


def check_key(litellm: Any, *, model: str, provider: str, api_base: str | None, api_key_env: str | None) -> None:
    """Fail now, naming the variable (never its value), when no key is configured."""
    if api_key_env is not None:
        if not os.environ.get(api_key_env):
            raise ConfigError(
                f"api_key_env names {api_key_env}, which is not set in the environment", parameter="api_key_env"
            )
        return
    try:
        report = litellm.validate_environment(model=model)
    except Exception:
        return
    missing = [k for k in report.get("missing_keys") or [] if not (api_base and k.endswith("_API_BASE"))]
    if provider in ("openai", "text-completion-openai") and not os.environ.get("OPENAI_API_KEY"):
        missing = sorted(set(missing) | {"OPENAI_API_KEY"})
    if missing and not any(os.environ.get(k) for k in missing):
        hint = " (any value works for a local server that does not check keys)" if api_base else ""
        raise ConfigError(
            f"no API key for {model}: set {' or '.join(missing)} in the environment{hint}, "
            "or name another variable with api_key_env",
            parameter="api_key",
        )


# ---------------------------------------------------------------------- option checks
def _check_int(value: object, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ConfigError(f"{name} must be an integer {rng}, got {value!r}", parameter=name, value=value)
    return value


def _check_seconds(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a finite number of seconds > 0, got {value!r}", parameter=name, value=value)
    return float(value)


def _check_rpm(max_rpm: object) -> float | None:
    if max_rpm is not None and (isinstance(max_rpm, bool) or not isinstance(max_rpm, (int, float))):
        raise ConfigError(
            f"max_rpm must be a positive number or None, got {max_rpm!r}", parameter="max_rpm", value=max_rpm
        )
    return None if max_rpm is None else float(max_rpm)


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}, got {mode!r}", parameter="mode", value=mode)
    return mode


def _check_score_mode(score_mode: str) -> str:
    if score_mode not in API_SCORE_MODES:
        raise ConfigError(
            f"score_mode must be one of {', '.join(API_SCORE_MODES)}, got {score_mode!r}",
            parameter="score_mode",
            value=score_mode,
        )
    return score_mode


def _check_key_env(api_key_env: str | None) -> str | None:
    """The NAME of the variable holding the key (never a key: a name must look like one)."""
    if api_key_env is not None:
        if not isinstance(api_key_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", api_key_env):
            raise ConfigError(
                "api_key_env must be the NAME of an environment variable (e.g. 'MY_PROVIDER_KEY'), never the key itself",
                parameter="api_key_env",
            )
    return api_key_env


def _check_prefill(assistant_prefill: object) -> None:
    if assistant_prefill is not None and not isinstance(assistant_prefill, bool):
        raise ConfigError(
            f"assistant_prefill must be True, False or None, got {assistant_prefill!r}", parameter="assistant_prefill"
        )


def _safe_base(api_base: object) -> str | None:
    """The API base URL, checked: http(s), a host, no credentials or query in it."""
    if api_base is None:
        return None
    if not isinstance(api_base, str) or not api_base.strip():
        raise ConfigError(f"api_base must be a URL string, got {type(api_base).__name__}", parameter="api_base")
    parts = urlsplit(api_base.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"api_base must be an http(s) URL such as 'http://127.0.0.1:8000/v1', got {_redact(api_base)!r}",
            parameter="api_base",
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
            raise ConfigError(
                f"{name!r} is an option of the local backends, not of the web-API backend", parameter=name
            )
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

    def apply_chat_template(
        self, conversation: Any, tokenize: bool = False, add_generation_prompt: bool = True, **kwargs: Any
    ) -> str:
        text = "".join(f"[{m['role']}]\n{m['content']}\n" for m in conversation)
        return text + ("[assistant]\n" if add_generation_prompt else "")
