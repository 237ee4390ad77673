"""The only code that talks to models: requests in, probabilities or text out."""

from folkscope.engine.models import (
    DEFAULT_MODEL,
    DEFAULT_MODEL_HUB_ID,
    ResolvedModel,
    convert_gguf,
    default_model_path,
    download_models,
    ensure_default_model,
    resolve_model,
)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_HUB_ID",
    "ResolvedModel",
    "convert_gguf",
    "default_model_path",
    "download_models",
    "ensure_default_model",
    "resolve_model",
]
