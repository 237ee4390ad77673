"""The only code that talks to models: requests in, probabilities or text out.

Request kinds (frozen, one response type each): :class:`ScoreRequest`,
:class:`PrefixGroupRequest`, :class:`NextTokenRequest`,
:class:`GenerateRequest`. :class:`Engine` answers them through a backend
(``"transformers"``, ``"vllm"``, ``"litellm"`` or ``"fake"``, chosen by
name), with an append-only, resumable result cache. Local backends plan
their work with :mod:`folkscope.engine.batching` (the prefix tree of each
batch, batches under a token budget).

``import folkscope.engine`` never imports torch or transformers; the
transformers backend imports them when it is built.

Examples
--------
>>> from folkscope.engine import Engine, ScoreRequest
>>> engine = Engine.from_model("tiny", backend="fake", use_cache=False)
>>> result = engine.score([ScoreRequest("The answer is", (" A", " B"))])[0]
>>> len(result.logprobs)
2
"""

from folkscope.engine.backends import available_backends, create_backend, get_backend, register_backend
from folkscope.engine.backends.base import Backend, BackendStats
from folkscope.engine.cache import ResultCache, default_cache_dir
from folkscope.engine.config import EngineConfig
from folkscope.engine.lifetime import engine_for_run
from folkscope.engine.models import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_HUB_ID,
    ResolvedModel,
    convert_gguf,
    default_model_path,
    download_models,
    ensure_default_model,
    load_model_tokenizer,
    resolve_model,
)
from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    GenerateResult,
    GenerationSettings,
    Message,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    ScoreRequest,
    ScoreResult,
    request_key,
)
from folkscope.engine.runner import Engine, EngineStats
from folkscope.engine.tokens import VariantSet, expand_variants, token_variants, word_variants
from folkscope.engine.usage import run_accounting, usage_line

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_HUB_ID",
    "Backend",
    "BackendStats",
    "ChatPrompt",
    "Engine",
    "EngineConfig",
    "EngineStats",
    "GenerateRequest",
    "GenerateResult",
    "GenerationSettings",
    "Message",
    "NextTokenRequest",
    "NextTokenResult",
    "PrefixGroupRequest",
    "PrefixGroupResult",
    "ResolvedModel",
    "ResultCache",
    "ScoreRequest",
    "ScoreResult",
    "VariantSet",
    "available_backends",
    "convert_gguf",
    "create_backend",
    "default_cache_dir",
    "default_model_path",
    "download_models",
    "engine_for_run",
    "ensure_default_model",
    "expand_variants",
    "get_backend",
    "load_model_tokenizer",
    "register_backend",
    "request_key",
    "resolve_model",
    "run_accounting",
    "token_variants",
    "usage_line",
    "word_variants",
]
