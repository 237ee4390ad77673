"""Chat prompts rendered through a locally trained tokenizer's own chat template."""

from __future__ import annotations

from dataclasses import replace

import pytest

from folkscope.data import load_bundled
from folkscope.engine import ChatPrompt
from folkscope.errors import ConfigError
from folkscope.prompting import (
    PromptConfig,
    PromptRenderer,
    fit_chat_config,
    render_chat,
    render_chats,
    supports_system_role,
)
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
        "If had to select one of the options, my answer would be"
    )
    assert rendered.user_text(1).endswith("A. Above $50,000.\nB. Below $50,000.")
    assert len(tokenizer(text)["input_ids"]) > 20


def test_locally_trained_tokenizer_chat_without_system_prompt_and_custom_prefill(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    cfg = PromptConfig(
        use_chat_template=True, numeric_risk_prompting=True, system_prompt=None, chat_prompt="Estimate: 0."
    )
    rendered = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), cfg).render(X)[0]
    text = render_chat(rendered.to_prompt(), tokenizer)
    assert text.startswith("<|user|>\nThe following data corresponds to a survey respondent.")
    assert text.endswith("above $50,000?<|end|>\n<|assistant|>\n<think>\n\n</think>\n\nEstimate: 0.")


def test_locally_trained_tokenizer_thinking_mode(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    with pytest.warns(UserWarning):
        thinking = PromptConfig(enable_thinking=True)
    on = render_chat(
        PromptRenderer(get_task("ACSIncome").with_wording("codebook"), thinking).render(X)[0].to_prompt(), tokenizer
    )
    off = render_chat(
        PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig(cot_prompting=True))
        .render(X)[0]
        .to_prompt(),
        tokenizer,
    )
    assert on.endswith("between 0 and 100.\n\nReasoning:<|end|>\n<|assistant|>\n")
    assert off.endswith("between 0 and 100.\n\nReasoning:<|end|>\n<|assistant|>\n<think>\n\n</think>\n\n")


def test_text_prompts_pass_through_and_batches_render(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    batch = PromptRenderer(get_task("ACSIncome").with_wording("codebook")).render(X)
    assert render_chats(batch.prompts(0), tokenizer) == list(batch.full_texts(0))
    chat = PromptRenderer(get_task("ACSIncome").with_wording("codebook"), PromptConfig(use_chat_template=True)).render(
        X
    )
    texts = render_chats(chat.prompts(1), tokenizer)
    assert len(texts) == len(X) and all(
        t.endswith("</think>\n\nIf had to select one of the options, my answer would be") for t in texts
    )


def test_tokenizer_without_chat_template_is_a_clear_error(local_tokenizer):
    tokenizer, _ = local_tokenizer

    class Base:
        chat_template = None
        name_or_path = "base-model"

    with pytest.raises(ConfigError, match="no chat template"):
        render_chat(ChatPrompt(({"role": "user", "content": "hi"},)), Base())  # type: ignore[arg-type]
    assert render_chat("plain", Base()) == "plain"


#: Gemma's template in shape: a system message is refused
NO_SYSTEM_TEMPLATE = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


class NoSystemRole:
    """A tokenizer-like object whose chat template refuses the system role (only the template matters here)."""

    chat_template = NO_SYSTEM_TEMPLATE
    name_or_path = "no-system-model"

    def apply_chat_template(self, conversation, tokenize=False, add_generation_prompt=False, **kwargs):
        from jinja2 import Environment

        def refuse(message):
            raise ValueError(message)

        template = Environment().from_string(self.chat_template)
        return template.render(
            messages=conversation, add_generation_prompt=add_generation_prompt, raise_exception=refuse, **kwargs
        )


def test_default_system_prompt_is_left_out_where_the_template_has_no_system_role(local_tokenizer, X):
    tokenizer, _ = local_tokenizer
    assert supports_system_role(tokenizer) and not supports_system_role(NoSystemRole())
    cfg = PromptConfig(use_chat_template=True)
    assert fit_chat_config(cfg, tokenizer) is cfg  # a system role: unchanged
    fitted = fit_chat_config(cfg, NoSystemRole())
    assert fitted.system_prompt is None and fitted.chat_prefill == cfg.chat_prefill
    text = render_chat(PromptRenderer("ACSIncome", fitted).render(X)[0].to_prompt(), NoSystemRole())
    assert text.startswith("<|user|>\nThe following data") and text.endswith("my answer would be")
    with pytest.raises(ConfigError, match="refused these messages .System role not supported.") as info:
        render_chat(PromptRenderer("ACSIncome", cfg).render(X)[0].to_prompt(), NoSystemRole())
    assert "\n" not in str(info.value)


def test_a_given_system_prompt_is_refused_where_the_template_has_no_system_role():
    cfg = PromptConfig(use_chat_template=True, system_prompt="You are a demographer.")
    with pytest.raises(ConfigError, match="no system role, so --system-prompt cannot be sent") as info:
        fit_chat_config(cfg, NoSystemRole())
    assert info.value.parameter == "system_prompt"
    assert fit_chat_config(PromptConfig(), NoSystemRole()) == PromptConfig()  # no chat: nothing to fit
    assert fit_chat_config(replace(cfg, system_prompt=None), NoSystemRole()).system_prompt is None
