"""What a block of code asks the engine: every request, as asked, for tools that carry a run elsewhere.

A run of any part reaches a model only through :class:`~folkscope.engine.Engine`.
So the questions a run asks can be learned without knowing the part: run it
on a stand-in model inside :func:`recorded_requests`, and the list holds
every request in the order the part made it. ``folkscope lm-eval export``
turns those into an lm-evaluation-harness task; nothing else records, and a
run outside a block pays one context-variable read per engine call.

Examples
--------
>>> from folkscope.engine import Engine, ScoreRequest
>>> engine = Engine.from_model("demo", backend="fake", use_cache=False)
>>> with recorded_requests() as asked:
...     _ = engine.score([ScoreRequest("2+2=", ("4", "5"))])
>>> [type(r).__name__ for r in asked]
['ScoreRequest']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["record", "recorded_requests"]

#: the lists :func:`recorded_requests` blocks collect into (nested blocks each see every request)
_TAPS: ContextVar[tuple[list[Any], ...]] = ContextVar("folkscope_recorded_requests", default=())


@contextmanager
def recorded_requests() -> Iterator[list[Any]]:
    """Collect every request any engine is asked inside the block, in order (cached answers included)."""
    seen: list[Any] = []
    token = _TAPS.set((*_TAPS.get(), seen))
    try:
        yield seen
    finally:
        _TAPS.reset(token)


def record(requests: Sequence[Any]) -> None:
    """Hand one engine call's requests to every open :func:`recorded_requests` block."""
    for tap in _TAPS.get():
        tap.extend(requests)
