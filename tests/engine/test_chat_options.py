"""Chat-template options (thinking mode) reach the template and the cache key."""

from __future__ import annotations

import pytest

from folkscope.engine import ChatPrompt, ScoreRequest, request_key
from folkscope.engine.backends.base import render_prompt
from folkscope.engine.requests import prompt_from_dict, prompt_to_dict
from folkscope.errors import ConfigError


class RecordingTokenizer:
    chat_template = "stub"

    def __init__(self):
        self.calls = []

    def apply_chat_template(self, conversation, tokenize=False, add_generation_prompt=True, **kwargs):
        self.calls.append(kwargs)
        return "<chat>" + conversation[-1]["content"] + "</chat>"


def test_enable_thinking_is_passed_only_when_set():
    tok = RecordingTokenizer()
    assert render_prompt(tok, ChatPrompt([("user", "Q")], prefill="A:")) == "<chat>Q</chat>A:"
    render_prompt(tok, ChatPrompt([("user", "Q")], enable_thinking=True))
    render_prompt(tok, ChatPrompt([("user", "Q")], enable_thinking=False))
    assert tok.calls == [{}, {"enable_thinking": True}, {"enable_thinking": False}]


def test_thinking_mode_changes_the_cache_key_and_round_trips():
    plain, thinking = ChatPrompt([("user", "Q")]), ChatPrompt([("user", "Q")], enable_thinking=True)
    assert request_key(ScoreRequest(plain, (" A",))) != request_key(ScoreRequest(thinking, (" A",)))
    assert prompt_from_dict(prompt_to_dict(thinking)) == thinking
    assert "enable_thinking" not in prompt_to_dict(plain)  # keys of prompts without the option are unchanged


def test_bad_thinking_flag():
    with pytest.raises(ConfigError, match="enable_thinking"):
        ChatPrompt([("user", "Q")], enable_thinking="yes")  # type: ignore[arg-type]
