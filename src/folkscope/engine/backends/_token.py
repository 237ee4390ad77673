"""Shared machinery of backends that tokenize locally (transformers, fake).

Requests become token-level *units* (see :mod:`folkscope.engine.batching`),
the planner groups them into batches with shared-prefix passes, and a
subclass's model runner executes one batch at a time:

- ``_run_scores(batch, units, reads)`` returns, for every leaf row, the
  log-probabilities of the target tokens at the positions read;
- ``_run_generation(prompts, settings)`` returns one :class:`GenerateResult`
  per prompt.

Requests are first ordered by their rendered text (so prompts sharing a
prefix are neighbours), then processed in windows of ``window`` requests,
each tokenized in one bulk call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from folkscope.engine.backends.base import BackendStats, Batches, render_prompt
from folkscope.engine.backoff import AdaptiveBudget, Planned, run_with_backoff
from folkscope.engine.batching import Batch, Unit, plan_batches
from folkscope.engine.requests import (
    GenerateRequest,
    GenerateResult,
    GenerationSettings,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    Prompt,
    ScoreRequest,
    ScoreResult,
)
from folkscope.engine.tokens import TokenizerLike, encode_continuations, encode_texts
from folkscope.errors import ConfigError

__all__ = ["DEFAULT_WINDOW", "Part", "Reads", "TokenBackend", "as_next_token"]

#: requests planned into batches together (in prompt order), unless a backend is given another ``window``
DEFAULT_WINDOW = 4096

#: positions read in a unit and the target token ids at each: ((position, (token, ...)), ...)
Reads = tuple[tuple[int, tuple[int, ...]], ...]
#: one scored prompt of a request: (prompt token ids, token ids of each candidate)
Part = tuple[tuple[int, ...], list[tuple[int, ...]]]


@dataclass(frozen=True)
class _Job:
    units: tuple[int, ...]  # indices into the window's unit list, in the order assemble expects
    assemble: Callable[[list[np.ndarray]], Any]


def _check_positive(value: object, parameter: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{parameter} must be a positive integer, got {value!r}", parameter=parameter, value=value)
    return value


class TokenBackend:
    """Base class: planning, windows, resume and out-of-memory back-off for tokenizing backends.

    Parameters
    ----------
    batch_tokens : int
        Token budget of a batch (largest pass footprint, see :mod:`~folkscope.engine.batching`).
    share_prefixes : bool, default True
        Reuse the key/value cache of shared prefixes.
    window : int, default 4096
        Requests planned and tokenized together.
    """

    name = "token"
    max_length: int | None = None
    #: requests' ``context_size`` is applied (a prompt cut to its last tokens); see :meth:`prompt_lengths`
    cuts_prompts = True
    #: what one more forward pass costs, in tokens run (see :func:`~folkscope.engine.batching.plan_batches`)
    pass_overhead = 48

    def __init__(self, *, batch_tokens: int, share_prefixes: bool = True, window: int = DEFAULT_WINDOW) -> None:
        self.budget = AdaptiveBudget(_check_positive(batch_tokens, "batch_tokens"))
        self.share_prefixes = bool(share_prefixes)
        self.window = _check_positive(window, "window")
        self.stats = BackendStats()
        #: set by ``_run_scores`` when it skipped tokens whose cache it kept from an earlier batch
        self._tokens_reused = 0
        #: set by the engine while it runs: told how many requests of the running batch are as good as done
        self.on_partial: Callable[[float], None] | None = None
        self._batch_requests = 0

    # ------------------------------------------------------------------ subclass hooks
    @property
    def tokenizer(self) -> TokenizerLike:
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        raise NotImplementedError

    def _run_scores(self, batch: Batch, units: Sequence[Unit], reads: Sequence[Reads]) -> list[np.ndarray]:
        raise NotImplementedError

    def _run_generation(
        self, prompts: Sequence[tuple[int, ...]], settings: Sequence[GenerationSettings]
    ) -> list[GenerateResult]:
        raise NotImplementedError

    def _before_planning(self) -> None:
        """Called before work is planned, only when there is work to run (e.g. load a model whose memory sets the budget)."""

    def _on_oom(self) -> None:
        """Free memory after an out-of-memory error (e.g. empty the CUDA cache)."""

    def _report_fraction(self, fraction: float) -> None:
        """A subclass's word on how far the running batch is (0..1), passed on to progress as requests."""
        if self.on_partial is not None:
            self.on_partial(self._batch_requests * min(max(fraction, 0.0), 1.0))

    def close(self) -> None:
        """Release resources (nothing by default)."""

    # ------------------------------------------------------------------ text and tokens
    def _label(self) -> str:
        return f"model {self.identity().get('model', {}).get('name', self.name)!r}"

    def render(self, prompt: Prompt) -> str:
        return render_prompt(self.tokenizer, prompt, model=self._label())

    def _render_all(self, prompts: Sequence[Prompt]) -> list[str]:
        memo: dict[Prompt, str] = {}
        out = []
        for p in prompts:
            if isinstance(p, str):
                out.append(p)
                continue
            if p not in memo:
                memo[p] = self.render(p)
            out.append(memo[p])
        return out

    def _encode_rendered(self, prompts: Sequence[Prompt], texts: Sequence[str]) -> list[tuple[int, ...]]:
        """Plain prompts get the tokenizer's special tokens (BOS); rendered chats already hold them."""
        out: list[tuple[int, ...]] = [()] * len(texts)
        for special in (True, False):
            idx = [i for i, p in enumerate(prompts) if isinstance(p, str) == special]
            if idx:
                for i, ids in zip(
                    idx, encode_texts(self.tokenizer, [texts[i] for i in idx], add_special_tokens=special)
                ):
                    out[i] = ids
        return out

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        prompts = list(prompts)
        return [len(ids) for ids in self._encode_rendered(prompts, self._render_all(prompts))]

    # ------------------------------------------------------------------ context size (requests' ``context_size``)
    def _leading_specials(self) -> int:
        """How many tokens the tokenizer puts before every plain text (a BOS: 1; SmolLM2: 0), kept first when a prompt is cut."""
        if not hasattr(self, "_lead"):
            plain = encode_texts(self.tokenizer, ["x"], add_special_tokens=False)[0]
            special = encode_texts(self.tokenizer, ["x"], add_special_tokens=True)[0]
            self._lead = next(
                (k for k in range(len(special) - len(plain) + 1) if special[k : k + len(plain)] == plain), 0
            )
        return self._lead

    def _cut(self, ids: tuple[int, ...], context_size: int | None, plain: bool) -> tuple[int, ...]:
        """The last ``context_size`` tokens of a prompt (leading special tokens of a plain prompt kept), as folktexts truncates."""
        if context_size is None or len(ids) <= context_size or not self.cuts_prompts:
            return ids
        lead = min(self._leading_specials() if plain else 0, context_size - 1)
        return ids[:lead] + ids[len(ids) - (context_size - lead) :]

    def _encode_requests(self, requests: Sequence[Any]) -> list[tuple[int, ...]]:
        """Token ids of each request's prompt (generation), cut to its ``context_size``."""
        prompts = [r.prompt for r in requests]
        ids = self._encode_rendered(prompts, self._render_all(prompts))
        return [self._cut(pid, r.context_size, isinstance(p, str)) for pid, r, p in zip(ids, requests, prompts)]

    def prompt_lengths(self, requests: Sequence[Any]) -> list[int]:
        """Tokens of each request's longest prompt as it would run uncut (a prefix group: the prefix and its longest suffix).

        :class:`~folkscope.engine.Engine` compares them with the requests'
        ``context_size`` where :attr:`cuts_prompts` is set; a backend without
        it (a web API) cuts nothing.
        """
        group = [isinstance(r, PrefixGroupRequest) for r in requests]
        prompts = [r.prefix if g else r.prompt for r, g in zip(requests, group)]
        ids = self._encode_rendered(prompts, self._render_all(prompts))
        suffixes = self._continuations(s for r, g in zip(requests, group) if g for s in r.suffixes)
        return [
            len(pid) + (max(len(suffixes[s]) for s in r.suffixes) if g else 0)
            for pid, r, g in zip(ids, requests, group)
        ]

    def is_single_token(self, text: str) -> bool:
        try:
            return len(encode_continuations(self.tokenizer, [text])[0]) == 1
        except ConfigError:
            return False

    def _check_lengths(self, lengths: Sequence[int], what: str) -> None:
        if self.max_length is None:
            return
        over = [n - self.max_length for n in lengths if n > self.max_length]
        if over:
            raise ConfigError(
                f"{len(over)} {what} exceed the model's context window of {self.max_length} tokens "
                f"(by up to {max(over)} tokens); shorten the prompts (fewer few-shot examples, shorter "
                "descriptions) or use a model with a longer context",
                parameter="prompt",
                value=max(over),
            )

    # ------------------------------------------------------------------ scoring kinds
    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._score_kind(ScoreRequest.kind, requests, done)

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._score_kind(PrefixGroupRequest.kind, requests, done)

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        return self._score_kind(NextTokenRequest.kind, requests, done)

    def _score_kind(self, kind: str, requests: Sequence[Any], done: Sequence[bool] | None) -> Batches:
        keys, parts_of = self._scoring_parts(kind, list(requests))

        def build(win: list[int]) -> tuple[list[Unit], list[Reads], dict[int, _Job]]:
            units: list[Unit] = []
            reads: list[Reads] = []
            jobs: dict[int, _Job] = {}
            for i, parts in parts_of(win).items():
                jobs[i] = _combine(kind, [self._score_job(i, prompt, cands, units, reads) for prompt, cands in parts])
            return units, reads, jobs

        return self._run_scoring(keys, build, done)

    def _scoring_parts(
        self, kind: str, requests: list[Any]
    ) -> tuple[list[str], Callable[[Sequence[int]], dict[int, list[Part]]]]:
        """What a tokenizing backend reads for the scoring kinds, whatever it runs them on.

        Returns the texts that order the requests (so shared prefixes sit
        together) and a function that tokenizes a window of them in bulk into
        each request's *parts*: (prompt ids, candidate ids). A score or
        next-token request is one part; a prefix group is one part per suffix
        (prefix ids + suffix ids), each with the group's candidates.
        Next-token entries must be single tokens and no prompt may be empty
        (:class:`ConfigError` otherwise).
        """
        group = kind == PrefixGroupRequest.kind
        next_token = kind == NextTokenRequest.kind
        prompts = [r.prefix if group else r.prompt for r in requests]
        texts = self._render_all(prompts)
        keys = [t + r.suffixes[0] for t, r in zip(texts, requests)] if group else texts

        def parts_of(win: Sequence[int]) -> dict[int, list[Part]]:
            ids = self._encode_rendered([prompts[i] for i in win], [texts[i] for i in win])
            if next_token:
                conts = self._single_tokens(t for i in win for t in requests[i].tokens)
            else:
                conts = self._continuations(
                    s for i in win for s in (*(requests[i].suffixes if group else ()), *requests[i].candidates)
                )
            out: dict[int, list[Part]] = {}
            for i, pid in zip(win, ids):
                req = requests[i]
                targets = [conts[t] for t in (req.tokens if next_token else req.candidates)]
                full = [pid + conts[s] for s in req.suffixes] if group else [pid]
                full = [self._cut(prompt, req.context_size, isinstance(prompts[i], str)) for prompt in full]
                for prompt in full:
                    self._check_prompt_ids(prompt)
                out[i] = [(prompt, targets) for prompt in full]
            return out

        return keys, parts_of

    def _single_tokens(self, texts: Any) -> dict[str, tuple[int, ...]]:
        """Token ids of next-token entries, refusing any entry that is not exactly one token."""
        toks = self._continuations(texts)
        bad = sorted({t for t, v in toks.items() if len(v) != 1})
        if bad:
            raise ConfigError(
                f"next-token requests need single tokens, but {bad[:5]} are "
                f"{[len(toks[t]) for t in bad[:5]]} tokens long for {self._label()}; use a ScoreRequest "
                "for multi-token continuations, or drop them (expand_variants(..., keep=engine.is_single_token))",
                parameter="tokens",
                value=bad,
            )
        return toks

    def _continuations(self, texts: Any) -> dict[str, tuple[int, ...]]:
        unique = list(dict.fromkeys(texts))
        return dict(zip(unique, encode_continuations(self.tokenizer, unique)))

    def _check_prompt_ids(self, ids: tuple[int, ...]) -> None:
        if not ids:
            raise ConfigError(
                "a prompt tokenized to no tokens; prompts must not be empty", parameter="prompt", value=""
            )

    def _score_job(
        self, job: int, prompt: tuple[int, ...], cands: list[tuple[int, ...]], units: list[Unit], reads: list[Reads]
    ) -> _Job:
        """Units of one prompt: one for all single-token candidates, one per longer candidate."""
        n = len(prompt)
        mine: list[int] = []
        singles = [k for k, c in enumerate(cands) if len(c) == 1]
        if singles:
            units.append(Unit(job, prompt, n - 1))
            reads.append(((n - 1, tuple(cands[k][0] for k in singles)),))
            mine.append(len(units) - 1)
        multis = [k for k, c in enumerate(cands) if len(c) > 1]
        for k in multis:
            c = cands[k]
            units.append(Unit(job, prompt + c[:-1], n - 1))
            reads.append(tuple((n - 1 + t, (c[t],)) for t in range(len(c))))
            mine.append(len(units) - 1)

        def assemble(arrs: list[np.ndarray]) -> ScoreResult:
            lp = [0.0] * len(cands)
            pos = 0
            if singles:
                for k, value in zip(singles, arrs[0]):
                    lp[k] = float(value)
                pos = 1
            for k, arr in zip(multis, arrs[pos:]):
                lp[k] = float(np.sum(arr, dtype=np.float64))
            return ScoreResult(tuple(lp), tuple(len(c) for c in cands), n)

        return _Job(tuple(mine), assemble)

    def _run_scoring(
        self,
        keys: Sequence[str],
        build: Callable[[list[int]], tuple[list[Unit], list[Reads], dict[int, _Job]]],
        done: Sequence[bool] | None,
    ) -> Batches:
        n = len(keys)
        done_flags = list(done) if done is not None else [False] * n
        if len(done_flags) != n:
            raise ConfigError(
                f"done has {len(done_flags)} flags for {n} requests", parameter="done", value=len(done_flags)
            )
        order = sorted(range(n), key=lambda i: keys[i])
        for start in range(0, n, self.window):
            win = order[start : start + self.window]
            if all(done_flags[i] for i in win):
                continue
            units, reads, jobs = build(win)
            self._check_lengths([len(u.tokens) + 1 for u in units], "prompts (with their candidates)")
            yield from self._execute_window(units, reads, jobs, done_flags)

    def _execute_window(
        self, units: list[Unit], reads: list[Reads], jobs: dict[int, _Job], done: list[bool]
    ) -> Batches:
        acc: dict[int, dict[int, np.ndarray]] = {}
        self._before_planning()

        def plan(job_ids: Sequence[int], budget: int) -> list[Planned[tuple[Batch, list[int]]]]:
            wanted = set(job_ids)
            sub = [i for i, u in enumerate(units) if u.job in wanted]
            planned = plan_batches(
                [units[i] for i in sub],
                batch_tokens=budget,
                share_prefixes=self.share_prefixes,
                pass_overhead=self.pass_overhead,
            )
            return [Planned((b, [sub[k] for k in b.units]), b.jobs, b.cost, len(b.units)) for b in planned]

        def run(batch: Batch, members: list[int]) -> None:
            self._tokens_reused = 0
            self._batch_requests = len({units[u].job for u in members})
            arrays = self._run_scores(batch, [units[u] for u in members], [reads[u] for u in members])
            reused, self._tokens_reused = self._tokens_reused, 0
            self.stats.batches += 1
            self.stats.forward_passes += len(batch.passes) - (reused > 0)
            self.stats.tokens_run += batch.tokens_run - reused
            self.stats.tokens_padded += batch.tokens_padded - reused
            self.stats.reused_prefix_tokens += reused
            self.stats.logical_tokens += sum(len(units[u].tokens) for u in members)
            for u, arr in zip(members, arrays):
                acc.setdefault(units[u].job, {})[u] = arr

        def execute(item: tuple[Batch, list[int]]) -> list[tuple[int, Any]]:
            batch, members = item
            if any(done[j] for j in batch.jobs):
                # answered elsewhere (another run's plan): run only what is missing
                todo = [u for u in members if not done[units[u].job]]
                replan = plan_batches(
                    [units[u] for u in todo],
                    batch_tokens=max(batch.cost, 1),
                    share_prefixes=self.share_prefixes,
                    pass_overhead=self.pass_overhead,
                )
                for sub in replan:
                    run(sub, [todo[k] for k in sub.units])
            else:
                run(batch, members)
            out = []
            for j in batch.complete:
                if done[j]:
                    continue
                parts = acc.pop(j)
                out.append((j, jobs[j].assemble([parts[u] for u in jobs[j].units])))
            return out

        shrinks = self.budget.shrinks
        for _, completed in run_with_backoff(
            list(jobs), plan=plan, execute=execute, budget=self.budget, done=lambda j: done[j], on_oom=self._on_oom
        ):
            self.stats.oom_backoffs += self.budget.shrinks - shrinks
            shrinks = self.budget.shrinks
            if completed:
                self.stats.requests += len(completed)
                yield completed
        self.stats.oom_backoffs += self.budget.shrinks - shrinks

    # ------------------------------------------------------------------ generation
    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        requests = list(requests)
        n = len(requests)
        done_flags = list(done) if done is not None else [False] * n
        if all(done_flags):
            return
        ids = self._encode_requests(requests)
        for pid in ids:
            self._check_prompt_ids(pid)
        self._check_lengths(
            [len(p) + r.settings.max_new_tokens for p, r in zip(ids, requests)], "prompts (plus max_new_tokens)"
        )
        self._before_planning()

        def plan(job_ids: Sequence[int], budget: int) -> list[Planned[list[int]]]:
            order = sorted(job_ids, key=lambda j: (len(ids[j]), j))
            out: list[Planned[list[int]]] = []
            cur: list[int] = []

            def width(group: list[int]) -> int:
                return max(len(ids[j]) for j in group) + max(requests[j].settings.max_new_tokens for j in group)

            for j in order:
                if cur and (len(cur) + 1) * width([*cur, j]) > budget:
                    out.append(Planned(cur, tuple(cur), len(cur) * width(cur), len(cur)))
                    cur = []
                cur.append(j)
            if cur:
                out.append(Planned(cur, tuple(cur), len(cur) * width(cur), len(cur)))
            return out

        def execute(group: list[int]) -> list[tuple[int, Any]]:
            todo = [j for j in group if not done_flags[j]]
            self._batch_requests = len(todo)
            results = self._run_generation([ids[j] for j in todo], [requests[j].settings for j in todo])
            self.stats.batches += 1
            self.stats.logical_tokens += sum(len(ids[j]) for j in todo)
            self.stats.generated_tokens += sum(r.completion_tokens for r in results)
            return list(zip(todo, results))

        shrinks = self.budget.shrinks
        for _, completed in run_with_backoff(
            range(n), plan=plan, execute=execute, budget=self.budget, done=lambda j: done_flags[j], on_oom=self._on_oom
        ):
            self.stats.requests += len(completed)
            yield completed
        self.stats.oom_backoffs += self.budget.shrinks - shrinks


def _combine(kind: str, parts: list[_Job]) -> _Job:
    """The job of one request from the jobs of its parts (see ``TokenBackend._scoring_parts``)."""
    if kind == PrefixGroupRequest.kind:
        return _group_job(parts)
    (job,) = parts
    if kind == NextTokenRequest.kind:
        return _Job(job.units, lambda arrs: as_next_token(job.assemble(arrs)))
    return job


def as_next_token(result: ScoreResult) -> NextTokenResult:
    """A next-token answer read as single-token candidates of its prompt."""
    return NextTokenResult(result.logprobs, result.prompt_tokens)


def _group_job(parts: list[_Job]) -> _Job:
    units = tuple(u for p in parts for u in p.units)
    sizes = [len(p.units) for p in parts]

    def assemble(arrs: list[np.ndarray]) -> PrefixGroupResult:
        out = []
        pos = 0
        for part, size in zip(parts, sizes):
            out.append(part.assemble(arrs[pos : pos + size]))
            pos += size
        return PrefixGroupResult(tuple(out))

    return _Job(units, assemble)
