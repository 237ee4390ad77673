"""Chat prompts rendered through a locally trained tokenizer's own chat template."""

from __future__ import annotations

import pytest

from folkscope.data import load_bundled
from folkscope.engine import ChatPrompt
from folkscope.errors import ConfigError
from folkscope.prompting import PromptConfig, PromptRenderer, render_chat, render_chats
from folkscope.tasks import get_task


@pytest.fixture(scope="module")
def X():
    return load_bundled("acs-income-10").drop(columns="PINCP>50000")


def test_locally_trained_tokenizer_renders_chat_multiple_choice(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    cfg = PromptConfig(use_chat_template=True, system_prompt="You are a demographer.")
    rendered = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)[0]
    text = render_chat(rendered.to_prompt(1), tokenizer)
    assert text == (
        "<|system|>\nYou are a demographer.<|end|>\n"
        "<|user|>\n" + rendered.user_text(1) + "<|end|>\n"
        "<|assistant|>\n<think>\n\n</think>\n\n"
        "Answer:"
    )
    assert rendered.user_text(1).endswith("A. Above $50,000.\nB. Below $50,000.")
    assert len(tokenizer(text)["input_ids"]) > 20


def test_locally_trained_tokenizer_chat_without_system_prompt_and_custom_prefill(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    cfg = PromptConfig(use_chat_template=True, numeric_risk_prompting=True, chat_prompt="Estimate: 0.")
    rendered = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)[0]
    text = render_chat(rendered.to_prompt(), tokenizer)
    assert text.startswith("<|user|>\nThe following data corresponds to a survey respondent.")
    assert text.endswith("above $50,000?<|end|>\n<|assistant|>\n<think>\n\n</think>\n\nEstimate: 0.")


def test_locally_trained_tokenizer_thinking_mode(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    with pytest.warns(UserWarning):
        thinking = PromptConfig(enable_thinking=True)
    on = render_chat(PromptRenderer(get_task("ACSIncome").with_wording("codebook"), thinking).render(X)[0].to_prompt(), tokenizer)
    off = render_chat(PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig(cot_prompting=True)).render(X)[0].to_prompt(), tokenizer)
    assert on.endswith("between 0 and 100.<|end|>\n<|assistant|>\n")
    assert off.endswith("between 0 and 100.<|end|>\n<|assistant|>\n<think>\n\n</think>\n\n")


def test_text_prompts_pass_through_and_batches_render(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    batch = PromptRenderer(get_task("ACSIncome").with_wording("codebook")).render(X)
    assert render_chats(batch.prompts(0), tokenizer) == list(batch.full_texts(0))
    chat = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig(use_chat_template=True)).render(X)
    texts = render_chats(chat.prompts(1), tokenizer)
    assert len(texts) == len(X) and all(t.endswith("<|assistant|>\n<think>\n\n</think>\n\nAnswer:") for t in texts)


def test_tokenizer_without_chat_template_is_a_clear_error(local_tokenizer):
    tokenizer, _ = local_tokenizer

    class Base:
        chat_template = None
        name_or_path = "base-model"

    with pytest.raises(ConfigError, match="no chat template"):
        render_chat(ChatPrompt(({"role": "user", "content": "hi"},)), Base())  # type: ignore[arg-type]
    assert render_chat("plain", Base()) == "plain"
