"""The vLLM backend: offline ``vllm.LLM`` with automatic prefix caching and exact log-probabilities.

Why one module: it is one backend written against vLLM's documented behaviour
(prompt log-probabilities, forced tokens, prefix caching); tokenizing, planning
and reading answers must stay in step with that behaviour and with the
transformers backend, and are tested together against the vLLM stand-in.

vLLM runs the model (CUDA GPUs only, tensor parallelism across the GPUs of
one node); folkscope tokenizes, plans and reads the answers. Prompts are
rendered and tokenized here exactly as the transformers backend does it (same
chat template, same BOS handling, candidates encoded as continuations and
appended to the prompt ids), and submitted as token ids, so both backends
score the same token sequences.

Exact candidate log-probabilities
---------------------------------
A candidate's log-probability is the sum of ``log P(token | everything before
it)`` over its tokens. Every such *read* is a pair (context ids, target id).
vLLM's public API offers three ways to get one exactly (never a top-k list
that might miss the candidate), chosen by ``scoring``:

``"token_ids"``
    One request per distinct context, ``SamplingParams(max_tokens=1,
    logprobs=k, logprob_token_ids=[targets])``: the log-probabilities of the
    requested ids at the first generated position, whatever their rank
    (vllm-project/vllm PR #43463 describes the parameter: "lets callers
    retrieve logprobs for a fixed set of vocabulary IDs ... whose tokens may
    not appear in the model's natural top-k"). Only in recent vLLM versions;
    detected by constructing such a ``SamplingParams``.
``"forced"``
    One request per read, ``SamplingParams(max_tokens=1, temperature=0,
    logprobs=1, allowed_token_ids=[target])``: the only allowed token is
    "sampled", and the sampled token's log-probability is always returned.
    Exact because vLLM V1 computes log-probabilities from the raw logits
    before the allowed-token whitelist is applied (docstring of
    ``vllm/v1/sample/sampler.py``: step 1 "compute logprobs", step 3 "apply
    allowed token ids whitelist", step 8 "gather the logprobs of the top
    max_num_logprobs and sampled token"; the V1 guide, "Semantic Changes to
    Logprobs": logprobs are "returned immediately once computed from the
    model's raw output", ``--logprobs-mode raw_logprobs`` being the default).
    vLLM's V0 engine computed them after the logits processors, which would
    give 0.0 here; the self-check below catches that.
``"prompt_logprobs"``
    One request per candidate, ``TokensPrompt(prompt_ids + candidate_ids)``
    with ``SamplingParams(max_tokens=1, prompt_logprobs=1, detokenize=False)``
    (the settings lm-evaluation-harness uses for log-likelihoods), summing
    ``prompt_logprobs[j][token_j]`` over the candidate positions. Each entry
    is a dict ``{token id: Logprob(logprob, rank, decoded_token)}`` that
    always holds the actual prompt token, whatever k; entry 0 is None.
    Exact by construction for any candidate length.

``"auto"`` (default) takes the first of ``token_ids`` and ``forced`` that
the installed vLLM supports and that passes a self-check, else
``prompt_logprobs``.

Why not always ``prompt_logprobs``: prefix caching
--------------------------------------------------
What was found about prompt log-probabilities and automatic prefix caching
(APC):

- vLLM V1 guide (docs.vllm.ai, usage/v1_guide, "Prompt Logprobs with Prefix
  Caching"): "While V1 supports passing prompt logprobs with prefix caching
  enabled, it no longer caches the logprobs. For a request requiring prompt
  logprobs, the engine will ignore the prefix cache and recompute the
  prefill of full prompt to generate the logprobs." (support added in
  vllm-project/vllm PR #13949, documented in PR #23399; PR #17251 makes the
  KV-cache manager skip the cache lookup when ``prompt_logprobs`` is set).
  So prompt-logprob requests are correct but get *no* reuse: every
  candidate re-runs its whole prompt.
- Before that, V1 rejected the combination ("Prefix caching with prompt
  logprobs not yet supported on VLLM V1", issue #13409), and the V0 engine
  crashed or misread cached positions (issues #3251, #3914, #8268, #13105).
- Open in 2026: issue #42019 "prompt_logprobs depends on request order when
  prefix caching is enabled", with PR #42245 saying the logprobs "for cached
  prefix positions contain stale values from previous requests".

So this backend never trusts a prompt log-probability read at a cached
position: ``RequestOutput.num_cached_tokens`` (documented as "the number of
tokens with prefix cache hit") is checked for every prompt-logprob request,
and a request whose cache hit reaches the positions read
(``prompt_logprobs[j]`` comes from the hidden state at ``j - 1``) is
submitted again with a unique ``cache_salt`` (which keys vLLM's block
hashes, so nothing can be served from the cache), and a
:class:`~folkscope.errors.BackendError` is raised if even that is served
from the cache. Results are thus right whether or not a vLLM version serves
prompt log-probabilities from its cache.

The sampled-token methods (``token_ids``, ``forced``) read only the
*next*-token distribution after the prompt, which vLLM always computes
(a full cache hit still recomputes the last prompt token to get logits), so
they are exact with the cache on and are the ones that profit from it: the
shared prompt of all candidates, answer orderings and rows is computed once.

Self-check
----------
Before the first scored batch, ``token_ids`` and ``forced`` are compared with
``prompt_logprobs`` (cache salted) on a short probe text and at least two
distinct target tokens. Since at most one token can have probability above
one half, a method returning 0.0 for every forced token (post-processing
semantics) always differs from the reference by more than the tolerance
(1e-3 in float32, 0.15 otherwise). ``"auto"`` then moves on; an explicitly
chosen method raises.

Batching and resume
-------------------
Requests are ordered by rendered text and processed in windows of
``window`` requests (tokenized in one bulk call). A window's submissions are
deduplicated and sorted by token ids, so sequences sharing a prefix are
neighbours (what lets APC keep and reuse them), and sent to
``llm.generate`` in chunks of ``chunk_sequences``. After each chunk the
requests whose reads are all answered are yielded, so the engine persists
them. Requests marked done are never planned, so a resumed run computes
nothing that was saved.

What is not verified here
-------------------------
vLLM cannot be installed on a CPU-only machine; the tests drive this module
through a stand-in shaped like ``vllm.LLM`` and its outputs. The test
``test_real_vllm_matches_transformers`` runs wherever vLLM and a CUDA GPU
are available.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folkscope._deps import require
from folkscope.engine.backends._token import TokenBackend, as_next_token
from folkscope.engine.backends.base import Batches, stop_at
from folkscope.engine.batching import DEFAULT_BATCH_TOKENS
from folkscope.engine.models import ResolvedModel, resolve_model
from folkscope.engine.requests import (
    GenerateRequest,
    GenerateResult,
    GenerationSettings,
    NextTokenRequest,
    PrefixGroupRequest,
    PrefixGroupResult,
    ScoreResult,
)
from folkscope.engine.tokens import encode_texts
from folkscope.errors import BackendError, ConfigError

__all__ = ["SCORING_METHODS", "VLLMBackend"]

log = logging.getLogger(__name__)

_FEATURE = "the vLLM backend"
#: accepted spellings of vLLM's ``dtype`` engine argument
_VLLM_DTYPES = {
    "auto": "auto",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
}
#: ``scoring`` values; see the module docstring
SCORING_METHODS = ("auto", "token_ids", "forced", "prompt_logprobs")
#: bump when the readout changes (part of the cache namespace)
NUMERICS_VERSION = 1
#: targets asked of one request in ``token_ids`` mode (vLLM's default ``max_logprobs``)
_MAX_TARGETS = 20
_PROBE_TEXT = "The following data describes a survey respondent.\nQuestion: Is the income above $50,000? Answer:"


# ---------------------------------------------------------------------- option checks
def _positive_int(value: object, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{parameter} must be a positive integer, got {value!r}", parameter=parameter, value=value)
    return value


def _optional_positive_int(value: object, parameter: str) -> int | None:
    return None if value is None else _positive_int(value, parameter)


def _vllm_dtype(value: object, parameter: str) -> str:
    name = _VLLM_DTYPES.get(str(value).lower().replace("torch.", "")) if isinstance(value, str) else None
    if name is None:
        raise ConfigError(
            f"{parameter} must be one of auto, bfloat16, float16, float32, got {value!r}",
            parameter=parameter,
            value=value,
        )
    return name


def _check_device(device: object) -> None:
    """vLLM runs on CUDA GPUs only and places the model itself."""
    if device is None or device in ("auto", "cuda"):
        return
    if isinstance(device, str) and device.startswith("cuda:"):
        raise ConfigError(
            f"the vLLM backend places the model on GPUs itself and cannot take device={device!r}; "
            "choose GPUs with CUDA_VISIBLE_DEVICES and pass device='cuda' (or leave it unset)",
            parameter="device",
            value=device,
        )
    raise ConfigError(
        f"the vLLM backend needs a CUDA GPU, got device={device!r}; use backend='transformers' to run on "
        f"{device!r}, or pass device='cuda' on a machine with an NVIDIA GPU",
        parameter="device",
        value=device,
    )


def _config_max_length(path: str) -> int | None:
    """Context window from a model folder's ``config.json`` (None when unknown)."""
    config = Path(path) / "config.json"
    if not config.is_file():
        return None
    try:
        data = json.loads(config.read_text())
    except (OSError, ValueError):
        return None
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _config_eos_ids(path: str) -> set[int]:
    """End-of-sequence ids of ``generation_config.json`` and ``config.json`` (vLLM stops on them too)."""
    out: set[int] = set()
    for name in ("generation_config.json", "config.json"):
        file = Path(path) / name
        try:
            value = json.loads(file.read_text()).get("eos_token_id") if file.is_file() else None
        except (OSError, ValueError):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, int) and not isinstance(item, bool):
                out.add(item)
    return out


def _logprob_of(entry: Any, token: int) -> float | None:
    """``entry[token].logprob`` from one position's ``{token id: Logprob}`` mapping, or None."""
    if entry is None:
        return None
    try:
        item = entry[token]
    except (KeyError, IndexError, TypeError):
        return None
    value = getattr(item, "logprob", item)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------- planning
@dataclass(frozen=True)
class _Job:
    """One request: the reads it needs and how to build its result from their values."""

    reads: frozenset[int]
    assemble: Callable[[Sequence[float]], Any]
    logical_tokens: int


@dataclass(frozen=True)
class _Sub:
    """One sequence submitted to vLLM and the reads it answers.

    ``prompt_logprobs``: ``tokens`` is prompt + candidate and ``reads[t]`` is
    the read at position ``start + t``. ``token_ids`` / ``forced``: ``tokens``
    is the context and ``reads[k]`` the read of ``targets[k]``.
    """

    tokens: tuple[int, ...]
    reads: tuple[int, ...]
    targets: tuple[int, ...] = ()
    start: int = 0


class _Plan:
    """The reads of one window: interned contexts, (context, target) pairs, whole sequences, jobs.

    Contexts are interned once (tuples do not cache their hash, and a read is
    looked up many times), so reads are keyed by two small integers.
    """

    def __init__(self, *, sequences: bool) -> None:
        self.contexts: list[tuple[int, ...]] = []
        self._context_ids: dict[tuple[int, ...], int] = {}
        self.read_context: list[int] = []
        self.read_target: list[int] = []
        self._read_ids: dict[tuple[int, int], int] = {}
        self.track_sequences = sequences
        self.sequences: list[_Sub] = []
        self._sequence_ids: dict[tuple[int, ...], int] = {}
        self.jobs: dict[int, _Job] = {}

    def context(self, tokens: tuple[int, ...]) -> int:
        cid = self._context_ids.get(tokens)
        if cid is None:
            cid = self._context_ids[tokens] = len(self.contexts)
            self.contexts.append(tokens)
        return cid

    def read(self, context: int, target: int) -> int:
        key = (context, target)
        rid = self._read_ids.get(key)
        if rid is None:
            rid = self._read_ids[key] = len(self.read_context)
            self.read_context.append(context)
            self.read_target.append(target)
        return rid

    def candidate(self, prompt: tuple[int, ...], prompt_context: int, candidate: tuple[int, ...]) -> tuple[int, ...]:
        """The reads of one candidate continuation (one per token), registering its whole sequence."""
        reads = tuple(
            self.read(prompt_context if t == 0 else self.context(prompt + candidate[:t]), token)
            for t, token in enumerate(candidate)
        )
        if self.track_sequences:
            sequence = prompt + candidate
            if sequence not in self._sequence_ids:
                self._sequence_ids[sequence] = len(self.sequences)
                self.sequences.append(_Sub(sequence, reads, start=len(prompt)))
        return reads

    def submissions(self, method: str) -> list[_Sub]:
        """What to send to vLLM for the reads of this plan, sorted by token ids (shared prefixes adjacent)."""
        if method == "prompt_logprobs":
            subs = list(self.sequences)
        elif method == "forced":
            subs = [
                _Sub(self.contexts[c], (r,), (t,)) for r, (c, t) in enumerate(zip(self.read_context, self.read_target))
            ]
        else:
            by_context: dict[int, list[int]] = {}
            for r, c in enumerate(self.read_context):
                by_context.setdefault(c, []).append(r)
            subs = []
            for c, reads in by_context.items():
                reads.sort(key=lambda r: self.read_target[r])
                for k in range(0, len(reads), _MAX_TARGETS):
                    group = tuple(reads[k : k + _MAX_TARGETS])
                    subs.append(_Sub(self.contexts[c], group, tuple(self.read_target[r] for r in group)))
        subs.sort(key=lambda s: (s.tokens, s.targets))
        return subs


def _score_job(plan: _Plan, prompt: tuple[int, ...], candidates: Sequence[tuple[int, ...]]) -> _Job:
    """Reads of one prompt's candidates and the ScoreResult built from them."""
    n = len(prompt)
    prompt_context = plan.context(prompt)
    pieces = [plan.candidate(prompt, prompt_context, c) for c in candidates]
    num_tokens = tuple(len(c) for c in candidates)

    def assemble(values: Sequence[float]) -> ScoreResult:
        # tokens summed in order, as the transformers backend does
        return ScoreResult(tuple(float(sum(values[r] for r in piece)) for piece in pieces), num_tokens, n)

    # what a path without prefix reuse runs (the transformers backend's units):
    # the prompt once for all single-token candidates, prompt + candidate[:-1] per longer one
    logical = (n if any(k == 1 for k in num_tokens) else 0) + sum(n + k - 1 for k in num_tokens if k > 1)
    return _Job(frozenset(r for piece in pieces for r in piece), assemble, logical)


def _group_job(parts: Sequence[_Job]) -> _Job:
    def assemble(values: Sequence[float]) -> PrefixGroupResult:
        return PrefixGroupResult(tuple(p.assemble(values) for p in parts))

    return _Job(frozenset().union(*(p.reads for p in parts)), assemble, sum(p.logical_tokens for p in parts))


# ---------------------------------------------------------------------- the backend
class VLLMBackend(TokenBackend):
    """Offline vLLM engine with automatic prefix caching.

    Parameters
    ----------
    model : ResolvedModel or str
        A resolved model, or a handle for :func:`~folkscope.engine.resolve_model`
        (``"default"``, a local folder, a ``.gguf`` file, a hub id); vLLM loads
        ``model.path``.
    device : str, optional
        None, ``"auto"`` or ``"cuda"``; anything else is a :class:`ConfigError`
        (vLLM needs CUDA GPUs and places the model itself).
    dtype : str, optional
        Alias of ``vllm_dtype`` (what :meth:`Engine.from_model` passes).
    batch_tokens : int, optional
        Passed to vLLM as ``max_num_batched_tokens`` (tokens per engine step);
        vLLM's default when None.
    gpu_memory_utilization : float, default 0.85
        Fraction of each GPU's memory vLLM may take (weights, activations,
        key/value cache), in (0, 1].
    max_model_len : int, optional
        Longest sequence (prompt plus generated tokens); the model's context
        window when None. Lower it to fit the key/value cache in memory.
    vllm_dtype : {"auto", "bfloat16", "float16", "float32"}, default "auto"
        Compute dtype; ``"auto"`` lets vLLM choose from the model config.
    tensor_parallel_size : int, optional
        GPUs to shard the model across (default 1).
    seed : int, default 0
        vLLM's engine seed (sampled generations also get their own per-request seed).
    scoring : {"auto", "token_ids", "forced", "prompt_logprobs"}, default "auto"
        How exact log-probabilities are obtained; see the module docstring.
    enable_prefix_caching : bool, default True
        vLLM's automatic prefix caching; leave on (it is what makes shared
        prompts cheap), off only to work around a vLLM bug.
    window : int, default 4096
        Requests tokenized and planned together.
    chunk_sequences : int, default 4096
        Sequences per ``llm.generate`` call; each completed chunk is yielded
        (and persisted by the engine).
    llm : object, optional
        An engine object already built (a ``vllm.LLM``, or a test stand-in with
        the same ``generate`` and ``get_tokenizer``); nothing is loaded then.
    """

    name = "vllm"

    def __init__(
        self,
        model: ResolvedModel | str,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_tokens: int | None = None,
        gpu_memory_utilization: float = 0.85,
        max_model_len: int | None = None,
        vllm_dtype: str = "auto",
        tensor_parallel_size: int | None = None,
        seed: int = 0,
        scoring: str = "auto",
        enable_prefix_caching: bool = True,
        window: int = 4096,
        chunk_sequences: int = 4096,
        llm: Any = None,
    ) -> None:
        _check_device(device)
        name = _vllm_dtype(vllm_dtype, "vllm_dtype")
        if dtype is not None and str(dtype).lower() != "auto":
            alias = _vllm_dtype(dtype, "dtype")
            if name not in ("auto", alias):
                raise ConfigError(
                    f"dtype={dtype!r} and vllm_dtype={vllm_dtype!r} disagree; pass only one of them",
                    parameter="dtype",
                    value=dtype,
                )
            name = alias
        util = gpu_memory_utilization
        if isinstance(util, bool) or not isinstance(util, (int, float)) or not 0.0 < float(util) <= 1.0:
            raise ConfigError(
                f"gpu_memory_utilization must be a fraction in (0, 1], got {util!r}",
                parameter="gpu_memory_utilization",
                value=util,
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}", parameter="seed", value=seed)
        if scoring not in SCORING_METHODS:
            raise ConfigError(
                f"scoring must be one of {', '.join(SCORING_METHODS)}, got {scoring!r}",
                parameter="scoring",
                value=scoring,
            )
        if not isinstance(enable_prefix_caching, bool):
            raise ConfigError(
                f"enable_prefix_caching must be True or False, got {enable_prefix_caching!r}",
                parameter="enable_prefix_caching",
                value=enable_prefix_caching,
            )
        self.max_model_len = _optional_positive_int(max_model_len, "max_model_len")
        self.tensor_parallel_size = _positive_int(
            1 if tensor_parallel_size is None else tensor_parallel_size, "tensor_parallel_size"
        )
        self.chunk_sequences = _positive_int(chunk_sequences, "chunk_sequences")
        self.max_num_batched_tokens = _optional_positive_int(batch_tokens, "batch_tokens")
        super().__init__(batch_tokens=batch_tokens or DEFAULT_BATCH_TOKENS, window=window)
        self.vllm_dtype = name
        self.gpu_memory_utilization = float(util)
        self.seed = seed
        self.scoring = scoring
        self.enable_prefix_caching = enable_prefix_caching

        self._vllm = require("vllm", feature=_FEATURE)
        self.resolved = model if isinstance(model, ResolvedModel) else resolve_model(model)
        self._llm: Any = llm
        self._owns_llm = False
        self._injected = llm is not None
        if llm is not None:
            self._tokenizer = llm.get_tokenizer()
        else:
            transformers = require("transformers", feature=_FEATURE)
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(self.resolved.path)
        self.max_length = self.max_model_len or _config_max_length(self.resolved.path)
        eos = getattr(self._tokenizer, "eos_token_id", None)
        self._eos = _config_eos_ids(self.resolved.path) | ({eos} if isinstance(eos, int) else set())
        self._method: str | None = None
        self._token_ids_supported: bool | None = None

    @classmethod
    def from_model(cls, model: ResolvedModel | str, **options: Any) -> VLLMBackend:
        """Build the backend (what ``Engine.from_model(..., backend="vllm")`` calls)."""
        return cls(model, **options)

    # ------------------------------------------------------------------ identity and engine
    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.resolved.identity(),
            "dtype": self.vllm_dtype,
            "device": "cuda",
            "tensor_parallel_size": self.tensor_parallel_size,
            "max_model_len": self.max_model_len,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "numerics": NUMERICS_VERSION,
        }

    def engine_options(self) -> dict[str, Any]:
        """The keyword arguments ``vllm.LLM`` is built with."""
        options: dict[str, Any] = {
            "model": self.resolved.path,
            "tokenizer": self.resolved.path,
            "dtype": self.vllm_dtype,
            "tensor_parallel_size": self.tensor_parallel_size,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "seed": self.seed,
            "enable_prefix_caching": self.enable_prefix_caching,
        }
        if self.max_model_len is not None:
            options["max_model_len"] = self.max_model_len
        if self.max_num_batched_tokens is not None:
            options["max_num_batched_tokens"] = self.max_num_batched_tokens
        return options

    @property
    def llm(self) -> Any:
        """The vLLM engine, built on first use (a fully cached run never loads the model)."""
        if self._llm is None:
            if self._injected:
                raise BackendError("this vLLM backend was closed; build a new one")
            self._check_gpu()
            self._llm = self._vllm.LLM(**self.engine_options())
            self._owns_llm = True
        return self._llm

    def _check_gpu(self) -> None:
        torch = require("torch", feature=_FEATURE)
        if not torch.cuda.is_available():
            raise ConfigError(
                "the vLLM backend needs a CUDA GPU and torch sees none; use backend='transformers' on this machine",
                parameter="device",
                value="cuda",
            )
        count = int(torch.cuda.device_count())
        if self.tensor_parallel_size > count:
            raise ConfigError(
                f"tensor_parallel_size={self.tensor_parallel_size} but only {count} GPU(s) are visible",
                parameter="tensor_parallel_size",
                value=self.tensor_parallel_size,
            )

    def close(self) -> None:
        """Drop the engine and free GPU memory (vLLM's own clean-up when this backend built it)."""
        llm, owned = self._llm, self._owns_llm
        self._llm = None
        self._owns_llm = False
        del llm
        if owned:
            try:
                from vllm.distributed import cleanup_dist_env_and_memory  # type: ignore[import-not-found]

                cleanup_dist_env_and_memory()
            except Exception as exc:  # noqa: BLE001 - clean-up is best effort; the engine is dropped anyway
                log.debug("vLLM clean-up skipped: %s", exc)
        gc.collect()
        torch = sys.modules.get("torch")
        if torch is not None:
            try:
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
            except Exception as exc:  # noqa: BLE001 - a broken CUDA context must not stop closing
                log.debug("torch.cuda.empty_cache failed: %s", exc)

    # ------------------------------------------------------------------ talking to vLLM
    def _prompt(self, tokens: Sequence[int], salt: str | None = None) -> Any:
        fields: dict[str, Any] = {"prompt_token_ids": list(tokens)}
        if salt is not None:
            fields["cache_salt"] = salt
        factory = getattr(self._vllm, "TokensPrompt", None)
        return factory(**fields) if factory is not None else fields

    def _params(self, **options: Any) -> Any:
        return self._vllm.SamplingParams(**options)

    def _generate(self, prompts: list[Any], params: Any) -> list[Any]:
        outputs = list(self.llm.generate(prompts, params, use_tqdm=False))
        if len(outputs) != len(prompts):
            raise BackendError(f"vLLM returned {len(outputs)} outputs for {len(prompts)} prompts")
        return outputs

    def _count_run(self, subs: Sequence[_Sub], outputs: Sequence[Any]) -> None:
        run = 0
        for sub, out in zip(subs, outputs):
            cached = getattr(out, "num_cached_tokens", None)
            cached = cached if isinstance(cached, int) and not isinstance(cached, bool) else 0
            run += max(0, len(sub.tokens) - cached)
        self.stats.batches += 1
        self.stats.forward_passes += 1
        self.stats.tokens_run += run
        self.stats.tokens_padded += run

    def _supports_token_ids(self) -> bool:
        if self._token_ids_supported is None:
            try:
                self._params(max_tokens=1, logprobs=1, logprob_token_ids=[0])
                self._token_ids_supported = True
            except (TypeError, ValueError):
                self._token_ids_supported = False
        return self._token_ids_supported

    def _answer(self, subs: Sequence[_Sub], method: str, *, count: bool = True) -> list[list[float]]:
        """Log-probabilities of each submission's reads, in order."""
        if method == "prompt_logprobs":
            return self._answer_prompt_logprobs(subs, count=count)
        if method == "forced":
            params: Any = [
                self._params(
                    max_tokens=1, temperature=0.0, logprobs=1, allowed_token_ids=list(s.targets), detokenize=False
                )
                for s in subs
            ]
        else:
            params = [
                self._params(
                    max_tokens=1,
                    temperature=0.0,
                    logprobs=len(s.targets),
                    logprob_token_ids=list(s.targets),
                    detokenize=False,
                )
                for s in subs
            ]
        outputs = self._generate([self._prompt(s.tokens) for s in subs], params)
        if count:
            self._count_run(subs, outputs)
        return [self._sampled_values(s, out, method) for s, out in zip(subs, outputs)]

    def _sampled_values(self, sub: _Sub, out: Any, method: str) -> list[float]:
        completions = getattr(out, "outputs", None)
        if not completions:
            raise BackendError("vLLM returned a request without completions")
        completion = completions[0]
        if method == "forced":
            generated = list(getattr(completion, "token_ids", ()) or ())
            if not generated or int(generated[0]) != sub.targets[0]:
                raise BackendError(
                    f"vLLM generated {generated[:1]} although only token {sub.targets[0]} was allowed "
                    "(allowed_token_ids not honoured); use scoring='prompt_logprobs'"
                )
        positions = getattr(completion, "logprobs", None)
        if not positions:
            raise BackendError("vLLM returned no log-probabilities for the generated position")
        values = []
        for target in sub.targets:
            value = _logprob_of(positions[0], target)
            if value is None:
                raise BackendError(
                    f"vLLM's log-probabilities for the generated position lack token {target} (scoring={method!r}); "
                    "use scoring='prompt_logprobs'"
                )
            values.append(value)
        return values

    def _answer_prompt_logprobs(self, subs: Sequence[_Sub], *, count: bool, salted: bool = False) -> list[list[float]]:
        params = self._params(max_tokens=1, temperature=0.0, prompt_logprobs=1, detokenize=False)
        prompts = [self._prompt(s.tokens, f"folkscope-{uuid.uuid4().hex}" if salted else None) for s in subs]
        outputs = self._generate(prompts, params)
        if count:
            self._count_run(subs, outputs)
        values: list[list[float] | None] = [self._prompt_values(s, out) for s, out in zip(subs, outputs)]
        stale = [k for k, v in enumerate(values) if v is None]
        if stale:
            if salted:
                raise BackendError(
                    f"vLLM served prompt log-probabilities of {len(stale)} sequence(s) from its prefix cache even "
                    "with a unique cache_salt, so they may be stale; build the backend with enable_prefix_caching=False"
                )
            log.info("recomputing %d prompt-logprob request(s) that hit vLLM's prefix cache", len(stale))
            again = self._answer_prompt_logprobs([subs[k] for k in stale], count=count, salted=True)
            for k, v in zip(stale, again):
                values[k] = v
        return [v for v in values if v is not None]

    @staticmethod
    def _prompt_values(sub: _Sub, out: Any) -> list[float] | None:
        """Prompt log-probabilities at the candidate positions; None when they may come from the cache."""
        cached = getattr(out, "num_cached_tokens", None)
        if isinstance(cached, int) and not isinstance(cached, bool) and cached >= sub.start:
            return None  # prompt_logprobs[j] needs the hidden state at j - 1, which the cache skipped
        entries = getattr(out, "prompt_logprobs", None)
        if entries is None or len(entries) != len(sub.tokens):
            raise BackendError(
                f"vLLM returned {0 if entries is None else len(entries)} prompt log-probability entries "
                f"for a prompt of {len(sub.tokens)} tokens"
            )
        values = []
        for j in range(sub.start, len(sub.tokens)):
            value = _logprob_of(entries[j], sub.tokens[j])
            if value is None:
                raise BackendError(f"vLLM's prompt log-probabilities lack the prompt token at position {j}")
            values.append(value)
        return values

    # ------------------------------------------------------------------ choosing the scoring method
    def _probe(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        context = encode_texts(self.tokenizer, [_PROBE_TEXT], add_special_tokens=True)[0]
        targets = list(dict.fromkeys(context))[:4]
        filler = 0
        while len(targets) < 2:
            if filler not in targets:
                targets.append(filler)
            filler += 1
        return context, tuple(targets)

    def _self_check(self, method: str) -> None:
        """Compare ``method`` with salted prompt log-probabilities on a probe; BackendError if they differ."""
        context, targets = self._probe()
        reference = self._answer_prompt_logprobs(
            [_Sub(context + (t,), (k,), start=len(context)) for k, t in enumerate(targets)], count=False, salted=True
        )
        if method == "forced":
            subs = [_Sub(context, (k,), (t,)) for k, t in enumerate(targets)]
        else:
            subs = [_Sub(context, tuple(range(len(targets))), targets)]
        got = [v for values in self._answer(subs, method, count=False) for v in values]
        expected = [values[0] for values in reference]
        worst = max(abs(a - b) for a, b in zip(got, expected))
        tol = 1e-3 if self.vllm_dtype == "float32" else 0.15
        if not worst <= tol:
            raise BackendError(
                f"self-check failed: scoring={method!r} differs from prompt log-probabilities by {worst:.3g} "
                f"(tolerance {tol}) on a probe; this vLLM does not return raw log-probabilities that way"
            )

    def scoring_method(self) -> str:
        """The scoring method in use (resolving ``"auto"`` runs the self-check, loading the model)."""
        if self._method is not None:
            return self._method
        if self.scoring == "prompt_logprobs":
            self._method = "prompt_logprobs"
            return self._method
        tries = [self.scoring] if self.scoring != "auto" else ["token_ids", "forced"]
        for method in tries:
            if method == "token_ids" and not self._supports_token_ids():
                if self.scoring == "token_ids":
                    raise ConfigError(
                        "scoring='token_ids' needs a vLLM whose SamplingParams takes logprob_token_ids; upgrade vLLM "
                        "or use scoring='auto'",
                        parameter="scoring",
                        value=self.scoring,
                    )
                continue
            try:
                self._self_check(method)
            except (BackendError, TypeError, ValueError) as exc:
                if self.scoring != "auto":
                    raise
                log.warning("vLLM scoring method %r is not usable here (%s); trying the next one", method, exc)
                continue
            self._method = method
            return method
        self._method = "prompt_logprobs"
        return self._method

    # ------------------------------------------------------------------ scoring kinds (TokenBackend.score & co. call this)
    def _score_kind(self, kind: str, requests: Sequence[Any], done: Sequence[bool] | None) -> Batches:
        keys, parts_of = self._scoring_parts(kind, list(requests))

        def build(todo: list[int], plan: _Plan) -> None:
            for i, parts in parts_of(todo).items():
                jobs = [_score_job(plan, prompt, cands) for prompt, cands in parts]
                if kind == PrefixGroupRequest.kind:
                    plan.jobs[i] = _group_job(jobs)
                elif kind == NextTokenRequest.kind:
                    (job,) = jobs
                    plan.jobs[i] = _Job(
                        job.reads, lambda values, job=job: as_next_token(job.assemble(values)), job.logical_tokens
                    )
                else:
                    (plan.jobs[i],) = jobs

        return self._run_plans(keys, build, done)

    def _run_plans(
        self, keys: Sequence[str], build: Callable[[list[int], _Plan], None], done: Sequence[bool] | None
    ) -> Batches:
        n = len(keys)
        done_flags = list(done) if done is not None else [False] * n
        if len(done_flags) != n:
            raise ConfigError(
                f"done has {len(done_flags)} flags for {n} requests", parameter="done", value=len(done_flags)
            )
        order = sorted(range(n), key=lambda i: keys[i])
        for start in range(0, n, self.window):
            todo = [i for i in order[start : start + self.window] if not done_flags[i]]
            if not todo:
                continue
            method = self.scoring_method()
            plan = _Plan(sequences=method == "prompt_logprobs")
            build(todo, plan)
            subs = plan.submissions(method)
            self._check_lengths([len(s.tokens) + 1 for s in subs], "prompts (with their candidates)")
            yield from self._execute(plan, subs, method)

    def _execute(self, plan: _Plan, subs: list[_Sub], method: str) -> Batches:
        values = [math.nan] * len(plan.read_context)
        answered = [False] * len(plan.read_context)
        waiting: dict[int, list[int]] = {}
        remaining: dict[int, int] = {}
        for j, job in plan.jobs.items():
            remaining[j] = len(job.reads)
            for r in job.reads:
                waiting.setdefault(r, []).append(j)
        for start in range(0, len(subs), self.chunk_sequences):
            chunk = subs[start : start + self.chunk_sequences]
            completed: list[int] = []
            for sub, got in zip(chunk, self._answer(chunk, method)):
                for r, value in zip(sub.reads, got):
                    if answered[r]:
                        continue
                    answered[r] = True
                    values[r] = value
                    for j in waiting.get(r, ()):
                        remaining[j] -= 1
                        if remaining[j] == 0:
                            completed.append(j)
            if completed:
                results = [(j, plan.jobs[j].assemble(values)) for j in sorted(completed)]
                self.stats.requests += len(results)
                self.stats.logical_tokens += sum(plan.jobs[j].logical_tokens for j in completed)
                yield results
        left = [j for j, k in remaining.items() if k > 0]
        if left:  # pragma: no cover - every read has a submission
            raise BackendError(f"{len(left)} request(s) were planned but never answered")

    # ------------------------------------------------------------------ generation
    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        n = len(requests)
        done_flags = list(done) if done is not None else [False] * n
        if len(done_flags) != n:
            raise ConfigError(
                f"done has {len(done_flags)} flags for {n} requests", parameter="done", value=len(done_flags)
            )
        todo = [i for i in range(n) if not done_flags[i]]
        if not todo:
            return
        ids = dict(zip(todo, self._encode_requests([requests[i] for i in todo])))
        for i in todo:
            self._check_prompt_ids(ids[i])
        self._check_lengths(
            [len(ids[i]) + requests[i].settings.max_new_tokens for i in todo], "prompts (plus max_new_tokens)"
        )
        order = sorted(todo, key=lambda i: (ids[i], i))
        for start in range(0, len(order), self.chunk_sequences):
            chunk = order[start : start + self.chunk_sequences]
            subs = [_Sub(ids[i], ()) for i in chunk]
            outputs = self._generate(
                [self._prompt(ids[i]) for i in chunk], [self._generation_params(requests[i].settings) for i in chunk]
            )
            self._count_run(subs, outputs)
            results = [
                (i, self._generation_result(out, ids[i], requests[i].settings)) for i, out in zip(chunk, outputs)
            ]
            self.stats.requests += len(results)
            self.stats.logical_tokens += sum(len(ids[i]) for i in chunk)
            self.stats.generated_tokens += sum(r.completion_tokens for _, r in results)
            yield results

    def _generation_params(self, s: GenerationSettings) -> Any:
        return self._params(
            temperature=s.temperature, max_tokens=s.max_new_tokens, seed=s.seed, stop=list(s.stop) or None
        )

    def _generation_result(self, out: Any, prompt: tuple[int, ...], s: GenerationSettings) -> GenerateResult:
        """Map a vLLM completion to a GenerateResult with the transformers backend's conventions.

        vLLM's ``finish_reason`` is ``"stop"`` or ``"length"``; ``stop_reason`` is
        the stop string, a stop token id, or None for the end-of-sequence token.
        The text is decoded here from the token ids (end-of-sequence token left
        out, cut before the stop string), as the transformers backend does.
        """
        completions = getattr(out, "outputs", None)
        if not completions:
            raise BackendError("vLLM returned a generation without completions")
        c = completions[0]
        tokens = [int(t) for t in c.token_ids]
        reason, stop_reason = c.finish_reason, getattr(c, "stop_reason", None)
        decode = self.tokenizer.decode
        if reason == "length":
            return GenerateResult(decode(tokens), "length", len(prompt), len(tokens))
        if reason != "stop":
            raise BackendError(f"vLLM ended a generation with finish_reason={reason!r}")
        if isinstance(stop_reason, str):
            text = decode(tokens)
            cut = stop_at(text, s.stop)
            return GenerateResult(text[:cut] if cut is not None else str(c.text), "stop", len(prompt), len(tokens))
        ends = {stop_reason} if isinstance(stop_reason, int) else self._eos
        if tokens and tokens[-1] in ends:
            return GenerateResult(decode(tokens[:-1]), "eos", len(prompt), len(tokens))
        return GenerateResult(decode(tokens), "eos", len(prompt), len(tokens) + 1)
