"""Probability sources: the models a :class:`~folkscope.testing.LocalOpenAIServer` answers from.

Why it exists
-------------
The server's answers must be checkable against a model whose probabilities
are known exactly. A source gives the server tokens, their text and
next-token log-probabilities; :class:`FakeSource` serves the fake backend's
hashed language model (the very numbers a test compares against), and
:class:`TransformersSource` a small local transformers model.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

__all__ = ["FakeSource", "ProbabilitySource", "TransformersSource"]


class ProbabilitySource(Protocol):
    """What the server needs from a model: tokens, their text, next-token log-probabilities, a chat template."""

    model_id: str
    vocab_size: int
    eos_token_id: int | None

    def tokenize(self, text: str, *, add_special_tokens: bool) -> list[int]:
        """Token ids of ``text``; plain prompts get special tokens (BOS), rendered chats do not."""
        ...

    def token_text(self, token_id: int) -> str:
        """The text of one token as an API reports it."""
        ...

    def decode(self, ids: Sequence[int]) -> str:
        """Text of a token sequence (special tokens dropped)."""
        ...

    def next_logprobs(self, context: Sequence[int]) -> np.ndarray:
        """Log-probabilities of the next token after ``context``, over the whole vocabulary."""
        ...

    def sequence_logprobs(self, ids: Sequence[int]) -> np.ndarray:
        """Row ``i``: next-token log-probabilities after ``ids[: i + 1]``, shape ``(len(ids), vocab)``."""
        ...

    def render_chat(self, messages: Sequence[Mapping[str, str]], *, options: Mapping[str, Any]) -> str:
        """Messages rendered by the chat template with the generation prompt."""
        ...


class FakeSource:
    """:class:`~folkscope.engine.backends.fake.FakeBackend`'s hashed language model as a probability source.

    The server generates from these probabilities (greedy or sampled as the
    fake does), so the fake's ``next_token_probs`` rules apply; its scripted
    ``responses`` bypass probabilities and are not served.

    Parameters
    ----------
    backend : FakeBackend, optional
        Default: ``FakeBackend()``; pass the very instance a test compares against.
    model_id : str, optional
        Model name the server reports; default the backend's model name.
    """

    #: distributions kept for reuse (4 KiB each): echoed prompts of one row share most of their prefix
    cache_size = 8192

    def __init__(self, backend: Any = None, *, model_id: str | None = None) -> None:
        from folkscope.engine.backends.fake import EOS, VOCAB, FakeBackend

        self.backend = backend if backend is not None else FakeBackend()
        self.tokenizer = self.backend.tokenizer
        self.model_id = model_id or self.backend.model_name
        self.vocab_size = VOCAB
        self.eos_token_id: int | None = EOS
        self._memo: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._memo_lock = threading.Lock()
        self._texts: dict[int, str] = {}

    def tokenize(self, text: str, *, add_special_tokens: bool) -> list[int]:
        return list(self.tokenizer.encode(text))

    def token_text(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = (
                "" if token_id == self.eos_token_id else str(self.tokenizer.decode([token_id]))
            )
        return text

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode([i for i in ids if i != self.eos_token_id]))

    def next_logprobs(self, context: Sequence[int]) -> np.ndarray:
        return np.asarray(self.backend.logprobs(list(context)), dtype=np.float64)

    def sequence_logprobs(self, ids: Sequence[int]) -> np.ndarray:
        """Every position's distribution; positions of a prefix seen before come from a small LRU memo.

        The fake's cost per position grows with the context (its rules read
        the decoded text), so an echoed 1000-token prompt would cost a
        thousand full decodes; prompts of one row and of one task share most
        positions. Keys chain the prefix's key with the next id, so looking
        one up is O(1).
        """
        if not ids:
            return np.zeros((0, self.vocab_size))
        rows = []
        key = 0
        for i, tok in enumerate(ids):
            key = hash((key, int(tok)))
            memo_key = (key, i)
            with self._memo_lock:
                row = self._memo.get(memo_key)
                if row is not None:
                    self._memo.move_to_end(memo_key)
            if row is None:
                row = self.next_logprobs(ids[: i + 1])
                with self._memo_lock:
                    self._memo[memo_key] = row
                    if len(self._memo) > self.cache_size:
                        self._memo.popitem(last=False)
            rows.append(row)
        return np.stack(rows)

    def render_chat(self, messages: Sequence[Mapping[str, str]], *, options: Mapping[str, Any]) -> str:
        return str(self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True))


class TransformersSource:
    """A local transformers causal LM and its tokenizer as a probability source.

    One forward pass gives the log-probabilities at every position of an
    echoed prompt; generation reruns the model per token (tiny test models only).

    Parameters
    ----------
    model : transformers causal LM
    tokenizer : transformers tokenizer
    model_id : str
    """

    def __init__(self, model: Any, tokenizer: Any, *, model_id: str = "local-model") -> None:
        import torch

        self._torch = torch
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.vocab_size = int(model.get_output_embeddings().weight.shape[0])
        eos = tokenizer.eos_token_id
        self.eos_token_id = int(eos) if isinstance(eos, int) else None
        self._lock = threading.Lock()  # one forward at a time: torch on a shared CPU is no faster in parallel
        self._texts: dict[int, str] = {}

    @classmethod
    def from_backend(cls, backend: Any, *, model_id: str | None = None) -> TransformersSource:
        """Serve the model an :class:`~folkscope.engine.backends.hf.HFBackend` already holds."""
        return cls(backend.model, backend.tokenizer, model_id=model_id or backend.resolved.name)

    def tokenize(self, text: str, *, add_special_tokens: bool) -> list[int]:
        return [int(i) for i in self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]]

    def token_text(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = str(self.tokenizer.decode([token_id], skip_special_tokens=True, clean_up_tokenization_spaces=False))
            self._texts[token_id] = text
        return text

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True, clean_up_tokenization_spaces=False))

    def sequence_logprobs(self, ids: Sequence[int]) -> np.ndarray:
        torch = self._torch
        if not ids:
            return np.zeros((0, self.vocab_size))
        with self._lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([list(ids)])).logits.float()[0]
            return torch.log_softmax(logits, dim=-1).double().cpu().numpy()

    def next_logprobs(self, context: Sequence[int]) -> np.ndarray:
        return self.sequence_logprobs(context)[-1]

    def render_chat(self, messages: Sequence[Mapping[str, str]], *, options: Mapping[str, Any]) -> str:
        return str(
            self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True, **options)
        )
