"""Lazy import of heavy optional dependencies.

torch, transformers, vllm, litellm, lightgbm and matplotlib are imported only
inside the feature that needs them, through :func:`require`, so that
``import folkscope`` and the metrics work with the scientific stack alone and
a missing extra fails with the exact ``pip install`` line that fixes it.
On the command line, a library that installs its own log handler on import
(transformers, vLLM) is routed through folkscope's (:mod:`folkscope.logs`).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from folkscope.errors import MissingDependencyError
from folkscope.logs import adopt_library_loggers

__all__ = ["EXTRA_OF", "require"]

#: Which pip extra of folkscope provides each optional top-level module.
EXTRA_OF: dict[str, str] = {
    "torch": "hf",
    "transformers": "hf",
    "accelerate": "hf",
    "safetensors": "hf",
    "gguf": "hf",
    "tokenizers": "hf",
    "litellm": "api",
    "vllm": "vllm",
    "ray": "ray",
    "matplotlib": "plots",
    "lightgbm": "baselines",
    "datasets": "datasets",
    "huggingface_hub": "datasets",
    "wandb": "wandb",
    "mlflow": "mlflow",
}


def require(module: str, *, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"transformers"`` or ``"matplotlib.pyplot"``.
    feature : str
        What the caller was about to do, quoted in the error message.

    Examples
    --------
    >>> json = require("json", feature="reading a config")
    >>> json.dumps([1])
    '[1]'
    """
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = EXTRA_OF.get(top)
        fix = f"pip install 'folkscope[{extra}]'" if extra else f"pip install {top}"
        raise MissingDependencyError(
            f"{feature} needs the optional package '{top}', which is not installed ({exc}). Install it with: {fix}"
        ) from exc
    adopt_library_loggers()  # on the command line, a library's own stderr handler must not print between progress bars
    return imported
