"""The engine flags, generated from :class:`~folkscope.engine.EngineConfig`'s fields, for every command that talks to a model.

``run``, ``evidence`` and ``numeric`` add the same flags with the same help
(read from the fields' docs) and turn them into one checked
:class:`~folkscope.engine.EngineConfig`. folktexts' names are kept:
``--use-web-api-model`` selects the litellm backend, ``--max-api-rpm``,
``--inference-backend`` and the vLLM flags mean what they mean there.
"""

from __future__ import annotations

import argparse
from typing import Any

from folkscope.cli.config_flags import add_config_flags, config_values
from folkscope.engine.config import EngineConfig
from folkscope.engine.devices import check_device
from folkscope.errors import ConfigError
from folkscope.paths import check_writable_dir

__all__ = ["add_engine_arguments", "engine_config_from_args", "engine_from_args"]

_GROUPS = {
    "api": "web APIs (litellm; keys come from the environment, e.g. OPENAI_API_KEY)",
    "vllm": "vLLM (--inference-backend vllm)",
}


def add_engine_arguments(
    parser: argparse.ArgumentParser, *, model_group: Any = None, inference_group: Any = None
) -> None:
    """Add every engine flag: ``--model`` and the inference flags to the given groups, then the web-API and vLLM groups."""
    groups = {"model": model_group or parser, "inference": inference_group or parser.add_argument_group("inference")}
    for name, title in _GROUPS.items():
        groups[name] = parser.add_argument_group(title)
    add_config_flags(parser, EngineConfig, groups=groups)
    groups["api"].add_argument(
        "--use-web-api-model",
        action="store_true",
        help="--model is a litellm model id of a web API, e.g. openai/gpt-4o-mini",
    )


def engine_config_from_args(args: argparse.Namespace) -> EngineConfig:
    """The :class:`EngineConfig` of parsed flags (checked: a flag of another backend is one clear line).

    Raises
    ------
    ConfigError
        ``--use-web-api-model`` with another ``--inference-backend``, a
        ``--device`` this machine does not have, a ``--cache-dir`` that
        cannot be written, or any check of :class:`EngineConfig`.
    """
    values = config_values(args, EngineConfig)
    if args.use_web_api_model:
        backend = values["backend"]
        if backend not in ("transformers", "litellm"):  # transformers is only the flag's default here
            raise ConfigError(
                f"--use-web-api-model and --inference-backend {backend} exclude each other; a web API model runs on the provider's servers",
                parameter="inference_backend",
                value=backend,
            )
        values["backend"] = "litellm"
    config = EngineConfig(**values)
    if config.backend in (
        "transformers",
        "vllm",
    ):  # --device cuda:5 on a machine without it: now, not after the data and model load
        check_device(config.device)
    if config.use_cache and config.cache_dir is not None:
        check_writable_dir(
            config.cache_dir, flag="--cache-dir", what="the result cache"
        )  # not after the model has answered
    return config


def engine_from_args(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """The backend name and its options (beyond model, device and dtype) of parsed flags."""
    config = engine_config_from_args(args)
    return config.backend, config.backend_options()
