"""Lazy import of heavy optional dependencies.

torch, transformers, vllm, litellm, lightgbm and matplotlib are imported only
inside the feature that needs them, through :func:`require`, so that
``import folkscope`` and the metrics work with the scientific stack alone and
a missing extra fails with the exact ``pip install`` line that fixes it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from folkscope.errors import MissingDependencyError

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
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = EXTRA_OF.get(top)
        fix = f"pip install 'folkscope[{extra}]'" if extra else f"pip install {top}"
        raise MissingDependencyError(
            f"{feature} needs the optional package '{top}', which is not installed "
            f"({exc}). Install it with: {fix}"
        ) from exc
