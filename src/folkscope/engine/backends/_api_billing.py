"""What the web-API backend's answers cost: billed tokens, their price, and each answer's share.

Why it exists
-------------
A paid answer is billed once, when it is received; the engine stores each
answer's :class:`~folkscope.engine.usage.Usage` beside it in the cache, so a
resumed run's totals cover every session that paid. :class:`Billing` prices
every response (litellm's bundled cost map), adds it to the backend's stats,
and keeps what each yielded answer cost until the engine takes it
(:meth:`LiteLLMBackend.take_usage <folkscope.engine.backends.api.LiteLLMBackend.take_usage>`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from folkscope.engine.backends._api_support import APIBackendStats
from folkscope.engine.usage import Usage

__all__ = ["Billing"]


class Billing:
    """Prices responses and holds each answer's billing until it is taken.

    Parameters
    ----------
    litellm : module
    model_name, provider : str
        As litellm resolved them (its price table is keyed by both).
    stats : callable
        Returns the backend's current stats; read on every use because a
        caller may replace them (``risk.evidence`` starts each step afresh).
    """

    def __init__(self, litellm: Any, *, model_name: str, provider: str, stats: Callable[[], APIBackendStats]) -> None:
        self._litellm = litellm
        self._model_name = model_name
        self._provider = provider
        self._stats = stats
        self._usage: dict[int, Usage] = {}  # billing of answers yielded, until the engine takes it

    def account(self, data: Mapping[str, Any]) -> Usage:
        """Add one response's billed tokens and price to the session's stats; return them."""
        stats = self._stats()
        usage = data.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        stats.prompt_tokens += prompt
        stats.completion_tokens += completion
        cost: float | None = None
        if stats.cost_known:
            cost = self.price(prompt, completion)
            if cost is None:
                stats.cost_known = False
            else:
                stats.cost_usd += cost
        return Usage(1, prompt, completion, cost)

    def price(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """litellm's price in USD of that many tokens of this model (its bundled cost map); None when unknown."""
        if not prompt_tokens and not completion_tokens:
            return 0.0
        try:
            a, b = self._litellm.cost_per_token(
                model=self._model_name,
                custom_llm_provider=self._provider,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
            return float(a) + float(b)
        except Exception:
            return None

    def begin(self) -> None:
        """A new stream of answers: forget the billing of answers never taken."""
        self._usage = {}

    def keep(self, index: int, usage: Usage) -> None:
        """Hold what the answer to request ``index`` was billed until :meth:`take` asks for it."""
        self._usage[index] = usage

    def take(self, indices: Sequence[int]) -> dict[int, Usage]:
        """What each of the answers just yielded (by request index) was billed; forgotten once taken."""
        return {i: self._usage.pop(i) for i in indices if i in self._usage}
