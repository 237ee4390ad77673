"""Top-k-first scoring of plain-text prompts on the web-API backend, and the cost said (and held back) before sending.

Against the local OpenAI-compatible server over the fake model, whose
probabilities are known exactly: top-k answers equal echo answers (and the
model's own) wherever echo is needed or the table holds the candidate; a
missing candidate that could matter by the engine's bound rule is fetched by
echo, one that cannot is not; a prompt is billed once instead of once per
candidate; a step over ``--max-cost`` is refused without ``--yes``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from folkscope.engine import Engine, NextTokenRequest, PrefixGroupRequest, ResultCache, ScoreRequest, expand_variants
from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.tokens import MISSING_TOLERANCE, missing_is_negligible
from folkscope.errors import BackendError, ConfigError
from folkscope.testing import FakeSource, FaultPlan, LocalOpenAIServer

pytest.importorskip("litellm")

PRICED = "gpt-3.5-turbo-instruct"  # a model litellm has a price for, served locally
LETTERS = ("A", " A", "B", " B")


@pytest.fixture(autouse=True)
def key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def api(url: str, model: str = "openai/fake", cache: ResultCache | None = None, **options) -> Engine:
    from folkscope.engine.backends.api import LiteLLMBackend

    options.setdefault("backoff_base", 0.01)
    options.setdefault("jitter_seed", 0)
    return Engine(LiteLLMBackend(model, api_base=url, **options), cache=cache, progress=False)


def rows(n: int) -> list[str]:
    return [f"Row {i}: age {20 + i % 50}, works as clerk {i * 7 % 11}.\nAnswer:" for i in range(n)]


def answer_rule(probs: dict[str, float]):
    """After an answer cue, fix the probabilities of the given next tokens (the rest spread by the fake's hash)."""

    def rule(text: str) -> dict[str, float] | None:
        return probs if text.endswith("Answer:") else None

    return rule


# ---------------------------------------------------------------------- the bound rule decides what is fetched
def test_a_missing_candidate_that_could_matter_is_fetched_by_echo_and_exact():
    """k=2 lists ' A' (0.5) and ' B' (0.3): ' C' may hold up to 0.3, so it is echoed, once per prompt."""
    fake = FakeBackend(next_token_probs=answer_rule({" A": 0.5, " B": 0.3, " C": 0.1}))
    cands = (" A", " B", " C")
    reqs = [ScoreRequest(p, cands) for p in rows(4)]
    with LocalOpenAIServer(FakeSource(fake), max_lifetime=60) as url:
        engine = api(url, top_logprobs=2)
        got = engine.score(reqs)
    want = Engine(fake, cache=None, progress=False).score(reqs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
        assert a.num_tokens == b.num_tokens and a.prompt_tokens == b.prompt_tokens and a.bound is None
    stats = engine.backend.stats
    assert stats.api_calls == 2 * len(reqs) and stats.echo_candidates == len(reqs) and stats.missing_candidates == 0


def test_a_missing_candidate_that_cannot_matter_costs_no_request():
    """' A' takes 0.9995: whatever ' C' holds is below the smallest listed value, within the tolerance: not echoed."""
    fake = FakeBackend(next_token_probs=answer_rule({" A": 0.9995, " B": 0.0004}))
    cands = (" A", " B", " C")
    reqs = [ScoreRequest(p, cands) for p in rows(4)]
    with LocalOpenAIServer(FakeSource(fake), max_lifetime=60) as url:
        engine = api(url, top_logprobs=2)
        got = engine.score(reqs)
    want = Engine(fake, cache=None, progress=False).score(reqs)
    vs = expand_variants([" A", " B", " C"], variants=lambda c: (c,))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs[:2], b.logprobs[:2], rtol=0, atol=1e-12)
        assert math.isnan(a.logprobs[2]) and a.bound is not None and b.logprobs[2] <= a.bound  # the bound holds
        assert missing_is_negligible(a.logprobs, a.bound)
        merged, exact = vs.merge_probs(a.logprobs, bound=a.bound), vs.merge_probs(b.logprobs)
        np.testing.assert_allclose(merged / merged.sum(), exact / exact.sum(), rtol=0, atol=MISSING_TOLERANCE)
    stats = engine.backend.stats
    assert stats.api_calls == len(reqs) and stats.echo_candidates == 0 and stats.missing_candidates == len(reqs)


def test_next_token_digits_missing_from_the_table_are_echoed_only_when_they_matter():
    fake = FakeBackend()  # digits are hashed: most are outside a top-5
    digits = tuple("0123456789")
    reqs = [NextTokenRequest(p + " 0.", digits) for p in rows(5)]
    with LocalOpenAIServer(FakeSource(fake), max_lifetime=60) as url:
        topk, echo = api(url, top_logprobs=5), api(url, score_mode="echo")
        got, old = topk.next_token(reqs), echo.next_token(reqs)
    for a, b in zip(got, old):
        if a.bound is None:
            np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
        else:  # left out only when negligible, and never above the bound
            assert missing_is_negligible(a.logprobs, a.bound)
            assert all(y <= a.bound for x, y in zip(a.logprobs, b.logprobs) if math.isnan(x))
    assert topk.backend.stats.echo_candidates > 0


# ---------------------------------------------------------------------- exact against echo and the model, cheaper
def test_top_k_first_equals_echo_for_prefix_groups_and_bills_each_prompt_once():
    fake = FakeBackend(next_token_probs=answer_rule({"A": 0.3, " A": 0.2, "B": 0.25, " B": 0.15}))
    groups = [
        PrefixGroupRequest(f"Row {i}: age {30 + i}.\n", ("Q: A or B?\nAnswer:", "Q: B or A?\nAnswer:"), LETTERS)
        for i in range(5)
    ]
    with LocalOpenAIServer(FakeSource(fake), max_lifetime=60) as url:
        srv_old = api(url, score_mode="echo")
        old = srv_old.score_groups(groups)
        new_engine = api(url)
        new = new_engine.score_groups(groups)
    for a, b in zip(new, old):
        for ra, rb in zip(a.results, b.results):
            np.testing.assert_allclose(ra.logprobs, rb.logprobs, rtol=0, atol=1e-12)
            assert ra.num_tokens == rb.num_tokens and ra.prompt_tokens == rb.prompt_tokens and ra.bound is None
    new_stats, old_stats = new_engine.backend.stats, srv_old.backend.stats
    prompts = [g.prefix + s for g in groups for s in g.suffixes]
    lengths = [len(FakeSource(fake).tokenize(p, add_special_tokens=True)) for p in prompts]
    # one top-k request per prompt, each billed once; echo billed every prompt once per candidate (plus the candidate)
    assert new_stats.api_calls == len(prompts) and new_stats.prompt_tokens == sum(lengths)
    assert old_stats.api_calls == len(groups) and old_stats.prompt_tokens > len(LETTERS) * sum(lengths)


@pytest.mark.parametrize("rate", [0.3])
def test_follow_ups_survive_transient_faults_and_no_body_is_answered_twice(rate):
    fake = FakeBackend(next_token_probs=answer_rule({" A": 0.5, " B": 0.3}))
    reqs = [ScoreRequest(p, (" A", " B", " C", " Below $50,000")) for p in rows(12)]
    srv = LocalOpenAIServer(FakeSource(fake), faults=FaultPlan(rate=rate, seed=3), max_lifetime=120)
    with srv as url:
        engine = api(url, top_logprobs=2, max_concurrency=4, max_retries=20)
        got = engine.score(reqs)
    want = Engine(fake, cache=None, progress=False).score(reqs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.logprobs, b.logprobs, rtol=0, atol=1e-12)
    assert srv.total_faults > 0 and set(srv.answered.values()) == {1} and len(srv.answered) == 2 * len(reqs)


def test_a_fatal_error_in_a_follow_up_stops_the_run_and_keeps_what_was_answered(tmp_path):
    fake = FakeBackend(next_token_probs=answer_rule({" A": 0.5, " B": 0.3}))
    reqs = [ScoreRequest(p, (" A", " B", " C")) for p in rows(10)]
    srv = LocalOpenAIServer(FakeSource(fake), faults=FaultPlan(fail_after_answers=7, fail_kind="400"), max_lifetime=60)
    with srv as url:
        engine = api(url, cache=ResultCache(tmp_path), top_logprobs=2, max_concurrency=1)
        with pytest.raises(BackendError, match="HTTP 400"):
            engine.score(reqs)
        assert 0 < engine.stats.computed < len(reqs)
        srv.plan = FaultPlan()
        again = api(url, cache=ResultCache(tmp_path), top_logprobs=2)
        assert len(again.score(reqs)) == len(reqs) and again.stats.cached == engine.stats.computed


# ---------------------------------------------------------------------- the cost before sending
def test_the_estimate_is_said_before_sending_and_close_to_the_bill(capfd):
    fake = FakeBackend(next_token_probs=answer_rule({" A": 0.6, " B": 0.39}))
    reqs = [ScoreRequest(p, (" A", " B")) for p in rows(20)]
    with LocalOpenAIServer(FakeSource(fake, model_id=PRICED), max_lifetime=60) as url:
        engine = api(url, f"text-completion-openai/{PRICED}")
        estimate = engine.backend.estimate(reqs)
        engine.score(reqs)
    stats = engine.backend.stats
    assert estimate.requests == stats.api_calls == len(reqs) and estimate.completion_tokens == stats.completion_tokens
    # litellm's count of each prompt once (the fake's byte tokens run about twice as many as cl100k's)
    assert (
        estimate.prompt_tokens == sum(engine.count_tokens([r.prompt for r in reqs]))
        and 0.3 < estimate.prompt_tokens / stats.prompt_tokens < 1
    )
    import litellm

    a, b = litellm.cost_per_token(model=PRICED, prompt_tokens=estimate.prompt_tokens, completion_tokens=len(reqs))
    assert estimate.cost_usd == pytest.approx(a + b) and estimate.cost_usd > 0
    err = capfd.readouterr().err
    assert f"scoring {len(reqs)} prompts sends about {len(reqs)} requests" in err and "litellm price" in err


def test_over_max_cost_without_a_terminal_is_refused_in_one_line_before_any_request():
    with LocalOpenAIServer(FakeSource(FakeBackend(), model_id=PRICED), max_lifetime=60) as srv_url:
        engine = api(srv_url, f"text-completion-openai/{PRICED}", max_cost=0.0)
        with pytest.raises(ConfigError) as info:
            engine.score([ScoreRequest(p, (" A", " B")) for p in rows(5)])
        message = str(info.value)
        assert "\n" not in message and "--yes" in message and "--max-cost $0" in message and "prompt tokens" in message
        assert engine.backend.stats.api_calls == 0
        approved = api(srv_url, f"text-completion-openai/{PRICED}", max_cost=0.0, approve_cost=True)
        assert len(approved.score([ScoreRequest(p, (" A", " B")) for p in rows(5)])) == 5


def test_a_yes_on_the_terminal_approves_the_session_and_a_no_sends_nothing(monkeypatch):
    from folkscope.engine.backends import _api_estimate

    asked: list[str] = []
    answers = iter([False, True])
    monkeypatch.setattr(_api_estimate, "ask_on_terminal", lambda q: asked.append(q) or next(answers))
    with LocalOpenAIServer(FakeSource(FakeBackend(), model_id=PRICED), max_lifetime=60) as url:
        engine = api(url, f"text-completion-openai/{PRICED}", max_cost=0.0)
        with pytest.raises(ConfigError, match="not confirmed"):
            engine.score([ScoreRequest(p, (" A",)) for p in rows(2)])
        assert engine.backend.stats.api_calls == 0
        engine.score([ScoreRequest(p, (" A",)) for p in rows(2)])
        engine.score([ScoreRequest(p, (" B",)) for p in rows(2)])  # approved once: not asked again
    assert len(asked) == 2 and "Send it?" in asked[0]


def test_an_unpriced_model_is_never_held_back():
    with LocalOpenAIServer(FakeSource(FakeBackend()), max_lifetime=60) as url:
        engine = api(url, max_cost=0.0)
        assert engine.backend.estimate([ScoreRequest("Q?\nAnswer:", (" A",))]).cost_usd is None
        assert len(engine.score([ScoreRequest("Q?\nAnswer:", (" A",))])) == 1


def test_score_mode_and_cost_flags_reach_the_backend_and_are_checked():
    from folkscope.engine import EngineConfig

    config = EngineConfig(
        model="openai/fake",
        backend="litellm",
        api_base="http://127.0.0.1:9/v1",
        score_mode="echo",
        max_cost=2.0,
        approve_cost=True,
    )
    engine = Engine.from_config(config)
    assert (engine.backend.score_mode, engine.backend._gate.max_cost, engine.backend._gate.approved) == (
        "echo",
        2.0,
        True,
    )
    assert "score_mode" not in engine.identity()["backend"]  # echo keeps the identity (and cache) of earlier versions
    assert (
        Engine.from_model("openai/fake", backend="litellm", api_base="http://127.0.0.1:9/v1").identity()["backend"][
            "score_mode"
        ]
        == "topk"
    )
    for bad in ({"score_mode": "fast"}, {"max_cost": -1.0}):
        with pytest.raises(ConfigError):
            EngineConfig(model="openai/fake", backend="litellm", **bad)
    with pytest.raises(ConfigError, match="--max-cost applies to web API models"):
        EngineConfig(model="x", max_cost=1.0)


# ---------------------------------------------------------------------- the completions top-k parser
_values = st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-5, 5), st.text(max_size=3))
_tables = st.dictionaries(st.text(max_size=3), _values, max_size=4)
_bodies = st.fixed_dictionaries(
    {
        "choices": st.lists(
            st.fixed_dictionaries(
                {
                    "logprobs": st.one_of(
                        st.none(),
                        st.fixed_dictionaries(
                            {
                                "tokens": st.lists(st.one_of(st.text(max_size=3), st.none()), max_size=2),
                                "token_logprobs": st.lists(_values, max_size=2),
                                "top_logprobs": st.one_of(
                                    st.none(), st.lists(st.one_of(_tables, st.none()), max_size=2)
                                ),
                            }
                        ),
                    )
                }
            ),
            max_size=2,
        ),
        "usage": st.one_of(st.none(), st.fixed_dictionaries({"prompt_tokens": st.integers(0, 99)})),
    }
)


@settings(max_examples=300, deadline=None)
@given(_bodies)
def test_parse_text_top_reads_or_refuses_any_body(body):
    from folkscope.engine.backends._api_wire import _Garbage, parse_text_top

    try:
        table, n = parse_text_top(body, model="m")
    except (_Garbage, BackendError):
        return
    assert n >= 0 and all(isinstance(t, str) and math.isfinite(v) for t, v in table.items())


@pytest.mark.parametrize("bad", [-0.01, float("inf"), float("nan"), True, "1"])
def test_a_spending_limit_is_a_finite_number_of_usd(bad) -> None:
    from folkscope.engine.config import EngineConfig, check_max_cost

    with pytest.raises(ConfigError, match="must be a number of USD >= 0"):
        check_max_cost(bad)
    if not isinstance(bad, str):
        with pytest.raises(ConfigError, match="--max-cost must be a number of USD"):
            EngineConfig(model="openai/gpt-4o-mini", backend="litellm", max_cost=bad)
    assert check_max_cost(0) == 0.0 and check_max_cost(2.5) == 2.5
