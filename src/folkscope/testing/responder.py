"""The OpenAI wire format, answered from a probability source.

Why it exists
-------------
What the local server says to a request (completions with echo, chat with
top log-probabilities, generation with stop strings) is the part tests check
numbers against, so it lives apart from the HTTP plumbing and the fault
injection of :mod:`folkscope.testing.openai_server`: plain data in, plain data out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from folkscope.testing.faults import body_key
from folkscope.testing.sources import ProbabilitySource

__all__ = ["BadRequest", "OpenAIResponder"]


class BadRequest(Exception):
    """A request OpenAI would refuse; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class OpenAIResponder:
    """Answers ``/v1/completions`` and ``/v1/chat/completions`` bodies from ``source``.

    Parameters
    ----------
    source : ProbabilitySource
    max_logprobs : int
        Largest ``top_logprobs`` / ``logprobs`` accepted.
    """

    def __init__(self, source: ProbabilitySource, *, max_logprobs: int) -> None:
        self.source = source
        self.max_logprobs = max_logprobs

    def answer(self, path: str, body: Mapping[str, Any], *, omit_logprobs: bool) -> dict[str, Any]:
        """The JSON answer to a request for ``path``; raises :class:`BadRequest` for a request OpenAI would refuse."""
        if not isinstance(body, Mapping):
            raise BadRequest(400, "the request body must be a JSON object")
        model = body.get("model")
        if model not in (None, self.source.model_id):
            raise BadRequest(404, f"model {model!r} does not exist; this server has {self.source.model_id!r}")
        if path.endswith("/chat/completions"):
            return self._chat(body, omit_logprobs)
        if path.endswith("/completions"):
            return self._completions(body, omit_logprobs)
        raise BadRequest(404, f"no endpoint {path}")

    def _top(self, lp: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` most likely tokens as (text, logprob), most likely first; equal texts keep the larger."""
        if k <= 0:
            return []
        if k == 1:
            best = int(np.argmax(lp))
            return [(self.source.token_text(best), float(lp[best]))]
        ids = np.argpartition(-lp, min(k, len(lp) - 1))[:k] if k < len(lp) else np.arange(len(lp))
        ids = ids[np.argsort(-lp[ids], kind="stable")]
        out: dict[str, float] = {}
        for i in ids:
            text = self.source.token_text(int(i))
            if text not in out:
                out[text] = float(lp[i])
        return list(out.items())

    def _generate(
        self, ids: list[int], *, max_tokens: int, temperature: float, seed: int | None, stop: Sequence[str]
    ) -> tuple[list[int], list[np.ndarray], str, str | None]:
        """Greedy or sampled continuation: (token ids, their distributions, finish reason, stop string hit)."""
        from folkscope.engine.backends.base import stop_at

        src = self.source
        rng = np.random.default_rng(0 if seed is None else int(seed))
        out: list[int] = []
        dists: list[np.ndarray] = []
        for _ in range(max_tokens):
            lp = src.next_logprobs(ids + out)
            if temperature == 0:
                nxt = int(np.argmax(lp))
            else:
                z = lp / temperature
                p = np.exp(z - z.max())
                nxt = int(rng.choice(len(lp), p=p / p.sum()))
            out.append(nxt)
            dists.append(lp)
            if nxt == src.eos_token_id:
                return out, dists, "stop", None
            text = src.decode(out)
            cut = stop_at(text, stop)
            if cut is not None:
                hit = min((s for s in stop if text.find(s) == cut), key=len)
                return out, dists, "stop", hit
        return out, dists, "length", None

    @staticmethod
    def _number(body: Mapping[str, Any], name: str, default: Any, *, low: float, integer: bool = False) -> Any:
        value = body.get(name, default)
        if value is None:
            return default
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (integer and not isinstance(value, int))
            or value < low
        ):
            raise BadRequest(400, f"{name} must be a number >= {low}, got {value!r}")
        return value

    def _stops(self, body: Mapping[str, Any]) -> list[str]:
        stop = body.get("stop")
        if stop is None:
            return []
        stops = [stop] if isinstance(stop, str) else stop
        if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
            raise BadRequest(400, "stop must be a string or a list of non-empty strings")
        return list(stops)

    def _completions(self, body: Mapping[str, Any], omit_logprobs: bool) -> dict[str, Any]:
        src = self.source
        prompts = body.get("prompt")
        if isinstance(prompts, str):
            prompts = [prompts]
        if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) and p for p in prompts):
            raise BadRequest(400, "prompt must be a non-empty string or a list of non-empty strings")
        echo = bool(body.get("echo", False))
        k = body.get("logprobs")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.max_logprobs):
            raise BadRequest(400, f"logprobs must be an integer in [0, {self.max_logprobs}], got {k!r}")
        max_tokens = self._number(body, "max_tokens", 16, low=0, integer=True)
        temperature = float(self._number(body, "temperature", 1.0, low=0))
        seed = self._number(body, "seed", None, low=0, integer=True)
        stops = self._stops(body)
        choices = []
        prompt_tokens = completion_tokens = 0
        for index, prompt in enumerate(prompts):
            ids = src.tokenize(prompt, add_special_tokens=True)
            out, dists, finish, hit = self._generate(
                ids, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=stops
            )
            prompt_tokens += len(ids)
            completion_tokens += len(out)
            text = src.decode(out)
            if hit is not None:
                text = text[: text.find(hit)]
            logprobs = None
            if k is not None and not omit_logprobs:
                tokens: list[int] = []
                values: list[float | None] = []
                tops: list[dict[str, float] | None] = []
                if echo:
                    seq = src.sequence_logprobs(ids)
                    tokens = list(ids)
                    values = [None] + [float(seq[i - 1][ids[i]]) for i in range(1, len(ids))]
                    tops = [None] + [dict(self._top(seq[i - 1], k)) for i in range(1, len(ids))]
                gen = [t for t in out if t != src.eos_token_id]
                tokens += gen
                values += [float(d[t]) for t, d in zip(gen, dists)]
                tops += [dict(self._top(d, k)) for _, d in zip(gen, dists)]
                texts = [src.token_text(t) for t in tokens]
                offsets = list(np.cumsum([0] + [len(t) for t in texts[:-1]])) if texts else []
                logprobs = {
                    "tokens": texts,
                    "token_logprobs": values,
                    "top_logprobs": tops,
                    "text_offset": [int(o) for o in offsets],
                }
            choices.append(
                {
                    "index": index,
                    "text": (prompt if echo else "") + text,
                    "logprobs": logprobs,
                    "finish_reason": finish,
                    "stop_reason": hit,
                }
            )
        return {
            "id": f"cmpl-{body_key(body)[:24]}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": src.model_id,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _chat(self, body: Mapping[str, Any], omit_logprobs: bool) -> dict[str, Any]:
        src = self.source
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest(400, "messages must be a non-empty list")
        conv = []
        for m in messages:
            if (
                not isinstance(m, Mapping)
                or m.get("role") not in ("system", "user", "assistant")
                or not isinstance(m.get("content"), str)
            ):
                raise BadRequest(400, "every message needs a role (system, user, assistant) and string content")
            conv.append({"role": m["role"], "content": m["content"]})
        prefill = ""
        if conv[-1]["role"] == "assistant":
            prefill = conv.pop()["content"]
            if not conv:
                raise BadRequest(400, "a conversation cannot be only an assistant message")
        options = body.get("chat_template_kwargs") or {}
        if not isinstance(options, Mapping):
            raise BadRequest(400, "chat_template_kwargs must be an object")
        text = src.render_chat(conv, options=options) + prefill
        ids = src.tokenize(text, add_special_tokens=False)
        want = bool(body.get("logprobs", False))
        k = body.get("top_logprobs")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= self.max_logprobs):
            raise BadRequest(400, f"top_logprobs must be an integer in [0, {self.max_logprobs}], got {k!r}")
        if k is not None and not want:
            raise BadRequest(400, "top_logprobs needs logprobs=true")
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        max_tokens = self._number({"m": limit}, "m", 16, low=1, integer=True)
        temperature = float(self._number(body, "temperature", 1.0, low=0))
        seed = self._number(body, "seed", None, low=0, integer=True)
        stops = self._stops(body)
        out, dists, finish, hit = self._generate(
            ids, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=stops
        )
        content = src.decode(out)
        if hit is not None:
            content = content[: content.find(hit)]
        logprobs = None
        if want and not omit_logprobs:
            entries = []
            for t, d in zip(out, dists):  # an end-of-sequence token is listed too (as vLLM does)
                token = src.token_text(t)
                entries.append(
                    {
                        "token": token,
                        "logprob": float(d[t]),
                        "bytes": list(token.encode("utf-8")),
                        "top_logprobs": [
                            {"token": s, "logprob": v, "bytes": list(s.encode("utf-8"))}
                            for s, v in self._top(d, k or 0)
                        ],
                    }
                )
            logprobs = {"content": entries}
        return {
            "id": f"chatcmpl-{body_key(body)[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": src.model_id,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": logprobs,
                    "finish_reason": finish,
                    "stop_reason": hit,
                }
            ],
            "usage": {"prompt_tokens": len(ids), "completion_tokens": len(out), "total_tokens": len(ids) + len(out)},
        }
