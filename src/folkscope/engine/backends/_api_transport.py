"""Sending the web-API backend's requests: the shared event loop, concurrency, rate limits, retries.

Why one module: sending, rate limiting, retrying and counting are one loop over
a request's life; split apart, a retry could escape the count or an answer
already paid for miss the cache.

Why it exists
-------------
A run sends thousands of requests to a provider that rate-limits, times out
and fails now and then; every retry must be counted, an error that cannot
succeed must stop the run at once, and answers already paid for must reach
the result cache. :class:`Transport` does that for one backend, on the
asyncio loop shared by every backend (:mod:`._api_loop`); what goes into a
request and how its answer is read is :mod:`._api_wire`, what it costs
:mod:`._api_billing`.

Reliability
-----------
Requests run concurrently (``max_concurrency`` workers on an asyncio loop in
a background thread), spaced to ``max_rpm`` requests per minute, and every
completed answer is handed to the engine at once, so it reaches the result
cache as it arrives; requests marked done are never sent. 429, timeouts,
connection errors, 5xx and unreadable bodies are retried with exponential
backoff and jitter, honouring ``Retry-After`` (seconds or an HTTP date);
litellm's and the OpenAI client's own retries are off, so every retry is
counted. A 4xx that cannot succeed (400, 401, 403, 404, 422) stops the run
at once with a :class:`~folkscope.errors.BackendError` (or
:class:`~folkscope.errors.ConfigError` for credentials); requests already in
flight finish and are saved first, so a resumed run repeats none of them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import re
import warnings
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from folkscope._deps import require
from folkscope.engine.backends._api_billing import Billing
from folkscope.engine.backends._api_loop import _LoopThread
from folkscope.engine.backends._api_support import _FEATURE, APIBackendStats, _redact
from folkscope.engine.backends._api_wire import _as_dict, _Call, _Garbage, _Job
from folkscope.engine.backends.base import Batches
from folkscope.engine.ratelimit import RateLimiter, RetryPolicy, parse_retry_after
from folkscope.engine.usage import Usage
from folkscope.errors import BackendError, ConfigError

__all__ = ["Transport", "escalated_warning", "tolerate_warning"]

log = logging.getLogger(__name__)
#: distinct escalated third-party warnings one request may get past (litellm builds dozens of models lazily)
_MAX_TOLERATED_WARNINGS = 256


# ---------------------------------------------------------------------- warnings raised as errors
def escalated_warning(exc: BaseException) -> Warning | None:
    """The warning behind ``exc``, if a warning raised as an error caused it (litellm re-wraps it).

    Examples
    --------
    >>> try:
    ...     try:
    ...         raise UserWarning("a note")
    ...     except UserWarning as inner:
    ...         raise ConnectionError("wrapped") from inner
    ... except ConnectionError as outer:
    ...     print(repr(escalated_warning(outer)))
    UserWarning('a note')
    >>> escalated_warning(ValueError("no warning here")) is None
    True
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Warning):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def tolerate_warning(exc: Warning) -> None:
    """Stop a third-party warning that the caller's filters turned into an exception from doing so again.

    Under ``-W error`` or pytest's ``filterwarnings = error``, a warning raised
    deep inside litellm or pydantic (e.g. pydantic's note on ``ReadOnly``
    TypedDict items, emitted when litellm builds a response model lazily)
    aborts the request it happened in. It says nothing about the request,
    so the caller logs it, ignores exactly that message from then on, and
    sends the request again. The filter is a plain process-wide entry rather
    than ``catch_warnings``, which is not safe with concurrent requests.
    """
    log.debug("third-party warning during a web-API request, ignored from now on: %s: %s", type(exc).__name__, exc)
    warnings.filterwarnings("ignore", message=re.escape(str(exc)), category=type(exc))


# ---------------------------------------------------------------------- run control and Retry-After
class _Stopped(Exception):
    """A worker noticed that the run is stopping (another request failed, or the consumer left)."""


@dataclass
class _Control:
    """Shared between the consumer and the loop: the stop signals and whether an error was reported.

    ``event`` stops starting new jobs (a Ctrl-C, a fatal error); the
    requests of jobs already started still go out (a top-k request's echo
    follow-up), so each paid answer is completed and saved. ``abandon``
    stops everything (the consumer left).
    """

    event: asyncio.Event | None = None
    abandon: asyncio.Event | None = None
    stop_early: bool = False
    abandon_early: bool = False
    error_sent: bool = False
    in_flight: int = 0  # requests sent and not yet answered (touched on the loop thread only)


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        items = headers.items()
    except AttributeError:
        return None
    for key, value in items:
        if str(key).lower() == name:
            return str(value)
    return None


def _retry_after(exc: BaseException) -> float | None:
    """Seconds from a failed response's ``Retry-After`` / ``retry-after-ms`` header, if any."""
    sources = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    )
    for headers in sources:
        ms = _header(headers, "retry-after-ms")
        if ms is not None:
            value = parse_retry_after(ms)
            if value is not None:
                return value / 1000.0
        value = parse_retry_after(_header(headers, "retry-after"))
        if value is not None:
            return value
    return None


# ---------------------------------------------------------------------- one backend's requests
class Transport:
    """One backend's requests through litellm: concurrent on the shared loop, spaced, retried, classified.

    Parameters
    ----------
    litellm : module
    model : str
        The litellm model id sent with every request (and named in errors).
    provider : str
        litellm's provider of ``model``.
    api_base, api_key_env : str or None
        As checked by the backend; the key is read from ``api_key_env`` when a request is sent.
    litellm_options : dict
        Passed to every litellm call.
    timeout : float
    max_concurrency : int
    retry : RetryPolicy
    limiter : RateLimiter or None
    billing : Billing
        Prices each response and keeps each answer's billing.
    stats : callable
        Returns the backend's current stats; read on every use because a
        caller may replace them (``risk.evidence`` starts each step afresh).
    """

    def __init__(
        self,
        litellm: Any,
        *,
        model: str,
        provider: str,
        api_base: str | None,
        api_key_env: str | None,
        litellm_options: dict[str, Any],
        timeout: float,
        max_concurrency: int,
        retry: RetryPolicy,
        limiter: RateLimiter | None,
        billing: Billing,
        stats: Callable[[], APIBackendStats],
    ) -> None:
        self._litellm = litellm
        self.model = model
        self._provider = provider
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.litellm_options = litellm_options
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.retry = retry
        self._limiter = limiter
        self._billing = billing
        self._stats = stats
        self.closed = False
        self._client: Any = None

    def close(self) -> None:
        """Close the HTTP client (the shared event loop lives until the interpreter exits)."""
        self.closed = True
        client, self._client = self._client, None
        if client is not None:
            _LoopThread.close_client(client)

    def stream(self, jobs: dict[int, _Job]) -> Batches:
        """Run the jobs concurrently on the shared loop; yield each answer as soon as it is complete.

        A fatal error stops new requests, lets those in flight finish, yields
        their answers (so they are saved), then raises. So does a first
        Ctrl-C (KeyboardInterrupt) while waiting for answers: the requests in
        flight are already paid for, so their answers are awaited (within the
        request timeout) and handed over before the interrupt is raised again;
        a second Ctrl-C drops them. A consumer interrupted while it holds a
        batch may throw the KeyboardInterrupt in (``stream.throw``) for the
        same effect. Closing the generator early (a failing cache write)
        stops new requests; those in flight finish in the background and are
        dropped. What each answer was billed is kept by the :class:`Billing`.
        """
        if self.closed:
            raise BackendError("this LiteLLMBackend is closed")
        results: queue.Queue[tuple[str, Any, Any]] = queue.Queue()
        control = _Control()
        loop = _LoopThread.get()

        def stop() -> None:
            if control.event is not None:
                control.event.set()
            else:
                control.stop_early = True

        def abandon() -> None:
            stop()
            if control.abandon is not None:
                control.abandon.set()
            else:
                control.abandon_early = True

        self._billing.begin()
        asyncio.run_coroutine_threadsafe(self._drive(jobs, results, control), loop)
        finished = False
        error: BaseException | None = None
        interrupted: KeyboardInterrupt | None = None

        def drain(exc: KeyboardInterrupt) -> None:
            """First Ctrl-C: stop sending, keep collecting what is in flight; a second one propagates."""
            nonlocal interrupted
            if interrupted is not None:
                raise exc
            interrupted = exc
            loop.call_soon_threadsafe(stop)
            log.warning(
                "interrupted: waiting up to %.0f s for the %d requests in flight (sent, so paid for) to save "
                "their answers; press Ctrl-C again to drop them",
                self.timeout,
                control.in_flight,
            )

        try:
            while not finished:
                try:
                    items = [results.get()]
                except KeyboardInterrupt as exc:
                    drain(exc)
                    continue
                while True:
                    try:
                        items.append(results.get_nowait())
                    except queue.Empty:
                        break
                batch = []
                for tag, a, b in items:
                    if tag == "done":
                        result, usage = b
                        self._billing.keep(a, usage)
                        batch.append((a, result))
                    elif tag == "error" and error is None:
                        error = a
                    elif tag == "end":
                        finished = True
                if batch:
                    stats = self._stats()
                    stats.requests += len(batch)
                    stats.batches += 1
                    try:
                        yield batch
                    except KeyboardInterrupt as exc:  # the consumer was interrupted and passed it on (Engine does)
                        drain(exc)
            if interrupted is not None:
                raise interrupted
            if error is not None:
                raise error
        finally:
            if not finished:
                # Stop sending; requests in flight end by themselves within `timeout` and are dropped.
                # They are not cancelled: cancelling litellm mid-request leaks its coroutines.
                loop.call_soon_threadsafe(abandon)

    async def _drive(
        self, jobs: dict[int, _Job], results: queue.Queue[tuple[str, Any, Any]], control: _Control
    ) -> None:
        """Send the jobs' calls on ``max_concurrency`` workers; a job whose calls are answered is assembled.

        Jobs start in order; once started, a job's calls go before any new
        job's and are sent even after a stop (only ``abandon`` halts them), so
        an answer begun is finished and saved. A job's ``assemble`` may return
        another :class:`_Job` (a follow-up: top-k first, then echo for what the
        table leaves open); its answer is then the request's, and its billing
        adds up over both.
        """
        stop = control.event = asyncio.Event()
        halt = control.abandon = asyncio.Event()
        if control.stop_early:  # the consumer left before the run began
            stop.set()
        if control.abandon_early:
            halt.set()
        jobs = dict(jobs)
        fresh: deque[int] = deque(jobs)  # jobs not started
        calls: deque[tuple[int, int]] = deque()  # calls of started jobs, not yet sent
        parts: dict[int, list[Any]] = {}
        left: dict[int, int] = {}
        spent = {j: Usage() for j in jobs}
        active: set[int] = set()  # started, not finished or dropped
        wake = asyncio.Event()  # calls were queued, or a job ended

        def fail(exc: BaseException) -> None:
            if not control.error_sent:
                control.error_sent = True
                results.put(("error", exc, None))
            stop.set()
            wake.set()

        def queue_calls(j: int, job: _Job) -> None:
            jobs[j] = job
            parts[j] = [None] * len(job.calls)
            left[j] = len(job.calls)
            calls.extendleft((j, k) for k in reversed(range(len(job.calls))))
            wake.set()

        def end(j: int) -> None:
            active.discard(j)
            wake.set()

        def finish(j: int) -> None:
            """Assemble job ``j``: queue its follow-up, or hand over its answer."""
            try:
                result = jobs[j].assemble(parts.pop(j))
            except Exception as exc:  # a bug in reading: stop rather than guess
                end(j)
                fail(BackendError(f"could not assemble an answer of {self.model}: {_redact(repr(exc))}"))
                return
            if isinstance(result, _Job) and result.calls:
                queue_calls(j, result)
                return
            end(j)
            results.put(("done", j, (result, spent.pop(j))))

        def next_call() -> tuple[int, int] | None:
            while calls:
                j, k = calls.popleft()
                if j in active:  # a dropped job's remaining calls are skipped
                    return j, k
            if fresh and not stop.is_set():
                j = fresh.popleft()
                active.add(j)
                queue_calls(j, jobs[j])
                return calls.popleft()
            return None

        async def worker() -> None:
            while not halt.is_set():
                item = next_call()
                if item is None:
                    if not active:
                        return
                    wake.clear()  # a call in flight may still bring a follow-up
                    try:
                        await asyncio.wait_for(wake.wait(), timeout=0.05)
                    except asyncio.TimeoutError:
                        pass
                    continue
                j, k = item
                control.in_flight += 1
                try:
                    value, usage = await self._attempts(jobs[j].calls[k], halt)
                except _Stopped:
                    end(j)
                    return
                except (BackendError, ConfigError) as exc:
                    end(j)
                    fail(exc)
                    return
                finally:
                    control.in_flight -= 1
                spent[j].add(usage)
                if j not in active:
                    continue
                parts[j][k] = value
                left[j] -= 1
                if left[j] == 0:
                    finish(j)

        try:
            n_calls = sum(len(job.calls) for job in jobs.values())
            await asyncio.gather(*(worker() for _ in range(min(self.max_concurrency, n_calls))))
        except Exception as exc:  # pragma: no cover - workers catch their own errors
            fail(BackendError(f"web-API worker failed: {_redact(repr(exc))}"))
        finally:
            results.put(("end", None, None))

    async def _sleep(self, seconds: float, stop: asyncio.Event) -> None:
        if seconds <= 0:
            return
        try:
            await asyncio.wait_for(stop.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            return
        raise _Stopped

    async def _attempts(self, call: _Call, stop: asyncio.Event) -> tuple[Any, Usage]:
        """Send one request until it succeeds, fails for good, or the run stops; return its answer and billing.

        The billing covers every response received for it, an unreadable one
        (retried) included.
        """
        attempt = 0
        tolerated: set[str] = set()
        spent = Usage()
        while True:
            if stop.is_set():
                raise _Stopped
            if self._limiter is not None:
                await self._sleep(self._limiter.reserve(), stop)
            self._stats().api_calls += 1
            try:
                data = _as_dict(await self.send(call))
                spent.add(self._billing.account(data))
                return call.parse(data), spent
            except (BackendError, ConfigError, _Stopped, asyncio.CancelledError):
                raise
            except Exception as exc:
                warning = escalated_warning(
                    exc
                )  # the caller's filters made a warning an error: not the request's fault
                seen = None if warning is None else f"{type(warning).__name__}: {warning}"
                if seen is not None and seen not in tolerated and len(tolerated) < _MAX_TOLERATED_WARNINGS:
                    tolerated.add(seen)  # the same warning twice means its filter did not hold: a real failure
                    tolerate_warning(warning)
                    self._stats().api_calls -= 1  # raised while litellm built the request: nothing reached the provider
                    continue
                kind, wait_hint, summary = self._classify(exc)
            if attempt >= self.retry.max_retries:
                raise BackendError(
                    f"{self.model}: a request failed {attempt + 1} times ({summary}); giving up after max_retries="
                    f"{self.retry.max_retries}. Answers already received are saved; rerun the same command to resume."
                )
            if wait_hint is not None and wait_hint > self.retry.max_retry_after:
                raise BackendError(
                    f"{self.model}: the provider asks to wait {wait_hint:.0f} s before retrying (over max_retry_after="
                    f"{self.retry.max_retry_after:.0f} s; quota exhausted?). Answers already received are saved; "
                    "rerun later to resume."
                )
            stats = self._stats()
            setattr(stats, kind, getattr(stats, kind) + 1)
            stats.retries += 1
            delay = self.retry.delay(attempt, wait_hint)
            log.info("%s: retry %d in %.2f s after %s", self.model, attempt + 1, delay, summary)
            await self._sleep(delay, stop)
            attempt += 1

    async def send(self, call: _Call) -> Any:
        """One litellm call for ``call``, no retries (litellm's and the OpenAI client's own are off)."""
        kwargs: dict[str, Any] = {"model": self.model, **self.litellm_options, **call.kwargs}
        kwargs.update(timeout=self.timeout, num_retries=0, max_retries=0)
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(f"{self.api_key_env} is no longer set in the environment", parameter="api_key_env")
            kwargs["api_key"] = key
        if call.route == "text":
            if self._provider in ("openai", "text-completion-openai"):
                kwargs["client"] = self._text_client(kwargs.get("api_key"))
            return await self._litellm.atext_completion(**kwargs)
        return await self._litellm.acompletion(**kwargs)

    def _text_client(self, api_key: str | None) -> Any:
        """One OpenAI client for the text-completion route, reused across requests (runs on the loop thread).

        litellm builds (and never closes) a new client for every text
        completion, leaking a connection each time; handing it one client
        keeps connections pooled. Its own retries are off; the key is read
        from the environment by the client, or given from ``api_key_env``.
        """
        if self._client is None:
            openai = require("openai", feature=_FEATURE)
            self._client = openai.AsyncOpenAI(
                base_url=self.api_base, api_key=api_key, max_retries=0, timeout=self.timeout
            )
            _LoopThread.clients.append(self._client)
        return self._client

    def _classify(self, exc: BaseException) -> tuple[str, float | None, str]:
        """(stats counter, Retry-After seconds, summary) of a retryable failure; raises for the others."""
        lt = self._litellm
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) else None
        message = _redact(str(getattr(exc, "message", None) or exc))[:300]
        summary = f"{type(exc).__name__}{f' HTTP {status}' if status else ''}: {message}"
        if isinstance(exc, _Garbage):
            return "server_errors", None, f"unreadable response: {exc}"
        kinds = {c.__name__ for c in type(exc).__mro__}
        if isinstance(exc, getattr(lt, "Timeout", ())) or status == 408 or "APITimeoutError" in kinds:
            return "timeouts", None, summary
        if kinds & {"APIConnectionError", "ConnectError", "ConnectionError"} or "connection error" in message.lower():
            # no HTTP exchange took place: litellm files these under status 500, which would read as a server fault
            where = self.api_base or f"the {self._provider} API"
            return "connection_errors", None, f"could not connect to {where} ({type(exc).__name__}: {message})"
        if (
            "missing credentials" in message.lower()
            or status in (401, 403)
            or isinstance(exc, getattr(lt, "AuthenticationError", ()))
        ):
            raise ConfigError(
                f"{self.model} refused the credentials (HTTP {status or 401}): {message}. Check the API key in the "
                f"environment ({self.api_key_env or 'the provider variable, e.g. OPENAI_API_KEY'}). No retry: it cannot succeed.",
                parameter="api_key",
            ) from None
        if status == 429 or isinstance(exc, getattr(lt, "RateLimitError", ())):
            return "rate_limited", _retry_after(exc), summary
        if status is not None and (status >= 500 or status in (409, 425)):
            return "server_errors", _retry_after(exc), summary
        if isinstance(exc, getattr(lt, "ContextWindowExceededError", ())):
            raise ConfigError(
                f"a prompt is longer than {self.model}'s context window ({message}); shorten the prompts",
                parameter="prompt",
            ) from None
        if status is not None and 400 <= status < 500:
            raise BackendError(
                f"{self.model} rejected a request with HTTP {status} ({message}); no retry, it cannot succeed. "
                "Answers already received are saved."
            ) from None
        if isinstance(exc, getattr(lt, "APIError", ())) or type(exc).__module__.startswith(
            ("openai", "httpx", "aiohttp")
        ):
            return "server_errors", None, summary
        raise BackendError(f"{self.model}: unexpected error from litellm: {summary}") from None
