"""Chat prompts through the default model's real tokenizer (SmolLM2-135M-Instruct, shipped offline)."""

from __future__ import annotations

import pytest

from folkscope.data import load_bundled
from folkscope.prompting import PromptConfig, PromptRenderer, load_tokenizer, render_chat


@pytest.fixture(scope="module")
def smollm_tokenizer():
    from folkscope.engine import resolve_model

    return load_tokenizer(resolve_model("default").path)


@pytest.fixture(scope="module")
def rendered():
    X = load_bundled("acs-income-10").drop(columns="PINCP>50000")
    return PromptRenderer("ACSIncome", PromptConfig(use_chat_template=True)).render(X)[0]


def test_default_system_turn_user_turn_and_answer_prefill(smollm_tokenizer, rendered):
    text = render_chat(rendered.to_prompt(0), smollm_tokenizer)
    # folktexts' defaults: its multiple-choice system prompt (ending in a line break) and its prefill
    assert text.startswith(
        "<|im_start|>system\nYou are a helpful assistant. You answer multiple-choice questions based on the information "
        "provided. Respond with a single answer choice.\n<|im_end|>\n"
        "<|im_start|>user\nThe following data corresponds to a survey respondent. The survey was conducted among "
        "US residents in 2018."
    )
    assert text.endswith(
        "Question: What is this person's estimated yearly income?\nA. Below $50,000.\nB. Above $50,000.<|im_end|>\n"
        "<|im_start|>assistant\nIf had to select one of the options, my answer would be"
    )


def test_no_system_prompt_lets_the_template_default_in(smollm_tokenizer):
    """system_prompt=None: no system message of ours, so SmolLM2's template adds its own (folkscope's old default)."""
    X = load_bundled("acs-income-10").drop(columns="PINCP>50000")
    cfg = PromptConfig(use_chat_template=True, system_prompt=None, chat_prompt="Answer:")
    text = render_chat(PromptRenderer("ACSIncome", cfg).render(X)[0].to_prompt(0), smollm_tokenizer)
    assert text.startswith(
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
    )
    assert text.endswith("B. Above $50,000.<|im_end|>\n<|im_start|>assistant\nAnswer:")


def test_custom_system_prompt_replaces_the_template_default(smollm_tokenizer):
    X = load_bundled("acs-income-10").drop(columns="PINCP>50000")
    cfg = PromptConfig(use_chat_template=True, system_prompt="You are a demographer.")
    text = render_chat(PromptRenderer("ACSIncome", cfg).render(X)[0].to_prompt(1), smollm_tokenizer)
    assert text.startswith("<|im_start|>system\nYou are a demographer.<|im_end|>\n<|im_start|>user\n")
    assert "SmolLM" not in text and text.endswith(
        "A. Above $50,000.\nB. Below $50,000.<|im_end|>\n<|im_start|>assistant\nIf had to select one of the options, my answer would be"
    )
