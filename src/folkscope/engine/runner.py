"""The engine: deduplicate, serve from the cache, compute the rest, persist as it goes.

Why one module: every request kind goes through the same steps (deduplicate,
cache namespace, resume, persist, progress) in one class; split by kind, each
would copy them.

:class:`Engine` wraps one backend and an optional :class:`ResultCache`. For
every call it

1. hashes each request (:func:`~folkscope.engine.requests.request_key`) and
   removes duplicates;
2. looks the rest up in the cache, under a namespace that hashes the
   backend's identity (model name and revision, backend, dtype, device kind)
   and the caller's prompt-format version;
3. hands the backend *all* distinct requests with the cached ones marked
   done, so the backend rebuilds the same batches as an earlier run and
   skips the finished ones;
4. appends every completed batch to the cache (one atomic transaction)
   before the next batch starts, and only then counts it in the progress
   shown in the caller's unit (after saying how many answers the cache
   already held), so the count is what a kill would leave;
5. returns results in input order.

A run killed at any point restarts with the same call, recomputes nothing
that was saved and ends with the results of an uninterrupted run.

Examples
--------
>>> from folkscope.engine import Engine, ScoreRequest
>>> from folkscope.engine.backends.fake import FakeBackend
>>> engine = Engine(FakeBackend(), cache=None)
>>> res = engine.score([ScoreRequest("2+2=", ("4", "5"))] * 3)
>>> len(res), engine.stats.unique, engine.stats.computed
(3, 1, 1)
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from folkscope.engine.backends import Backend, create_backend
from folkscope.engine.backends.base import Batches
from folkscope.engine.cache import ResultCache, entry_key, namespace_key
from folkscope.engine.config import EngineConfig
from folkscope.engine.plausibility import implausible
from folkscope.engine.progress import Progress, progress_mode
from folkscope.engine.recording import record
from folkscope.engine.requests import (
    GenerateRequest,
    GenerateResult,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    Prompt,
    ScoreRequest,
    ScoreResult,
    request_key,
)
from folkscope.engine.usage import Usage
from folkscope.errors import BackendError, ConfigError

__all__ = ["Engine", "EngineStats"]

R = TypeVar("R")
log = logging.getLogger(__name__)


@dataclass
class EngineStats:
    """Request counts over the engine's lifetime.

    Attributes
    ----------
    requested : int
        Requests asked for (duplicates included).
    unique : int
        Distinct requests.
    cached : int
        Distinct requests served from the result cache.
    computed : int
        Distinct requests the backend answered.
    damaged : int
        Cached answers skipped because they were damaged (checksum, JSON) or
        implausible for their request (:mod:`~folkscope.engine.plausibility`:
        shape, log-probabilities above 0 or absurdly low, exclusive candidates
        more than certain together, NaN from a backend that scores everything);
        each was recomputed and replaced, and a warning says how many.
    billed_answers : int
        Answers of a paid backend (web API) used, cached or computed, whose
        billing is known; ``billed`` sums it, over every session that paid
        for them (a resumed run's cached answers included).
    unbilled_answers : int
        Cached answers of a paid backend stored before billing was recorded
        (their cost is not in ``billed``).
    billed : Usage
    """

    requested: int = 0
    unique: int = 0
    cached: int = 0
    computed: int = 0
    damaged: int = 0
    billed_answers: int = 0
    unbilled_answers: int = 0
    billed: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict[str, Any]:
        """The counters; the billing ones only when a paid backend's answers were used (a local model bills nothing)."""
        out = asdict(self)
        if not (self.billed_answers or self.unbilled_answers):
            for name in ("billed_answers", "unbilled_answers", "billed"):
                out.pop(name)
        return out


def _tokens(result: Any) -> int:
    if isinstance(result, ScoreResult):
        return result.prompt_tokens + sum(result.num_tokens)
    if isinstance(result, PrefixGroupResult):
        return sum(_tokens(r) for r in result.results)
    if isinstance(result, GenerateResult):
        return result.prompt_tokens + result.completion_tokens
    return int(getattr(result, "prompt_tokens", 0))


def _pass_on(stream: Iterator[Any], interrupt: KeyboardInterrupt) -> Any:
    """Throw a Ctrl-C into a backend's stream, which may yield answers still arriving before it re-raises."""
    throw = getattr(stream, "throw", None)
    if throw is None:
        raise interrupt
    return throw(interrupt)


def _announce_reuse(description: str, unit: str, cached: int, unique: int, *, enabled: bool | None) -> None:
    """Say up front how much of the work the result cache already holds (``208 of 463 rows already answered; scoring 255``)."""
    if cached >= unique:
        text = f"{description}: all {unique:,} {unit} already answered (result cache); nothing to compute"
    else:
        text = f"{description}: {cached:,} of {unique:,} {unit} already answered (result cache); computing {unique - cached:,}"
    log.info("%s", text, extra={"folkscope_file_only": True})
    if progress_mode(enabled) != "off":
        print(text, file=sys.stderr, flush=True)


class Engine:
    """Requests in, probabilities or text out, resumably.

    Parameters
    ----------
    backend : Backend
        E.g. from :func:`~folkscope.engine.backends.create_backend`.
    cache : ResultCache, optional
        Where answers are appended; None disables caching.
    prompt_version : str, default ""
        The caller's prompt-format version; part of every cache key, so
        changing how prompts are built never serves stale answers.
    progress : bool, optional
        False: no progress on the terminal. Default: a live bar on an
        interactive terminal, plain timed lines elsewhere (pipes, logs).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        cache: ResultCache | None = None,
        prompt_version: str = "",
        progress: bool | None = None,
    ) -> None:
        if not isinstance(prompt_version, (str, int)) or isinstance(prompt_version, bool):
            raise ConfigError(
                f"prompt_version must be a string, got {type(prompt_version).__name__}",
                parameter="prompt_version",
                value=prompt_version,
            )
        if cache is not None and not isinstance(cache, ResultCache):
            raise ConfigError(
                f"cache must be a ResultCache or None, got {type(cache).__name__}; use Engine.from_model(cache_dir=...)",
                parameter="cache",
                value=cache,
            )
        self.backend = backend
        self.cache = cache
        self.prompt_version = str(prompt_version)
        self.progress = progress
        self.stats = EngineStats()
        self.namespace = namespace_key(self.identity())

    @classmethod
    def from_model(
        cls,
        model: Any = "default",
        *,
        backend: str = "transformers",
        device: str | None = None,
        dtype: str | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        batch_tokens: int | None = None,
        prompt_version: str = "",
        progress: bool | None = None,
        **backend_options: Any,
    ) -> Engine:
        """Build an engine for a model handle.

        Parameters
        ----------
        model : str or ResolvedModel, default "default"
            ``"default"`` (SmolLM2-135M-Instruct), a local folder, a ``.gguf``
            file or a hub id; for ``backend="fake"``, just a name.
        backend : str, default "transformers"
            A registered backend name (:func:`~folkscope.engine.backends.available_backends`).
        device, dtype : str, optional
            Backend defaults when None (CUDA and bfloat16 when there is a GPU).
        cache_dir : str or Path, optional
            Result cache folder; default ``cache_home()/engine-cache``.
        use_cache : bool, default True
            False: compute everything, store nothing.
        batch_tokens : int, optional
            Token budget per batch (backend default when None).
        prompt_version : str, default ""
        progress : bool, optional
        **backend_options
            Passed to the backend (e.g. ``share_prefixes``, ``strategy``).
        """
        instance = create_backend(
            backend, model, device=device, dtype=dtype, batch_tokens=batch_tokens, **backend_options
        )
        cache = ResultCache(cache_dir) if use_cache else None
        return cls(instance, cache=cache, prompt_version=prompt_version, progress=progress)

    @classmethod
    def from_config(cls, config: EngineConfig, *, prompt_version: str = "", progress: bool | None = None) -> Engine:
        """Build the engine an :class:`~folkscope.engine.EngineConfig` describes (checked when it was built).

        Examples
        --------
        >>> engine = Engine.from_config(EngineConfig(model="demo", backend="fake", use_cache=False))
        >>> engine.identity()["backend"]["backend"], engine.identity()["backend"]["model"]["name"]
        ('fake', 'demo')

        With ``data_parallel`` above 1, or a ``ray_address``, the backend is a
        :class:`~folkscope.engine.parallel.ParallelBackend`: Ray workers answer
        shards of every call (one worker: all of it, on the cluster), and this
        engine persists their batches into its one cache as they arrive.
        """
        if config.data_parallel > 1 or config.ray_address is not None:
            from folkscope.engine.parallel import ParallelBackend

            cache = ResultCache(config.cache_dir) if config.use_cache else None
            return cls(ParallelBackend(config), cache=cache, prompt_version=prompt_version, progress=progress)
        return cls.from_model(
            config.model,
            backend=config.backend,
            device=config.device,
            dtype=config.dtype,
            cache_dir=config.cache_dir,
            use_cache=config.use_cache,
            prompt_version=prompt_version,
            progress=progress,
            **config.backend_options(),
        )

    @classmethod
    def from_loaded(
        cls,
        model: Any,
        tokenizer: Any,
        *,
        name: str | None = None,
        device: str | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        batch_tokens: int | None = None,
        prompt_version: str = "",
        progress: bool | None = None,
        **backend_options: Any,
    ) -> Engine:
        """An engine over a transformers model and tokenizer already in memory (folktexts' way of passing a model).

        The model keeps its device and dtype unless ``device`` is given. Its
        result-cache identity is its name (the last part of ``model.name_or_path``
        by default),
        the hub commit when transformers recorded one, and a fingerprint of
        its weights (:func:`~folkscope.engine.backends.hf.weights_fingerprint`),
        so answers of other weights under the same name are never reused.
        """
        from folkscope.engine.backends.hf import HFBackend, weights_fingerprint

        config = getattr(model, "config", None)
        if config is None or not callable(getattr(model, "state_dict", None)):
            raise ConfigError(
                f"model must be a loaded transformers model (with .config and weights), got {type(model).__name__}; "
                "pass a model name or folder to Engine.from_model instead",
                parameter="model",
            )
        source = getattr(model, "name_or_path", None) or getattr(config, "_name_or_path", None)
        label = (
            name or (Path(str(source)).name if source else None) or type(model).__name__
        )  # a folder's name, as folktexts
        commit = getattr(config, "_commit_hash", None)
        revision = f"{commit}+{weights_fingerprint(model)}" if commit else weights_fingerprint(model)
        where = device or str(getattr(model, "device", "cpu"))
        backend = HFBackend.from_loaded(
            model,
            tokenizer,
            name=str(label),
            revision=revision,
            device=where,
            batch_tokens=batch_tokens,
            **backend_options,
        )
        cache = ResultCache(cache_dir) if use_cache else None
        return cls(backend, cache=cache, prompt_version=prompt_version, progress=progress)

    # ------------------------------------------------------------------ helpers for callers
    @property
    def tokenizer(self) -> Any:
        """The backend's tokenizer (chat templates, prompt-length checks)."""
        return self.backend.tokenizer

    def identity(self) -> dict[str, Any]:
        """Everything the cache namespace hashes."""
        return {"backend": self.backend.identity(), "prompt_version": self.prompt_version}

    def render(self, prompt: Prompt) -> str:
        """The text a prompt becomes for this model."""
        return self.backend.render(prompt)

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        """Token count of each prompt (plain text or chat), as the model would see it."""
        return self.backend.count_tokens(list(prompts))

    def is_single_token(self, text: str) -> bool:
        """Whether ``text`` is one token (see :func:`~folkscope.engine.expand_variants`)."""
        return self.backend.is_single_token(text)

    @property
    def cuts_prompts(self) -> bool:
        """Whether the backend applies requests' ``context_size`` (local models do; a web API takes whole prompts)."""
        return bool(getattr(self.backend, "cuts_prompts", False))

    # ------------------------------------------------------------------ the four request kinds
    def score(
        self, requests: Sequence[ScoreRequest], *, unit: str = "requests", description: str = "scoring"
    ) -> list[ScoreResult]:
        """Log-probabilities of candidate continuations, one :class:`ScoreResult` per request.

        ``unit`` names what one request is to the caller (``"rows"``), so
        progress and the cache-reuse line count in it; ``description`` says
        what is being done.
        """
        return self._run(requests, ScoreRequest, ScoreResult.from_dict, self.backend.score, description, unit)

    def score_groups(
        self, requests: Sequence[PrefixGroupRequest], *, unit: str = "requests", description: str = "scoring"
    ) -> list[PrefixGroupResult]:
        """Shared-prefix groups, one :class:`PrefixGroupResult` per request (``unit``, ``description``: as :meth:`score`)."""
        return self._run(
            requests, PrefixGroupRequest, PrefixGroupResult.from_dict, self.backend.score_groups, description, unit
        )

    def next_token(
        self, requests: Sequence[NextTokenRequest], *, unit: str = "requests", description: str = "next token"
    ) -> list[NextTokenResult]:
        """Next-token log-probabilities over given tokens, one :class:`NextTokenResult` per request (``unit``, ``description``: as :meth:`score`)."""
        return self._run(
            requests, NextTokenRequest, NextTokenResult.from_dict, self.backend.next_token, description, unit
        )

    def generate(
        self, requests: Sequence[GenerateRequest], *, unit: str = "requests", description: str = "generating"
    ) -> list[GenerateResult]:
        """Generations, one :class:`GenerateResult` per request (``unit``, ``description``: as :meth:`score`)."""
        return self._run(requests, GenerateRequest, GenerateResult.from_dict, self.backend.generate, description, unit)

    def _run(
        self,
        requests: Sequence[Any],
        kind: type,
        decode: Callable[[Any], R],
        method: Callable[..., Batches],
        description: str,
        unit: str,
    ) -> list[R]:
        requests = list(requests)
        for i, req in enumerate(requests):
            if not isinstance(req, kind):
                raise ConfigError(
                    f"request {i} is a {type(req).__name__}, expected {kind.__name__} for this method",
                    parameter="requests",
                    value=type(req).__name__,
                )
        record(requests)
        requests = self._fit_context(requests)
        keys = [request_key(r) for r in requests]
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        unique = list(first)
        entries = [entry_key(self.namespace, k) for k in unique]
        found: dict[str, R] = {}
        if self.cache is not None and unique:
            found = self._cached(requests, first, unique, entries, decode)
        billing = getattr(self.backend, "take_usage", None)  # only a paid backend (web API) bills its answers
        if billing is not None and self.cache is not None and found:
            reused = [e for k, e in zip(unique, entries) if k in found]
            stored_usage = self.cache.usage_many(reused)
            self._add_billing([Usage.from_dict(stored_usage.get(e)) for e in reused])
        self.stats.requested += len(requests)
        self.stats.unique += len(unique)
        self.stats.cached += len(found)
        done = [k in found for k in unique]
        if found:
            _announce_reuse(description, unit, len(found), len(unique), enabled=self.progress)
        if not all(done):
            if self.cache is not None:
                self.cache.ensure_writable()  # a cache that cannot keep answers stops the run before any is computed
            recorded: dict[str, Any] = {}  # billing of the answers computed here, by entry
            with Progress(done.count(False), description=description, unit=unit, enabled=self.progress) as bar:
                hook = hasattr(self.backend, "on_partial")
                if hook:
                    self.backend.on_partial = bar.partial  # type: ignore[attr-defined]
                stream = iter(method([requests[first[k]] for k in unique], done=done))
                interrupt: KeyboardInterrupt | None = None
                pass_on = False
                try:
                    while True:
                        try:
                            completed = (
                                _pass_on(stream, interrupt) if pass_on and interrupt is not None else next(stream)
                            )
                        except StopIteration:
                            break
                        pass_on = False
                        paid = billing([idx for idx, _ in completed]) if billing is not None else {}
                        items = []
                        for idx, result in completed:
                            found[unique[idx]] = result
                            usage = recorded[entries[idx]] = paid[idx].to_dict() if idx in paid else None
                            items.append((entries[idx], self.namespace, kind.kind, result.to_dict(), usage))  # type: ignore[attr-defined]
                        if billing is not None:
                            self._add_billing([paid.get(idx) for idx, _ in completed])
                        self.stats.computed += len(completed)
                        if self.cache is not None:
                            try:
                                self._store(items, found, unique, entries, kind.kind, recorded)
                            except KeyboardInterrupt as exc:
                                # Ctrl-C while this batch was written: write it whole, then hand the interrupt to the
                                # backend, which may still collect answers already paid for (a web API's in flight)
                                if interrupt is not None:
                                    raise
                                interrupt, pass_on = exc, True
                                self._store(items, found, unique, entries, kind.kind, recorded)
                        # counted once saved: a progress line never says more is done than a kill would leave
                        bar.advance(len(completed), tokens=sum(_tokens(r) for _, r in completed))
                finally:
                    if hasattr(stream, "close"):
                        stream.close()  # a backend's stream stops sending work at once, also when this call fails
                    if hook:
                        self.backend.on_partial = None  # type: ignore[attr-defined]
        missing = [k for k in unique if k not in found]
        if missing:
            raise BackendError(
                f"backend {self.backend.name!r} returned no result for {len(missing)} of {len(unique)} requests"
            )
        return [found[k] for k in keys]

    def _fit_context(self, requests: list[Any]) -> list[Any]:
        """The requests, each ``context_size`` dropped where the prompt fits it (or the backend cuts nothing: a web API).

        So the limit is part of a request's cache key only where it changed
        what the model saw: answers cached without a limit keep serving the
        prompts that fit, and a cut prompt never shares an answer with its
        whole form.
        """
        limited = [i for i, r in enumerate(requests) if r.context_size is not None]
        if not limited:
            return requests
        lengths = (
            self.backend.prompt_lengths([requests[i] for i in limited]) if self.cuts_prompts else [0] * len(limited)
        )
        out = list(requests)
        for i, n in zip(limited, lengths):
            if n <= requests[i].context_size:
                out[i] = replace(requests[i], context_size=None)
        return out

    def _cached(
        self,
        requests: list[Any],
        first: dict[str, int],
        unique: list[str],
        entries: list[str],
        decode: Callable[[Any], R],
    ) -> dict[str, R]:
        """The answers the cache holds that can be trusted; damaged and implausible ones are counted, logged and left to recompute."""
        assert self.cache is not None
        before = self.cache.damaged
        stored = self.cache.get_many(entries)
        marks_unscored = bool(getattr(self.backend, "marks_unscored", False))
        found: dict[str, R] = {}
        undecodable = 0
        implausible_count, example = 0, ""
        for k, e in zip(unique, entries):
            if e not in stored:
                continue
            try:
                result = decode(stored[e])
            except (KeyError, TypeError, ValueError):  # damaged or from an incompatible writer
                undecodable += 1
                continue
            why = implausible(requests[first[k]], result, marks_unscored=marks_unscored)
            if why is not None:  # a valid checksum over wrong numbers: a buggy writer's answer
                implausible_count += 1
                example = example or why
                continue
            found[k] = result
        damaged = undecodable + self.cache.damaged - before
        if damaged:
            log.warning("%d cached answers were damaged; they are recomputed and replaced", damaged)
        if implausible_count:
            log.warning(
                "%d cached answers were implausible (e.g. %s); they are recomputed and replaced",
                implausible_count,
                example,
            )
        self.stats.damaged += damaged + implausible_count
        return found

    def _store(
        self,
        items: list[tuple[Any, ...]],
        found: dict[str, Any],
        unique: list[str],
        entries: list[str],
        kind: str,
        recorded: dict[str, Any],
    ) -> None:
        """Append a batch's answers to the cache (idempotent); if the file was lost mid-run, write every answer held."""
        assert self.cache is not None
        recreated = self.cache.recreated
        self.cache.put_many(items)
        if self.cache.recreated != recreated:
            self.cache.put_many(
                [
                    (entries[i], self.namespace, kind, found[k].to_dict(), recorded.get(entries[i]))
                    for i, k in enumerate(unique)
                    if k in found
                ]
            )

    def _add_billing(self, usages: Sequence[Usage | None]) -> None:
        """Add the billing of answers used to :attr:`stats`; None (not recorded) is counted apart."""
        for usage in usages:
            if usage is None:
                self.stats.unbilled_answers += 1
            else:
                self.stats.billed_answers += 1
                self.stats.billed.add(usage)

    def close(self) -> None:
        """Release the backend's model and close the cache."""
        self.backend.close()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        ident = self.backend.identity()
        return (
            f"Engine(backend={self.backend.name!r}, model={ident.get('model', {}).get('name')!r}, cache={self.cache!r})"
        )
