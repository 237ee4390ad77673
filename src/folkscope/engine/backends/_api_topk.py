"""Top-k-first scoring of plain-text prompts: one request per prompt, echo only where a candidate can matter.

Why it exists
-------------
Exact echo scoring sends the whole prompt once per candidate (``prompt +
candidate`` with ``echo=True``), and a provider bills every copy: a
300-token multiple-choice prompt with a dozen answer variants in two orderings
costs thousands of prompt tokens per row. One completions request with
``logprobs=k, max_tokens=1`` on the prompt alone returns the ``k`` most likely
first tokens, which already holds every single-token candidate that carries
real probability. The rest are handled by the bound rule the engine already
uses to merge answers (:func:`~folkscope.engine.tokens.missing_is_negligible`):
a candidate missing from the top ``k`` has probability at most the smallest
listed one (or, when a listed token starts it, that token's probability), so
when all missing candidates together cannot move the renormalised answer by
more than :data:`~folkscope.engine.tokens.MISSING_TOLERANCE`, they stay NaN
with that bound (and :meth:`~folkscope.engine.VariantSet.merge_logprobs`
leaves them out, exactly as for a chat model); otherwise the missing ones,
and only those, are scored exactly by echo, all of one prompt (or of one
prefix group) in one request.

A candidate found in the table gets the provider's log-probability of that
next token after the prompt as tokenized alone: the local backends'
definition (prompt and candidate tokenized separately). Where the prompt's
end and the candidate would merge into one token (a prompt ending in a space
before ``"A"``), echo could not score it at all (NaN); the top-k reading can.

Examples
--------
>>> read = read_top({" A": -0.2, " B": -1.8}, 30, (" A", " B", " C"), next_token=False)
>>> read.logprobs[:2], read.bound
([-0.2, -1.8], -1.8)
>>> read.to_fetch()  # " C" could hold up to e^-1.8 of the mass: worth an echo request
[2]
>>> read_top({" A": -0.01, " B": -5.0, "x": -12.0}, 30, (" A", " B", " C"), next_token=False).to_fetch()
[]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from folkscope.engine.backends._api_wire import _Job, echo_calls, text_top_call, top_result
from folkscope.engine.requests import NextTokenResult, ScoreResult
from folkscope.engine.tokens import missing_is_negligible

__all__ = ["TopRead", "read_top", "top_first_job"]


@dataclass
class TopRead:
    """One prompt's candidates as read so far: exact values, NaN for those missing, their bound.

    Attributes
    ----------
    logprobs : list of float
        NaN where the candidate is not (yet) scored.
    num_tokens : list of int
        1 for a candidate read from the top-k table, the echoed count for one
        scored by echo, 0 while unscored.
    bound : float or None
        Upper bound of the NaN entries' log-probabilities (None: none known).
    prompt_tokens : int
        The prompt's length as the provider billed it.
    """

    logprobs: list[float]
    num_tokens: list[int]
    bound: float | None
    prompt_tokens: int

    def to_fetch(self) -> list[int]:
        """Indices of the candidates worth an echo request: every missing one, unless together they cannot matter."""
        if missing_is_negligible(self.logprobs, self.bound):
            return []
        return [i for i, v in enumerate(self.logprobs) if math.isnan(v)]

    def fill(self, index: int, echoed: tuple[float, int, int], *, next_token: bool) -> None:
        """Record candidate ``index`` as echo scored it: (log-probability or NaN, tokens, prompt tokens).

        For a next-token request, an entry the provider splits into several
        tokens is not a next token: it stays NaN. Once nothing is NaN the
        bound is dropped (there is nothing left to bound).
        """
        value, n_tokens, _ = echoed
        if math.isnan(value) or (next_token and n_tokens != 1):
            value, n_tokens = math.nan, 0
        self.logprobs[index] = value
        self.num_tokens[index] = n_tokens
        if not any(math.isnan(v) for v in self.logprobs):
            self.bound = None

    def score_result(self) -> ScoreResult:
        return ScoreResult(tuple(self.logprobs), tuple(self.num_tokens), self.prompt_tokens, self.bound)

    def next_token_result(self) -> NextTokenResult:
        return NextTokenResult(tuple(self.logprobs), self.prompt_tokens, self.bound)


def read_top(table: dict[str, float], prompt_tokens: int, cands: Sequence[str], *, next_token: bool) -> TopRead:
    """Read ``cands`` from a top-k table (:func:`~._api_wire.top_result`).

    For a scored continuation a listed token that starts a missing candidate
    bounds it (the candidate may be several tokens beginning with it); a next
    token is one token, so only the smallest listed value bounds it.
    """
    lps, ntok, bound = top_result(table, prompt_tokens, cands, prefixes=not next_token)
    return TopRead(list(lps), list(ntok), bound, prompt_tokens)


def top_first_job(
    prompts: Sequence[str],
    cands: Sequence[str],
    *,
    k: int,
    model: str,
    next_token: bool,
    finish: Callable[[list[TopRead]], Any],
    echoed: Callable[[int], None],
) -> _Job:
    """One top-``k`` request per plain-text prompt, then one echo follow-up for the candidates that could matter.

    The follow-up scores, by echo, every candidate of every prompt that the
    bound rule cannot leave out (``echoed`` is told how many), in requests of
    up to 32 prompts; ``finish`` turns the completed reads into the result.
    """
    calls = [text_top_call(p, k=k, model=model) for p in prompts]

    def after_top(parts: list[Any]) -> Any:
        reads = [read_top(table, n, cands, next_token=next_token) for table, n in parts]
        where = [(r, c) for r, read in enumerate(reads) for c in read.to_fetch()]
        if not where:
            return finish(reads)
        echoed(len(where))
        echo, flatten = echo_calls([(prompts[r], cands[c]) for r, c in where], model=model)

        def after_echo(echo_parts: list[Any]) -> Any:
            for (r, c), value in zip(where, flatten(echo_parts)):
                reads[r].fill(c, value, next_token=next_token)
            return finish(reads)

        return _Job(echo, after_echo)

    return _Job(calls, after_top)
