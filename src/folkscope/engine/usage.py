"""What answers cost on a paid web API: calls, billed tokens and their price; and what every run records of it.

A web-API answer is paid once, when it is first received; a resumed run
reads it back from the result cache for free. So that a run's totals cover
every session that paid for its answers (not only the last one), each
answer's :class:`Usage` is stored beside it in the cache and summed again
whenever the answer is used (:class:`~folkscope.engine.EngineStats`).

Every part reports what its run paid the same way, through this module:
:func:`run_accounting` is what a run folder stores of its engine
(``engine_stats``, ``backend_stats``), :func:`usage_line` the line a
command prints from it, and :func:`oom_note` the caveat a run that ran out
of memory carries. :func:`recorded_accounting` hands a caller what every run
inside a block recorded (a study sizing its cells before it starts them),
without knowing where each part keeps it in its metrics.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Usage", "oom_note", "recorded_accounting", "run_accounting", "token_price", "usage_line"]

#: the lists :func:`recorded_accounting` blocks collect into
_TAPS: ContextVar[tuple[list[dict[str, Any]], ...]] = ContextVar("folkscope_run_accounting", default=())


@contextmanager
def recorded_accounting() -> Iterator[list[dict[str, Any]]]:
    """Collect what :func:`run_accounting` returns to every run inside the block, in order.

    >>> with recorded_accounting() as seen:
    ...     _ = run_accounting(object())
    >>> seen
    [{}]
    """
    seen: list[dict[str, Any]] = []
    token = _TAPS.set((*_TAPS.get(), seen))
    try:
        yield seen
    finally:
        _TAPS.reset(token)


@dataclass
class Usage:
    """Billing of one or more answers.

    Attributes
    ----------
    api_calls : int
        HTTP requests that returned a response (failed attempts with a body included).
    prompt_tokens, completion_tokens : int
        As the provider reported them.
    cost_usd : float or None
        litellm's price of those tokens; None when the price is unknown
        (a sum with an unknown part is unknown).

    Examples
    --------
    >>> total = Usage()
    >>> total.add(Usage(1, 120, 1, 0.0002))
    >>> total.add(Usage(1, 80, 1, None))
    >>> total
    Usage(api_calls=2, prompt_tokens=200, completion_tokens=2, cost_usd=None)
    """

    api_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, other: Usage) -> None:
        """Add ``other`` in place."""
        self.api_calls += other.api_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Usage | None:
        """The usage a stored record describes; None when it is not a valid record (never a guess)."""
        if not isinstance(data, Mapping):
            return None
        counts = [data.get(name) for name in ("api_calls", "prompt_tokens", "completion_tokens")]
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            return None
        cost = data.get("cost_usd")
        if cost is not None and (
            isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0
        ):
            return None
        return cls(*counts, None if cost is None else float(cost))


def token_price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """litellm's price in USD of that many tokens of ``model`` (a litellm id), from its bundled cost map, as the
    web-API backend prices what it sends; None when litellm is not installed or has no price for the model.

    >>> token_price("no-such-provider/no-such-model", 1000, 10) is None
    True
    """
    from folkscope.engine.backends._api_support import _litellm
    from folkscope.errors import MissingDependencyError

    try:
        litellm = _litellm()
    except MissingDependencyError:
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except Exception:  # noqa: BLE001 - litellm raises its own errors for a model it has no price for
        return None
    return float(prompt) + float(completion)


def run_accounting(engine: Any) -> dict[str, Any]:
    """What a run folder stores of the engine that scored it, under the names every part and report reads.

    ``engine_stats``: requests, cache hits and, on a paid backend, what the
    answers used were billed over every session (``billed``);
    ``backend_stats``: this session's own traffic (batches and tokens; on a
    web API calls, retries, tokens and cost). A stand-in for an engine
    (a test double with ``score`` only) has no counters and records none.
    """
    out: dict[str, Any] = {}
    stats, backend = getattr(engine, "stats", None), getattr(getattr(engine, "backend", None), "stats", None)
    if stats is not None:
        out["engine_stats"] = stats.to_dict()
    if backend is not None:
        out["backend_stats"] = backend.to_dict()
    for tap in _TAPS.get():
        tap.append(out)
    return out


def usage_line(engine_stats: Mapping[str, Any], backend_stats: Mapping[str, Any]) -> str | None:
    """What a web-API run cost: its answers over every session that paid for them, then this session's traffic.

    None for a backend that bills nothing (no ``cost_usd`` in its stats).

    Examples
    --------
    >>> engine = {"billed_answers": 40, "unbilled_answers": 0,
    ...           "billed": {"api_calls": 41, "prompt_tokens": 4000, "completion_tokens": 40, "cost_usd": 0.0061}}
    >>> backend = {"requests": 10, "api_calls": 11, "retries": 1, "prompt_tokens": 1000, "completion_tokens": 10,
    ...            "cost_usd": 0.0015, "cost_known": True}
    >>> print(usage_line(engine, backend))
    web API: this run's 40 answers cost $0.0061 (41 calls, 4000 prompt + 40 completion tokens, all sessions); this session: 11 calls for 10 answers, 1 retries, 1000 prompt + 10 completion tokens, $0.0015
    """
    if "cost_usd" not in backend_stats:
        return None
    billed = engine_stats.get("billed") or {}
    answers = engine_stats.get("billed_answers", 0)
    line = (
        f"web API: this run's {answers} answers cost {_dollars(billed.get('cost_usd'))} ({billed.get('api_calls', 0)} calls, "
        f"{billed.get('prompt_tokens', 0)} prompt + {billed.get('completion_tokens', 0)} completion tokens, all sessions)"
    )
    unknown = engine_stats.get("unbilled_answers", 0)
    if unknown:
        line += f", plus {unknown} cached answers stored before costs were recorded (cost unknown)"
    session_cost = backend_stats.get("cost_usd") if backend_stats.get("cost_known", True) else None
    return line + (
        f"; this session: {backend_stats.get('api_calls', 0)} calls for {backend_stats.get('requests', 0)} answers, "
        f"{backend_stats.get('retries', 0)} retries, {backend_stats.get('prompt_tokens', 0)} prompt + "
        f"{backend_stats.get('completion_tokens', 0)} completion tokens, {_dollars(session_cost)}"
    )


def _dollars(cost: Any) -> str:
    return f"${cost:.4f}" if isinstance(cost, (int, float)) else "unknown (litellm has no price for this model)"


def oom_note(backend_stats: Mapping[str, Any]) -> str | None:
    """Why a run that ran out of memory may differ, in the last bits, from one that did not (None when it did not)."""
    backoffs = int(backend_stats.get("oom_backoffs") or 0)
    if not backoffs:
        return None
    return (
        f"The batch budget was halved {backoffs} time(s) after running out of memory. Answers computed after that "
        "came from smaller batches, which can differ from the planned budget's in the last bits (measured on CPU "
        "float32: up to ~1e-6 in a risk score); a rerun that does not run out of memory may differ by that much."
    )
