"""Whether a stored answer can be the answer to its request: what a checksum cannot tell.

Why it exists
-------------
Every cache entry carries a checksum, which proves that its bytes are what
some writer stored, not that the writer was right: a buggy writer (an
older release, a script that filled the cache, a backend that misread a
provider) stores wrong numbers under a valid checksum. A measuring
instrument must not pass them on, so every answer read from the cache is
checked against what any model could have answered; one that fails is
recomputed and replaced like a damaged one (the engine counts and logs it).

What is checked, per result kind
--------------------------------
Log-probabilities (scores, prefix groups, next tokens)
    one per candidate; each at most 0 (:data:`SLACK` for float rounding)
    and at least :data:`FLOOR_PER_TOKEN` per token (a value below that is
    a sentinel or an uninitialised number, not a probability); ``-inf``
    (probability 0) allowed, but not for every candidate; ``NaN`` (not
    scored) only from a backend that marks candidates it could not score
    (a web API, :attr:`marks_unscored`), and then only for a candidate of
    no tokens, with a ``bound``, when there is one, that is itself a
    log-probability. Mutually exclusive continuations cannot be more than
    certain together: the probabilities of the candidates none of which is
    a prefix of another (their token sequences cannot both follow the
    prompt) sum to at most 1 (:data:`SUM_SLACK`). Candidates that are
    prefixes of others (``" 1"`` and ``" 10"``) are left out of that sum,
    since both can follow at once.
Generations
    a known finish reason, token counts that are not negative, and no stop
    string left in the text (every backend cuts the text before it).

The slacks are wide on purpose: a legitimate answer flagged here would be
recomputed on every run (and paid again on a web API), while the values
this guards against are wrong by orders of magnitude.

Examples
--------
>>> from folkscope.engine.requests import ScoreRequest, ScoreResult
>>> request = ScoreRequest("Q:", (" A", " B"))
>>> implausible(request, ScoreResult((-0.1, -2.5), (1, 1), 3)) is None
True
>>> implausible(request, ScoreResult((-0.01, -0.01), (1, 1), 3))
'the probabilities of mutually exclusive candidates sum to 1.98'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from folkscope.engine.requests import (
    GenerateRequest,
    GenerateResult,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    ScoreRequest,
    ScoreResult,
)

__all__ = ["FLOOR_PER_TOKEN", "SLACK", "SUM_SLACK", "implausible"]

#: nats a log-probability may exceed 0 by: float32 rounding of a log-softmax over large logits
SLACK = 1e-3
#: nats the log of a sum of exclusive probabilities may exceed 0 by: providers and low-precision kernels round
SUM_SLACK = 0.05
#: the least log-probability per token any model gives (logits a hundred thousand apart); lower is not a number a model made
FLOOR_PER_TOKEN = -1e5
#: finish reasons a generation can have
FINISH_REASONS = ("stop", "eos", "length")


def implausible(request: Any, result: Any, *, marks_unscored: bool = False) -> str | None:
    """Why ``result`` cannot be the answer to ``request``, or None when it can.

    Parameters
    ----------
    request : ScoreRequest, PrefixGroupRequest, NextTokenRequest or GenerateRequest
    result : the matching result type (decoded from the cache)
    marks_unscored : bool, default False
        The backend leaves candidates it cannot score as NaN (a web API);
        from any other backend a NaN is not an answer.
    """
    if isinstance(request, PrefixGroupRequest) and isinstance(result, PrefixGroupResult):
        if len(result.results) != len(request.suffixes):
            return f"{len(result.results)} results for {len(request.suffixes)} suffixes"
        for part in result.results:
            why = _score(request.candidates, part, marks_unscored)
            if why is not None:
                return why
        return None
    if isinstance(request, ScoreRequest) and isinstance(result, ScoreResult):
        return _score(request.candidates, result, marks_unscored)
    if isinstance(request, NextTokenRequest) and isinstance(result, NextTokenResult):
        if result.prompt_tokens < 0:
            return f"a prompt of {result.prompt_tokens} tokens"
        return _logprobs(request.tokens, result.logprobs, None, result.bound, marks_unscored)
    if isinstance(request, GenerateRequest) and isinstance(result, GenerateResult):
        return _generation(request, result)
    return f"a {type(result).__name__} cannot answer a {type(request).__name__}"


def _score(candidates: Sequence[str], result: ScoreResult, marks_unscored: bool) -> str | None:
    if len(result.num_tokens) != len(candidates):
        return f"{len(result.num_tokens)} token counts for {len(candidates)} candidates"
    if result.prompt_tokens < 0:
        return f"a prompt of {result.prompt_tokens} tokens"
    return _logprobs(candidates, result.logprobs, result.num_tokens, result.bound, marks_unscored)


def _logprobs(
    candidates: Sequence[str],
    logprobs: Sequence[float],
    counts: Sequence[int] | None,
    bound: float | None,
    marks_unscored: bool,
) -> str | None:
    """The checks of the module docs on one list of log-probabilities.

    ``counts``: the tokens of each candidate (0 for one not scored), or None
    for next tokens (one token each, and no count is kept for them).
    """
    if len(logprobs) != len(candidates):
        return f"{len(logprobs)} log-probabilities for {len(candidates)} candidates"
    for value, n in zip(logprobs, counts if counts is not None else [1] * len(logprobs)):
        if math.isnan(value):
            if not marks_unscored:
                return "a candidate left unscored (NaN) by a backend that scores every candidate"
            if counts is not None and n != 0:
                return f"NaN for a candidate scored over {n} tokens"
            continue
        if n < 1:
            return f"a log-probability for a candidate of {n} tokens"
        if value > SLACK:
            return f"a log-probability of {value:g}, above 0"
        if value != -math.inf and value < FLOOR_PER_TOKEN * n:
            return f"a log-probability of {value:g} over {n} token(s), below what any model gives"
    if logprobs and all(value == -math.inf for value in logprobs):
        return "probability 0 for every candidate"
    if bound is not None and not (math.isfinite(bound) and FLOOR_PER_TOKEN <= bound <= SLACK):
        return f"a bound of {bound:g} on the unscored candidates, not a log-probability"
    exclusive = [logprobs[i] for i in _exclusive(tuple(candidates)) if math.isfinite(logprobs[i])]
    if exclusive:
        top = max(exclusive)
        total = top + math.log(math.fsum(math.exp(v - top) for v in exclusive))
        if total > SUM_SLACK:
            return f"the probabilities of mutually exclusive candidates sum to {math.exp(total):.3g}"
    return None


@functools.lru_cache(maxsize=1024)
def _exclusive(candidates: tuple[str, ...]) -> tuple[int, ...]:
    """Indices of the candidates that are no other candidate's prefix (pairwise exclusive continuations).

    In sorted order the strings that start with a candidate come right after
    it, so comparing each with its successor finds every prefix.

    >>> _exclusive((" 10", " 1", " 2"))
    (0, 2)
    """
    order = sorted(range(len(candidates)), key=lambda i: candidates[i])
    prefixes = {i for i, j in zip(order, order[1:]) if candidates[j].startswith(candidates[i])}
    return tuple(i for i in range(len(candidates)) if i not in prefixes)


def _generation(request: GenerateRequest, result: GenerateResult) -> str | None:
    if result.finish_reason not in FINISH_REASONS:
        return f"finish reason {result.finish_reason!r}, not one of {', '.join(FINISH_REASONS)}"
    if result.prompt_tokens < 0 or result.completion_tokens < 0:
        return f"token counts {result.prompt_tokens} and {result.completion_tokens}, below 0"
    left = [stop for stop in request.settings.stop if stop in result.text]
    if left:
        return f"the stop string {left[0]!r} still in the generated text"
    return None
