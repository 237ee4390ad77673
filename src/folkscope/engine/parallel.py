"""Data-parallel inference: shard each call's requests over Ray workers, each with its own copy of the model.

Why Ray: the spec asks to scale past one machine with an existing engine
(vLLM already integrates with Ray), never a home-made cluster protocol.

How it fits the engine
----------------------
:class:`ParallelBackend` is a backend (:class:`~folkscope.engine.backends.base.Backend`)
to the :class:`~folkscope.engine.Engine`, which keeps doing everything else:
deduplication, the result cache, progress and the per-batch writes. So

- the driver owns the ONE result cache; workers never open it. Every batch
  a worker completes is returned to the driver, which yields it to the
  engine, which persists it before asking for more: a rerun computes nothing;
- progress (rows/s, ETA) is the engine's one bar, advanced by batches of
  every worker as they arrive;
- answers are the workers' backends' answers. A tokenizing backend
  (transformers, fake) plans its batches within windows of its sorted
  requests (4,096 by default), so scoring is sharded by whole windows: each
  worker plans the batches one process would, and the scores are identical
  to the last bit. The price: a call with fewer windows than workers leaves
  workers idle (the bundled tasks fit one window; the paper's 160,000-row
  ACSIncome is about 80 windows). Generation is sharded by prompt and may
  differ in the last bits, as with any other batch composition.

Sharding
--------
Requests are ordered by the text a tokenizing backend orders them by (the
rendered prompt; a prefix group's rendered prefix and first suffix), so
requests that share a prefix are neighbours, and cut into ``N`` contiguous
shards of about equal size, each cut placed where neighbours share the
shortest prefix (:func:`shard`), or at window boundaries for a tokenizing
backend's scoring (above). The cut is a pure function of the requests,
done ones included, so a resumed run shards as the first one did.

Workers that die
----------------
Workers are Ray actors with ``max_restarts``. When one dies (killed, out of
memory, a lost node), Ray starts it again and the driver sends it its shard
again with every answer already received marked done; nothing that was
persisted is recomputed and nothing is lost.

A death is counted once, by the worker's *life*: every start of a worker
draws a fresh id, returned with each answer, and a new id is one restart.
While Ray restarts a worker, calls to it fail at once ("the actor is
restarting"); those are waited out with a short back-off, never counted as
deaths (one death used to be counted four times, and the run stopped). A
worker Ray reports dead for good (its restarts spent), or one that stays
unavailable for :data:`START_TIMEOUT`, stops the run in one line; every
answer received is saved.

Each worker takes one CPU and, where the cluster has GPUs (and ``--device``
is not ``cpu``), one GPU (``tensor_parallel_size`` GPUs for vLLM). A
transformers worker on CPU runs torch with this process's thread count,
because CPU kernels sum in another order with another count.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, fields
from typing import Any

from folkscope._deps import require
from folkscope.engine.backends import Backend, BackendStats, create_backend
from folkscope.engine.backends.base import Batches
from folkscope.engine.batching import lcp
from folkscope.engine.config import EngineConfig
from folkscope.engine.requests import (
    GenerateRequest,
    NextTokenRequest,
    PrefixGroupRequest,
    Prompt,
    ScoreRequest,
)
from folkscope.engine.tokens import TokenizerLike
from folkscope.errors import BackendError, ConfigError

__all__ = ["FAULT_ENV", "MAX_RESTARTS", "ParallelBackend", "order_keys", "shard"]

log = logging.getLogger(__name__)

#: times a worker may die and be restarted before the run stops
MAX_RESTARTS = 3
#: seconds to wait for every worker to start (be scheduled and build its backend), or to come back after a death
START_TIMEOUT = 600.0
#: first and longest pause before asking a worker that Ray is restarting again
_RETRY_FIRST, _RETRY_MOST = 0.1, 2.0
#: fault injection for tests only: ``"<batches>:<marker file>"`` makes the first worker that has returned
#: that many batches exit hard once (the marker file records that it happened)
FAULT_ENV = "FOLKSCOPE_TEST_WORKER_EXIT"


def _backend(config: EngineConfig) -> Backend:
    return create_backend(
        config.backend, config.model, device=config.device, dtype=config.dtype, **config.backend_options()
    )


def order_keys(requests: Sequence[Any], render: Any) -> list[str]:
    """The text that orders each request, so those sharing a prefix sort together (as a tokenizing backend orders them).

    Examples
    --------
    >>> order_keys([ScoreRequest("b?", ("x",)), PrefixGroupRequest("a:", ("1", "2"), ("x",))], str)
    ['b?', 'a:1']
    """
    memo: dict[Prompt, str] = {}

    def text(prompt: Prompt) -> str:
        if prompt not in memo:
            memo[prompt] = prompt if isinstance(prompt, str) else render(prompt)
        return memo[prompt]

    return [text(r.prefix) + r.suffixes[0] if isinstance(r, PrefixGroupRequest) else text(r.prompt) for r in requests]


def shard(keys: Sequence[str], workers: int, *, window: int | None = None) -> list[list[int]]:
    """Indices of ``keys`` in ``workers`` contiguous runs of their sorted order, cut where neighbours share least.

    Each cut lies within an eighth of a shard of the even split, at the pair
    of neighbours with the shortest common prefix (the nearest to the even
    split among equals), so requests sharing a prefix stay on one worker.

    With ``window`` (a tokenizing backend plans its batches within windows of
    that many requests of this order), the shards are whole windows instead,
    split as evenly as windows allow: each worker then plans exactly the
    batches one process would, so its answers are the same to the last bit.
    Fewer windows than workers leave the extra workers idle.

    Examples
    --------
    >>> shard(["b-row1", "a-row1", "a-row2", "b-row2"], 2)
    [[1, 2], [0, 3]]
    >>> shard(["x"], 3)
    [[0], [], []]
    >>> shard(["d", "c", "b", "a", "e"], 2, window=2)  # windows [a, b], [c, d], [e]
    [[3, 2, 1, 0], [4]]
    """
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}", parameter="workers", value=workers)
    n = len(keys)
    order = sorted(range(n), key=lambda i: (keys[i], i))
    if window is not None:
        windows = -(-n // window)
        cuts = [min(n, round(w * windows / workers) * window) for w in range(workers + 1)]
        return [order[a:b] for a, b in zip(cuts, cuts[1:])]
    if n <= workers:
        return [order[w : w + 1] for w in range(workers)]
    slack = n // (8 * workers)
    cuts = [0]
    for w in range(1, workers):
        target = round(w * n / workers)
        low, high = max(cuts[-1] + 1, target - slack), min(n - 1, target + slack)
        cuts.append(
            min(range(low, high + 1), key=lambda c: (lcp(keys[order[c - 1]], keys[order[c]]), abs(c - target), c))
        )
    cuts.append(n)
    return [order[a:b] for a, b in zip(cuts, cuts[1:])]


class _Worker:
    """What runs inside one Ray actor: a backend built from the config, answering one shard batch by batch."""

    def __init__(self, config: EngineConfig, fault: str | None = None, threads: int | None = None) -> None:
        if threads is not None:  # CPU kernels split their sums by thread: one process's count, one process's last bits
            import torch

            torch.set_num_threads(threads)
        self.backend = _backend(config)
        self.fault = fault
        #: this start of the worker: a restarted worker has a new one, and has lost the shard it was given
        self.life = uuid.uuid4().hex
        self._stream: Iterator[Any] | None = None
        self._error: BaseException | None = None
        self._returned = 0

    def identity(self) -> dict[str, Any]:
        return self.backend.identity()

    def begin(self, kind: str, requests: list[Any], done: list[bool]) -> str:
        """Start a shard and return this life's id; an error is kept for :meth:`next`, the call the driver waits on."""
        method = {
            "score": self.backend.score,
            "prefix_group": self.backend.score_groups,
            "next_token": self.backend.next_token,
            "generate": self.backend.generate,
        }[kind]
        self._error = None
        try:
            self._stream = iter(method(requests, done=done))
        except Exception as exc:  # raised in the driver by next()
            self._stream, self._error = None, exc
        return self.life

    def next(self) -> tuple[str, list[tuple[int, Any]] | None, dict[str, Any]]:
        """This life's id, the next completed batch of the shard (None when it is finished) and the backend's counters so far."""
        if self._error is not None:
            raise self._error
        self._maybe_exit()
        batch = next(self._stream, None) if self._stream is not None else None
        if batch is None:
            self._stream = None
        else:
            self._returned += 1
        return self.life, batch, asdict(self.backend.stats)

    def _maybe_exit(self) -> None:
        if not self.fault:
            return
        after, marker = self.fault.split(":", 1)
        if self._returned < int(after):
            return
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # only one worker, only once
        except FileExistsError:
            return
        os._exit(1)  # a hard crash: no cleanup, no answer for the batch in flight


class ParallelBackend:
    """A backend whose calls are answered by ``config.data_parallel`` Ray workers (see the module docs).

    Text work (tokenizer, rendering, token counts) is done by a backend of
    the same config in this process, which never loads the model; identity
    is the workers' (they compute the numbers), and must be the same for all.

    Parameters
    ----------
    config : EngineConfig
        ``data_parallel`` workers (>= 1) and ``ray_address`` (None: join the
        Ray instance this process already started, or start a local one).
    start_timeout : float
        Seconds to wait for every worker to start.
    """

    def __init__(self, config: EngineConfig, *, start_timeout: float = START_TIMEOUT) -> None:
        ray = require("ray", feature=f"--data-parallel {config.data_parallel}")
        self._ray = ray
        self.local = _backend(config)  # checks the model handle and options here, before any worker starts
        self.name = self.local.name
        self.size = config.data_parallel
        self._owns_ray = False
        self._workers: list[Any] = []
        self._latest: list[dict[str, Any]] = [{} for _ in range(self.size)]
        self._retired = BackendStats()
        #: restarts of each worker seen so far (a new life id is one), and the life id last seen
        self._deaths = [0] * self.size
        self._lives: list[str | None] = [None] * self.size
        try:
            self._start(config, start_timeout)
        except BaseException:
            self.close()
            raise

    def _start(self, config: EngineConfig, timeout: float) -> None:
        ray = self._ray
        if not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.WARNING,
            }
            if config.ray_address is None:
                options["num_cpus"] = max(os.cpu_count() or 1, self.size)
            ray.init(address=config.ray_address, **options)
            self._owns_ray = True
        resources = ray.cluster_resources()
        gpus_each = 0
        if resources.get("GPU", 0) >= 1 and not str(config.device or "cuda").startswith("cpu"):
            gpus_each = (config.tensor_parallel_size or 1) if config.backend == "vllm" else 1
        for kind, each in (("CPU", 1), ("GPU", gpus_each)):
            if self.size * each > resources.get(kind, 0):
                raise ConfigError(
                    f"--data-parallel {self.size} needs {self.size * each} {kind}s ({each} per worker) but the Ray "
                    f"cluster has {resources.get(kind, 0):g}; lower --data-parallel or add nodes",
                    parameter="data_parallel",
                    value=self.size,
                )
        actor = ray.remote(max_restarts=MAX_RESTARTS, max_task_retries=0, num_cpus=1, num_gpus=gpus_each)(_Worker)
        fault = os.environ.get(FAULT_ENV) or None
        self._workers = [actor.remote(config, fault, _torch_threads(config, gpus_each)) for _ in range(self.size)]
        try:
            identities = ray.get([w.identity.remote() for w in self._workers], timeout=timeout)
        except ray.exceptions.GetTimeoutError:
            raise BackendError(
                f"the {self.size} data-parallel workers did not all start within {timeout:g}s (Ray cluster: "
                f"{resources}); lower --data-parallel or free the cluster"
            ) from None
        except ray.exceptions.RayTaskError as exc:
            raise _cause(exc) from exc
        differ = sorted(
            k for i in identities[1:] for k in set(i) | set(identities[0]) if i.get(k) != identities[0].get(k)
        )
        if differ:
            raise ConfigError(
                f"the data-parallel workers report different {differ[0]} ({', '.join(str(i.get(differ[0])) for i in identities)}),"
                " so their answers cannot share one cache; set it (e.g. --batch-tokens, --dtype) or use alike nodes",
                parameter="data_parallel",
                value=self.size,
            )
        self._identity: dict[str, Any] = identities[0]
        gpu = f", {gpus_each} GPU(s) each" if gpus_each else ""
        log.info("data-parallel: %d Ray workers%s", self.size, gpu)

    # ------------------------------------------------------------------ text work, done here
    @property
    def tokenizer(self) -> TokenizerLike:
        return self.local.tokenizer

    def identity(self) -> dict[str, Any]:
        return dict(self._identity)

    def render(self, prompt: Prompt) -> str:
        return self.local.render(prompt)

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        return self.local.count_tokens(prompts)

    @property
    def cuts_prompts(self) -> bool:
        """Whether the workers' backend applies requests' ``context_size``."""
        return bool(getattr(self.local, "cuts_prompts", False))

    def prompt_lengths(self, requests: Sequence[Any]) -> list[int]:
        """The workers' backend's measure of prompts against their ``context_size``."""
        return self.local.prompt_lengths(requests)

    def is_single_token(self, text: str) -> bool:
        return self.local.is_single_token(text)

    @property
    def stats(self) -> BackendStats:
        """The workers' counters summed (those of workers that died included, up to their last batch)."""
        total = asdict(self._retired)
        for latest in self._latest:
            for name, value in latest.items():
                total[name] = total.get(name, 0) + value
        return BackendStats(**{f.name: total.get(f.name, 0) for f in fields(BackendStats)})

    # ------------------------------------------------------------------ the four request kinds, sharded
    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._sharded(ScoreRequest.kind, requests, done)

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._sharded(PrefixGroupRequest.kind, requests, done)

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._sharded(NextTokenRequest.kind, requests, done)

    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._sharded(GenerateRequest.kind, requests, done)

    def _sharded(self, kind: str, requests: Sequence[Any], done: Sequence[bool] | None) -> Batches:
        """Yield every worker's completed batches, in request indices of this call, as they arrive."""
        ray = self._ray
        requests = list(requests)
        answered = list(done) if done is not None else [False] * len(requests)
        if len(answered) != len(requests):
            raise ConfigError(
                f"done has {len(answered)} flags for {len(requests)} requests", parameter="done", value=len(answered)
            )
        # a tokenizing backend plans batches within windows of its sorted requests: shard by whole windows, so every
        # worker plans one process's batches and answers to the last bit (generation batches by length: no windows)
        window = getattr(self.local, "window", None) if kind != GenerateRequest.kind else None
        shards = shard(order_keys(requests, self.local.render), self.size, window=window)
        pending: dict[Any, tuple[int, str]] = {}  # call -> (worker, "begin" or "next")
        began: dict[int, str] = {}  # worker -> the life its shard was begun in
        retry: dict[int, float] = {}  # worker -> when to send its shard again (Ray is restarting it)
        outage: dict[int, tuple[float, int]] = {}  # worker -> (unavailable since, failed calls since)

        def submit(w: int) -> None:
            members = shards[w]
            ref = self._workers[w].begin.remote(kind, [requests[i] for i in members], [answered[i] for i in members])
            pending[ref] = (w, "begin")

        for w, members in enumerate(shards):
            if not all(answered[i] for i in members):
                submit(w)
        while pending or retry:
            now = time.monotonic()
            for w in [w for w, when in retry.items() if when <= now]:
                del retry[w]
                submit(w)
            if not pending:
                time.sleep(max(0.0, min(retry.values()) - time.monotonic()))
                continue
            wait = max(0.0, min(retry.values()) - now) if retry else None
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=wait)
            if not ready:
                continue
            ref = ready[0]
            w, call = pending.pop(ref)
            try:
                value = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                retry[w] = time.monotonic() + self._unavailable(w, exc, outage, sum(not answered[i] for i in shards[w]))
                continue
            except ray.exceptions.RayTaskError as exc:
                raise _cause(exc) from exc
            outage.pop(w, None)
            if call == "begin":
                began[w] = value
                self._seen(w, value, sum(not answered[i] for i in shards[w]))
                pending[self._workers[w].next.remote()] = (w, "next")
                continue
            life, batch, counters = value
            self._seen(w, life, sum(not answered[i] for i in shards[w]))
            if life != began[w]:  # restarted after its shard was begun: this life never had it
                submit(w)
                continue
            self._latest[w] = counters
            if batch is None:
                continue
            pending[self._workers[w].next.remote()] = (
                w,
                "next",
            )  # the worker computes its next batch while this one is saved
            completed = [(shards[w][i], result) for i, result in batch]
            for i, _ in completed:
                answered[i] = True
            yield completed

    def _seen(self, w: int, life: str, left: int) -> None:
        """Note the life an answer of worker ``w`` came from: a new one is one restart, counted once and said once."""
        if self._lives[w] == life:
            return
        if self._lives[w] is not None:
            self._deaths[w] += 1
            self._retired = BackendStats(
                **{
                    f.name: getattr(self._retired, f.name) + self._latest[w].get(f.name, 0)
                    for f in fields(BackendStats)
                }
            )
            self._latest[w] = {}
            log.warning(
                "data-parallel worker %d was restarted by Ray (restart %d of at most %d) and redoes the %d requests of "
                "its shard not yet saved",
                w,
                self._deaths[w],
                MAX_RESTARTS,
                left,
            )
        self._lives[w] = life

    def _unavailable(self, w: int, exc: Exception, outage: dict[int, tuple[float, int]], left: int) -> float:
        """Seconds to wait before sending worker ``w`` its shard again; raise when Ray will not bring it back.

        Calls to a worker that Ray is restarting fail at once: they are waited
        out (not counted as deaths). A worker Ray calls dead for good (its
        restarts spent) is asked once more, then the run stops; so does one
        unavailable for :data:`START_TIMEOUT`.
        """
        ray = self._ray
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        since, failures = outage.get(w, (time.monotonic(), 0))
        outage[w] = (since, failures + 1)
        if failures == 0:
            log.warning(
                "data-parallel worker %d stopped (%s); waiting for Ray to restart it (%d requests of its shard not yet saved)",
                w,
                first_line,
                left,
            )
        gone = isinstance(exc, ray.exceptions.ActorDiedError) and failures >= 1
        if gone or time.monotonic() - since > START_TIMEOUT:
            why = "Ray could not restart it" if gone else f"it did not come back within {START_TIMEOUT:g}s"
            raise BackendError(
                f"data-parallel worker {w} stopped and {why} (restarted {self._deaths[w]} times before, at most "
                f"{MAX_RESTARTS}; last: {first_line}); every answer received is saved: rerun the same command to go on, "
                "with fewer workers or a smaller --batch-tokens if memory ran out"
            ) from exc
        return min(_RETRY_MOST, _RETRY_FIRST * 2**failures)

    def close(self) -> None:
        """Stop the workers (and the local Ray instance this backend started)."""
        for worker in self._workers:
            try:
                self._ray.kill(worker, no_restart=True)
            except Exception:  # already gone
                pass
        self._workers = []
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False
        self.local.close()


def _torch_threads(config: EngineConfig, gpus_each: int) -> int | None:
    """The torch CPU threads of this process, for workers running a transformers model on CPU, else None.

    Ray starts a worker with one CPU and one thread, and a CPU matrix product
    sums in another order with another thread count: the same batch would
    come out different in the last bits from one process's. So a CPU worker
    uses this process's thread count (several workers on one machine then
    share its cores: data parallelism across machines is what pays on CPU).
    """
    if config.backend != "transformers" or gpus_each:
        return None
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def _cause(exc: Any) -> BaseException:
    """The exception a worker raised (a ConfigError stays a one-line ConfigError), not Ray's wrapper."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else BackendError(f"a data-parallel worker failed: {exc}")
