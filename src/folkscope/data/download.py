"""Fetch one file over HTTP(S) so that a failure never leaves a bad file behind.

A survey archive is tens of megabytes from a server that sometimes drops
connections or rate-limits. :func:`download_file` streams into
``<dest>.part``, resumes that partial file with an HTTP ``Range`` request,
checks size, SHA-256 and an optional content check, and only then renames it
into place with :func:`os.replace`, so ``dest`` is only ever replaced by a
complete, verified file.

Failures map onto :mod:`folkscope.errors`:

- connection errors, timeouts, early-closed transfers, HTTP 408, 429 and 5xx
  are retried with exponential backoff and jitter (``Retry-After`` is
  honoured), resuming where the partial file ends; after ``retries`` failures
  in a row without progress, :class:`~folkscope.errors.DownloadError`, and the
  ``.part`` file stays for the next call to resume;
- any other HTTP status fails at once with ``DownloadError`` naming the URL and
  status, because asking again would give the same answer;
- a complete transfer whose size, hash or content check is wrong is fetched
  once more from scratch; if it is wrong again,
  :class:`~folkscope.errors.IntegrityError`.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import os
import random
import re
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from folkscope import __version__
from folkscope.errors import ConfigError, DownloadError, IntegrityError

__all__ = ["DownloadsHeld", "download_file", "no_downloads", "sha256_file"]

#: why downloads are held in this context (None: they are not), set by :func:`no_downloads`
_HELD: ContextVar[str | None] = ContextVar("folkscope_downloads_held", default=None)


class DownloadsHeld(DownloadError):
    """A file would have been downloaded inside :func:`no_downloads`; nothing was sent."""


@contextmanager
def no_downloads(why: str) -> Iterator[None]:
    """Refuse every download inside the block with :class:`DownloadsHeld` naming the file and ``why``.

    A caller that only wants to know what work would cost (a study sizing its
    cells) must not fetch gigabytes of survey files to find out.

    >>> with no_downloads("sizing a study"):
    ...     download_file("https://example.org/x.zip", "x.zip")
    Traceback (most recent call last):
    ...
    folkscope.data.download.DownloadsHeld: x.zip is not on this machine yet (sizing a study: no download)
    """
    token = _HELD.set(why)
    try:
        yield
    finally:
        _HELD.reset(token)


_CHUNK_BYTES = 1 << 20
_MAX_DELAY_S = 600.0
_USER_AGENT = f"folkscope/{__version__} (+https://pypi.org/project/folkscope)"
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# Private generator: jitter must not consume the global ``random`` stream that
# experiments seed for reproducibility.
_JITTER = random.Random()
# Test seam: tests replace this to record backoff delays instead of waiting.
_sleep: Callable[[float], None] = time.sleep


class _Retry(Exception):
    """An attempt failed in a way that another attempt may not."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _Bar(Protocol):
    def start(self, total: int | None, done: int) -> None: ...

    def advance(self, n: int) -> None: ...


def download_file(
    url: str,
    dest: str | os.PathLike[str],
    *,
    expected_size: int | None = None,
    sha256: str | None = None,
    validate: Callable[[Path], None] | None = None,
    retries: int = 4,
    backoff: float = 1.0,
    timeout: float = 60,
    progress: bool | None = None,
) -> Path:
    """Download ``url`` to ``dest``, verified, atomically, with retries and resume.

    Parameters
    ----------
    url : str
        ``http://`` or ``https://`` address; other schemes (``file:``,
        ``ftp:``) are refused so a configured URL cannot read local files.
    dest : path-like
        Final location. It is written only by an atomic rename of the verified
        ``<dest>.part``; an existing ``dest`` is replaced (callers decide
        what counts as cached).
    expected_size : int, optional
        Exact size in bytes, where the publisher states it.
    sha256 : str, optional
        Expected hex SHA-256 digest, where the publisher states it.
    validate : callable, optional
        ``validate(path)`` inspects the finished ``.part`` file (for example a
        zip CRC check) and raises :class:`~folkscope.errors.IntegrityError`
        if it is unusable.
    retries : int, default 4
        Extra attempts after a transient failure; an attempt that extends the
        partial file earns a fresh count, so a flaky but working connection
        finishes a large file.
    backoff : float, default 1.0
        Base delay in seconds; attempt ``k`` waits about ``backoff * 2**(k-1)``
        seconds (between half and all of it, so that clients desynchronise),
        at least what ``Retry-After`` asks, at most 600 s.
    timeout : float, default 60
        Seconds without progress on the socket before an attempt is abandoned.
    progress : bool, optional
        Show a rich progress bar on stderr. Default: only when stderr is a
        terminal and ``CI`` is unset, so logs and pipelines stay clean.

    Returns
    -------
    pathlib.Path
        ``dest``, now complete and verified.

    Raises
    ------
    DownloadError
        The server refused (non-retryable status) or every attempt failed; the
        partial ``.part`` file is kept so the next call resumes it.
    IntegrityError
        The complete file was wrong twice (size, hash or ``validate``); nothing
        is left at ``dest`` or in ``.part``.
    ConfigError
        An argument is out of range.

    Examples
    --------
    >>> download_file("ftp://example.org/x.zip", "x.zip")
    Traceback (most recent call last):
    ...
    folkscope.errors.ConfigError: url must start with http:// or https://, got 'ftp://example.org/x.zip'
    """
    _check_args(url, expected_size, sha256, retries, backoff, timeout)
    dest = Path(dest)
    held = _HELD.get()
    if held is not None:
        raise DownloadsHeld(f"{dest.name} is not on this machine yet ({held}: no download)")
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    attempt, refetched, furthest = 0, False, _size(part)
    with _progress_bar(dest.name, progress) as bar:
        while True:
            try:
                _fetch(url, part, timeout=timeout, bar=bar)
                _verify(part, url, expected_size, sha256, validate)
            except _Retry as exc:
                if _size(part) > furthest:  # a resumed transfer got further: fresh retries
                    furthest, attempt = _size(part), 0
                attempt += 1
                if attempt > retries:
                    raise _exhausted(url, exc, attempt, part) from exc
                _sleep(_delay(attempt, backoff, exc.retry_after))
                continue
            except IntegrityError:
                part.unlink(missing_ok=True)
                if refetched:
                    raise
                refetched = True
                continue
            os.replace(part, dest)
            return dest


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks so memory stays flat."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_args(
    url: str, expected_size: int | None, sha256: str | None, retries: int, backoff: float, timeout: float
) -> None:
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"url must start with http:// or https://, got {url!r}", parameter="url", value=url)
    if expected_size is not None and expected_size < 0:
        raise ConfigError(
            f"expected_size must be >= 0 bytes, got {expected_size}", parameter="expected_size", value=expected_size
        )
    if sha256 is not None and not _SHA256.fullmatch(sha256.lower()):
        raise ConfigError(f"sha256 must be 64 hex digits, got {sha256!r}", parameter="sha256", value=sha256)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be an integer >= 0, got {retries!r}", parameter="retries", value=retries)
    if backoff < 0:
        raise ConfigError(f"backoff must be >= 0 seconds, got {backoff}", parameter="backoff", value=backoff)
    if timeout <= 0:
        raise ConfigError(f"timeout must be > 0 seconds, got {timeout}", parameter="timeout", value=timeout)


def _fetch(url: str, part: Path, *, timeout: float, bar: _Bar) -> None:
    """One attempt: append to ``part`` from where it ends, or restart it."""
    have = _size(part)
    headers = {"User-Agent": _USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with _open(urllib.request.Request(url, headers=headers), timeout, part) as response:
            offset = _resume_offset(response, have, part)
            total = _total_size(response, offset)
            bar.start(total, offset)
            received = _stream(response, part, offset, bar)
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError) as exc:
        raise _Retry(f"connection failed: {getattr(exc, 'reason', exc)}") from exc
    if total is not None and offset + received < total:
        raise _Retry(f"connection closed after {offset + received} of {total} bytes")


def _open(request: urllib.request.Request, timeout: float, part: Path) -> http.client.HTTPResponse:
    """Send the request; sort HTTP error statuses into retry, restart or refuse."""
    try:
        response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=timeout)
        return response
    except urllib.error.HTTPError as exc:
        exc.close()  # the error body is not needed; close it so the socket is freed
        code = exc.code
        if code == 416:  # our Range no longer fits the remote file: start over
            part.unlink(missing_ok=True)
            raise _Retry("server refused to resume the partial file (HTTP 416)") from None
        if code in (408, 429) or code >= 500:
            wait = _retry_after(exc.headers.get("Retry-After"))
            raise _Retry(f"HTTP {code} {exc.reason}", retry_after=wait) from None
        raise DownloadError(
            f"{request.full_url} answered HTTP {code} {exc.reason}; not retrying, since asking again "
            "gives the same answer. Check the URL, or try again later."
        ) from exc


def _resume_offset(response: http.client.HTTPResponse, have: int, part: Path) -> int:
    """Byte offset the response body starts at: ``have`` on 206, else 0."""
    if response.status != 206:
        return 0
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if match is None or int(match.group(1)) != have:
        part.unlink(missing_ok=True)
        raise _Retry("server answered the Range request with a different range")
    return have


def _total_size(response: http.client.HTTPResponse, offset: int) -> int | None:
    """Full size of the remote file, when the headers say so."""
    length = response.headers.get("Content-Length")
    return offset + int(length) if length and length.isdigit() else None


def _stream(response: http.client.HTTPResponse, part: Path, offset: int, bar: _Bar) -> int:
    """Copy the body into ``part`` (appending after ``offset``); return bytes received."""
    received = 0
    with open(part, "ab" if offset else "wb") as fh:
        while chunk := response.read(_CHUNK_BYTES):
            fh.write(chunk)
            received += len(chunk)
            bar.advance(len(chunk))
        fh.flush()
        os.fsync(fh.fileno())  # the rename that follows must never expose unflushed bytes
    return received


def _verify(
    part: Path, url: str, expected_size: int | None, sha256: str | None, validate: Callable[[Path], None] | None
) -> None:
    size = part.stat().st_size
    if expected_size is not None and size != expected_size:
        raise IntegrityError(f"{url}: got {size} bytes, expected {expected_size}")
    if sha256 is not None:
        actual = sha256_file(part)
        if actual != sha256.lower():
            raise IntegrityError(f"{url}: SHA-256 is {actual}, expected {sha256.lower()}")
    if validate is not None:
        validate(part)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _delay(attempt: int, backoff: float, retry_after: float | None) -> float:
    base = backoff * 2 ** (attempt - 1)
    jittered = base * (0.5 + 0.5 * _JITTER.random())
    return min(_MAX_DELAY_S, max(jittered, retry_after or 0.0))


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _exhausted(url: str, exc: _Retry, attempts: int, part: Path) -> DownloadError:
    message = f"could not download {url} after {attempts} attempts in a row without progress; last failure: {exc}"
    if part.exists():
        message += f". The partial file {part} is kept; the next call resumes it."
    return DownloadError(message)


def _show_progress(progress: bool | None) -> bool:
    if progress is not None:
        return progress
    return sys.stderr.isatty() and not os.environ.get("CI")


class _QuietBar:
    def start(self, total: int | None, done: int) -> None:
        pass

    def advance(self, n: int) -> None:
        pass


class _RichBar:
    """Adapter from the two calls :func:`_fetch` makes to a rich progress task."""

    def __init__(self, progress: Any, task: Any) -> None:
        self._progress = progress
        self._task = task

    def start(self, total: int | None, done: int) -> None:
        self._progress.update(self._task, total=total, completed=done)

    def advance(self, n: int) -> None:
        self._progress.advance(self._task, n)


@contextmanager
def _progress_bar(label: str, progress: bool | None) -> Iterator[_Bar]:
    if not _show_progress(progress):
        yield _QuietBar()
        return
    # rich is imported only when a bar is shown, keeping `import folkscope` light.
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, TimeRemainingColumn(), console=Console(stderr=True), transient=True) as rich_progress:
        yield _RichBar(rich_progress, rich_progress.add_task(label, total=None))
