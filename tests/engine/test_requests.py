"""Request and response types: validation, canonical form, stable hashing."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from folkscope.engine.requests import (
    RESULT_TYPES,
    ChatPrompt,
    GenerateRequest,
    GenerateResult,
    GenerationSettings,
    Message,
    NextTokenRequest,
    NextTokenResult,
    PrefixGroupRequest,
    PrefixGroupResult,
    ScoreRequest,
    ScoreResult,
    prompt_from_dict,
    prompt_to_dict,
    request_key,
)
from folkscope.errors import ConfigError


def test_request_key_is_sha256_of_canonical_json():
    req = ScoreRequest("Q:", (" A", " B"))
    expected = hashlib.sha256(b'{"candidates":[" A"," B"],"kind":"score","prompt":"Q:"}').hexdigest()
    assert request_key(req) == expected


def test_request_key_pinned_value():
    # a changed key silently invalidates every user's cache: pin one
    assert (
        request_key(NextTokenRequest("x", ("0", "1")))
        == hashlib.sha256(
            json.dumps(
                {"kind": "next_token", "prompt": "x", "tokens": ["0", "1"]}, sort_keys=True, separators=(",", ":")
            ).encode()
        ).hexdigest()
    )


def test_keys_differ_by_kind_and_content():
    keys = {
        request_key(ScoreRequest("Q", ("A",))),
        request_key(ScoreRequest("Q", ("B",))),
        request_key(ScoreRequest("Q ", ("A",))),
        request_key(NextTokenRequest("Q", ("A",))),
        request_key(ScoreRequest(ChatPrompt([("user", "Q")]), ("A",))),
        request_key(ScoreRequest(ChatPrompt([("user", "Q")], prefill="x"), ("A",))),
        request_key(PrefixGroupRequest("Q", ("s",), ("A",))),
        request_key(GenerateRequest("Q")),
        request_key(GenerateRequest("Q", GenerationSettings(seed=1))),
    }
    assert len(keys) == 9


def test_lists_and_dict_messages_are_normalised():
    a = ScoreRequest(ChatPrompt([{"role": "user", "content": "hi"}]), [" A", " B"])
    b = ScoreRequest(ChatPrompt((Message("user", "hi"),)), (" A", " B"))
    assert a == b and hash(a) == hash(b) and request_key(a) == request_key(b)


@pytest.mark.parametrize(
    ("build", "parameter"),
    [
        (lambda: ScoreRequest("", ("A",)), "prompt"),
        (lambda: ScoreRequest(3, ("A",)), "prompt"),
        (lambda: ScoreRequest("Q", ()), "candidates"),
        (lambda: ScoreRequest("Q", "AB"), "candidates"),
        (lambda: ScoreRequest("Q", ("A", "A")), "candidates"),
        (lambda: ScoreRequest("Q", ("A", "")), "candidates"),
        (lambda: NextTokenRequest("Q", ()), "tokens"),
        (lambda: PrefixGroupRequest("P", (), ("A",)), "suffixes"),
        (lambda: ChatPrompt([]), "messages"),
        (lambda: ChatPrompt("hello"), "messages"),
        (lambda: Message("robot", "x"), "role"),
        (lambda: GenerationSettings(max_new_tokens=0), "max_new_tokens"),
        (lambda: GenerationSettings(temperature=-1.0), "temperature"),
        (lambda: GenerationSettings(temperature=float("nan")), "temperature"),
        (lambda: GenerationSettings(seed=-1), "seed"),
        (lambda: GenerationSettings(stop=("",)), "stop"),
        (lambda: GenerateRequest("Q", settings={"max_new_tokens": 3}), "settings"),
    ],
)
def test_invalid_requests_name_the_parameter(build, parameter):
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.parameter == parameter
    assert isinstance(info.value, ValueError)


def test_requests_are_frozen():
    req = ScoreRequest("Q", ("A",))
    with pytest.raises(AttributeError):
        req.prompt = "other"  # type: ignore[misc]


def test_generation_settings_greedy_flag():
    assert GenerationSettings().greedy
    assert not GenerationSettings(temperature=0.7).greedy
    assert GenerationSettings(temperature=1).temperature == 1.0


def test_score_result_probabilities():
    res = ScoreResult((np.log(0.2), np.log(0.6)), (1, 1), 5)
    np.testing.assert_allclose(res.probs, [0.2, 0.6])
    np.testing.assert_allclose(res.normalized(), [0.25, 0.75])
    assert np.isnan(ScoreResult((-np.inf, -np.inf), (1, 1), 5).normalized()).all()


@pytest.mark.parametrize(
    "result",
    [
        ScoreResult((-0.1, -2.5), (1, 3), 7),
        PrefixGroupResult((ScoreResult((-0.1,), (1,), 4), ScoreResult((-0.3,), (1,), 5))),
        NextTokenResult((-0.5, -1.0, -3.0), 9),
        GenerateResult("four", "stop", 5, 2),
    ],
)
def test_results_round_trip_through_json(result):
    cls = type(result)
    assert cls.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    assert cls in RESULT_TYPES.values()


@given(
    st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), st.text()), min_size=1, max_size=4), st.text()
)
def test_prompt_dict_round_trip(messages, prefill):
    prompt = ChatPrompt(messages, prefill=prefill)
    assert prompt_from_dict(json.loads(json.dumps(prompt_to_dict(prompt)))) == prompt


@given(st.text(min_size=1), st.lists(st.text(min_size=1), min_size=1, max_size=5, unique=True))
def test_equal_requests_have_equal_keys(prompt, candidates):
    assert request_key(ScoreRequest(prompt, tuple(candidates))) == request_key(ScoreRequest(prompt, list(candidates)))
