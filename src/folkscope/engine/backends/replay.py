"""Answers computed elsewhere, replayed: log-likelihoods another harness wrote, served as this engine's.

A model that runs only under another tool (lm-evaluation-harness and its
many backends) can still be scored by every part: the other tool computes
``log P(continuation | context)`` for the exact texts a folkscope run asks,
and this backend answers the run's score requests from that table instead of
a model. Everything after the engine (variant merging, orderings, metrics,
caveats, the run folder) is then folkscope's own, unchanged.

The model handle is an *answers folder* (``folkscope lm-eval import``
writes one):

- ``answers.parquet``: ``context``, ``continuation``, ``logprob`` (natural
  log, ``<= 0``), one row per pair, each pair once;
- ``model.json``: ``name`` (the model's name, as run folders show it) and
  ``source`` (where the answers came from), plus anything else to record.

A pair the table lacks is answered NaN, never a guess (``marks_unscored``:
the readout makes the item NaN and the part counts it). Only log-likelihoods
of given continuations can be replayed: next-token distributions and
generations are refused in one line. Chat prompts are refused too: the
other tool applied (or did not apply) its own chat template, so the text
folkscope would render is not the text that was scored.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from folkscope.engine.backends.base import BackendStats, Batches
from folkscope.engine.requests import (
    ChatPrompt,
    GenerateRequest,
    NextTokenRequest,
    PrefixGroupRequest,
    PrefixGroupResult,
    Prompt,
    ScoreRequest,
    ScoreResult,
)
from folkscope.errors import ConfigError

__all__ = ["ANSWERS_FILE", "MODEL_FILE", "ReplayBackend"]

ANSWERS_FILE = "answers.parquet"
MODEL_FILE = "model.json"
#: requests answered per batch (a lookup: the size only paces progress and cache writes)
_BATCH = 256


class _NoTokenizer:
    """Stands in where callers ask for a tokenizer: replayed answers come with none, and no chat template."""

    chat_template = None
    name_or_path = "replay"


class ReplayBackend:
    """Serve score requests from a table of ``(context, continuation) -> log-probability``.

    Parameters
    ----------
    folder : str or Path
        An answers folder (see the module docs).
    """

    name = "replay"
    marks_unscored = True
    cuts_prompts = False

    def __init__(self, folder: str | Path) -> None:
        import pandas as pd

        self.folder = Path(folder)
        table_path, meta_path = self.folder / ANSWERS_FILE, self.folder / MODEL_FILE
        if not table_path.is_file() or not meta_path.is_file():
            raise ConfigError(
                f"--inference-backend replay needs --model set to an answers folder holding {ANSWERS_FILE} and "
                f"{MODEL_FILE}; {self.folder} has not both (folkscope lm-eval import writes one)",
                parameter="model",
                value=str(folder),
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            table = pd.read_parquet(table_path, columns=["context", "continuation", "logprob"])
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(
                f"{self.folder} is not a readable answers folder ({exc}); write it again with folkscope lm-eval import",
                parameter="model",
                value=str(folder),
            ) from None
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise ConfigError(f"{meta_path} must name the model ('name')", parameter="model", value=str(folder))
        self.meta = meta
        self.answers: dict[tuple[str, str], float] = {
            (str(c), str(k)): float(v) for c, k, v in zip(table["context"], table["continuation"], table["logprob"])
        }
        self.digest = hashlib.sha256(table_path.read_bytes()).hexdigest()
        self.stats = BackendStats()

    @classmethod
    def from_model(cls, model: Any, **options: Any) -> ReplayBackend:
        """The engine's constructor: ``model`` is the answers folder; device, dtype and batch sizes do not apply."""
        return cls(str(getattr(model, "path", model)))

    @property
    def tokenizer(self) -> _NoTokenizer:
        return _NoTokenizer()

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": {"name": self.meta["name"], "revision": self.digest[:16], "source": self.meta.get("source")},
        }

    def render(self, prompt: Prompt) -> str:
        if isinstance(prompt, ChatPrompt):
            raise ConfigError(
                "replayed answers cannot serve chat prompts (the harness that scored them applied its own chat "
                "template, or none); run the part without its chat template (e.g. --no-chat)",
                parameter="prompt",
            )
        return str(prompt)

    def count_tokens(self, prompts: Sequence[Prompt]) -> list[int]:
        raise ConfigError("replayed answers come without a tokenizer, so prompts cannot be counted in tokens")

    def is_single_token(self, text: str) -> bool:
        """True: the tokenizer is not known here, and only next-token requests need it, which are refused anyway."""
        return True

    def _logprob(self, context: str, continuation: str) -> float:
        value = self.answers.get((context, continuation))
        return math.nan if value is None else value

    def _result(self, context: str, candidates: Sequence[str]) -> ScoreResult:
        logprobs = tuple(self._logprob(context, c) for c in candidates)
        # a NaN here is a pair the table lacks: no bound is known, so a caller cannot rule it out; token counts
        # are 0, "not known" (the log records no tokenization)
        return ScoreResult(logprobs, tuple(0 for _ in candidates), 0)

    def _batches(self, answers: list[tuple[int, Any]]) -> Batches:
        for start in range(0, len(answers), _BATCH):
            batch = answers[start : start + _BATCH]
            self.stats.requests += len(batch)
            self.stats.batches += 1
            yield batch

    def score(self, requests: Sequence[ScoreRequest], *, done: Sequence[bool] | None = None) -> Batches:
        todo = [i for i in range(len(requests)) if not (done and done[i])]
        yield from self._batches(
            [(i, self._result(self.render(requests[i].prompt), requests[i].candidates)) for i in todo]
        )

    def score_groups(self, requests: Sequence[PrefixGroupRequest], *, done: Sequence[bool] | None = None) -> Batches:
        todo = [i for i in range(len(requests)) if not (done and done[i])]
        out = []
        for i in todo:
            req = requests[i]
            prefix = self.render(req.prefix)
            out.append((i, PrefixGroupResult(tuple(self._result(prefix + s, req.candidates) for s in req.suffixes))))
        yield from self._batches(out)

    def next_token(self, requests: Sequence[NextTokenRequest], *, done: Sequence[bool] | None = None) -> Batches:
        raise ConfigError(
            "replayed answers hold log-likelihoods of given continuations only; this run reads next-token "
            "distributions (e.g. risk's --numeric-risk-prompting), which cannot be replayed",
            parameter="backend",
        )

    def generate(self, requests: Sequence[GenerateRequest], *, done: Sequence[bool] | None = None) -> Batches:
        raise ConfigError(
            "replayed answers hold log-likelihoods only; this run generates text (chain of thought, sampling), "
            "which cannot be replayed",
            parameter="backend",
        )

    def close(self) -> None:
        self.answers = {}
