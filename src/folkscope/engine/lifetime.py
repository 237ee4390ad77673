"""Who builds and closes a run's engine.

Every part's run takes either a ready :class:`~folkscope.engine.Engine`
(a notebook scoring several configurations with one loaded model) or builds
one from the :class:`~folkscope.engine.EngineConfig` its part config
contains. One rule for all: an engine the caller gave is used and left open;
one built here is closed when the run ends, failed or not.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from folkscope.engine.config import EngineConfig
from folkscope.engine.runner import Engine

__all__ = ["engine_for_run"]


@contextmanager
def engine_for_run(engine: Engine | None, config: EngineConfig, *, prompt_version: str) -> Iterator[Engine]:
    """The caller's ``engine`` as it is, or one built from ``config`` and closed when the block ends."""
    if engine is not None:
        yield engine
        return
    built = Engine.from_config(config, prompt_version=prompt_version)
    try:
        yield built
    finally:
        built.close()
