"""Web-API backend through litellm: any provider it supports, OpenAI-compatible servers included.

Why one module: :class:`LiteLLMBackend` is one class whose request routes
(top-k, echo, chat) are chosen per prompt and share its state (model,
capabilities, cost guard); its transport, wire format, billing and event loop
are modules of their own already.

How each request kind is answered
---------------------------------
Two routes, chosen per prompt by ``mode``:

``"completions"`` (plain-text prompts; the default for them under ``"auto"``)
    *Top-k first* (``score_mode="topk"``, the default; :mod:`._api_topk`):
    one request per prompt with ``logprobs=k, max_tokens=1`` and no echo, so
    the prompt is billed once; candidates found among the top ``k`` first
    tokens get their exact log-probability. Missing candidates are scored by
    echo (below), all of a prompt or prefix group in one request, only when
    they could matter by the engine's bound rule
    (:func:`~folkscope.engine.tokens.missing_is_negligible`); otherwise they
    are NaN with a bound, as on the chat route. ``k`` is ``top_logprobs``,
    at most 5 on OpenAI's own endpoint (its limit for completions).

    Exact scoring by *echo* (``score_mode="echo"``, every candidate, the
    earlier behaviour and cache identity): the prompt followed by a candidate is sent to
    the text-completion endpoint with ``echo=True, logprobs=1,
    max_tokens=1``; the provider returns the log-probability of every
    prompt token, and the candidate's tokens are those whose text offset
    falls inside the candidate. Their sum is the exact log-probability of
    the candidate, however many tokens it has (a multi-token candidate is
    the full product, never its first token). All candidates of a request,
    and all suffixes x candidates of a prefix group, go out as one request
    with a list of prompts (chunks of 32). If the provider's tokenizer merges
    the end of the prompt with the start of the candidate (the boundary is
    not a token boundary, e.g. a prompt ending in a space before ``"A"``),
    the candidate cannot be scored as a continuation: it is NaN without a
    bound, and counted. Next-token requests are scored the same way; an entry
    that turns out to be more than one token is NaN as well.

``"chat"`` (chat prompts; plain text too when ``mode="chat"``, as one user message)
    ``logprobs=True, top_logprobs=k, max_tokens=1``: the candidates are
    looked up by exact string among the top-``k`` first tokens. A candidate
    found there gets its exact log-probability. A candidate not found is
    **NaN, never 0**, and the result's ``bound`` is a log-probability it
    cannot exceed: the smallest of the top-``k`` values, or, when a returned
    token is a proper prefix of the candidate (the candidate might be
    several tokens starting with it), that token's log-probability if larger.
    :meth:`~folkscope.engine.VariantSet.merge_logprobs` then leaves such
    entries out only when they cannot matter. Missing candidates and marked
    rows are counted in :attr:`stats`.

Generation uses either route with ``temperature``, ``max_tokens``, ``stop``
(the first four go to the provider, every one is applied locally) and
``seed``; finish reasons map to ``"stop"`` (a stop string), ``"eos"`` or
``"length"`` (a provider that does not say whether a stop string or the
end of text ended a generation is read as "stop" when stop strings were
given, else "eos").

Capabilities are checked before any request (:meth:`LiteLLMBackend.capabilities`):
litellm's parameter tables say whether the model returns log-probabilities
(a model known not to makes every scoring call fail at once with the modes
that still work; an unknown model is assumed to, and a response without
them raises :class:`~folkscope.errors.BackendError` naming the model), and
whether it accepts an assistant prefill (``ChatPrompt.prefill``).

Reliability (retries, rate limits, answers saved as they arrive) is
:mod:`._api_transport`'s; security (keys only from the environment, never in
identities, logs or messages) is :mod:`._api_support`'s; what a step will
cost is stated before it is sent (:mod:`._api_estimate`).

Examples
--------
>>> backend = LiteLLMBackend("openai/gpt-4o-mini")  # doctest: +SKIP
>>> backend.capabilities().logprobs  # doctest: +SKIP
True
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from folkscope.engine.backends._api_billing import Billing
from folkscope.engine.backends._api_estimate import DEFAULT_MAX_COST, CostGate, Estimate, estimate_requests
from folkscope.engine.backends._api_support import (
    _COMPATIBLE,
    _NO_LOGPROBS_MODES,
    SCORING_VERSION,
    APIBackendStats,
    APICapabilities,
    APITokenizer,
    _check_int,
    _check_key_env,
    _check_mode,
    _check_options,
    _check_prefill,
    _check_rpm,
    _check_score_mode,
    _check_seconds,
    _litellm,
    _safe_base,
    check_key,
    fallback_encoding,
    probe,
)
from folkscope.engine.backends._api_topk import TopRead, top_first_job
from folkscope.engine.backends._api_transport import Transport
from folkscope.engine.backends._api_wire import (
    _Call,
    _Job,
    chat_fields,
    echo_calls,
    generation_call,
    parse_top,
    top_result,
)
from folkscope.engine.backends.base import Batches
from folkscope.engine.ratelimit import RateLimiter, RetryPolicy
from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    Prompt,
    ScoreRequest,
    ScoreResult,
)
from folkscope.engine.usage import Usage
from folkscope.errors import BackendError, ConfigError

__all__ = ["APIBackendStats", "APICapabilities", "APITokenizer", "LiteLLMBackend"]

log = logging.getLogger(__name__)
#: OpenAI's largest ``logprobs`` on its own completions endpoint (OpenAI-compatible servers take ``top_logprobs``)
_OPENAI_COMPLETIONS_MAX_LOGPROBS = 5


# ---------------------------------------------------------------------- the backend
class LiteLLMBackend:
    """Web-API models through litellm (module docstring: routes, reliability, security).

    Parameters
    ----------
    model : str or object with ``.name``
        A litellm model id, e.g. ``"openai/gpt-4o-mini"``, ``"anthropic/claude-3-5-haiku-latest"``,
        or ``"openai/<served name>"`` with ``api_base`` for an OpenAI-compatible server (vLLM, ...).
    api_base : str, optional
        Base URL of an OpenAI-compatible server, e.g. ``"http://127.0.0.1:8000/v1"``.
    max_concurrency : int, default 8
        Requests in flight at once (1 to 1024).
    max_rpm : float, optional
        Requests per minute, retries included (evenly spaced); None: no limit.
    max_retries : int, default 6
        Retries of a request after transient failures (0: none).
    timeout : float, default 60
        Seconds a request may take before it is abandoned (and retried).
    top_logprobs : int, default 20
        ``k`` of top-k scoring (1 to 20, OpenAI's chat maximum; at most 5 on OpenAI's own completions
        endpoint); larger ``k`` leaves fewer candidates unscored or sent to echo.
    score_mode : {"topk", "echo"}, default "topk"
        Plain-text prompts: "topk" reads candidates from one top-k request per prompt and echoes only
        those that could matter; "echo" scores every candidate by echo (the prompt billed once per
        candidate; the cache identity of earlier versions). Chat prompts are always read from top-k.
    max_cost : float, default 1.0
        USD this backend may spend (already spent included) before a step asks for confirmation
        on a terminal, or is refused without one (:mod:`._api_estimate`).
    approve_cost : bool, default False
        Never ask (``--yes``).
    mode : {"auto", "chat", "completions"}, default "auto"
        "auto": plain-text prompts by echo on the completions endpoint, chat
        prompts by chat completions. "chat": plain text goes as one user
        message. "completions": plain-text prompts only.
    api_key_env : str, optional
        Name of the environment variable holding the key (read when a request
        is sent, not kept by the backend); default: litellm's variable for the provider.
    assistant_prefill : bool, optional
        Whether ``ChatPrompt.prefill`` may be sent as a final assistant
        message; default: what litellm's model table says (an unknown model:
        no). Set True for OpenAI-compatible servers that continue a final
        assistant message (vLLM: ``continue_final_message`` is sent along).
    backoff_base, backoff_max : float, default 0.5 and 30
        Exponential backoff (seconds) of retries, with jitter (:class:`~folkscope.engine.ratelimit.RetryPolicy`).
    max_retry_after : float, default 300
        Longest ``Retry-After`` waited for; a longer one fails the request.
    jitter_seed : int, optional
        Seed of the backoff jitter (tests).
    litellm_options : mapping, optional
        Passed to every litellm call (e.g. ``{"reasoning_effort": "low"}``);
        part of :meth:`identity`. Credentials and options the backend
        controls are refused.

    Raises
    ------
    ConfigError
        An invalid option, a missing API key variable, ``mode="completions"``
        for a model without a completions endpoint.
    """

    name = "litellm"
    #: candidates it cannot score are NaN (see the module docs); the result cache accepts them from this backend
    marks_unscored = True

    def __init__(
        self,
        model: Any,
        *,
        api_base: str | None = None,
        max_concurrency: int = 8,
        max_rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 60.0,
        top_logprobs: int = 20,
        mode: str = "auto",
        score_mode: str = "topk",
        max_cost: float = DEFAULT_MAX_COST,
        approve_cost: bool = False,
        api_key_env: str | None = None,
        assistant_prefill: bool | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 300.0,
        jitter_seed: int | None = None,
        litellm_options: Mapping[str, Any] | None = None,
    ) -> None:
        name = getattr(model, "name", model)
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ConfigError(
                f"model must be a litellm model id such as 'openai/gpt-4o-mini', got {model!r}",
                parameter="model",
                value=model,
            )
        self.model = name
        self.api_base = _safe_base(api_base)
        self.max_concurrency = _check_int(max_concurrency, "max_concurrency", 1, 1024)
        self.max_rpm = _check_rpm(max_rpm)
        self._limiter = RateLimiter(max_rpm) if max_rpm is not None else None
        self.retry = RetryPolicy(
            max_retries=max_retries,
            base_delay=backoff_base,
            max_delay=backoff_max,
            max_retry_after=max_retry_after,
            seed=jitter_seed,
        )
        self.timeout = _check_seconds(timeout, "timeout")
        self.top_logprobs = _check_int(top_logprobs, "top_logprobs", 1, 20)
        self.mode = _check_mode(mode)
        self.score_mode = _check_score_mode(score_mode)
        self._gate = CostGate.checked(max_cost, approve_cost)
        self.api_key_env = _check_key_env(api_key_env)
        _check_prefill(assistant_prefill)
        self.litellm_options = _check_options(dict(litellm_options or {}))
        self._litellm = _litellm()
        self.stats = APIBackendStats()
        self._caps, self._model_name, self._provider, self._params = probe(
            self._litellm, self.model, self.api_base, assistant_prefill
        )
        self.stats.cost_known = self._caps.cost_known
        check_key(
            self._litellm,
            model=self.model,
            provider=self._provider,
            api_base=self.api_base,
            api_key_env=self.api_key_env,
        )
        if self.mode == "completions" and not self._caps.completions:
            raise ConfigError(
                f"mode='completions' needs a plain-text completions endpoint, which {self.model} does not have through "
                "litellm; use mode='auto' or 'chat'",
                parameter="mode",
                value=mode,
            )
        if self._caps.logprobs is False:
            log.warning("%s", self._caps.scoring_modes)
        self._tokenizer = APITokenizer(
            self._model_name, None if self._caps.exact_token_counts else fallback_encoding(self._model_name)
        )
        self._billing = Billing(
            self._litellm, model_name=self._model_name, provider=self._provider, stats=lambda: self.stats
        )
        own_endpoint = self.api_base is None and self._provider in ("openai", "text-completion-openai")
        self._text_k = min(self.top_logprobs, _OPENAI_COMPLETIONS_MAX_LOGPROBS) if own_endpoint else self.top_logprobs
        self._transport = Transport(  # the stats are read through the backend: a caller may replace them
            self._litellm,
            model=self.model,
            provider=self._provider,
            api_base=self.api_base,
            api_key_env=self.api_key_env,
            litellm_options=self.litellm_options,
            timeout=self.timeout,
            max_concurrency=self.max_concurrency,
            retry=self.retry,
            limiter=self._limiter,
            billing=self._billing,
            stats=lambda: self.stats,
        )

    @classmethod
    def from_model(
        cls,
        model: Any,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_tokens: int | None = None,
        **options: Any,
    ) -> LiteLLMBackend:
        """Build from :meth:`Engine.from_model <folkscope.engine.Engine.from_model>` arguments.

        ``device`` and ``dtype`` must be None (the provider runs the model);
        ``batch_tokens`` is accepted and ignored (there are no local batches;
        ``max_concurrency`` and ``max_rpm`` set the pace). Keywords naming a
        class parameter set it; any other keyword goes to litellm.
        """
        for param, value in (("device", device), ("dtype", dtype)):
            if value is not None:
                raise ConfigError(
                    f"{param}={value!r} means nothing for a web API (the provider runs the model); leave it unset",
                    parameter=param,
                    value=value,
                )
        if batch_tokens is not None:
            _check_int(batch_tokens, "batch_tokens", 1)
        own = set(inspect.signature(cls.__init__).parameters) - {"self", "model", "litellm_options"}
        mine = {k: options.pop(k) for k in list(options) if k in own}
        return cls(model, **mine, litellm_options=options)

    # ------------------------------------------------------------------ capabilities and identity
    def capabilities(self) -> APICapabilities:
        """What this model can do (known before any request); see :class:`APICapabilities`."""
        return self._caps

    def identity(self) -> dict[str, Any]:
        """What keys the result cache; ``score_mode="echo"`` keeps the identity of versions before top-k scoring."""
        ident = {
            "backend": self.name,
            "model": {"name": self.model, "source": "api", "provider": self._provider},
            "api_base": self.api_base,
            "mode": self.mode,
            "top_logprobs": self.top_logprobs,
            "options": dict(sorted(self.litellm_options.items())),
            "scoring": SCORING_VERSION,
        }
        if self.score_mode != "echo":  # the answers of plain-text prompts are read differently
            ident["score_mode"] = self.score_mode
        return ident

    def __repr__(self) -> str:
        return f"LiteLLMBackend(model={self.model!r}, api_base={self.api_base!r}, mode={self.mode!r}, score_mode={self.score_mode!r})"

    # ------------------------------------------------------------------ tokenizer-like helpers
    @property
    def tokenizer(self) -> APITokenizer:
        return self._tokenizer

    def render(self, prompt: Prompt) -> str:
        """Plain text as is; a chat prompt as readable ``[role]`` blocks (for reports only: the provider renders it)."""
        if isinstance(prompt, str):
            return prompt
        if not isinstance(prompt, ChatPrompt):
            raise ConfigError(
                f"a prompt must be a str or a ChatPrompt, got {type(prompt).__name__}", parameter="prompt"
            )
        conv = [{"role": m.role, "content": m.content} for m in prompt.messages]
        return self._tokenizer.apply_chat_template(conv) + prompt.prefill

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        """Prompt lengths by ``litellm.token_counter`` (estimates where the tokenizer is not bundled)."""
        out = []
        for p in prompts:
            if isinstance(p, str):
                out.append(self._tokenizer.count(text=p))
            else:
                msgs = [{"role": m.role, "content": m.content} for m in p.messages]
                if p.prefill:
                    msgs.append({"role": "assistant", "content": p.prefill})
                out.append(self._tokenizer.count(messages=msgs))
        return out

    def is_single_token(self, text: str) -> bool:
        """True for any non-empty text: the provider's vocabulary is unknown here.

        Keeping every variant is the safe choice: an entry that turns out not
        to be one token comes back NaN (and counted), never guessed, while
        dropping a variant that is a token would lose its probability silently.
        """
        return isinstance(text, str) and bool(text)

    def close(self) -> None:
        """Close this backend's HTTP client (the shared event loop lives until the interpreter exits)."""
        self._transport.close()

    # ------------------------------------------------------------------ building requests
    def _require_logprobs(self) -> None:
        if self._caps.logprobs is False:
            raise BackendError(
                f"{self.model} cannot return log-probabilities (litellm's table for provider {self._provider!r} has "
                f"no 'logprobs' parameter), so it cannot score answers; {_NO_LOGPROBS_MODES}. No request was sent."
            )

    def _route(self, prompt: Prompt) -> Literal["text", "chat"]:
        if isinstance(prompt, ChatPrompt):
            if self.mode == "completions":
                raise ConfigError(
                    "mode='completions' takes plain-text prompts only; chat prompts need mode='auto' or 'chat'",
                    parameter="mode",
                    value=self.mode,
                )
            return "chat"
        if self.mode == "chat":
            return "chat"
        if not self._caps.completions:
            raise ConfigError(
                f"{self.model} has no plain-text completions endpoint through litellm, so plain-text prompts cannot be "
                "continued exactly; use chat prompts (use_chat_template=True / --use-chat-template), or mode='chat' "
                "to send plain text as one user message",
                parameter="mode",
                value=self.mode,
            )
        return "text"

    def _chat_fields(self, prompt: Prompt) -> dict[str, Any]:
        compatible = self.api_base is not None and self._provider in _COMPATIBLE
        return chat_fields(
            prompt, model=self.model, assistant_prefill=self._caps.assistant_prefill, compatible_server=compatible
        )

    def _chat_scoring_call(self, prompt: Prompt, read: Callable[[dict[str, float], int], Any]) -> _Call:
        kwargs = {
            **self._chat_fields(prompt),
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            "max_tokens": 1,
            "temperature": 0.0,
        }
        return _Call("chat", kwargs, lambda data: read(*parse_top(data, model=self.model)))

    def _count_marks(self, logprobs: Sequence[float]) -> None:
        missing = sum(1 for v in logprobs if math.isnan(v))
        if missing:
            self.stats.missing_candidates += missing
            self.stats.marked_rows += 1

    def _top_first_job(
        self, prompts: Sequence[str], cands: Sequence[str], *, next_token: bool, finish: Callable[[list[TopRead]], Any]
    ) -> _Job:
        """Top-k first for plain-text ``prompts`` (:func:`._api_topk.top_first_job`), counting echoed candidates and NaN marks."""

        def counted(reads: list[TopRead]) -> Any:
            for read in reads:
                self._count_marks(read.logprobs)
            return finish(reads)

        def echoed(n: int) -> None:
            self.stats.echo_candidates += n

        return top_first_job(
            prompts, cands, k=self._text_k, model=self.model, next_token=next_token, finish=counted, echoed=echoed
        )

    def _score_parts(
        self, prompt: Prompt, cands: Sequence[str]
    ) -> tuple[list[_Call], Callable[[list[Any]], ScoreResult]]:
        if self._route(prompt) == "text":
            if self.score_mode == "topk":
                job = self._top_first_job(
                    [prompt], cands, next_token=False, finish=lambda reads: reads[0].score_result()
                )  # type: ignore[list-item]
                return job.calls, job.assemble
            calls, flatten = echo_calls([(prompt, c) for c in cands], model=self.model)  # type: ignore[misc]

            def assemble(parts: list[Any]) -> ScoreResult:
                values = flatten(parts)
                lps = tuple(v[0] for v in values)
                self._count_marks(lps)
                return ScoreResult(lps, tuple(v[1] for v in values), values[0][2] if values else 0)

            return calls, assemble

        def read(table: dict[str, float], prompt_tokens: int) -> ScoreResult:
            lps, ntok, bound = top_result(table, prompt_tokens, cands, prefixes=True)
            self._count_marks(lps)
            return ScoreResult(tuple(lps), tuple(ntok), prompt_tokens, bound)

        return [self._chat_scoring_call(prompt, read)], lambda parts: parts[0]

    def _group_job(self, req: PrefixGroupRequest) -> _Job:
        prefix = req.prefix
        if isinstance(prefix, str) and self._route(prefix) == "text" and self.score_mode == "topk":
            return self._top_first_job(
                [prefix + s for s in req.suffixes],
                req.candidates,
                next_token=False,
                finish=lambda reads: PrefixGroupResult(tuple(r.score_result() for r in reads)),
            )
        if isinstance(prefix, str) and self._route(prefix) == "text":
            items = [(prefix + s, c) for s in req.suffixes for c in req.candidates]
            calls, flatten = echo_calls(items, model=self.model)
            n = len(req.candidates)

            def assemble(parts: list[Any]) -> PrefixGroupResult:
                values = flatten(parts)
                results = []
                for k in range(len(req.suffixes)):
                    chunk = values[k * n : (k + 1) * n]
                    lps = tuple(v[0] for v in chunk)
                    self._count_marks(lps)
                    results.append(ScoreResult(lps, tuple(v[1] for v in chunk), chunk[0][2]))
                return PrefixGroupResult(tuple(results))

            return _Job(calls, assemble)
        calls = []
        finishers = []
        for s in req.suffixes:
            if isinstance(prefix, str):
                prompt: Prompt = prefix + s
            else:  # the suffix continues the rendered chat: it extends the assistant prefill
                prompt = ChatPrompt(prefix.messages, prefill=prefix.prefill + s, enable_thinking=prefix.enable_thinking)
            part_calls, finish = self._score_parts(prompt, req.candidates)
            calls.extend(part_calls)
            finishers.append((len(part_calls), finish))

        def assemble_chat(parts: list[Any]) -> PrefixGroupResult:
            out, pos = [], 0
            for size, finish in finishers:
                out.append(finish(parts[pos : pos + size]))
                pos += size
            return PrefixGroupResult(tuple(out))

        return _Job(calls, assemble_chat)

    def _next_token_job(self, req: NextTokenRequest) -> _Job:
        if self._route(req.prompt) == "text" and self.score_mode == "topk":
            return self._top_first_job(
                [req.prompt], req.tokens, next_token=True, finish=lambda reads: reads[0].next_token_result()
            )  # type: ignore[list-item]
        if self._route(req.prompt) == "text":
            calls, flatten = echo_calls([(req.prompt, t) for t in req.tokens], model=self.model)  # type: ignore[misc]

            def assemble(parts: list[Any]) -> NextTokenResult:
                values = flatten(parts)
                lps = tuple(v[0] if v[1] == 1 else math.nan for v in values)  # more than one token: not a next token
                self._count_marks(lps)
                return NextTokenResult(lps, values[0][2] if values else 0)

            return _Job(calls, assemble)

        def read(table: dict[str, float], prompt_tokens: int) -> NextTokenResult:
            lps, _, bound = top_result(table, prompt_tokens, req.tokens, prefixes=False)
            self._count_marks(lps)
            return NextTokenResult(tuple(lps), prompt_tokens, bound)

        return _Job([self._chat_scoring_call(req.prompt, read)], lambda parts: parts[0])

    def _generate_job(self, req: GenerateRequest) -> _Job:
        route = self._route(req.prompt)
        fields = {"prompt": req.prompt} if route == "text" else self._chat_fields(req.prompt)
        return _Job([generation_call(req.settings, route, fields, self._params)], lambda parts: parts[0])

    # ------------------------------------------------------------------ the four request kinds
    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._send(
            requests, done, lambda r: _Job(*self._score_parts(r.prompt, r.candidates)), "scoring {:,} prompts"
        )

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._send(requests, done, self._group_job, "scoring {:,} prompt groups")

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._send(requests, done, self._next_token_job, "next-token scoring of {:,} prompts")

    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._send(requests, done, self._generate_job, "generating for {:,} prompts", logprobs=False)

    def _send(
        self,
        requests: Sequence[Any],
        done: Sequence[bool] | None,
        job: Callable[[Any], _Job],
        what: str,
        *,
        logprobs: bool = True,
    ) -> Batches:
        """The requests not marked done, checked (log-probabilities, cost) before any is sent, then streamed."""
        requests = list(requests)
        todo = self._todo(len(requests), done)
        if not todo:
            return
        if logprobs:
            self._require_logprobs()
        jobs = {i: job(requests[i]) for i in todo}
        self._check_cost([requests[i] for i in todo], what.format(len(todo)))
        yield from self._transport.stream(jobs)

    # ------------------------------------------------------------------ cost before sending
    def estimate(
        self, requests: Sequence[ScoreRequest | PrefixGroupRequest | NextTokenRequest | GenerateRequest]
    ) -> Estimate:
        """Requests, billed tokens and litellm's price of answering ``requests`` (:func:`._api_estimate.estimate_requests`)."""
        return estimate_requests(
            requests,
            render=self.render,
            count=lambda t: self._tokenizer.count(text=t),
            text_route=lambda p: isinstance(p, str) and self._route(p) == "text",
            top_first=self.score_mode == "topk",
            price=self._billing.price if self.stats.cost_known else None,
        )

    def _check_cost(self, requests: Sequence[Any], what: str) -> None:
        """State the step's estimate; stop before sending when it would pass ``max_cost`` unapproved."""
        if not requests:
            return
        spent = self.stats.cost_usd if self.stats.cost_known else 0.0
        self._gate.check(self.estimate(requests), spent=spent, model=self.model, what=what)

    @staticmethod
    def _todo(n: int, done: Sequence[bool] | None) -> list[int]:
        flags = list(done) if done is not None else [False] * n
        if len(flags) != n:
            raise ConfigError(f"done has {len(flags)} flags for {n} requests", parameter="done", value=len(flags))
        return [i for i in range(n) if not flags[i]]

    def take_usage(self, indices: Sequence[int]) -> dict[int, Usage]:
        """What each of the answers just yielded (by request index) was billed; forgotten once taken."""
        return self._billing.take(indices)
