"""The fake backend: a consistent hashed language model with configurable behaviour."""

from __future__ import annotations

import time

import numpy as np
import pytest

from folkscope.engine import Engine, GenerateRequest, GenerationSettings, NextTokenRequest, ScoreRequest
from folkscope.engine.backends.fake import EOS, FakeBackend, FakeOutOfMemoryError, FakeTokenizer
from folkscope.errors import BackendError, ConfigError


def test_tokenizer_round_trip_and_space_merging():
    tok = FakeTokenizer()
    assert tok.encode("A") == [65] and tok.encode(" A") == [256 + 65]
    assert tok.encode("a  b") == [97, 32, 256 + 98]
    for text in ["héllo wörld", "  x", "trailing ", "\n\tA B"]:
        assert tok.decode(tok.encode(text)) == text


def test_distribution_is_normalised_and_deterministic():
    fake = FakeBackend()
    lp = fake.logprobs((1, 2, 3))
    assert lp.shape == (512,) and np.exp(lp).sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(lp, FakeBackend().logprobs((1, 2, 3)))
    assert not np.array_equal(lp, FakeBackend(seed=1).logprobs((1, 2, 3)))


def test_multi_token_score_is_the_chain_of_next_token_logprobs():
    fake = FakeBackend()
    engine = Engine(fake, cache=None, progress=False)
    (res,) = engine.score([ScoreRequest("Q:", (" yes", "no"))])
    tok = fake.tokenizer
    prompt = tok.encode("Q:")
    expected = 0.0
    for i, t in enumerate(tok.encode("no")):
        expected += fake.logprobs(tuple(prompt) + tuple(tok.encode("no")[:i]))[t]
    assert res.logprobs[1] == pytest.approx(expected, abs=1e-12)
    assert res.logprobs[0] == pytest.approx(
        fake.logprobs(tuple(prompt))[256 + ord("y")]
        + fake.logprobs(tuple(prompt) + (256 + ord("y"),))[ord("e")]
        + fake.logprobs(tuple(prompt) + (256 + ord("y"), ord("e")))[ord("s")]
    )


def test_configured_probabilities_are_exact():
    rule = lambda text: {"A": 0.6, "B": 0.3} if text.endswith("Answer: ") else None  # noqa: E731
    engine = Engine(FakeBackend(next_token_probs=rule), cache=None, progress=False)
    (res,) = engine.next_token([NextTokenRequest("Income? Answer: ", ("A", "B", "C"))])
    np.testing.assert_allclose(res.probs[:2], [0.6, 0.3])
    assert res.probs[2] < 0.1
    (other,) = engine.next_token([NextTokenRequest("no rule here", ("A", "B"))])
    assert not np.allclose(other.probs, [0.6, 0.3])


def test_bad_configured_probabilities():
    engine = Engine(FakeBackend(next_token_probs={"AB": 0.5}), cache=None, progress=False)
    with pytest.raises(ConfigError):
        engine.next_token([NextTokenRequest("x", ("A",))])
    engine = Engine(FakeBackend(next_token_probs={"A": 0.7, "B": 0.7}), cache=None, progress=False)
    with pytest.raises(ConfigError):
        engine.next_token([NextTokenRequest("x", ("A",))])


def test_scripted_responses_and_stop_strings():
    fake = FakeBackend(responses=lambda prompt: "Reasoning... so the answer is B. Done")
    engine = Engine(fake, cache=None, progress=False)
    full, stopped, short = engine.generate(
        [
            GenerateRequest("Q", GenerationSettings(max_new_tokens=100)),
            GenerateRequest("Q", GenerationSettings(max_new_tokens=100, stop=(". Done",))),
            GenerateRequest("Q", GenerationSettings(max_new_tokens=3)),
        ]
    )
    assert full.text == "Reasoning... so the answer is B. Done" and full.finish_reason == "eos"
    assert stopped.text == "Reasoning... so the answer is B" and stopped.finish_reason == "stop"
    assert short.finish_reason == "length" and short.completion_tokens == 3


def test_failures_are_raised_before_the_chosen_batch():
    boom = ConnectionError("lost connection")
    fake = FakeBackend(failures=lambda n: boom if n == 1 else None, batch_tokens=16)
    engine = Engine(fake, cache=None, progress=False)
    with pytest.raises(ConnectionError):
        engine.score([ScoreRequest(f"prompt number {i}", ("A",)) for i in range(5)])


def test_fake_out_of_memory_shrinks_the_batch():
    fake = FakeBackend(oom_above_tokens=60, batch_tokens=1000)
    engine = Engine(fake, cache=None, progress=False)
    reqs = [ScoreRequest(f"row {i:03d} text", ("A", " B")) for i in range(20)]
    got = engine.score(reqs)
    want = Engine(FakeBackend(), cache=None, progress=False).score(reqs)
    assert got == want
    assert fake.stats.oom_backoffs >= 1 and fake.budget.tokens <= 60
    assert issubclass(FakeOutOfMemoryError, RuntimeError)


def test_fake_out_of_memory_on_one_row_is_an_error():
    engine = Engine(FakeBackend(oom_above_tokens=3), cache=None, progress=False)
    with pytest.raises(BackendError, match="cannot be split"):
        engine.score([ScoreRequest("a long prompt", ("A",))])


def test_latency():
    engine = Engine(FakeBackend(latency=0.05, batch_tokens=8), cache=None, progress=False)
    t0 = time.perf_counter()
    engine.score([ScoreRequest(f"p{i}xx", ("A",)) for i in range(3)])
    assert time.perf_counter() - t0 >= 0.1


def test_sampling_uses_the_request_seed():
    engine = Engine(FakeBackend(), cache=None, progress=False)
    s = [GenerationSettings(max_new_tokens=12, temperature=1.0, seed=k) for k in (1, 1, 2)]
    a, b, c = engine.generate(
        [GenerateRequest("Once", s[0]), GenerateRequest("Once ", s[1]), GenerateRequest("Once", s[2])]
    )
    (again,) = engine.generate([GenerateRequest("Once", s[0])])
    assert a == again and a.text != c.text


def test_eos_token_ends_generation():
    engine = Engine(FakeBackend(next_token_probs={"\x00": 1.0}), cache=None, progress=False)
    (res,) = engine.generate([GenerateRequest("x")])
    assert res.text == "" and res.finish_reason == "eos" and res.completion_tokens == 1 and EOS == 0
