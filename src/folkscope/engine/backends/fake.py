"""A deterministic fake language model: a real, supported backend for tests.

Like ``httpx.MockTransport``, :class:`FakeBackend` goes through exactly the
same planning, batching, resume and back-off code as the transformers
backend; only the "model" is a hash. It is a proper language model over a
512-token byte vocabulary, so every request kind agrees with every other:
a multi-token candidate's log-probability is the sum of its tokens'
next-token log-probabilities, and greedy generation follows the argmax.

Tokenizer
---------
UTF-8 bytes; a space followed by a non-space byte is one token (so ``"A"``
and ``" A"`` are both single tokens, as in BPE vocabularies). Token ``0``
(the NUL byte) is end-of-sequence. Chat template::

    <|system|>\\n{content}\\n<|user|>\\n{content}\\n<|assistant|>\\n{prefill}

Configurable behaviour
----------------------
- ``next_token_probs``: fix the probabilities of chosen next tokens, given
  the text so far (the rest of the mass is spread by the hash);
- ``responses``: script generations (text then end-of-sequence);
- ``latency`` / ``token_latency``: sleep per batch / per token run;
- ``failures``: raise a chosen exception before a given batch;
- ``oom_above_tokens``: raise an out-of-memory error for batches above a cost.

Examples
--------
>>> from folkscope.engine import Engine, ScoreRequest
>>> fake = FakeBackend(next_token_probs={"A": 0.7, "B": 0.2})
>>> engine = Engine(fake, cache=None)
>>> res = engine.score([ScoreRequest("Q? Answer: ", ("A", "B"))])[0]
>>> [round(float(p), 6) for p in res.probs]
[0.7, 0.2]
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from folkscope.engine.backends._token import DEFAULT_WINDOW, Reads, TokenBackend
from folkscope.engine.backends.base import stop_at
from folkscope.engine.batching import DEFAULT_BATCH_TOKENS, Batch, Unit
from folkscope.engine.requests import GenerateResult, GenerationSettings
from folkscope.errors import ConfigError

__all__ = ["FakeBackend", "FakeOutOfMemoryError", "FakeTokenizer"]

VOCAB = 512
EOS = 0
_SPACE = 0x20


class FakeOutOfMemoryError(RuntimeError):
    """What the fake backend raises to imitate ``torch.cuda.OutOfMemoryError``."""


class FakeTokenizer:
    """Byte tokenizer with space-merged tokens; see the module docstring."""

    chat_template = "<|role|>\\ncontent\\n ... <|assistant|>\\n"
    eos_token_id = EOS
    vocab_size = VOCAB

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        data = text.encode("utf-8")
        ids: list[int] = []
        i = 0
        while i < len(data):
            b = data[i]
            if b == _SPACE and i + 1 < len(data) and data[i + 1] != _SPACE:
                ids.append(256 + data[i + 1])
                i += 2
            else:
                ids.append(b)
                i += 1
        return ids

    def __call__(self, text: str | Sequence[str], add_special_tokens: bool = True, **kwargs: Any) -> dict[str, Any]:
        if isinstance(text, str):
            return {"input_ids": self.encode(text)}
        return {"input_ids": [self.encode(t) for t in text]}

    def decode(self, ids: Sequence[int], **kwargs: Any) -> str:
        out = bytearray()
        for t in ids:
            t = int(t)
            if not 0 <= t < VOCAB:
                raise ConfigError(f"fake token id {t} is outside [0, {VOCAB})", parameter="ids", value=t)
            if t >= 256:
                out += bytes([_SPACE, t - 256])
            else:
                out.append(t)
        return out.decode("utf-8", errors="replace")

    def apply_chat_template(
        self,
        conversation: Sequence[Mapping[str, str]],
        tokenize: bool = False,
        add_generation_prompt: bool = True,
        **kwargs: Any,
    ) -> str | list[int]:
        text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in conversation)
        if add_generation_prompt:
            text += "<|assistant|>\n"
        return self.encode(text) if tokenize else text


ProbRule = Callable[[str], Mapping[str, float] | None]

#: the default model name: its "model" is keyed by the seed alone, as before names mattered, so its outputs stay put
DEFAULT_NAME = "fake"


def _model_key(name: str, seed: int) -> bytes:
    """The hash key of a fake model: its seed, and its name unless it is :data:`DEFAULT_NAME`.

    Two names must be two models: a study over several fake models that all
    answered alike would compare a model with itself (every ranking of them
    trivially ideal). The name enters through a stable hash (never Python's
    salted ``hash``), so one name gives the same answers in every process.

    Examples
    --------
    >>> _model_key("fake", 3) == (3).to_bytes(8, "little"), _model_key("a", 0) == _model_key("a", 0)
    (True, True)
    >>> _model_key("a", 0) != _model_key("b", 0) != _model_key("fake", 0)
    True
    """
    key = seed.to_bytes(8, "little", signed=seed < 0)
    if name == DEFAULT_NAME:
        return key
    return hashlib.blake2b(name.encode("utf-8"), digest_size=8, key=key).digest()


class FakeBackend(TokenBackend):
    """Deterministic hashed language model behind the real backend interface.

    Parameters
    ----------
    model : str, default "fake"
        Name in the model identity (and cache keys). Every other name is
        another "model": the name is hashed into its probabilities
        (:func:`_model_key`), while ``"fake"`` keeps the seed-only outputs.
    revision : str, default "0"
    dtype : str, default "float32"
        A label only, part of the identity (lets tests vary it).
    device : str, default "cpu"
        A label only.
    seed : int, default 0
        Changes every probability (a different "model").
    next_token_probs : mapping or callable, optional
        ``{token: probability}``, or a function of the text so far returning
        one (or None), fixing the next-token probabilities of those single
        tokens; the remaining mass is spread over the other tokens.
    responses : callable, optional
        ``responses(prompt_text) -> str``: generation emits this text, then
        end-of-sequence.
    latency, token_latency : float, default 0
        Seconds slept per batch and per token run.
    failures : callable, optional
        ``failures(batch_number) -> exception or None``, called before every
        batch (numbered from 0, retries included); a returned exception is raised.
    oom_above_tokens : int, optional
        Batches whose cost exceeds this raise :class:`FakeOutOfMemoryError`.
    batch_tokens : int, default 4096
    share_prefixes : bool, default True
    cut_prompts : bool, default False
        Apply requests' ``context_size`` (cut a longer prompt to its last
        tokens). Off by default: the fake's tokens are bytes, so folktexts'
        600-token default would cut nearly every prompt a test or demo sends.
    """

    name = "fake"

    def __init__(
        self,
        model: str = "fake",
        *,
        revision: str = "0",
        dtype: str | None = None,
        device: str | None = None,
        seed: int = 0,
        next_token_probs: Mapping[str, float] | ProbRule | None = None,
        responses: Callable[[str], str] | None = None,
        latency: float = 0.0,
        token_latency: float = 0.0,
        failures: Callable[[int], BaseException | None] | None = None,
        oom_above_tokens: int | None = None,
        batch_tokens: int | None = None,
        share_prefixes: bool = True,
        window: int = DEFAULT_WINDOW,
        cut_prompts: bool = False,
    ) -> None:
        super().__init__(
            batch_tokens=DEFAULT_BATCH_TOKENS if batch_tokens is None else batch_tokens,
            share_prefixes=share_prefixes,
            window=window,
        )
        self.cuts_prompts = bool(cut_prompts)
        self.model_name = str(model)
        self.revision = str(revision)
        self.dtype = dtype or "float32"
        self.device = device or "cpu"
        self.seed = int(seed)
        self._key = _model_key(self.model_name, self.seed)
        self._tokenizer = FakeTokenizer()
        if next_token_probs is None or callable(next_token_probs):
            self._rule: ProbRule | None = next_token_probs
        else:
            fixed = dict(next_token_probs)
            self._rule = lambda text: fixed
        self.responses = responses
        self.latency = float(latency)
        self.token_latency = float(token_latency)
        self.failures = failures
        self.oom_above_tokens = oom_above_tokens
        self.batch_number = 0

    @classmethod
    def from_model(cls, model: Any = "fake", **options: Any) -> FakeBackend:
        name = getattr(model, "name", model)
        revision = getattr(model, "revision", options.pop("revision", "0"))
        return cls(str(name), revision=str(revision), **options)

    @property
    def tokenizer(self) -> FakeTokenizer:
        return self._tokenizer

    def identity(self) -> dict[str, Any]:
        model = {"name": self.model_name, "revision": self.revision, "source": "fake", "seed": self.seed}
        if self.model_name != DEFAULT_NAME:
            # answers cached before names mattered came from the seed alone: a new identity keeps them from passing
            # for this model's (the default name keeps both its answers and its identity)
            model["keyed_by"] = "name and seed"
        return {
            "backend": self.name,
            "model": model,
            "dtype": self.dtype,
            "device": self.device,
        }

    # ------------------------------------------------------------------ the "model"
    def logprobs(self, context: Sequence[int]) -> np.ndarray:
        """Next-token log-probabilities after ``context``, shape (512,)."""
        digest = hashlib.blake2b(np.asarray(context, dtype=np.uint16).tobytes(), digest_size=8, key=self._key).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        logits = rng.standard_normal(VOCAB) * 2.0
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        fixed = self._rule(self._tokenizer.decode(context)) if self._rule is not None else None
        if fixed:
            ids = {}
            for token, p in fixed.items():
                enc = self._tokenizer.encode(token)
                if len(enc) != 1 or not 0.0 <= p <= 1.0:
                    raise ConfigError(
                        f"next_token_probs needs single fake tokens with probabilities in [0, 1], got {token!r}: {p}",
                        parameter="next_token_probs",
                        value=token,
                    )
                ids[enc[0]] = p
            total = sum(ids.values())
            if total > 1.0 + 1e-9:
                raise ConfigError(f"next_token_probs sum to {total} > 1", parameter="next_token_probs", value=total)
            mask = np.ones(VOCAB, bool)
            mask[list(ids)] = False
            probs[mask] *= (1.0 - total) / probs[mask].sum()
            for t, p in ids.items():
                probs[t] = p
        with np.errstate(divide="ignore"):
            return np.log(probs)

    def _tick(self, cost: int, tokens: int) -> None:
        number = self.batch_number
        self.batch_number += 1
        if self.failures is not None:
            exc = self.failures(number)
            if exc is not None:
                raise exc
        if self.oom_above_tokens is not None and cost > self.oom_above_tokens:
            raise FakeOutOfMemoryError(
                f"fake out of memory: a batch of {cost} tokens is above oom_above_tokens={self.oom_above_tokens}"
            )
        if self.latency or self.token_latency:
            time.sleep(self.latency + self.token_latency * tokens)

    def _run_scores(self, batch: Batch, units: Sequence[Unit], reads: Sequence[Reads]) -> list[np.ndarray]:
        self._tick(batch.cost, batch.tokens_run)
        out = []
        for k, (unit, unit_reads) in enumerate(zip(units, reads)):
            values = []
            for pos, targets in unit_reads:
                lp = self.logprobs(unit.tokens[: pos + 1])
                values.extend(lp[list(targets)])
            out.append(np.asarray(values, dtype=np.float64))
            self._report_fraction((k + 1) / len(units))  # as a real backend reports its passes
        return out

    def _run_generation(
        self, prompts: Sequence[tuple[int, ...]], settings: Sequence[GenerationSettings]
    ) -> list[GenerateResult]:
        cost = len(prompts) * max(len(p) + s.max_new_tokens for p, s in zip(prompts, settings))
        self._tick(cost, sum(len(p) for p in prompts))
        return [self._generate_one(p, s) for p, s in zip(prompts, settings)]

    def _generate_one(self, prompt: tuple[int, ...], s: GenerationSettings) -> GenerateResult:
        tok = self._tokenizer
        script = tok.encode(self.responses(tok.decode(prompt))) + [EOS] if self.responses is not None else None
        rng = np.random.default_rng(s.seed)
        out: list[int] = []
        for step in range(s.max_new_tokens):
            if script is not None:
                nxt = script[step] if step < len(script) else EOS
            else:
                lp = self.logprobs(prompt + tuple(out))
                if s.greedy:
                    nxt = int(np.argmax(lp))
                else:
                    z = lp / s.temperature
                    p = np.exp(z - z.max())
                    nxt = int(rng.choice(VOCAB, p=p / p.sum()))
            if nxt == EOS:
                return GenerateResult(tok.decode(out), "eos", len(prompt), len(out) + 1)
            out.append(nxt)
            text = tok.decode(out)
            cut = stop_at(text, s.stop)
            if cut is not None:
                return GenerateResult(text[:cut], "stop", len(prompt), len(out))
        return GenerateResult(tok.decode(out), "length", len(prompt), len(out))
