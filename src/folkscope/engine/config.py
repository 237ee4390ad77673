"""One engine configuration: which model, on which backend, with which settings.

Every command that talks to a model (``run``, ``evidence``, ``numeric``, and
the parts to come) builds the same :class:`EngineConfig` from the same flags
(:mod:`folkscope.cli.engine_args` generates them from the fields below) and
passes it whole to :meth:`Engine.from_config <folkscope.engine.Engine.from_config>`.
Its checks run once, here, when it is built, before any model loads: options
of one backend given to another are refused with the flag that fixes it.

Fields declare their own help text, flag and flag group
(:func:`folkscope._config.option`), so the CLI and the docs read them from one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from folkscope._config import config_fields, flag_named, option
from folkscope._deps import require
from folkscope.engine.devices import check_device, check_dtype
from folkscope.errors import ConfigError

__all__ = ["API_OPTIONS", "API_SCORE_MODES", "BACKENDS", "VLLM_OPTIONS", "EngineConfig", "check_max_cost"]

#: backends a configuration may name (``fake`` answers deterministically, for tests and dry runs; ``replay``
#: serves log-likelihoods another harness computed, from an answers folder)
BACKENDS = ("transformers", "vllm", "litellm", "fake", "replay")
#: options only web APIs take (litellm)
API_OPTIONS = ("max_rpm", "api_base", "max_concurrency", "assistant_prefill", "score_mode", "max_cost", "approve_cost")
#: how web APIs score plain-text prompts (LiteLLMBackend's ``score_mode``)
API_SCORE_MODES = ("topk", "echo")
#: options only vLLM takes
VLLM_OPTIONS = ("gpu_memory_utilization", "max_model_len", "vllm_dtype", "tensor_parallel_size")
_LOCAL_ONLY = ("device", "dtype")


def check_max_cost(value: object, name: str = "max_cost") -> float:
    """A spending limit in USD: a finite number >= 0 (the config's flag and the web-API backend's parameter alike)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
        raise ConfigError(f"{name} must be a number of USD >= 0, got {value!r}", parameter="max_cost", value=value)
    return float(value)


def _meta(doc: str, flag: str, group: str = "inference", **extra: Any) -> dict[str, Any]:
    return option(doc, flag=flag, group=group, **extra)


@dataclass(frozen=True)
class EngineConfig:
    """Everything that says which model answers and how (checked when built).

    Examples
    --------
    >>> EngineConfig(model="openai/gpt-4o-mini", backend="litellm", max_rpm=60).backend_options()
    {'max_rpm': 60}
    >>> EngineConfig(backend="litellm", model="openai/x", device="cpu")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: --device does not apply to web API models
    """

    model: str = field(
        default="default",
        metadata=_meta(
            "'default' (SmolLM2-135M-Instruct, offline), a local folder, a .gguf file, a hub id, or a "
            "litellm model id with --use-web-api-model",
            "--model",
            group="model",
        ),
    )
    backend: str = field(
        default="transformers",
        metadata=_meta(
            "inference backend: transformers, vllm (a CUDA GPU and the [vllm] extra), litellm (web APIs; "
            "same as --use-web-api-model), fake (deterministic, for dry runs) or replay (--model is an answers "
            "folder of log-likelihoods another harness computed; folkscope lm-eval import writes it)",
            "--inference-backend",
            choices=BACKENDS,
        ),
    )
    device: str | None = field(
        default=None, metadata=_meta("torch device (default: cuda if available, else cpu)", "--device")
    )
    dtype: str | None = field(
        default=None, metadata=_meta("model dtype (default: bfloat16 on GPU, float32 on CPU)", "--dtype")
    )
    batch_tokens: int | None = field(
        default=None,
        metadata=_meta(
            "local backends: token budget of a batch (default: from the device's memory; halved on out-of-memory)",
            "--batch-tokens",
        ),
    )
    use_cache: bool = field(
        default=True, metadata=_meta("do not read or write the engine's result cache", "--no-cache", kind="negate")
    )
    cache_dir: str | None = field(
        default=None, metadata=_meta("engine result cache folder (default $FOLKSCOPE_HOME/engine-cache)", "--cache-dir")
    )
    max_rpm: int | None = field(
        default=None, metadata=_meta("web APIs: maximum requests per minute", "--max-api-rpm", group="api")
    )
    api_base: str | None = field(
        default=None,
        metadata=_meta(
            "web APIs: base URL of an OpenAI-compatible server (e.g. http://localhost:8000/v1)",
            "--api-base",
            group="api",
        ),
    )
    max_concurrency: int | None = field(
        default=None,
        metadata=_meta("web APIs: requests in flight at once (default 8)", "--max-api-concurrency", group="api"),
    )
    assistant_prefill: bool | None = field(
        default=None,
        metadata=_meta(
            "web APIs: the server continues a final assistant message (needed for chat prompts with an answer "
            "prefill on servers litellm does not know, e.g. vLLM's OpenAI server)",
            "--assistant-prefill",
            group="api",
            kind="maybe",
        ),
    )
    score_mode: str | None = field(
        default=None,
        metadata=_meta(
            "web APIs: how plain-text prompts are scored: topk (default; one top-k request per prompt, echo only "
            "for answers that could matter) or echo (every answer echoed: the prompt billed once per answer; the "
            "cache of earlier versions)",
            "--api-score-mode",
            group="api",
            choices=API_SCORE_MODES,
        ),
    )
    max_cost: float | None = field(
        default=None,
        metadata=_meta(
            "web APIs: USD a run may spend before it asks for confirmation (refused without a terminal unless "
            "--yes; default 1; litellm's prices, models it has no price for are never held back)",
            "--max-cost",
            group="api",
            metavar="USD",
        ),
    )
    approve_cost: bool | None = field(
        default=None,
        metadata=_meta(
            "web APIs: send the requests whatever the estimated cost (no confirmation)",
            "--yes",
            group="api",
            kind="maybe",
        ),
    )
    gpu_memory_utilization: float | None = field(
        default=None,
        metadata=_meta("fraction of GPU memory vLLM may use (default 0.85)", "--gpu-memory-utilization", group="vllm"),
    )
    max_model_len: int | None = field(
        default=None,
        metadata=_meta("vLLM maximum tokens per request (input + output)", "--max-model-len", group="vllm"),
    )
    vllm_dtype: str | None = field(
        default=None,
        metadata=_meta(
            "vLLM compute dtype (auto, bfloat16, float16, float32; default auto)", "--vllm-dtype", group="vllm"
        ),
    )
    tensor_parallel_size: int | None = field(
        default=None, metadata=_meta("GPUs to shard the model across", "--tensor-parallel-size", group="vllm")
    )
    window: int | None = field(
        default=None,
        metadata=_meta(
            "transformers and fake backends: requests planned into batches together, in prompt order (default "
            "4096); with --data-parallel the unit of sharding, so a smaller window spreads a small run over more "
            "workers (other batches: last-bit differences from a run with another window)",
            "--plan-window",
        ),
    )
    data_parallel: int = field(
        default=1,
        metadata=_meta(
            "local backends: copies of the model, one Ray worker each (one GPU each where there are GPUs), "
            "answering shards of the requests in parallel into the one result cache; needs the [ray] "
            "extra",
            "--data-parallel",
        ),
    )
    ray_address: str | None = field(
        default=None,
        metadata=_meta(
            "run the model on Ray workers of this cluster (e.g. auto or ray://head:10001; folkscope installed on "
            "its nodes): --data-parallel copies, one by default, each on a GPU where the cluster has them; default "
            "with --data-parallel 2 or more: a local Ray",
            "--ray-address",
        ),
    )

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(
                f"unknown inference backend {self.backend!r}; choose one of {', '.join(BACKENDS)}",
                parameter="backend",
                value=self.backend,
            )
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError(
                f"model must be a model handle (text), got {self.model!r}", parameter="model", value=self.model
            )
        for name in ("batch_tokens", "window", "max_rpm", "max_concurrency", "max_model_len", "tensor_parallel_size"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"{self.flag(name)} must be >= 1, got {value}", parameter=name, value=value)
        self._check_data_parallel()
        if self.score_mode is not None and self.score_mode not in API_SCORE_MODES:
            raise ConfigError(
                f"--api-score-mode must be one of {', '.join(API_SCORE_MODES)}, got {self.score_mode!r}",
                parameter="score_mode",
                value=self.score_mode,
            )
        if self.max_cost is not None:
            check_max_cost(self.max_cost, "--max-cost")
        gpu = self.gpu_memory_utilization
        if gpu is not None and not (isinstance(gpu, (int, float)) and 0 < gpu <= 1):
            raise ConfigError(
                f"--gpu-memory-utilization must be in (0, 1], got {gpu}", parameter="gpu_memory_utilization", value=gpu
            )
        given = [
            f.name
            for f in fields(self)
            if f.name in (*API_OPTIONS, *VLLM_OPTIONS, *_LOCAL_ONLY) and getattr(self, f.name) is not None
        ]
        if self.backend == "litellm":
            self._check_web_api(given)
            return
        api = [name for name in given if name in API_OPTIONS]
        if api:
            raise ConfigError(
                f"{self.flag(api[0])} applies to web API models; add --use-web-api-model", parameter=api[0]
            )
        vllm = [name for name in given if name in VLLM_OPTIONS]
        if vllm and self.backend != "vllm":
            raise ConfigError(f"{self.flag(vllm[0])} applies to --inference-backend vllm", parameter=vllm[0])
        if self.window is not None and self.backend == "vllm":
            raise ConfigError(
                "--plan-window applies to the transformers and fake backends (vLLM schedules its own batches)",
                parameter="window",
                value=self.window,
            )
        # the names only (no torch): whether this machine has the device is checked where a command starts
        check_dtype(self.dtype)
        check_device(self.device, available=False)

    def _check_data_parallel(self) -> None:
        """``--data-parallel`` is a whole number, for local backends, with Ray installed (checked here, before any data or model loads)."""
        n = self.data_parallel
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"--data-parallel must be >= 1, got {n}", parameter="data_parallel", value=n)
        if n == 1 and self.ray_address is None:
            return
        if self.backend == "litellm":
            flag = "--data-parallel" if n > 1 else "--ray-address"
            raise ConfigError(
                f"{flag} applies to local backends; web API models scale with --max-api-concurrency",
                parameter="data_parallel" if n > 1 else "ray_address",
                value=n if n > 1 else self.ray_address,
            )
        require("ray", feature=f"--data-parallel {n}" if n > 1 else "--ray-address")

    def _check_web_api(self, given: list[str]) -> None:
        if self.model == "default":
            raise ConfigError(
                "--use-web-api-model needs --model set to a litellm model id, e.g. openai/gpt-4o-mini",
                parameter="model",
                value=self.model,
            )
        for name in _LOCAL_ONLY:
            if name in given:
                raise ConfigError(
                    f"{self.flag(name)} does not apply to web API models", parameter=name, value=getattr(self, name)
                )
        vllm = [name for name in given if name in VLLM_OPTIONS]
        if vllm:
            raise ConfigError(
                f"{self.flag(vllm[0])} applies to --inference-backend vllm, not to web API models", parameter=vllm[0]
            )
        for name in ("batch_tokens", "window"):
            if getattr(self, name) is not None:
                raise ConfigError(f"{self.flag(name)} applies to local backends, not to web API models", parameter=name)

    @classmethod
    def flag(cls, name: str) -> str:
        """The command-line flag of field ``name`` (e.g. ``max_rpm`` -> ``--max-api-rpm``)."""
        return flag_named(cls, name)

    def backend_options(self) -> dict[str, Any]:
        """The options this backend takes beyond model, device and dtype (only those that were set)."""
        names: tuple[str, ...] = (
            API_OPTIONS
            if self.backend == "litellm"
            else ("batch_tokens", *VLLM_OPTIONS)
            if self.backend == "vllm"
            else ("batch_tokens", "window")
        )
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of every field."""
        return asdict(self)

    def answering(self) -> dict[str, str]:
        """What of the engine a part's config records and hashes: the model and its backend.

        Device, dtype, batch budget and web-API pacing change how answers are
        computed, not which model gives them; they are in the run's engine
        identity (the manifest's ``engine``), not in its config.

        >>> EngineConfig(model="gpt2", backend="fake", batch_tokens=512).answering()
        {'model': 'gpt2', 'backend': 'fake'}
        """
        return {"model": self.model, "backend": self.backend}

    @classmethod
    def split(cls, data: Mapping[str, Any], what: str) -> tuple[EngineConfig, dict[str, Any]]:
        """A part config's JSON (``what``) as its engine config (from :meth:`answering`'s keys) and the rest.

        >>> engine, rest = EngineConfig.split({"model": "gpt2", "backend": "fake", "seed": 1}, "NumericConfig")
        >>> engine.model, engine.backend, rest
        ('gpt2', 'fake', {'seed': 1})
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{what} must be a mapping, got {type(data).__name__}", parameter="config")
        rest = {k: v for k, v in data.items() if k not in ("model", "backend")}
        return cls(**{k: data[k] for k in ("model", "backend") if k in data}), rest

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Inverse of :meth:`to_dict`; unknown keys are refused with the known ones listed."""
        return cls(**config_fields(cls, data, "EngineConfig", parameter="engine"))
