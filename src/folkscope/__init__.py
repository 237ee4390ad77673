"""folkscope: evaluate language models as statistical instruments on real population data.

``import folkscope`` is light: it never imports torch, transformers, vllm or
litellm. Heavy pieces load when the feature that needs them is used.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("folkscope")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
