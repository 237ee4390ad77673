"""Who builds and closes a run's engine, and that a part's model agrees with its engine settings.

Every part's run takes either a ready :class:`~folkscope.engine.Engine`
(a notebook scoring several configurations with one loaded model) or an
:class:`~folkscope.engine.EngineConfig` to build one from. One rule for
all: an engine the caller gave is used and left open; one built here is
closed when the run ends, failed or not (:func:`engine_for_run`). A part
config that names a model and backend next to an engine config must name
the same ones (:func:`agreeing_config`), so a run folder never records one
model while another answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from folkscope.engine.config import EngineConfig
from folkscope.engine.runner import Engine
from folkscope.errors import ConfigError

__all__ = ["agreeing_config", "engine_for_run"]


def agreeing_config(given: EngineConfig | None, *, model: str, backend: str, owner: str) -> EngineConfig:
    """``given`` once checked against the part config's ``model`` and ``backend``, else the engine config of those two.

    >>> agreeing_config(None, model="demo", backend="fake", owner="NumericConfig").model
    'demo'
    >>> agreeing_config(EngineConfig(model="a", backend="fake"), model="b", backend="fake", owner="NumericConfig")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: engine_config.model is 'a' but the NumericConfig says 'b'; build both from the same value
    """
    if given is None:
        return EngineConfig(model=model, backend=backend)
    for name, wanted in (("model", model), ("backend", backend)):
        if getattr(given, name) != wanted:
            raise ConfigError(
                f"engine_config.{name} is {getattr(given, name)!r} but the {owner} says {wanted!r}; "
                "build both from the same value",
                parameter=name,
                value=getattr(given, name),
            )
    return given


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
