"""Backends by name, imported only when chosen.

=================  =========================================  ===========
name               class                                      needs
=================  =========================================  ===========
``transformers``   :class:`~.hf.HFBackend` (alias ``hf``)     ``folkscope[hf]``
``fake``           :class:`~.fake.FakeBackend`                nothing
``litellm``        :class:`~.api.LiteLLMBackend` (alias       ``folkscope[api]``
                   ``api``): web APIs
``vllm``           :class:`~.vllm.VLLMBackend`                ``folkscope[vllm]``
``replay``         :class:`~.replay.ReplayBackend`: answers   nothing
                   another harness computed (lm-eval)
=================  =========================================  ===========

Other backends plug in the same way (:func:`register_backend`), implementing
the :class:`~.base.Backend` protocol.

Examples
--------
>>> sorted(available_backends())
['api', 'fake', 'hf', 'litellm', 'replay', 'transformers', 'vllm']
>>> get_backend("fake").__name__
'FakeBackend'
"""

from __future__ import annotations

import importlib
from typing import Any

from folkscope.engine.backends.base import Backend, BackendStats
from folkscope.errors import ConfigError

__all__ = ["Backend", "BackendStats", "available_backends", "create_backend", "get_backend", "register_backend"]

_REGISTRY: dict[str, str] = {
    "transformers": "folkscope.engine.backends.hf:HFBackend",
    "hf": "folkscope.engine.backends.hf:HFBackend",
    "fake": "folkscope.engine.backends.fake:FakeBackend",
    "litellm": "folkscope.engine.backends.api:LiteLLMBackend",
    "api": "folkscope.engine.backends.api:LiteLLMBackend",
    "vllm": "folkscope.engine.backends.vllm:VLLMBackend",
    "replay": "folkscope.engine.backends.replay:ReplayBackend",
}


def available_backends() -> tuple[str, ...]:
    """Registered backend names (aliases included)."""
    return tuple(_REGISTRY)


def register_backend(name: str, target: str) -> None:
    """Register ``"package.module:Class"`` under ``name`` (imported on first use).

    Raises
    ------
    ConfigError
        ``target`` is not of the form ``module:Class``, or ``name`` is taken by another target.
    """
    if not isinstance(target, str) or target.count(":") != 1:
        raise ConfigError(
            f"backend target must look like 'package.module:Class', got {target!r}", parameter="target", value=target
        )
    if _REGISTRY.get(name, target) != target:
        raise ConfigError(
            f"backend name {name!r} is already registered for {_REGISTRY[name]}", parameter="name", value=name
        )
    _REGISTRY[name] = target


def get_backend(name: str) -> Any:
    """The backend class registered under ``name``, imported now."""
    if name not in _REGISTRY:
        raise ConfigError(
            f"unknown backend {name!r}; available: {', '.join(sorted(_REGISTRY))}", parameter="backend", value=name
        )
    module, cls = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(module), cls)


def create_backend(name: str, model: Any, **options: Any) -> Backend:
    """Build the backend ``name`` for ``model`` (a handle or a ResolvedModel) with its options."""
    backend: Backend = get_backend(name).from_model(model, **options)
    return backend
