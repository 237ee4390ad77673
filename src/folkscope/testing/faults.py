"""Fault injection for the local OpenAI server: which requests fail, and how.

Why it exists
-------------
A web-API client must survive rate limits, server errors, stalls, truncated
bodies and answers without log-probabilities, and must stop at once on
errors that cannot succeed. A :class:`FaultPlan` decides per request body
and attempt (not per arrival order), so a test with concurrent requests is
reproducible; :func:`body_key` names a body, retries included.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from folkscope.errors import ConfigError

__all__ = ["FAULT_KINDS", "PERMANENT_FAULTS", "TRANSIENT_FAULTS", "FaultPlan", "body_key"]

#: Faults a :class:`FaultPlan` can inject. Transient ones are worth retrying; the
#: 4xx codes cannot succeed on a retry; "no_logprobs" answers without log-probabilities.
TRANSIENT_FAULTS = ("429", "500", "503", "timeout", "truncated")
PERMANENT_FAULTS = ("400", "401", "403", "404", "422")
FAULT_KINDS = (*TRANSIENT_FAULTS, *PERMANENT_FAULTS, "no_logprobs")


@dataclass
class FaultPlan:
    """Which requests fail, and how.

    A request is identified by its body (:func:`body_key`) and by how many
    times that body has been received before (its attempt number), so the
    plan does not depend on the order in which concurrent requests arrive.

    Parameters
    ----------
    rate : float, default 0
        Chance that an attempt of a body fails, drawn from a hash of
        ``(seed, body, attempt)``.
    kinds : mapping of fault kind to weight
        Which fault a failing attempt gets (default: the transient ones,
        equally likely). Kinds: :data:`FAULT_KINDS`.
    max_faults_per_body : int, default 2
        Attempts of one body that may fail by ``rate``; later ones succeed,
        so a client with enough retries always finishes.
    schedule : mapping or callable, optional
        ``{request_number: kind}`` (numbered from 0 in arrival order) or
        ``schedule(request_number, body_key, attempt) -> kind or None``;
        takes precedence over ``rate``.
    fail_after_answers : int, optional
        Once this many answers have been completed, every further request
        gets ``fail_kind`` (a run that dies half-way, for resume tests).
    fail_kind : str, default "401"
    retry_after : float or "http-date", default 0
        ``Retry-After`` of 429 and 503 answers: seconds, or (``"http-date"``)
        an HTTP date ``retry_after_seconds`` ahead.
    retry_after_seconds : float, default 1
    stall_seconds : float, default 5
        How long a "timeout" fault stalls before it drops the connection.
    seed : int, default 0
    """

    rate: float = 0.0
    kinds: Mapping[str, float] = field(default_factory=lambda: dict.fromkeys(TRANSIENT_FAULTS, 1.0))
    max_faults_per_body: int = 2
    schedule: Mapping[int, str] | Callable[[int, str, int], str | None] | None = None
    fail_after_answers: int | None = None
    fail_kind: str = "401"
    retry_after: float | str = 0.0
    retry_after_seconds: float = 1.0
    stall_seconds: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.rate) <= 1.0:
            raise ConfigError(f"fault rate must be in [0, 1], got {self.rate!r}", parameter="rate", value=self.rate)
        unknown = sorted(set(self.kinds) - set(FAULT_KINDS)) + (
            [self.fail_kind] if self.fail_kind not in FAULT_KINDS else []
        )
        if isinstance(self.schedule, Mapping):
            unknown += sorted(set(self.schedule.values()) - set(FAULT_KINDS))
        if unknown:
            raise ConfigError(
                f"unknown fault kinds {unknown}; use {', '.join(FAULT_KINDS)}", parameter="kinds", value=unknown
            )
        if self.rate and (not self.kinds or sum(self.kinds.values()) <= 0):
            raise ConfigError("a fault rate needs at least one fault kind with positive weight", parameter="kinds")

    def choose(self, number: int, key: str, attempt: int, answers: int) -> str | None:
        """The fault for this request, or None to answer normally."""
        if self.fail_after_answers is not None and answers >= self.fail_after_answers:
            return self.fail_kind
        if self.schedule is not None:
            if callable(self.schedule):
                return self.schedule(number, key, attempt)
            return self.schedule.get(number)
        if not self.rate or attempt >= self.max_faults_per_body:
            return None
        digest = hashlib.sha256(f"{self.seed}\0{key}\0{attempt}".encode()).digest()
        draw = int.from_bytes(digest[:8], "little") / 2**64
        if draw >= self.rate:
            return None
        kinds = sorted(self.kinds)
        weights = np.asarray([self.kinds[k] for k in kinds], dtype=float)
        pick = int.from_bytes(digest[8:16], "little") / 2**64 * weights.sum()
        return kinds[int(np.searchsorted(np.cumsum(weights), pick, side="right").clip(0, len(kinds) - 1))]

    def retry_after_header(self) -> str:
        if self.retry_after == "http-date":
            when = datetime.now(timezone.utc) + timedelta(seconds=self.retry_after_seconds)
            return email.utils.format_datetime(when, usegmt=True)
        return f"{float(self.retry_after):g}"


def body_key(body: Any) -> str:
    """SHA-256 of a request body's canonical JSON: equal requests, equal keys (retries included)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
