"""folktexts' classifier classes by their names: :class:`LLMClassifier` bound to one backend.

A script written for folktexts builds ``TransformersLLMClassifier(model,
tokenizer, task)`` from a model it loaded itself, ``VLLMClassifier(llm,
tokenizer, task)`` from a loaded ``vllm.LLM``, or
``WebAPILLMClassifier(model_name, task)`` for a litellm model id; these
classes take the same arguments and return the same
``predict_proba`` / ``predict`` / ``fit`` results, so such a script runs after
changing its import lines only. Underneath they are ordinary
:class:`LLMClassifier` objects over an :class:`~folkscope.engine.Engine`
(result cache, batching and progress included).

Examples
--------
>>> from folkscope.engine import load_model_tokenizer          # doctest: +SKIP
>>> model, tokenizer = load_model_tokenizer("default")         # doctest: +SKIP
>>> clf = TransformersLLMClassifier(model, tokenizer, "ACSIncome")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from folkscope.engine import Engine
from folkscope.errors import ConfigError
from folkscope.prompting import PromptConfig
from folkscope.risk.classifier import DEFAULT_CONTEXT_SIZE, LLMClassifier
from folkscope.tasks.task import TaskMetadata

__all__ = ["TransformersLLMClassifier", "VLLMClassifier", "WebAPILLMClassifier"]

#: folktexts' inference keyword arguments, and where each goes here
_INFERENCE_KWARGS = ("context_size", "batch_size")


def _prompt_and_options(
    task: TaskMetadata | str, encode_row: Callable[[pd.Series], str] | None, correct_order_bias: bool, inference_kwargs: dict[str, Any]
) -> tuple[PromptConfig, int | None]:
    if encode_row is not None:
        raise ConfigError(
            "encode_row (a Python function writing each row's text) is not supported: prompts are data here, so they "
            "can be hashed, cached and exported; use a task's column texts, --variation or a custom TaskMetadata",
            parameter="encode_row",
        )
    unknown = sorted(set(inference_kwargs) - set(_INFERENCE_KWARGS))
    if unknown:
        raise ConfigError(
            f"unknown inference option(s) {', '.join(unknown)}; folktexts' are {', '.join(_INFERENCE_KWARGS)}",
            parameter="inference_kwargs",
            value=unknown,
        )
    # batch_size is accepted for folktexts scripts; the engine batches by a token budget instead
    numeric = isinstance(task, TaskMetadata) and task.use_numeric_qa  # folktexts' numeric switch lives on the task
    config = PromptConfig(correct_order_bias=bool(correct_order_bias), numeric_risk_prompting=numeric)
    return config, inference_kwargs.get("context_size", DEFAULT_CONTEXT_SIZE)  # folktexts' default: cut at 600 tokens


class TransformersLLMClassifier(LLMClassifier):
    """Risk scores from a transformers model and tokenizer already loaded (folktexts' class of that name).

    Parameters
    ----------
    model, tokenizer
        E.g. from :func:`folkscope.engine.load_model_tokenizer`.
    task : TaskMetadata or str
    encode_row : callable, optional
        Not supported (raises :class:`~folkscope.errors.ConfigError`); kept so
        the argument is refused with a reason rather than unknown.
    threshold : float, default 0.5
    correct_order_bias : bool, default True
    seed : int, default 42
        Kept for folktexts scripts; scoring is deterministic.
    use_cache : bool, default True
        Keep answers in the engine's result cache (keyed by the weights'
        fingerprint), so a rerun is free.
    cache_dir : path, optional
    **inference_kwargs
        ``context_size`` (prompts cut to their last 600 tokens by default), ``batch_size`` (accepted;
        the engine batches by tokens).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        task: TaskMetadata | str,
        encode_row: Callable[[pd.Series], str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        seed: int = 42,
        *,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        **inference_kwargs: Any,
    ) -> None:
        prompt_config, context_size = _prompt_and_options(task, encode_row, correct_order_bias, inference_kwargs)
        engine = Engine.from_loaded(model, tokenizer, use_cache=use_cache, cache_dir=cache_dir)
        super().__init__(engine, task, prompt_config=prompt_config, threshold=threshold, context_size=context_size)
        self.seed = int(seed)
        self.model, self.tokenizer = model, tokenizer


class WebAPILLMClassifier(LLMClassifier):
    """Risk scores from a web-API model through litellm (folktexts' class of that name).

    Parameters
    ----------
    model_name : str
        A litellm model id, e.g. ``"openai/gpt-4o-mini"``; the key comes from
        the provider's environment variable.
    task : TaskMetadata or str
    encode_row, threshold, correct_order_bias, seed
        As for :class:`TransformersLLMClassifier`.
    max_api_rpm : int, optional
        Requests per minute.
    use_cache, cache_dir
        As for :class:`TransformersLLMClassifier`: a resumed run pays nothing twice.
    backend_options : mapping, optional
        Further options of the web-API backend (``api_base``, ``max_concurrency``, ...).
    **inference_kwargs
        ``context_size``, ``batch_size``.
    """

    def __init__(
        self,
        model_name: str,
        task: TaskMetadata | str,
        encode_row: Callable[[pd.Series], str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        seed: int = 42,
        max_api_rpm: int | None = None,
        *,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        backend_options: dict[str, Any] | None = None,
        **inference_kwargs: Any,
    ) -> None:
        prompt_config, context_size = _prompt_and_options(task, encode_row, correct_order_bias, inference_kwargs)
        options = dict(backend_options or {})
        if max_api_rpm is not None:
            options["max_rpm"] = max_api_rpm
        engine = Engine.from_model(model_name, backend="litellm", use_cache=use_cache, cache_dir=cache_dir, **options)
        super().__init__(engine, task, prompt_config=prompt_config, threshold=threshold, context_size=context_size)
        self.seed = int(seed)
        self.model_name = model_name


def _vllm_model_path(llm: Any) -> str:
    """The model folder or hub id a loaded ``vllm.LLM`` was built from."""
    config = getattr(getattr(llm, "llm_engine", None), "model_config", None)
    path = getattr(config, "model", None)
    if not path:
        raise ConfigError(
            "cannot tell which model this vllm.LLM holds; pass model_name_or_path= (its folder or hub id)",
            parameter="model_name_or_path",
        )
    return str(path)


class VLLMClassifier(LLMClassifier):
    """Risk scores from a ``vllm.LLM`` already loaded (folktexts' class of that name).

    Parameters
    ----------
    llm : vllm.LLM
        A loaded vLLM engine; folkscope's vLLM backend scores through it
        (batching, prefix caching and the result cache included).
    tokenizer
        Accepted for folktexts scripts; the backend uses ``llm.get_tokenizer()``,
        which is the same tokenizer.
    task : TaskMetadata or str
    model_name_or_path : str or ResolvedModel, optional
        The model's folder or hub id (default: what the ``LLM`` was built
        from); it names the model in run folders and the result cache.
    encode_row, threshold, correct_order_bias, seed, use_cache, cache_dir
        As for :class:`TransformersLLMClassifier`.
    **inference_kwargs
        ``context_size``, ``batch_size``.
    """

    def __init__(
        self,
        llm: Any,
        tokenizer: Any,
        task: TaskMetadata | str,
        *,
        model_name_or_path: Any = None,
        encode_row: Callable[[pd.Series], str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        seed: int = 42,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        **inference_kwargs: Any,
    ) -> None:
        prompt_config, context_size = _prompt_and_options(task, encode_row, correct_order_bias, inference_kwargs)
        model = model_name_or_path if model_name_or_path is not None else _vllm_model_path(llm)
        engine = Engine.from_model(model, backend="vllm", llm=llm, use_cache=use_cache, cache_dir=cache_dir)
        super().__init__(engine, task, prompt_config=prompt_config, threshold=threshold, context_size=context_size)
        self.seed = int(seed)
        self.llm, self.tokenizer = llm, tokenizer
