"""The web-API backend end to end: litellm over HTTP against the local OpenAI-compatible server.

The server answers from the fake backend's (or a tiny transformers model's)
exact probabilities, so every number the API path produces is checked
against the model itself, while the server injects rate limits, server
errors, stalls, truncated bodies and missing log-probabilities.
"""

from __future__ import annotations

import logging
import math
import time
import zlib

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
from folkscope.errors import BackendError, ConfigError
from folkscope.testing import FakeSource, FaultPlan, LocalOpenAIServer

pytest.importorskip("litellm")

KEY = "sk-folkscope-test-SECRET-123"
LETTERS = ("A", " A", "B", " B")


def letter_rule(text: str) -> dict[str, float] | None:
    """After an answer cue (text prompts' or folktexts' chat prefill), the four letter variants get prompt-dependent,
    clearly top-20 probabilities."""
    if not text.rstrip().endswith(("Answer:", "my answer would be")):
        return None
    h = zlib.crc32(text.encode()) % 997 / 997
    return {"A": 0.1 + 0.3 * h, " A": 0.15, "B": 0.35 - 0.3 * h, " B": 0.2}


@pytest.fixture()
def key(monkeypatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


@pytest.fixture()
def fake() -> FakeBackend:
    return FakeBackend(next_token_probs=letter_rule)


@pytest.fixture()
def server(fake, key):
    srv = LocalOpenAIServer(FakeSource(fake), api_key=key, max_lifetime=120)
    with srv:
        yield srv


def api_engine(srv: LocalOpenAIServer, cache: ResultCache | None = None, **options) -> Engine:
    from folkscope.engine.backends.api import LiteLLMBackend

    options.setdefault("backoff_base", 0.01)
    options.setdefault("jitter_seed", 0)
    backend = LiteLLMBackend("openai/fake", api_base=srv.url, assistant_prefill=True, **options)
    return Engine(backend, cache=cache, progress=False)


def direct(fake: FakeBackend) -> Engine:
    return Engine(fake, cache=None, progress=False)


def rows(n: int, cue: str = "Answer:") -> list[str]:
    return [f"Row {i}: age {20 + i % 50}, works as clerk {i * 7 % 11}.\n{cue}" for i in range(n)]


def spell(answer: str):
    """A next-token rule under which the assistant (almost surely) says ``answer`` and stops."""
    from folkscope.engine.backends.fake import FakeTokenizer

    tok = FakeTokenizer()
    ids = tok.encode(answer)

    def rule(text: str) -> dict[str, float] | None:
        head, cue, said = text.rpartition("<|assistant|>\n")
        done = tok.encode(said)
        if not cue or done != ids[: len(done)]:
            return None
        nxt = ids[len(done)] if len(done) < len(ids) else 0
        return {tok.decode([nxt]) if nxt else "\x00": 0.999}

    return rule


# ---------------------------------------------------------------------- exact numbers
@pytest.mark.parametrize(("score_mode", "calls"), [("echo", 6 + 4 + 3 + 4), ("topk", 6 * 2 + 4 * 2 + 3 * 2 + 4)])
def test_completion_route_is_exact_for_every_request_kind(server, fake, score_mode, calls):
    """echo: one HTTP request per engine request. topk: one per prompt, plus one echo request where the table
    leaves a candidate open that can matter (the multi-token answer; digits the fake makes unlikely)."""
    api, ref = api_engine(server, score_mode=score_mode), direct(fake)
    cands = (*LETTERS, " Below $50,000")  # the last one is several tokens: scored as the full product
    score = [ScoreRequest(p, cands) for p in rows(6)]
    for a, b in zip(api.score(score), ref.score(score)):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
        assert a.num_tokens == b.num_tokens and a.prompt_tokens == b.prompt_tokens and a.bound is None
    groups = [
        PrefixGroupRequest(f"Row {i}.\n", ("Q: A or B?\nAnswer:", "Q: B or A?\nAnswer:"), LETTERS) for i in range(4)
    ]
    for a, b in zip(api.score_groups(groups), ref.score_groups(groups)):
        for ra, rb in zip(a.results, b.results):
            np.testing.assert_allclose(ra.logprobs, rb.logprobs, rtol=0, atol=1e-12)
    digits = [NextTokenRequest(p + " 0.", tuple("0123456789")) for p in rows(3)]
    for a, b in zip(api.next_token(digits), ref.next_token(digits)):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
    gen = [GenerateRequest(p, GenerationSettings(max_new_tokens=5)) for p in rows(3)]
    gen += [GenerateRequest(rows(1)[0], GenerationSettings(max_new_tokens=6, temperature=0.8, seed=11))]
    assert api.generate(gen) == ref.generate(gen)
    stats = api.backend.stats
    assert stats.missing_candidates == 0 and stats.retries == 0 and stats.prompt_tokens > 0
    assert stats.cost_known is False and stats.cost_usd == 0.0
    assert server.total_answered == stats.api_calls == calls


def test_chat_route_scores_top_candidates_exactly_and_bounds_the_rest(server, fake):
    prompts = [ChatPrompt([("user", p.removesuffix("\nAnswer:"))], prefill="Answer:") for p in rows(8)]
    cands = (*LETTERS, " Below $50,000", "B is my answer")
    api = api_engine(server, top_logprobs=6)
    ref = direct(fake)
    got = api.score([ScoreRequest(p, cands) for p in prompts])
    want = ref.score([ScoreRequest(p, cands) for p in prompts])
    missing = 0
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs[:4], b.logprobs[:4], rtol=0, atol=1e-12)  # the letters are in the top 6
        assert math.isnan(a.logprobs[4]) and math.isnan(a.logprobs[5])  # multi-token: never its first token
        assert a.num_tokens[4:] == (0, 0) and a.bound is not None
        assert b.logprobs[4] <= a.bound and b.logprobs[5] <= a.bound  # the bound holds for the true values
        missing += 2
    stats = api.backend.stats
    assert stats.missing_candidates == missing and stats.marked_rows == len(prompts)


def test_missing_candidates_are_nan_with_a_valid_bound_and_merge_only_when_harmless(key):
    """Without the letter rule most letter variants fall outside a top-3: NaN, bounded, counted."""
    plain = FakeBackend()
    with LocalOpenAIServer(FakeSource(plain), max_lifetime=60) as url:
        from folkscope.engine.backends.api import LiteLLMBackend

        api = Engine(
            LiteLLMBackend("openai/fake", api_base=url, top_logprobs=3, mode="chat"), cache=None, progress=False
        )
        vs = expand_variants(["A", "B"])
        requests = [NextTokenRequest(f"Question {i}: yes or no?", vs.tokens) for i in range(40)]
        got = api.next_token(requests)
    # mode="chat" sends plain text as one user message: the reference is that chat prompt
    chat = direct(plain).next_token([NextTokenRequest(ChatPrompt([("user", r.prompt)]), r.tokens) for r in requests])
    n_nan = 0
    for a, b in zip(got, chat):
        for x, y in zip(a.logprobs, b.logprobs):
            if math.isnan(x):
                n_nan += 1
                assert y <= a.bound  # every missing token's true log-probability is within the bound
            else:
                assert x == pytest.approx(y, abs=1e-12)
        merged = vs.merge_logprobs(a.logprobs, bound=a.bound)
        if np.isnan(a.logprobs).any():
            present = np.exp(np.nan_to_num(a.logprobs, nan=-np.inf)).sum()
            harmless = present > 0 and np.isnan(a.logprobs).sum() * math.exp(a.bound) <= 1e-3 * present
            assert np.isnan(merged).all() != harmless
    assert n_nan > 0 and api.backend.stats.missing_candidates == n_nan
    assert api.backend.stats.marked_rows == sum(bool(np.isnan(r.logprobs).any()) for r in got)


def test_a_prompt_that_merges_with_its_candidate_is_not_scored(server):
    """'Answer: ' + 'A' tokenizes as ' A' jointly: not a continuation of the prompt as written (echo scoring)."""
    api = api_engine(server, score_mode="echo")
    res = api.score([ScoreRequest("Q? Answer: ", ("A", "B", "yes"))])[0]
    assert all(math.isnan(v) for v in res.logprobs) and res.bound is None
    assert api.backend.stats.missing_candidates == 3 and api.backend.stats.marked_rows == 1


def test_generation_finish_reasons(server, fake):
    api, ref = api_engine(server), direct(fake)
    base = GenerateRequest("Row 1 says:", GenerationSettings(max_new_tokens=8))
    text = ref.generate([base])[0].text
    stop = text[3:5]
    req = GenerateRequest("Row 1 says:", GenerationSettings(max_new_tokens=8, stop=(stop, "zz", "qq", "ww", "vv")))
    got, want = api.generate([req])[0], ref.generate([req])[0]
    assert got.text == want.text and got.finish_reason == "stop" == want.finish_reason
    eos = FakeBackend(next_token_probs=spell("Probability: 40%"))
    with LocalOpenAIServer(FakeSource(eos), max_lifetime=60) as url:
        from folkscope.engine.backends.api import LiteLLMBackend

        chat = GenerateRequest(ChatPrompt([("user", "Risk?")]), GenerationSettings(max_new_tokens=30))
        res = Engine(LiteLLMBackend("openai/fake", api_base=url), cache=None, progress=False).generate([chat])[0]
    assert res == direct(eos).generate([chat])[0]
    assert res.text == "Probability: 40%" and res.finish_reason == "eos"


# ---------------------------------------------------------------------- faults
@pytest.mark.parametrize("rate", [0.3, 0.6])
def test_transient_faults_are_retried_until_every_request_is_answered_exactly_once(fake, key, rate):
    kinds = {"429": 1.0, "500": 1.0, "503": 1.0, "truncated": 1.0, "timeout": 0.5}
    plan = FaultPlan(rate=rate, kinds=kinds, seed=7, retry_after=0.05, stall_seconds=2.5)
    srv = LocalOpenAIServer(FakeSource(fake), faults=plan, api_key=key, max_lifetime=120)
    requests = [ScoreRequest(p, LETTERS) for p in rows(150)]
    rpm = 12_000
    with srv:
        api = api_engine(srv, max_concurrency=8, max_rpm=rpm, timeout=1.5, max_retries=6)
        got = api.score(requests)
    want = direct(fake).score(requests)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
    assert len(srv.answered) == len(requests) and set(srv.answered.values()) == {1}  # each body answered exactly once
    faults = srv.faults
    assert sum(faults.values()) > 25 and set(faults) == {"429", "500", "503", "timeout", "truncated"}
    stats = api.backend.stats
    assert stats.retries == srv.total_faults  # every injected failure was retried once, and counted
    assert stats.rate_limited == faults["429"] and stats.timeouts == faults["timeout"]
    assert stats.server_errors + stats.connection_errors == faults["500"] + faults["503"] + faults["truncated"]
    assert stats.api_calls == srv.requests == len(requests) + srv.total_faults
    assert api.stats.computed == len(requests)
    arrivals = np.sort(srv.arrivals)  # the rpm limit holds at the server, retries included
    per_second = rpm / 60
    for i, t in enumerate(arrivals):
        assert np.searchsorted(arrivals, t + 1.0) - i <= per_second + 2


@pytest.mark.parametrize("code", ["400", "401", "403", "404", "422"])
def test_errors_that_cannot_succeed_stop_at_once_without_retry(fake, key, code):
    srv = LocalOpenAIServer(FakeSource(fake), faults=FaultPlan(schedule={0: code}), max_lifetime=60)
    with srv:
        api = api_engine(srv, max_concurrency=1)
        expected = ConfigError if code in ("401", "403") else BackendError
        with pytest.raises(expected) as info:
            api.score([ScoreRequest(p, LETTERS) for p in rows(5)])
    message = str(info.value)
    assert srv.requests == 1 and api.backend.stats.retries == 0  # no retry, nothing after it
    assert "cannot succeed" in message and KEY not in message
    if code in ("401", "403"):
        assert "OPENAI_API_KEY" in message
    else:
        assert f"HTTP {code}" in message


def test_retries_give_up_after_max_retries_and_long_retry_after(fake, key):
    always = FaultPlan(schedule=lambda n, k, a: "500")
    srv = LocalOpenAIServer(FakeSource(fake), faults=always, max_lifetime=60)
    with srv:
        api = api_engine(srv, max_retries=2, max_concurrency=1)
        with pytest.raises(BackendError, match="failed 3 times"):
            api.score([ScoreRequest(rows(1)[0], LETTERS)])
    assert srv.requests == 3 and api.backend.stats.retries == 2
    patient = FaultPlan(schedule={0: "429"}, retry_after=3600)
    srv = LocalOpenAIServer(FakeSource(fake), faults=patient, max_lifetime=60)
    with srv:
        with pytest.raises(BackendError, match="asks to wait 3600 s"):
            api_engine(srv, max_concurrency=1).score([ScoreRequest(rows(1)[0], LETTERS)])


def test_retry_after_is_honoured(fake, key):
    plan = FaultPlan(schedule={0: "429", 2: "503"}, retry_after=0.4)
    srv = LocalOpenAIServer(FakeSource(fake), faults=plan, max_lifetime=60)
    with srv:
        api = api_engine(srv, max_concurrency=1, backoff_base=0.001)
        api.score([ScoreRequest(rows(1)[0], LETTERS)])
        gap_429 = srv.arrivals[1] - srv.arrivals[0]
        api.score([ScoreRequest(rows(2)[1], LETTERS)])
        gap_503 = srv.arrivals[3] - srv.arrivals[2]
    assert gap_429 >= 0.4 and gap_503 >= 0.4
    assert api.backend.stats.rate_limited == 1 and api.backend.stats.server_errors == 1
    dated = FaultPlan(schedule={0: "429"}, retry_after="http-date", retry_after_seconds=1)
    srv = LocalOpenAIServer(FakeSource(fake), faults=dated, max_lifetime=60)
    with srv:
        api = api_engine(srv, max_concurrency=1, backoff_base=0.001)
        assert api.score([ScoreRequest(rows(1)[0], LETTERS)])[0].bound is None
    assert api.backend.stats.rate_limited == 1 and srv.total_answered == 1


@pytest.mark.parametrize("chat", [False, True])
def test_a_server_without_logprobs_gets_a_clear_error_and_generation_still_works(fake, key, chat):
    srv = LocalOpenAIServer(FakeSource(fake), omit_logprobs=True, max_lifetime=60)
    prompt = ChatPrompt([("user", "Income?")]) if chat else "Income? Answer:"
    with srv:
        api = api_engine(srv, max_concurrency=1)
        with pytest.raises(BackendError) as info:
            api.score([ScoreRequest(prompt, LETTERS)])
        assert api.generate([GenerateRequest(prompt, GenerationSettings(max_new_tokens=3))])[0].completion_tokens == 3
    message = str(info.value)
    assert "openai/fake" in message and "without log-probabilities" in message and "chain-of-thought" in message
    assert srv.requests == 2  # one scoring request (no retry of a logprob-less answer), one generation


def test_prefill_needs_a_provider_that_accepts_it(server, key):
    from folkscope.engine.backends.api import LiteLLMBackend

    engine = Engine(LiteLLMBackend("openai/fake", api_base=server.url), cache=None, progress=False)
    with pytest.raises(ConfigError, match="assistant prefill"):
        engine.score([ScoreRequest(ChatPrompt([("user", "Q?")], prefill="Answer:"), LETTERS)])
    with pytest.raises(ConfigError, match="mode='completions' takes plain-text"):
        Engine(
            LiteLLMBackend("openai/fake", api_base=server.url, mode="completions"), cache=None, progress=False
        ).score([ScoreRequest(ChatPrompt([("user", "Q?")]), LETTERS)])
    assert server.requests == 0


# ---------------------------------------------------------------------- resume
def test_an_interrupted_run_resumes_without_repeating_a_request(fake, key, tmp_path):
    requests = [ScoreRequest(p, LETTERS) for p in rows(60)]
    plan = FaultPlan(fail_after_answers=25, fail_kind="400")
    srv = LocalOpenAIServer(FakeSource(fake), faults=plan, max_lifetime=120)
    with srv:
        first = api_engine(srv, ResultCache(tmp_path), max_concurrency=4)
        with pytest.raises(BackendError, match="HTTP 400"):
            first.score(requests)
        saved = first.cache.count()
        answered_first = set(srv.answered)
        assert saved == len(answered_first) >= 25  # every answer the server gave was saved (in-flight ones too)
        first.close()
        srv.plan = FaultPlan()
        srv.reset_counts()
        second = api_engine(srv, ResultCache(tmp_path), max_concurrency=4)
        got = second.score(requests)
    assert not answered_first & set(srv.received)  # nothing saved was asked again
    assert second.stats.cached == saved and second.stats.computed == len(requests) - saved
    assert set(srv.received.values()) == {1} and srv.total_answered == len(requests) - saved
    for a, b in zip(got, direct(fake).score(requests)):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)


def test_closing_the_stream_early_cancels_the_rest(fake, key):
    srv = LocalOpenAIServer(FakeSource(fake), latency=0.05, max_lifetime=60)
    with srv:
        backend = api_engine(srv, max_concurrency=2).backend
        stream = backend.score([ScoreRequest(p, LETTERS) for p in rows(40)])
        first = next(stream)
        stream.close()
        time.sleep(0.3)
        sent = srv.requests
        time.sleep(0.3)
        assert srv.requests == sent < 40  # nothing more is sent after the consumer left
    assert first and first[0][1].bound is None


# ---------------------------------------------------------------------- risk scores and keys
#: fewer features than the task's fifteen: shorter prompts, same code paths (the fake tokenizer is byte-level)
FEATURES = ("AGEP", "SEX", "EDU", "INDP_CAT", "ST")


def make_bench(engine: Engine, **config):
    from folkscope.risk.config import BenchmarkConfig
    from folkscope.risk.run import Benchmark

    config = {"subsampling": 0.015, "baselines": False, "n_bootstrap": 20, "feature_subset": FEATURES, **config}
    return Benchmark.make_benchmark("NISTIncome", model=engine, config=BenchmarkConfig(**config))


def risk_scores(engine: Engine, **config) -> np.ndarray:
    bench = make_bench(engine, **config)
    X, _ = bench.dataset.get_test()
    return bench.classifier.predict_proba(X)[:, 1]


@pytest.mark.parametrize(
    ("chat", "score_mode"), [(False, "echo"), (True, "topk")], ids=["multiple-choice-text", "multiple-choice-chat"]
)
def test_risk_scores_through_the_server_equal_the_backend_serving_it(key, chat, score_mode):
    """Text prompts: exact echo scoring (any model). Chat prompts: top-20 lookup (letters made likely).

    Top-k-first scoring of text prompts is compared with echo in ``test_api_topk.py``."""
    fake = FakeBackend(next_token_probs=letter_rule if chat else None)
    with LocalOpenAIServer(FakeSource(fake), max_lifetime=120) as url:
        from folkscope.engine.backends.api import LiteLLMBackend

        api = Engine(
            LiteLLMBackend("openai/fake", api_base=url, assistant_prefill=True, score_mode=score_mode),
            cache=None,
            progress=False,
        )
        got = risk_scores(api, use_chat_template=chat)
    want = risk_scores(direct(fake), use_chat_template=chat)
    assert 20 <= len(got) <= 40 and np.isfinite(got).all() and np.ptp(want) > 1e-3
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert api.backend.stats.missing_candidates == 0 and api.backend.stats.api_calls == (2 if chat else 1) * len(got)


def test_risk_scores_match_transformers_backend_tiny_random_model(key, llama_backend):
    from folkscope.engine.backends.api import LiteLLMBackend
    from folkscope.testing import TransformersSource

    srv = LocalOpenAIServer(TransformersSource.from_backend(llama_backend, model_id="tiny-llama"), max_lifetime=120)
    with srv as url:
        api = Engine(LiteLLMBackend("openai/tiny-llama", api_base=url, max_concurrency=2), cache=None, progress=False)
        got = risk_scores(api)
    want = risk_scores(Engine(llama_backend, cache=None, progress=False))
    assert np.isfinite(got).all() and np.ptp(want) > 1e-3  # a random model still gives varied scores
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_the_api_key_never_reaches_logs_output_or_the_run_folder(server, key, tmp_path, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    for name in ("LiteLLM", "openai", "httpx", "httpcore", "httpx2", "httpcore2", "folkscope"):
        caplog.set_level(logging.DEBUG, logger=name)  # even with every client logger at DEBUG
    engine = api_engine(server, ResultCache(tmp_path / "cache"))
    bench = make_bench(engine, use_chat_template=True)  # chat route: litellm's own client
    results = bench.run(tmp_path / "results")
    assert results["scoring"]["engine_stats"]["computed"] > 0
    groups = [PrefixGroupRequest(f"Row {i}.\n", ("Q: A or B?\nAnswer:",), LETTERS) for i in range(3)]
    assert len(engine.score_groups(groups)) == 3  # text route: the backend's own OpenAI client
    out, err = capfd.readouterr()
    assert KEY not in out and KEY not in err
    assert KEY not in caplog.text and all(KEY not in r.getMessage() for r in caplog.records)
    debug_from = {r.name.split(".")[0] for r in caplog.records if r.levelno == logging.DEBUG}
    assert {"LiteLLM", "openai"} <= debug_from and debug_from & {
        "httpcore",
        "httpcore2",
    }  # the clients really talked at DEBUG
    assert server.authorized > 0 and server.unauthorized == 0  # the key from the environment was sent
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "scores.parquet" for p in files) and any(p.name == "results.sqlite" for p in files)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in repr(engine) and KEY not in str(engine.identity())


def test_cost_is_counted_for_a_model_litellm_prices(key, fake):
    """A known model name served locally: tokens and litellm's price add up."""
    srv = LocalOpenAIServer(FakeSource(fake, model_id="gpt-3.5-turbo-instruct"), max_lifetime=60)
    with srv as url:
        from folkscope.engine.backends.api import LiteLLMBackend

        backend = LiteLLMBackend("text-completion-openai/gpt-3.5-turbo-instruct", api_base=url, score_mode="echo")
        Engine(backend, cache=None, progress=False).score([ScoreRequest(p, LETTERS) for p in rows(3)])
    stats = backend.stats
    assert stats.cost_known and stats.prompt_tokens > 0 and stats.completion_tokens == 3 * len(LETTERS)
    import litellm

    a, b = litellm.cost_per_token(
        model="gpt-3.5-turbo-instruct", prompt_tokens=stats.prompt_tokens, completion_tokens=stats.completion_tokens
    )
    assert stats.cost_usd == pytest.approx(a + b) and stats.cost_usd > 0


def test_a_third_party_warning_escalated_to_an_error_never_fails_a_request(server, fake, monkeypatch):
    """Under warnings-as-errors, a warning raised inside the client (bare or re-wrapped by litellm) is logged and the request resent."""
    import warnings

    engine = api_engine(server)
    backend = engine.backend
    send = backend._transport.send
    raised: list[str] = []

    async def noisy_send(call):
        if len(raised) < 2:  # two distinct warnings: one bare, one wrapped the way litellm wraps client errors
            message = f"Items on TypedDict class '_Thing{len(raised)}' are using the `ReadOnly` qualifier."
            raised.append(message)
            if len(raised) == 1:
                warnings.warn(message, UserWarning, stacklevel=1)
            try:
                warnings.warn(message, UserWarning, stacklevel=1)
            except UserWarning as inner:
                raise ConnectionError("litellm.APIConnectionError: " + message) from inner
        return await send(call)

    monkeypatch.setattr(backend._transport, "send", noisy_send)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = engine.score([ScoreRequest(p, LETTERS) for p in rows(3)])
        warnings.warn(raised[0], UserWarning, stacklevel=1)  # now ignored: tolerated for the rest of the process
    want = direct(fake).score([ScoreRequest(p, LETTERS) for p in rows(3)])
    np.testing.assert_allclose([r.logprobs for r in got], [r.logprobs for r in want], atol=1e-6)
    assert len(raised) == 2 and backend.stats.retries == 0 and backend.stats.api_calls == server.total_answered


def test_a_warning_that_keeps_coming_back_is_a_failure_not_a_loop(server, monkeypatch):

    engine = api_engine(server, max_retries=1)

    async def always_warns(call):
        raise UserWarning("a warning whose filter never holds")

    monkeypatch.setattr(engine.backend._transport, "send", always_warns)
    monkeypatch.setattr("folkscope.engine.backends._api_transport.tolerate_warning", lambda exc: None)
    with pytest.raises(BackendError, match="UserWarning: a warning whose filter never holds"):
        engine.score([ScoreRequest(rows(1)[0], LETTERS)])
