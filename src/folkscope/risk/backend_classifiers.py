"""folktexts' classifier classes by their names: :class:`LLMClassifier` bound to one backend.

A script written for folktexts builds ``TransformersLLMClassifier(model,
tokenizer, task)`` from a model it loaded itself, ``VLLMClassifier(llm,
tokenizer, task)`` from a loaded ``vllm.LLM``, or
``WebAPILLMClassifier(model_name, task)`` for a litellm model id; these
classes take the same arguments and return the same
``predict_proba`` / ``predict`` / ``fit`` results, so such a script runs after
changing its import lines only. They are scikit-learn estimators as there:
``get_params`` lists folktexts' constructor arguments, and a clone builds a
new classifier over the same loaded model. Underneath they are ordinary
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
from dataclasses import replace
from pathlib import Path
from typing import Any

from folkscope.engine import Engine
from folkscope.errors import ConfigError
from folkscope.prompting import PromptConfig
from folkscope.risk.classifier import DEFAULT_CONTEXT_SIZE, LLMClassifier
from folkscope.tasks.task import TaskMetadata

__all__ = ["TransformersLLMClassifier", "VLLMClassifier", "WebAPILLMClassifier"]


def _prompt_config(
    task: TaskMetadata | str,
    encode_row: Callable[..., str] | None,
    correct_order_bias: bool,
    prompt_config: PromptConfig | None,
    inference_kwargs: dict[str, Any],
) -> PromptConfig:
    """The prompt config of folktexts' classifier arguments; refuses what cannot be honoured, before any model loads."""
    if encode_row is not None:
        raise ConfigError(
            "encode_row (a Python function writing each row's text) is not supported: prompts are data here, so they "
            "can be hashed, cached and exported; use a task's column texts, --variation or a custom TaskMetadata",
            parameter="encode_row",
        )
    if inference_kwargs:
        unknown = sorted(inference_kwargs)
        raise ConfigError(
            f"unknown inference option(s) {', '.join(unknown)}; folktexts' are context_size and batch_size",
            parameter="inference_kwargs",
            value=unknown,
        )
    if prompt_config is None:
        numeric = isinstance(task, TaskMetadata) and task.use_numeric_qa  # folktexts' numeric switch lives on the task
        return PromptConfig(correct_order_bias=bool(correct_order_bias), numeric_risk_prompting=numeric)
    return replace(prompt_config, correct_order_bias=bool(correct_order_bias))


class _BackendClassifier(LLMClassifier):
    """What the three folktexts classes share: folktexts' arguments over an engine built for one backend."""

    def _setup(
        self,
        engine: Engine,
        task: TaskMetadata | str,
        prompt_config: PromptConfig,
        *,
        threshold: float,
        seed: int,
        temperature: float | None,
        context_size: int | None,
        batch_size: int | None,
        use_cache: bool,
        cache_dir: str | Path | None,
    ) -> None:
        super().__init__(
            engine,
            task,
            prompt_config=prompt_config,
            threshold=threshold,
            context_size=context_size,
            seed=seed,
            temperature=temperature,
        )
        # folktexts' arguments, kept under their names for get_params (batch_size: the engine batches by tokens)
        self.encode_row, self.batch_size, self.use_cache, self.cache_dir = None, batch_size, use_cache, cache_dir


class TransformersLLMClassifier(_BackendClassifier):
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
        Seed of sampled chain-of-thought answers.
    prompt_config : PromptConfig, optional
        How rows become prompts (``correct_order_bias`` overrides its field).
    temperature : float, optional
        Chain-of-thought sampling temperature (None: greedy, 1.0 in thinking mode).
    context_size : int or None, default 600
        Prompts are cut to their last ``context_size`` tokens, as folktexts does.
    batch_size : int, optional
        Accepted for folktexts scripts; the engine batches by tokens.
    use_cache : bool, default True
        Keep answers in the engine's result cache (keyed by the weights'
        fingerprint), so a rerun is free.
    cache_dir : path, optional
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        task: TaskMetadata | str,
        encode_row: Callable[..., str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        seed: int = 42,
        *,
        prompt_config: PromptConfig | None = None,
        temperature: float | None = None,
        context_size: int | None = DEFAULT_CONTEXT_SIZE,
        batch_size: int | None = None,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        **inference_kwargs: Any,
    ) -> None:
        config = _prompt_config(task, encode_row, correct_order_bias, prompt_config, inference_kwargs)
        engine = Engine.from_loaded(model, tokenizer, use_cache=use_cache, cache_dir=cache_dir)
        self._setup(
            engine,
            task,
            config,
            threshold=threshold,
            seed=seed,
            temperature=temperature,
            context_size=context_size,
            batch_size=batch_size,
            use_cache=use_cache,
            cache_dir=cache_dir,
        )
        self.model, self.tokenizer = model, tokenizer


class WebAPILLMClassifier(_BackendClassifier):
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
    prompt_config, temperature, context_size, batch_size, use_cache, cache_dir
        As for :class:`TransformersLLMClassifier` (a resumed run pays nothing
        twice; a web API takes whole prompts).
    backend_options : mapping, optional
        Further options of the web-API backend (``api_base``, ``max_concurrency``, ...).
    """

    def __init__(
        self,
        model_name: str,
        task: TaskMetadata | str,
        encode_row: Callable[..., str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        max_api_rpm: int | None = None,
        seed: int = 42,
        *,
        prompt_config: PromptConfig | None = None,
        temperature: float | None = None,
        context_size: int | None = DEFAULT_CONTEXT_SIZE,
        batch_size: int | None = None,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        backend_options: dict[str, Any] | None = None,
        **inference_kwargs: Any,
    ) -> None:
        config = _prompt_config(task, encode_row, correct_order_bias, prompt_config, inference_kwargs)
        options = dict(backend_options or {})
        if max_api_rpm is not None:
            options["max_rpm"] = max_api_rpm
        engine = Engine.from_model(model_name, backend="litellm", use_cache=use_cache, cache_dir=cache_dir, **options)
        self._setup(
            engine,
            task,
            config,
            threshold=threshold,
            seed=seed,
            temperature=temperature,
            context_size=context_size,
            batch_size=batch_size,
            use_cache=use_cache,
            cache_dir=cache_dir,
        )
        self._model_id, self.max_api_rpm, self.backend_options = model_name, max_api_rpm, backend_options

    @property
    def model_name(self) -> str:
        """The litellm model id (folktexts' first argument)."""
        return self._model_id


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


class VLLMClassifier(_BackendClassifier):
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
    encode_row, threshold, correct_order_bias, seed, prompt_config, temperature, context_size, batch_size, use_cache, cache_dir
        As for :class:`TransformersLLMClassifier`.
    """

    def __init__(
        self,
        llm: Any,
        tokenizer: Any,
        task: TaskMetadata | str,
        *,
        model_name_or_path: Any = None,
        encode_row: Callable[..., str] | None = None,
        threshold: float = 0.5,
        correct_order_bias: bool = True,
        seed: int = 42,
        prompt_config: PromptConfig | None = None,
        temperature: float | None = None,
        context_size: int | None = DEFAULT_CONTEXT_SIZE,
        batch_size: int | None = None,
        use_cache: bool = True,
        cache_dir: str | Path | None = None,
        **inference_kwargs: Any,
    ) -> None:
        config = _prompt_config(task, encode_row, correct_order_bias, prompt_config, inference_kwargs)
        model = model_name_or_path if model_name_or_path is not None else _vllm_model_path(llm)
        engine = Engine.from_model(model, backend="vllm", llm=llm, use_cache=use_cache, cache_dir=cache_dir)
        self._setup(
            engine,
            task,
            config,
            threshold=threshold,
            seed=seed,
            temperature=temperature,
            context_size=context_size,
            batch_size=batch_size,
            use_cache=use_cache,
            cache_dir=cache_dir,
        )
        self.llm, self.tokenizer, self.model_name_or_path = llm, tokenizer, model_name_or_path
