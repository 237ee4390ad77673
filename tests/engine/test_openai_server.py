"""The local OpenAI-compatible test server: wire format, numbers from its source, faults, bounds.

Plain ``http.client`` here (no litellm), so a failure points at the server,
not at the client stack.
"""

from __future__ import annotations

import http.client
import json
import math
import time
from urllib.parse import urlsplit

import numpy as np
import pytest

from folkscope.engine.backends.fake import FakeBackend
from folkscope.engine.ratelimit import parse_retry_after
from folkscope.errors import ConfigError
from folkscope.testing import FAULT_KINDS, FakeSource, FaultPlan, LocalOpenAIServer, body_key


def post(
    url: str, path: str, body: object, *, key: str | None = None, timeout: float = 10.0
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        conn.request("POST", parts.path + path, json.dumps(body), headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.fixture()
def fake() -> FakeBackend:
    return FakeBackend(next_token_probs=lambda text: {" A": 0.4, "B": 0.3} if text.endswith("Answer:") else None)


def test_echo_returns_the_sources_log_probabilities_at_every_prompt_token(fake):
    server = LocalOpenAIServer(FakeSource(fake), max_lifetime=30)
    with server as url:
        status, _, raw = post(
            url,
            "/completions",
            {
                "model": "fake",
                "prompt": ["Q? Answer: A", "Hi"],
                "echo": True,
                "logprobs": 3,
                "max_tokens": 1,
                "temperature": 0,
            },
        )
    assert status == 200
    data = json.loads(raw)
    choice = data["choices"][0]
    lp = choice["logprobs"]
    ids = fake.tokenizer.encode("Q? Answer: A")
    assert lp["token_logprobs"][0] is None and len(lp["tokens"]) == len(ids) + 1  # prompt tokens + one generated
    for i in range(1, len(ids)):
        assert lp["token_logprobs"][i] == pytest.approx(float(fake.logprobs(ids[:i])[ids[i]]), abs=1e-12)
    assert "".join(lp["tokens"][: len(ids)]) == "Q? Answer: A"
    assert lp["text_offset"][-1] == len("Q? Answer: A")  # the generated token starts after the echo
    top = lp["top_logprobs"][1]
    assert len(top) == 3 and max(top.values()) == pytest.approx(float(fake.logprobs(ids[:1]).max()))
    assert choice["text"].startswith("Q? Answer: A")
    assert data["usage"]["prompt_tokens"] == len(ids) + len(fake.tokenizer.encode("Hi"))
    assert data["usage"]["completion_tokens"] == 2
    assert [c["index"] for c in data["choices"]] == [0, 1]


def test_chat_top_logprobs_and_assistant_prefill_continue_the_rendered_conversation(fake):
    server = LocalOpenAIServer(FakeSource(fake), max_lifetime=30)
    messages = [{"role": "user", "content": "Income?"}, {"role": "assistant", "content": "Answer:"}]
    with server as url:
        status, _, raw = post(
            url,
            "/chat/completions",
            {
                "model": "fake",
                "messages": messages,
                "logprobs": True,
                "top_logprobs": 5,
                "max_tokens": 1,
                "temperature": 0,
            },
        )
        assert (
            post(url, "/chat/completions", {"messages": messages, "top_logprobs": 5})[0] == 400
        )  # top_logprobs needs logprobs
    assert status == 200
    data = json.loads(raw)
    entry = data["choices"][0]["logprobs"]["content"][0]
    tops = [(t["token"], t["logprob"]) for t in entry["top_logprobs"]]
    assert [t for t, _ in tops[:2]] == [" A", "B"]  # fixed by the rule after "Answer:"
    assert tops[0][1] == pytest.approx(math.log(0.4)) and tops[1][1] == pytest.approx(math.log(0.3))
    assert [v for _, v in tops] == sorted((v for _, v in tops), reverse=True)
    text = fake.tokenizer.apply_chat_template([messages[0]], add_generation_prompt=True) + "Answer:"
    assert data["usage"]["prompt_tokens"] == len(fake.tokenizer.encode(text))
    assert data["choices"][0]["message"]["content"] == " A" and data["choices"][0]["finish_reason"] == "length"


def test_greedy_generation_matches_the_fake_backend_and_reports_stop_strings(fake):
    from folkscope.engine import Engine, GenerateRequest, GenerationSettings

    server = LocalOpenAIServer(FakeSource(fake), max_lifetime=30)
    prompt = "Row 3 says:"
    with server as url:
        _, _, raw = post(url, "/completions", {"prompt": prompt, "max_tokens": 6, "temperature": 0})
        data = json.loads(raw)
        expected = Engine(fake, cache=None, progress=False).generate(
            [GenerateRequest(prompt, GenerationSettings(max_new_tokens=6))]
        )[0]
        assert data["choices"][0]["text"] == expected.text
        stop = expected.text[2:4]
        _, _, raw = post(url, "/completions", {"prompt": prompt, "max_tokens": 6, "temperature": 0, "stop": [stop]})
    choice = json.loads(raw)["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["stop_reason"] == stop
    assert choice["text"] == expected.text[: expected.text.find(stop)]


def test_models_endpoint_and_bad_requests(fake):
    server = LocalOpenAIServer(FakeSource(fake), max_lifetime=30)
    with server as url:
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        conn.request("GET", parts.path + "/models")
        models = json.loads(conn.getresponse().read())
        conn.close()
        assert models["data"][0]["id"] == "fake"
        assert post(url, "/completions", {"model": "other", "prompt": "x"})[0] == 404
        assert post(url, "/completions", {"prompt": ""})[0] == 400
        assert post(url, "/completions", {"prompt": "x", "logprobs": 99})[0] == 400
        assert post(url, "/chat/completions", {"messages": [{"role": "robot", "content": "x"}]})[0] == 400
    assert server.total_answered == 0


def test_api_key_is_checked_when_configured(fake):
    server = LocalOpenAIServer(FakeSource(fake), api_key="sk-expected-1", max_lifetime=30)
    with server as url:
        assert post(url, "/completions", {"prompt": "x", "max_tokens": 1})[0] == 401
        assert post(url, "/completions", {"prompt": "x", "max_tokens": 1}, key="sk-wrong")[0] == 401
        assert post(url, "/completions", {"prompt": "x", "max_tokens": 1}, key="sk-expected-1")[0] == 200
    assert (server.authorized, server.unauthorized) == (1, 2)


def test_scheduled_faults_of_every_kind(fake):
    kinds = ["429", "503", "500", "truncated", "no_logprobs", "400", "401", "403", "404", "422", "timeout"]
    plan = FaultPlan(schedule=dict(enumerate(kinds)), retry_after=2, stall_seconds=0.3)
    server = LocalOpenAIServer(FakeSource(fake), faults=plan, max_lifetime=30)
    body = {"prompt": "Q? Answer:", "echo": True, "logprobs": 1, "max_tokens": 1}
    seen = []
    with server as url:
        for kind in kinds[:-1]:
            status, headers, raw = post(url, "/completions", body)
            seen.append((kind, status, headers.get("retry-after"), raw))
        with pytest.raises((TimeoutError, OSError)):
            post(url, "/completions", body, timeout=0.1)
        status, _, raw = post(url, "/completions", body)  # the schedule is over: a normal answer
    assert status == 200 and json.loads(raw)["choices"][0]["logprobs"] is not None
    by_kind = {k: (s, h, r) for k, s, h, r in seen}
    assert by_kind["429"][:2] == (429, "2") and by_kind["503"][:2] == (503, "2")
    assert by_kind["500"][0] == 500 and by_kind["500"][1] is None
    assert by_kind["truncated"][0] == 200
    with pytest.raises(ValueError):
        json.loads(by_kind["truncated"][2])
    assert by_kind["no_logprobs"][0] == 200 and json.loads(by_kind["no_logprobs"][2])["choices"][0]["logprobs"] is None
    for code in ("400", "401", "403", "404", "422"):
        assert by_kind[code][0] == int(code)
    key = body_key(body)
    assert server.received[key] == len(kinds) + 1
    assert server.answered[key] == 1  # the truncated and logprob-less answers are faults, not answers
    assert dict(server.faults) == {k: 1 for k in kinds}


def test_retry_after_as_http_date(fake):
    plan = FaultPlan(schedule={0: "429"}, retry_after="http-date", retry_after_seconds=30)
    with LocalOpenAIServer(FakeSource(fake), faults=plan, max_lifetime=30) as url:
        status, headers, _ = post(url, "/completions", {"prompt": "x", "max_tokens": 1})
    assert status == 429
    wait = parse_retry_after(headers["retry-after"])
    assert wait is not None and 25 <= wait <= 31


def test_fault_rate_depends_on_body_and_attempt_not_arrival_order():
    plan = FaultPlan(rate=0.3, max_faults_per_body=2, seed=1)
    keys = [body_key({"prompt": f"row {i}"}) for i in range(2000)]
    first = [plan.choose(n, k, 0, 0) for n, k in enumerate(keys)]
    assert [plan.choose(0, k, 0, 0) for k in keys] == first  # arrival number does not matter
    share = sum(f is not None for f in first) / len(keys)
    assert 0.26 < share < 0.34
    assert {f for f in first if f is not None} == {"429", "500", "503", "timeout", "truncated"}
    assert all(plan.choose(0, k, 2, 0) is None for k in keys)  # a third attempt always succeeds
    assert FaultPlan(fail_after_answers=5).choose(0, keys[0], 0, 5) == "401"
    with pytest.raises(ConfigError, match="unknown fault kinds"):
        FaultPlan(kinds={"418": 1.0})
    with pytest.raises(ConfigError, match="rate"):
        FaultPlan(rate=1.5)
    assert set(FAULT_KINDS) >= {"429", "timeout", "truncated", "no_logprobs"}


def test_server_binds_loopback_and_stops_by_itself(fake):
    server = LocalOpenAIServer(FakeSource(fake), idle_timeout=0.3, max_lifetime=30)
    url = server.start()
    try:
        assert urlsplit(url).hostname == "127.0.0.1"
        assert server._httpd is not None and server._httpd.server_address[0] == "127.0.0.1"
        deadline = time.monotonic() + 5
        while server.running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not server.running  # idle for 0.3 s: stopped
    finally:
        server.stop()
    budget = LocalOpenAIServer(FakeSource(fake), max_requests=2, max_lifetime=30)
    with budget as url:
        codes = [post(url, "/completions", {"prompt": f"x{i}", "max_tokens": 1})[0] for i in range(3)]
        deadline = time.monotonic() + 5
        while budget.running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not budget.running
    assert codes == [200, 200, 503]
    with pytest.raises(ConfigError, match="not running"):
        _ = LocalOpenAIServer(FakeSource(fake)).url
    with pytest.raises(ConfigError, match="latency"):
        LocalOpenAIServer(FakeSource(fake), latency=-1)


def test_hold_after_keeps_requests_in_flight_until_released(fake):
    """A test that must act while requests are in flight holds them, rather than betting on a latency (issue 28, 20)."""
    import threading

    body = {"model": "fake", "prompt": "Q? Answer:", "max_tokens": 1, "logprobs": 2}
    srv = LocalOpenAIServer(FakeSource(fake), hold_after=1, max_lifetime=60)
    with srv as url:
        assert post(url, "/completions", body)[0] == 200  # the first request is answered at once
        statuses: list[int] = []
        late = [
            threading.Thread(target=lambda i=i: statuses.append(post(url, "/completions", {**body, "seed": i})[0]))
            for i in range(2)
        ]
        for thread in late:
            thread.start()
        deadline = time.monotonic() + 30
        while srv.held < 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.2)
        assert srv.total_answered == 1 and not statuses  # held: received, not answered
        srv.release()
        for thread in late:
            thread.join(timeout=30)
        assert statuses == [200, 200] and srv.total_answered == 3 and srv.held == 0
        assert post(url, "/completions", {**body, "seed": 9})[0] == 200  # released for good
    with pytest.raises(ConfigError, match="hold_after"):
        LocalOpenAIServer(FakeSource(fake), hold_after=-1)


def test_transformers_source_matches_the_model_tiny_random_model(llama_backend):
    pytest.importorskip("torch")
    from folkscope.engine import Engine, ScoreRequest
    from folkscope.testing import TransformersSource

    source = TransformersSource.from_backend(llama_backend, model_id="tiny")
    prompt, cont = "- Age: 34 years old.\nAnswer:", " A"
    with LocalOpenAIServer(source, max_lifetime=30) as url:
        _, _, raw = post(
            url,
            "/completions",
            {"model": "tiny", "prompt": [prompt + cont], "echo": True, "logprobs": 1, "max_tokens": 1},
        )
    lp = json.loads(raw)["choices"][0]["logprobs"]
    start = lp["text_offset"].index(len(prompt))
    expected = Engine(llama_backend, cache=None, progress=False).score([ScoreRequest(prompt, (cont,))])[0]
    assert lp["token_logprobs"][start] == pytest.approx(expected.logprobs[0], abs=1e-5)
    assert np.isfinite(lp["token_logprobs"][1:]).all()
