"""Web-API backend, without any request: retry timing, rate limits, option checks, identity, capabilities."""

from __future__ import annotations

import doctest
import importlib
import inspect
import json
import math
import socket
import threading
from datetime import datetime, timedelta, timezone

import pytest

from folkscope.engine import ChatPrompt, Engine, ScoreRequest
from folkscope.engine.ratelimit import RateLimiter, RetryPolicy, parse_retry_after
from folkscope.errors import BackendError, ConfigError

pytest.importorskip("litellm")

SECRET = "sk-folkscope-unit-SECRET-987"


@pytest.fixture()
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return SECRET


def backend(model="openai/fake", **options):
    from folkscope.engine.backends.api import LiteLLMBackend

    return LiteLLMBackend.from_model(model, **options)


# ---------------------------------------------------------------------- Retry-After
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3.0),
        (" 1.5 ", 1.5),
        (b"7", 7.0),
        (4, 4.0),
        ("-2", 0.0),
        ("Wed, 01 May 2024 12:00:30 GMT", 30.0),
        ("Wed, 01 May 2024 11:59:00 GMT", 0.0),  # a date in the past: retry now
        (None, None),
        ("", None),
        ("soon", None),
        ("inf", None),
        ("nan", None),
        (True, None),
        ("Wed, 99 Foo 2024 12:00:30 GMT", None),
    ],
)
def test_parse_retry_after(value, expected):
    assert parse_retry_after(value, now=NOW) == expected


def test_parse_retry_after_http_date_against_the_clock():
    when = datetime.now(timezone.utc) + timedelta(seconds=120)
    wait = parse_retry_after(when.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert wait is not None and 115 <= wait <= 120


# ---------------------------------------------------------------------- backoff
def test_backoff_grows_exponentially_within_jitter_bounds_and_caps():
    policy = RetryPolicy(base_delay=0.5, max_delay=8.0, seed=3)
    for attempt in range(12):
        top = min(8.0, 0.5 * 2**attempt)
        draws = [policy.delay(attempt) for _ in range(200)]
        assert all(top / 2 <= d <= top for d in draws)
        assert max(draws) - min(draws) > top / 4  # it is jittered, not a fixed schedule
    assert policy.ceiling(100) == 8.0
    assert RetryPolicy(seed=1).delay(2) == RetryPolicy(seed=1).delay(2)


def test_backoff_waits_at_least_retry_after():
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0, seed=0)
    assert policy.delay(0, retry_after=10.0) == 10.0
    assert 0.25 <= policy.delay(0, retry_after=0.0) <= 0.5  # Retry-After 0 still backs off a little


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"base_delay": 0}, "backoff_base"),
        ({"max_delay": float("inf")}, "backoff_max"),
        ({"base_delay": 2.0, "max_delay": 1.0}, "at least backoff_base"),
        ({"max_retry_after": -3}, "max_retry_after"),
    ],
)
def test_retry_policy_rejects_bad_settings(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        RetryPolicy(**kwargs)


# ---------------------------------------------------------------------- rate limiter
def test_rate_limiter_spaces_requests_with_an_injected_clock():
    now = [100.0]
    limiter = RateLimiter(600, clock=lambda: now[0])  # one start every 0.1 s
    waits = [limiter.reserve() for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    now[0] += 10.0  # idle: no burst credit accumulates
    assert limiter.reserve() == 0.0 and limiter.reserve() == pytest.approx(0.1)


def test_rate_limiter_never_exceeds_rpm_in_any_minute():
    now = [0.0]
    limiter = RateLimiter(120, clock=lambda: now[0])
    starts = []
    for i in range(1000):  # 1000 workers asking at irregular times, each starting when told
        now[0] = max(now[0], i * 0.01)
        starts.append(now[0] + limiter.reserve())
    starts.sort()
    for i, t in enumerate(starts):
        in_window = sum(1 for s in starts[i:] if s < t + 60.0)
        assert in_window <= 120
    assert starts[-1] - starts[0] == pytest.approx(999 * 0.5)


def test_rate_limiter_is_thread_safe():
    limiter = RateLimiter(60_000, clock=lambda: 0.0)
    out: list[float] = []
    lock = threading.Lock()

    def work():
        mine = [limiter.reserve() for _ in range(250)]
        with lock:
            out.extend(mine)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == pytest.approx([i * 0.001 for i in range(1000)])
    with pytest.raises(ConfigError, match="max_rpm"):
        RateLimiter(0)


# ---------------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"device": "cuda"}, "device"),
        ({"dtype": "bfloat16"}, "dtype"),
        ({"mode": "text"}, "mode must be one of"),
        ({"top_logprobs": 0}, "top_logprobs"),
        ({"top_logprobs": 21}, "top_logprobs"),
        ({"top_logprobs": True}, "top_logprobs"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"max_rpm": -5}, "max_rpm"),
        ({"max_rpm": "fast"}, "max_rpm"),
        ({"max_retries": -1}, "max_retries"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"batch_tokens": 0}, "batch_tokens"),
        ({"api_base": "ftp://example.org"}, "http"),
        ({"api_base": "http://user:pw@example.org/v1"}, "credentials"),
        ({"api_base": "http://example.org/v1?key=abc"}, "credentials"),
        ({"api_key": "sk-oops"}, "environment"),
        ({"extra_headers": {"Authorization": "Bearer x"}}, "environment"),
        ({"temperature": 0.5}, "set by the web-API backend"),
        ({"num_retries": 3}, "set by the web-API backend"),
        ({"share_prefixes": False}, "local backends"),
        ({"metadata": object()}, "JSON"),
        ({"api_key_env": "sk-this-is-a-key"}, "NAME of an environment variable"),
        ({"api_key_env": "FOLKSCOPE_UNSET_VARIABLE_X"}, "not set"),
        ({"assistant_prefill": "yes"}, "assistant_prefill"),
        ({"backoff_base": 5.0, "backoff_max": 1.0}, "backoff_max"),
    ],
)
def test_options_are_validated_with_clear_errors(key, options, match):
    with pytest.raises(ConfigError, match=match):
        backend(api_base=options.pop("api_base", "http://127.0.0.1:9/v1"), **options)


def test_model_must_be_a_litellm_id(key):
    for bad in ("", "  openai/x", None, 3):
        with pytest.raises(ConfigError, match="model"):
            backend(bad)


def test_a_missing_key_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as info:
        backend(api_base="http://127.0.0.1:9/v1")
    assert "any value works for a local server" in str(info.value)
    monkeypatch.setenv("MY_SERVER_KEY", "value-from-env-123")
    assert backend(api_base="http://127.0.0.1:9/v1", api_key_env="MY_SERVER_KEY").api_key_env == "MY_SERVER_KEY"


def test_engine_from_model_builds_the_backend_and_refuses_device(key, tmp_path):
    engine = Engine.from_model(
        "openai/fake", backend="litellm", api_base="http://127.0.0.1:9/v1", cache_dir=tmp_path, max_rpm=60
    )
    assert engine.backend.name == "litellm" and engine.backend.max_rpm == 60.0
    with pytest.raises(ConfigError, match="device"):
        Engine.from_model("openai/fake", backend="api", device="cpu", use_cache=False)


def test_identity_and_repr_hold_no_key(key, monkeypatch):
    monkeypatch.setenv("MY_SERVER_KEY", SECRET + "-other")
    b = backend(
        api_base="http://127.0.0.1:9/v1/", api_key_env="MY_SERVER_KEY", top_logprobs=5, mode="chat", user="run-7"
    )
    ident = b.identity()
    assert ident["model"]["name"] == "openai/fake" and ident["api_base"] == "http://127.0.0.1:9/v1"
    assert ident["mode"] == "chat" and ident["top_logprobs"] == 5 and ident["options"] == {"user": "run-7"}
    text = json.dumps(ident) + repr(b) + json.dumps(b.stats.to_dict()) + json.dumps(b.capabilities().to_dict())
    assert SECRET not in text and "MY_SERVER_KEY" not in json.dumps(ident)
    assert ident != backend(api_base="http://127.0.0.1:9/v1", top_logprobs=20).identity()
    stats = b.stats.to_dict()
    for name in (
        "requests",
        "retries",
        "rate_limited",
        "timeouts",
        "server_errors",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
        "cost_known",
        "missing_candidates",
        "marked_rows",
        "api_calls",
    ):
        assert name in stats


# ---------------------------------------------------------------------- capabilities, before any request
def test_a_model_without_logprobs_is_refused_before_any_request(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-unit-test-123")
    b = backend("anthropic/claude-3-5-sonnet-20240620")
    caps = b.capabilities()
    assert caps.logprobs is False and "chain-of-thought" in caps.scoring_modes
    engine = Engine(b, cache=None, progress=False)
    with pytest.raises(BackendError, match="cannot return log-probabilities") as info:
        engine.score([ScoreRequest(ChatPrompt([("user", "Income?")]), ("A", "B"))])
    assert "chain-of-thought" in str(info.value) and "No request was sent" in str(info.value)
    assert b.stats.api_calls == 0


def test_capabilities_of_known_and_custom_models(key):
    hosted = backend("openai/gpt-4o-mini")
    caps = hosted.capabilities()
    assert caps.logprobs is True and caps.completions is False and caps.cost_known is True
    engine = Engine(hosted, cache=None, progress=False)
    with pytest.raises(ConfigError, match="no plain-text completions endpoint"):  # plain text, chat-only model
        engine.score([ScoreRequest("Q? Answer:", ("A", "B"))])
    with pytest.raises(ConfigError, match="completions endpoint"):
        backend("openai/gpt-4o-mini", mode="completions")
    custom = backend(api_base="http://127.0.0.1:9/v1").capabilities()
    assert custom.completions is True and custom.assistant_prefill is False and custom.cost_known is False
    assert hosted.stats.api_calls == 0


def test_token_counts_never_touch_the_network(key, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("token counting tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    plain = backend("openai/gpt-4o-mini")
    chat = ChatPrompt([("system", "Be brief."), ("user", "How old is the respondent?")], prefill="Answer:")
    counts = plain.count_tokens(["The respondent is 34 years old.", chat])
    assert counts[0] == 8 and counts[1] > 10
    assert plain.capabilities().exact_token_counts
    llama = backend(
        "openai/meta-llama/Llama-3-8B-Instruct", api_base="http://127.0.0.1:9/v1"
    )  # litellm would download its tokenizer
    assert not llama.capabilities().exact_token_counts
    assert llama.count_tokens(["The respondent is 34 years old."]) == [8]
    assert llama.tokenizer.decode(llama.tokenizer("hello world")["input_ids"]) == "hello world"


def test_render_and_single_tokens(key):
    b = backend(api_base="http://127.0.0.1:9/v1")
    assert b.render("plain") == "plain"
    assert b.render(ChatPrompt([("user", "Hi")], prefill="Answer:")) == "[user]\nHi\n[assistant]\nAnswer:"
    assert b.is_single_token(" A") and not b.is_single_token("")


@pytest.mark.parametrize(
    "name",
    [
        "folkscope.engine.backends.api",
        "folkscope.engine.backends._api_billing",
        "folkscope.engine.backends._api_support",
        "folkscope.engine.backends._api_transport",
        "folkscope.engine.backends._api_wire",
        "folkscope.testing.openai_server",
        "folkscope.engine.ratelimit",
    ],
)
def test_modules_export_their_public_names_and_their_examples_run(name):
    module = importlib.import_module(name)
    public = {
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and getattr(obj, "__module__", name) == name
        and (inspect.isclass(obj) or inspect.isfunction(obj))
    }
    assert public <= set(module.__all__) and all(hasattr(module, n) for n in module.__all__)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_echo_offsets_that_drift_give_nan_never_another_tokens_value():
    """A server reporting each byte of a non-ASCII character as its own one-character token drifts its text offsets;
    the tokens at the continuation's offsets then do not spell it, and the score is NaN rather than a wrong number."""
    from folkscope.engine.backends._api_wire import parse_echo

    prompt, cont = "a\u2013b:", " No"
    honest = {
        "text": prompt + cont,
        "logprobs": {
            "tokens": ["a", "\u2013", "b", ":", " N", "o"],
            "token_logprobs": [None, -1.0, -2.0, -3.0, -4.0, -5.0],
            "text_offset": [0, 1, 2, 3, 4, 6],
        },
    }
    assert parse_echo({"choices": [honest]}, [(prompt, cont)], model="m") == [(-9.0, 2, 4)]
    drifting = {
        "text": prompt + cont,
        "logprobs": {
            "tokens": ["a", "\ufffd", "\ufffd", "\ufffd", "b", ":", " N", "o"],
            "token_logprobs": [None, -1.0, -1.0, -1.0, -2.0, -3.0, -4.0, -5.0],
            "text_offset": [0, 1, 2, 3, 4, 5, 6, 8],
        },
    }
    ((value, n_tokens, _),) = parse_echo({"choices": [drifting]}, [(prompt, cont)], model="m")
    assert math.isnan(value) and n_tokens == 0
