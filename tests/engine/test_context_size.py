"""A request's ``context_size``: a longer prompt is cut to its last tokens, as folktexts truncates (issue 29).

The fake model's answers depend on every token it is shown, so a cut prompt
answers as the prompt made of its last tokens, and differently from the whole
one. The limit enters a cache key only where it changed what the model saw.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine import (
    ChatPrompt,
    Engine,
    GenerateRequest,
    GenerationSettings,
    NextTokenRequest,
    PrefixGroupRequest,
    ResultCache,
    ScoreRequest,
)
from folkscope.engine.backends.fake import FakeBackend, FakeTokenizer
from folkscope.errors import ConfigError

PROMPT = "The age is: 42 years old.\nThe sex is: Female.\nQuestion: income? A. Below. B. Above.\nAnswer:"


def _tail(tokenizer: Any, text: str, n: int) -> str:
    """The text of a prompt's last ``n`` tokens (the fake tokenizer decodes and encodes back exactly)."""
    return tokenizer.decode(tokenizer.encode(text)[-n:])


@pytest.fixture
def engine() -> Engine:
    return Engine(FakeBackend(cut_prompts=True), cache=None, progress=False)


@settings(max_examples=200, deadline=None, database=None)
@given(st.integers(1, 100))
def test_a_prompt_longer_than_its_context_size_answers_as_its_last_tokens(n):
    engine = Engine(FakeBackend(cut_prompts=True), cache=None, progress=False)
    tok = engine.tokenizer
    tail = _tail(tok, PROMPT, n)
    cut = engine.score([ScoreRequest(PROMPT, (" A", " B"), n)])[0]
    assert cut.logprobs == engine.score([ScoreRequest(tail, (" A", " B"))])[0].logprobs
    assert cut.prompt_tokens == min(n, len(tok.encode(PROMPT)))
    assert (
        engine.next_token([NextTokenRequest(PROMPT, ("0", "1"), n)])[0].logprobs
        == engine.next_token([NextTokenRequest(tail, ("0", "1"))])[0].logprobs
    )


def test_every_request_kind_is_cut_the_same_way(engine):
    tok, n = engine.tokenizer, 20
    whole = engine.score([ScoreRequest(PROMPT, (" A",))])[0]
    assert (
        engine.score([ScoreRequest(PROMPT, (" A",), n)])[0].logprobs != whole.logprobs
    )  # the fake model sees every token
    # a prefix group: each prefix + suffix is cut on its own, as folktexts cuts each ordering's whole prompt
    prefix, suffixes = PROMPT[:40], (PROMPT[40:], PROMPT[40:].replace("A.", "X."))
    group = engine.score_groups([PrefixGroupRequest(prefix, suffixes, (" A", " B"), n)])[0]
    for suffix, result in zip(suffixes, group.results):
        assert result.logprobs == engine.score([ScoreRequest(_tail(tok, prefix + suffix, n), (" A", " B"))])[0].logprobs
    # generation reads the cut prompt too
    s = GenerationSettings(max_new_tokens=5)
    assert (
        engine.generate([GenerateRequest(PROMPT, s, n)])[0]
        == engine.generate([GenerateRequest(_tail(tok, PROMPT, n), s)])[0]
    )


def test_a_prompt_that_fits_keeps_its_cache_key_and_a_cut_one_gets_its_own(tmp_path):
    cache = ResultCache(tmp_path / "cache")
    engine = Engine(FakeBackend(cut_prompts=True), cache=cache, progress=False)
    engine.score([ScoreRequest(PROMPT, (" A", " B"))])
    fits = engine.score([ScoreRequest(PROMPT, (" A", " B"), 10_000)])
    assert engine.stats.cached == 1  # answered before without a limit: the same answer, served from the cache
    cut = engine.score([ScoreRequest(PROMPT, (" A", " B"), 10)])
    assert engine.stats.computed == 2 and cut[0].logprobs != fits[0].logprobs
    cache.close()


class _BosTokenizer(FakeTokenizer):
    """The fake tokenizer with a BOS (id 1) before every text encoded with special tokens, as Llama's."""

    def __call__(self, text: Any, add_special_tokens: bool = True, **kwargs: Any) -> dict[str, Any]:
        out = super().__call__(text, add_special_tokens=add_special_tokens)
        if add_special_tokens:
            out["input_ids"] = [[1, *ids] for ids in out["input_ids"]]
        return out


def test_a_bos_stays_first_when_a_prompt_is_cut():
    """As transformers truncates with special tokens: the BOS is added after the cut and counts in the limit."""
    backend = FakeBackend(cut_prompts=True)
    backend._tokenizer = _BosTokenizer()
    engine = Engine(backend, cache=None, progress=False)
    n = 12
    cut = engine.score([ScoreRequest(PROMPT, (" A",), n)])[0]
    assert cut.prompt_tokens == n
    assert cut.logprobs == engine.score([ScoreRequest(_tail(backend.tokenizer, PROMPT, n - 1), (" A",))])[0].logprobs
    # a chat prompt's special tokens are its template's text, none added: cut like any text
    chat = ChatPrompt([{"role": "user", "content": PROMPT}])
    assert engine.score([ScoreRequest(chat, (" A",), n)])[0].prompt_tokens == n


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "600"])
def test_a_context_size_is_a_positive_number_of_tokens(bad):
    with pytest.raises(ConfigError, match="context_size must be a positive number of tokens"):
        ScoreRequest(PROMPT, (" A",), bad)


def test_a_backend_that_cuts_nothing_takes_the_whole_prompt_under_its_whole_key():
    """folktexts' web-API classifier sends whole prompts; so does the fake model unless told to cut (its tokens are bytes)."""
    from folkscope.engine.requests import request_key

    engine = Engine(FakeBackend(), cache=None, progress=False)
    assert not engine.cuts_prompts and Engine(FakeBackend(cut_prompts=True), cache=None).cuts_prompts
    fitted = engine._fit_context([ScoreRequest(PROMPT, (" A",), 5)])
    assert fitted[0].context_size is None and request_key(fitted[0]) == request_key(ScoreRequest(PROMPT, (" A",)))
    assert engine.score([ScoreRequest(PROMPT, (" A",), 5)]) == engine.score([ScoreRequest(PROMPT, (" A",))])
