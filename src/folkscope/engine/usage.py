"""What answers cost on a paid web API: calls, billed tokens and their price.

A web-API answer is paid once, when it is first received; a resumed run
reads it back from the result cache for free. So that a run's totals cover
every session that paid for its answers (not only the last one), each
answer's :class:`Usage` is stored beside it in the cache and summed again
whenever the answer is used (:class:`~folkscope.engine.EngineStats`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Usage"]


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
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0):
            return None
        return cls(*counts, None if cost is None else float(cost))
