"""What a web-API step will cost, said before it is sent, and a confirmation above a spending limit.

Why it exists
-------------
A web-API run is paid per token, and a wrong flag (the full test set instead
of a subsample, echo scoring of every answer variant) can cost a lot before
anyone looks. The backend knows every request of a step before sending any,
so it states the prompt tokens and litellm's price up front (:class:`Estimate`)
and :class:`CostGate` asks before a step that would take the session's
spending above ``max_cost`` (``--max-cost``, default $1). On a terminal it
asks; without one it refuses in one line naming the estimate and the flag
that allows it (``--yes``). A model litellm has no price for (a local
server) is never gated: only its token count is stated.

Token counts are litellm's (the model's own encoding where bundled, else
cl100k); above :data:`_EXACT_COUNTS` distinct texts the rest are scaled from
a sample by characters. The echo requests that top-k scoring still needs are
counted for candidates that are several tokens long locally; single-token
candidates that turn out to matter despite missing from the top-k add a
little more.

Examples
--------
>>> est = Estimate(requests=154, prompt_tokens=46_200, completion_tokens=154, cost_usd=0.0231)
>>> est.line("openai/gpt-4o-mini", "scoring 77 rows")
'openai/gpt-4o-mini: scoring 77 rows sends about 154 requests, 46,200 prompt tokens, about $0.0231 (litellm price)'
>>> gate = CostGate(max_cost=0.01, approved=False, ask=lambda question: None)  # no terminal to ask on
>>> gate.check(est, spent=0.0, model="openai/gpt-4o-mini", what="scoring 77 rows", announce=False)
Traceback (most recent call last):
...
folkscope.errors.ConfigError: openai/gpt-4o-mini: scoring 77 rows sends about 154 requests, 46,200 prompt tokens, about $0.0231 (litellm price), over --max-cost $0.01; pass --yes to run it anyway (approve_cost=True in Python) or raise --max-cost. No request was sent.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from folkscope.engine.backends._api_wire import _PROMPTS_PER_CALL
from folkscope.engine.config import check_max_cost
from folkscope.engine.requests import ChatPrompt, GenerateRequest, PrefixGroupRequest, Prompt, ScoreRequest
from folkscope.errors import ConfigError

__all__ = ["DEFAULT_MAX_COST", "CostGate", "Estimate", "ask_on_terminal", "count_texts", "estimate_requests"]

log = logging.getLogger(__name__)

#: USD a session may spend without a confirmation (``--max-cost``)
DEFAULT_MAX_COST = 1.0
#: texts counted exactly before the rest are scaled from them by characters
_EXACT_COUNTS = 256


@dataclass(frozen=True)
class Estimate:
    """What one step of requests will be billed, before any is sent.

    Attributes
    ----------
    requests : int
        HTTP requests (echo follow-ups of top-k scoring included where foreseen).
    prompt_tokens, completion_tokens : int
    cost_usd : float or None
        litellm's price of those tokens; None when it has no price for the model.
    """

    requests: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None

    def line(self, model: str, what: str) -> str:
        """One line: the step, its requests, prompt tokens and price."""
        price = "price unknown to litellm" if self.cost_usd is None else f"about ${self.cost_usd:.4f} (litellm price)"
        return f"{model}: {what} sends about {self.requests:,} requests, {self.prompt_tokens:,} prompt tokens, {price}"


def count_texts(texts: Sequence[str], count: Callable[[str], int], *, exact: int = _EXACT_COUNTS) -> int:
    """Total tokens of ``texts``: the first ``exact`` distinct ones counted, the rest scaled by characters.

    Examples
    --------
    >>> count_texts(["ab", "abcd", "ab"], len)
    8
    >>> count_texts(["ab"] * 3 + ["abcdef"], len, exact=1)  # 1 token per character, from the counted "ab"
    12
    """
    memo: dict[str, int] = {}
    counted_chars = counted_tokens = 0
    total = 0
    rest_chars = 0
    for text in texts:
        if text in memo:
            total += memo[text]
        elif len(memo) < exact:
            n = memo[text] = int(count(text))
            counted_chars += len(text)
            counted_tokens += n
            total += n
        else:
            rest_chars += len(text)
    if rest_chars:
        per_char = counted_tokens / counted_chars if counted_chars else 0.25
        total += math.ceil(rest_chars * per_char)
    return total


def ask_on_terminal(question: str) -> bool | None:
    """Ask ``question`` on the terminal; True for yes. None when there is no terminal to ask on."""
    if not (sys.stdin is not None and sys.stdin.isatty() and sys.stderr is not None and sys.stderr.isatty()):
        return None
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


class CostGate:
    """States each step's estimate and holds back one that would take spending over ``max_cost`` unapproved.

    Parameters
    ----------
    max_cost : float
        USD the session may spend (answers already paid included) without a confirmation.
    approved : bool
        ``--yes``: never ask.
    ask : callable, optional
        Asks a yes/no question; returns None when it cannot (no terminal).
        Default (None): :func:`ask_on_terminal`. A yes approves the rest of the session.
    """

    def __init__(self, *, max_cost: float, approved: bool, ask: Callable[[str], bool | None] | None = None) -> None:
        self.max_cost = max_cost
        self.approved = approved
        self._ask = ask

    @classmethod
    def checked(cls, max_cost: object, approved: object) -> CostGate:
        """A gate from user settings, refusing a ``max_cost`` that is not a number of USD >= 0 or an ``approved`` that is not a bool."""
        limit = check_max_cost(max_cost)
        if not isinstance(approved, bool):
            raise ConfigError(f"approve_cost must be True or False, got {approved!r}", parameter="approve_cost")
        return cls(max_cost=limit, approved=approved)

    def check(self, estimate: Estimate, *, spent: float, model: str, what: str, announce: bool = True) -> None:
        """Say what the step costs; raise :class:`ConfigError` when it is over the limit and not approved."""
        line = estimate.line(model, what)
        log.info("%s", line)
        if announce:
            print(line, file=sys.stderr, flush=True)
        cost = estimate.cost_usd
        if self.approved or cost is None or spent + cost <= self.max_cost:
            return
        over = f"{line}, over --max-cost ${self.max_cost:g}"
        if spent > 0:
            over += f" with ${spent:.4f} already spent"
        answer = (self._ask or ask_on_terminal)(f"{over}. Send it?")
        if answer:
            self.approved = True
            return
        if answer is None:
            raise ConfigError(
                f"{over}; pass --yes to run it anyway (approve_cost=True in Python) or raise --max-cost. No request was sent.",
                parameter="max_cost",
                value=self.max_cost,
            )
        raise ConfigError(f"{over}; not confirmed, so no request was sent", parameter="max_cost", value=self.max_cost)


def estimate_requests(
    requests: Sequence[Any],
    *,
    render: Callable[[Any], str],
    count: Callable[[str], int],
    text_route: Callable[[Any], bool],
    top_first: bool,
    price: Callable[[int, int], float] | None,
) -> Estimate:
    """Requests, billed tokens and price of answering ``requests`` (none answered yet) on a web API.

    What each request sends follows the backend's route (``text_route``: the
    completions endpoint for this prompt) and scoring: top-k first
    (``top_first``) costs each prompt once, plus an echo request for the
    candidates that are several tokens long (counted by ``count``); echo
    costs the prompt once per candidate. A generation is counted at its full
    ``max_new_tokens``. ``price`` is litellm's (None: unknown model).
    """
    texts: list[str] = []  # every prompt as billed, one entry per copy sent
    requests_n = completion = 0
    for req in requests:
        if isinstance(req, GenerateRequest):
            texts.append(render(req.prompt))
            requests_n += 1
            completion += req.settings.max_new_tokens
            continue
        if isinstance(req, PrefixGroupRequest):
            prompts: list[Prompt] = [
                req.prefix + s
                if isinstance(req.prefix, str)
                else ChatPrompt(
                    req.prefix.messages, prefill=req.prefix.prefill + s, enable_thinking=req.prefix.enable_thinking
                )
                for s in req.suffixes
            ]
            cands = req.candidates
        else:
            prompts, cands = [req.prompt], (req.candidates if isinstance(req, ScoreRequest) else req.tokens)
        on_text = text_route(prompts[0])
        rendered = [render(p) for p in prompts]
        if not on_text or top_first:
            texts.extend(rendered)
            requests_n += len(rendered)
            completion += len(rendered)
        if not on_text:
            continue
        echoed = [(p, c) for p in rendered for c in cands]
        if top_first:  # foreseen echo: candidates of several tokens
            echoed = [(p, c) for p, c in echoed if count(c) > 1]
        texts.extend(p + c for p, c in echoed)
        requests_n += -(-len(echoed) // _PROMPTS_PER_CALL)
        completion += len(echoed)
    prompt_tokens = count_texts(texts, count)
    cost = price(prompt_tokens, completion) if price is not None else None
    return Estimate(requests_n, prompt_tokens, completion, cost)
