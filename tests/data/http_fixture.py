"""A real HTTP server on 127.0.0.1 that misbehaves on request, for download tests.

:class:`FixtureServer` serves an in-memory ``{path: bytes}`` mapping on an
ephemeral loopback port, honours ``Range: bytes=N-`` (unless told not to),
counts requests per path and replays scripted :class:`Fault` responses, one
per request, before answering normally. Used as a context manager it runs in a
daemon thread and is shut down, closed and joined on exit, so no test leaks a
socket or a thread and nothing ever leaves the machine.

Usage::

    with FixtureServer({"/a.zip": data}) as server:
        server.add_faults("/a.zip", Fault.error(503), Fault.truncated(100))
        download_file(server.url("/a.zip"), dest)
        assert server.requests["/a.zip"] == 3
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["Fault", "FixtureServer"]

_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


@dataclass(frozen=True)
class Fault:
    """How one response misbehaves; each request consumes the next queued fault.

    Attributes
    ----------
    status : int, optional
        Answer with this HTTP status and no file.
    retry_after : str, optional
        ``Retry-After`` header sent with ``status``.
    truncate_to : int, optional
        Announce the full ``Content-Length`` but send only this many body bytes,
        then close the connection.
    corrupt : bool
        Flip bytes in the middle of the body (length unchanged).
    """

    status: int | None = None
    retry_after: str | None = None
    truncate_to: int | None = None
    corrupt: bool = False

    @classmethod
    def error(cls, status: int, retry_after: str | None = None) -> Fault:
        return cls(status=status, retry_after=retry_after)

    @classmethod
    def truncated(cls, nbytes: int) -> Fault:
        return cls(truncate_to=nbytes)

    @classmethod
    def corrupted(cls) -> Fault:
        return cls(corrupt=True)


class FixtureServer(ThreadingHTTPServer):
    """Loopback HTTP server over an in-memory file mapping, with fault injection.

    Parameters
    ----------
    files : dict of str to bytes
        URL path (``"/2018/1-Year/csv_pca.zip"``) to body.
    ranges : bool, default True
        Honour ``Range`` requests with 206; False answers every request with
        the whole file, like servers that do not support resuming.
    """

    daemon_threads = True  # a stuck handler never blocks interpreter exit

    def __init__(self, files: dict[str, bytes], *, ranges: bool = True) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.files = dict(files)
        self.ranges = ranges
        self.requests: Counter[str] = Counter()
        self.range_headers: list[tuple[str, str | None]] = []
        self._faults: dict[str, list[Fault]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def url(self, path: str = "") -> str:
        """Absolute ``http://127.0.0.1:<port>`` URL of ``path``."""
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def add_faults(self, path: str, *faults: Fault) -> None:
        """Queue faults for ``path``; later requests are answered normally."""
        with self._lock:
            self._faults.setdefault(path, []).extend(faults)

    def take(self, path: str, range_header: str | None) -> Fault | None:
        """Record one request to ``path`` and pop its next fault, if any."""
        with self._lock:
            self.requests[path] += 1
            self.range_headers.append((path, range_header))
            queue = self._faults.get(path)
            return queue.pop(0) if queue else None

    def handle_error(self, request: object, client_address: object) -> None:
        """Stay quiet when a client hangs up mid-body (expected in fault tests)."""

    def start(self) -> FixtureServer:
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and join the thread (idempotent)."""
        if self._thread is None:
            return
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)
        self._thread = None

    def __enter__(self) -> FixtureServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    server: FixtureServer
    timeout = 5  # seconds: a client that stalls cannot hold a handler thread for long

    def do_GET(self) -> None:  # noqa: N802 (name fixed by http.server)
        range_header = self.headers.get("Range")
        fault = self.server.take(self.path, range_header)
        if fault is not None and fault.status is not None:
            self._send_empty(fault.status, {"Retry-After": fault.retry_after} if fault.retry_after else {})
            return
        body = self.server.files.get(self.path)
        if body is None:
            self._send_empty(404)
            return
        if fault is not None and fault.corrupt:
            middle = len(body) // 2
            body = body[:middle] + bytes(b ^ 0xFF for b in body[middle : middle + 64]) + body[middle + 64 :]
        self._send_body(body, self._range_start(range_header), fault)

    def _range_start(self, header: str | None) -> int | None:
        match = _RANGE.fullmatch(header or "")
        return int(match.group(1)) if match and self.server.ranges else None

    def _send_body(self, body: bytes, start: int | None, fault: Fault | None) -> None:
        if start is not None and start >= len(body):
            self._send_empty(416, {"Content-Range": f"bytes */{len(body)}"})
            return
        payload = body if start is None else body[start:]
        self.send_response(200 if start is None else 206)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Accept-Ranges", "bytes" if self.server.ranges else "none")
        if start is not None:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()
        if fault is not None and fault.truncate_to is not None:
            payload = payload[: fault.truncate_to]
        self.wfile.write(payload)

    def _send_empty(self, status: int, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (signature fixed by http.server)
        """Keep test output clean."""
