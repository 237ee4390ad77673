"""One conformance suite, run on every backend: each request kind behaves as documented.

Backends: the fake, and transformers (optimised and naive strategies) on a
random-initialised tiny Llama with a locally trained tokenizer.
"""

from __future__ import annotations

import numpy as np
import pytest

from folkscope.engine import (
    ChatPrompt,
    Engine,
    GenerateRequest,
    GenerationSettings,
    NextTokenRequest,
    PrefixGroupRequest,
    ResultCache,
    ScoreRequest,
    expand_variants,
)
from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.tokens import encode_continuations
from folkscope.errors import ConfigError

PROMPTS = [
    "- Age: 34 years old.\n- Occupation: nurse; lives in Ohio.\nQuestion: income? A. Below B. Above\nAnswer:",
    "- Age: 71 years old.\nAnswer:",
    "Hello",
]
CHAT = ChatPrompt([("system", "You answer survey questions."), ("user", PROMPTS[0])], prefill="Answer:")


@pytest.fixture(params=["fake", "transformers", "transformers-naive"])
def engine(request) -> Engine:
    if request.param == "fake":
        backend = FakeBackend(batch_tokens=256)
    elif request.param == "transformers":
        backend = request.getfixturevalue("llama_backend")
    else:
        backend = request.getfixturevalue("llama_naive_backend")
    return Engine(backend, cache=None, progress=False)


def multi_token(engine: Engine, text: str = " Below $50,000") -> tuple[str, str]:
    """A continuation of several tokens and its first token as text."""
    ids = encode_continuations(engine.tokenizer, [text])[0]
    assert len(ids) >= 2
    first = engine.tokenizer.decode([ids[0]])
    assert encode_continuations(engine.tokenizer, [first])[0] == ids[:1]
    return text, first


def test_score_shapes_and_ranges(engine):
    cands = (" A", " B", " Below $50,000")
    results = engine.score([ScoreRequest(p, cands) for p in PROMPTS])
    lengths = engine.count_tokens(PROMPTS)
    for res, n in zip(results, lengths):
        assert len(res.logprobs) == 3 and all(np.isfinite(res.logprobs)) and max(res.logprobs) <= 1e-6
        assert res.prompt_tokens == n
        assert res.num_tokens[:2] == (1, 1) and res.num_tokens[2] >= 2
        assert res.probs.sum() <= 1 + 1e-6


def test_multi_token_candidate_is_never_scored_by_its_first_token(engine):
    text, first = multi_token(engine)
    for res in engine.score([ScoreRequest(p, (text, first)) for p in PROMPTS]):
        assert res.logprobs[0] < res.logprobs[1]


def test_next_token_matches_single_token_scores(engine):
    vs = expand_variants(["A", "B"], keep=engine.is_single_token)
    nxt = engine.next_token([NextTokenRequest(p, vs.tokens) for p in PROMPTS])
    scr = engine.score([ScoreRequest(p, vs.tokens) for p in PROMPTS])
    for a, b in zip(nxt, scr):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=1e-5)
        assert a.probs.sum() <= 1 + 1e-6
        assert vs.merge_probs(a.logprobs).sum() <= 1 + 1e-6


def test_next_token_rejects_multi_token_strings(engine):
    text, _ = multi_token(engine)
    with pytest.raises(ConfigError, match="single tokens"):
        engine.next_token([NextTokenRequest("x", (text,))])
    assert not engine.is_single_token(text)


def test_prefix_group_equals_individual_prompts(engine):
    prefix = "- Age: 34 years old.\n- Occupation: nurse; lives in Ohio.\n"
    suffixes = ("Question: income? A. Below B. Above\nAnswer:", "Question: income? A. Above B. Below\nAnswer:")
    for s in suffixes:  # the concatenated text tokenizes as prefix + suffix
        assert engine.count_tokens([prefix + s])[0] == engine.count_tokens([prefix])[0] + len(
            encode_continuations(engine.tokenizer, [s])[0]
        )
    text, _ = multi_token(engine)
    (group,) = engine.score_groups([PrefixGroupRequest(prefix, suffixes, (" A", " B", text))])
    single = engine.score([ScoreRequest(prefix + s, (" A", " B", text)) for s in suffixes])
    assert len(group.results) == 2
    for g, s in zip(group.results, single):
        np.testing.assert_allclose(g.logprobs, s.logprobs, atol=1e-5)
        assert g.prompt_tokens == s.prompt_tokens


def test_chat_prompts_render_with_the_template_and_prefill(engine):
    text = engine.render(CHAT)
    assert text.endswith("Answer:") and "You answer survey questions." in text
    (res,) = engine.score([ScoreRequest(CHAT, (" A", " B"))])
    assert res.prompt_tokens == engine.count_tokens([CHAT])[0] > engine.count_tokens([PROMPTS[0]])[0]
    (nt,) = engine.next_token([NextTokenRequest(CHAT, (" A", " B"))])
    np.testing.assert_allclose(nt.logprobs, res.logprobs, atol=1e-5)


def test_greedy_generation_is_deterministic_and_batch_independent(engine):
    settings = GenerationSettings(max_new_tokens=6)
    alone = engine.generate([GenerateRequest(PROMPTS[1], settings)])
    together = engine.generate([GenerateRequest(p, settings) for p in PROMPTS] + [GenerateRequest(CHAT, settings)])
    assert together[1] == alone[0]
    for res in together:
        assert res.finish_reason in {"eos", "length", "stop"}
        assert 1 <= res.completion_tokens <= 6


def test_stop_strings_cut_the_text(engine):
    (free,) = engine.generate([GenerateRequest(PROMPTS[0], GenerationSettings(max_new_tokens=8))])
    if free.finish_reason != "length" or len(free.text) < 4:
        pytest.skip("the random model ended early; nothing to stop on")
    stop = free.text[2:4]
    (cut,) = engine.generate([GenerateRequest(PROMPTS[0], GenerationSettings(max_new_tokens=8, stop=(stop,)))])
    assert cut.finish_reason == "stop"
    assert cut.text == free.text[: free.text.index(stop)]
    assert stop not in cut.text


def test_seeded_sampling_is_reproducible(engine):
    s1 = GenerationSettings(max_new_tokens=8, temperature=1.0, seed=11)
    s2 = GenerationSettings(max_new_tokens=8, temperature=1.0, seed=12)
    a = engine.generate([GenerateRequest("Hello", s1)])[0]
    b, c = engine.generate([GenerateRequest("Hello", s1), GenerateRequest("Hello", s2)])
    assert a == b and a.text != c.text


def test_results_come_back_in_input_order_with_duplicates(engine):
    reqs = [ScoreRequest(p, (" A", " B")) for p in PROMPTS]
    mixed = [reqs[2], reqs[0], reqs[2], reqs[1]]
    out = engine.score(mixed)
    ref = engine.score(reqs)
    assert out[0] == out[2] == ref[2] and out[1] == ref[0] and out[3] == ref[1]


def test_cache_serves_every_kind_on_rerun(engine, tmp_path):
    cached = Engine(engine.backend, cache=ResultCache(tmp_path), progress=False)
    calls = {
        "score": (cached.score, [ScoreRequest(p, (" A", " B")) for p in PROMPTS]),
        "groups": (cached.score_groups, [PrefixGroupRequest("Row\n", ("Q1\n", "Q2\n"), (" A",))]),
        "next": (cached.next_token, [NextTokenRequest(CHAT, (" A",))]),
        "generate": (cached.generate, [GenerateRequest("Hi", GenerationSettings(max_new_tokens=3))]),
    }
    first = {name: fn(reqs) for name, (fn, reqs) in calls.items()}
    computed = cached.stats.computed
    second = {name: fn(reqs) for name, (fn, reqs) in calls.items()}
    assert second == first
    assert cached.stats.computed == computed and cached.stats.cached == computed
    cached.cache.close()


def test_identity_names_the_backend_and_model(engine):
    ident = engine.backend.identity()
    assert ident["backend"] == engine.backend.name
    assert {"name", "revision"} <= set(ident["model"]) and "dtype" in ident
