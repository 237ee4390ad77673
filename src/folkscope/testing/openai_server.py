"""A local OpenAI-compatible server over a known probability source, with fault injection.

Why it exists
-------------
The web-API backend (:mod:`folkscope.engine.backends.api`) must be tested
end to end, through litellm and a real HTTP stack, without the internet and
without paying anyone, and its numbers must be checkable against a model
whose probabilities are known exactly. This server answers the OpenAI wire
format from a :class:`~folkscope.testing.sources.ProbabilitySource` (the fake
backend's hashed model, or a local transformers model), and can misbehave on
purpose: rate limits with ``Retry-After``, server errors, stalls past the
client's timeout, truncated JSON bodies, and responses without
log-probabilities. It counts every request it receives and every answer it
completes, per distinct request body, so tests can assert "every row answered
exactly once" and "nothing asked twice after a resume".

This module holds the server's lifecycle, counters and HTTP handling; what it
answers is :mod:`folkscope.testing.responder`, how it misbehaves
:mod:`folkscope.testing.faults`.

Endpoints
---------
``POST /v1/completions``
    ``prompt`` (a string or a list of strings), ``echo``, ``logprobs`` (int),
    ``max_tokens`` (0 allowed), ``temperature``, ``stop``, ``seed``. With
    ``echo`` the prompt's own tokens come back with their log-probabilities
    (the first token has none), which is how the backend scores a
    continuation exactly.
``POST /v1/chat/completions``
    ``messages``, ``logprobs`` (bool), ``top_logprobs`` (int),
    ``max_tokens`` / ``max_completion_tokens``, ``temperature``, ``stop``,
    ``seed``, ``chat_template_kwargs``. A final *assistant* message is
    continued (an assistant prefill): the conversation before it is rendered
    with the generation prompt and its content appended.
``GET /v1/models``
``GET /folkscope/stats``
    The counters (:meth:`LocalOpenAIServer.counters`), for a server run in
    another process (``python -m folkscope.testing``).

Both completion endpoints report ``usage`` and, like vLLM, a ``stop_reason``
per choice (the stop string that ended the text, or null), so a client can
tell an end-of-sequence from a stop string.

Safety bounds: it binds 127.0.0.1 only, answers at most ``max_requests``
requests, and stops by itself after ``idle_timeout`` seconds without a
request or at ``max_lifetime``.

Examples
--------
>>> from folkscope.engine.backends.fake import FakeBackend
>>> from folkscope.testing import FakeSource
>>> server = LocalOpenAIServer(FakeSource(FakeBackend()), max_lifetime=30)
>>> with server as url:
...     url.startswith("http://127.0.0.1:") and url.endswith("/v1")
True
"""

from __future__ import annotations

import json
import logging
import math
import socket
import threading
import time
from collections import Counter
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from folkscope.errors import ConfigError
from folkscope.testing.faults import FaultPlan, body_key
from folkscope.testing.responder import BadRequest, OpenAIResponder
from folkscope.testing.sources import ProbabilitySource

__all__ = ["LocalOpenAIServer"]

log = logging.getLogger(__name__)


class LocalOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 answering from a :class:`ProbabilitySource`.

    Use it as a context manager: ``with LocalOpenAIServer(source) as url:``
    gives the base URL (``http://127.0.0.1:PORT/v1``) to pass as ``api_base``;
    the object itself keeps the counters.

    Parameters
    ----------
    source : ProbabilitySource
    faults : FaultPlan, optional
    latency : float, default 0
        Seconds each answered request waits before answering (to measure concurrency).
    api_key : str, optional
        When set, requests without ``Authorization: Bearer <api_key>`` get 401.
    omit_logprobs : bool, default False
        Answer every request without log-probabilities (a provider that has none).
    max_logprobs : int, default 20
        Largest ``top_logprobs`` / ``logprobs`` accepted (OpenAI: 20 for chat, 5 for completions).
    port : int, default 0
        0 picks a free port.
    max_requests : int, default 100000
        Requests answered before the server refuses (503) and stops.
    max_lifetime : float, default 600
        Seconds after which the server stops itself.
    idle_timeout : float, default 120
        Seconds without a request after which the server stops itself.
    hold_after : int, optional
        Answer this many requests (in arrival order), then hold every later
        one unanswered until :meth:`release`: a test that must act while
        requests are in flight (a Ctrl-C) waits for :attr:`held` to reach
        the client's concurrency instead of hoping a latency is long enough
        on a busy machine.

    Attributes
    ----------
    received : Counter
        Requests received per body key (retries included).
    answered : Counter
        Complete, successful answers per body key.
    faults : Counter
        Injected faults per kind.
    authorized, unauthorized : int
        Requests whose bearer key matched ``api_key`` / did not.
    arrivals : list of float
        ``time.monotonic()`` of every request received (to check rate limits).
    held : int
        Requests held unanswered right now (see ``hold_after``).
    """

    def __init__(
        self,
        source: ProbabilitySource,
        *,
        faults: FaultPlan | None = None,
        latency: float = 0.0,
        api_key: str | None = None,
        omit_logprobs: bool = False,
        max_logprobs: int = 20,
        port: int = 0,
        max_requests: int = 100_000,
        max_lifetime: float = 600.0,
        idle_timeout: float = 120.0,
        hold_after: int | None = None,
    ) -> None:
        for name, value in (("latency", latency), ("max_lifetime", max_lifetime), ("idle_timeout", idle_timeout)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}", parameter=name, value=value)
        self.source = source
        self.plan = faults or FaultPlan()
        self.latency = float(latency)
        self._api_key = api_key
        self.omit_logprobs = bool(omit_logprobs)
        self.max_logprobs = int(max_logprobs)
        self.port = int(port)
        self.max_requests = int(max_requests)
        self.max_lifetime = float(max_lifetime)
        self.idle_timeout = float(idle_timeout)
        self.received: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.bodies: dict[str, Any] = {}
        self.authorized = 0
        self.unauthorized = 0
        self.requests = 0
        self.arrivals: list[float] = []
        if hold_after is not None and (
            isinstance(hold_after, bool) or not isinstance(hold_after, int) or hold_after < 0
        ):
            raise ConfigError(
                f"hold_after must be an integer >= 0, got {hold_after!r}", parameter="hold_after", value=hold_after
            )
        self.hold_after = hold_after
        self.held = 0
        self._released = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._last_seen = self._started = time.monotonic()
        self._deadline = 0.0

    # -- lifecycle -------------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL (``http://127.0.0.1:PORT/v1``) once started."""
        if self._httpd is None:
            raise ConfigError(
                "the server is not running; use it as a context manager or call start()", parameter="server"
            )
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> str:
        """Bind 127.0.0.1, serve in a background thread, return the base URL."""
        if self._httpd is not None:
            return self.url
        handler = type("Handler", (_Handler,), {"app": self})
        httpd = _Server(("127.0.0.1", self.port), handler)
        self._httpd = httpd
        self._stop.clear()
        self._last_seen = self._started = time.monotonic()
        self._deadline = self._last_seen + self.max_lifetime
        serve = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-server", daemon=True
        )
        watch = threading.Thread(target=self._watchdog, name="openai-server-watchdog", daemon=True)
        self._threads = [serve, watch]
        serve.start()
        watch.start()
        return self.url

    def stop(self) -> None:
        """Stop serving (stalled 'timeout' handlers wake up and drop their connections)."""
        self._stop.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        with self._lock:
            open_connections = list(self._connections)
        for conn in open_connections:  # idle keep-alive connections would hold their threads forever
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
        self._threads = []

    def _watchdog(self) -> None:
        while not self._stop.wait(0.1):
            now = time.monotonic()
            over = self.requests >= self.max_requests
            if now >= self._deadline or now - self._last_seen >= self.idle_timeout or over:
                why = (
                    "its request budget is spent"
                    if over
                    else ("its deadline passed" if now >= self._deadline else "it was idle")
                )
                log.info("local OpenAI server stops: %s", why)
                self._stop.set()
                httpd = self._httpd
                if httpd is not None:
                    httpd.shutdown()
                return

    def release(self) -> None:
        """Answer the requests held (``hold_after``) and every later one at once."""
        self._released.set()

    def _hold(self, number: int) -> None:
        """Keep request ``number`` unanswered until :meth:`release` (or the server stops), if ``hold_after`` says so."""
        if self.hold_after is None or number < self.hold_after or self._released.is_set():
            return
        with self._lock:
            self.held += 1
        try:
            while not (self._released.wait(0.05) or self._stop.is_set()):
                pass
        finally:
            with self._lock:
                self.held -= 1

    @property
    def running(self) -> bool:
        return self._httpd is not None and not self._stop.is_set()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- counters --------------------------------------------------------------------
    def reset_counts(self) -> None:
        """Forget what was received and answered (e.g. between a run and its resume)."""
        with self._lock:
            self.received.clear()
            self.answered.clear()
            self.faults.clear()
            self.arrivals.clear()
            self.requests = 0

    def counters(self) -> dict[str, Any]:
        """The counters as JSON data (also served at ``GET /folkscope/stats``); arrivals in seconds since start."""
        with self._lock:
            start = self._started
            return {
                "requests": self.requests,
                "received": dict(self.received),
                "answered": dict(self.answered),
                "faults": dict(self.faults),
                "authorized": self.authorized,
                "unauthorized": self.unauthorized,
                "arrivals": [t - start for t in self.arrivals],
            }

    @property
    def total_answered(self) -> int:
        return sum(self.answered.values())

    @property
    def total_faults(self) -> int:
        return sum(self.faults.values())

    # -- request handling (called by the HTTP handler) ---------------------------------
    def _admit(self, body: Any, authorization: str | None) -> tuple[str, str | None, int]:
        """Count the request and choose its fault; returns (body key, fault kind or None, its arrival number)."""
        key = body_key(body)
        with self._lock:
            self._last_seen = time.monotonic()
            self.arrivals.append(self._last_seen)
            number = self.requests
            self.requests += 1
            attempt = self.received[key]
            self.received[key] += 1
            self.bodies.setdefault(key, body)
            if self._api_key is not None:
                if authorization == f"Bearer {self._api_key}":
                    self.authorized += 1
                else:
                    self.unauthorized += 1
                    return key, "401", number
            if number >= self.max_requests:
                return key, "503", number
            fault = self.plan.choose(number, key, attempt, sum(self.answered.values()))
            if fault is not None:
                self.faults[fault] += 1
            return key, fault, number


_STATUS_TEXT = {
    "400": "invalid request (injected)",
    "401": "invalid API key",
    "403": "permission denied (injected)",
    "404": "not found (injected)",
    "422": "unprocessable request (injected)",
    "429": "rate limit reached (injected)",
    "500": "internal server error (injected)",
    "503": "service unavailable (injected)",
}


class _Server(ThreadingHTTPServer):
    """A thread per connection (daemon threads: a stalled handler never blocks shutdown), a deep accept queue."""

    daemon_threads = True
    request_queue_size = 256  # bursts of concurrent clients must not overflow the listen backlog

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("openai test server: connection from %s failed", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, JSON in and out; all logic lives in :class:`LocalOpenAIServer`."""

    app: LocalOpenAIServer
    protocol_version = "HTTP/1.1"
    server_version = "folkscope-openai-test/1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes; without this, Nagle's algorithm and the client's
        # delayed ACK hold the body back for ~40 ms on every keep-alive request
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.app._lock:
            self.app._connections.add(self.connection)

    def finish(self) -> None:
        with self.app._lock:
            self.app._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:  # the client went away
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        log.debug("openai test server: %s", format % args)  # request line only, never headers

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        kind = {429: "rate_limit_error", 401: "authentication_error"}.get(
            status, "invalid_request_error" if status < 500 else "server_error"
        )
        payload = json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()
        self._send(status, payload, headers)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.rstrip("/") == "/folkscope/stats":  # counters, for a server run in another process
            self._send(200, json.dumps(self.app.counters()).encode())
        elif self.path.rstrip("/").endswith("/models"):
            data = {
                "object": "list",
                "data": [{"id": self.app.source.model_id, "object": "model", "owned_by": "folkscope"}],
            }
            self._send(200, json.dumps(data).encode())
        else:
            self._error(404, f"no endpoint {self.path}")

    def do_POST(self) -> None:  # noqa: N802
        app = self.app
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._error(400, "the request body is not JSON")
            return
        key, fault, number = app._admit(body, self.headers.get("Authorization"))
        if fault == "timeout":
            app._stop.wait(app.plan.stall_seconds)  # the client gives up first; then drop the connection
            self.close_connection = True
            return
        if fault is not None and fault in _STATUS_TEXT:
            status = int(fault)
            headers = {"Retry-After": app.plan.retry_after_header()} if status in (429, 503) else None
            self._error(
                status, _STATUS_TEXT[fault] if fault != "401" else "invalid API key (Authorization header)", headers
            )
            return
        app._hold(number)
        if app.latency:
            app._stop.wait(app.latency)
        try:
            responder = OpenAIResponder(app.source, max_logprobs=app.max_logprobs)
            answer = responder.answer(self.path, body, omit_logprobs=app.omit_logprobs or fault == "no_logprobs")
        except BadRequest as exc:
            self._error(exc.status, str(exc))
            return
        except Exception as exc:  # a bug in a source must reach the client as a 500, not a hung socket
            log.exception("local OpenAI server failed on a request")
            self._error(500, f"server error: {type(exc).__name__}")
            return
        payload = json.dumps(answer, allow_nan=False).encode()
        if fault == "truncated":
            self._send(200, payload[: max(1, len(payload) // 2)])
            return
        if fault is None:  # an injected logprob-less answer is a fault, not an answer
            with (
                app._lock
            ):  # counted before it is sent, as a provider bills it: a client that has read it sees the count
                app.answered[key] += 1
        self._send(200, payload)
