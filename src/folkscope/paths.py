"""Where folkscope keeps what it downloads, converts and caches.

Everything lives under one root so a user can see, move or delete it:
``$FOLKSCOPE_HOME`` if set, else the platform's user cache directory
(``~/.cache/folkscope`` on Linux, honouring ``$XDG_CACHE_HOME``).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_home", "data_home", "models_home"]


def cache_home() -> Path:
    """Root folder for every cached artefact (models, survey data, results cache)."""
    env = os.environ.get("FOLKSCOPE_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("folkscope", appauthor=False))


def data_home() -> Path:
    """Default root for downloaded survey data (``--data-dir`` overrides it)."""
    return cache_home() / "data"


def models_home() -> Path:
    """Folder holding converted model weights (e.g. the default SmolLM2 model)."""
    return cache_home() / "models"
