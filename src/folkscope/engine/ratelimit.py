"""Retry timing and request-rate limits for web APIs: pure arithmetic with an injectable clock.

Why separate from the backend: these rules decide how much a run costs and
whether a provider bans the key, so they are tested on their own, without
sleeping for real minutes (every function takes the clock or the random
generator it uses).

- :func:`parse_retry_after`: a ``Retry-After`` header, in seconds or as an
  HTTP date, to seconds to wait (None when absent or unreadable).
- :class:`RetryPolicy`: exponential backoff with jitter, at least the
  ``Retry-After`` a server asked for, and a cap past which waiting is
  pointless (the provider's quota is gone; the run stops with its answers
  saved and can resume later).
- :class:`RateLimiter`: spaces request starts ``60 / rpm`` seconds apart, so
  no minute ever holds more than the allowed number of requests, however
  many workers share it.

Examples
--------
>>> parse_retry_after("2")
2.0
>>> parse_retry_after("soon") is None
True
>>> clock = [0.0]
>>> limiter = RateLimiter(60, clock=lambda: clock[0])
>>> [limiter.reserve() for _ in range(3)]  # at t=0: now, after 1 s, after 2 s
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import email.utils
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from folkscope.errors import ConfigError

__all__ = ["RateLimiter", "RetryPolicy", "parse_retry_after"]


def parse_retry_after(value: object, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header value.

    Parameters
    ----------
    value : str, int or float, optional
        Delay in seconds (``"120"``, ``"1.5"``) or an HTTP date
        (``"Wed, 21 Oct 2015 07:28:00 GMT"``).
    now : datetime, optional
        The current time for HTTP dates (default: the system clock, UTC).

    Returns
    -------
    float or None
        Seconds, never negative (a date in the past gives 0); None when the
        value is absent or unreadable, so the caller falls back to its own backoff.

    Examples
    --------
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=datetime(2015, 10, 21, 7, 28, tzinfo=timezone.utc))
    30.0
    >>> parse_retry_after("-5"), parse_retry_after(None), parse_retry_after("nan")
    (0.0, None, None)
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return max(0.0, float(value)) if math.isfinite(value) else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # HTTP dates are always GMT
        when = when.replace(tzinfo=timezone.utc)
    current = now if now is not None else datetime.now(timezone.utc)
    return max(0.0, (when - current).total_seconds())


def _positive(value: object, name: str, *, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):  # type: ignore[operator]
        what = ">= 0" if allow_zero else "> 0"
        raise ConfigError(f"{name} must be a finite number {what}, got {value!r}", parameter=name, value=value)
    return float(value)  # type: ignore[arg-type]


@dataclass
class RetryPolicy:
    """When to retry a failed request, and how long to wait first.

    The ``k``-th retry (``attempt = k``, from 0) waits a uniform draw in
    ``[d / 2, d]`` with ``d = min(max_delay, base_delay * 2**attempt)``
    ("equal jitter": it keeps the exponential growth but spreads concurrent
    clients so they do not return in lockstep), and at least the
    ``Retry-After`` the server sent.

    Parameters
    ----------
    max_retries : int, default 6
        Retries after the first attempt; 0 disables retrying.
    base_delay : float, default 0.5
        Seconds before the first retry (upper end of its jitter range).
    max_delay : float, default 30
        Cap of the exponential part.
    max_retry_after : float, default 300
        A server asking for a longer wait than this is not waited for: the
        request fails (answers so far are saved; the run can be resumed later).
    seed : int, optional
        Seed of the jitter (tests); default unpredictable.

    Examples
    --------
    >>> policy = RetryPolicy(base_delay=1.0, max_delay=8.0, seed=0)
    >>> all(0.5 * min(8, 2**k) <= policy.delay(k) <= min(8, 2**k) for k in range(10))
    True
    >>> policy.delay(0, retry_after=20.0) >= 20.0
    True
    """

    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 300.0
    seed: int | None = None
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigError(
                f"max_retries must be an integer >= 0, got {self.max_retries!r}",
                parameter="max_retries",
                value=self.max_retries,
            )
        self.base_delay = _positive(self.base_delay, "backoff_base")
        self.max_delay = _positive(self.max_delay, "backoff_max")
        if self.max_delay < self.base_delay:
            raise ConfigError(
                f"backoff_max ({self.max_delay}) must be at least backoff_base ({self.base_delay})",
                parameter="backoff_max",
                value=self.max_delay,
            )
        self.max_retry_after = _positive(self.max_retry_after, "max_retry_after")
        self._rng = random.Random(self.seed)

    def ceiling(self, attempt: int) -> float:
        """Upper end of the jitter range of retry number ``attempt`` (from 0)."""
        return min(self.max_delay, self.base_delay * 2.0 ** min(attempt, 60))

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (from 0)."""
        top = self.ceiling(attempt)
        wait = self._rng.uniform(top / 2, top)
        return max(wait, retry_after) if retry_after is not None else wait


class RateLimiter:
    """At most ``rpm`` request starts per minute, evenly spaced, shared by every worker.

    Each :meth:`reserve` books the next free start time (``60 / rpm``
    seconds after the previous booking, or now if that is later) and returns
    how long the caller must wait for it. Even spacing, rather than a burst
    of ``rpm`` requests followed by a pause, is what providers' per-minute
    limits tolerate best, and keeps any 60-second window within the limit.
    Thread-safe.

    Parameters
    ----------
    rpm : float
        Requests per minute (> 0).
    clock : callable, default time.monotonic
        Seconds, monotonic (inject a fake clock in tests).

    Examples
    --------
    >>> t = [10.0]
    >>> lim = RateLimiter(120, clock=lambda: t[0])
    >>> lim.reserve(), lim.reserve()
    (0.0, 0.5)
    >>> t[0] = 20.0  # long idle: no credit is saved up, the next start is now
    >>> lim.reserve()
    0.0
    """

    def __init__(self, rpm: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rpm = _positive(rpm, "max_rpm")
        self.interval = 60.0 / self.rpm
        self.clock = clock
        self._next = -math.inf
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Book the next start; seconds to wait until it (0 when it is now)."""
        with self._lock:
            now = self.clock()
            start = max(now, self._next)
            self._next = start + self.interval
            return start - now
