"""The transformers backend (CPU and CUDA): read only what is asked, reuse shared prefixes.

Why one module: it is one backend executing planned passes on one model's
key/value cache; loading, the pass loop, cache gathering and the load-time
self-check all depend on that cache's layout and change together.

How a batch runs (``strategy="optimized"``)
-------------------------------------------
The planner (:mod:`folkscope.engine.batching`) gives a tree of passes: the
global prefix (e.g. the task description) as one row, shared prefixes below
it (e.g. a survey row's text, shared by its answer orderings) one row each,
and a leaf row per unit (the rest of a prompt and the candidate tokens).
Each row continues the key/value cache of its parent row in an earlier
pass: the pass's past is gathered from its parents' caches by row index
(expanded without copying when a single row is every row's parent), and a
row whose parent's cache is narrower gets masked empty slots.

Segments are right-padded. Each pass gets a 2-D attention mask covering the
whole cache (padding and empty slots in the middle of a row's cache are
masked out) and explicit position ids (each row continues from its own
prefix length), so every token sees exactly the tokens of its own prompt at
the positions it would have in a single full forward pass.

Passes run the *base* model to hidden states; only the positions read (the
last prompt token, and a multi-token candidate's positions) are gathered
and multiplied by the output embedding. The full-vocabulary normaliser
(log-sum-exp) is computed at those few positions only, so log-probabilities
are exact, while the ``[rows, length, vocab]`` logits of a plain forward
pass are never built.

``strategy="naive"`` is the reference path: whole sequences, one pass, the
model's own full logits at every position. Tests check that both agree.

At load, a self-check runs a tiny tree of passes through both paths and
refuses to continue if they disagree (an architecture whose attention or
output head this backend does not handle).
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import logging
import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from folkscope._deps import require
from folkscope.engine.backends._token import DEFAULT_WINDOW, Reads, TokenBackend
from folkscope.engine.backends.base import stop_at
from folkscope.engine.batching import DEFAULT_BATCH_TOKENS, Batch, Parent, Pass, Unit
from folkscope.engine.devices import resolve_device, resolve_dtype
from folkscope.engine.models import ResolvedModel, resolve_model
from folkscope.engine.requests import GenerateResult, GenerationSettings
from folkscope.errors import BackendError, ConfigError

__all__ = ["HFBackend", "cache_argument", "weights_fingerprint"]

log = logging.getLogger(__name__)
_FEATURE = "the transformers backend"
#: bump when the readout arithmetic changes (part of the cache namespace)
NUMERICS_VERSION = 1
#: floating-point work of one batch on a CPU (2 * parameters * token budget): about half a minute at the
#: 30-50 GFLOP/s a small or busy CPU sustains; answers are saved per batch, so this bounds what a kill loses
CPU_BATCH_FLOP = 1e12


def weights_fingerprint(model: Any, *, sample: int = 256) -> str:
    """A short fingerprint of a model's weights: every tensor's name, shape and dtype, and a strided sample of its values.

    A model handed over already loaded has no file or hub revision to key
    the result cache by; this tells two sets of weights apart (different
    checkpoints, a fine-tune, a random initialisation) without hashing
    gigabytes: ``sample`` evenly spaced values per tensor.

    Examples
    --------
    >>> import torch
    >>> a, b = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    >>> weights_fingerprint(a) == weights_fingerprint(a), weights_fingerprint(a) == weights_fingerprint(b)
    (True, False)
    """
    torch = require("torch", feature=_FEATURE)
    digest = hashlib.sha256()
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            flat = tensor.detach().reshape(-1)
            step = max(1, flat.numel() // sample)
            values = flat[::step][:sample].to("cpu", torch.float32).numpy()
            digest.update(f"{name}|{tuple(tensor.shape)}|{tensor.dtype}|".encode())
            digest.update(values.tobytes())
    return digest.hexdigest()[:16]


def cache_argument(forward: Any) -> str:
    """The keyword a model's ``forward`` takes its key/value cache by: ``"cache"`` or ``"past_key_values"``.

    transformers 5.24 renamed ``past_key_values`` to ``cache`` (the old name
    still works there but warns, and goes in 5.40); earlier releases only know
    the old name. The signature says which one this installation has, so no
    version table needs updating when the rename reaches more models.

    Examples
    --------
    >>> def new(input_ids=None, cache=None, use_cache=None): ...
    >>> def old(input_ids=None, past_key_values=None, use_cache=None): ...
    >>> cache_argument(new), cache_argument(old)
    ('cache', 'past_key_values')
    """
    try:
        parameters = inspect.signature(forward).parameters
    except (TypeError, ValueError):  # a builtin or C-implemented forward: only the old name is universal
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


def _sharing_unsafe(config: Any) -> str | None:
    """Why key/value reuse with gaps in the cache would be wrong for this architecture, if it would."""
    if getattr(config, "alibi", False) or getattr(config, "model_type", "") in {"bloom", "mpt"}:
        return "ALiBi attention biases depend on cache index distance"
    layer_types = getattr(config, "layer_types", None) or []
    if any(t != "full_attention" for t in layer_types):
        return f"layer types {sorted(set(layer_types))} are not all full attention"
    if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
        return "sliding-window attention counts cache indices, not positions"
    return None


class HFBackend(TokenBackend):
    """Hugging Face transformers causal LMs.

    Parameters
    ----------
    model : ResolvedModel or str
        A resolved model, or a handle for :func:`~folkscope.engine.resolve_model`.
    device : str, optional
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``; default CUDA when available.
    dtype : str, optional
        ``"float32"``, ``"bfloat16"``, ``"float16"``; default float32 on CPU,
        bfloat16 (or float16) on GPU.
    batch_tokens : int, optional
        Token budget of a batch (see :mod:`folkscope.engine.batching`);
        default estimated from the device's memory and the model's size
        before loading (on CPU up to 16384, and small enough that a batch,
        the unit in which answers are saved, ends within about half a minute). Part of the identity (so of the
        cache namespace and a run's folder): rows batched differently can
        differ in the last bits (measured: up to ~1e-6 in a risk score, see
        ``benchmarks/batch_invariance.py``), so a resumed run never mixes
        answers computed under two budgets. Halved and retried on
        out-of-memory errors (counted in ``stats.oom_backoffs``).
    share_prefixes : bool, default True
        Reuse the key/value cache of shared prefixes (switched off, with a
        log message, for architectures where it would be wrong).
    strategy : {"optimized", "naive"}, default "optimized"
        ``"naive"``: the reference path (full logits, no reuse).
    attn_implementation : str, default "sdpa"
    window : int, default 4096
        Requests planned and tokenized together.
    self_check : bool, default True
        Compare the optimised path with the model's own logits at load.
    """

    name = "transformers"

    def __init__(
        self,
        model: ResolvedModel | str,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_tokens: int | None = None,
        share_prefixes: bool = True,
        strategy: Literal["optimized", "naive"] = "optimized",
        attn_implementation: str = "sdpa",
        window: int = DEFAULT_WINDOW,
        self_check: bool = True,
    ) -> None:
        resolved = model if isinstance(model, ResolvedModel) else resolve_model(model)
        transformers = require("transformers", feature=_FEATURE)
        tokenizer = transformers.AutoTokenizer.from_pretrained(resolved.path)
        config = transformers.AutoConfig.from_pretrained(resolved.path)
        self._setup(
            resolved,
            tokenizer,
            config,
            None,
            device=device,
            dtype=dtype,
            batch_tokens=batch_tokens,
            share_prefixes=share_prefixes,
            strategy=strategy,
            attn_implementation=attn_implementation,
            window=window,
            self_check=self_check,
        )

    @classmethod
    def from_loaded(
        cls, model: Any, tokenizer: Any, *, name: str, revision: str, device: str | None = None, **options: Any
    ) -> HFBackend:
        """Wrap a model object already in memory (e.g. a random-initialised benchmark model).

        ``revision`` must identify the weights (it keys the result cache). The
        model is moved to ``device`` and its dtype is kept.
        """
        self = cls.__new__(cls)
        resolved = ResolvedModel(name, name, "<in memory>", "local", str(revision))
        dtype = str(model.dtype).replace("torch.", "")
        self._setup(resolved, tokenizer, model.config, model, device=device, dtype=dtype, **options)
        return self

    def _setup(
        self,
        resolved: ResolvedModel,
        tokenizer: Any,
        config: Any,
        loaded: Any,
        *,
        device: str | None = None,
        dtype: str | None = None,
        batch_tokens: int | None = None,
        share_prefixes: bool = True,
        strategy: Literal["optimized", "naive"] = "optimized",
        attn_implementation: str = "sdpa",
        window: int = DEFAULT_WINDOW,
        self_check: bool = True,
    ) -> None:
        if strategy not in ("optimized", "naive"):
            raise ConfigError(
                f"strategy must be 'optimized' or 'naive', got {strategy!r}", parameter="strategy", value=strategy
            )
        self.resolved = resolved
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.strategy = strategy
        self._auto_budget = batch_tokens is None
        # a forward pass reads every weight once: on a GPU that costs as much as ~200 tokens of compute, on a CPU ~50
        self.pass_overhead = 256 if self.device.startswith("cuda") else 48
        super().__init__(
            batch_tokens=DEFAULT_BATCH_TOKENS if batch_tokens is None else batch_tokens,
            share_prefixes=share_prefixes and strategy == "optimized",
            window=window,
        )
        self.attn_implementation = attn_implementation
        self.self_check = self_check
        self._torch = require("torch", feature=_FEATURE)
        self._transformers = require("transformers", feature=_FEATURE)
        self._tokenizer = tokenizer
        self._model: Any = None
        #: (tokens, per-layer keys/values, mask, lengths) of the last global prefix run (see _run_passes)
        self._kept_global: tuple[tuple[int, ...], Any, Any, Any] | None = None
        self.max_length = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        reason = _sharing_unsafe(config)
        if reason and self.share_prefixes:
            log.info("prefix sharing disabled for %s: %s", self.resolved.name, reason)
            self.share_prefixes = False
        if self._auto_budget:
            self.budget.tokens = self._estimate_budget(config, loaded)
        #: the budget batches are planned with, part of the identity: rows batched differently differ in
        #: the last bits, so answers computed under another budget are neither reused nor mixed into a run
        self.planned_budget = self.budget.tokens
        if loaded is not None:
            self._prepare(loaded)

    @classmethod
    def from_model(cls, model: ResolvedModel | str, **options: Any) -> HFBackend:
        return cls(model, **options)

    # ------------------------------------------------------------------ identity and loading
    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def identity(self) -> dict[str, Any]:
        ident = {
            "backend": self.name,
            "model": self.resolved.identity(),
            "dtype": self.dtype,
            "device": self.device.split(":")[0],
            "batch_tokens": self.planned_budget,
            "numerics": NUMERICS_VERSION,
        }
        if (
            self.window != DEFAULT_WINDOW
        ):  # other windows plan other batches (last bits); the default keeps earlier caches
            ident["window"] = self.window
        return ident

    @property
    def model(self) -> Any:
        """The loaded model (loaded on first use, so fully cached runs never load it)."""
        if self._model is None:
            self._load()
        return self._model

    def _load(self) -> None:
        # The model loads lazily, inside the engine's own progress display: transformers' loading bar
        # would print between its lines (and is noise in logs and CI output)
        self._transformers.utils.logging.disable_progress_bar()
        model = self._transformers.AutoModelForCausalLM.from_pretrained(
            self.resolved.path, dtype=getattr(self._torch, self.dtype), attn_implementation=self.attn_implementation
        )
        self._prepare(model)

    def _prepare(self, model: Any) -> None:
        model.to(self.device)
        model.eval()
        self._model = model
        self._base = model.base_model
        self._cache_arg = cache_argument(self._base.forward)
        self._lm_head = model.get_output_embeddings()
        config = model.config
        self._softcap = getattr(config, "final_logit_softcapping", None)
        scale = getattr(model, "logit_scale", None)
        self._logit_scale = float(scale) if isinstance(scale, (int, float)) else None
        self._pad_id = next(
            (int(t) for t in (self._tokenizer.pad_token_id, self._tokenizer.eos_token_id) if isinstance(t, int)), 0
        )
        eos = model.generation_config.eos_token_id if model.generation_config is not None else None
        eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self._tokenizer.eos_token_id is not None:
            eos_ids.add(self._tokenizer.eos_token_id)
        self._eos = {int(e) for e in eos_ids}
        if self.self_check and self.strategy == "optimized":
            try:
                self._check_against_full_logits()
            except BaseException:
                self._model = None
                raise

    def _estimate_budget(self, config: Any, loaded: Any = None) -> int:
        """A batch budget from the machine and the model alone, so it is known before loading and the same on every run.

        The key/value cache and activations of a token, times the budget,
        must fit. GPU: half of the device's memory left by the weights (its
        total memory, not what is free now, which changes from run to run),
        up to 1M tokens. CPU: an eighth of the installed RAM, up to 16384
        tokens (passes that large already keep the cores busy; the optimised
        path's passes are several times smaller than its budget, since its
        footprint counts cached prefixes), and at most :data:`CPU_BATCH_FLOP`
        of work per batch (``2 * parameters * budget``): answers are saved
        batch by batch, so a batch in flight is what a kill loses, and on a
        CPU it must end within about half a minute (the default model:
        about 3,700 tokens, where 16384 took up to a minute on a busy
        2-core machine). The naive path also needs
        full-vocabulary logits and their log-softmax for every token. Out of
        memory, the budget still halves (:class:`~folkscope.engine.backoff.AdaptiveBudget`),
        and the run's stats count it (``oom_backoffs``).
        """
        torch = self._torch
        elt = torch.tensor([], dtype=getattr(torch, self.dtype)).element_size()
        hidden = int(getattr(config, "hidden_size", 4096))
        layers = int(getattr(config, "num_hidden_layers", 32))
        heads = int(getattr(config, "num_attention_heads", 32))
        kv_heads = int(getattr(config, "num_key_value_heads", heads) or heads)
        head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
        inter = int(getattr(config, "intermediate_size", 4 * hidden) or 4 * hidden)
        per_token = 2 * layers * kv_heads * head_dim * elt + (6 * hidden + 3 * inter) * elt
        if self.strategy == "naive":
            per_token += 2 * 4 * int(getattr(config, "vocab_size", 32000))
        if self.device.startswith("cuda"):
            total = torch.cuda.get_device_properties(torch.device(self.device)).total_memory
            left = max(total - self._weight_bytes(config, loaded, elt), 0)
            return int(max(1024, min(1 << 20, left * 0.5 / per_token)))
        try:
            memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.125 / per_token
        except (AttributeError, ValueError, OSError):  # no POSIX sysconf (Windows): a fixed, modest budget
            memory = 4096
        work = CPU_BATCH_FLOP / (2 * max(self._weight_bytes(config, loaded, elt) // elt, 1))
        return int(max(1024, min(16384, memory, work)))

    def _weight_bytes(self, config: Any, loaded: Any, elt: int) -> int:
        """Bytes the weights take on the device, counted on a loaded model or on an empty (meta-device) copy."""
        model = loaded
        if model is None:
            with self._torch.device("meta"):
                model = self._transformers.AutoModelForCausalLM.from_config(config)
        return int(sum(p.numel() for p in model.parameters())) * elt

    def _before_planning(self) -> None:
        _ = self.model  # load (and self-check) the model before work is planned, not inside the first batch

    def _on_oom(self) -> None:
        self._kept_global = None
        gc.collect()
        if self.device.startswith("cuda"):
            self._torch.cuda.empty_cache()

    def close(self) -> None:
        self._model = None
        self._on_oom()

    # ------------------------------------------------------------------ scoring
    def _head(self, hidden: Any) -> Any:
        """Float32 logits over the whole vocabulary for a few hidden states, shape (n, vocab)."""
        logits = self._lm_head(hidden)
        if self._logit_scale is not None:
            logits = logits * self._logit_scale
        logits = logits.float()
        if self._softcap:
            logits = self._torch.tanh(logits / self._softcap) * self._softcap
        return logits

    def _pad(self, segments: Sequence[Sequence[int]], width: int, *, left: bool = False) -> tuple[Any, Any]:
        torch = self._torch
        ids = torch.full((len(segments), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(segments), width), dtype=torch.long)
        for r, seg in enumerate(segments):
            if seg:
                sl = slice(width - len(seg), width) if left else slice(0, len(seg))
                ids[r, sl] = torch.tensor(seg, dtype=torch.long)
                mask[r, sl] = 1
        return ids.to(self.device), mask.to(self.device)

    def _run_passes(
        self, passes: Sequence[Pass], reads: dict[int, tuple[list[int], list[int]]], *, keep_global: bool = False
    ) -> dict[int, Any]:
        """Run the passes in order; the hidden states at the ``(rows, columns)`` read in each pass.

        A row continues the key/value cache of its parent row, which may be
        in any earlier pass. A pass's past is gathered from its parents'
        caches; rows whose parent's cache is narrower, or who have no parent,
        get masked empty slots. A pass's cache is dropped after the last
        pass that continues it.

        With ``keep_global``, the key/value cache of a single-row first pass
        (the global prefix of the plan, e.g. the task description) is kept,
        and a later batch whose first pass is the same token sequence starts
        from it instead of running it again (``self._tokens_reused`` counts
        the tokens skipped). Nothing writes into a kept cache: passes extend
        gathered copies of it.
        """
        torch = self._torch
        max_pos = (self.max_length or 1 << 30) - 1
        last_use: dict[int, int] = {}
        for k, p in enumerate(passes):
            for parent in p.parents:
                if parent is not None:
                    last_use[parent[0]] = k
        caches: dict[int, tuple[list[tuple[Any, Any]], Any, Any]] = {}  # pass -> (layers, mask, lengths)
        shareable = keep_global and len(passes) > 1 and passes[0].parents == (None,)
        kept = self._kept_global
        first = 0
        if shareable and kept is not None and kept[0] == passes[0].segments[0]:
            caches[0] = kept[1:]
            first = 1
            self._tokens_reused += len(passes[0].segments[0])
        out: dict[int, Any] = {}
        cost_total = sum(len(p.segments) * max(1, p.width) for p in passes[first:]) or 1
        cost_done = 0
        for k in range(first, len(passes)):
            p = passes[k]
            ids, seg_mask = self._pad(p.segments, max(1, p.width))
            past, past_mask, start = self._gather_past(p.parents, caches)
            attn = seg_mask if past_mask is None else torch.cat([past_mask, seg_mask], dim=1)
            positions = (start[:, None] + torch.arange(ids.shape[1], device=self.device)[None, :]).clamp(max=max_pos)
            result = self._forward(ids, attn, positions, past)
            past = None
            if k in reads:
                rows, cols = reads[k]
                at = torch.tensor(rows, device=self.device), torch.tensor(cols, device=self.device)
                out[k] = result.last_hidden_state[at]
            cost_done += len(p.segments) * max(1, p.width)
            self._report_fraction(cost_done / cost_total)
            if k in last_use:
                layers = [(layer.keys, layer.values) for layer in self._cache_of(result).layers]
                caches[k] = (layers, attn, start + seg_mask.sum(1))
                if shareable and k == 0:
                    self._kept_global = (p.segments[0], *caches[0])
            result = None
            for j in [j for j, last in last_use.items() if last == k]:
                del caches[j]
        return out

    def _forward(self, ids: Any, attention_mask: Any, positions: Any, past: Any) -> Any:
        """One cached forward pass of the base model, handing ``past`` over by this transformers' argument name."""
        return self._base(
            input_ids=ids,
            attention_mask=attention_mask,
            position_ids=positions,
            use_cache=True,
            **{self._cache_arg: past},
        )

    def _cache_of(self, output: Any) -> Any:
        """The key/value cache of a forward pass's output, read under the name it was passed by (no deprecated alias)."""
        return getattr(output, self._cache_arg)

    def _gather_past(
        self, parents: Sequence[Parent], caches: dict[int, tuple[list[tuple[Any, Any]], Any, Any]]
    ) -> tuple[Any, Any, Any]:
        """(cache, mask, start positions) of a pass's past, one row per parent; (None, None, zeros) without parents."""
        torch = self._torch
        n = len(parents)
        sources = sorted({parent[0] for parent in parents if parent is not None})
        if not sources:
            return None, None, torch.zeros(n, dtype=torch.long, device=self.device)
        if len(sources) == 1 and None not in parents:
            layers, mask, lengths = caches[sources[0]]
            if mask.shape[0] == 1:  # a view: the cache update copies it once anyway
                kv = [(key.expand(n, -1, -1, -1), val.expand(n, -1, -1, -1)) for key, val in layers]
                return self._transformers.DynamicCache(kv), mask.expand(n, -1), lengths.expand(n)
            idx = torch.tensor([parent[1] for parent in parents], dtype=torch.long, device=self.device)
            kv = [(key.index_select(0, idx), val.index_select(0, idx)) for key, val in layers]
            return self._transformers.DynamicCache(kv), mask.index_select(0, idx), lengths.index_select(0, idx)
        # parents in several passes (or none for some rows): right-pad every parent's cache with masked slots
        width = max(caches[j][1].shape[1] for j in sources)
        template = caches[sources[0]][0]
        kv = [
            (
                key.new_zeros((n, key.shape[1], width, key.shape[3])),
                val.new_zeros((n, val.shape[1], width, val.shape[3])),
            )
            for key, val in template
        ]
        mask = torch.zeros((n, width), dtype=torch.long, device=self.device)
        start = torch.zeros(n, dtype=torch.long, device=self.device)
        for j in sources:
            layers, parent_mask, lengths = caches[j]
            rows = [(i, parent[1]) for i, parent in enumerate(parents) if parent is not None and parent[0] == j]
            dest = torch.tensor([i for i, _ in rows], dtype=torch.long, device=self.device)
            src = torch.tensor([r for _, r in rows], dtype=torch.long, device=self.device)
            w = parent_mask.shape[1]
            for (key, val), (pkey, pval) in zip(kv, layers):
                key[dest, :, :w] = pkey.index_select(0, src)
                val[dest, :, :w] = pval.index_select(0, src)
            mask[dest, :w] = parent_mask.index_select(0, src)
            start[dest] = lengths.index_select(0, src)
        return self._transformers.DynamicCache(kv), mask, start

    def _run_scores(self, batch: Batch, units: Sequence[Unit], reads: Sequence[Reads]) -> list[np.ndarray]:
        torch = self._torch
        _ = self.model
        per_pass: dict[int, tuple[list[int], list[int]]] = {}
        slots: list[tuple[int, int]] = []  # (pass, index among that pass's reads) of every read position
        flat_read: list[int] = []
        flat_tok: list[int] = []
        sizes: list[int] = []
        for unit_reads, cut, (k, row) in zip(reads, batch.cuts, batch.leaves):
            rows, cols = per_pass.setdefault(k, ([], []))
            n = 0
            for pos, targets in unit_reads:
                slots.append((k, len(rows)))
                rows.append(row)
                cols.append(pos - cut)
                flat_read.extend([len(slots) - 1] * len(targets))
                flat_tok.extend(targets)
                n += len(targets)
            sizes.append(n)
        with torch.inference_mode():
            if self.strategy == "naive":
                (p,) = batch.passes
                rows, cols = per_pass[0]
                values = self._naive_logprobs(p, rows, cols, flat_read, flat_tok)
            else:
                picked = self._run_passes(batch.passes, per_pass, keep_global=True)
                offset, start = {}, 0
                for k in sorted(picked):
                    offset[k], start = start, start + picked[k].shape[0]
                hidden = torch.cat([picked[k] for k in sorted(picked)])
                order = torch.tensor([offset[k] + i for k, i in slots], device=self.device)
                values = self._logprobs_at(hidden.index_select(0, order), flat_read, flat_tok)
        return list(np.split(values, np.cumsum(sizes)[:-1]))

    def _logprobs_at(self, hidden: Any, flat_read: list[int], flat_tok: list[int]) -> np.ndarray:
        """log P(token | position) for (read, token) pairs, normalising over the vocabulary in chunks."""
        torch = self._torch
        vocab = int(self._lm_head.weight.shape[0])
        chunk = max(1, (1 << 25) // vocab)
        read_idx = torch.tensor(flat_read, dtype=torch.long, device=self.device)
        tok_idx = torch.tensor(flat_tok, dtype=torch.long, device=self.device)
        out = torch.empty(len(flat_read), dtype=torch.float32, device=self.device)
        for start in range(0, hidden.shape[0], chunk):
            logits = self._head(hidden[start : start + chunk])
            lse = torch.logsumexp(logits, dim=-1)
            sel = (read_idx >= start) & (read_idx < start + chunk)
            local = read_idx[sel] - start
            out[sel] = logits[local, tok_idx[sel]] - lse[local]
        return out.double().cpu().numpy()

    def _naive_logprobs(
        self, p: Pass, read_rows: list[int], read_cols: list[int], flat_read: list[int], flat_tok: list[int]
    ) -> np.ndarray:
        """Reference: the model's own forward, full logits at every position, log-softmax, gather."""
        torch = self._torch
        ids, mask = self._pad(p.segments, max(1, p.width))
        logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
        logp = torch.log_softmax(logits, dim=-1)
        rows = torch.tensor(read_rows, device=self.device)[torch.tensor(flat_read, device=self.device)]
        cols = torch.tensor(read_cols, device=self.device)[torch.tensor(flat_read, device=self.device)]
        return logp[rows, cols, torch.tensor(flat_tok, device=self.device)].double().cpu().numpy()

    def _check_against_full_logits(self) -> None:
        """Run a tiny tree of passes both ways; refuse to go on if they disagree.

        The tree has every shape a plan can have: a shared first pass, a level
        below it, and a last pass whose rows continue the level above, the
        first pass directly (skipping a level), or nothing.
        """
        torch = self._torch
        vocab = int(self._lm_head.weight.shape[0])
        g = torch.Generator().manual_seed(0)
        toks = [int(t) for t in torch.randint(0, min(vocab, 1000), (16,), generator=g)]
        shared, a, b = tuple(toks[:4]), tuple(toks[4:7]), tuple(toks[7:9])
        # (full sequence, parent, tokens before the leaf segment)
        leaves = [
            (shared + a + (toks[9], toks[10]), (1, 0), 7),
            (shared + a + (toks[11],), (1, 0), 7),
            (shared + b + (toks[10],) * 3, (1, 1), 6),
            (shared + (toks[12], toks[13]), (0, 0), 4),
            ((toks[14], toks[15], toks[12]), None, 0),
        ]
        passes = (
            Pass((shared,), (None,)),
            Pass((a, b), ((0, 0), (0, 0))),
            Pass(tuple(seq[cut:] for seq, _, cut in leaves), tuple(parent for _, parent, cut in leaves)),
        )
        rows = [r for r, (seq, _, cut) in enumerate(leaves) for _ in range(len(seq) - cut)]
        cols = [j for seq, _, cut in leaves for j in range(len(seq) - cut)]
        with torch.inference_mode():
            hidden = self._run_passes(passes, {2: (rows, cols)})[2]
            mine = torch.log_softmax(self._head(hidden), -1)
            worst, i = 0.0, 0
            for seq, _, cut in leaves:
                full = torch.log_softmax(
                    self.model(input_ids=torch.tensor([seq], device=self.device)).logits.float()[0], -1
                )
                for j in range(len(seq) - cut):
                    worst = max(worst, float((mine[i] - full[cut + j]).abs().max()))
                    i += 1
        tol = 1e-3 if self.dtype == "float32" else 0.25
        if worst > tol:
            raise BackendError(
                f"self-check failed for {self.resolved.name}: the optimised scoring path differs from the model's own "
                f"logits by {worst:.3g} (tolerance {tol}). This architecture is not supported by prefix reuse or the "
                "hidden-state readout; use share_prefixes=False, or strategy='naive'"
            )

    # ------------------------------------------------------------------ generation
    def _run_generation(
        self, prompts: Sequence[tuple[int, ...]], settings: Sequence[GenerationSettings]
    ) -> list[GenerateResult]:
        torch = self._torch
        _ = self.model
        n = len(prompts)
        width = max(len(p) for p in prompts)
        ids, mask = self._pad(prompts, width, left=True)
        positions = (mask.cumsum(1) - 1).clamp(min=0)
        generators = [None if s.greedy else torch.Generator().manual_seed(s.seed) for s in settings]
        generated: list[list[int]] = [[] for _ in range(n)]
        results: list[GenerateResult | None] = [None] * n
        with torch.inference_mode():
            out = self._forward(ids, mask, positions, None)
            next_pos = mask.sum(1)
            for _step in range(max(s.max_new_tokens for s in settings)):
                logits = self._head(out.last_hidden_state[:, -1])
                greedy = logits.argmax(-1).tolist()
                feed = []
                for r in range(n):
                    if results[r] is not None:
                        feed.append(self._pad_id)
                        continue
                    s = settings[r]
                    if s.greedy:
                        token = int(greedy[r])
                    else:
                        probs = torch.softmax(logits[r] / s.temperature, -1).cpu()
                        token = int(torch.multinomial(probs, 1, generator=generators[r]))
                    results[r] = self._step(generated[r], token, s, len(prompts[r]))
                    feed.append(token)
                finished = sum(r is not None for r in results)
                self._report_fraction(finished / n)
                if finished == n:
                    break
                mask = torch.cat([mask, torch.ones((n, 1), dtype=mask.dtype, device=self.device)], dim=1)
                step_ids = torch.tensor(feed, dtype=torch.long, device=self.device)[:, None]
                out = self._forward(step_ids, mask, next_pos[:, None], self._cache_of(out))
                next_pos = next_pos + 1
        return [r for r in results if r is not None]

    def _step(self, generated: list[int], token: int, s: GenerationSettings, prompt_len: int) -> GenerateResult | None:
        """Append a token; the result if the generation is over."""
        decode = self._tokenizer.decode
        if token in self._eos:
            return GenerateResult(decode(generated), "eos", prompt_len, len(generated) + 1)
        generated.append(token)
        if s.stop:
            text = decode(generated)
            cut = stop_at(text, s.stop)
            if cut is not None:
                return GenerateResult(text[:cut], "stop", prompt_len, len(generated))
        if len(generated) >= s.max_new_tokens:
            return GenerateResult(decode(generated), "length", prompt_len, len(generated))
        return None
